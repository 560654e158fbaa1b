//! Gemini CLI sessions: the older single JSON object (`{sessionId, messages: [...]}`) and the
//! newer append-only JSONL, replayed as the CLI does (`$set` merges metadata or checkpoints
//! the message list; `$rewindTo` drops a message and everything after it; a repeated id
//! replaces the earlier record in place).

use serde_json::Value;

use super::markdown::unified_diff_changes;
use super::turn::{Edit, FileChange, SourceRef, ToolCall};
use super::{Builder, Format, Transcript, value_text};
use crate::error::{Error, Result};

/// One message record with the line it came from (legacy files: its index).
struct Rec {
    value: Value,
    source: SourceRef,
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let text = String::from_utf8_lossy(bytes);
    let mut b = Builder::new("gemini-cli");
    let messages = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(doc)) if doc.contains_key("messages") => {
            b.session_id = doc
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
            doc.get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, value)| Rec {
                    source: SourceRef::event(
                        value
                            .get("id")
                            .and_then(Value::as_str)
                            .map_or_else(|| format!("messages[{i}]"), str::to_string),
                    ),
                    value,
                })
                .collect()
        }
        _ => replay_jsonl(&text, &mut b),
    };
    if messages.is_empty() && b.turn_count() == 0 {
        return Err(
            Error::input(format!("{name}: no Gemini CLI messages found"))
                .hint("check the file, or force another format with --from"),
        );
    }
    let root = project_root(&text, &messages);
    for rec in messages {
        message(&mut b, rec);
    }
    // Gemini CLI writes absolute paths; its `projectHash` is the SHA-256 of the project's
    // directory, so the directory that hashes to it is the one to make them relative to.
    if let Some(root) = root {
        b.map_paths(|p| super::relative_path(p, Some(&root)));
    }
    b.finish(Format::GeminiCli, name)
}

/// The project directory: the ancestor of an absolute path in the log whose SHA-256 is the
/// session's `projectHash`.
fn project_root(text: &str, messages: &[Rec]) -> Option<String> {
    use sha2::{Digest, Sha256};
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#""projectHash"\s*:\s*"([0-9a-f]{64})""#).expect("valid regex")
    });
    let hash = re.captures(text)?.get(1)?.as_str().to_string();
    let mut tried = std::collections::HashSet::new();
    for m in messages {
        for call in m
            .value
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(args) = call.get("args").and_then(Value::as_object) else {
                continue;
            };
            for v in args.values().filter_map(Value::as_str) {
                if !v.starts_with('/') && v.get(1..3).is_none_or(|s| s != ":\\") {
                    continue;
                }
                let mut p = std::path::Path::new(v);
                while let Some(parent) = p.parent() {
                    let d = parent.to_string_lossy().into_owned();
                    if d.is_empty() || !tried.insert(d.clone()) {
                        break;
                    }
                    let h: String = Sha256::digest(d.as_bytes())
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    if h == hash {
                        return Some(d);
                    }
                    p = parent;
                }
            }
        }
    }
    None
}

fn replay_jsonl(text: &str, b: &mut Builder) -> Vec<Rec> {
    let mut msgs: Vec<Rec> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i as u64 + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                b.skip(n, format!("not a Gemini CLI record: {e}"));
                continue;
            }
        };
        if let Some(target) = v.get("$rewindTo").and_then(Value::as_str) {
            match msgs.iter().position(|m| id_of(&m.value) == Some(target)) {
                Some(at) => msgs.truncate(at),
                None => msgs.clear(),
            }
            b.count("$rewindTo");
            continue;
        }
        if let Some(id) = v.get("id").and_then(Value::as_str).map(str::to_string) {
            let rec = Rec {
                value: v,
                source: SourceRef::line(n),
            };
            match msgs.iter().position(|m| id_of(&m.value) == Some(&id)) {
                Some(at) => msgs[at] = rec,
                None => msgs.push(rec),
            }
            continue;
        }
        if let Some(set) = v.get("$set").and_then(Value::as_object) {
            if let Some(list) = set.get("messages").and_then(Value::as_array) {
                msgs = list
                    .iter()
                    .map(|m| Rec {
                        value: m.clone(),
                        source: SourceRef::line(n),
                    })
                    .collect();
            }
            if let Some(s) = set.get("sessionId").and_then(Value::as_str) {
                b.session_id = Some(s.to_string());
            }
            b.count("$set");
            continue;
        }
        if v.get("sessionId").is_some() {
            b.session_id = v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(list) = v.get("messages").and_then(Value::as_array) {
                msgs.extend(list.iter().map(|m| Rec {
                    value: m.clone(),
                    source: SourceRef::line(n),
                }));
            }
            continue;
        }
        b.skip(n, "unknown Gemini CLI record");
    }
    msgs
}

