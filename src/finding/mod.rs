//! Findings → failure anchors: anchor YAML, SARIF 2.1.0, Bandit JSON, Semgrep JSON, inline flags.

pub(crate) mod anchor_yaml;
pub(crate) mod bandit;
pub(crate) mod discover;
pub(crate) mod paths;
pub(crate) mod sarif;
pub(crate) mod semgrep;

use std::path::Path;

use crate::anchor::{Anchor, AnchorKind, AnchorSource, DefectClass, Locator, Said};
use crate::error::{Error, Result};

/// The finding formats we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A hand-written anchor YAML file.
    AnchorYaml,
    /// SARIF 2.1.0, from any scanner.
    Sarif,
    /// Bandit's JSON report.
    BanditJson,
    /// Semgrep's JSON report.
    SemgrepJson,
}

/// One result of a scanner, before it becomes an anchor.
#[derive(Debug, Clone, Default)]
pub struct ScanResult {
    /// The scanner that reported it.
    pub tool: String,
    /// Its rule id.
    pub rule: Option<String>,
    /// The file, as the scanner wrote its path.
    pub file: Option<String>,
    /// First line, 1-based.
    pub start: Option<u32>,
    /// Last line, inclusive.
    pub end: Option<u32>,
    /// The code the scanner quoted.
    pub snippet: Option<String>,
    /// The CWE the rule names.
    pub cwe: Option<u32>,
    /// The scanner's message.
    pub message: Option<String>,
    /// 3 high / error, 2 medium / warning, 1 low / note, 0 unknown.
    pub severity: u8,
    /// The scanner's own `security-severity` (0.0–10.0, as GitHub code scanning reads it).
    pub security_severity: Option<String>,
}

/// What the user gave on the command line to name the finding.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// A findings file (`--finding`).
    pub finding: Option<std::path::PathBuf>,
    /// Which result of the file (`--select RULE|N|ID`).
    pub select: Option<String>,
    /// A finding given with `--anchor-*` flags instead.
    pub inline: Option<Inline>,
    /// What the user says of the finding (`--cwe`, `--class`, `--id`, `--description`); it
    /// wins over what the file says.
    pub given: Given,
}

/// The user's word on a finding: each value, when given, replaces the finding file's.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// The CWE, as `918` or `CWE-918`.
    pub cwe: Option<String>,
    /// The defect class.
    pub class: Option<String>,
    /// A name for the finding.
    pub id: Option<String>,
    /// What is wrong, in words.
    pub description: Option<String>,
}

/// An anchor given inline: `--anchor-file` with a snippet, lines or a pattern.
#[derive(Debug, Clone, Default)]
pub struct Inline {
    /// The anchored file, repository-relative.
    pub file: String,
    /// Code fragments located in it.
    pub snippets: Vec<String>,
    /// Or a line range, `N` or `N-M`.
    pub lines: Option<String>,
    /// Or a regular expression.
    pub pattern: Option<String>,
    /// The located code is a missing defence.
    pub absent: bool,
}

/// Loads the one anchor the request names.
pub fn load(req: &Request) -> Result<Anchor> {
    match (&req.finding, &req.inline) {
        (Some(_), Some(_)) => Err(Error::input(
            "both --finding and --anchor-file were given",
        )
        .hint("use one: a finding file, or an inline anchor")),
        (None, None) => Err(Error::input("no finding given")
            .hint("pass --finding FILE (SARIF, Bandit JSON, Semgrep JSON, anchor YAML) or --anchor-file PATH --anchor-snippet TEXT")),
        (None, Some(inline)) => {
            let mut a = from_inline(inline, &req.given)?;
            apply_given(&mut a, &req.given)?;
            a.source.said = None;
            Ok(a)
        }
        (Some(path), None) => {
            let all = load_all(path)?;
            let mut a = select(path, all, req.select.as_deref())?;
            apply_given(&mut a, &req.given)?;
            Ok(a)
        }
    }
}

