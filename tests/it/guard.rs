//! The agent-side guard through the binary: install and uninstall per agent (byte for byte),
//! and `guard check` answering each agent's hook input from the session so far.

use std::process::Command;

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
        .env_remove("GIT_DIR");
    let out = crate::common::feed(cmd, input.to_string().as_bytes());
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

    // The judge the repository names for the guard decides: one that finds nothing anywhere
    // denies the write the offline judge would allow; one that cannot answer lets it through
    // with a warning (the guard fails open).
    let script = r.path().join("zero.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nturn=$(grep -o 'Score turn [0-9]*' | head -1 | tr -dc 0-9)\nprintf '{\"turn\": %s, \"applicable\": true, \"opportunity\": true, \"kind\": \"planning\", \"scores\": {\"tr\":0,\"di\":0,\"vr\":0,\"sa\":0}, \"quotes\": {\"tr\":null,\"di\":null,\"vr\":null,\"sa\":null}}\\n' \"$turn\"\n",
    )
    .unwrap();
    r.git(&[
        "config",
        "sage.guardJudge",
        &format!("command:sh {}", script.display()),
    ]);
    let (out, err, _) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s2.jsonl"));
    assert!(out.contains("\"deny\""), "{out} {err}");
    // (A judge's answers are cached by its command: the failing one is another script.)
    let failing = r.path().join("fail.sh");
    std::fs::write(&failing, "#!/bin/sh\nexit 1\n").unwrap();
    r.git(&[
        "config",
        "sage.guardJudge",
        &format!("command:sh {}", failing.display()),
    ]);
    let (out, err, code) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s2.jsonl"));
    assert_eq!((out.as_str(), code), ("", 0), "{err}");
    assert!(err.contains("warning: guard"), "{err}");
    r.git(&["config", "--unset", "sage.guardJudge"]);

    // A task that does not bear on security is never stopped.
    r.write(
        "s3.jsonl",
        &claude_session("Rename the thumbnail helper to make_thumb.", &["Renaming."]),
    );
    let (out, _, code) = check(&r, &[], &write_call(&r, "s3.jsonl"));
    assert_eq!((out.as_str(), code), ("", 0));

    // The plan made before the user's "go ahead" still counts for the write after it.
    let mut go = claude_session(task, &[plan]);
    go.push_str(&claude_session(
        "Looks good, go ahead.",
        &["Writing the fix."],
    ));
    r.write("s5.jsonl", &go);
    let (out, err, code) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s5.jsonl"));
    assert_eq!((out.as_str(), code), ("", 0), "{err}");

    // A task given in other words is a security one once a turn of it speaks of a threat.
    r.write(
        "s4.jsonl",
        &claude_session(
            "Do phase 1 of the review plan.",
            &["The export endpoint builds its query from the filter string: an attacker can inject SQL through it."],
        ),
    );
    let (out, _, _) = check(&r, &[], &write_call(&r, "s4.jsonl"));
    assert!(out.contains("\"deny\""), "{out}");

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
    assert_eq!(
        decisions,
        ["deny", "allow", "deny", "allow", "allow", "allow", "deny"]
    );
    assert_eq!(log[0]["schema"], "sage.guard-log/1");
    assert_eq!(log[1]["facts"]["plan_turn"], 1);
    assert_eq!(log[0]["facts"]["relevance"], "lexicon");
    // Recording the session points at the guard's decisions too.
    let rec = r.sage(&["record", "--session", "s1.jsonl"]).ok();
    assert!(rec.stderr.contains("git add .sage/guard.log"), "{rec:?}");
}

/// A Claude Code session of several exchanges: `("user", text)` or `("assistant", text)`.
fn claude_exchanges(items: &[(&str, &str)]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(i, (role, text))| {
            let l = if *role == "user" {
                json!({"type": "user", "sessionId": "s", "uuid": format!("u{i}"), "cwd": "/p",
                    "message": {"role": "user", "content": text}})
            } else {
                json!({"type": "assistant", "sessionId": "s", "uuid": format!("a{i}"),
                    "message": {"id": format!("m{i}"), "model": "claude-x",
                        "content": [{"type": "text", "text": text}]}})
            };
            serde_json::to_string(&l).unwrap() + "\n"
        })
        .collect()
}