fn id_of(v: &Value) -> Option<&str> {
    v.get("id").and_then(Value::as_str)
}

/// Text of a message's `content`: a string or Gemini parts (thought parts left out).
fn parts_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| !p.get("thought").and_then(Value::as_bool).unwrap_or(false))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            texts.join("")
        }
        Some(v) => value_text(v),
        None => String::new(),
    }
}

fn message(b: &mut Builder, rec: Rec) {
    let v = &rec.value;
    let ts = v
        .get("timestamp")
        .and_then(Value::as_str)
        .map(str::to_string);
    match v.get("type").and_then(Value::as_str).unwrap_or("") {
        "user" => {
            // Tool responses recorded as user messages belong to the calls, not the user.
            if let Some(Value::Array(parts)) = v.get("content")
                && !parts.is_empty()
                && parts.iter().all(|p| p.get("functionResponse").is_some())
            {
                for p in parts {
                    let fr = &p["functionResponse"];
                    let id = fr.get("id").and_then(Value::as_str).unwrap_or("");
                    let text = response_text(fr.get("response"));
                    b.result(id, text, false);
                }
                b.count("tool response record");
                return;
            }
            let text = v
                .get("displayContent")
                .map(|d| parts_text(Some(d)))
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| parts_text(v.get("content")));
            b.message("user", text, ts, rec.source);
        }
        "gemini" | "model" => match v.get("content").and_then(Value::as_str).and_then(step) {
            Some(body) => step_result(b, body, ts, rec.source),
            None => gemini_turn(b, v, ts, rec.source),
        },
        other => b.count(&format!(
            "{} message",
            if other.is_empty() { "untyped" } else { other }
        )),
    }
}

/// Antigravity's Gemini log keeps no tool calls: what each step did is a message of its own,
/// `Created At: …` / `Completed At: …` and then the step's output, after the model message
/// that made the call. The output, when it is one, without those two lines.
fn step(content: &str) -> Option<&str> {
    let rest = content.strip_prefix("Created At: ")?;
    let (_, rest) = rest.split_once('\n')?;
    let rest = rest.strip_prefix("Completed At: ")?;
    Some(rest.split_once('\n').map_or("", |(_, body)| body))
}

/// A step's output joins the turn that made the call, as the call it must have been: a file
/// created or changed (with the diff the log shows), a file read, a command run, a search.
fn step_result(b: &mut Builder, body: &str, ts: Option<String>, source: SourceRef) {
    let file_url = |s: &str| {
        let s = s.trim().trim_matches('`');
        s.strip_prefix("file://").unwrap_or(s).to_string()
    };
    let trimmed = body.trim_start();
    let mut change = None;
    let mut is_error = false;
    let (name, args) = if let Some(rest) = trimmed.strip_prefix("Created file ") {
        let path = file_url(rest.split(" with requested content").next().unwrap_or(rest));
        change = Some(FileChange::new(path.clone(), Edit::Opaque));
        ("write_to_file", serde_json::json!({ "path": path }))
    } else if let Some(rest) = trimmed.strip_prefix("The following changes were made by the ") {
        let (tool, rest) = rest.split_once(" tool to: ").unwrap_or(("edit", rest));
        let path = rest
            .split(". If relevant")
            .next()
            .unwrap_or(rest)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .trim_end_matches('.')
            .to_string();
        let diff = rest
            .split_once("[diff_block_start]")
            .map(|(_, d)| d.split("[diff_block_end]").next().unwrap_or(d))
            .map(|d| d.trim_start_matches('\n').to_string());
        change = Some(FileChange::new(
            path.clone(),
            match diff.filter(|d| d.contains("@@")) {
                Some(patch) => Edit::Patch { patch },
                None => Edit::Opaque,
            },
        ));
        // The log names the tool (`replace_file_content`): keep its name.
        (tool, serde_json::json!({ "path": path }))
    } else if let Some(rest) = trimmed.strip_prefix("File Path: ") {
        let path = file_url(rest.lines().next().unwrap_or(""));
        ("view_file", serde_json::json!({ "path": path }))
    } else if let Some(rest) = trimmed.strip_prefix("Task Description: ") {
        let what = rest.lines().next().unwrap_or("").trim();
        if what.starts_with("Timer:") {
            ("schedule", serde_json::json!({ "description": what }))
        } else {
            ("run_command", serde_json::json!({ "command": what }))
        }
    } else if trimmed.starts_with("The command completed")
        || trimmed.starts_with("The command failed")
    {
        is_error = trimmed.starts_with("The command failed");
        ("run_command", Value::Null)
    } else if let Some(rest) = trimmed.strip_prefix("The search for ") {
        let query = rest
            .split(" returned")
            .next()
            .unwrap_or(rest)
            .trim_matches('"');
        ("search_web", serde_json::json!({ "query": query }))
    } else if trimmed.starts_with("{\"File\":") || trimmed.starts_with("No results found") {
        ("grep_search", Value::Null)
    } else if trimmed.starts_with("{\"name\":") || trimmed.contains("\nSummary: This directory") {
        ("list_dir", Value::Null)
    } else {
        is_error = trimmed.starts_with("Encountered error");
        ("step", Value::Null)
    };
    let call = ToolCall {
        id: None,
        name: name.to_string(),
        arguments: args,
        result: Some(super::ToolResult {
            text: body.to_string(),
            is_error,
        }),
    };
    // The model message that made the call; a step with none before it is a turn of its own.
    let index = match b.turn_count() {
        0 => {
            b.new_turn(ts, source);
            0
        }
        n => n - 1,
    };
    let ci = b.call_at(index, call);
    if let Some(mut c) = change.filter(|_| !is_error) {
        c.tool_call = Some(ci);
        b.turn_at(index).file_changes.push(c);
    }
    b.count("step result");
}

