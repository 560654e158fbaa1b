//! Agent Trace records of the writes a report analysed (`blame-origin --agent-trace`,
//! docs/dialects.md#what-git-sage-writes): one record per commit that changed the anchored
//! file, its lines those the commit added, the SAGE result under `metadata["dev.git-sage"]`.
//! They are kept in a JSONL file where a finding's records are replaced on each run and every
//! other line is kept as it was.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git::{Oid, Repo};
use crate::history::dialects::agent_trace::{self, Write};
use crate::history::dialects::{Author, added_lines};
use crate::report::agent_trace::{KEY, metadata};
use crate::report::doc::ReportDoc;
use crate::report::json::WriteJson;
use serde_json::Value;

/// Where records go when no path is given: the committed-file place Agent Trace readers look
/// (`.agent-trace/*.jsonl`), under a name no other tool writes.
pub(crate) const DEFAULT_PATH: &str = ".agent-trace/git-sage.jsonl";

/// The largest records file read back for a rerun (a file this size holds ~100k records).
const MAX_FILE: u64 = 256 << 20;

/// The records of one report, in the order of its writes.
pub(crate) fn records(repo: &Repo, doc: &ReportDoc) -> Result<Vec<Value>> {
    let p = &doc.provenance;
    let mut out = Vec::new();
    // The file's name before each commit: the baseline's, then each write's.
    let mut before_path = p.baseline.as_ref().map(|b| b.path.clone());
    let mut i = 0;
    while i < p.writes.len() {
        // A commit replayed edit by edit is several writes; a record speaks of the commit.
        let commit = &p.writes[i].commit;
        let group: Vec<&WriteJson> = p.writes[i..]
            .iter()
            .take_while(|w| &w.commit == commit)
            .collect();
        i += group.len();
        let last_path = group.iter().rev().find_map(|w| w.path.clone());
        if group.iter().any(|w| w.changed)
            && let Some(path) = last_path.as_deref()
            && let Some(rec) = record(repo, doc, &group, before_path.as_deref(), path)?
        {
            out.push(rec);
        }
        if last_path.is_some() {
            before_path = last_path;
        }
    }
    Ok(out)
}

/// The record of one commit's writes to `path`, or `None` when it added no line (a deletion).
fn record(
    repo: &Repo,
    doc: &ReportDoc,
    writes: &[&WriteJson],
    before: Option<&str>,
    path: &str,
) -> Result<Option<Value>> {
    let Some(id) = Oid::from_hex(&writes[0].commit) else {
        return Ok(None);
    };
    let info = repo.commit_info(id)?;
    let new = repo.file_in_tree(info.tree, path)?;
    let old = match (info.parents.first(), before) {
        (Some(parent), Some(before)) => repo.file_in_tree(repo.tree_of(*parent)?, before)?,
        _ => None,
    };
    let new = String::from_utf8_lossy(new.as_deref().map_or(&[][..], |b| &b[..])).into_owned();
    let old = String::from_utf8_lossy(old.as_deref().map_or(&[][..], |b| &b[..])).into_owned();
    let ranges = added_lines(&old, &new);
    if ranges.is_empty() {
        return Ok(None);
    }
    let agent = writes.iter().any(|w| w.agent);
    let model = doc
        .session
        .as_ref()
        .and_then(|s| s.model.as_deref())
        .filter(|_| agent)
        .map(models_dev);
    let revision = info.id.hex();
    let timestamp = crate::transcript::detect::iso_from_millis(info.time.saturating_mul(1000))
        .replace(".000Z", "Z");
    let tool = crate::tool::Tool::current();
    Ok(Some(agent_trace::record(&Write {
        path,
        ranges: &ranges,
        revision: &revision,
        tool_version: &tool.version,
        // A write the agent pattern does not name may be a person's or another tool's.
        author: Some(if agent {
            Author::Agent
        } else {
            Author::Unknown
        }),
        model_id: model.as_deref(),
        url: None,
        timestamp: &timestamp,
        sage: metadata(doc, writes),
    })))
}

