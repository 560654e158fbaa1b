//! Cursor agent logs: the CLI's `--output-format stream-json` events, and the stored
//! agent transcripts (`{"role": ..., "message": {"content": [...]}}` lines, thinking
//! redacted as `[REDACTED]`, no tool results).

use serde_json::Value;

use super::lines::Lines;
use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult};
use super::{Builder, Format, Transcript, relative_path, value_text};
use crate::error::Result;

pub(super) fn parse(mut lines: Lines, name: &str) -> Result<Transcript> {
    let mut b = Builder::new("cursor");
    let mut cwd: Option<String> = None;
    let mut reasoning = String::new();
    while let Some((n, parsed)) = lines.next_json::<Value>(name)? {
        let v: Value = match parsed {
            Ok(v) => v,
            Err(e) => {
                b.skip(n, format!("not a Cursor record: {e}"));
                continue;
            }
        };
        let src = SourceRef::line(n);
        let ts = v
            .get("timestamp_ms")
            .and_then(Value::as_i64)
            .map(crate::transcript::detect::iso_from_millis);
        if b.session_id.is_none() {
            b.session_id = v
                .get("session_id")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let kind = v.get("type").and_then(Value::as_str);
        let role = v.get("role").and_then(Value::as_str);
        match (kind, role) {
            (Some("system"), _) => {
                cwd = v
                    .get("cwd")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or(cwd);
                if let Some(m) = v.get("model").and_then(Value::as_str) {
                    b.model = Some(m.to_string());
                }
                b.count("system");
            }
            (Some("user"), _) | (None, Some("user")) => {
                let text = user_text(&value_text(
                    v.pointer("/message/content").unwrap_or(&Value::Null),
                ));
                b.message("user", text, ts, src);
            }
            (Some("thinking"), _) => {
                if let Some(t) = v.get("text").and_then(Value::as_str) {
                    reasoning.push_str(t);
                }
            }
            (Some("assistant"), _) | (None, Some("assistant")) => {
                let stored = kind.is_none();
                let t = b.new_turn(ts.clone(), src.clone());
                let content = v
                    .pointer("/message/content")
                    .cloned()
                    .unwrap_or(Value::Null);
                let mut redacted = false;
                for block in content.as_array().into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) == Some("text") {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        if text.contains("[REDACTED]") {
                            redacted = true;
                        }
                        Builder::push_text(t, text.replace("[REDACTED]", "").trim());
                    }
                }
                if !reasoning.is_empty() {
                    Builder::push_reasoning(t, Some(&reasoning));
                    reasoning.clear();
                } else if redacted || stored {
                    Builder::push_reasoning(t, None);
                }
                // Stored transcripts carry tool_use blocks inside the message.
                let mut k = 0;
                for block in content.as_array().into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                        continue;
                    }
                    k += 1;
                    let name = block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_string();
                    let input = block.get("input").cloned().unwrap_or(Value::Null);
                    let id = block
                        .get("id")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("{n}#{k}"));
                    let change = stored_change(&name, &input, cwd.as_deref());
                    let ci = b.call(
                        ToolCall {
                            id: Some(id),
                            name,
                            arguments: input,
                            result: None,
                        },
                        ts.clone(),
                        src.clone(),
                    );
                    if let Some(mut c) = change {
                        c.tool_call = Some(ci);
                        b.turn(ts.clone(), src.clone()).file_changes.push(c);
                    }
                }
            }
            (Some("tool_call"), _) => tool_call(&mut b, &v, ts, src, cwd.as_deref()),
            (Some("turn_ended"), _) => {
                b.close();
                b.count("turn_ended");
            }
            (Some("result"), _) => {
                b.close();
                b.count("result");
            }
            (Some(other), _) => b.count(other),
            (None, _) => b.skip(n, "record with neither type nor role"),
        }
    }
    b.finish(Format::Cursor, name)
}

/// Cursor wraps prompts: `<timestamp>…</timestamp>\n<user_query>\n…\n</user_query>`.
fn user_text(text: &str) -> String {
    if let (Some(a), Some(z)) = (text.find("<user_query>"), text.rfind("</user_query>"))
        && a < z
    {
        return text[a + "<user_query>".len()..z].trim().to_string();
    }
    text.trim().to_string()
}

/// The single `<kind>ToolCall` key of a stream-json `tool_call` (metadata keys skipped).
fn tool_kind(tc: &Value) -> Option<(&str, &Value)> {
    tc.as_object()?
        .iter()
        .find(|(k, _)| k.ends_with("ToolCall") || k.as_str() == "function")
        .map(|(k, v)| (k.as_str(), v))
}