fn response_text(r: Option<&Value>) -> String {
    match r {
        Some(Value::Object(o)) => o
            .get("output")
            .or_else(|| o.get("error"))
            .map(value_text)
            .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
        Some(v) => value_text(v),
        None => String::new(),
    }
}

fn gemini_turn(b: &mut Builder, v: &Value, ts: Option<String>, source: SourceRef) {
    if b.model.is_none() {
        b.model = v.get("model").and_then(Value::as_str).map(str::to_string);
    }
    let t = b.new_turn(ts.clone(), source.clone());
    Builder::push_text(t, &parts_text(v.get("content")));
    let thoughts: Vec<String> = v
        .get("thoughts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|th| {
            let s = |k: &str| {
                th.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim()
                    .to_string()
            };
            match (s("subject"), s("description")) {
                (sub, d) if sub.is_empty() => d,
                (sub, d) => format!("**{sub}** {d}"),
            }
        })
        .filter(|s| !s.is_empty())
        .collect();
    if !thoughts.is_empty() {
        Builder::push_reasoning(t, Some(&thoughts.join("\n\n")));
    } else {
        t.reasoning_available = false;
    }
    for call in v
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        let args = call.get("args").cloned().unwrap_or(Value::Null);
        let status = call
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("success");
        let result_text = call
            .get("result")
            .and_then(Value::as_array)
            .map(|rs| {
                rs.iter()
                    .map(|r| response_text(r.pointer("/functionResponse/response")))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .or_else(|| {
                call.get("resultDisplay")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let id = call.get("id").and_then(Value::as_str).map(str::to_string);
        let ci = b.call(
            ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: args.clone(),
                result: result_text.map(|text| super::ToolResult {
                    text,
                    is_error: status != "success",
                }),
            },
            ts.clone(),
            source.clone(),
        );
        if status != "success" {
            continue;
        }
        for mut c in changes(&name, &args, call.get("resultDisplay")) {
            c.tool_call = Some(ci);
            b.turn(ts.clone(), source.clone()).file_changes.push(c);
        }
    }
    b.close();
}

fn changes(name: &str, args: &Value, display: Option<&Value>) -> Vec<FileChange> {
    let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let Some(path) = s("file_path").or_else(|| s("path")) else {
        return Vec::new();
    };
    let path = path.trim_start_matches("./").to_string();
    let edit = match name {
        "write_file" => Edit::Write {
            content: s("content").unwrap_or_default(),
        },
        "replace" | "edit" => Edit::Replace {
            old: s("old_string").unwrap_or_default(),
            new: s("new_string").unwrap_or_default(),
            all: args
                .get("allow_multiple")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || args
                    .get("expected_replacements")
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n > 1),
        },
        _ => {
            // Other tools only when their display is a file diff.
            return display
                .and_then(|d| d.get("fileDiff"))
                .and_then(Value::as_str)
                .map(|d| {
                    unified_diff_changes(d)
                        .into_iter()
                        .map(|mut c| {
                            c.path = path.clone();
                            c
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
    };
    let before = display
        .and_then(|d| d.get("originalContent"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let after = display
        .and_then(|d| d.get("newContent"))
        .and_then(Value::as_str)
        .map(str::to_string);
    vec![FileChange {
        path,
        edit,
        before,
        after,
        tool_call: None,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_relative_to_the_hashed_project() {
        let j = r#"{"sessionId":"s","projectHash":"4c3b4937ddaa21c332cba088d92b4d242d3bc33a6e82ec6ed46c2bbb31262ed3","messages":[
{"id":"u","type":"user","content":"add docs"},
{"id":"g","type":"gemini","content":"Writing it.","toolCalls":[{"id":"c","name":"write_file","args":{"file_path":"/home/me/proj/docs/a.md","content":"x"},"status":"success"}]}]}"#;
        let t = parse(j.as_bytes(), "g.json").unwrap();
        assert_eq!(t.turns[0].file_changes[0].path, "docs/a.md");
    }

    #[test]
    fn antigravity_step_results_are_the_calls_of_the_turn_before() {
        let step = |body: &str| serde_json::json!({"type": "gemini", "content": format!("Created At: 2026-06-05T16:39:53Z\nCompleted At: 2026-06-05T16:39:58Z\n{body}")});
        let doc = serde_json::json!({"messages": [
            {"type": "user", "content": "<USER_REQUEST>\nlet only owners edit bookmarks\n</USER_REQUEST>"},
            {"type": "gemini", "content": "I will read the action, then fix it."},
            step("File Path: `file:///home/me/app/src/actions.ts`\nTotal Lines: 27"),
            step("The following changes were made by the replace_file_content tool to: /home/me/app/src/actions.ts. If relevant, proactively run terminal commands.\n[diff_block_start]\n@@ -1,1 +1,1 @@\n-  .eq('id', id)\n+  .eq('id', id).eq('user_id', user.id)\n[diff_block_end]"),
            step("Created file file:///home/me/app/supabase/policies.sql with requested content.\nIf relevant, run it."),
            {"type": "gemini", "content": "Now the build."},
            step("Task Description: npm run build\nStatus: done"),
            step("\n\t\t\t\tThe command failed with exit code 1.\n\t\t\t\tOutput:\nerror"),
        ]});
        let t = parse(doc.to_string().as_bytes(), "full.jsonl").unwrap();
        assert_eq!(t.turns.len(), 2, "{:?}", t.turns);
        let names: Vec<&str> = t.turns[0]
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["view_file", "replace_file_content", "write_to_file"]
        );
        assert_eq!(
            t.turns[0].tool_calls[0].arguments["path"],
            "/home/me/app/src/actions.ts"
        );
        let fc = &t.turns[0].file_changes;
        assert_eq!(fc.len(), 2);
        assert_eq!(fc[0].path, "/home/me/app/src/actions.ts");
        assert!(
            matches!(&fc[0].edit, Edit::Patch { patch } if patch.contains("+  .eq('id', id).eq('user_id', user.id)")),
            "{:?}",
            fc[0].edit
        );
        assert_eq!(
            (fc[1].path.as_str(), &fc[1].edit),
            ("/home/me/app/supabase/policies.sql", &Edit::Opaque)
        );
        let run = &t.turns[1].tool_calls;
        assert_eq!(run[0].arguments["command"], "npm run build");
        assert!(run[1].result.as_ref().unwrap().is_error);
        assert_eq!(
            t.turns[1].kind,
            crate::transcript::TurnKind::Verification,
            "{:?}",
            t.turns[1]
        );
    }

    #[test]
    fn jsonl_replay_set_rewind_and_upsert() {
        let j = r#"{"sessionId":"s1","projectHash":"ab","startTime":"t"}
{"id":"u1","timestamp":"t1","type":"user","content":[{"text":"fix bug"}]}
{"id":"g1","timestamp":"t2","type":"gemini","content":"first try","model":"gemini-3"}
{"id":"u2","timestamp":"t3","type":"user","content":"no, again"}
{"$rewindTo":"u2"}
{"id":"g1","timestamp":"t2","type":"gemini","content":"first try, completed","toolCalls":[{"id":"replace-1","name":"replace","args":{"file_path":"a.py","old_string":"x","new_string":"y"},"status":"success"}]}
{"$set":{"lastUpdated":"t9"}}
broken
"#;
        let t = parse(j.as_bytes(), "s.jsonl").unwrap();
        assert_eq!(t.session_id.as_deref(), Some("s1"));
        assert_eq!(t.turns.len(), 1);
        assert_eq!(t.turns[0].text, "first try, completed");
        assert_eq!(t.turns[0].file_changes[0].path, "a.py");
        assert_eq!(t.context.len(), 1);
        assert_eq!(t.skipped[0].line, 8);
    }
}
