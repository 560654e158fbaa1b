//! Claude Code session JSONL: one content block per line, grouped into turns by
//! `message.id`; tool results arrive on `type:"user"` lines with `toolUseResult`.
//! A subagent's edits (streamed as `progress` records, or `isSidechain` records in older
//! logs) count as changes of the turn that started the subagent; the rest of its records and
//! hook, snapshot and summary records are skipped and counted; compaction boundaries are kept.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::lines::Lines;
use super::turn::{Edit, FileChange, SourceRef, ToolCall};
use super::{Builder, Format, Transcript, relative_path, value_text};
use crate::error::{Error, Result};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: bool,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(rename = "parentToolUseID", borrow, default)]
    parent_tool_use_id: Option<Cow<'a, str>>,
}

/// `data` of a `progress` record: a subagent's message, relayed while its Task call runs.
#[derive(Deserialize)]
struct Progress<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Relayed<'a>>,
}

#[derive(Deserialize)]
struct Relayed<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<serde_json::Value>,
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    is_error: Option<bool>,
}

/// The parts of an Edit/Write/MultiEdit `toolUseResult` that say what changed.
#[derive(Deserialize, Default)]
struct EditResult {
    #[serde(rename = "filePath", default)]
    file_path: Option<String>,
    #[serde(rename = "oldString", default)]
    old_string: Option<String>,
    #[serde(rename = "newString", default)]
    new_string: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(rename = "replaceAll", default)]
    replace_all: Option<bool>,
    #[serde(rename = "structuredPatch", default)]
    structured_patch: Option<Vec<PatchHunk>>,
}

#[derive(Deserialize)]
struct PatchHunk {
    #[serde(rename = "oldStart")]
    old_start: u64,
    #[serde(rename = "oldLines")]
    old_lines: u64,
    #[serde(rename = "newStart")]
    new_start: u64,
    #[serde(rename = "newLines")]
    new_lines: u64,
    lines: Vec<String>,
}

