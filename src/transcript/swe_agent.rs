//! SWE-agent `.traj` files: `trajectory[]` steps of thought, action and observation. Edits are
//! the agent's own commands (`edit N:M … end_of_edit`, `edit 'search' 'replace'`, `insert`,
//! `create`, `str_replace_editor`); the file is the one the observation's `[File: …]` names.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult};
use super::{Builder, Format, Transcript, relative_path};
use crate::error::{Error, Result};

fn file_header() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[File: (.+?)\s*\((\d+) lines total\)\]").expect("valid regex"))
}

fn line_edit() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?s)^edit (\d+):(\d+)\n(.*?)\n?end_of_edit\s*$").expect("valid regex")
    })
}

/// SWE-agent's own commands (its tool bundles); any other action is a shell command.
const AGENT_TOOLS: &[&str] = &[
    "edit",
    "create",
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "search_dir",
    "search_file",
    "find_file",
    "insert",
    "append",
    "submit",
    "str_replace_editor",
    "filemap",
    "edit_linting",
    "exit_forfeit",
    "skip",
];

const EDIT_FAILED: &[&str] = &[
    "Your proposed edit has introduced new syntax error",
    "Your changes have NOT been applied",
    "No replacement was performed",
    "did not appear verbatim",
];

/// Splits shell-quoted words ('…', "…" with escapes, bare words).
pub(super) fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                cur.push(e);
                            }
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let doc: Value = serde_json::from_slice(bytes)
        .or_else(|_| serde_json::from_str(&String::from_utf8_lossy(bytes)))
        .map_err(|e| Error::input(format!("{name}:{}: not valid JSON: {e}", e.line())))?;
    let steps = doc
        .get("trajectory")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut b = Builder::new("swe-agent");
    if let Some(task) = task_text(&doc) {
        b.message("user", task, None, SourceRef::event("problem_statement"));
    }
    // Structured arguments of the k-th assistant message, when the history has them.
    let structured: Vec<Option<(String, Value)>> = doc
        .get("history")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map(|m| {
            let f = m.pointer("/tool_calls/0/function")?;
            let name = f.get("name")?.as_str()?.to_string();
            let args = match f.get("arguments")? {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
                v => v.clone(),
            };
            Some((name, args))
        })
        .collect();
    let mut open_file: Option<String> = None;
    let mut working_dir: Option<String> = None;
    for (k, step) in steps.iter().enumerate() {
        let s = |key: &str| {
            step.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if let Some(wd) = state_of(step).and_then(|st| {
            st.get("working_dir")
                .and_then(Value::as_str)
                .map(str::to_string)
        }) {
            working_dir = Some(wd);
        }
        let src = SourceRef::event(format!("trajectory[{k}]"));
        let action = s("action");
        let observation = s("observation").replace("\r\n", "\n");
        let (tool, args) = match structured.get(k).cloned().flatten() {
            Some((n, a)) => (n, a),
            None => {
                // The action's first word names a tool of SWE-agent's own, else the action is a
                // shell command (`cd /testbed && python reproduce.py`).
                let first = action.split_whitespace().next().unwrap_or("").to_string();
                (
                    if AGENT_TOOLS.contains(&first.as_str()) {
                        first
                    } else {
                        "bash".into()
                    },
                    Value::String(action.trim_end().to_string()),
                )
            }
        };
        let t = b.new_turn(None, src.clone());
        Builder::push_text(t, &s("thought"));
        t.reasoning_available = false;
        let failed = EDIT_FAILED.iter().any(|m| observation.contains(m));
        // The file the observation shows after the command; else the one open before it.
        if let Some(c) = file_header().captures_iter(&observation).last() {
            open_file = Some(c[1].trim().to_string());
        }
        if action.starts_with("create ") || action.starts_with("open ") {
            let words = shell_words(&action);
            if let Some(p) = words.get(1)
                && (action.starts_with("create ") || open_file.is_none())
            {
                open_file = Some(p.clone());
            }
        }
        let change = if failed {
            None
        } else {
            change_of(
                &action,
                &tool,
                &args,
                open_file.as_deref(),
                working_dir.as_deref(),
            )
        };
        t.tool_calls.push(ToolCall {
            id: None,
            name: tool,
            arguments: args,
            result: Some(ToolResult {
                text: observation,
                is_error: failed,
            }),
        });
        if let Some(c) = change {
            t.file_changes.push(FileChange {
                tool_call: Some(0),
                ..c
            });
        }
        b.close();
    }
    b.finish(Format::SweAgent, name)
}

