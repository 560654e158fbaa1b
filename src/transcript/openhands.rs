//! OpenHands (V0) event-stream trajectories: a list of action/observation events (or
//! `{"trajectory": [...]}`). A turn is one model response: the actions sharing a
//! `model_response.id` (or `total_calls_in_response`); its text is the first action's thought.

use std::collections::HashMap;

use serde_json::Value;

use super::markdown::unified_diff_changes;
use super::turn::{Edit, FileChange, SourceRef, ToolCall};
use super::{Builder, Format, Transcript, relative_path, value_text};
use crate::error::{Error, Result};

/// Events that only keep books: never turns.
const BOOKKEEPING: &[&str] = &[
    "system",
    "recall",
    "condensation",
    "condensation_request",
    "change_agent_state",
    "null",
    "pause",
    "resume",
    "stop",
    "push",
    "reject",
    "loop_recovery",
];

/// The records of a V1 event stream (a JSON list, or one event per line), numbered.
fn v1_events(bytes: &[u8]) -> Option<Vec<(u64, Value)>> {
    if let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(bytes) {
        return items
            .first()
            .is_some_and(super::openhands_v1::is_event)
            .then(|| {
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (i as u64 + 1, v))
                    .collect()
            });
    }
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            out.push((i as u64 + 1, v));
        }
    }
    out.first()
        .is_some_and(|(_, v)| super::openhands_v1::is_event(v))
        .then_some(out)
}

