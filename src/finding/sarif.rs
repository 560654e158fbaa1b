//! SARIF 2.1.0 results from Bandit, Semgrep, CodeQL and others, with their quirks.
//!
//! Quirks honoured: Bandit's SARIF has no CWE in older versions (tags in newer ones);
//! Semgrep has no `level`/`ruleIndex` and puts CWE in tag strings (`"CWE-502: ..."`);
//! CodeQL keeps rules in `tool.extensions[]` (found through `rule.toolComponent.index`)
//! and spells CWE as `external/cwe/cwe-089`; URIs may be relative to `%SRCROOT%`,
//! absolute `file://` URIs, or indexes into `run.artifacts`.

use serde_json::Value;

use super::{ScanResult, parse_cwe};
use crate::error::{Error, Result};

pub(crate) fn parse(text: &str, shown: &str) -> Result<Vec<ScanResult>> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| Error::input(format!("{shown}:{}: not valid JSON: {e}", e.line())))?;
    let runs = doc
        .get("runs")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::input(format!("{shown}: SARIF without runs")))?;
    let mut out = Vec::new();
    for run in runs {
        let tool = run
            .pointer("/tool/driver/name")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        let Some(results) = run.get("results").and_then(Value::as_array) else {
            continue;
        };
        for r in results {
            out.push(result(run, r, &tool));
        }
    }
    Ok(out)
}

fn result(run: &Value, r: &Value, tool: &str) -> ScanResult {
    let rule_id = r
        .get("ruleId")
        .and_then(Value::as_str)
        .or_else(|| r.pointer("/rule/id").and_then(Value::as_str))
        .map(str::to_string);
    let rule = find_rule(run, r, rule_id.as_deref());
    let loc = r.pointer("/locations/0/physicalLocation");
    let file = loc.and_then(|l| artifact_uri(run, l.get("artifactLocation")?));
    let region = loc.and_then(|l| l.get("region"));
    let start = region
        .and_then(|g| g.get("startLine"))
        .and_then(Value::as_u64)
        .map(|n| n as u32);
    let end = region
        .and_then(|g| g.get("endLine"))
        .and_then(Value::as_u64)
        .map(|n| n as u32);
    let snippet = region
        .and_then(|g| g.pointer("/snippet/text"))
        .and_then(Value::as_str)
        .map(|s| s.trim_end_matches('\n').to_string());
    let message = r
        .pointer("/message/text")
        .or_else(|| r.pointer("/message/markdown"))
        .and_then(Value::as_str)
        .or_else(|| {
            rule.and_then(|x| x.pointer("/shortDescription/text"))
                .and_then(Value::as_str)
        })
        .map(str::to_string);
    let cwe = cwe_of(r).or_else(|| rule.and_then(cwe_of));
    ScanResult {
        tool: tool.to_string(),
        rule: rule_id.or_else(|| {
            rule.and_then(|x| x.get("id"))
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        file,
        start,
        end,
        snippet,
        cwe,
        message,
        security_severity: security_severity(r).or_else(|| rule.and_then(security_severity)),
        severity: match r.get("level").and_then(Value::as_str).or_else(|| {
            rule.and_then(|x| x.pointer("/defaultConfiguration/level"))
                .and_then(Value::as_str)
        }) {
            Some("error") => 3,
            Some("warning") => 2,
            Some("note") => 1,
            _ => 0,
        },
    }
}

/// The rule object of a result: by `ruleIndex`, by `rule.index` in the named tool component
/// (CodeQL: an extension), or by id among the driver's and extensions' rules.
fn find_rule<'a>(run: &'a Value, r: &Value, id: Option<&str>) -> Option<&'a Value> {
    let component = |idx: Option<u64>| -> Option<&'a Value> {
        match idx {
            None => run.pointer("/tool/driver"),
            Some(i) => run.pointer(&format!("/tool/extensions/{i}")),
        }
    };
    let by_index =
        |comp: Option<&'a Value>, i: u64| comp?.get("rules")?.as_array()?.get(i as usize);
    if let Some(i) = r.get("ruleIndex").and_then(Value::as_u64)
        && let Some(rule) = by_index(component(None), i)
    {
        return Some(rule);
    }
    if let Some(i) = r.pointer("/rule/index").and_then(Value::as_u64) {
        let comp = r
            .pointer("/rule/toolComponent/index")
            .and_then(Value::as_u64);
        if let Some(rule) = by_index(component(comp), i) {
            return Some(rule);
        }
    }
    let id = id?;
    let mut components: Vec<&Value> = run.pointer("/tool/driver").into_iter().collect();
    if let Some(ext) = run.pointer("/tool/extensions").and_then(Value::as_array) {
        components.extend(ext);
    }
    components
        .into_iter()
        .filter_map(|c| c.get("rules")?.as_array())
        .flatten()
        .find(|rule| rule.get("id").and_then(Value::as_str) == Some(id))
}