fn state_of(step: &Value) -> Option<Value> {
    match step.get("state")? {
        Value::String(s) => serde_json::from_str(s.trim()).ok(),
        v @ Value::Object(_) => Some(v.clone()),
        _ => None,
    }
}

fn task_text(doc: &Value) -> Option<String> {
    if let Some(t) = doc
        .pointer("/replay_config/problem_statement/text")
        .and_then(Value::as_str)
    {
        return Some(t.to_string());
    }
    let first_user = doc.get("history")?.as_array()?.iter().find(|m| {
        m.get("role").and_then(Value::as_str) == Some("user")
            && !m.get("is_demo").and_then(Value::as_bool).unwrap_or(false)
    })?;
    let text = super::value_text(first_user.get("content")?);
    let body = match text.split_once("ISSUE:\n") {
        Some((_, rest)) => rest,
        None => &text,
    };
    Some(
        body.split("\n\nINSTRUCTIONS:")
            .next()
            .unwrap_or(body)
            .trim()
            .to_string(),
    )
}

/// The file change an action made, if it is an edit: from the tool call's arguments when
/// structured, else from the command text.
fn change_of(
    action: &str,
    tool: &str,
    args: &Value,
    open: Option<&str>,
    wd: Option<&str>,
) -> Option<FileChange> {
    let files = Files { open, wd };
    let mk = |path: String, edit: Edit| Some(FileChange::new(path, edit));
    let a = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    // Structured tool calls first; an action string under the tool's name (`str_replace_editor
    // create /r/a.py --file_text …`) is read as the command text below.
    match tool {
        "str_replace_editor" if args.is_object() => editor_args(args, files),
        "edit" if args.get("search").is_some() => mk(
            files.open()?,
            Edit::Replace {
                old: a("search")?,
                new: a("replace").unwrap_or_default(),
                all: args
                    .get("replace_all")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
        ),
        "create" if args.get("filename").is_some() => mk(
            files.rel(&a("filename")?),
            Edit::Write {
                content: String::new(),
            },
        ),
        "insert" if args.get("text").is_some() => match args.get("line").and_then(Value::as_u64) {
            Some(l) => mk(
                files.open()?,
                Edit::Lines {
                    start: (l as usize).saturating_add(1),
                    end: l as usize,
                    text: a("text")?,
                },
            ),
            None => mk(files.open()?, Edit::Opaque),
        },
        _ => command_change(action, files),
    }
}

/// Where an edit's file is: the one the last observation showed open, and the directory the
/// paths are relative to.
#[derive(Clone, Copy)]
struct Files<'a> {
    open: Option<&'a str>,
    wd: Option<&'a str>,
}

impl Files<'_> {
    /// A path as the repository names it.
    fn rel(&self, p: &str) -> String {
        relative_path(p, self.wd)
    }

    /// The open file, for the commands that edit it; none open, no change.
    fn open(&self) -> Option<String> {
        Some(self.rel(self.open?))
    }
}

/// `str_replace_editor` called with JSON arguments.
fn editor_args(args: &Value, files: Files) -> Option<FileChange> {
    let a = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let path = files.rel(&a("path")?);
    editor_change(&a("command")?, path, |k| match k {
        // A line number is a JSON number.
        "insert_line" => args.get(k).and_then(Value::as_u64).map(|n| n.to_string()),
        _ => a(k),
    })
}

/// The change one `str_replace_editor` command makes, its arguments by name (`file_text`,
/// `old_str`, `new_str`, `insert_line`) however they were given.
fn editor_change(
    command: &str,
    path: String,
    arg: impl Fn(&str) -> Option<String>,
) -> Option<FileChange> {
    let edit = match command {
        "create" => Edit::Write {
            content: arg("file_text").unwrap_or_default(),
        },
        "str_replace" => Edit::Replace {
            old: arg("old_str")?,
            new: arg("new_str").unwrap_or_default(),
            all: false,
        },
        "insert" => {
            let line: usize = arg("insert_line")?.parse().ok()?;
            Edit::Lines {
                start: line.saturating_add(1),
                end: line,
                text: arg("new_str").unwrap_or_default(),
            }
        }
        _ => return None,
    };
    Some(FileChange::new(path, edit))
}

