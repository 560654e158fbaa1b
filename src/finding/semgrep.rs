//! Semgrep JSON (`semgrep --json`): `results[]` with `check_id`, `path`, `start`/`end`, and the
//! CWE only inside metadata strings such as `"CWE-502: Deserialization of Untrusted Data"`.

use serde_json::Value;

use super::{ScanResult, parse_cwe};
use crate::error::Result;

pub(crate) fn parse(text: &str, shown: &str) -> Result<Vec<ScanResult>> {
    Ok(super::json_results(text, shown, "Semgrep report")?
        .0
        .iter()
        .map(result)
        .collect())
}

fn result(r: &Value) -> ScanResult {
    let line = |p: &str| r.pointer(p).and_then(Value::as_u64).map(|n| n as u32);
    let cwe = match r.pointer("/extra/metadata/cwe") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).find_map(parse_cwe),
        Some(Value::String(s)) => parse_cwe(s),
        _ => None,
    };
    // Without a login Semgrep writes the placeholder "requires login" instead of the lines.
    let snippet = r
        .pointer("/extra/lines")
        .and_then(Value::as_str)
        .filter(|s| *s != "requires login" && !s.trim().is_empty())
        .map(|s| s.trim_end_matches('\n').to_string());
    ScanResult {
        tool: "Semgrep".into(),
        rule: r
            .get("check_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        file: r.get("path").and_then(Value::as_str).map(str::to_string),
        start: line("/start/line"),
        end: line("/end/line"),
        snippet,
        cwe,
        message: r
            .pointer("/extra/message")
            .and_then(Value::as_str)
            .map(str::to_string),
        severity: match r.pointer("/extra/severity").and_then(Value::as_str) {
            Some("ERROR") => 3,
            Some("WARNING") => 2,
            Some("INFO") => 1,
            _ => 0,
        },
        security_severity: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_login_is_not_a_snippet() {
        let text = r#"{"version":"1.185.0","results":[{"check_id":"yaml-unsafe-load","path":"target.py",
          "start":{"line":10,"col":16},"end":{"line":10,"col":52},
          "extra":{"message":"m","metadata":{"cwe":["CWE-502: Deserialization of Untrusted Data"]},"lines":"requires login"}}],"errors":[]}"#;
        let r = parse(text, "s.json").unwrap();
        assert_eq!(r[0].cwe, Some(502));
        assert_eq!(r[0].snippet, None);
        assert_eq!((r[0].start, r[0].end), (Some(10), Some(10)));
    }
}
