//! Our own session format (docs/session-format.md), for hand-written or converted logs:
//! one YAML document with `turns:`, or JSONL with one record per line.

use serde::Deserialize;

use super::lines::Input;
use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult, TurnKind};
use super::{Builder, Format, Transcript};
use crate::error::{Error, Result};

pub(super) const SCHEMA: &str = "sage.session/1";

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Doc {
    schema: Option<String>,
    agent: Option<String>,
    model: Option<String>,
    session_id: Option<String>,
    task: Option<String>,
    #[serde(default)]
    turns: Vec<Record>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Record {
    /// Header fields, allowed on the first JSONL line.
    schema: Option<String>,
    model: Option<String>,
    session_id: Option<String>,
    task: Option<String>,
    /// Accepted and ignored: turns are numbered in order.
    #[allow(dead_code)]
    turn: Option<u32>,
    role: Option<String>,
    agent: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    text: String,
    reasoning: Option<String>,
    reasoning_available: Option<bool>,
    timestamp: Option<String>,
    #[serde(default)]
    tool_calls: Vec<Call>,
    #[serde(default)]
    file_changes: Vec<Change>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
    result: Option<String>,
    #[serde(default)]
    is_error: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    path: String,
    old: Option<String>,
    new: Option<String>,
    #[serde(default)]
    all: bool,
    content: Option<String>,
    patch: Option<String>,
    #[serde(default)]
    delete: bool,
    lines: Option<String>,
    text: Option<String>,
    before: Option<String>,
    after: Option<String>,
}

fn change(c: Change) -> std::result::Result<FileChange, String> {
    let edit = if c.delete {
        Edit::Delete
    } else if let Some(content) = c.content {
        Edit::Write { content }
    } else if let Some(patch) = c.patch {
        Edit::Patch { patch }
    } else if let Some(l) = c.lines {
        let (start, end) = crate::anchor::parse_lines(&l)
            .ok_or_else(|| format!("file change {}: lines {l:?} is not N or N-M", c.path))?;
        Edit::Lines {
            start: start as usize,
            end: end as usize,
            text: c.text.unwrap_or_default(),
        }
    } else if c.old.is_some() || c.new.is_some() {
        Edit::Replace {
            old: c.old.unwrap_or_default(),
            new: c.new.unwrap_or_default(),
            all: c.all,
        }
    } else {
        Edit::Opaque
    };
    Ok(FileChange {
        path: c.path,
        edit,
        before: c.before,
        after: c.after,
        tool_call: None,
    })
}

fn add(b: &mut Builder, r: Record, source: SourceRef) -> std::result::Result<(), String> {
    let role = r.role.as_deref().unwrap_or("agent").to_ascii_lowercase();
    if matches!(role.as_str(), "user" | "system" | "human") {
        b.message(&role, r.text, r.timestamp, source);
        return Ok(());
    }
    let kind = match r.kind.as_deref() {
        None => None,
        Some(k) => Some(
            TurnKind::parse(k)
                .ok_or_else(|| format!("kind {k:?} is not one of {}", TurnKind::ALL.join(", ")))?,
        ),
    };
    let changes = r
        .file_changes
        .into_iter()
        .map(change)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let t = b.new_turn(r.timestamp, source);
    if let Some(a) = r.agent {
        t.agent = a;
    }
    Builder::push_text(t, &r.text);
    match r.reasoning.as_deref() {
        Some(reasoning) => Builder::push_reasoning(t, Some(reasoning)),
        // `reasoning_available: false` says the agent reasoned and the log withheld it.
        None if r.reasoning_available == Some(false) => Builder::push_reasoning(t, None),
        None => {}
    }
    t.tool_calls = r
        .tool_calls
        .into_iter()
        .map(|c| ToolCall {
            id: c.id,
            name: c.name,
            arguments: c.arguments,
            result: c.result.map(|text| ToolResult {
                text,
                is_error: c.is_error,
            }),
        })
        .collect();
    t.file_changes = changes;
    if let Some(k) = kind {
        b.set_kind(k);
    }
    b.close();
    Ok(())
}

pub(super) fn parse(input: Input, name: &str) -> Result<Transcript> {
    let head = String::from_utf8_lossy(input.head())
        .trim_start()
        .to_string();
    if head.starts_with('{') {
        return parse_jsonl(input, name);
    }
    let bytes = input
        .read_all()
        .map_err(|e| Error::input(format!("{name}: cannot read: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let doc: Doc =
        crate::files::parse_yaml(&text, name).map_err(|e| e.hint("see docs/session-format.md"))?;
    check_schema(doc.schema.as_deref(), name)?;
    let mut b = Builder::new(doc.agent.as_deref().unwrap_or("agent"));
    b.agent_known = doc.agent.is_some();
    b.model = doc.model;
    b.session_id = doc.session_id;
    if let Some(task) = doc.task {
        b.message("user", task, None, SourceRef::line(1));
    }
    for (i, r) in doc.turns.into_iter().enumerate() {
        // YAML gives no line per item once parsed; the event id is the item's position.
        let src = SourceRef::event(format!("turns[{i}]"));
        add(&mut b, r, src).map_err(|e| Error::input(format!("{name}: turns[{i}]: {e}")))?;
    }
    b.finish(Format::Sage, name)
}

fn check_schema(schema: Option<&str>, name: &str) -> Result<()> {
    match schema {
        None => Ok(()),
        Some(s) if s == SCHEMA => Ok(()),
        Some(s) => Err(Error::input(format!(
            "{name}: schema {s:?} is not {SCHEMA}"
        ))),
    }
}

fn parse_jsonl(input: Input, name: &str) -> Result<Transcript> {
    let mut b = Builder::new("agent");
    // The JSONL header has no `agent`: records may name theirs, the session does not.
    b.agent_known = false;
    let mut lines = input.lines();
    while let Some((n, parsed)) = lines.next_json::<Record>(name)? {
        let r: Record = match parsed {
            Ok(r) => r,
            Err(e) => {
                b.skip(n, format!("not a session record: {e}"));
                continue;
            }
        };
        if r.schema.is_some() || r.task.is_some() && r.text.is_empty() {
            check_schema(r.schema.as_deref(), name)?;
            if r.model.is_some() {
                b.model = r.model.clone();
            }
            if r.session_id.is_some() {
                b.session_id = r.session_id.clone();
            }
            if let Some(task) = r.task {
                b.message("user", task, None, SourceRef::line(n));
            }
            continue;
        }
        if let Err(e) = add(&mut b, r, SourceRef::line(n)) {
            b.skip(n, e);
        }
    }
    b.finish(Format::Sage, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_session() {
        let y = r#"
schema: sage.session/1
agent: cursor
model: gpt-4.1
task: fix the SSRF in product photo download
turns:
  - text: We will check that the scheme is https.
    kind: planning
  - text: Patch.
    reasoning_available: false
    tool_calls:
      - {name: Edit, arguments: {file_path: media/fetcher.py}, result: ok}
    file_changes:
      - {path: media/fetcher.py, old: "def f(url):\n", new: "def f(url):\n    check(url)\n"}
      - {path: new.py, content: "x = 1\n"}
  - role: user
    text: thanks
  - text: Tests are green.
"#;
        let t = parse(Input::from_bytes("s.yaml", y.as_bytes().to_vec()), "s.yaml").unwrap();
        assert_eq!(t.turns.len(), 3);
        assert_eq!(t.model.as_deref(), Some("gpt-4.1"));
        assert_eq!(t.context.len(), 2);
        assert_eq!(t.context[1].before_turn, 3);
        assert_eq!(t.turns[0].agent, "cursor");
        assert_eq!(t.agent.as_deref(), Some("cursor"));
        // A session that names no agent says so: its turns' "agent" is a stand-in.
        let unnamed = "turns:\n  - text: Plan.\n";
        let u = parse(Input::from_bytes("u.yaml", unnamed.into()), "u.yaml").unwrap();
        assert_eq!((u.turns[0].agent.as_str(), u.agent), ("agent", None));
        assert!(!t.turns[1].reasoning_available);
        assert!(t.turns[1].reasoning_redacted);
        assert_eq!(t.turns[1].kind, TurnKind::Implementation);
        assert!(matches!(
            t.turns[1].file_changes[1].edit,
            Edit::Write { .. }
        ));
        assert_eq!(
            t.turns[2].kind,
            TurnKind::Verification,
            "it reports a test run"
        );
    }

    #[test]
    fn jsonl_session_skips_bad_lines() {
        let j = "{\"schema\":\"sage.session/1\",\"task\":\"t\"}\n{\"text\":\"plan\"}\nnot json\n{\"text\":\"x\",\"kind\":\"bogus\"}\n{\"text\":\"done\"";
        let t = parse(
            Input::from_bytes("s.jsonl", j.as_bytes().to_vec()),
            "s.jsonl",
        )
        .unwrap();
        assert_eq!(t.turns.len(), 1);
        let lines: Vec<u64> = t.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [3, 4, 5]);
    }

    #[test]
    fn bad_yaml_names_the_line() {
        let e = parse(
            Input::from_bytes("s.yaml", b"turns:\n  - txt: a\n".to_vec()),
            "s.yaml",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("s.yaml:2:"), "{e}");
    }
}