/// Text of `<command-name>`-style echoes and caveats: not a task prompt.
fn is_command_echo(text: &str) -> bool {
    let t = text.trim_start();
    [
        "<command-name>",
        "<command-message>",
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
        "<bash-input>",
        "<bash-stdout>",
        "<bash-stderr>",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

struct State {
    b: Builder,
    /// message.id → turn index (messages stream block by block, interleaved with results).
    by_message: HashMap<String, usize>,
    /// tool_use id → (tool name, input) for building file changes from results.
    pending: HashMap<String, (String, serde_json::Value)>,
    /// A subagent's edit calls: tool_use id → the main-thread call that started the subagent
    /// (None: the turn open when the call was made).
    sub_calls: HashMap<String, Option<String>>,
    /// Results written before their call (a checkpoint that imported records out of order):
    /// tool_use id → what the result line held, until the call arrives.
    early: HashMap<String, Early>,
    cwd: Option<String>,
}

/// A tool result that came before its call.
struct Early {
    text: String,
    is_error: bool,
    /// The record's `toolUseResult`, when it was the record's only result.
    edit: Option<Box<RawValue>>,
    ts: Option<String>,
    line: u64,
}

pub(super) fn parse(mut lines: Lines, name: &str) -> Result<Transcript> {
    let mut st = State {
        b: Builder::new("claude-code"),
        by_message: HashMap::new(),
        pending: HashMap::new(),
        early: HashMap::new(),
        sub_calls: HashMap::new(),
        cwd: None,
    };
    loop {
        let next = lines
            .next_line()
            .map_err(|e| Error::input(format!("{name}: cannot read: {e}")))?;
        let Some((n, raw)) = next else { break };
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let owned;
        let text: &[u8] = match std::str::from_utf8(raw) {
            Ok(_) => raw,
            Err(_) => {
                owned = String::from_utf8_lossy(raw).into_owned();
                owned.as_bytes()
            }
        };
        let repaired;
        let parsed = match serde_json::from_slice::<Line>(text) {
            Err(e) if !e.is_eof() => match super::lines::escape_controls(text) {
                Some(fixed) => {
                    repaired = fixed;
                    serde_json::from_slice(&repaired).map_err(|_| e)
                }
                None => Err(e),
            },
            other => other,
        };
        let line: Line = match parsed {
            Ok(l) => l,
            Err(e) if e.is_eof() => {
                st.b.skip(n, "truncated JSON line");
                continue;
            }
            Err(e) => {
                st.b.skip(n, format!("not a Claude Code record: {e}"));
                continue;
            }
        };
        line_record(&mut st, line, n);
    }
    let mut never: Vec<(u64, String)> = st.early.drain().map(|(id, e)| (e.line, id)).collect();
    never.sort();
    for (n, id) in never {
        st.b.skip(n, format!("tool result for unknown call {id}"));
    }
    st.b.finish(Format::ClaudeCode, name)
}

fn line_record(st: &mut State, line: Line, n: u64) {
    if st.b.session_id.is_none() {
        st.b.session_id = line.session_id.as_deref().map(str::to_string);
    }
    if let Some(c) = &line.cwd {
        st.cwd = Some(c.to_string());
    }
    let ts = line.timestamp.as_deref().map(str::to_string);
    if line.is_sidechain {
        subagent(
            st,
            line.kind.as_ref(),
            line.message,
            line.tool_use_result,
            None,
            ts,
            n,
        );
        return;
    }
    match line.kind.as_ref() {
        "progress" => progress(st, &line, n, ts),
        "assistant" => assistant(st, line, n, ts),
        "user" => user(st, line, n, ts),
        "system" => match line.subtype.as_deref() {
            Some("compact_boundary") => st.b.compaction(),
            Some(s) => st.b.count(&format!("system/{s}")),
            None => st.b.count("system"),
        },
        other => st.b.count(other),
    }
}

fn assistant(st: &mut State, line: Line, n: u64, ts: Option<String>) {
    let Some(msg) = line.message else {
        st.b.skip(n, "assistant record without a message");
        return;
    };
    // Claude Code writes a `<synthetic>` message of its own ("No response requested.") after
    // an interruption or a meta prompt: no model answered, so it is no turn.
    if msg.model.as_deref() == Some("<synthetic>") {
        st.b.count("synthetic message");
        return;
    }
    if st.b.model.is_none()
        && let Some(m) = msg.model.as_deref().filter(|m| !m.starts_with('<'))
    {
        st.b.model = Some(m.to_string());
    }
    let blocks: Vec<Block> = match msg
        .content
        .map(|c| serde_json::from_str::<Vec<Block>>(c.get()))
    {
        Some(Ok(b)) => b,
        Some(Err(e)) => {
            st.b.skip(n, format!("assistant content: {e}"));
            return;
        }
        None => Vec::new(),
    };
    // Find (or open) the turn of this API message.
    let id = msg.id.as_deref().map(str::to_string);
    let existing = id.as_ref().and_then(|i| st.by_message.get(i)).copied();
    let ti = match existing {
        Some(ti) => ti,
        None => {
            st.b.new_turn(ts.clone(), SourceRef::line(n));
            let ti = st.b.turn_count() - 1;
            if let Some(i) = id {
                st.by_message.insert(i, ti);
            }
            ti
        }
    };
    for block in blocks {
        match block.kind.as_ref() {
            "text" => {
                let t = st.b.turn_at(ti);
                Builder::push_text(t, block.text.as_deref().unwrap_or(""));
            }
            "thinking" => {
                let t = st.b.turn_at(ti);
                Builder::push_reasoning(t, block.thinking.as_deref());
            }
            "redacted_thinking" => Builder::push_reasoning(st.b.turn_at(ti), None),
            "tool_use" => {
                let id = block.id.as_deref().map(str::to_string);
                let name = block.name.unwrap_or_default();
                let input = block.input.unwrap_or(serde_json::Value::Null);
                if let Some(i) = &id {
                    st.pending.insert(i.clone(), (name.clone(), input.clone()));
                }
                st.b.call_at(
                    ti,
                    ToolCall {
                        id: id.clone(),
                        name,
                        arguments: input,
                        result: None,
                    },
                );
                if let Some(i) = id
                    && let Some(e) = st.early.remove(&i)
                {
                    st.b.result(&i, e.text, e.is_error);
                    if let Some(edit) = e.edit.filter(|_| !e.is_error) {
                        file_change(st, &i, Some(&i), Some(&edit), e.ts, e.line);
                    }
                }
            }
            other => st.b.count(&format!("assistant block {other}")),
        }
    }
}

fn user(st: &mut State, line: Line, n: u64, ts: Option<String>) {
    let Some(msg) = line.message else {
        st.b.skip(n, "user record without a message");
        return;
    };
    let content = msg.content.map(|c| c.get()).unwrap_or("null");
    // A string is a prompt (or a command echo); an array may hold tool results.
    let blocks: Option<Vec<Block>> = if content.trim_start().starts_with('[') {
        match serde_json::from_str(content) {
            Ok(b) => Some(b),
            Err(e) => {
                st.b.skip(n, format!("user content: {e}"));
                return;
            }
        }
    } else {
        None
    };
    if let Some(blocks) = &blocks
        && blocks.iter().any(|b| b.kind == "tool_result")
    {
        let single = blocks.iter().filter(|b| b.kind == "tool_result").count() == 1;
        for b in blocks.iter().filter(|b| b.kind == "tool_result") {
            let id = b.tool_use_id.as_deref().unwrap_or("");
            let text = b.content.as_ref().map(value_text).unwrap_or_default();
            let is_error = b.is_error.unwrap_or(false);
            if !st.b.result(id, text.clone(), is_error) {
                // Its call may still come (records imported out of order); if it never
                // does, the result is reported as skipped at the end.
                st.early.insert(
                    id.to_string(),
                    Early {
                        text,
                        is_error,
                        edit: line
                            .tool_use_result
                            .filter(|_| single)
                            .and_then(|r| RawValue::from_string(r.get().to_string()).ok()),
                        ts: ts.clone(),
                        line: n,
                    },
                );
                continue;
            }
            if single && !is_error {
                file_change(st, id, Some(id), line.tool_use_result, ts.clone(), n);
            }
        }
        return;
    }
    let text = match &blocks {
        Some(b) => {
            let v: Vec<String> = b.iter().filter_map(|b| b.text.clone()).collect();
            v.join("\n\n")
        }
        None => serde_json::from_str::<serde_json::Value>(content)
            .map(|v| value_text(&v))
            .unwrap_or_default(),
    };
    if line.is_compact_summary {
        st.b.compaction();
        st.b.message("summary", text, ts, SourceRef::line(n));
        return;
    }
    if line.is_meta || is_command_echo(&text) {
        st.b.count("meta or command echo");
        return;
    }
    if text.starts_with("[Request interrupted by user") {
        st.b.close();
        st.b.count("interruption");
        return;
    }
    st.b.message("user", text, ts, SourceRef::line(n));
}

/// A `progress` record: hook output is counted; a subagent's relayed message may hold edits.
fn progress(st: &mut State, line: &Line, n: u64, ts: Option<String>) {
    let data: Option<Progress> = line.data.and_then(|d| serde_json::from_str(d.get()).ok());
    let Some(Progress { kind, message }) = data else {
        st.b.count("progress");
        return;
    };
    let kind = kind.as_deref().unwrap_or("");
    let (true, Some(relayed)) = (kind == "agent_progress", message) else {
        st.b.count(&format!("progress/{kind}"));
        return;
    };
    let parent = line.parent_tool_use_id.as_deref().map(str::to_string);
    let role = relayed.kind.as_deref().unwrap_or("").to_string();
    subagent(
        st,
        &role,
        relayed.message,
        relayed.tool_use_result,
        parent,
        ts,
        n,
    );
}

/// One record of a subagent: its edit calls are remembered, and a successful result makes
/// the change on the turn that started the subagent. Its text is not the main agent's
/// reasoning and stays out of the turns.
fn subagent(
    st: &mut State,
    role: &str,
    msg: Option<Message>,
    result: Option<&RawValue>,
    parent: Option<String>,
    ts: Option<String>,
    n: u64,
) {
    st.b.count("subagent record");
    let Some(blocks) = msg
        .and_then(|m| m.content)
        .filter(|c| c.get().trim_start().starts_with('['))
        .and_then(|c| serde_json::from_str::<Vec<Block>>(c.get()).ok())
    else {
        return;
    };
    match role {
        "assistant" => {
            for b in blocks.into_iter().filter(|b| b.kind == "tool_use") {
                let (Some(id), Some(name)) = (b.id.as_deref(), b.name) else {
                    continue;
                };
                if is_edit_tool(&name) {
                    let input = b.input.unwrap_or(serde_json::Value::Null);
                    st.pending.insert(id.to_string(), (name, input));
                    st.sub_calls.insert(id.to_string(), parent.clone());
                }
            }
        }
        "user" => {
            let results: Vec<&Block> = blocks.iter().filter(|b| b.kind == "tool_result").collect();
            for b in &results {
                let id = b.tool_use_id.as_deref().unwrap_or("");
                let Some(parent) = st.sub_calls.remove(id) else {
                    continue;
                };
                if b.is_error.unwrap_or(false) {
                    continue;
                }
                let r = if results.len() == 1 { result } else { None };
                file_change(st, id, parent.as_deref(), r, ts.clone(), n);
            }
        }
        _ => {}
    }
}

fn is_edit_tool(name: &str) -> bool {
    matches!(name, "Edit" | "MultiEdit" | "Write" | "NotebookEdit")
}

/// The file change an Edit/MultiEdit/Write call made, from its result (else its input),
/// recorded on the turn of call `on` (a subagent's parent call) or else of the call itself.
fn file_change(
    st: &mut State,
    id: &str,
    on: Option<&str>,
    result: Option<&RawValue>,
    ts: Option<String>,
    n: u64,
) {
    let Some((tool, input)) = st.pending.get(id).cloned() else {
        return;
    };
    if !is_edit_tool(&tool) {
        return;
    }
    let r: EditResult = result
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default();
    let arg = |k: &str| input.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let Some(path) = r
        .file_path
        .clone()
        .or_else(|| arg("file_path").or_else(|| arg("notebook_path")))
    else {
        return;
    };
    let path = relative_path(&path, st.cwd.as_deref());
    let mut changes = Vec::new();
    match tool.as_str() {
        "Write" => changes.push(Edit::Write {
            content: r
                .content
                .clone()
                .or_else(|| arg("content"))
                .unwrap_or_default(),
        }),
        "Edit" => changes.push(Edit::Replace {
            old: r
                .old_string
                .clone()
                .or_else(|| arg("old_string"))
                .unwrap_or_default(),
            new: r
                .new_string
                .clone()
                .or_else(|| arg("new_string"))
                .unwrap_or_default(),
            all: r
                .replace_all
                .or_else(|| input.get("replace_all").and_then(|v| v.as_bool()))
                .unwrap_or(false),
        }),
        "MultiEdit" => {
            for e in input
                .get("edits")
                .and_then(|e| e.as_array())
                .into_iter()
                .flatten()
            {
                let s = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                changes.push(Edit::Replace {
                    old: s("old_string"),
                    new: s("new_string"),
                    all: e
                        .get("replace_all")
                        .and_then(|v| v.as_bool())
                        .unwrap_or(false),
                });
            }
        }
        _ => {
            // NotebookEdit: only the structured patch (if any) says what changed.
            match r.structured_patch.as_deref().filter(|p| !p.is_empty()) {
                Some(hunks) => changes.push(Edit::Patch {
                    patch: render_hunks(hunks),
                }),
                None => changes.push(Edit::Opaque),
            }
        }
    }
    for edit in changes {
        st.b.change_for_call(
            on,
            FileChange::new(path.clone(), edit),
            ts.clone(),
            SourceRef::line(n),
        );
    }
}

fn render_hunks(hunks: &[PatchHunk]) -> String {
    let mut s = String::new();
    for h in hunks {
        s.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            h.old_start, h.old_lines, h.new_start, h.new_lines
        ));
        for l in &h.lines {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Input;

    fn parse_str(s: &str) -> Transcript {
        crate::transcript::parse(
            Input::from_bytes("t.jsonl", s.as_bytes().to_vec()),
            Some(Format::ClaudeCode),
        )
        .unwrap()
    }

    /// A result line written before its call's line still belongs to the call.
    #[test]
    fn a_result_before_its_call_is_kept() {
        let mut s = String::new();
        s += "{\"type\":\"user\",\"cwd\":\"/r\",\"message\":{\"role\":\"user\",\"content\":\"add it\"}}\n";
        s += "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"w1\",\"content\":\"created\"}]},\"toolUseResult\":{\"type\":\"create\",\"filePath\":\"/r/a.go\",\"content\":\"package a\\n\"}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"w1\",\"name\":\"Write\",\"input\":{\"file_path\":\"/r/a.go\",\"content\":\"package a\\n\"}}]}}\n";
        s += "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"nope\",\"content\":\"x\"}]}}\n";
        let t = parse_str(&s);
        let call = &t.turns[0].tool_calls[0];
        assert_eq!(
            call.result.as_ref().map(|r| r.text.as_str()),
            Some("created")
        );
        assert_eq!(t.turns[0].file_changes.len(), 1, "{:?}", t.turns[0]);
        assert_eq!(t.turns[0].file_changes[0].path, "a.go");
        // A result whose call never comes is still reported as skipped, with its line.
        assert!(
            t.skipped
                .iter()
                .any(|s| s.line == 4 && s.reason.contains("unknown call nope")),
            "{:?}",
            t.skipped
        );
    }

    /// Claude Code's own "No response requested." after a meta prompt is no model's answer.
    #[test]
    fn synthetic_messages_are_no_turns() {
        let mut s = String::new();
        s += "{\"type\":\"user\",\"cwd\":\"/r\",\"message\":{\"role\":\"user\",\"content\":\"fix it\"}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"Reading.\"}]}}\n";
        s += "{\"type\":\"user\",\"isMeta\":true,\"message\":{\"role\":\"user\",\"content\":\"Continue from where you left off.\"}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"x\",\"model\":\"<synthetic>\",\"content\":[{\"type\":\"text\",\"text\":\"No response requested.\"}]}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"m2\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}]}}\n";
        let t = parse_str(&s);
        let texts: Vec<&str> = t.turns.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["Reading.", "Done."]);
        assert_eq!(t.model.as_deref(), Some("claude-x"));
    }

    /// A subagent's Write, relayed in `progress` records while the Task call runs, is a change
    /// of the turn that called Task; its failed edits and its other records are not.
    #[test]
    fn subagent_edits_belong_to_the_turn_that_started_it() {
        let rec = |body: &str| {
            format!(
                "{{\"type\":\"progress\",\"cwd\":\"/r\",\"parentToolUseID\":\"task1\",\"data\":{{\"type\":\"agent_progress\",\"message\":{body}}}}}\n"
            )
        };
        let mut s = String::new();
        s += "{\"type\":\"user\",\"cwd\":\"/r\",\"message\":{\"role\":\"user\",\"content\":\"add the helper\"}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"text\",\"text\":\"Delegating.\"},{\"type\":\"tool_use\",\"id\":\"task1\",\"name\":\"Task\",\"input\":{\"prompt\":\"write it\"}}]}}\n";
        s += &rec(
            "{\"type\":\"assistant\",\"message\":{\"id\":\"s1\",\"content\":[{\"type\":\"text\",\"text\":\"sub thinking\"},{\"type\":\"tool_use\",\"id\":\"w1\",\"name\":\"Write\",\"input\":{\"file_path\":\"/r/a.go\",\"content\":\"package a\\n\"}},{\"type\":\"tool_use\",\"id\":\"e1\",\"name\":\"Edit\",\"input\":{\"file_path\":\"/r/b.go\",\"old_string\":\"x\",\"new_string\":\"y\"}}]}}",
        );
        s += &rec(
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"w1\",\"content\":\"created\"},{\"type\":\"tool_result\",\"tool_use_id\":\"e1\",\"content\":\"no match\",\"is_error\":true}]}}",
        );
        s += "{\"type\":\"progress\",\"data\":{\"type\":\"hook_progress\"}}\n";
        s += "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"task1\",\"content\":\"done\"}]}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"m2\",\"content\":[{\"type\":\"text\",\"text\":\"All set.\"}]}}\n";
        let t = parse_str(&s);
        assert_eq!(t.turns.len(), 2, "{:?}", t.turns);
        let ch = &t.turns[0].file_changes;
        assert_eq!(ch.len(), 1, "{ch:?}");
        assert_eq!(ch[0].path, "a.go");
        assert_eq!(
            ch[0].edit,
            Edit::Write {
                content: "package a\n".into()
            }
        );
        assert_eq!(ch[0].tool_call, Some(0));
        assert!(!t.turns[0].text.contains("sub thinking"));
        assert!(t.turns[1].file_changes.is_empty());
        assert_eq!(t.skipped_records.get("subagent record"), Some(&2));
        assert_eq!(t.skipped_records.get("progress/hook_progress"), Some(&1));
    }

    /// Older logs put the subagent's records in the file, marked isSidechain.
    #[test]
    fn sidechain_edits_belong_to_the_open_turn() {
        let mut s = String::new();
        s += "{\"type\":\"user\",\"cwd\":\"/r\",\"message\":{\"role\":\"user\",\"content\":\"go\"}}\n";
        s += "{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"task1\",\"name\":\"Task\",\"input\":{}}]}}\n";
        s += "{\"type\":\"assistant\",\"isSidechain\":true,\"message\":{\"id\":\"s1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"e1\",\"name\":\"Edit\",\"input\":{\"file_path\":\"/r/b.go\",\"old_string\":\"x\",\"new_string\":\"y\"}}]}}\n";
        s += "{\"type\":\"user\",\"isSidechain\":true,\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"e1\",\"content\":\"ok\"}]},\"toolUseResult\":{\"filePath\":\"/r/b.go\",\"oldString\":\"x\",\"newString\":\"y\"}}\n";
        let t = parse_str(&s);
        assert_eq!(t.turns.len(), 1);
        assert_eq!(t.turns[0].file_changes.len(), 1);
        assert_eq!(t.turns[0].file_changes[0].path, "b.go");
    }
}