/// The change of an edit given as command text: `edit N:M … end_of_edit`, or the tools'
/// shell-quoted commands.
fn command_change(action: &str, files: Files) -> Option<FileChange> {
    let mk = |path: String, edit: Edit| Some(FileChange::new(path, edit));
    if let Some(c) = line_edit().captures(action.trim_end()) {
        let start: usize = c[1].parse().ok()?;
        let end: usize = c[2].parse().ok()?;
        return mk(
            files.open()?,
            Edit::Lines {
                start,
                end,
                text: c[3].to_string(),
            },
        );
    }
    let words = shell_words(action);
    match words.first().map(String::as_str) {
        Some("edit") if words.len() >= 3 => mk(
            files.open()?,
            Edit::Replace {
                old: words[1].clone(),
                new: words[2].clone(),
                all: words.get(3).is_some_and(|w| w == "True"),
            },
        ),
        Some("create") if words.len() >= 2 => mk(
            files.rel(&words[1]),
            Edit::Write {
                content: String::new(),
            },
        ),
        Some("insert") if words.len() >= 2 => {
            match words.get(2).and_then(|l| l.parse::<usize>().ok()) {
                Some(l) => mk(
                    files.open()?,
                    Edit::Lines {
                        start: l.saturating_add(1),
                        end: l,
                        text: words[1].clone(),
                    },
                ),
                None => mk(files.open()?, Edit::Opaque),
            }
        }
        Some("str_replace_editor") => editor_words(&words, files),
        _ => None,
    }
}

/// `str_replace_editor COMMAND PATH --flag value …` as command text.
fn editor_words(words: &[String], files: Files) -> Option<FileChange> {
    let cmd = words.get(1)?;
    let path = files.rel(words.get(2)?);
    editor_change(cmd, path, |name| {
        let f = format!("--{name}");
        words
            .iter()
            .position(|w| *w == f)
            .and_then(|i| words.get(i + 1))
            .cloned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_edits() {
        assert_eq!(
            shell_words("edit 'a b' \"c\\\"d\" True"),
            ["edit", "a b", "c\"d", "True"]
        );
        let c = change_of(
            "edit 3:4\n    x = 1\nend_of_edit\n",
            "edit",
            &Value::Null,
            Some("/repo/a.py"),
            Some("/repo"),
        )
        .unwrap();
        assert_eq!(c.path, "a.py");
        assert_eq!(
            c.edit,
            Edit::Lines {
                start: 3,
                end: 4,
                text: "    x = 1".into()
            }
        );
        let c = change_of(
            "edit 'x = 1' 'x = 2'",
            "edit",
            &Value::Null,
            Some("a.py"),
            None,
        )
        .unwrap();
        assert_eq!(
            c.edit,
            Edit::Replace {
                old: "x = 1".into(),
                new: "x = 2".into(),
                all: false
            }
        );
        // The action string under the tool's name, as newer trajectories keep it.
        let action = "str_replace_editor str_replace /r/t.py   --old_str 'a = 1' --new_str 'a = 2'";
        let c = change_of(
            action,
            "str_replace_editor",
            &Value::String(action.into()),
            None,
            Some("/r"),
        )
        .unwrap();
        assert_eq!(
            (c.path.as_str(), &c.edit),
            (
                "t.py",
                &Edit::Replace {
                    old: "a = 1".into(),
                    new: "a = 2".into(),
                    all: false
                }
            )
        );
        let c = change_of(
            "",
            "str_replace_editor",
            &serde_json::json!({"command":"create","path":"/r/n.py","file_text":"y\n"}),
            None,
            Some("/r"),
        )
        .unwrap();
        assert_eq!(
            (c.path.as_str(), &c.edit),
            (
                "n.py",
                &Edit::Write {
                    content: "y\n".into()
                }
            )
        );
    }
}