const FINISH_PLACEHOLDER: &str = "All done! What's next on the agenda?";

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    // OpenHands V1 (software-agent-sdk) writes an event stream with `kind`s instead.
    if let Some(events) = v1_events(bytes) {
        return super::openhands_v1::parse(&events, name);
    }
    let doc: Value = serde_json::from_slice(bytes)
        .or_else(|_| serde_json::from_str(&String::from_utf8_lossy(bytes)))
        .map_err(|e| Error::input(format!("{name}:{}: not valid JSON: {e}", e.line())))?;
    let events = match &doc {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("trajectory")
            .or_else(|| o.get("history"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut r = Reader {
        b: Builder::new("openhands"),
        actions: HashMap::new(),
        response_id: None,
        calls_left: 0,
    };
    for (i, ev) in events.iter().enumerate() {
        if let Some(action) = ev.get("action").and_then(Value::as_str) {
            r.action(i, ev, action);
        } else if let Some(obs) = ev.get("observation").and_then(Value::as_str) {
            r.observation(ev, obs);
        } else {
            r.b.skip(i as u64 + 1, "event with neither action nor observation");
        }
    }
    r.b.finish(Format::Openhands, name)
}

/// The event stream read so far: what an action's observation and the next action need.
struct Reader {
    b: Builder,
    /// action id → (turn index, call index) for observations.
    actions: HashMap<i64, (usize, usize)>,
    /// The model response the last action came from.
    response_id: Option<String>,
    /// Calls the last response still has to come, when it says how many it made.
    calls_left: u64,
}

impl Reader {
    /// An action: the user's message, or the agent's turn (opened or continued) with its text,
    /// reasoning and tool call.
    fn action(&mut self, i: usize, ev: &Value, action: &str) {
        let b = &mut self.b;
        let id = ev.get("id").and_then(Value::as_i64).unwrap_or(i as i64);
        let src = SourceRef::event(id.to_string());
        let ts = ev
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        let source = ev.get("source").and_then(Value::as_str).unwrap_or("");
        let args = ev.get("args").cloned().unwrap_or(Value::Null);
        let arg = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if BOOKKEEPING.contains(&action) || source == "environment" {
            b.count(&format!("action/{action}"));
            return;
        }
        if source == "user" {
            if action == "message" {
                b.message("user", arg("content"), ts, src);
                self.response_id = None;
            } else {
                b.count(&format!("user action/{action}"));
            }
            return;
        }
        let meta = ev.get("tool_call_metadata");
        if b.model.is_none() {
            b.model = meta
                .and_then(|m| m.pointer("/model_response/model"))
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        self.open_turn(meta, &ts, &src);
        let b = &mut self.b;
        let t = b.turn(ts.clone(), src.clone());
        let text = match action {
            "message" => arg("content"),
            "finish" => {
                let f = arg("final_thought");
                if f.is_empty() { arg("thought") } else { f }
            }
            _ => arg("thought"),
        };
        if text.trim() != FINISH_PLACEHOLDER {
            Builder::push_text(t, &text);
        }
        if let Some(r) = meta
            .and_then(|m| m.pointer("/model_response/choices/0/message/reasoning_content"))
            .and_then(Value::as_str)
        {
            Builder::push_reasoning(t, Some(r));
        } else if t.reasoning.is_none() {
            t.reasoning_available = false;
        }
        if matches!(action, "message" | "think") {
            return;
        }
        let ci = b.call(tool_call(id, action, meta, &args), ts, src);
        self.actions.insert(id, (b.turn_count() - 1, ci));
    }

    /// A new turn unless the action comes from the same model response as the last one (the
    /// same response id, or calls the response said it made still to come).
    fn open_turn(&mut self, meta: Option<&Value>, ts: &Option<String>, src: &SourceRef) {
        let rid = meta
            .and_then(|m| m.pointer("/model_response/id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let same_response = match (&rid, &self.response_id) {
            (Some(a), Some(b)) => a == b,
            (None, _) => self.calls_left > 0,
            _ => false,
        };
        if !same_response || !self.b.is_open() {
            self.b.new_turn(ts.clone(), src.clone());
            self.calls_left = meta
                .and_then(|m| m.get("total_calls_in_response"))
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .saturating_sub(1);
        } else {
            self.calls_left = self.calls_left.saturating_sub(1);
        }
        self.response_id = rid;
    }

    /// An observation: its action's result and, for an edit, the file change.
    fn observation(&mut self, ev: &Value, obs: &str) {
        let b = &mut self.b;
        let Some(cause) = ev.get("cause").and_then(Value::as_i64) else {
            b.count(&format!("observation/{obs}"));
            return;
        };
        let Some(&(ti, ci)) = self.actions.get(&cause) else {
            b.count(&format!("observation/{obs}"));
            return;
        };
        let content = ev.get("content").map(value_text).unwrap_or_default();
        let failed = obs == "error" || ev.get("success").and_then(Value::as_bool) == Some(false);
        b.result(&cause.to_string(), content.clone(), failed);
        if obs == "edit" && !failed {
            for mut c in edit_changes(ev, &content, "/workspace") {
                c.tool_call = Some(ci);
                b.turn_at(ti).file_changes.push(c);
            }
        }
    }
}

/// An action's tool call, with the exact arguments the model sent when the response is kept,
/// else the action's own less its thought.
fn tool_call(id: i64, action: &str, meta: Option<&Value>, args: &Value) -> ToolCall {
    let fname = meta
        .and_then(|m| m.get("function_name"))
        .and_then(Value::as_str)
        .unwrap_or(action)
        .to_string();
    let call_id = meta
        .and_then(|m| m.get("tool_call_id"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let exact = call_id.as_ref().and_then(|cid| {
        meta?
            .pointer("/model_response/choices/0/message/tool_calls")?
            .as_array()?
            .iter()
            .find_map(|c| {
                (c.get("id").and_then(Value::as_str) == Some(cid.as_str()))
                    .then(|| c.pointer("/function/arguments"))
                    .flatten()
                    .and_then(Value::as_str)
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
            })
    });
    let arguments = exact.unwrap_or_else(|| strip_thought(args));
    ToolCall {
        id: Some(id.to_string()),
        name: fname,
        arguments,
        result: None,
    }
}

fn strip_thought(args: &Value) -> Value {
    match args {
        Value::Object(o) => {
            let mut o = o.clone();
            o.remove("thought");
            Value::Object(o)
        }
        other => other.clone(),
    }
}

/// The file change of an edit observation: its diff, else old/new contents.
fn edit_changes(ev: &Value, content: &str, workspace: &str) -> Vec<FileChange> {
    let extras = ev.get("extras").cloned().unwrap_or(Value::Null);
    let s = |k: &str| extras.get(k).and_then(Value::as_str).map(str::to_string);
    let Some(path) = s("path") else {
        return Vec::new();
    };
    let path = relative_path(&path, Some(workspace));
    let diff = s("diff")
        .filter(|d| !d.trim().is_empty())
        .or_else(|| content.starts_with("--- ").then(|| content.to_string()));
    let prev_exist = extras
        .get("prev_exist")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if !prev_exist && let Some(new) = s("new_content") {
        return vec![FileChange::new(path, Edit::Write { content: new })];
    }
    if let Some(d) = diff {
        let mut cs = unified_diff_changes(&d);
        for c in &mut cs {
            c.path = path.clone();
        }
        if !cs.is_empty() {
            return cs;
        }
    }
    match (s("old_content"), s("new_content")) {
        (Some(old), Some(new)) => vec![FileChange::new(
            path,
            Edit::Replace {
                old,
                new,
                all: false,
            },
        )],
        _ => vec![FileChange::new(path, Edit::Opaque)],
    }
}
