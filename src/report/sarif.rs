//! `blame-origin --format sarif`: one SARIF 2.1.0 result at the anchor, with the origin in its
//! message, for code-scanning uploads.

use serde_json::{Value, json};

use crate::origin::Status;
use crate::report::doc::ReportDoc;

pub(crate) fn report(doc: &ReportDoc) -> Value {
    let f = &doc.finding;
    let o = &doc.origin;
    let origin = match o.status {
        Status::Localized => format!(
            "The repair first went wrong at turn {} ({}){}.",
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
            "The origin is undetermined: {}.",
            o.detail.as_deref().unwrap_or("no candidate")
        ),
    };
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
    let mut tags = vec![json!("security"), json!("agent-repair")];
    if let Some(c) = f.cwe {
        tags.push(json!(format!("external/cwe/cwe-{c}")));
    }
    let mut region = json!({});
    if let Some(l) = f.line {
        region = json!({"startLine": l});
    }
    let mut location = json!({"physicalLocation": {"artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"}}});
    if f.line.is_some() {
        location["physicalLocation"]["region"] = region;
    }
    let rule = json!({
        "id": "sage/repair-origin",
        "name": "RepairOrigin",
        "shortDescription": {"text": "Where an AI agent's security repair first went wrong"},
        "fullDescription": {"text": "A confirmed defect remains after an agent's repair; SAGE locates the turn where the agent first diverged from the security intent."},
        // SARIF's helpUri must be absolute and the project names no canonical URL, so the
        // shipped document is named by its path in the sources instead.
        "help": {"text": "Provenance tells whether the agent wrote the defect and in which commit; the origin is the earliest turn of the agent's session that departs from the security intent (inadequate defence, unaddressed requirement, or defect in the code change); missed opportunities are later turns that could have caught it. The method: docs/method.md#origin-rule in the git-sage sources."},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": tags}
    });
    let result = json!({
        "ruleId": "sage/repair-origin",
        "ruleIndex": 0,
        "level": "warning",
        "message": {"text": format!("{origin}{prov}{missed}")},
        "locations": [location],
        "partialFingerprints": {"sageFinding/v1": f.id},
        "properties": {
            "origin": o,
            "provenance": p.status,
            "unconfirmed": doc.unconfirmed,
            "missed_opportunities": doc.missed_opportunities,
        }
    });
    log(rule, vec![result])
}

/// A SARIF 2.1.0 log of one git-sage run with one rule.
pub(crate) fn log(rule: Value, results: Vec<Value>) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "git-sage",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/git-sage/git-sage",
                "rules": [rule]
            }},
            "results": results
        }]
    })
}
