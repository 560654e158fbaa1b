//! `git sage guard install|uninstall`: the agent's project-level hook configuration, with our
//! one entry added. These files are JSON without comments, so there are no markers: our entry
//! is known by its command, and the file as it was is kept in the git directory so that
//! uninstalling restores it byte for byte (docs/guard.md#install-and-uninstall).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::hook::Agent;
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
pub(crate) fn with_entry(agent: Agent, text: Option<&str>, shown: &str) -> Result<Option<String>> {
    let mut doc: Value = match text {
        Some(t) if !t.trim().is_empty() => serde_json::from_str(t).map_err(|e| {
            Error::input(format!("{shown}:{}: not valid JSON: {e}", e.line()))
                .hint("fix the file, or move it aside, then install again")
        })?,
        _ => json!({}),
    };
    let Some(top) = doc.as_object_mut() else {
        return Err(Error::input(format!("{shown}: not a JSON object")));
    };
    if agent == Agent::Cursor {
        top.entry("version").or_insert(json!(1));
    }
    let hooks = top.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(Error::input(format!("{shown}: `hooks` is not an object")));
    };
    let (event, ours) = entry(agent);
    let list = hooks.entry(event).or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return Err(Error::input(format!(
            "{shown}: `hooks.{event}` is not a list"
        )));
    };
    if list.iter().any(is_ours) {
        return Ok(None);
    }
    list.push(ours);
    Ok(Some(pretty(&doc)))
}

/// `text` without our entries (and without the lists and objects only they needed).
pub(crate) fn without_entry(agent: Agent, text: &str, shown: &str) -> Result<String> {
    let mut doc: Value = serde_json::from_str(text)
        .map_err(|e| Error::input(format!("{shown}:{}: not valid JSON: {e}", e.line())))?;
    let (event, _) = entry(agent);
    if let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) {
        if let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut) {
            list.retain(|v| !is_ours(v));
            if list.is_empty() {
                hooks.remove(event);
            }
        }
        if hooks.is_empty()
            && let Some(top) = doc.as_object_mut()
        {
            top.remove("hooks");
        }
    }
    Ok(pretty(&doc))
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
            let new = without_entry(agent, &now, rel)?;
            if new == now {
                return Ok(format!("{rel}: the guard is not installed"));
            }
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
        let out: Value =
            serde_json::from_str(&without_entry(Agent::ClaudeCode, &once, "s").unwrap()).unwrap();
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
