//! `blame-origin --format sarif`: SARIF 2.1.0 for code scanning — one result per finding at
//! the scanner's location with the origin in its message, one rule per CWE with the help and
//! `security-severity` GitHub needs to rank alerts (docs/ci.md#sarif). Written as JSON values,
//! not through a SARIF crate: the few fields we emit are those GitHub reads, and the Rust SARIF
//! crates (generated from the whole schema) would add a large tree for them.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::origin::Status;
use crate::report::doc::ReportDoc;

/// The project's repository (Cargo.toml): SARIF's `informationUri` and the base of `helpUri`,
/// both of which must be absolute.
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// Where the method's origin rule is documented, as an absolute URI.
fn help_uri(anchor: &str) -> String {
    format!("{REPOSITORY}/blob/main/docs/{anchor}")
}

/// The `security-severity` GitHub ranks by (critical ≥ 9.0, high ≥ 7.0, medium ≥ 4.0, low):
/// the scanner's own when it gave one, else a default for the CWE (docs/ci.md#sarif), else
/// medium.
pub(crate) fn security_severity(cwe: Option<u32>, scanner: Option<&str>) -> String {
    if let Some(s) = scanner {
        return s.to_string();
    }
    // Defaults in the range public advisories of each weakness commonly score (CVSS v3 base).
    let score = match cwe {
        Some(78 | 502 | 798) => 9.8,
        Some(94) => 9.3,
        Some(611 | 918 | 306) => 9.1,
        Some(89 | 287 | 352) => 8.8,
        Some(639 | 862 | 863 | 285 | 284) => 8.1,
        Some(22 | 327 | 522 | 829 | 1395) => 7.5,
        Some(79 | 601) => 6.1,
        Some(532 | 276 | 226) => 5.5,
        Some(200 | 20 | 614 | 770 | 942) => 5.3,
        _ => 5.0,
    };
    format!("{score:.1}")
}

/// The rule of a finding's CWE: `sage/repair-origin/cwe-918`, or `sage/repair-origin` when no
/// CWE is known.
fn rule_id(cwe: Option<u32>) -> String {
    match cwe {
        Some(c) => format!("sage/repair-origin/cwe-{c}"),
        None => "sage/repair-origin".to_string(),
    }
}

/// What every repair-origin rule says about reading its results: the origin types and the
/// remedy for each (docs/method.md#recommendations).
const HELP_TEXT: &str = "The finding is a confirmed defect that remains after an AI coding agent's repair. Provenance says whether the agent's own write introduced it and in which commit; the origin is the earliest turn of the agent's session that departed from the security intent. Origin types and remedies: inadequate defence (the agent chose a defence that cannot hold) - require a bypass check: name one way around the defence and test it; unaddressed requirement (the agent never addressed the security requirement before writing) - add a security-plan checkpoint before the first write (git sage checkpoint); defect in the code change (the plan was right, the code was not) - run an attacking test against the changed function before committing. Missed opportunities are later implementation and review turns that could have caught it: give their reviewers the defence checklist. The method: docs/method.md#origin-rule.";

const HELP_MARKDOWN: &str = "The finding is a confirmed defect that remains after an AI coding agent's repair. **Provenance** says whether the agent's own write introduced it and in which commit; the **origin** is the earliest turn of the agent's session that departed from the security intent.\n\n| Origin type | What went wrong | Remedy |\n|---|---|---|\n| inadequate defence | the agent chose a defence that cannot hold | a **bypass check**: name one way around the defence and add a test that tries it |\n| unaddressed requirement | the security requirement was never addressed before the write | a **security-plan checkpoint** before the first write (`git sage checkpoint`) |\n| defect in the code change | the plan was right, the code was not | a **write-time check**: an attacking test against the changed function before committing |\n\n**Missed opportunities** are later implementation and review turns that could have caught it: give their reviewers the defence checklist (attack the defence, list every call site).\n\nThe method: docs/method.md, section *Origin rule*.";

