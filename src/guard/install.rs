//! `git sage guard install|uninstall`: the agent's project-level hook configuration, with our
//! one entry added. These files are JSON without comments, so there are no markers: our entry
//! is known by its command, and the file as it was is kept in the git directory so that
//! uninstalling restores it byte for byte (docs/guard.md#install-and-uninstall).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::hook::Agent;
use super::splice;
use crate::error::{Error, Result};

/// The command every installed entry runs; an entry whose command starts with it is ours.
pub(crate) const COMMAND: &str = "git sage guard check";

/// The configuration file of `agent`, relative to the repository root.
pub(crate) fn config_file(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => ".claude/settings.json",
        Agent::Codex => ".codex/hooks.json",
        Agent::Gemini => ".gemini/settings.json",
        Agent::Cursor => ".cursor/hooks.json",
    }
}

/// Our entry, in the agent's documented shape: the event before a tool call, matched to its
/// file-writing tools.
fn entry(agent: Agent) -> (&'static str, Value) {
    let command = format!("{COMMAND} --agent {}", agent.name());
    match agent {
        Agent::ClaudeCode => (
            "PreToolUse",
            json!({"matcher": "Write|Edit|MultiEdit|NotebookEdit",
                   "hooks": [{"type": "command", "command": command, "timeout": 30}]}),
        ),
        Agent::Codex => (
            "PreToolUse",
            json!({"matcher": "apply_patch|Edit|Write",
                   "hooks": [{"type": "command", "command": command, "timeout": 30}]}),
        ),
        // Gemini's matcher is an unanchored regex, and its timeout is in milliseconds.
        Agent::Gemini => (
            "BeforeTool",
            json!({"matcher": "^(write_file|replace)$",
                   "hooks": [{"type": "command", "name": "git-sage-guard", "command": command, "timeout": 30000}]}),
        ),
        Agent::Cursor => (
            "preToolUse",
            json!({"command": command, "matcher": "Write|Edit|Delete", "timeout": 30}),
        ),
    }
}

/// Whether a hook entry (a matcher group, or Cursor's flat entry) runs our command.
fn is_ours(v: &Value) -> bool {
    let runs = |h: &Value| {
        h.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| c.trim_start().starts_with(COMMAND))
    };
    runs(v)
        || v.get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hs| hs.iter().any(runs))
}

/// `text` (the file, or `None` when absent) with our entry in it; `None` when it is there.
/// An existing file is edited as text: our entry is spliced in, every other byte stays.
pub(crate) fn with_entry(agent: Agent, text: Option<&str>, shown: &str) -> Result<Option<String>> {
    let doc = checked(agent, text, shown)?;
    let (event, ours) = entry(agent);
    if doc["hooks"][event]
        .as_array()
        .is_some_and(|l| l.iter().any(is_ours))
    {
        return Ok(None);
    }
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        let mut doc = json!({});
        if agent == Agent::Cursor {
            doc["version"] = json!(1);
        }
        doc["hooks"] = json!({ event: [ours] });
        return Ok(Some(pretty(&doc)));
    };
    let unreadable = || {
        Error::input(format!("{shown}: cannot be edited in place"))
            .hint("fix the file, or move it aside, then install again")
    };
    let mut t = text.to_string();
    let top = splice::top(&t);
    let last = |t: &str, open: usize, key: &str| {
        splice::members(t, open).and_then(|m| m.into_iter().rev().find(|m| m.key == key))
    };
    if agent == Agent::Cursor && last(&t, top, "version").is_none() {
        t = splice::add_member(&t, top, "version", &json!(1)).ok_or_else(unreadable)?;
    }
    t = match last(&t, top, "hooks") {
        None => splice::add_member(&t, top, "hooks", &json!({ event: [ours] })),
        Some(h) => match last(&t, h.value.0, event) {
            None => splice::add_member(&t, h.value.0, event, &json!([ours])),
            Some(e) => splice::add_element(&t, e.value.0, &ours),
        },
    }
    .ok_or_else(unreadable)?;
    Ok(Some(t))
}

/// The file as JSON, with the shape our entry needs (an object, `hooks` an object, the event a
/// list), or one line naming what is wrong.
fn checked(agent: Agent, text: Option<&str>, shown: &str) -> Result<Value> {
    let doc: Value = match text {
        Some(t) if !t.trim().is_empty() => serde_json::from_str(t).map_err(|e| {
            Error::input(format!("{shown}:{}: not valid JSON: {e}", e.line()))
                .hint("fix the file, or move it aside, then install again")
        })?,
        _ => json!({}),
    };
    if !doc.is_object() {
        return Err(Error::input(format!("{shown}: not a JSON object")));
    }
    match doc.get("hooks") {
        Some(h) if !h.is_object() => {
            return Err(Error::input(format!("{shown}: `hooks` is not an object")));
        }
        _ => {}
    }
    let (event, _) = entry(agent);
    if doc["hooks"].get(event).is_some_and(|l| !l.is_array()) {
        return Err(Error::input(format!(
            "{shown}: `hooks.{event}` is not a list"
        )));
    }
    Ok(doc)
}

