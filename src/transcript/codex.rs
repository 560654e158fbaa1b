//! OpenAI Codex CLI rollout JSONL (`{timestamp, type, payload}` per line). Content comes from
//! `response_item`s only (the `event_msg` copies would double it); prompts from
//! `event_msg/user_message`; file changes from `patch_apply_end`, else the `apply_patch` text.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::lines::Lines;
use super::markdown::unified_diff_changes;
use super::turn::{Edit, FileChange, SourceRef, ToolCall};
use super::{Builder, Format, Transcript, relative_path, value_text};
use crate::error::Result;

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    payload: Option<Value>,
    /// Old rollouts have no wrapper: the line is the item itself.
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
}

/// Injected context that arrives as a "user" message but is not the task.
const INJECTED: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<app-context>",
    "<collaboration_mode>",
];

struct State {
    b: Builder,
    cwd: Option<String>,
    saw_output: bool,
    /// call_id → (turn index, apply_patch input) for patches not yet confirmed.
    patches: HashMap<String, (usize, String)>,
    /// call_ids whose file changes came from patch_apply_end.
    applied: std::collections::HashSet<String>,
    has_user_events: bool,
    /// The open turn's model response ended (Codex reports its token usage once a response is
    /// complete): the next model item begins the next response, so the next turn.
    response_ended: bool,
    /// The log reports applications (patch_apply_end): a patch without one was not applied.
    saw_apply_end: bool,
    fallback_prompts: Vec<(String, Option<String>, u64, usize)>,
}

pub(super) fn parse(mut lines: Lines, name: &str) -> Result<Transcript> {
    let mut st = State {
        b: Builder::new("codex"),
        cwd: None,
        saw_output: false,
        patches: HashMap::new(),
        applied: Default::default(),
        has_user_events: false,
        response_ended: false,
        saw_apply_end: false,
        fallback_prompts: Vec::new(),
    };
    while let Some((n, parsed)) = lines.next_json::<Line>(name)? {
        let line: Line = match parsed {
            Ok(l) => l,
            Err(e) => {
                st.b.skip(n, format!("not a Codex record: {e}"));
                continue;
            }
        };
        record(&mut st, line, n);
    }
    // Patches whose application was never reported: take the patch text itself.
    let pending: Vec<(String, (usize, String))> = st.patches.drain().collect();
    for (id, (_, input)) in pending {
        if !st.applied.contains(&id) && !st.saw_apply_end {
            for c in apply_patch_changes(&input, st.cwd.as_deref()) {
                st.b.change_for_call(Some(&id), c, None, SourceRef::default());
            }
        }
    }
    if !st.has_user_events {
        // Old rollouts: prompts only as user response items (added in order of position).
        for (text, ts, n, before) in std::mem::take(&mut st.fallback_prompts) {
            st.b.insert_message(before, "user", text, ts, SourceRef::line(n));
        }
    }
    st.b.finish(Format::Codex, name)
}

fn record(st: &mut State, line: Line, n: u64) {
    let ts = line.timestamp.clone();
    let (kind, payload) = match (line.kind.as_deref(), line.payload) {
        (Some(k), Some(p)) => (k.to_string(), p),
        // Unwrapped old format: the line is a response item.
        (Some(k), None)
            if line.rest.contains_key("role")
                || line.rest.contains_key("call_id")
                || k == "reasoning" =>
        {
            let mut m = line.rest;
            m.insert("type".into(), Value::String(k.to_string()));
            ("response_item".to_string(), Value::Object(m))
        }
        _ => {
            st.b.count("record without payload");
            return;
        }
    };
    let ptype = payload
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let s = |k: &str| payload.get(k).and_then(Value::as_str).map(str::to_string);
    match kind.as_str() {
        "session_meta" => {
            st.b.session_id = s("id").or(st.b.session_id.take());
            if let Some(c) = s("cwd") {
                st.cwd = Some(c);
            }
        }
        "turn_context" => {
            if let Some(m) = s("model") {
                st.b.model = Some(m);
            }
            if let Some(c) = s("cwd") {
                st.cwd = Some(c);
            }
        }
        "compacted" => st.b.compaction(),
        "event_msg" => event(st, &ptype, &payload, ts, n),
        "response_item" => item(st, &ptype, &payload, ts, n),
        other => st.b.count(other),
    }
}