/// Puts the user's values over the finding's, keeping what the finding said where they differ
/// (`source.said`), so that reports can show both.
pub fn apply_given(a: &mut Anchor, given: &Given) -> Result<()> {
    let mut said = a.source.said.take().unwrap_or_default();
    if let Some(c) = &given.cwe {
        let cwe = parse_cwe(c).ok_or_else(|| {
            Error::input(format!(
                "--cwe {c}: expected a CWE number such as 918 or CWE-918"
            ))
        })?;
        if a.cwe.is_some_and(|old| old != cwe) {
            said.cwe = a.cwe;
        }
        a.cwe = Some(cwe);
    }
    if let Some(c) = &given.class {
        let class = DefectClass::parse(c).ok_or_else(|| {
            Error::input(format!(
                "--class {c}: expected one of {}",
                DefectClass::ALL.join(", ")
            ))
        })?;
        if a.class.is_some_and(|old| old != class) {
            said.class = a.class;
        }
        a.class = Some(class);
    }
    if let Some(id) = given.id.as_ref().filter(|id| **id != a.id) {
        said.id = Some(std::mem::replace(&mut a.id, id.clone()));
    }
    if let Some(d) = &given.description {
        if a.description.as_ref().is_some_and(|old| old != d) {
            said.description = a.description.take();
        }
        a.description = Some(d.clone());
    }
    a.source.said = (said != Said::default()).then_some(said);
    Ok(())
}

/// Every anchor a finding file holds, in order.
pub fn load_all(path: &Path) -> Result<Vec<Anchor>> {
    let shown = path.display().to_string();
    let bytes = match crate::files::open_to_read(path) {
        Ok(mut f) => {
            let mut bytes = Vec::new();
            crate::files::read_to_end_capped(&mut f, crate::files::DOC_CAP, &mut bytes)
                .map_err(|e| Error::input(format!("cannot read finding {shown}: {e}")))?;
            bytes
        }
        Err(e) => {
            let err = Error::input(format!("cannot read finding {shown}: {}", io_reason(&e)));
            return Err(match e.kind() {
                std::io::ErrorKind::NotFound => err.hint(what_is_there(path)),
                _ => err,
            });
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::input(format!("{shown}: not UTF-8 text; not a finding file")))?;
    from_text(&text, &shown)
}

/// The CWE a text names by number (`CWE-918`), if any.
pub fn cwe_named_in(text: &str) -> Option<u32> {
    let lower = text.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("cwe-") {
        let digits: String = rest[i + 4..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(n) = digits.parse::<u32>()
            && n > 0
        {
            return Some(n);
        }
        rest = &rest[i + 4..];
    }
    None
}

/// A finding file the repository keeps among its findings (`sage.findings`) was put there by
/// a person: its scanner results are confirmed. An anchor YAML says so itself.
pub fn confirm_kept(a: &mut Anchor) {
    if a.source.format != "anchor-yaml" {
        a.unconfirmed = false;
    }
}

/// The names scanners give line numbers (SARIF, Bandit, Semgrep).
const LINE_KEYS: &[&str] = &[
    "startLine",
    "endLine",
    "line_number",
    "line_range",
    "line",
    "start_line",
    "end_line",
];

/// A scanner report whose line numbers are not lines (above 2^32 − 1, negative, fractional)
/// is bad input: read as they are, 4294967305 would wrap to line 9.
fn check_line_numbers(text: &str, shown: &str) -> Result<()> {
    fn walk(v: &serde_json::Value, at: &str) -> Option<String> {
        use serde_json::Value;
        let bad = |n: &Value| match n {
            Value::Number(n) => n.as_u64().is_none_or(|n| n > u64::from(u32::MAX)),
            Value::Array(items) => items.iter().any(|i| match i {
                Value::Number(n) => n.as_u64().is_none_or(|n| n > u64::from(u32::MAX)),
                _ => false,
            }),
            _ => false,
        };
        match v {
            Value::Object(map) => map.iter().find_map(|(k, x)| {
                let here = format!("{at}/{k}");
                if LINE_KEYS.contains(&k.as_str()) && bad(x) {
                    Some(format!("{here} = {x}"))
                } else {
                    walk(x, &here)
                }
            }),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, x)| walk(x, &format!("{at}/{i}"))),
            _ => None,
        }
    }
    // Malformed JSON is the format reader's to report, with its line.
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(());
    };
    match walk(&doc, "") {
        None => Ok(()),
        Some(at) => Err(Error::input(format!(
            "{shown}: {at} is not a line number (1 to {})",
            u32::MAX
        ))),
    }
}

