//! mini-swe-agent trajectories: v1.x (`{"messages": [...], "info": ...}` with `extra.actions`
//! and `tool` observations) and the older bare message list (one fenced command per reply).
//! Edits are shell commands; heredoc writes (`cat > f << 'EOF'`) are replayable, `sed -i`
//! and the like are recorded as changes of unknown content.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult};
use super::{Builder, Format, Transcript, relative_path, value_text};
use crate::error::{Error, Result};

fn fence() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?s)```(?:mswea_bash_command|bash|sh)\s*\n(.*?)\n```").expect("valid regex")
    })
}

fn heredoc() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"(?m)^\s*(?:cd\s+\S+\s*&&\s*)?(?:cat|tee)\s*(?:(>>?)\s*(\S+)\s*)?<<-?\s*['"]?(\w+)['"]?\s*(?:(>>?)\s*(\S+))?\s*$"#)
            .expect("valid regex")
    })
}

fn sed_inplace() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // The script may be in single or double quotes (`sed -i "s/A = None/A = 1/" f`).
        Regex::new(r#"\bsed\s+-i\S*\s+(?:-e\s+)?(?:'[^']*'|"(?:[^"\\]|\\.)*"|\S+)\s+(\S+)"#)
            .expect("valid regex")
    })
}

/// File changes a shell command makes that we can see: heredoc writes and in-place seds.
pub(super) fn shell_changes(cmd: &str, cwd: Option<&str>) -> Vec<FileChange> {
    let mut out = Vec::new();
    let lines: Vec<&str> = cmd.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if let Some(c) = heredoc().captures(lines[i]) {
            let target = c
                .get(2)
                .or_else(|| c.get(5))
                .map(|m| m.as_str().to_string());
            let append = c
                .get(1)
                .or_else(|| c.get(4))
                .is_some_and(|m| m.as_str() == ">>");
            let delim = c[3].to_string();
            let mut body = String::new();
            i += 1;
            while i < lines.len() && lines[i].trim() != delim {
                body.push_str(lines[i]);
                body.push('\n');
                i += 1;
            }
            if let Some(t) = target {
                let path = relative_path(t.trim_matches(['"', '\'']), cwd);
                let edit = if append {
                    Edit::Opaque
                } else {
                    Edit::Write { content: body }
                };
                out.push(FileChange::new(path, edit));
            }
        } else {
            for c in sed_inplace().captures_iter(lines[i]) {
                let path = relative_path(c[1].trim_matches(['"', '\'']), cwd);
                out.push(FileChange::new(path, Edit::Opaque));
            }
        }
        i += 1;
    }
    out
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let doc: Value = serde_json::from_slice(bytes)
        .or_else(|_| serde_json::from_str(&String::from_utf8_lossy(bytes)))
        .map_err(|e| Error::input(format!("{name}:{}: not valid JSON: {e}", e.line())))?;
    let mut b = Builder::new("mini-swe-agent");
    let (messages, cwd) = match &doc {
        Value::Array(a) => (a.clone(), None),
        Value::Object(o) => (
            o.get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            doc.pointer("/info/config/environment/cwd")
                .and_then(Value::as_str)
                .map(str::to_string),
        ),
        _ => (Vec::new(), None),
    };
    let mut seen_task = false;
    for (i, m) in messages.iter().enumerate() {
        let src = SourceRef::event(format!("messages[{i}]"));
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content").map(value_text).unwrap_or_default();
        let ts = m
            .pointer("/extra/timestamp")
            .and_then(Value::as_f64)
            .map(|s| super::detect::iso_from_millis((s * 1000.0) as i64));
        match role {
            "system" => b.count("system prompt"),
            "user" if !seen_task => {
                seen_task = true;
                b.message("user", task_text(&content), ts, src);
            }
            "user" | "tool" => {
                // An observation: the result of the last turn's command.
                let text = m
                    .pointer("/extra/raw_output")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| content.clone());
                let failed = m
                    .pointer("/extra/returncode")
                    .and_then(Value::as_i64)
                    .or_else(|| returncode(&content))
                    .is_some_and(|c| c != 0);
                let id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let attached = match &id {
                    Some(id) => b.result(id, text.clone(), failed),
                    None => false,
                };
                if !attached {
                    attach_to_last_call(&mut b, text, failed, content.starts_with("<returncode>"));
                }
            }
            "assistant" => {
                if b.model.is_none() {
                    b.model = m
                        .pointer("/extra/response/model")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                let actions: Vec<(Option<String>, String)> =
                    match m.pointer("/extra/actions").and_then(Value::as_array) {
                        Some(a) => a
                            .iter()
                            .filter_map(|x| {
                                Some((
                                    x.get("tool_call_id")
                                        .and_then(Value::as_str)
                                        .map(str::to_string),
                                    x.get("command")?.as_str()?.to_string(),
                                ))
                            })
                            .collect(),
                        None => fence()
                            .captures_iter(&content)
                            .map(|c| (None, c[1].to_string()))
                            .collect(),
                    };
                let prose = fence().replace_all(&content, "").trim().to_string();
                let t = b.new_turn(ts.clone(), src.clone());
                Builder::push_text(t, &prose);
                t.reasoning_available = false;
                for (id, cmd) in actions {
                    let changes = shell_changes(&cmd, cwd.as_deref());
                    let ci = t.tool_calls.len();
                    t.tool_calls.push(ToolCall {
                        id: id.clone(),
                        name: "bash".into(),
                        arguments: serde_json::json!({ "command": cmd }),
                        result: None,
                    });
                    for c in changes {
                        t.file_changes.push(FileChange {
                            tool_call: Some(ci),
                            ..c
                        });
                    }
                }
                // register ids for tool messages
                let calls: Vec<(usize, Option<String>)> = b
                    .turn(ts, src)
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(k, c)| (k, c.id.clone()))
                    .collect();
                for (k, id) in calls {
                    if let Some(id) = id {
                        b.register_call(id, k);
                    }
                }
            }
            "exit" => b.count("exit"),
            other => b.count(&format!("{other} message")),
        }
    }
    b.finish(Format::MiniSweAgent, name)
}