/// `text` without our hooks — only ours: a user's hook in the same matcher group stays, and
/// the group goes only when nothing else is left in it — and without the list and object
/// only they needed. `None` when the guard is not in the file (nothing is rewritten).
pub(crate) fn without_entry(agent: Agent, text: &str, shown: &str) -> Result<Option<String>> {
    let doc = checked(agent, Some(text), shown)?;
    let (event, _) = entry(agent);
    if !doc["hooks"][event]
        .as_array()
        .is_some_and(|l| l.iter().any(is_ours))
    {
        return Ok(None);
    }
    let unreadable = || Error::input(format!("{shown}: cannot be edited in place"));
    let mut t = text.to_string();
    let last = |t: &str, open: usize, key: &str| {
        splice::members(t, open).and_then(|m| m.into_iter().rev().find(|m| m.key == key))
    };
    let member_spans = |t: &str, open: usize| -> Option<Vec<(usize, usize)>> {
        Some(
            splice::members(t, open)?
                .iter()
                .map(|m| (m.key_start, m.value.1))
                .collect(),
        )
    };
    // One removal at a time, the text skimmed again after each.
    loop {
        let top = splice::top(&t);
        let hooks = last(&t, top, "hooks").ok_or_else(unreadable)?;
        let list = last(&t, hooks.value.0, event).ok_or_else(unreadable)?;
        let items = splice::elements(&t, list.value.0).ok_or_else(unreadable)?;
        let runs_ours = |h: &Value| {
            h.get("command")
                .and_then(Value::as_str)
                .is_some_and(|c| c.trim_start().starts_with(COMMAND))
        };
        let mut next = None;
        for (k, &(a, b)) in items.iter().enumerate() {
            let v: Value = serde_json::from_str(&t[a..b]).map_err(|_| unreadable())?;
            if !is_ours(&v) {
                continue;
            }
            let inner = v.get("hooks").and_then(Value::as_array);
            let mixed = inner.is_some_and(|hs| hs.iter().any(|h| !runs_ours(h)));
            next = Some(if mixed {
                // Ours inside a group the user shares: only our hook goes.
                let group = last(&t, a, "hooks").ok_or_else(unreadable)?;
                let hs = splice::elements(&t, group.value.0).ok_or_else(unreadable)?;
                let i = inner
                    .and_then(|hs| hs.iter().position(runs_ours))
                    .ok_or_else(unreadable)?;
                splice::remove_sibling(&t, &hs, i)
            } else {
                splice::remove_sibling(&t, &items, k)
            });
            break;
        }
        match next {
            Some(n) => t = n,
            None => break,
        }
    }
    // The list, then `hooks`, when nothing of the user's is left in them.
    let top = splice::top(&t);
    if let Some(hooks) = last(&t, top, "hooks")
        && let Some(list) = last(&t, hooks.value.0, event)
        && splice::elements(&t, list.value.0).is_some_and(|e| e.is_empty())
    {
        let spans = member_spans(&t, hooks.value.0).ok_or_else(unreadable)?;
        let k = spans
            .iter()
            .position(|s| s.0 == list.key_start)
            .ok_or_else(unreadable)?;
        t = splice::remove_sibling(&t, &spans, k);
        if let Some(hooks) = last(&t, top, "hooks")
            && splice::members(&t, hooks.value.0).is_some_and(|m| m.is_empty())
        {
            let spans = member_spans(&t, top).ok_or_else(unreadable)?;
            let k = spans
                .iter()
                .position(|s| s.0 == hooks.key_start)
                .ok_or_else(unreadable)?;
            t = splice::remove_sibling(&t, &spans, k);
        }
    }
    Ok(Some(t))
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// Where the file as it was, and the file as we wrote it, are kept: in the git directory,
/// never in the work tree, so they are never committed.
fn kept(git_dir: &Path, agent: Agent) -> (PathBuf, PathBuf) {
    let d = git_dir.join("sage").join("guard");
    (
        d.join(format!("{}.before", agent.name())),
        d.join(format!("{}.written", agent.name())),
    )
}

/// What install or uninstall did, in words.
pub(crate) fn install(root: &Path, git_dir: &Path, agent: Agent) -> Result<String> {
    let rel = config_file(agent);
    let path = root.join(rel);
    // A committed settings file that links out of the worktree (to the user's own settings)
    // is not ours to edit.
    crate::files::refuse_link_out(root, &path, "agent settings")?;
    let before = read(&path)?;
    let Some(new) = with_entry(agent, before.as_deref(), rel)? else {
        return Ok(format!("{rel}: the guard is already installed"));
    };
    let (was, wrote) = kept(git_dir, agent);
    let dir = was.parent().expect("a directory");
    std::fs::create_dir_all(dir).map_err(|e| env(dir, e))?;
    // The file as it was: its bytes, or a mark that there was none (then uninstall removes it).
    let mut keep = match &before {
        Some(b) => format!("present\n{b}"),
        None => "absent\n".to_string(),
    };
    if path.parent().is_some_and(|p| !p.exists()) {
        keep = keep.replacen('\n', " dir\n", 1);
    }
    write(&was, &keep)?;
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).map_err(|e| env(p, e))?;
    }
    write(&path, &new)?;
    write(&wrote, &new)?;
    Ok(format!(
        "{rel}: guard installed (`{COMMAND} --agent {}` before each file write)",
        agent.name()
    ))
}