fn rule(cwe: Option<u32>, severity: &str) -> Value {
    let (what, name) = match cwe {
        Some(c) => {
            let named = crate::judge::offline::cwe_name(c)
                .map(|n| format!("CWE-{c} ({n})"))
                .unwrap_or_else(|| format!("CWE-{c}"));
            (named, format!("RepairOriginCwe{c}"))
        }
        None => ("security".to_string(), "RepairOrigin".to_string()),
    };
    let mut tags = vec![json!("security"), json!("agent-repair")];
    if let Some(c) = cwe {
        tags.push(json!(format!("external/cwe/cwe-{c}")));
    }
    json!({
        "id": rule_id(cwe),
        "name": name,
        "shortDescription": {"text": format!("Agent repair still vulnerable ({}): where it first went wrong", cwe.map(|c| format!("CWE-{c}")).unwrap_or_else(|| "security".into()))},
        "fullDescription": {"text": format!("A confirmed {what} defect remains after an AI coding agent's repair. git-sage traces it to the write that introduced it and to the turn of the agent's session where the repair first departed from the security intent.")},
        "help": {"text": HELP_TEXT, "markdown": HELP_MARKDOWN},
        "helpUri": help_uri("method.md#origin-rule"),
        "defaultConfiguration": {"level": level(severity)},
        "properties": {"tags": tags, "security-severity": severity, "precision": "high"}
    })
}

/// SARIF's level from the severity: a confirmed high or critical defect is an error.
fn level(severity: &str) -> &'static str {
    if severity.parse::<f64>().is_ok_and(|s| s >= 7.0) {
        "error"
    } else {
        "warning"
    }
}