fn returncode(content: &str) -> Option<i64> {
    let rest = content.strip_prefix("<returncode>")?;
    rest.split('<').next()?.trim().parse().ok()
}

fn attach_to_last_call(b: &mut Builder, text: String, failed: bool, is_observation: bool) {
    if let Some(t) = b.last_turn_mut()
        && let Some(call) = t.tool_calls.iter_mut().rev().find(|c| c.result.is_none())
    {
        call.result = Some(ToolResult {
            text,
            is_error: failed,
        });
        return;
    }
    if !is_observation {
        b.message("user", text, None, SourceRef::default());
    }
}

fn task_text(content: &str) -> String {
    for (start, end) in [
        (
            "Consider the following PR description:\n",
            "\n</pr_description>",
        ),
        (
            "Please solve this issue: ",
            "\n\nYou can execute bash commands",
        ),
    ] {
        if let Some((_, rest)) = content.split_once(start) {
            return rest.split(end).next().unwrap_or(rest).trim().to_string();
        }
    }
    content.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredocs_and_seds() {
        let c = shell_changes(
            "cat > ./app/a.py << 'EOF'\nx = 1\nEOF\npython app/a.py",
            Some("/testbed"),
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, "app/a.py");
        assert_eq!(
            c[0].edit,
            Edit::Write {
                content: "x = 1\n".into()
            }
        );
        let c = shell_changes("cat <<'EOF' > new.py\ny\nEOF", None);
        assert_eq!(c[0].path, "new.py");
        let c = shell_changes("sed -i 's/a/b/' tests/t.py", None);
        assert_eq!(
            (c[0].path.as_str(), &c[0].edit),
            ("tests/t.py", &Edit::Opaque)
        );
        // A double-quoted script with spaces is one argument (a real mini-swe-agent run).
        let c = shell_changes(
            "sed -i \"s/POLICY = None/POLICY = 'same-origin'/\" django/conf/global_settings.py",
            None,
        );
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].path, "django/conf/global_settings.py");
        let c = shell_changes(
            r#"sed -i "s/Default: \`\`None\`\`/x/" docs/ref/settings.txt"#,
            None,
        );
        assert_eq!(c[0].path, "docs/ref/settings.txt");
    }
}