fn event(st: &mut State, ptype: &str, p: &Value, ts: Option<String>, n: u64) {
    match ptype {
        "user_message" => {
            st.has_user_events = true;
            let text = p
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string();
            st.b.message("user", text, ts, SourceRef::line(n));
            st.saw_output = false;
        }
        "patch_apply_end" => {
            st.saw_apply_end = true;
            let id = p
                .get("call_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let ok = p.get("success").and_then(Value::as_bool).unwrap_or(true);
            if !ok {
                st.applied.insert(id);
                return;
            }
            let Some(changes) = p.get("changes").and_then(Value::as_object) else {
                return;
            };
            let mut paths: Vec<&String> = changes.keys().collect();
            paths.sort();
            for path in paths {
                let c = &changes[path];
                let rel = relative_path(path, st.cwd.as_deref());
                let get = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
                let edit = match c.get("type").and_then(Value::as_str) {
                    Some("add") => Edit::Write {
                        content: get("content").unwrap_or_default(),
                    },
                    Some("delete") => Edit::Delete,
                    _ => match get("unified_diff") {
                        Some(d) if get("move_path").is_none() => Edit::Patch { patch: d },
                        _ => Edit::Opaque,
                    },
                };
                st.b.change_for_call(
                    Some(&id),
                    FileChange::new(rel, edit),
                    ts.clone(),
                    SourceRef::line(n),
                );
                if let Some(to) = get("move_path") {
                    let to = relative_path(&to, st.cwd.as_deref());
                    st.b.change_for_call(
                        Some(&id),
                        FileChange::new(to, Edit::Opaque),
                        ts.clone(),
                        SourceRef::line(n),
                    );
                }
            }
            st.applied.insert(id);
        }
        "context_compacted" => st.b.compaction(),
        // Emitted once a model response is complete (and at other moments, when no turn is
        // open, which then means nothing here).
        "token_count" => {
            if st.b.is_open() {
                st.response_ended = true;
            }
            st.b.count("event_msg/token_count");
        }
        "turn_aborted" | "task_complete" | "task_started" => {
            st.b.close();
            st.b.count(&format!("event_msg/{ptype}"));
        }
        other => st.b.count(&format!("event_msg/{other}")),
    }
}

/// A turn is one model response: its reasoning items, messages and tool calls together. A
/// response ends where its token usage is reported, or where tool output or the user's next
/// message comes back to the model (older rollouts report no usage).
fn start_model_item(st: &mut State, ts: Option<String>, n: u64) {
    if !st.b.is_open() || st.saw_output || st.response_ended {
        st.b.new_turn(ts, SourceRef::line(n));
    }
    st.saw_output = false;
    st.response_ended = false;
}

fn item(st: &mut State, ptype: &str, p: &Value, ts: Option<String>, n: u64) {
    match ptype {
        "message" => {
            let role = p.get("role").and_then(Value::as_str).unwrap_or("");
            let text = content_text(p.get("content"));
            if role == "assistant" {
                start_model_item(st, ts.clone(), n);
                let t = st.b.turn(ts, SourceRef::line(n));
                Builder::push_text(t, &text);
            } else if role == "user"
                && !INJECTED.iter().any(|i| text.trim_start().starts_with(i))
                && !st.has_user_events
            {
                let before = st.b.turn_count();
                st.fallback_prompts
                    .push((text.trim().to_string(), ts, n, before));
            } else {
                st.b.count(&format!("response_item/message/{role}"));
            }
        }
        "reasoning" => {
            start_model_item(st, ts.clone(), n);
            let summary = content_text(p.get("summary"));
            let content = content_text(p.get("content"));
            let text = [summary, content].join("\n\n");
            let t = st.b.turn(ts, SourceRef::line(n));
            Builder::push_reasoning(t, Some(text.trim()).filter(|s| !s.is_empty()));
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            start_model_item(st, ts.clone(), n);
            let id = p
                .get("call_id")
                .or_else(|| p.get("id"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let name = match (
                p.get("namespace").and_then(Value::as_str),
                p.get("name").and_then(Value::as_str),
            ) {
                (Some(ns), Some(nm)) => format!("{ns}{nm}"),
                (None, Some(nm)) => nm.to_string(),
                _ if ptype == "local_shell_call" => "local_shell".to_string(),
                _ => "unknown".to_string(),
            };
            let arguments = if ptype == "custom_tool_call" {
                p.get("input").cloned().unwrap_or(Value::Null)
            } else if ptype == "local_shell_call" {
                p.get("action").cloned().unwrap_or(Value::Null)
            } else {
                match p.get("arguments") {
                    Some(Value::String(s)) => {
                        serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
                    }
                    Some(v) => v.clone(),
                    None => Value::Null,
                }
            };
            // apply_patch: as a custom tool, a function with {input}, or a shell heredoc.
            let patch = patch_text(&name, &arguments);
            let ci = st.b.call(
                ToolCall {
                    id: id.clone(),
                    name,
                    arguments,
                    result: None,
                },
                ts,
                SourceRef::line(n),
            );
            let _ = ci;
            if let (Some(id), Some(patch)) = (id, patch) {
                let ti = st.b.turn_count() - 1;
                st.patches.insert(id, (ti, patch));
            }
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let id = p.get("call_id").and_then(Value::as_str).unwrap_or("");
            let (text, failed) = output_text(p.get("output"));
            let failed = failed
                || text
                    .trim_start()
                    .starts_with("apply_patch verification failed");
            if !st.b.result(id, text, failed) {
                st.b.skip(n, format!("tool output for unknown call {id}"));
            }
            if failed && let Some(_) = st.patches.remove(id) {
                st.applied.insert(id.to_string());
            }
            st.saw_output = true;
        }
        other => st.b.count(&format!("response_item/{other}")),
    }
}

fn content_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => value_text(v),
    }
}

/// The output text and whether it reports a failure. Wrapped outputs
/// (`{"output": ..., "metadata": {"exit_code": N}}`) are unwrapped.
fn output_text(v: Option<&Value>) -> (String, bool) {
    let raw = match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => value_text(other),
        None => String::new(),
    };
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&raw)
        && let Some(out) = o.get("output")
    {
        let code = o
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        return (value_text(out), code != 0);
    }
    let failed = raw
        .lines()
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .and_then(|c| c.trim().parse::<i64>().ok())
        .is_some_and(|c| c != 0);
    (raw, failed)
}

