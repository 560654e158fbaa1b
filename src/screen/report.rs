//! The screening report: candidates with their lines and R breakdown as text, SARIF 2.1.0,
//! and anchor YAMLs (unconfirmed) ready for `blame-origin`. JSON is the document itself.

use serde_json::{Value, json};

use super::{Candidate, Evidence, FileResult, FileStatus, ScreenDoc, ToolState};

/// Evidence lines are cut here: a minified line is no help to a reviewer.
const EVIDENCE_CHARS: usize = 160;

/// The candidate of a file: where to look (the strongest sink or Bandit finding) and why.
pub(crate) fn candidate(r: &FileResult, l2_severity: u8) -> Candidate {
    let mut reasons = Vec::new();
    let mut lines: Vec<(u32, u32)> = Vec::new();
    let mut cwe = None;
    let mut rule = String::new();
    // (line, role): the lines to read, most telling first; texts are filled from the tip later
    let mut evidence: Vec<(u32, String)> = Vec::new();
    let l3 = r.l3.as_ref();
    let by_l3 = l3.is_some_and(|s| s.flagged);
    if let Some(s) = l3 {
        let mut sinks: Vec<&super::rules::Hit> = s.sinks.iter().collect();
        sinks.sort_by(|a, b| {
            b.contribution
                .unwrap_or(0.0)
                .total_cmp(&a.contribution.unwrap_or(0.0))
        });
        for h in &sinks {
            reasons.push(format!(
                "sink {}{} (line {}): {}",
                h.id,
                cwes(&h.cwe),
                join(&h.lines),
                h.why
            ));
        }
        if by_l3 && let Some(top) = sinks.first() {
            lines.push((top.lines[0], top.lines[0]));
            cwe = top.cwe.first().copied();
            rule = top.id.clone();
            // the sink's first three places, then where each source first shows
            evidence.extend(
                top.lines
                    .iter()
                    .take(3)
                    .map(|&l| (l, format!("sink {}", top.id))),
            );
            evidence.extend(
                top.shown_at
                    .iter()
                    .map(|&l| (l, "what makes it high-risk".to_string())),
            );
            evidence.extend(
                s.sources
                    .iter()
                    .filter_map(|h| h.lines.first().map(|&l| (l, format!("source {}", h.id)))),
            );
        }
        for h in &s.sources {
            reasons.push(format!("source {} (line {})", h.id, join(&h.lines)));
        }
        if let Some(w) = &s.weakness {
            reasons.push(format!(
                "weakness pattern of CWE-{} remains (line {})",
                w.cwe, w.line
            ));
            if by_l3 {
                evidence.push((w.line, format!("weakness CWE-{}", w.cwe)));
            }
        }
    }
    let by_l2 = r.l2.as_ref().is_some_and(|l| l.flagged);
    if let Some(l2) = &r.l2 {
        for f in l2
            .findings
            .iter()
            .filter(|f| f.severity_rank() >= l2_severity)
        {
            reasons.push(format!(
                "Bandit {} {} (lines {}-{}){}: {}",
                f.test_id,
                f.severity.to_lowercase(),
                f.start,
                f.end,
                f.cwe.map(|c| format!(" CWE-{c}")).unwrap_or_default(),
                f.text
            ));
            if lines.is_empty() {
                lines.push((f.start, f.end));
                cwe = cwe.or(f.cwe);
                rule = format!("bandit {}", f.test_id);
            }
            if by_l2 {
                evidence.push((f.start, format!("Bandit {}", f.test_id)));
            }
        }
    }
    let (start, end) = lines.first().copied().unwrap_or((1, 1));
    // one entry a line (the first role named it), read top to bottom
    let mut seen = std::collections::BTreeSet::new();
    evidence.retain(|(l, _)| seen.insert(*l));
    evidence.sort_by_key(|(l, _)| *l);
    Candidate {
        path: r.path.clone(),
        start,
        end,
        score: l3.map_or(0.0, |s| s.score),
        by_l2,
        by_l3,
        cwe,
        weakness: cwe.and_then(crate::judge::offline::cwe_name),
        rule,
        evidence: evidence
            .into_iter()
            .map(|(line, role)| Evidence {
                line,
                role,
                text: String::new(),
            })
            .collect(),
        reasons,
    }
}

