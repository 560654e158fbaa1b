//! Bandit JSON reports (`bandit -f json`): `results[]` with `filename`, `line_range`, `issue_cwe`.

use serde_json::Value;

use super::ScanResult;
use crate::error::Result;

/// One result with Bandit's own fields: finding files keep what an anchor needs,
/// `git sage screen` reports the rest (test name, confidence).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Issue {
    pub file: Option<String>,
    pub test_id: Option<String>,
    pub test_name: Option<String>,
    pub severity: Option<String>,
    pub confidence: Option<String>,
    pub cwe: Option<u32>,
    /// From `line_range`, else `line_number`.
    pub start: Option<u32>,
    pub end: Option<u32>,
    /// The lines of its own range, from Bandit's numbered `code`.
    pub snippet: Option<String>,
    pub text: Option<String>,
}

/// A whole report.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Report {
    pub issues: Vec<Issue>,
    /// (file, reason) for files Bandit could not scan.
    pub errors: Vec<(String, String)>,
}

pub(crate) fn parse(text: &str, shown: &str) -> Result<Vec<ScanResult>> {
    Ok(report(text, shown)?
        .issues
        .into_iter()
        .map(|i| ScanResult {
            tool: "Bandit".into(),
            rule: i.test_id,
            file: i.file,
            start: i.start,
            end: i.end,
            snippet: i.snippet,
            cwe: i.cwe,
            message: i.text,
            severity: severity_rank(i.severity.as_deref().unwrap_or("")),
            security_severity: None,
        })
        .collect())
}

pub(crate) fn report(text: &str, shown: &str) -> Result<Report> {
    let (results, rest) = super::json_results(text, shown, "Bandit report")?;
    let text_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let errors = rest
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            (
                text_of(e, "filename").unwrap_or_default(),
                text_of(e, "reason").unwrap_or_default(),
            )
        })
        .collect();
    Ok(Report {
        issues: results.iter().map(issue).collect(),
        errors,
    })
}

/// 3 high, 2 medium, 1 low, 0 unknown.
pub(crate) fn severity_rank(severity: &str) -> u8 {
    match severity.to_ascii_uppercase().as_str() {
        "HIGH" => 3,
        "MEDIUM" => 2,
        "LOW" => 1,
        _ => 0,
    }
}

fn issue(r: &Value) -> Issue {
    let text = |key: &str| r.get(key).and_then(Value::as_str).map(str::to_string);
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
    Issue {
        file: text("filename"),
        test_id: text("test_id"),
        test_name: text("test_name"),
        severity: text("issue_severity"),
        confidence: text("issue_confidence"),
        cwe: r
            .pointer("/issue_cwe/id")
            .and_then(Value::as_u64)
            .map(|n| n as u32)
            .filter(|&n| n > 0),
        start,
        end,
        snippet: r
            .get("code")
            .and_then(Value::as_str)
            .and_then(|code| code_lines(code, start?, end?)),
        text: text("issue_text"),
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

    #[test]
    fn a_report_keeps_what_screen_shows_and_the_files_bandit_could_not_scan() {
        let text = r#"{"errors":[{"filename":"t/bad.py","reason":"syntax error"}],"results":[
          {"filename":"t/a.py","test_id":"B602","test_name":"subprocess_popen_with_shell_equals_true",
           "issue_severity":"HIGH","issue_confidence":"MEDIUM","line_number":4}]}"#;
        let r = report(text, "bandit").unwrap();
        assert_eq!(r.errors, vec![("t/bad.py".into(), "syntax error".into())]);
        let i = &r.issues[0];
        assert_eq!(i.confidence.as_deref(), Some("MEDIUM"));
        assert_eq!((i.start, i.end), (Some(4), Some(4)));
        assert_eq!(severity_rank(i.severity.as_deref().unwrap()), 3);
        assert_eq!(severity_rank("medium"), 2);
    }
}