pub(crate) fn uninstall(root: &Path, git_dir: &Path, agent: Agent) -> Result<String> {
    let rel = config_file(agent);
    let path = root.join(rel);
    crate::files::refuse_link_out(root, &path, "agent settings")?;
    let (was, wrote) = kept(git_dir, agent);
    let Some(now) = read(&path)? else {
        let _ = std::fs::remove_file(&was);
        let _ = std::fs::remove_file(&wrote);
        return Ok(format!("{rel}: no such file; nothing to uninstall"));
    };
    let kept_before = read(&was)?;
    let ours = read(&wrote)?;
    let restored = match (kept_before, ours) {
        // Untouched since we wrote it: the file as it was, byte for byte.
        (Some(before), Some(ours)) if ours == now => {
            let (head, body) = before.split_once('\n').unwrap_or((&before, ""));
            if head.starts_with("absent") {
                std::fs::remove_file(&path).map_err(|e| env(&path, e))?;
                if head.ends_with(" dir")
                    && let Some(p) = path.parent()
                {
                    // Only when empty: the directory was ours.
                    let _ = std::fs::remove_dir(p);
                }
            } else {
                write(&path, body)?;
            }
            format!("{rel}: restored as it was before the guard was installed")
        }
        // Edited since: only our entry goes.
        _ => {
            let Some(new) = without_entry(agent, &now, rel)? else {
                return Ok(format!("{rel}: the guard is not installed"));
            };
            write(&path, &new)?;
            format!(
                "{rel}: guard entry removed (the file changed since install, so the rest stays)"
            )
        }
    };
    let _ = std::fs::remove_file(&was);
    let _ = std::fs::remove_file(&wrote);
    Ok(restored)
}

fn read(p: &Path) -> Result<Option<String>> {
    crate::files::read_text_if_exists(p, "hook configuration", crate::files::DOC_CAP)
}

fn write(p: &Path, text: &str) -> Result<()> {
    crate::files::write_output(p, text.as_bytes()).map_err(|e| env(p, e))
}

fn env(p: &Path, e: std::io::Error) -> Error {
    Error::env(format!("cannot write {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_goes_in_once_and_comes_out_alone() {
        let user = "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}]}\n}\n";
        let once = with_entry(Agent::ClaudeCode, Some(user), "s")
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "git sage guard check --agent claude-code"
        );
        assert_eq!(
            with_entry(Agent::ClaudeCode, Some(&once), "s").unwrap(),
            None
        );
        let out: Value = serde_json::from_str(
            &without_entry(Agent::ClaudeCode, &once, "s")
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(out, serde_json::from_str::<Value>(user).unwrap());

        let cursor = with_entry(Agent::Cursor, None, "c").unwrap().unwrap();
        let v: Value = serde_json::from_str(&cursor).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["hooks"]["preToolUse"][0]["matcher"], "Write|Edit|Delete");
        let gemini: Value =
            serde_json::from_str(&with_entry(Agent::Gemini, None, "g").unwrap().unwrap()).unwrap();
        assert_eq!(
            gemini["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"],
            30000
        );
        assert!(with_entry(Agent::Codex, Some("[1]"), "x").is_err());
        assert!(with_entry(Agent::Codex, Some("{"), "x").is_err());
    }
}