fn decision(out: &str) -> String {
    if out.is_empty() {
        return "allow".into();
    }
    let v: Value = serde_json::from_str(out).unwrap();
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The records the guard keeps of sessions between checks.
fn records(r: &Repo) -> Vec<Value> {
    let dir = r.path().join(".git/sage/guard/sessions");
    let mut out: Vec<Value> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|f| serde_json::from_slice(&std::fs::read(f.path()).unwrap()).unwrap())
                .collect()
        })
        .unwrap_or_default();
    out.sort_by_key(|v| v["transcript"].as_str().unwrap_or("").to_string());
    out
}

const PLAN: &str = "Plan. Threat: a seller-controlled URL reaches the SSRF sink urlopen in `media/fetcher.py` and fetches internal hosts (169.254.169.254, 127.0.0.1). Defence: resolve the host and reject private, loopback and link-local addresses, and re-check after every redirect; a bypass would be a DNS rebinding or a redirect to 127.0.0.1. Scope: every caller of download_preview and every other place that fetches URLs. Verification: add tests that http://127.0.0.1 and http://169.254.169.254 and a redirect to 10.0.0.5 are rejected.";
const TASK: &str = "Fix the SSRF in download_preview: sellers' URLs must not reach internal hosts.";

#[test]
fn a_plan_of_an_earlier_exchange_counts_and_each_check_resumes_where_the_last_stopped() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    // The plan was made three user messages ago; the write comes after two more exchanges.
    let mut items = vec![
        ("user", TASK),
        ("assistant", PLAN),
        ("user", "Also keep the old preview sizes."),
        ("assistant", "Noted: the sizes stay as they are."),
        ("user", "Go ahead with the SSRF fix."),
        ("assistant", "Writing the fetcher now."),
    ];
    r.write("s.jsonl", &claude_exchanges(&items));
    let (out, err, _) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s.jsonl"));
    assert_eq!(decision(&out), "allow", "{out} {err}");
    let last = log_lines(&r).pop().unwrap();
    assert_eq!(last["why"], "turn 1 holds the security plan", "{last}");

    // A session that has no plan yet is stopped; the record keeps where the next check reads
    // from (the start of the last turn, which the agent may still be writing).
    let early = [
        ("user", TASK),
        ("assistant", "I will change the fetcher to check the URL."),
    ];
    r.write("t.jsonl", &claude_exchanges(&early));
    let (out, _, _) = check(&r, &["--agent", "claude-code"], &write_call(&r, "t.jsonl"));
    assert_eq!(decision(&out), "deny");
    items = early.to_vec();
    items.push(("user", "Go on, but say how you will stop it first."));
    items.push(("assistant", PLAN));
    items.push(("assistant", "Writing the fetcher now."));
    let grown = claude_exchanges(&items);
    r.write("t.jsonl", &grown);
    let (out, _, _) = check(&r, &["--agent", "claude-code"], &write_call(&r, "t.jsonl"));
    assert_eq!(decision(&out), "allow", "{:?}", log_lines(&r).pop());
    let rec = records(&r)
        .into_iter()
        .find(|v| v["transcript"].as_str().unwrap().ends_with("t.jsonl"))
        .unwrap();
    let last_line = grown.lines().last().unwrap();
    assert_eq!(
        rec["cut"]["offset"].as_u64().unwrap() as usize,
        grown.len() - last_line.len() - 1,
        "{rec}"
    );
    assert_eq!(rec["cut"]["turns"], 2, "{rec}");
    assert_eq!(rec["prior"]["plan"], 2, "{rec}");

    // A file rewritten in place (not appended to, and longer than before) is read whole
    // again: the plan it no longer holds does not count.
    let filler = "The preview keeps its sizes and its formats. ".repeat(20);
    let rewritten = claude_exchanges(&[
        ("user", TASK),
        (
            "assistant",
            "I will change the fetcher to check the URL, quickly.",
        ),
        ("user", "Go on."),
        ("assistant", &filler),
        ("assistant", "Writing the fetcher now."),
    ]);
    assert!(rewritten.len() > grown.len());
    r.write("t.jsonl", &rewritten);
    let (out, _, _) = check(&r, &["--agent", "claude-code"], &write_call(&r, "t.jsonl"));
    assert_eq!(decision(&out), "deny", "{:?}", log_lines(&r).pop());
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

