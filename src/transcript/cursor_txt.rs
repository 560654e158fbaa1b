//! Cursor's plain-text agent transcripts (`user:` / `assistant:` blocks): the user's text in
//! `<user_query>`, the agent's `[Thinking]` lines, and `[Tool call] Name` followed by two-space
//! indented `key: value` arguments whose values may run on over unindented lines until the
//! next marker; `[Tool result] Name` lines carry no payload. Every `assistant:` block is one
//! turn. `Write` and `StrReplace` calls are replayable file changes.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::turn::{Edit, FileChange, SourceRef, ToolCall};
use super::{Builder, Format, Transcript};
use crate::error::Result;

fn arg_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^  ([a-z_][a-zA-Z_]*): ?(.*)$").expect("valid regex"))
}

/// Whether a text is such a transcript: a `user:` or `assistant:` line first, and markers.
pub(super) fn looks_like(text: &str) -> bool {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    matches!(first.trim(), "user:" | "assistant:")
        && (text.contains("\n[Tool call] ")
            || text.contains("<user_query>")
            || text.contains("\nassistant:"))
}

/// What the reader is inside of.
enum In {
    Nothing,
    User,
    Text,
    /// An argument of the last tool call.
    Arg(String),
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let text = String::from_utf8_lossy(bytes);
    let mut b = Builder::new("cursor");
    let mut user = String::new();
    let mut user_line = 0u64;
    let mut state = In::Nothing;
    let mut call: Option<(String, Map<String, Value>)> = None;
    let finish_call = |b: &mut Builder, call: &mut Option<(String, Map<String, Value>)>, n: u64| {
        if let Some((name, args)) = call.take() {
            let args: Map<String, Value> = args
                .into_iter()
                .map(|(k, v)| {
                    let s = v.as_str().unwrap_or("").trim_end_matches('\n').to_string();
                    (k, Value::String(s))
                })
                .collect();
            let change = file_change(&name, &args);
            let t = b.turn(None, SourceRef::line(n));
            let ci = t.tool_calls.len();
            t.tool_calls.push(ToolCall {
                id: None,
                name,
                arguments: Value::Object(args),
                result: None,
            });
            if let Some(mut c) = change {
                c.tool_call = Some(ci);
                t.file_changes.push(c);
            }
        }
    };
    let flush_user = |b: &mut Builder, user: &mut String, line: u64| {
        let t = std::mem::take(user);
        let t = match (t.find("<user_query>"), t.find("</user_query>")) {
            (Some(a), Some(z)) if a < z => t[a + "<user_query>".len()..z].to_string(),
            _ => t,
        };
        if !t.trim().is_empty() {
            b.message("user", t.trim().to_string(), None, SourceRef::line(line));
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i as u64 + 1;
        let line = raw.trim_end_matches('\r');
        match line.trim_end() {
            "user:" => {
                finish_call(&mut b, &mut call, n);
                flush_user(&mut b, &mut user, user_line);
                b.close();
                user_line = n;
                state = In::User;
                continue;
            }
            "assistant:" => {
                finish_call(&mut b, &mut call, n);
                flush_user(&mut b, &mut user, user_line);
                b.new_turn(None, SourceRef::line(n));
                state = In::Text;
                continue;
            }
            _ => {}
        }
        if let Some(tool) = line.strip_prefix("[Tool call] ") {
            finish_call(&mut b, &mut call, n);
            call = Some((tool.trim().to_string(), Map::new()));
            state = In::Nothing;
            continue;
        }
        if line.starts_with("[Tool result] ") {
            finish_call(&mut b, &mut call, n);
            state = In::Nothing;
            continue;
        }
        match &mut state {
            In::User => {
                user.push_str(line);
                user.push('\n');
            }
            _ if call.is_some() => {
                let (_, args) = call.as_mut().expect("checked");
                if let Some(c) = arg_re().captures(line) {
                    args.insert(c[1].to_string(), Value::String(format!("{}\n", &c[2])));
                    state = In::Arg(c[1].to_string());
                } else if let In::Arg(k) = &state
                    && let Some(Value::String(v)) = args.get_mut(k)
                {
                    v.push_str(line);
                    v.push('\n');
                }
            }
            _ => {
                // The transcript does not mark where thinking ends: the `[Thinking]` line is
                // reasoning, what follows it is the message.
                let (thinking, rest) = match line.strip_prefix("[Thinking] ") {
                    Some(r) => (true, r),
                    None => (false, line),
                };
                if line.trim().is_empty() {
                    state = In::Text;
                    continue;
                }
                let t = b.turn(None, SourceRef::line(n));
                if thinking {
                    Builder::push_reasoning(t, Some(rest));
                } else {
                    Builder::push_text(t, rest);
                    state = In::Text;
                }
            }
        }
    }
    let end = text.lines().count() as u64;
    finish_call(&mut b, &mut call, end);
    flush_user(&mut b, &mut user, user_line);
    b.finish(Format::Cursor, name)
}

/// The file change a `Write`, `StrReplace` or `Delete` call makes.
fn file_change(name: &str, args: &Map<String, Value>) -> Option<FileChange> {
    let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let path = s("path").or_else(|| s("file_path"))?;
    let edit = match name {
        "Write" => Edit::Write {
            content: s("contents").or_else(|| s("content")).unwrap_or_default() + "\n",
        },
        "StrReplace" | "Edit" => Edit::Replace {
            old: s("old_string")?,
            new: s("new_string").unwrap_or_default(),
            all: s("replace_all").is_some_and(|v| v == "true"),
        },
        "Delete" | "DeleteFile" => Edit::Delete,
        "MultiEdit" | "EditNotebook" => Edit::Opaque,
        _ => return None,
    };
    Some(FileChange::new(path.replace('\\', "/"), edit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript() {
        let t = "user:\n<attached_files>\nx\n</attached_files>\n<user_query>\nguard the preview endpoint\n</user_query>\n\nassistant:\n[Thinking] The URL must be checked.\nLet me read the file.\n[Tool call] Read\n  path: /home/me/app/media/fetcher.py\n\n[Tool result] Read\n\nassistant:\nAdding the check.\n[Tool call] StrReplace\n  path: /home/me/app/media/fetcher.py\n  old_string: def f(url):\n  new_string: def f(url):\n    check(url)\n\n[Tool call] Write\n  path: /home/me/app/README.md\n  contents: # App\n\nIt fetches.\n\n[Tool result] StrReplace\n\n[Tool result] Write\n";
        assert!(looks_like(t));
        let tr = parse(t.as_bytes(), "t.txt").unwrap();
        assert_eq!(tr.context[0].text, "guard the preview endpoint");
        assert_eq!(tr.turns.len(), 2);
        assert_eq!(
            tr.turns[0].reasoning.as_deref(),
            Some("The URL must be checked.")
        );
        assert_eq!(tr.turns[0].text, "Let me read the file.");
        let c = &tr.turns[1].file_changes;
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].edit,
            Edit::Replace {
                old: "def f(url):".into(),
                new: "def f(url):\n    check(url)".into(),
                all: false
            }
        );
        assert_eq!(
            c[1].edit,
            Edit::Write {
                content: "# App\n\nIt fetches.\n".into()
            }
        );
        assert_eq!(c[1].path, "/home/me/app/README.md");
    }
}