fn tool_call(b: &mut Builder, v: &Value, ts: Option<String>, src: SourceRef, cwd: Option<&str>) {
    let id = v
        .get("call_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some((kind, body)) = v.get("tool_call").and_then(tool_kind) else {
        b.count("tool_call without a tool");
        return;
    };
    let name = if kind == "function" {
        body.get("name")
            .and_then(Value::as_str)
            .unwrap_or("function")
            .to_string()
    } else {
        kind.trim_end_matches("ToolCall").to_string()
    };
    let args = match body.get("args").or_else(|| body.get("arguments")) {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(a) => a.clone(),
        None => Value::Null,
    };
    match v.get("subtype").and_then(Value::as_str) {
        Some("completed") => {
            let result = body.get("result");
            let (ok, text) = match result
                .and_then(|r| r.as_object())
                .and_then(|o| o.iter().next())
            {
                Some((k, val)) => (k == "success", result_summary(val)),
                None => (true, String::new()),
            };
            if !b.result(&id, text.clone(), !ok) {
                let ci = b.call(
                    ToolCall {
                        id: Some(id.clone()),
                        name: name.clone(),
                        arguments: args.clone(),
                        result: Some(ToolResult {
                            text,
                            is_error: !ok,
                        }),
                    },
                    ts.clone(),
                    src.clone(),
                );
                let _ = ci;
            }
            if ok
                && let Some(c) =
                    stream_change(&name, &args, result.and_then(|r| r.get("success")), cwd)
            {
                b.change_for_call(Some(&id), c, ts, src);
            }
        }
        _ => {
            b.call(
                ToolCall {
                    id: Some(id),
                    name,
                    arguments: args,
                    result: None,
                },
                ts,
                src,
            );
        }
    }
}

fn result_summary(v: &Value) -> String {
    for k in ["stdout", "content", "message", "diffString", "reason"] {
        if let Some(s) = v.get(k).and_then(Value::as_str) {
            let mut out = s.to_string();
            if k == "stdout"
                && let Some(e) = v
                    .get("stderr")
                    .and_then(Value::as_str)
                    .filter(|e| !e.is_empty())
            {
                out.push('\n');
                out.push_str(e);
            }
            return out;
        }
    }
    v.to_string()
}

fn stream_change(
    name: &str,
    args: &Value,
    success: Option<&Value>,
    cwd: Option<&str>,
) -> Option<FileChange> {
    let s = |v: Option<&Value>, k: &str| {
        v.and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let path = s(success, "path").or_else(|| s(Some(args), "path"))?;
    let path = relative_path(&path, cwd);
    let edit = match name {
        "edit" | "write" => {
            if let Some(after) = s(success, "afterFullFileContent") {
                Edit::Write { content: after }
            } else if let Some(text) = s(Some(args), "fileText") {
                Edit::Write { content: text }
            } else {
                Edit::Opaque
            }
        }
        "delete" => Edit::Delete,
        _ => return None,
    };
    Some(FileChange {
        path,
        edit,
        before: s(success, "beforeFullFileContent"),
        after: None,
        tool_call: None,
    })
}

fn stored_change(name: &str, input: &Value, cwd: Option<&str>) -> Option<FileChange> {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let path = relative_path(&s("path").or_else(|| s("file_path"))?, cwd);
    let edit = match name {
        "Write" => Edit::Write {
            content: s("contents").or_else(|| s("content")).unwrap_or_default(),
        },
        "StrReplace" | "Edit" => Edit::Replace {
            old: s("old_string").unwrap_or_default(),
            new: s("new_string").unwrap_or_default(),
            all: input
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        "Delete" => Edit::Delete,
        _ => return None,
    };
    Some(FileChange::new(path, edit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Input;

    #[test]
    fn stored_transcript() {
        let j = "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"<timestamp>Sunday</timestamp>\\n<user_query>\\nfix the greeting\\n</user_query>\"}]}}\n{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Done.\\n\\n[REDACTED]\"},{\"type\":\"tool_use\",\"name\":\"StrReplace\",\"input\":{\"path\":\"/w/a.go\",\"old_string\":\"a\",\"new_string\":\"b\"}}]}}\n{\"type\":\"turn_ended\",\"status\":\"success\"}\n";
        let t = parse(
            Input::from_bytes("c.jsonl", j.as_bytes().to_vec()).lines(),
            "c.jsonl",
        )
        .unwrap();
        assert_eq!(t.context[0].text, "fix the greeting");
        assert_eq!(t.turns[0].text, "Done.");
        assert!(!t.turns[0].reasoning_available);
        assert!(t.turns[0].reasoning_redacted);
        assert_eq!(t.turns[0].file_changes[0].path, "/w/a.go");
    }

    #[test]
    fn stream_json() {
        let j = r#"{"type":"system","subtype":"init","cwd":"/tmp/t","session_id":"s","model":"Sonnet 4.6"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Create a file"}]},"session_id":"s"}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Creating it."}]},"session_id":"s","timestamp_ms":1774272397614}
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"editToolCall":{"args":{"path":"/tmp/t/x.txt","streamContent":"hi"}}},"session_id":"s"}
{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"editToolCall":{"args":{"path":"/tmp/t/x.txt"},"result":{"success":{"path":"/tmp/t/x.txt","afterFullFileContent":"hi","message":"Wrote"}}}},"session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"session_id":"s"}
"#;
        let t = parse(
            Input::from_bytes("c.jsonl", j.as_bytes().to_vec()).lines(),
            "c.jsonl",
        )
        .unwrap();
        assert_eq!(t.turns.len(), 1);
        assert_eq!(t.model.as_deref(), Some("Sonnet 4.6"));
        assert_eq!(
            t.turns[0].tool_calls[0].result.as_ref().unwrap().text,
            "Wrote"
        );
        assert_eq!(t.turns[0].file_changes[0].path, "x.txt");
        assert_eq!(
            t.turns[0].file_changes[0].edit,
            Edit::Write {
                content: "hi".into()
            }
        );
        assert_eq!(
            t.turns[0].timestamp.as_deref(),
            Some("2026-03-23T13:26:37.614Z")
        );
    }
}
