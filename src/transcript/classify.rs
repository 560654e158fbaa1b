//! Turn kinds from what a turn does: edits → implementation, test runs → verification,
//! bookkeeping → administrative, otherwise planning before the first edit and review after.
//! A heuristic over tool names and shell commands; explicit kinds in a log always win.

use std::sync::OnceLock;

use regex::Regex;

use super::model::{Turn, TurnKind};

/// Tool names that change files, across the formats we read.
const EDIT_TOOLS: &[&str] = &[
    "edit",
    "multiedit",
    "write",
    "notebookedit",
    "apply_patch",
    "replace",
    "write_file",
    "create",
    "insert",
    "edit_file",
    "search_replace",
    "str_replace",
    "create_file",
    "delete_file",
];

/// Tool names that run shell commands.
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "exec_command",
    "run_shell_command",
    "execute_bash",
    "run",
    "cmdrun",
    "local_shell",
    "terminal",
];

/// Tools that only keep books (plans, todo lists, handshakes).
const BOOKKEEPING_TOOLS: &[&str] = &[
    "todowrite",
    "todoread",
    "update_plan",
    "exitplanmode",
    "think",
];

fn tests_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)(\bpytest\b|py\.test|-m\s+unittest|\btox\b|\bnox\b|cargo\s+(nextest|test)|go\s+test|(npm|yarn|pnpm)\s+(run\s+)?test|\bjest\b|\bvitest\b|\bmocha\b|\brspec\b|make\s+(test|check)|mvn\s+(test|verify)|gradlew?\s+test|\bphpunit\b|\bctest\b|manage\.py\s+test|run_?tests|runtests)",
        )
        .expect("valid regex")
    })
}

fn admin_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(pip3?\s+install|uv\s+(pip|add|sync)|poetry\s+(install|add)|npm\s+(i|install|ci)\b|yarn\s+(add|install)|apt(-get)?\s|brew\s|cargo\s+(build|fmt|check)|git\s+(status|add|commit|log|diff|show|checkout|switch|branch|push|pull|fetch|stash|config)|ls\b|cd\b|pwd\b|mkdir\b|mv\b|cp\b|rm\b|touch\b|which\b|echo\b|source\b|export\b|black\b|isort\b|ruff\s+format|prettier\b|gofmt\b|rustfmt\b|chmod\b|python3?\s+-m\s+(venv|pip)|conda\s)",
        )
        .expect("valid regex")
    })
}

fn norm(name: &str) -> String {
    name.trim().to_ascii_lowercase()
}

/// The shell command of a tool call, if it is one.
pub fn shell_command(name: &str, args: &serde_json::Value) -> Option<String> {
    if !SHELL_TOOLS.contains(&norm(name).as_str()) {
        return None;
    }
    let pick = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) => Some(
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        }
    };
    match args {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(o) => ["command", "cmd", "script", "code"]
            .iter()
            .find_map(|k| o.get(*k).and_then(pick)),
        _ => None,
    }
}

/// Whether a tool call changes files (by its name; `str_replace_editor` by its command).
pub fn is_edit_call(name: &str, args: &serde_json::Value) -> bool {
    let n = norm(name);
    if n == "str_replace_editor" || n == "edit_file_tool" {
        return args
            .get("command")
            .and_then(|c| c.as_str())
            .is_some_and(|c| c != "view");
    }
    EDIT_TOOLS.contains(&n.as_str())
}

pub fn is_test_command(cmd: &str) -> bool {
    tests_re().is_match(cmd)
}

fn is_admin_call(name: &str, args: &serde_json::Value) -> bool {
    if BOOKKEEPING_TOOLS.contains(&norm(name).as_str()) {
        return true;
    }
    match shell_command(name, args) {
        Some(cmd) => cmd
            .split(['&', ';', '|', '\n'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .all(|c| admin_re().is_match(c)),
        None => false,
    }
}

/// Guesses the kind of one turn; `edited_before` says whether an earlier turn changed files.
pub fn guess(t: &Turn, edited_before: bool) -> TurnKind {
    let edits = !t.file_changes.is_empty()
        || t.tool_calls
            .iter()
            .any(|c| is_edit_call(&c.name, &c.arguments));
    if edits {
        return TurnKind::Implementation;
    }
    let runs_tests = t
        .tool_calls
        .iter()
        .any(|c| shell_command(&c.name, &c.arguments).is_some_and(|cmd| is_test_command(&cmd)));
    if runs_tests {
        return TurnKind::Verification;
    }
    let text = t.text.trim();
    if text.is_empty() && t.tool_calls.is_empty() {
        return TurnKind::Administrative;
    }
    if !t.tool_calls.is_empty()
        && text.chars().count() < 200
        && t.tool_calls
            .iter()
            .all(|c| is_admin_call(&c.name, &c.arguments))
    {
        return TurnKind::Administrative;
    }
    if edited_before {
        TurnKind::Review
    } else {
        TurnKind::Planning
    }
}

/// Fills in the kinds of turns the log did not label (`explicit[i]` is the log's label).
pub fn classify(turns: &mut [Turn], explicit: &[Option<TurnKind>]) {
    let mut edited = false;
    for (i, t) in turns.iter_mut().enumerate() {
        t.kind = explicit
            .get(i)
            .copied()
            .flatten()
            .unwrap_or_else(|| guess(t, edited));
        if t.kind == TurnKind::Implementation {
            edited = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::model::{SourceRef, ToolCall};
    use serde_json::json;

    fn turn(text: &str, calls: &[(&str, serde_json::Value)]) -> Turn {
        Turn {
            turn: 1,
            agent: "a".into(),
            kind: TurnKind::Planning,
            text: text.into(),
            reasoning: None,
            reasoning_available: false,
            reasoning_redacted: false,
            tool_calls: calls
                .iter()
                .map(|(n, a)| ToolCall {
                    id: None,
                    name: n.to_string(),
                    arguments: a.clone(),
                    result: None,
                })
                .collect(),
            file_changes: vec![],
            timestamp: None,
            source: SourceRef::line(1),
        }
    }

    #[test]
    fn kinds() {
        let mut ts = vec![
            turn("I will check the scheme of the URL before fetching.", &[]),
            turn("", &[("Bash", json!({"command": "pip install requests"}))]),
            turn(
                "Adding the check.",
                &[("Edit", json!({"file_path": "a.py"}))],
            ),
            turn(
                "",
                &[(
                    "Bash",
                    json!({"command": "cd /repo && python -m pytest -q"}),
                )],
            ),
            turn("Tests are green, the fix looks complete.", &[]),
            turn(
                "",
                &[(
                    "str_replace_editor",
                    json!({"command": "view", "path": "a.py"}),
                )],
            ),
            turn("", &[]),
        ];
        let explicit = vec![None; ts.len()];
        classify(&mut ts, &explicit);
        let kinds: Vec<TurnKind> = ts.iter().map(|t| t.kind).collect();
        use TurnKind::*;
        assert_eq!(
            kinds,
            [
                Planning,
                Administrative,
                Implementation,
                Verification,
                Review,
                Review,
                Administrative
            ]
        );
        // explicit labels win
        classify(&mut ts, &[Some(Review)]);
        assert_eq!(ts[0].kind, Review);
        assert!(is_edit_call(
            "str_replace_editor",
            &json!({"command": "str_replace"})
        ));
        assert_eq!(
            shell_command("exec_command", &json!({"cmd": ["bash", "-lc", "ls"]})).as_deref(),
            Some("bash -lc ls")
        );
    }
}
