//! Bandit JSON reports (`bandit -f json`): `results[]` with `filename`, `line_range`, `issue_cwe`.

use serde_json::Value;

use super::ScanResult;
use crate::error::Result;

pub fn parse(text: &str, shown: &str) -> Result<Vec<ScanResult>> {
    Ok(super::json_results(text, shown, "Bandit report")?
        .iter()
        .map(result)
        .collect())
}

fn result(r: &Value) -> ScanResult {
    let line = r
        .get("line_number")
        .and_then(Value::as_u64)
        .map(|n| n as u32);
    let range: Vec<u32> = r
        .get("line_range")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .map(|n| n as u32)
                .collect()
        })
        .unwrap_or_default();
    let start = range.iter().min().copied().or(line);
    let end = range.iter().max().copied().or(line);
    ScanResult {
        tool: "Bandit".into(),
        rule: r.get("test_id").and_then(Value::as_str).map(str::to_string),
        file: r
            .get("filename")
            .and_then(Value::as_str)
            .map(str::to_string),
        start,
        end,
        snippet: r
            .get("code")
            .and_then(Value::as_str)
            .and_then(|code| code_lines(code, start?, end?)),
        cwe: r
            .pointer("/issue_cwe/id")
            .and_then(Value::as_u64)
            .map(|n| n as u32)
            .filter(|&n| n > 0),
        message: r
            .get("issue_text")
            .and_then(Value::as_str)
            .map(str::to_string),
        severity: match r.get("issue_severity").and_then(Value::as_str) {
            Some("HIGH") => 3,
            Some("MEDIUM") => 2,
            Some("LOW") => 1,
            _ => 0,
        },
    }
}

/// Bandit's `code` is context lines prefixed with their number and one space; keep the
/// lines of the result's own range, without the numbers.
fn code_lines(code: &str, start: u32, end: u32) -> Option<String> {
    let mut kept = Vec::new();
    for line in code.lines() {
        let digits: String = line.chars().take_while(|c| c.is_ascii_digit()).collect();
        let Ok(n) = digits.parse::<u32>() else {
            continue;
        };
        if (start..=end).contains(&n) {
            let rest = &line[digits.len()..];
            kept.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    (!kept.is_empty()).then(|| kept.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_result_with_windows_path() {
        let text = r#"{"errors":[],"generated_at":"x","metrics":{},"results":[{"code":"5 \n6 password = \"123456\"\n7 \n",
          "col_offset":11,"filename":".\\app.py","issue_cwe":{"id":259},"issue_text":"Possible hardcoded password",
          "line_number":6,"line_range":[6],"test_id":"B105"}]}"#;
        let r = parse(text, "b.json").unwrap();
        assert_eq!(r[0].file.as_deref(), Some(".\\app.py"));
        assert_eq!(r[0].cwe, Some(259));
        assert_eq!((r[0].start, r[0].end), (Some(6), Some(6)));
        assert_eq!(r[0].snippet.as_deref(), Some("password = \"123456\""));
        assert_eq!(r[0].rule.as_deref(), Some("B105"));
    }
}