/// `properties.security-severity` (a string, or a number some tools write), when it reads as
/// a score from 0 to 10.
fn security_severity(v: &Value) -> Option<String> {
    let s = v.pointer("/properties/security-severity")?;
    let n = match s {
        Value::String(t) => t.trim().parse::<f64>().ok()?,
        Value::Number(n) => n.as_f64()?,
        _ => return None,
    };
    (0.0..=10.0).contains(&n).then(|| format!("{n:.1}"))
}

/// CWE from `properties.tags` (either spelling) or a `properties.cwe` field.
fn cwe_of(v: &Value) -> Option<u32> {
    let props = v.get("properties")?;
    if let Some(tags) = props.get("tags").and_then(Value::as_array) {
        for t in tags.iter().filter_map(Value::as_str) {
            if t.to_ascii_lowercase().contains("cwe")
                && let Some(n) = parse_cwe(t)
            {
                return Some(n);
            }
        }
    }
    match props.get("cwe")? {
        Value::String(s) => parse_cwe(s),
        Value::Number(n) => n.as_u64().map(|n| n as u32),
        Value::Array(a) => a.iter().filter_map(Value::as_str).find_map(parse_cwe),
        _ => None,
    }
}

/// The artifact's URI; `index` refers to `run.artifacts` when the uri is left out.
fn artifact_uri(run: &Value, a: &Value) -> Option<String> {
    let uri = match a.get("uri").and_then(Value::as_str) {
        Some(uri) => uri,
        None => {
            let i = a.get("index")?.as_u64()?;
            run.pointer(&format!("/artifacts/{i}/location/uri"))
                .and_then(Value::as_str)?
        }
    };
    Some(path_of_uri(uri))
}

/// A repository path as a SARIF `uri` (RFC 3986): every byte but the unreserved ones and `/`
/// percent-encoded, so `media/a b#c%d?e[1].py` stays one path and not a fragment or a query.
pub(crate) fn uri_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A SARIF `uri` read back as a path: `%XX` decoded (other scanners encode too).
pub(crate) fn path_of_uri(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codeql_rules_in_extensions() {
        let text = r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"CodeQL"},
          "extensions":[{"name":"codeql/python-queries","rules":[
            {"id":"py/a"},{"id":"py/sql-injection","properties":{"tags":["security","external/cwe/cwe-089"]}}]}]},
          "results":[{"ruleId":"py/sql-injection","rule":{"id":"py/sql-injection","index":1,"toolComponent":{"index":0}},
            "message":{"text":"SQL"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"server/routes.py","uriBaseId":"%SRCROOT%"},
            "region":{"startLine":16,"startColumn":13,"endColumn":67}}}]}]}]}"#;
        let r = parse(text, "c.sarif").unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].cwe, Some(89));
        assert_eq!(r[0].tool, "CodeQL");
        assert_eq!(r[0].file.as_deref(), Some("server/routes.py"));
        assert_eq!((r[0].start, r[0].end), (Some(16), None));
    }

    #[test]
    fn semgrep_tags_and_artifact_index() {
        let text = r#"{"runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[
            {"id":"yaml-unsafe-load","properties":{"tags":["CWE-502: Deserialization of Untrusted Data","OWASP-A08"]}}]}},
          "artifacts":[{"location":{"uri":"file:///C:/w/target.py"}}],
          "results":[{"ruleId":"yaml-unsafe-load","message":{"text":"m"},
            "locations":[{"physicalLocation":{"artifactLocation":{"index":0},
            "region":{"startLine":10,"endLine":11,"snippet":{"text":"x = 1\n"}}}}]}]}]}"#;
        let r = parse(text, "s.sarif").unwrap();
        assert_eq!(r[0].cwe, Some(502));
        assert_eq!(r[0].file.as_deref(), Some("file:///C:/w/target.py"));
        assert_eq!(r[0].snippet.as_deref(), Some("x = 1"));
        assert_eq!((r[0].start, r[0].end), (Some(10), Some(11)));
    }

    #[test]
    fn no_runs_is_an_error_and_no_results_is_empty() {
        assert!(parse("{}", "x.sarif").is_err());
        assert!(
            parse(
                r#"{"runs":[{"tool":{"driver":{"name":"B"}},"results":[]}]}"#,
                "x"
            )
            .unwrap()
            .is_empty()
        );
        let e = parse("{\n\"runs\": [,]}", "y.sarif").unwrap_err();
        assert!(e.to_string().starts_with("y.sarif:2:"), "{e}");
    }
}