/// Fills the evidence lines' texts from the tip's version of each candidate's file, trimmed,
/// cut at `EVIDENCE_CHARS` and with secrets redacted: the anchors written from them may be
/// committed, and a hard-coded key is exactly what some candidates are about.
pub(crate) fn fill_evidence<'a>(
    candidates: &mut [Candidate],
    tip: impl Fn(&str) -> Option<&'a [u8]>,
) {
    for k in candidates {
        let Some(bytes) = tip(&k.path) else { continue };
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        for e in &mut k.evidence {
            let Some(line) = lines.get(e.line.saturating_sub(1) as usize) else {
                continue;
            };
            // redacted whole before the cut, so that a key the cut would split is still seen;
            // control characters and Unicode line breaks become spaces, so that the line stays
            // one line in an anchor's YAML and on a terminal
            let line = crate::redact::redact(line.trim()).0;
            let line: String = line
                .chars()
                .map(|c| {
                    if c.is_control() || matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}') {
                        ' '
                    } else {
                        c
                    }
                })
                .collect();
            let cut: String = line.chars().take(EVIDENCE_CHARS).collect();
            e.text = if cut.len() < line.len() {
                format!("{cut}…")
            } else {
                cut
            };
        }
    }
}

/// ` CWE-78` or ` CWE-327/328` after a sink's id; nothing when it names none.
fn cwes(list: &[u32]) -> String {
    if list.is_empty() {
        return String::new();
    }
    let names: Vec<String> = list.iter().map(|c| c.to_string()).collect();
    format!(" CWE-{}", names.join("/"))
}

/// ` · CWE-918 server-side request forgery (SSRF)`: the weakness a candidate is suspected of.
fn suspected(k: &Candidate) -> String {
    match (k.cwe, &k.weakness) {
        (Some(c), Some(name)) => format!(" · CWE-{c} {name}"),
        (Some(c), None) => format!(" · CWE-{c}"),
        _ => String::new(),
    }
}

/// `, flagged by Bandit, suspected CWE-918 …, rule url-from-input`: what SARIF's message and an
/// anchor's description say after the score.
fn grounds(k: &Candidate) -> String {
    format!(
        "{}{}{}",
        if k.by_l2 { ", flagged by Bandit" } else { "" },
        suspected(k).replace(" · ", ", suspected "),
        if k.rule.is_empty() {
            String::new()
        } else {
            format!(", rule {}", k.rule)
        }
    )
}