/// A stand-in for each agent: it reads the hook configuration `guard install` wrote, as the
/// agent does, runs every command hooked to its pre-write event whose matcher takes its write
/// tool (`sh -c`, git-sage on PATH), with the agent's payload on stdin, and reads the answer
/// the agent's way. `true` when the write may go ahead.
fn fake_agent(r: &Repo, agent: &str, transcript: &str) -> bool {
    let (file, event, tool) = match agent {
        "claude-code" => (".claude/settings.json", "PreToolUse", "Write"),
        "codex" => (".codex/hooks.json", "PreToolUse", "apply_patch"),
        "gemini" => (".gemini/settings.json", "BeforeTool", "write_file"),
        _ => (".cursor/hooks.json", "preToolUse", "Write"),
    };
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(r.path().join(file)).unwrap()).unwrap();
    let t = r.path().join(transcript);
    let payload = match agent {
        "claude-code" => json!({"session_id": "s", "transcript_path": t, "cwd": r.path(),
            "hook_event_name": event, "tool_name": tool,
            "tool_input": {"file_path": r.path().join("media/fetcher.py"), "content": "x\n"}}),
        "codex" => json!({"session_id": "s", "turn_id": "u", "transcript_path": t, "cwd": r.path(),
            "hook_event_name": event, "model": "m", "tool_name": tool,
            "tool_input": {"command": "*** Begin Patch\n*** Add File: media/fetcher.py\n+x\n*** End Patch\n"}}),
        "gemini" => json!({"session_id": "s", "transcript_path": t, "cwd": r.path(),
            "hook_event_name": event, "tool_name": tool,
            "tool_input": {"file_path": "media/fetcher.py", "content": "x\n"}}),
        _ => json!({"conversation_id": "c", "generation_id": "g", "hook_event_name": event,
            "workspace_roots": [r.path()], "transcript_path": t, "tool_name": tool,
            "tool_input": {"file_path": r.path().join("media/fetcher.py")}}),
    };
    // Each agent's matcher: Claude Code and Codex take `A|B` lists of names, Gemini a regex
    // (ours is `^(a|b)$`), Cursor `A|B` too.
    let takes = |m: &str| {
        m.trim_start_matches("^(")
            .trim_end_matches(")$")
            .split('|')
            .any(|x| x == tool || (agent == "codex" && ["Write", "Edit"].contains(&x)))
    };
    let entries = config["hooks"][event].as_array().unwrap().clone();
    let commands: Vec<String> = entries
        .iter()
        .filter(|e| takes(e["matcher"].as_str().unwrap_or("")))
        .flat_map(|e| match e["hooks"].as_array() {
            Some(hs) => hs
                .iter()
                .map(|h| h["command"].as_str().unwrap().to_string())
                .collect::<Vec<_>>(),
            None => vec![e["command"].as_str().unwrap().to_string()],
        })
        .collect();
    assert!(
        !commands.is_empty(),
        "{agent}: no hook for {tool} in {config}"
    );
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_git-sage"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    commands.iter().all(|c| {
        let mut sh = Command::new("sh");
        sh.args(["-c", c])
            .current_dir(r.path())
            .env("PATH", &path)
            .env("HOME", r.home())
            .env("XDG_CONFIG_HOME", r.home())
            .env("GIT_CONFIG_NOSYSTEM", "1");
        let out = crate::common::feed(sh, payload.to_string().as_bytes());
        let code = out.status.code().unwrap_or(1);
        let stdout = String::from_utf8(out.stdout).unwrap();
        let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
        // Exit 2 blocks for all four; otherwise each reads its own JSON.
        code != 2
            && match agent {
                "claude-code" | "codex" => {
                    answer["hookSpecificOutput"]["permissionDecision"] != "deny"
                }
                "gemini" => !["deny", "block"].contains(&answer["decision"].as_str().unwrap_or("")),
                _ => answer["permission"] != "deny",
            }
    })
}

#[test]
fn each_agent_runs_the_installed_hook_and_is_stopped_until_the_plan() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    let task = "Fix the SSRF in download_preview: sellers' URLs must not reach internal hosts.";
    r.write(
        "none.jsonl",
        &claude_session(task, &["I will edit the fetcher."]),
    );
    let plan = "Plan. Threat: a seller-controlled URL reaches the SSRF sink urlopen in `media/fetcher.py` and fetches internal hosts (169.254.169.254, 127.0.0.1). Defence: resolve the host and reject private, loopback and link-local addresses, and re-check after every redirect; a bypass would be a DNS rebinding or a redirect to 127.0.0.1. Scope: every caller of download_preview and every other place that fetches URLs. Verification: add tests that http://127.0.0.1 and http://169.254.169.254 and a redirect to 10.0.0.5 are rejected.";
    r.write("plan.jsonl", &claude_session(task, &[plan]));
    for agent in ["claude-code", "codex", "gemini", "cursor"] {
        r.sage(&["guard", "install", "--agent", agent]).ok();
        assert!(
            !fake_agent(&r, agent, "none.jsonl"),
            "{agent}: the write went ahead"
        );
        assert!(
            fake_agent(&r, agent, "plan.jsonl"),
            "{agent}: the plan did not count"
        );
        r.sage(&["guard", "uninstall", "--agent", agent]).ok();
    }
}