/// Every anchor a finding file's text holds; `shown` names the file in errors.
pub fn from_text(text: &str, shown: &str) -> Result<Vec<Anchor>> {
    let (text, shown) = (text.to_string(), shown.to_string());
    let format = detect(&text).ok_or_else(|| undetected(&text, &shown))?;
    if format != Format::AnchorYaml {
        check_line_numbers(&text, &shown)?;
    }
    let anchors = match format {
        Format::AnchorYaml => anchor_yaml::parse(&text, &shown)?,
        Format::Sarif => to_anchors(sarif::parse(&text, &shown)?, "sarif", &shown)?,
        Format::BanditJson => to_anchors(bandit::parse(&text, &shown)?, "bandit-json", &shown)?,
        Format::SemgrepJson => to_anchors(semgrep::parse(&text, &shown)?, "semgrep-json", &shown)?,
    };
    if anchors.is_empty() {
        let what = match format {
            Format::Sarif => "SARIF file holds no results",
            Format::BanditJson => "Bandit report holds no results",
            Format::SemgrepJson => "Semgrep report holds no results",
            Format::AnchorYaml => "anchor file holds no anchors",
        };
        return Err(Error::input(format!("{shown}: {what}")).hint(
            "a finding must name a confirmed defect; rerun the scanner or write an anchor YAML",
        ));
    }
    Ok(anchors)
}

/// Why a file is no finding git sage knows: where its JSON or YAML breaks, when it does.
fn undetected(text: &str, shown: &str) -> Error {
    const FORMATS: &str =
        "expected SARIF 2.1.0, Bandit JSON, Semgrep JSON or an anchor YAML (docs/anchors.md)";
    let trimmed = text.trim_start_matches('\u{feff}');
    let json = trimmed.trim_start().starts_with(['{', '[']);
    if json && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(trimmed) {
        let (line, col) = (e.line(), e.column());
        return if e.is_eof() {
            Error::input(format!(
                "{shown}:{line}: the JSON ends early, at column {col} (truncated?)"
            ))
            .hint("the scanner's output is incomplete: run it again and let it finish")
        } else {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg);
            Error::input(format!("{shown}:{line}:{col}: not valid JSON: {msg}")).hint(FORMATS)
        };
    }
    if !json && let Err(e) = crate::files::parse_yaml::<serde::de::IgnoredAny>(trimmed, shown) {
        return e.hint(FORMATS);
    }
    Error::input(format!("{shown}: unknown finding format")).hint(FORMATS)
}

/// For a finding file that is not there: the finding files beside it, or that its folder is
/// missing too.
fn what_is_there(path: &Path) -> String {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return format!("there is no folder {}", dir.display());
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            let lower = n.to_ascii_lowercase();
            [".sarif", ".json", ".yaml", ".yml"]
                .iter()
                .any(|ext| lower.ends_with(ext))
        })
        .collect();
    names.sort();
    match names.len() {
        0 => format!("{} holds no .sarif, .json or .yaml file", dir.display()),
        n => {
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            names.truncate(8);
            format!("{} holds: {}{more}", dir.display(), names.join(", "))
        }
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Guesses the format from the content (never from the name alone: scanners name files freely).
pub fn detect(text: &str) -> Option<Format> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let v: serde_json::Value = serde_json::from_str(trimmed).ok()?;
        if v.get("runs").is_some_and(|r| r.is_array()) {
            return Some(Format::Sarif);
        }
        if let Some(results) = v.get("results").and_then(|r| r.as_array()) {
            let first = results.first();
            let bandit = v.get("generated_at").is_some()
                || v.get("metrics").is_some()
                || first.is_some_and(|r| r.get("test_id").is_some());
            let semgrep = first.is_some_and(|r| r.get("check_id").is_some())
                || v.get("paths").is_some()
                || v.get("version").is_some_and(|x| x.is_string());
            if bandit {
                return Some(Format::BanditJson);
            }
            if semgrep {
                return Some(Format::SemgrepJson);
            }
            return None;
        }
        // An anchor written as JSON is still an anchor.
        if looks_like_anchor(&v) {
            return Some(Format::AnchorYaml);
        }
        return None;
    }
    if crate::files::yaml_too_deep(trimmed).is_some() {
        return None;
    }
    let v: serde_json::Value = serde_yaml::from_str(trimmed).ok()?;
    looks_like_anchor(&v).then_some(Format::AnchorYaml)
}