fn join(lines: &[u32]) -> String {
    lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn layers(f: &FileResult) -> String {
    let mark = |b: Option<bool>| match b {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "–",
    };
    let flag = |b: Option<bool>| match b {
        Some(true) => "flag",
        Some(false) => "–",
        None => "n/a",
    };
    format!(
        "L0 {:4}  L1 {:4}  L2 {:4}  L3 {:>5}",
        mark(f.l0.as_ref().map(|l| l.ok)),
        mark(f.l1.as_ref().map(|l| l.ok)),
        flag(f.l2.as_ref().map(|l| l.flagged)),
        f.l3.as_ref().map_or("–".to_string(), |s| format!(
            "{:.1}{}",
            s.score,
            if s.flagged { "*" } else { "" }
        ))
    )
}

pub(crate) fn text(d: &ScreenDoc) -> String {
    let c = &d.counts;
    let mut out = format!(
        "git sage screen · {}..{} ({} commit(s)) · {} Python file(s)\nL0 failed {} · L1 failed {} · L2 flagged {} · L3 flagged {} (R ≥ {}) · candidates {} · range R {:.1}\nL0: {} · Bandit: {}{} · tests: {}\n",
        &d.base[..7.min(d.base.len())],
        &d.tip[..7.min(d.tip.len())],
        d.commits,
        c.files,
        c.l0_failed,
        c.l1_failed,
        c.l2_flagged,
        c.l3_flagged,
        d.threshold,
        c.candidates,
        d.score,
        match (d.compiler.status, &d.compiler.detail) {
            (ToolState::Ran, Some(v)) => v.clone(),
            (ToolState::NotRun, _) => "not run".into(),
            (s, _) => format!("tree-sitter's parse (CPython {s})"),
        },
        d.bandit.status,
        d.bandit
            .detail
            .as_ref()
            .map(|x| format!(" ({x})"))
            .unwrap_or_default(),
        d.tests.status
    );
    if !d.candidates.is_empty() {
        out.push_str("\nCANDIDATES  (confirm before using them as failure anchors)\n");
        for k in &d.candidates {
            out.push_str(&format!(
                "  {}:{}  R {:.1}{}{}{}\n",
                k.path,
                if k.start == k.end {
                    k.start.to_string()
                } else {
                    format!("{}-{}", k.start, k.end)
                },
                k.score,
                if k.by_l2 { " · Bandit" } else { "" },
                suspected(k),
                if k.rule.is_empty() {
                    String::new()
                } else {
                    format!(" · rule {}", k.rule)
                }
            ));
            let width = k
                .evidence
                .iter()
                .map(|e| e.line.to_string().len())
                .max()
                .unwrap_or(1);
            for e in &k.evidence {
                out.push_str(&format!(
                    "      {:>width$} │ {}    ← {}\n",
                    e.line, e.text, e.role
                ));
            }
            for r in &k.reasons {
                out.push_str(&format!("      {r}\n"));
            }
        }
    }
    out.push_str("\nFILES\n");
    for f in &d.files {
        if f.status == FileStatus::Deleted {
            out.push_str(&format!("  {}  (deleted)\n", f.path));
            continue;
        }
        out.push_str(&format!(
            "  {}  {}{}\n",
            layers(f),
            f.path,
            if f.candidate { "  ← candidate" } else { "" }
        ));
        if let Some(e) = f.l0.as_ref().and_then(|l| l.error.as_ref()) {
            out.push_str(&format!("      L0: line {}: {}\n", e.line, e.message));
            if f.l3.as_ref().is_some_and(|s| s.flagged) {
                out.push_str("      L3: flagged on what could be read (not a candidate: it does not compile)\n");
            }
        } else if f.l3.as_ref().is_some_and(|s| s.partial) {
            out.push_str("      L3: scored on what tree-sitter could read (it parses only part of the file)\n");
        }
        if f.l3.as_ref().is_some_and(|s| s.hints_only) {
            out.push_str("      L3: not flagged: R reaches the threshold on hints only (no sink is high-risk, reached by outside input or of the task's CWE)\n");
        }
        if let Some(l1) = &f.l1 {
            if !l1.missing_defs.is_empty() {
                out.push_str(&format!(
                    "      L1: removed since the base: {}\n",
                    l1.missing_defs.join(", ")
                ));
            }
            for u in &l1.unresolved_imports {
                out.push_str(&format!("      L1: line {}: import {} resolves nowhere (repository, standard library, declared or installed packages)\n", u.line, u.module));
            }
            for d in &l1.dynamic_imports {
                out.push_str(&format!(
                    "      L1: line {}: import {} is dynamic, not checked: {}:{} makes it at run time ({})\n",
                    d.line,
                    d.module,
                    d.created_by,
                    d.created_line,
                    d.how.describe()
                ));
            }
            if l1.tests_failed {
                out.push_str("      L1: the tests failed\n");
            }
        }
        if let Some(e) = f.l2.as_ref().and_then(|l| l.error.as_ref()) {
            out.push_str(&format!("      L2: Bandit could not scan it: {e}\n"));
        }
    }
    if let Some(detail) = d
        .tests
        .detail
        .as_ref()
        .filter(|_| d.tests.status != ToolState::NotRun)
    {
        out.push_str(&format!("\ntests {}: {detail}\n", d.tests.status));
    }
    for n in &d.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

pub(crate) fn sarif(d: &ScreenDoc) -> Value {
    let results: Vec<Value> = d
        .candidates
        .iter()
        .map(|k| {
            json!({
                "ruleId": "sage/screen-candidate",
                "level": "warning",
                "message": {"text": format!("Silent-failure candidate (R {:.1}{}): {}", k.score, grounds(k), k.reasons.join("; "))},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": crate::finding::sarif::uri_of(&k.path), "uriBaseId": "%SRCROOT%"}, "region": {"startLine": k.start, "endLine": k.end}}}],
                "partialFingerprints": {"sageScreen/v1": format!("{}:{}", k.path, k.cwe.map(|c| c.to_string()).unwrap_or_default())},
                "properties": {"score": k.score, "by_l2": k.by_l2, "by_l3": k.by_l3, "cwe": k.cwe, "rule": k.rule, "evidence": k.evidence, "unconfirmed": true}
            })
        })
        .collect();
    // Candidates are unconfirmed: a medium severity until a person confirms one and
    // blame-origin explains it under its own CWE.
    let rule = json!({
        "id": "sage/screen-candidate",
        "name": "SilentFailureCandidate",
        "shortDescription": {"text": "Changed file that may still be vulnerable after an agent's repair"},
        "fullDescription": {"text": "A file changed by an AI coding agent's patch that parses, keeps its definitions and imports, and is flagged by Bandit or by git-sage's rule score R: a candidate silent failure, to be confirmed by a person before it becomes a finding."},
        "help": {
            "text": "Screening (docs/method.md#screening) ranks the files an agent's patch changed by how likely they are to hold a defect the tests did not catch. Confirm a candidate (read the flagged lines, try an attacking input), then explain it with git sage blame-origin --finding, which finds the write and the turn where the repair went wrong.",
            "markdown": "Screening (docs/method.md, section *Screening*) ranks the files an agent's patch changed by how likely they are to hold a defect the tests did not catch.\n\n1. Confirm the candidate: read the flagged lines, try an attacking input.\n2. Explain it: `git sage blame-origin --finding FILE` finds the write and the turn where the repair went wrong."
        },
        "helpUri": format!("{}/blob/main/docs/method.md#screening", env!("CARGO_PKG_REPOSITORY")),
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["security", "agent-repair", "screening"], "security-severity": "5.0", "precision": "low"}
    });
    crate::report::sarif::log(vec![rule], results)
}

fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    out.trim_matches('-').to_string()
}