/// The guard resumes a Claude Code log from the first line of its last turn: read from any
/// turn's first line, a real log must give that turn and the ones after it as the whole log
/// does (text, calls, results, edits, times).
#[test]
fn a_real_log_read_from_a_turn_gives_the_same_turns() {
    let Some(dir) = crate::common::real_fixtures("claude-code") else {
        return;
    };
    let turns = |path: &std::path::Path| -> Vec<Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_git-sage"))
            .args(["turns", "--from", "claude-code", "--format", "json"])
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["turns"].as_array().unwrap().clone()
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut cuts = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    files.sort_by_key(|f| f.path());
    for f in files {
        let bytes = std::fs::read(f.path()).unwrap();
        let whole = turns(&f.path());
        for (k, t) in whole.iter().enumerate() {
            let Some(line) = t["source"]["line"].as_u64().filter(|&l| l > 1) else {
                continue;
            };
            let at = bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(line as usize - 2)
                .unwrap()
                .0
                + 1;
            let part_path = tmp.path().join("part.jsonl");
            std::fs::write(&part_path, &bytes[at..]).unwrap();
            let part = turns(&part_path);
            assert_eq!(
                part.len(),
                whole.len() - k,
                "{}: from line {line}",
                f.path().display()
            );
            for (a, b) in part.iter().zip(&whole[k..]) {
                let mut a = a.clone();
                a["turn"] = json!(a["turn"].as_u64().unwrap() + k as u64);
                a["source"]["line"] = json!(a["source"]["line"].as_u64().unwrap() + line - 1);
                // A kind may rest on what the task did before the turn (reading a file it
                // changed is review): a log read from the middle cannot know that. What a turn
                // does by itself — an edit — is the same either way.
                assert_eq!(
                    a["kind"] == "implementation",
                    b["kind"] == "implementation",
                    "{}: read from line {line}, turn {} kind",
                    f.path().display(),
                    b["turn"]
                );
                let mut b = b.clone();
                a["kind"] = json!(null);
                b["kind"] = json!(null);
                let b = &b;
                assert!(
                    a == *b,
                    "{}: read from line {line}, turn {} differs",
                    f.path().display(),
                    b["turn"]
                );
            }
            cuts += 1;
        }
    }
    assert!(cuts >= 10, "{cuts} cuts");
    eprintln!("{cuts} cuts agree");
}

/// Issue 43 (15): `git sage guard check | head -c 10` panicked on the broken pipe. A reader
/// that went away is no error: the decision stands as the exit code, and nothing panics.
#[test]
fn a_closed_stdout_is_no_panic_and_the_decision_stands() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    let task = "Fix the SSRF in download_preview: sellers' URLs must not reach internal hosts.";
    r.write(
        "s1.jsonl",
        &claude_session(task, &["I will change the fetcher to check the URL."]),
    );
    let (_, _, want) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s1.jsonl"));
    // The pipe's reading end is closed before the guard starts: its first write fails.
    let input = write_call(&r, "s1.jsonl").to_string();
    let (code, err) = crate::trust::into_closed_pipe(
        &r,
        r.path(),
        &["guard", "check", "--agent", "claude-code"],
        input.as_bytes(),
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(code, want, "{err}");
}

/// Issue 43 (3, 6): the guard log kept secrets from a tool's file path and the session id
/// (redacted after JSON encoding), and a committed `.sage/guard.log` link out of the worktree
/// was appended to.
#[test]
fn the_guard_log_holds_no_secret_and_never_follows_a_link_out() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    let task = "Fix the SSRF in download_preview: sellers' URLs must not reach internal hosts.";
    r.write(
        "s1.jsonl",
        &claude_session(task, &["I will change the fetcher to check the URL."]),
    );
    let aws = "AKIAQWERTYUIOPASDFGH";
    let gh = "ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2";
    let mut call = write_call(&r, "s1.jsonl");
    call["session_id"] = json!(format!("s\n{gh}"));
    call["tool_input"]["file_path"] = json!(format!("{}/x\n{aws}", r.path().display()));
    check(&r, &["--agent", "claude-code"], &call);
    let log = std::fs::read_to_string(r.path().join(".sage/guard.log")).unwrap();
    assert!(!log.is_empty());
    assert!(!log.contains(aws) && !log.contains(gh), "{log}");
    // A link out of the worktree: not written through; the guard still answers.
    std::fs::remove_file(r.path().join(".sage/guard.log")).unwrap();
    let elsewhere = r.home().join("elsewhere.txt");
    std::fs::write(&elsewhere, "mine\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, r.path().join(".sage/guard.log")).unwrap();
    let (_, err, code) = check(&r, &["--agent", "claude-code"], &write_call(&r, "s1.jsonl"));
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "mine\n");
    assert!(err.contains("outside the worktree"), "{err}");
    assert!(code == 0 || code == 2, "{err}");
}