/// A fingerprint that stays the same across runs while the finding's code does: the rule, the
/// file and the located code (white space folded), not the line number, which moves.
fn fingerprint(doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let mut h = Sha256::new();
    h.update(rule_id(f.cwe).as_bytes());
    h.update([0]);
    h.update(f.file.as_bytes());
    h.update([0]);
    let code: Vec<String> = f
        .fragments
        .iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    if code.iter().all(String::is_empty) {
        h.update(f.pattern.as_deref().unwrap_or(&f.id).as_bytes());
    } else {
        h.update(code.join("\n").as_bytes());
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `s` ended as a sentence: a full stop, unless it already ends with one (or `!`, `?`, `…`,
/// their CJK forms), inside closing quotes or brackets too — a quote ending `rejected."` must
/// not become `rejected.".`.
fn sentence(s: String) -> String {
    let last = s
        .trim_end()
        .trim_end_matches(['"', '\'', '”', '’', '»', ')', '」', '』'])
        .chars()
        .next_back();
    match last {
        Some('.' | '!' | '?' | '…' | '。' | '！' | '？') => s,
        _ => s + ".",
    }
}

fn message(doc: &ReportDoc) -> String {
    let o = &doc.origin;
    let origin = sentence(match o.status {
        Status::Localized => format!(
            "The repair first went wrong at turn {} ({}){}",
            o.turn.unwrap_or(0),
            o.kind.map(|k| k.words()).unwrap_or("?"),
            o.quote
                .as_deref()
                .map(|q| format!(
                    ": \"{}\"",
                    q.split_whitespace().collect::<Vec<_>>().join(" ")
                ))
                .unwrap_or_default()
        ),
        Status::Undetermined => format!(
            "The origin is undetermined: {}",
            o.detail.as_deref().unwrap_or("no candidate")
        ),
    });
    let p = &doc.provenance;
    let prov = match &p.introducing_write {
        Some(w) => format!(
            " The defect was {} by commit {}{}.",
            p.status.as_str().replace('_', " "),
            &w.commit[..w.commit.len().min(7)],
            w.turn.map(|t| format!(" (turn {t})")).unwrap_or_default()
        ),
        None => format!(" Provenance: {}.", p.status.as_str().replace('_', " ")),
    };
    let missed = if doc.missed_opportunities.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = doc
            .missed_opportunities
            .iter()
            .map(|m| m.turn.to_string())
            .collect();
        format!(" Missed opportunities at turns {}.", list.join(", "))
    };
    format!("{origin}{prov}{missed}")
}

fn location(path: &str, line: Option<u32>) -> Value {
    let mut loc = json!({"physicalLocation": {"artifactLocation": {"uri": crate::finding::sarif::uri_of(path), "uriBaseId": "%SRCROOT%"}}});
    if let Some(l) = line {
        loc["physicalLocation"]["region"] = json!({"startLine": l});
    }
    loc
}

/// The severity of one finding: the scanner's own, else its CWE's default.
fn severity_of(doc: &ReportDoc) -> String {
    let f = &doc.finding;
    security_severity(
        f.cwe,
        f.source
            .as_ref()
            .and_then(|s| s.security_severity.as_deref()),
    )
}

fn result(doc: &ReportDoc, rule_index: usize, severity: &str) -> Value {
    let f = &doc.finding;
    let p = &doc.provenance;
    let o = &doc.origin;
    let mut primary = location(&f.file, f.line);
    // The located code as the tip has it, so a reviewer sees it without opening the file.
    let code = f.fragments.join("\n");
    if f.line.is_some() && !code.trim().is_empty() {
        primary["physicalLocation"]["region"]["snippet"] = json!({"text": code});
    }
    let mut r = json!({
        "ruleId": rule_id(f.cwe),
        "ruleIndex": rule_index,
        "level": level(severity),
        "message": {"text": message(doc)},
        "locations": [primary],
        "partialFingerprints": {"sageOrigin/v1": fingerprint(doc)},
        "properties": {
            "finding": f.id,
            "origin": o,
            "provenance": p.status,
            "unconfirmed": doc.unconfirmed,
            "missed_opportunities": doc.missed_opportunities,
            // What the judge's calls took, as every report says (docs/judge.md#cost).
            "judge": {
                "name": doc.judge.name,
                "calls": doc.judge.calls,
                "cached": doc.judge.cached,
                "skipped": doc.judge.skipped,
                "input_tokens": doc.judge.input_tokens,
                "cached_input_tokens": doc.judge.cached_input_tokens,
                "output_tokens": doc.judge.output_tokens,
                "cost_usd": doc.judge.cost_usd,
            },
        }
    });
    // The same object Agent Trace records carry (blame-origin --agent-trace).
    r["properties"][super::agent_trace::KEY] = super::agent_trace::metadata(doc, &[]);
    // The introducing write, where the defect entered: the file as that commit named it.
    if let Some(w) = &p.introducing_write {
        let path = p
            .writes
            .iter()
            .find(|x| x.write == w.write)
            .and_then(|x| x.path.clone())
            .unwrap_or_else(|| f.file.clone());
        let mut loc = location(&path, None);
        loc["id"] = json!(1);
        loc["message"] = json!({"text": format!(
            "introduced by commit {} (write {}{})",
            &w.commit[..w.commit.len().min(7)],
            w.write,
            w.turn.map(|t| format!(", turn {t}")).unwrap_or_default()
        )});
        r["relatedLocations"] = json!([loc]);
    }
    r
}

/// One finding's report as a SARIF log.
pub(crate) fn report(doc: &ReportDoc) -> Value {
    reports(std::slice::from_ref(doc))
}

/// Every finding of one run as one SARIF log with one run: a rule per CWE (its severity the
/// highest of its findings), a result per finding.
pub(crate) fn reports(docs: &[ReportDoc]) -> Value {
    let mut rules: Vec<(Option<u32>, String)> = Vec::new();
    let mut results = Vec::new();
    for doc in docs {
        let f = &doc.finding;
        let sev = severity_of(doc);
        let i = match rules.iter().position(|(c, _)| *c == f.cwe) {
            Some(i) => {
                if sev.parse::<f64>().unwrap_or(0.0) > rules[i].1.parse::<f64>().unwrap_or(0.0) {
                    rules[i].1 = sev.clone();
                }
                i
            }
            None => {
                rules.push((f.cwe, sev.clone()));
                rules.len() - 1
            }
        };
        results.push(result(doc, i, &sev));
    }
    let rules: Vec<Value> = rules.iter().map(|(c, s)| rule(*c, s)).collect();
    log(rules, results)
}

/// A SARIF 2.1.0 log of one git-sage run.
pub(crate) fn log(rules: Vec<Value>, results: Vec<Value>) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "git-sage",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": REPOSITORY,
                "rules": rules
            }},
            "results": results
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::sentence;

    #[test]
    fn a_sentence_ends_once() {
        let s = |t: &str| sentence(t.to_string());
        assert_eq!(s("turn 1"), "turn 1.");
        assert_eq!(
            s("turn 1: \"plain http is rejected.\""),
            "turn 1: \"plain http is rejected.\""
        );
        assert_eq!(s("turn 1: \"is it safe?\""), "turn 1: \"is it safe?\"");
        assert_eq!(s("turn 1: \"no stop\""), "turn 1: \"no stop\".");
        assert_eq!(s("第 1 轮：「已拒绝。」"), "第 1 轮：「已拒绝。」");
        assert_eq!(
            s("undetermined: no candidate (x)."),
            "undetermined: no candidate (x)."
        );
        assert_eq!(s(""), ".");
    }
}