/// A model as models.dev names it (`provider/model`), which Agent Trace asks for; names
/// already holding a provider, and families git sage does not know, are kept as they are.
fn models_dev(model: &str) -> String {
    if model.contains('/') {
        return model.to_string();
    }
    let m = model.to_ascii_lowercase();
    let provider = if m.starts_with("claude") {
        Some("anthropic")
    } else if m.starts_with("gpt-")
        || m.starts_with("codex")
        || (m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit()))
    {
        Some("openai")
    } else if m.starts_with("gemini") {
        Some("google")
    } else {
        None
    };
    match provider {
        Some(p) => format!("{p}/{model}"),
        None => model.to_string(),
    }
}

/// Where records go: `path` as given (relative to the working directory, like `--out`), else
/// [`DEFAULT_PATH`] in the repository's working tree.
pub(crate) fn target(repo: &Repo, cwd: &Path, path: Option<&Path>) -> Result<PathBuf> {
    match path {
        Some(p) => Ok(cwd.join(p)),
        None => repo.workdir().map(|w| w.join(DEFAULT_PATH)).ok_or_else(|| {
            Error::input("--agent-trace: a bare repository has no working tree to keep records in")
                .hint("give a file: --agent-trace=FILE")
        }),
    }
}

/// `old` (a JSONL file's text) with git sage's records for `findings` taken out and `new`
/// appended; every other line kept byte for byte.
pub(crate) fn merge(old: &str, findings: &[&str], new: &[Value]) -> String {
    let mut out = String::new();
    for line in old.lines() {
        if is_replaced(line, findings) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    for v in new {
        out.push_str(&serde_json::to_string(v).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Whether a line is a record git sage wrote for one of `findings`.
fn is_replaced(line: &str, findings: &[&str]) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let ours = v["tool"]["name"].as_str() == Some(agent_trace::OWN_TOOL);
    let finding = v["metadata"][KEY]["finding"]["id"].as_str();
    ours && finding.is_some_and(|f| findings.contains(&f))
}

/// Writes the records of `docs` into the file at `path` (made, with its directory, when
/// missing); returns how many were written.
pub(crate) fn write(repo: &Repo, docs: &[ReportDoc], path: &Path) -> Result<usize> {
    let mut new = Vec::new();
    for doc in docs {
        new.extend(records(repo, doc)?);
    }
    if let Some(worktree) = repo.workdir() {
        crate::files::refuse_link_out(&worktree, path, "Agent Trace records")?;
    }
    let findings: Vec<&str> = docs.iter().map(|d| d.finding.id.as_str()).collect();
    let old = crate::files::read_text_if_exists(path, "Agent Trace file", MAX_FILE)?;
    let text = merge(old.as_deref().unwrap_or(""), &findings, &new);
    crate::files::write_output(path, text.as_bytes()).map_err(|e| {
        Error::env(format!(
            "{}: cannot write the Agent Trace records: {e}",
            path.display()
        ))
    })?;
    Ok(new.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn models_named_as_models_dev_does() {
        assert_eq!(models_dev("claude-opus-4-8"), "anthropic/claude-opus-4-8");
        assert_eq!(models_dev("gpt-4.1"), "openai/gpt-4.1");
        assert_eq!(models_dev("o3"), "openai/o3");
        assert_eq!(models_dev("gemini-2.5-pro"), "google/gemini-2.5-pro");
        assert_eq!(models_dev("openrouter/x"), "openrouter/x");
        assert_eq!(models_dev("ollama-llama3"), "ollama-llama3");
    }

    #[test]
    fn a_rerun_replaces_its_findings_records_and_keeps_the_rest() {
        let ours = |finding: &str, n: u32| {
            json!({"tool": {"name": "git-sage"}, "n": n,
                "metadata": {"dev.git-sage": {"finding": {"id": finding}}}})
        };
        let other =
            r#"{"tool":{"name":"cursor"},"metadata":{"dev.git-sage":{"finding":{"id":"a"}}}}"#;
        let old = format!(
            "{}\n{other}\nnot json\n{}\n",
            serde_json::to_string(&ours("a", 1)).unwrap(),
            serde_json::to_string(&ours("b", 1)).unwrap()
        );
        let text = merge(&old, &["a"], &[ours("a", 2)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], other, "another tool's line is kept byte for byte");
        assert_eq!(lines[1], "not json");
        assert!(
            lines[2].contains("\"b\""),
            "another finding's record is kept"
        );
        assert!(lines[3].contains("\"n\":2"));
    }
}