fn patch_text(name: &str, args: &Value) -> Option<String> {
    let text = match args {
        Value::String(s) => s.clone(),
        Value::Object(o) => o
            .get("input")
            .or_else(|| o.get("patch"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| super::classify::shell_command(name, args))?,
        _ => return None,
    };
    let start = text.find("*** Begin Patch")?;
    let end = text
        .find("*** End Patch")
        .map_or(text.len(), |e| e + "*** End Patch".len());
    (name.contains("apply_patch") || name.contains("shell") || name.contains("exec"))
        .then(|| text[start..end].to_string())
}

/// File changes of a Codex `*** Begin Patch` text, one per file.
pub(super) fn apply_patch_changes(patch: &str, cwd: Option<&str>) -> Vec<FileChange> {
    let mut out = Vec::new();
    let mut current: Option<(String, &str, String)> = None; // (path, op, body)
    let flush = |cur: Option<(String, &str, String)>, out: &mut Vec<FileChange>| {
        if let Some((path, op, body)) = cur {
            let edit = match op {
                "add" => Edit::Write {
                    content: body
                        .lines()
                        .map(|l| l.strip_prefix('+').unwrap_or(l))
                        .map(|l| format!("{l}\n"))
                        .collect(),
                },
                "delete" => Edit::Delete,
                "move" => Edit::Opaque,
                _ => Edit::Patch { patch: body },
            };
            out.push(FileChange::new(path, edit));
        }
    };
    for line in patch.lines() {
        let header = [
            ("*** Add File: ", "add"),
            ("*** Update File: ", "update"),
            ("*** Delete File: ", "delete"),
        ]
        .iter()
        .find_map(|(p, op)| {
            line.strip_prefix(p)
                .map(|rest| (rest.trim().to_string(), *op))
        });
        if let Some((path, op)) = header {
            flush(current.take(), &mut out);
            current = Some((relative_path(&path, cwd), op, String::new()));
            continue;
        }
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            if let Some((_, op, _)) = current.as_mut() {
                *op = "move";
            }
            out.push(FileChange::new(relative_path(to.trim(), cwd), Edit::Opaque));
            continue;
        }
        if line.starts_with("*** ") {
            continue;
        }
        if let Some((_, _, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(current, &mut out);
    // Patches in unified form (some agents emit `diff --git`) are split the usual way.
    if out.is_empty() {
        out = unified_diff_changes(patch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_patch_files() {
        let p = "*** Begin Patch\n*** Add File: /w/a.py\n+x = 1\n+y = 2\n*** Update File: /w/b.py\n@@ def f():\n-    pass\n+    return 1\n*** Delete File: /w/c.py\n*** End Patch\n";
        let c = apply_patch_changes(p, Some("/w"));
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].path, "a.py");
        assert_eq!(
            c[0].edit,
            Edit::Write {
                content: "x = 1\ny = 2\n".into()
            }
        );
        assert!(matches!(&c[1].edit, Edit::Patch { patch } if patch.contains("+    return 1")));
        assert_eq!(c[2].edit, Edit::Delete);
    }

    /// A patch Codex refused ("apply_patch verification failed", no patch_apply_end) changed
    /// nothing; the one it applied did.
    #[test]
    fn a_refused_patch_is_no_change() {
        let log = concat!(
            "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\",\"cwd\":\"/w\"}}\n",
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"add it\"}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"custom_tool_call\",\"name\":\"apply_patch\",\"call_id\":\"c1\",\"input\":\"*** Begin Patch\\n*** Add File: /w/a.py\\n+x = 1\\n*** End Patch\\n\"}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"custom_tool_call_output\",\"call_id\":\"c1\",\"output\":\"apply_patch verification failed: no such file\"}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"custom_tool_call\",\"name\":\"apply_patch\",\"call_id\":\"c2\",\"input\":\"*** Begin Patch\\n*** Add File: /w/a.py\\n+x = 2\\n*** End Patch\\n\"}}\n",
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"patch_apply_end\",\"call_id\":\"c2\",\"success\":true,\"changes\":{\"/w/a.py\":{\"type\":\"add\",\"content\":\"x = 2\\n\"}}}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"custom_tool_call_output\",\"call_id\":\"c2\",\"output\":\"Success\"}}\n",
        );
        let t = crate::transcript::parse(
            crate::transcript::Input::from_bytes("r.jsonl", log.as_bytes().to_vec()),
            Some(Format::Codex),
        )
        .unwrap();
        let changes: Vec<&FileChange> = t.turns.iter().flat_map(|t| &t.file_changes).collect();
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(
            changes[0].edit,
            Edit::Write {
                content: "x = 2\n".into()
            }
        );
        let refused = t
            .turns
            .iter()
            .flat_map(|t| &t.tool_calls)
            .find(|c| c.id.as_deref() == Some("c1"))
            .unwrap();
        assert!(refused.result.as_ref().unwrap().is_error);
    }

    fn turns_of(log: &str) -> Vec<crate::transcript::Turn> {
        crate::transcript::parse(
            crate::transcript::Input::from_bytes("r.jsonl", log.as_bytes().to_vec()),
            Some(Format::Codex),
        )
        .unwrap()
        .turns
    }

    /// One turn per model response: a second reasoning item inside a response does not start
    /// a turn, and a response that is only a tool call is a turn of its own.
    #[test]
    fn a_turn_is_one_model_response() {
        let r = |p: &str| format!("{{\"type\":\"response_item\",\"payload\":{p}}}\n");
        let e = |p: &str| format!("{{\"type\":\"event_msg\",\"payload\":{p}}}\n");
        let reasoning =
            r(r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"think"}]}"#);
        let call = |id: &str| {
            r(&format!(
                r#"{{"type":"function_call","name":"exec_command","call_id":"{id}","arguments":"{{\"cmd\":\"ls\"}}"}}"#
            ))
        };
        let output = |id: &str| {
            r(&format!(
                r#"{{"type":"function_call_output","call_id":"{id}","output":"ok"}}"#
            ))
        };
        let said = |t: &str| {
            r(&format!(
                r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{t}"}}]}}"#
            ))
        };
        let usage = e(r#"{"type":"token_count","info":null}"#);
        let log = [
            e(r#"{"type":"user_message","message":"fix it"}"#),
            usage.clone(),
            // response 1: reasoning, a message, more reasoning, two calls
            reasoning.clone(),
            said("I will look"),
            reasoning.clone(),
            call("a"),
            call("b"),
            usage.clone(),
            output("a"),
            output("b"),
            // response 2: only a tool call
            call("c"),
            usage.clone(),
            output("c"),
            // response 3: the answer
            reasoning.clone(),
            said("done"),
            usage,
        ]
        .concat();
        let turns = turns_of(&log);
        assert_eq!(turns.len(), 3, "{turns:?}");
        assert_eq!(turns[0].tool_calls.len(), 2);
        assert!(turns[0].text.contains("I will look"));
        assert_eq!(turns[1].tool_calls.len(), 1);
        assert!(turns[1].text.is_empty());
        assert_eq!(turns[2].text, "done");
        // Without usage reports (older rollouts), tool output still ends a response.
        let old = [
            e(r#"{"type":"user_message","message":"fix it"}"#),
            reasoning.clone(),
            call("a"),
            output("a"),
            call("b"),
            output("b"),
            reasoning,
            said("done"),
        ]
        .concat();
        assert_eq!(turns_of(&old).len(), 3);
    }

    #[test]
    fn outputs() {
        assert!(
            output_text(Some(&Value::String(
                "Process exited with code 1\nOutput:\nboom".into()
            )))
            .1
        );
        assert_eq!(
            output_text(Some(&Value::String(
                "{\"output\":\"Success\",\"metadata\":{\"exit_code\":0}}".into()
            ))),
            ("Success".into(), false)
        );
    }
}