fn looks_like_anchor(v: &serde_json::Value) -> bool {
    let one = |o: &serde_json::Value| o.get("file").is_some();
    match v {
        serde_json::Value::Object(_) => one(v) || v.get("anchors").is_some_and(|a| a.is_array()),
        serde_json::Value::Array(items) => !items.is_empty() && items.iter().all(one),
        _ => false,
    }
}

/// The `results` array of a scanner's JSON report, and the rest of the report (Bandit's
/// `errors` live there); `what` names the report in errors.
fn json_results(
    text: &str,
    shown: &str,
    what: &str,
) -> Result<(Vec<serde_json::Value>, serde_json::Value)> {
    let mut doc: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::input(format!("{shown}:{}: not valid JSON: {e}", e.line())))?;
    match doc.get_mut("results").map(serde_json::Value::take) {
        Some(serde_json::Value::Array(results)) => Ok((results, doc)),
        _ => Err(Error::input(format!("{shown}: {what} without results"))),
    }
}

/// Parses a CWE from `918`, `"918"`, `"CWE-918"`, `"CWE-502: Deserialization…"`,
/// `"external/cwe/cwe-089"`.
pub fn parse_cwe(s: &str) -> Option<u32> {
    let lower = s.trim().to_ascii_lowercase();
    let rest = if let Some(i) = lower.find("cwe-") {
        &lower[i + 4..]
    } else if lower.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        &lower[..]
    } else {
        return None;
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok().filter(|&n| n > 0)
}

pub(crate) fn to_anchors(
    results: Vec<ScanResult>,
    format: &'static str,
    shown: &str,
) -> Result<Vec<Anchor>> {
    Ok(results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let file = r.file.as_deref().map(paths::normalise).unwrap_or_default();
            let rule = r.rule.clone().unwrap_or_else(|| "result".to_string());
            let line = r.start.unwrap_or(0);
            let locator = match r.start {
                Some(start) => Locator::Lines {
                    start,
                    end: r.end.unwrap_or(start).max(start),
                    snippet: r.snippet.clone().filter(|s| !s.trim().is_empty()),
                },
                // No region: only the scanner's snippet (if any) can locate it.
                None => Locator::Fragments(r.snippet.clone().into_iter().collect()),
            };
            Anchor {
                id: format!("{rule}:{file}:{line}"),
                cwe: r.cwe,
                class: None,
                file,
                locator,
                kind: AnchorKind::Present,
                description: r.message.clone(),
                source: AnchorSource {
                    format,
                    tool: Some(r.tool.clone()),
                    rule: r.rule.clone(),
                    path: Some(shown.to_string()),
                    index: Some(i + 1),
                    said: None,
                    security_severity: r.security_severity.clone(),
                },
                // A scanner's result is its claim until a person confirms it: by keeping the
                // file among the repository's findings (`confirm_kept`) or in an anchor YAML.
                unconfirmed: true,
            }
        })
        .collect())
}

/// Every anchor of a finding file, each checked as `--select` checks the one it picks.
pub fn load_all_checked(path: &Path) -> Result<Vec<Anchor>> {
    load_all(path)?
        .into_iter()
        .map(|a| check_selected(path, a))
        .collect()
}