/// Issue 43 (12): while any finding was kept, the guard denied every write of every task — a
/// README typo fix because an SSRF finding was kept on media/fetcher.py. A kept finding guards
/// the writes that bear on it: its file, and files that use it.
#[test]
fn a_kept_finding_guards_its_own_file_and_its_callers_only() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.write("media/fetcher.py", "def download(url):\n    pass\n");
    r.write("media/views.py", "from media.fetcher import download\n");
    r.write("media/other.py", "x = 1\n");
    r.write(
        ".sage/findings/ssrf.yaml",
        "id: ssrf\ncwe: 918\nfile: media/fetcher.py\nlines: 1-2\n",
    );
    r.commit("base");
    r.write(
        "s.jsonl",
        &claude_session("Fix the typo in the README.", &["I will fix the typo."]),
    );
    let call = |path: &str| {
        let mut c = write_call(&r, "s.jsonl");
        c["tool_input"]["file_path"] = json!(r.path().join(path));
        c
    };
    let decision = |path: &str| {
        let (out, err, code) = check(&r, &["--agent", "claude-code"], &call(path));
        assert_eq!(code, 0, "{err}");
        out.contains("\"deny\"")
    };
    assert!(
        !decision("README.md"),
        "a README fix is not a write on the finding"
    );
    assert!(
        !decision("media/other.py"),
        "nor a file that does not use it"
    );
    assert!(
        decision("media/fetcher.py"),
        "the finding's own file is guarded"
    );
    assert!(decision("media/views.py"), "and a file that uses it");
}

/// Issue 43 (10): uninstall removed the whole matcher group with the user's own hook in it; on
/// a file the guard was never in, it re-printed and reordered the file and said "removed";
/// install and uninstall turned `12345678901234567890123` into `1.2345678901234568e+22`,
/// `1e5` into `100000.0`, `-0` into `-0.0`, and dropped duplicate keys.
#[test]
fn guard_install_and_uninstall_edit_only_their_own_bytes() {
    let r = Repo::new();
    r.write("README.md", "# media\n");
    r.commit("base");
    let path = r.path().join(".claude/settings.json");
    // Never installed: uninstall leaves the file as it is.
    let mine = "{\"z\": 1, \"a\": 12345678901234567890123,\n  \"e\": 1e5, \"n\": -0, \"d\": 1, \"d\": 2}\n";
    r.write(".claude/settings.json", mine);
    let run = r
        .sage(&["guard", "uninstall", "--agent", "claude-code"])
        .ok();
    assert!(run.stderr.contains("not installed"), "{run:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
    // Installed, then the user adds a hook of their own to our matcher group and edits the
    // file: uninstall takes our hook only, and every other byte stays.
    r.sage(&["guard", "install", "--agent", "claude-code"]).ok();
    let installed = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "12345678901234567890123",
        "1e5",
        "-0",
        "\"d\": 1, \"d\": 2",
        "{\"z\": 1, \"a\"",
    ] {
        assert!(installed.contains(kept), "{kept}: {installed}");
    }
    let ours = "\"command\": \"git sage guard check --agent claude-code\"";
    assert!(installed.contains(ours), "{installed}");
    let shared = installed.replacen(
        "\"hooks\": [",
        "\"hooks\": [\n          {\"type\": \"command\", \"command\": \"./lint.sh\"},",
        1,
    );
    assert_ne!(shared, installed);
    std::fs::write(&path, &shared).unwrap();
    r.sage(&["guard", "uninstall", "--agent", "claude-code"])
        .ok();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains("git sage guard check"), "{after}");
    assert!(
        after.contains("./lint.sh"),
        "the user's hook went too: {after}"
    );
    assert!(
        after.starts_with(mine.trim_end().trim_end_matches('}')),
        "{after}"
    );
    serde_json::from_str::<Value>(&after).unwrap();
}
