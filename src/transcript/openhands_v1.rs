//! OpenHands V1 (the software-agent-sdk): an event stream of `MessageEvent`, `ActionEvent` and
//! `ObservationEvent` records with a `kind`, as JSONL, a JSON list, or a conversation folder
//! of `events/event-NNNNN-<id>.json` files. A turn is one model response: the actions that
//! share an `llm_response_id`, or an agent message. File-editor actions are file changes.

use std::collections::HashMap;

use serde_json::Value;

use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult};
use super::{Builder, Format, Transcript};
use crate::error::Result;

/// Whether a JSON record is a V1 event.
pub(crate) fn is_event(v: &Value) -> bool {
    v.get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("Event") || k.ends_with("Observation"))
        && v.get("source").is_some()
}

/// The text of `llm_message.content` or an observation's `content` (a list of text parts).
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

pub(crate) fn parse(events: &[(u64, Value)], name: &str) -> Result<Transcript> {
    let mut b = Builder::new("openhands");
    let mut response: Option<String> = None;
    // tool_call_id → (turn index, call index)
    let mut calls: HashMap<String, (usize, usize)> = HashMap::new();
    for (n, ev) in events {
        let src = SourceRef::line(*n);
        let ts = ev
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        let kind = ev.get("kind").and_then(Value::as_str).unwrap_or("");
        let source = ev.get("source").and_then(Value::as_str).unwrap_or("");
        match kind {
            "MessageEvent" => {
                let msg = ev.get("llm_message");
                let text = content_text(msg.and_then(|m| m.get("content")));
                if source == "user" {
                    b.message("user", text, ts, src);
                    response = None;
                } else {
                    let t = b.new_turn(ts, src);
                    Builder::push_text(t, &text);
                    if let Some(r) = msg
                        .and_then(|m| m.get("reasoning_content"))
                        .and_then(Value::as_str)
                    {
                        Builder::push_reasoning(t, Some(r));
                    }
                    b.close();
                    response = None;
                }
            }
            "ActionEvent" => {
                let rid = ev
                    .get("llm_response_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if rid.is_none() || rid != response || !b.is_open() {
                    b.new_turn(ts.clone(), src.clone());
                    let t = b.last_turn_mut().expect("just made");
                    let thought = content_text(ev.get("thought"));
                    Builder::push_text(t, &thought);
                    if let Some(r) = ev.get("reasoning_content").and_then(Value::as_str) {
                        Builder::push_reasoning(t, Some(r));
                    }
                }
                response = rid;
                let action = ev.get("action").cloned().unwrap_or(Value::Null);
                let tool = ev
                    .get("tool_name")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| {
                        action
                            .get("kind")
                            .and_then(Value::as_str)
                            .unwrap_or("action")
                    })
                    .to_string();
                let arguments = ev
                    .pointer("/tool_call/arguments")
                    .and_then(Value::as_str)
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or_else(|| {
                        let mut a = action.clone();
                        if let Some(o) = a.as_object_mut() {
                            o.remove("kind");
                        }
                        a
                    });
                let id = ev
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let change = file_change(&action);
                let ti = b.turn_count() - 1;
                let ci = b.call_at(
                    ti,
                    ToolCall {
                        id: id.clone(),
                        name: tool,
                        arguments,
                        result: None,
                    },
                );
                if let Some(mut c) = change {
                    c.tool_call = Some(ci);
                    b.turn_at(ti).file_changes.push(c);
                }
                if let Some(id) = id {
                    calls.insert(id, (ti, ci));
                }
            }
            "ObservationEvent" | "AgentErrorEvent" | "UserRejectObservation" => {
                let id = ev.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                let obs = ev.get("observation");
                let text = match obs {
                    Some(o) => content_text(o.get("content")),
                    None => ev
                        .get("error")
                        .or_else(|| ev.get("rejection_reason"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                };
                let is_error = kind != "ObservationEvent"
                    || obs
                        .and_then(|o| o.get("is_error"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                match calls.get(id) {
                    Some(&(ti, ci)) => {
                        b.turn_at(ti).tool_calls[ci].result = Some(ToolResult { text, is_error });
                    }
                    // An observation of an action this stream does not hold.
                    None => b.count("observation without its action"),
                }
            }
            "" => b.skip(*n, "a record without a kind"),
            other => b.count(other),
        }
    }
    b.finish(Format::Openhands, name)
}

/// The change a file-editor action makes.
fn file_change(action: &Value) -> Option<FileChange> {
    let kind = action.get("kind").and_then(Value::as_str)?;
    if !(kind.contains("FileEditor") || kind.contains("StrReplaceEditor")) {
        return None;
    }
    let s = |k: &str| action.get(k).and_then(Value::as_str).map(str::to_string);
    let path = s("path")?;
    let edit = match s("command")?.as_str() {
        "create" => Edit::Write {
            content: s("file_text").unwrap_or_default(),
        },
        "str_replace" => Edit::Replace {
            old: s("old_str")?,
            new: s("new_str").unwrap_or_default(),
            all: false,
        },
        "insert" => {
            let at = action.get("insert_line").and_then(Value::as_u64)? as usize;
            let mut text = s("new_str").unwrap_or_default();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Edit::Lines {
                start: at + 1,
                end: at,
                text,
            }
        }
        "undo_edit" => Edit::Opaque,
        _ => return None,
    };
    Some(FileChange::new(path, edit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events() {
        let evs = vec![
            json!({"kind": "SystemPromptEvent", "source": "agent", "id": "0"}),
            json!({"kind": "MessageEvent", "source": "user", "id": "1", "timestamp": "2026-02-05T11:24:45.3", "llm_message": {"role": "user", "content": [{"type": "text", "text": "fix the ssrf"}]}}),
            json!({"kind": "ActionEvent", "source": "agent", "id": "2", "llm_response_id": "r1", "thought": [{"type": "text", "text": "I'll check the host."}], "tool_name": "file_editor", "tool_call_id": "c1", "tool_call": {"name": "file_editor", "arguments": "{\"command\":\"str_replace\",\"path\":\"/workspace/app.py\",\"old_str\":\"a\",\"new_str\":\"b\"}"}, "action": {"kind": "FileEditorAction", "command": "str_replace", "path": "/workspace/app.py", "old_str": "a", "new_str": "b"}}),
            json!({"kind": "ActionEvent", "source": "agent", "id": "3", "llm_response_id": "r1", "tool_name": "terminal", "tool_call_id": "c2", "action": {"kind": "TerminalAction", "command": "pytest -q"}}),
            json!({"kind": "ObservationEvent", "source": "environment", "id": "4", "tool_call_id": "c2", "observation": {"content": [{"type": "text", "text": "1 passed"}], "is_error": false}}),
            json!({"kind": "ObservationEvent", "source": "environment", "id": "5", "tool_call_id": "zz", "observation": {"content": []}}),
            json!({"kind": "MessageEvent", "source": "agent", "id": "6", "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}}),
        ];
        assert!(evs.iter().all(is_event));
        let numbered: Vec<(u64, Value)> = evs
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, v))
            .collect();
        let t = parse(&numbered, "e.jsonl").unwrap();
        assert_eq!(t.context[0].text, "fix the ssrf");
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.turns[0].tool_calls.len(), 2, "one response, two actions");
        assert_eq!(t.turns[0].file_changes[0].path, "/workspace/app.py");
        assert_eq!(
            t.turns[0].tool_calls[1].result.as_ref().unwrap().text,
            "1 passed"
        );
        assert_eq!(t.turns[0].tool_calls[0].arguments["command"], "str_replace");
        assert_eq!(t.turns[1].text, "Done.");
    }
}