/// Picks one anchor: the only one, or the one `--select RULE|INDEX|ID` names.
pub fn select(path: &Path, all: Vec<Anchor>, sel: Option<&str>) -> Result<Anchor> {
    let shown = path.display();
    let count = all.len();
    let Some(sel) = sel.map(str::trim) else {
        if count == 1 {
            return check_selected(path, all.into_iter().next().expect("one anchor"));
        }
        return Err(
            Error::input(format!("{shown} holds {count} results; pick one")).hint(format!(
                "--select INDEX (1..{count}), --select RULE or --select ID; rules here: {}",
                rule_list(&all)
            )),
        );
    };
    if let Ok(n) = sel.parse::<usize>() {
        if n == 0 || n > count {
            return Err(Error::input(format!(
                "--select {n}: {shown} holds results 1..{count}"
            )));
        }
        return check_selected(path, all.into_iter().nth(n - 1).expect("in range"));
    }
    let mut hits: Vec<Anchor> = all.iter().filter(|a| a.id == sel).cloned().collect();
    if hits.is_empty() {
        hits = all
            .iter()
            .filter(|a| a.source.rule.as_deref() == Some(sel))
            .cloned()
            .collect();
    }
    match hits.len() {
        1 => check_selected(path, hits.pop().expect("one hit")),
        0 => Err(Error::input(format!(
            "--select {sel}: no result of {shown} has that rule or id"
        ))
        .hint(format!("rules here: {}", rule_list(&all)))),
        n => {
            let indexes: Vec<String> = hits
                .iter()
                .filter_map(|a| a.source.index)
                .take(8)
                .map(|i| i.to_string())
                .collect();
            Err(
                Error::input(format!("--select {sel}: {n} results of {shown} match"))
                    .hint(format!("select one by index: {}", indexes.join(", "))),
            )
        }
    }
}

