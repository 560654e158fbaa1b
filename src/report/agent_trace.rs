//! The SAGE result as git sage puts it in Agent Trace records (`metadata["dev.git-sage"]`) and
//! in SARIF results' `properties` (docs/dialects.md#what-git-sage-writes): one shape for both,
//! built from the report alone.

use serde_json::{Value, json};

use super::doc::ReportDoc;
use super::json::WriteJson;

/// The key both carry the result under (reverse-domain notation, as the Agent Trace
/// specification suggests for metadata).
pub(crate) const KEY: &str = "dev.git-sage";

/// What a `dev.git-sage` object's shape is called (docs/schema/sage.trace-1.json).
pub(crate) const SCHEMA: &str = "sage.trace/1";

/// The result: the finding, the origin turn and type, the provenance; with `writes` (the
/// writes of one commit), what those writes were.
pub(crate) fn metadata(doc: &ReportDoc, writes: &[&WriteJson]) -> Value {
    let f = &doc.finding;
    let p = &doc.provenance;
    let o = &doc.origin;
    let introducing = p
        .introducing_write
        .as_ref()
        .map(|w| json!({"write": w.write, "commit": w.commit, "turn": w.turn, "agent": w.agent}));
    let mut v = json!({
        "schema": SCHEMA,
        "tool": crate::tool::Tool::json(),
        "finding": {"id": f.id, "file": f.file, "cwe": f.cwe, "unconfirmed": doc.unconfirmed},
        "origin": {"status": o.status, "turn": o.turn, "type": o.kind},
        "missed_opportunities": doc.missed_opportunities.iter().map(|m| m.turn).collect::<Vec<_>>(),
        "provenance": {"status": p.status, "introducing_write": introducing},
        "session": doc.session.as_ref().map(|s| s.source.clone()),
    });
    if !writes.is_empty() {
        let mut turns: Vec<u32> = writes.iter().filter_map(|w| w.turn).collect();
        turns.dedup();
        let numbers: Vec<usize> = writes.iter().map(|w| w.write).collect();
        let is_introducing = p
            .introducing_write
            .as_ref()
            .is_some_and(|i| numbers.contains(&i.write));
        v["write"] = json!({
            "writes": numbers,
            "turns": turns,
            "agent": writes.iter().any(|w| w.agent),
            "introducing": is_introducing,
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo's JSON report, as its snapshot holds it.
    fn demo_doc() -> ReportDoc {
        let snap = include_str!("../../tests/it/snapshots/it__blame__demo_json.snap");
        let json = &snap[snap.find('{').unwrap()..];
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_demo_result_as_metadata() {
        let doc = demo_doc();
        let all = metadata(&doc, &[]);
        assert_eq!(all["schema"], SCHEMA);
        assert_eq!(all["finding"]["id"], doc.finding.id.as_str());
        assert!(
            all.get("write").is_none(),
            "a SARIF result speaks of no single write"
        );
        let w = doc
            .provenance
            .writes
            .iter()
            .find(|w| w.changed)
            .expect("a write changed the file");
        let one = metadata(&doc, &[w]);
        assert_eq!(one["write"]["writes"], json!([w.write]));
        assert_eq!(one["write"]["agent"], w.agent);
    }
}
