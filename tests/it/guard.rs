//! The agent-side guard through the binary: install and uninstall per agent (byte for byte),
//! and `guard check` answering each agent's hook input from the session so far.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::Repo;

/// A Claude Code session: the user's task, then one assistant message per text.
fn claude_session(task: &str, said: &[&str]) -> String {
    let mut lines = vec![json!({"type": "user", "sessionId": "s", "uuid": "u0",
        "timestamp": "2026-01-01T00:00:00Z", "cwd": "/p",
        "message": {"role": "user", "content": task}})];
    for (i, t) in said.iter().enumerate() {
        lines.push(json!({"type": "assistant", "sessionId": "s", "uuid": format!("a{i}"),
            "timestamp": format!("2026-01-01T00:00:{:02}Z", i + 1),
            "message": {"id": format!("m{i}"), "model": "claude-x", "content": [{"type": "text", "text": t}]}}));
    }
    lines
        .iter()
        .map(|l| serde_json::to_string(l).unwrap() + "\n")
        .collect()
}

/// Runs `git sage guard check` as the agent would: its JSON on stdin, in the repository.
fn check(r: &Repo, args: &[&str], input: &Value) -> (String, String, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_git-sage"));
    cmd.arg("guard").arg("check").args(args);
    cmd.current_dir(r.path())
        .env("HOME", r.home())
        .env("XDG_CONFIG_HOME", r.home().join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

fn write_call(r: &Repo, transcript: &str) -> Value {
    json!({"session_id": "s", "transcript_path": r.path().join(transcript), "cwd": r.path(),
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": r.path().join("media/fetcher.py"), "content": "x = 1\n"},
        "tool_use_id": "toolu_1"})
}

fn log_lines(r: &Repo) -> Vec<Value> {
    std::fs::read_to_string(r.path().join(".sage/guard.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_security_task_is_asked_for_its_plan_before_the_first_write() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    let task = "Fix the SSRF in download_preview: sellers' URLs must not reach internal hosts.";
    r.write(
        "s1.jsonl",
        &claude_session(task, &["I will change the fetcher to check the URL."]),
    );
    let (out, err, code) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s1.jsonl"));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("security plan"), "{reason}");
    // The checkpoint text of the task's CWE: SSRF's checklist.
    assert!(reason.contains("169.254.169.254"), "{reason}");

    // With the plan said, the write goes through.
    let plan = "Plan. Threat: a seller-controlled URL reaches the SSRF sink urlopen in `media/fetcher.py` and fetches internal hosts (169.254.169.254, 127.0.0.1). Defence: resolve the host and reject private, loopback and link-local addresses, and re-check after every redirect; a bypass would be a DNS rebinding or a redirect to 127.0.0.1. Scope: every caller of download_preview and every other place that fetches URLs. Verification: add tests that http://127.0.0.1 and http://169.254.169.254 and a redirect to 10.0.0.5 are rejected.";
    r.write("s2.jsonl", &claude_session(task, &[plan]));
    let (out, err, code) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s2.jsonl"));
    assert_eq!((out.as_str(), code), ("", 0), "{err}");

    // A task that does not bear on security is never stopped.
    r.write(
        "s3.jsonl",
        &claude_session("Rename the thumbnail helper to make_thumb.", &["Renaming."]),
    );
    let (out, _, code) = check(&r, &[], &write_call(&r, "s3.jsonl"));
    assert_eq!((out.as_str(), code), ("", 0));

    // A call that writes nothing is none of the guard's business.
    let bash = json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "cwd": r.path()});
    assert_eq!(check(&r, &[], &bash), (String::new(), String::new(), 0));

    let log = log_lines(&r);
    for line in &log {
        assert_eq!(crate::schemas::check(line), "sage.guard-log/1");
    }
    let decisions: Vec<&str> = log
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["deny", "allow", "allow"]);
    assert_eq!(log[0]["schema"], "sage.guard-log/1");
    assert_eq!(log[1]["facts"]["plan_turn"], 1);
    assert_eq!(log[0]["facts"]["relevance"], "lexicon");
}

#[test]
fn a_broken_guard_lets_the_agent_write_unless_strict() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    let (out, err, code) = check(&r, &["--agent", "codex"], &json!("not an object"));
    assert_eq!((out.as_str(), code), ("", 0));
    assert!(err.contains("warning: guard"), "{err}");
    r.git(&["config", "sage.guardStrict", "true"]);
    let (out, _, code) = check(&r, &["--agent", "gemini"], &json!([1]));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "deny");
}

#[test]
fn install_is_idempotent_and_uninstall_restores_the_file_byte_for_byte() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    // A settings file of the user's, formatted their way.
    let mine = "{\"permissions\":{\"allow\":[\"Bash(ls)\"]},\n   \"model\": \"x\"}\n";
    r.write(".claude/settings.json", mine);
    for agent in ["claude-code", "codex", "gemini", "cursor"] {
        r.sage(&["guard", "install", "--agent", agent]).ok();
        let again = r.sage(&["guard", "install", "--agent", agent]).ok();
        assert!(again.stderr.contains("already installed"), "{again:?}");
    }
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(r.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["permissions"]["allow"][0], "Bash(ls)");
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "git sage guard check --agent claude-code"
    );
    for (file, event) in [
        (".codex/hooks.json", "PreToolUse"),
        (".gemini/settings.json", "BeforeTool"),
        (".cursor/hooks.json", "preToolUse"),
    ] {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(r.path().join(file)).unwrap()).unwrap();
        assert!(v["hooks"][event].is_array(), "{file}: {v}");
    }
    for agent in ["claude-code", "codex", "gemini", "cursor"] {
        r.sage(&["guard", "uninstall", "--agent", agent]).ok();
    }
    assert_eq!(
        std::fs::read_to_string(r.path().join(".claude/settings.json")).unwrap(),
        mine
    );
    for dir in [".codex", ".gemini", ".cursor"] {
        assert!(!r.path().join(dir).exists(), "{dir} was ours");
    }
    // Nothing of it in the work tree: the kept copies live in the git directory.
    assert!(!r.path().join(".sage/guard").exists());

    // Edited after install: uninstall takes only our entry out.
    r.sage(&["guard", "install", "--agent", "codex"]).ok();
    let path = r.path().join(".codex/hooks.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["description"] = json!("team hooks");
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    r.sage(&["guard", "uninstall", "--agent", "codex"]).ok();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v, json!({"description": "team hooks"}));
}