fn rule_list(all: &[Anchor]) -> String {
    let mut rules: Vec<&str> = Vec::new();
    for a in all {
        let r = a.source.rule.as_deref().unwrap_or(a.id.as_str());
        if !rules.contains(&r) {
            rules.push(r);
        }
    }
    let more = rules.len().saturating_sub(6);
    let mut s = rules.into_iter().take(6).collect::<Vec<_>>().join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// A selected scanner result must at least name a file and something to look for.
fn check_selected(path: &Path, a: Anchor) -> Result<Anchor> {
    let at = a
        .source
        .index
        .map(|i| format!(" (result {i})"))
        .unwrap_or_default();
    if a.file.is_empty() {
        return Err(
            Error::input(format!("{}{at}: the result names no file", path.display()))
                .hint("write an anchor YAML naming the file and the fragment"),
        );
    }
    if matches!(&a.locator, Locator::Fragments(f) if f.is_empty()) {
        return Err(Error::input(format!(
            "{}{at}: the result has neither a line range nor a snippet",
            path.display()
        ))
        .hint("write an anchor YAML with fragments: for it"));
    }
    Ok(a)
}

fn from_inline(i: &Inline, given: &Given) -> Result<Anchor> {
    let how_many = [
        !i.snippets.is_empty(),
        i.lines.is_some(),
        i.pattern.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if how_many != 1 {
        return Err(Error::input(format!(
            "--anchor-file {} needs exactly one of --anchor-snippet, --anchor-lines, --anchor-pattern",
            i.file
        )));
    }
    let locator = if let Some(l) = &i.lines {
        let (start, end) = crate::anchor::parse_lines(l)
            .ok_or_else(|| Error::input(format!("--anchor-lines {l}: expected N or N-M")))?;
        Locator::Lines {
            start,
            end,
            snippet: None,
        }
    } else if let Some(p) = &i.pattern {
        Locator::Pattern(p.clone())
    } else {
        Locator::Fragments(i.snippets.clone())
    };
    let file = paths::normalise(&i.file);
    // The id is named after the CWE when one is given and no id is.
    let cwe = given.cwe.as_deref().and_then(parse_cwe);
    Ok(Anchor {
        id: given.id.clone().unwrap_or_else(|| match cwe {
            Some(n) => format!("cwe-{n}:{file}"),
            None => format!("inline:{file}"),
        }),
        cwe: None,
        class: None,
        file,
        locator,
        kind: if i.absent {
            AnchorKind::Absent
        } else {
            AnchorKind::Present
        },
        description: None,
        source: AnchorSource {
            format: "inline",
            tool: None,
            rule: None,
            path: None,
            index: None,
            said: None,
            security_severity: None,
        },
        unconfirmed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwe_spellings() {
        assert_eq!(parse_cwe("918"), Some(918));
        assert_eq!(parse_cwe("CWE-918"), Some(918));
        assert_eq!(
            parse_cwe("CWE-502: Deserialization of Untrusted Data"),
            Some(502)
        );
        assert_eq!(parse_cwe("external/cwe/cwe-089"), Some(89));
        assert_eq!(parse_cwe("security"), None);
        assert_eq!(parse_cwe("CWE-0"), None);
    }

    #[test]
    fn detects_formats_by_content() {
        assert_eq!(
            detect(r#"{"version":"2.1.0","runs":[]}"#),
            Some(Format::Sarif)
        );
        assert_eq!(
            detect(r#"{"results":[],"generated_at":"x","metrics":{}}"#),
            Some(Format::BanditJson)
        );
        assert_eq!(
            detect(r#"{"version":"1.1","results":[],"errors":[],"paths":{}}"#),
            Some(Format::SemgrepJson)
        );
        assert_eq!(
            detect("id: x\nfile: a.py\nfragments: ['x']\n"),
            Some(Format::AnchorYaml)
        );
        assert_eq!(detect("hello: world\n"), None);
        assert_eq!(detect("not json {"), None);
        assert_eq!(detect(r#"{"results": [{"foo": 1}]}"#), None);
    }

    mod props {
        use proptest::prelude::*;

        /// Pieces of the formats the readers take: SARIF, Bandit and Semgrep JSON, anchor YAML.
        fn findingish() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop::sample::select(vec![
                    "{",
                    "}",
                    "[",
                    "]",
                    ":",
                    ",",
                    "\"",
                    "\n",
                    " ",
                    "- ",
                    "  ",
                    "\\",
                    "null",
                    "0",
                    "-1",
                    "1e999",
                    "\"runs\"",
                    "\"results\"",
                    "\"locations\"",
                    "\"physicalLocation\"",
                    "\"artifactLocation\"",
                    "\"uri\"",
                    "\"region\"",
                    "\"startLine\"",
                    "\"endLine\"",
                    "\"ruleId\"",
                    "\"rules\"",
                    "\"tool\"",
                    "\"driver\"",
                    "\"properties\"",
                    "\"tags\"",
                    "\"external/cwe/cwe-89\"",
                    "\"filename\"",
                    "\"line_number\"",
                    "\"line_range\"",
                    "\"issue_cwe\"",
                    "\"test_id\"",
                    "\"check_id\"",
                    "\"path\"",
                    "\"start\"",
                    "\"end\"",
                    "\"line\"",
                    "\"extra\"",
                    "\"lines\"",
                    "\"generated_at\"",
                    "file: ",
                    "fragment: ",
                    "fragments: ",
                    "lines: ",
                    "cwe: ",
                    "anchors:",
                    "kind: absent",
                    "a.py",
                    "../x",
                    "C:\\x",
                    "file:///x",
                    "é",
                    "\u{0}",
                ]),
                0..60,
            )
            .prop_map(|v| v.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(600))]
            #[test]
            fn finding_readers_never_panic(text in findingish(), noise in ".{0,200}") {
                for t in [&text, &noise] {
                    if let Err(e) = super::super::from_text(t, "fuzz") {
                        // bad input is exit 2 and one line, naming the file
                        prop_assert_eq!(e.exit_code(), 2);
                        prop_assert!(e.to_string().contains("fuzz"), "{}", e);
                        prop_assert!(!e.to_string().contains('\n'));
                    }
                }
            }
        }
    }
}