/// Anchor YAMLs (file name, content) for the candidates, marked unconfirmed.
pub(crate) fn anchors(d: &ScreenDoc) -> Vec<(String, String)> {
    d.candidates
        .iter()
        .map(|k| {
            let id = format!("screen-{}-{}", slug(k.path.trim_end_matches(".py")), k.start);
            let reasons: Vec<String> = k.reasons.iter().map(|r| format!("  {}", r.replace('\n', " "))).collect();
            let mut y = format!("# Written by git sage screen: a candidate, not a confirmed defect. Confirm it, then\n# git sage blame-origin --finding <this file>\nid: {id}\nunconfirmed: true\n");
            if let Some(c) = k.cwe {
                y.push_str(&format!("cwe: {c}\n"));
            }
            let evidence: Vec<String> = k.evidence.iter().map(|e| format!("  {} | {}    <- {}", e.line, e.text.replace('\n', " "), e.role)).collect();
            y.push_str(&format!("file: {}\nlines: \"{}-{}\"\ndescription: |\n  screen R {:.1}{}\n{}\n{}\n", yaml_str(&k.path), k.start, k.end, k.score, grounds(k), evidence.join("\n"), reasons.join("\n")));
            (format!("{id}.yaml"), y)
        })
        .collect()
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate_with(lines: &[u32]) -> Candidate {
        Candidate {
            path: "a.py".into(),
            start: 1,
            end: 1,
            score: 20.0,
            by_l2: false,
            by_l3: true,
            cwe: Some(78),
            weakness: None,
            rule: "os-command".into(),
            evidence: lines
                .iter()
                .map(|&line| Evidence {
                    line,
                    role: "sink os-command".into(),
                    text: String::new(),
                })
                .collect(),
            reasons: Vec::new(),
        }
    }

    /// Evidence is the tip's line, trimmed; a long line is cut with an ellipsis (on a
    /// character boundary: the cut counts characters, not bytes); a line past the end of
    /// the file stays empty rather than failing.
    #[test]
    fn evidence_lines_are_trimmed_cut_and_bounded() {
        let long = format!("    x = \"{}\"", "é".repeat(300));
        // a key that the cut at 160 characters would split, a carriage return that YAML reads
        // as a line break, and a terminal escape
        let key = ["AKIA", "ZQ3DRW7TKXB5NP2Y"].concat();
        let keyed = format!("{} = \"{key}\"", "x".repeat(145));
        let text = format!(
            "import os\n    os.system(cmd)   \n{long}\n{keyed}\ny = 1\rcwe: 999 \u{1b}[31m\n"
        );
        let mut k = vec![candidate_with(&[2, 3, 4, 5, 9])];
        fill_evidence(&mut k, |_| Some(text.as_bytes()));
        let e = &k[0].evidence;
        assert_eq!(e[0].text, "os.system(cmd)");
        assert!(e[1].text.ends_with('…'), "{}", e[1].text);
        assert_eq!(e[1].text.chars().count(), EVIDENCE_CHARS + 1);
        assert!(!e[2].text.contains("AKIA"), "{}", e[2].text);
        assert!(!e[3].text.contains(['\r', '\u{1b}']), "{:?}", e[3].text);
        assert_eq!(e[4].text, "");
    }
}
