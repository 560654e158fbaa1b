//! `git sage turns`: output, bad input, and conformance over real third-party transcripts.

use crate::common::{Repo, real_fixtures};

const CLAUDE_LINE: &str = "{\"type\":\"assistant\",\"sessionId\":\"s\",\"uuid\":\"u\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"I will check the scheme.\"}]}}";

fn write(r: &Repo, name: &str, bytes: &[u8]) -> String {
    let p = r.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn json_and_text_and_rev_path() {
    let r = Repo::new();
    let f = write(&r, "s.jsonl", format!("{CLAUDE_LINE}\n").as_bytes());
    let v = r.sage(&["turns", &f, "--format", "json"]).ok().json();
    assert_eq!(v["schema"], "sage.turns/1");
    assert_eq!(v["format"], "claude-code");
    let t = &v["turns"][0];
    for key in [
        "turn",
        "agent",
        "kind",
        "text",
        "reasoning_available",
        "tool_calls",
        "file_changes",
        "source",
    ] {
        assert!(t.get(key).is_some(), "turn lacks {key}: {t}");
    }
    assert_eq!(t["source"]["line"], 1);
    let text = r.sage(&["turns", &f]).ok().stdout;
    assert!(
        text.contains("   1 planning        I will check the scheme."),
        "{text}"
    );
    // REV:path reads the committed file
    r.git(&["add", "s.jsonl"]);
    r.commit("session");
    let v = r
        .sage(&["turns", "HEAD:s.jsonl", "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["turns"].as_array().unwrap().len(), 1);
    r.sage(&["turns", "HEAD:nope.jsonl"])
        .bad_input("nope.jsonl does not exist at HEAD");
}

#[test]
fn damaged_files_keep_what_they_can() {
    let r = Repo::new();
    // truncated last line, invalid UTF-8, unknown record types
    let mut bytes =
        format!("{CLAUDE_LINE}\n{{\"type\":\"mystery\",\"sessionId\":\"s\"}}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{\"id\":\"m2\",\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9 ok\"}]}}\n");
    bytes.extend_from_slice(&CLAUDE_LINE.as_bytes()[..60]);
    let f = write(&r, "d.jsonl", &bytes);
    let v = r.sage(&["turns", &f, "--format", "json"]).ok().json();
    assert_eq!(v["turns"].as_array().unwrap().len(), 2);
    assert_eq!(v["turns"][1]["text"], "caf\u{fffd} ok");
    assert_eq!(v["skipped"][0]["line"], 4);
    assert_eq!(v["skipped_records"]["mystery"], 1);
    // the text view says what was skipped, with line numbers
    let text = r.sage(&["turns", &f]).ok().stdout;
    assert!(
        text.contains("skipped 1 line(s): line 4: truncated JSON line"),
        "{text}"
    );
}

#[test]
fn a_50mb_single_line_is_read() {
    let r = Repo::new();
    let big = "x".repeat(50 << 20);
    let line = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{{\"id\":\"m\",\"content\":[{{\"type\":\"text\",\"text\":\"{big}\"}}]}}}}\n"
    );
    let f = write(&r, "big.jsonl", line.as_bytes());
    let out = r.sage(&["turns", &f]).ok().stdout;
    assert!(out.contains("1 turns"), "{}", &out[..200.min(out.len())]);
}

#[test]
fn nothing_usable_is_bad_input_naming_the_file() {
    let r = Repo::new();
    let f = write(&r, "empty.jsonl", b"");
    r.sage(&["turns", &f])
        .bad_input("empty.jsonl: not a transcript format");
    let f = write(
        &r,
        "junk.jsonl",
        b"{\"type\":\"progress\",\"sessionId\":\"s\"}\n{broken\n",
    );
    r.sage(&["turns", &f]).bad_input("junk.jsonl: no agent turns found in this claude-code transcript (1 line skipped; first problem at line 2");
    let f = write(&r, "notes.md", b"# Meeting notes\n\nnothing here\n");
    r.sage(&["turns", &f])
        .bad_input("notes.md: not a transcript format");
    // a file of another format, forced
    let f = write(&r, "c.jsonl", format!("{CLAUDE_LINE}\n").as_bytes());
    r.sage(&["turns", &f, "--from", "openhands"])
        .bad_input("c.jsonl");
    r.sage(&["turns", "/no/such/file"])
        .bad_input("cannot read session /no/such/file");
}

/// For each real transcript: (folder, file, turns, tool calls, file changes, distinct
/// (turn, file) changes, kinds as planning/implementation/verification/review/administrative).
/// The changes agree with the logs' own counts, taken by bench/real_logs.py without our
/// parsers: Aider's "Applied edit to" lines (checked below as well), Claude Code's and Codex's
/// successful edit calls, Gemini CLI's write calls (plus one `echo >>` the shell ran),
/// SpecStory's edit blocks (a bare diff whose response names no file is kept without a path,
/// for its content: the 17-36 export's one, and both of the 20-04 export's, whose file an
/// earlier response's prose used to lend them).
const EXPECT: &[(&str, &str, usize, usize, usize, usize, &str)] = &[
    (
        "claude-code",
        "external-agents-2444cdc4a359.jsonl",
        3,
        2,
        1,
        1,
        "1/1/0/1/0",
    ),
    (
        "claude-code",
        "external-agents-be84e84641f3-0.jsonl",
        7,
        6,
        0,
        0,
        "3/0/0/0/4",
    ),
    (
        "claude-code",
        "external-agents-be84e84641f3-1.jsonl",
        4,
        4,
        1,
        1,
        "2/1/0/1/0",
    ),
    (
        "codex",
        "external-agents-96791b232a45.jsonl",
        35,
        71,
        11,
        11,
        // `rg -n "a|b|c" dir` reads: a `|` inside quotes does not split the command
        "15/4/9/5/2",
    ),
    (
        "codex",
        "external-agents-fc9a115d0155.jsonl",
        34,
        61,
        9,
        9,
        "22/2/2/3/5",
    ),
    (
        "gemini-cli",
        "entire-cli-12cbfeaa512b.json",
        4,
        2,
        1,
        1,
        "2/1/0/1/0",
    ),
    (
        "gemini-cli",
        "entire-cli-ab2b9748b105.json",
        11,
        9,
        2,
        2,
        "3/2/0/3/3",
    ),
    (
        "aider",
        "health-analyzer-poc.aider.chat.history.md",
        6,
        0,
        8,
        4,
        "2/4/0/0/0",
    ),
    (
        "openhands",
        "tests_runtime_trajs_basic.json",
        2,
        2,
        1,
        1,
        "1/1/0/0/0",
    ),
    (
        "openhands",
        "tests_runtime_trajs_basic_gui_mode.json",
        5,
        4,
        2,
        2,
        "0/2/1/1/1",
    ),
    (
        "openhands",
        "tests_runtime_trajs_basic_interactions.json",
        3,
        1,
        0,
        0,
        "2/0/0/0/1",
    ),
    (
        "openhands",
        "tests_runtime_trajs_wrong_initial_state.json",
        4,
        4,
        0,
        0,
        "2/0/0/0/2",
    ),
    (
        "swe-agent",
        "demonstrations_ctf_web_i_got_id_demo.traj",
        21,
        21,
        2,
        2,
        // its curl requests are shell commands: the exploit's tries are verification
        "1/2/18/0/0",
    ),
    (
        "swe-agent",
        "demonstrations_replay_function_calling_replace_marshmallow-1867.traj",
        11,
        11,
        3,
        3,
        "4/4/2/0/1",
    ),
    (
        "swe-agent",
        "tests_test_data_gpt4_swe-bench-dev_pydicom-1458.traj",
        12,
        12,
        3,
        3,
        // `python reproduce_bug.py` is a shell command that verifies
        "4/6/2/0/0",
    ),
    (
        "swe-agent",
        "tests_test_data_gpt4_test-repo_6e44b9__sweagenttestrepo-1c2844.traj",
        5,
        5,
        1,
        1,
        "3/1/1/0/0",
    ),
    (
        "mini-swe-agent",
        "django__django-10914.traj.json",
        48,
        48,
        9,
        9,
        "26/9/10/3/0",
    ),
    (
        "mini-swe-agent",
        "django__django-11099.traj.json",
        42,
        42,
        8,
        8,
        "15/8/11/5/3",
    ),
    (
        "mini-swe-agent",
        "test_data_github_issue.traj.json",
        10,
        10,
        4,
        4,
        "4/2/2/2/0",
    ),
    (
        "mini-swe-agent",
        "test_data_local.traj.json",
        2,
        2,
        0,
        0,
        "0/0/0/0/2",
    ),
    (
        "specstory",
        "2025-04-29_17-36-bug-fixing-rule-create-failing-tests-first.md",
        3,
        3,
        1,
        1,
        "1/1/0/1/0",
    ),
    (
        "specstory",
        "2025-04-29_20-04-add-github-option-for-repository-backend.md",
        6,
        4,
        2,
        2,
        "2/2/1/1/0",
    ),
];

#[test]
fn every_real_transcript_parses() {
    let Some(root) = real_fixtures("") else {
        return;
    };
    let r = Repo::new();
    let mut table = String::from("format          turns  calls  changes  reasoning  file\n");
    let mut files = 0;
    for dir in [
        "claude-code",
        "codex",
        "gemini-cli",
        "aider",
        "openhands",
        "swe-agent",
        "mini-swe-agent",
        "specstory",
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let run = r.sage(&["turns", p.to_str().unwrap(), "--format", "json"]);
            if name == "2025-05-21_improve-mcp-error-handling.md" {
                // SOURCES.md: a hand-written summary, not an export: rejected, clearly.
                assert_eq!(run.code, 2, "{run:?}");
                assert!(
                    run.stderr.contains("hand-written summary"),
                    "{}",
                    run.stderr
                );
                table.push_str(&format!(
                    "{:<15} rejected (not an export)            {name}\n",
                    "specstory"
                ));
                continue;
            }
            files += 1;
            let v = run.ok().json();
            let turns = v["turns"].as_array().unwrap();
            let calls: usize = turns
                .iter()
                .map(|t| t["tool_calls"].as_array().unwrap().len())
                .sum();
            let changes: usize = turns
                .iter()
                .map(|t| t["file_changes"].as_array().unwrap().len())
                .sum();
            let reasoning = turns
                .iter()
                .filter(|t| t["reasoning_available"] == true)
                .count();
            assert!(!turns.is_empty(), "{name}");
            assert_eq!(
                v["format"],
                if dir == "specstory" { "specstory" } else { dir },
                "{name}"
            );
            let pairs: std::collections::BTreeSet<(u64, String)> = turns
                .iter()
                .flat_map(|t| {
                    t["file_changes"].as_array().unwrap().iter().map(|c| {
                        (
                            t["turn"].as_u64().unwrap(),
                            c["path"].as_str().unwrap().to_string(),
                        )
                    })
                })
                .collect();
            let count = |k: &str| turns.iter().filter(|t| t["kind"] == k).count();
            let kinds = [
                "planning",
                "implementation",
                "verification",
                "review",
                "administrative",
            ]
            .map(|k| count(k).to_string())
            .join("/");
            let (_, _, et, ec, ef, ep, ek) = EXPECT
                .iter()
                .find(|(d, f, ..)| *d == dir && *f == name)
                .unwrap_or_else(|| panic!("no expected values pinned for {dir}/{name}"));
            assert_eq!(
                (turns.len(), calls, changes, pairs.len(), kinds.as_str()),
                (*et, *ec, *ef, *ep, *ek),
                "{name}"
            );
            if dir == "codex" {
                assert_eq!(
                    turns.len(),
                    codex_responses(&std::fs::read_to_string(&p).unwrap()),
                    "{name}: one turn per model response"
                );
            }
            if dir == "aider" {
                // the log's own count, read without our parser
                let text = std::fs::read_to_string(&p).unwrap();
                let applied = text
                    .lines()
                    .filter(|l| l.starts_with("> Applied edit to "))
                    .count();
                assert_eq!(pairs.len(), applied, "{name}: one change per applied edit");
            }
            let with_work = turns.iter().any(|t| {
                !t["tool_calls"].as_array().unwrap().is_empty()
                    || !t["file_changes"].as_array().unwrap().is_empty()
            });
            assert!(
                !with_work || count("planning") < turns.len(),
                "{name}: a log with tool work whose turns are all planning"
            );
            table.push_str(&format!(
                "{:<15} {:>5}  {:>5}  {:>7}  {:>9}  {name}\n",
                v["format"].as_str().unwrap(),
                turns.len(),
                calls,
                changes,
                reasoning
            ));
        }
    }
    eprintln!("{table}");
    assert!(files >= 20, "only {files} transcripts found");
}

/// The model responses of a Codex rollout, counted without our parser: runs of model items
/// (reasoning, assistant messages, tool calls), each ended by the usage Codex reports when a
/// response completes, by tool output going back to the model, or by the user's next message.
fn codex_responses(log: &str) -> usize {
    let (mut responses, mut open) = (0, false);
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let p = &v["payload"];
        let model_item = v["type"] == "response_item"
            && ([
                "reasoning",
                "function_call",
                "custom_tool_call",
                "local_shell_call",
            ]
            .contains(&p["type"].as_str().unwrap_or(""))
                || (p["type"] == "message" && p["role"] == "assistant"));
        let ends = (v["type"] == "event_msg"
            && ["token_count", "user_message"].contains(&p["type"].as_str().unwrap_or("")))
            || p["type"].as_str().is_some_and(|t| t.ends_with("_output"));
        if model_item && !open {
            responses += 1;
            open = true;
        } else if ends {
            open = false;
        }
    }
    responses
}

fn turns_json(r: &Repo, f: &str) -> serde_json::Value {
    r.sage(&["turns", f, "--format", "json"]).ok().json()
}

fn kinds(v: &serde_json::Value) -> Vec<String> {
    v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Aider's edit formats, its reflections and several chats, with the bad input a history can
/// hold (CRLF, a fence with no path, a block cut off at the end, a path outside the
/// repository): every applied edit is a file change, nothing crashes.
#[test]
fn aider_histories_of_every_edit_format() {
    let r = Repo::new();
    let h = "# aider chat started at 2026-01-01 10:00:00\r\n\r\n> Model: gpt-4o with whole edit format  \r\n\r\n#### add a health check  \r\n\r\nHere it is:\r\n\r\napp/health.py\r\n```python\r\ndef health():\r\n    return 'ok'\r\n```\r\n\r\nAnd an example:\r\n\r\n```\r\ncurl localhost/health\r\n```\r\n\r\n> Tokens: 1k sent.  \r\n> Applied edit to app/health.py  \r\n\r\n# aider chat started at 2026-01-01 11:00:00\n\n> Main model: gpt-4o with udiff edit format  \n\n#### require the api key  \n\n```diff\n--- a/app/api.py\n+++ b/app/api.py\n@@ -1,2 +1,3 @@\n def handler(req):\n+    require_key(req)\n     return ok()\n```\n\n> Tokens: 1k sent.  \n> Applied edit to app/api.py  \n> Applied edit to ../outside.py  \n> Running pytest -q  \n> 2 passed  \n\n#### and the admin route  \n\napp/admin.py\n```\n<<<<<<< SEARCH\ndef admin(req):\n=======\ndef admin(req):\n    require_key(req)\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent.  \n> The LLM did not conform to the edit format.  \n> # 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app/admin.py\n<<<<<<< SEARCH\ndef admin(req):\n=======\ndef admin(req):\n    require_key(req)\n>>>>>>> REPLACE\n\nJust reply with fixed versions of the block above that failed to match.  \n\nFixed:\n\napp/admin.py\n```\n<<<<<<< SEARCH\ndef admin(request):\n=======\ndef admin(request):\n    require_key(request)\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent.  \n> Applied edit to app/admin.py  \n\n#### one more  \n\napp/cut.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\n";
    let f = write(&r, "h.aider.chat.history.md", h.as_bytes());
    let v = turns_json(&r, &f);
    let turns = v["turns"].as_array().unwrap();
    assert_eq!(
        turns.len(),
        5,
        "{}",
        serde_json::to_string_pretty(&v).unwrap()
    );
    let ops = |i: usize| -> Vec<(String, String)> {
        turns[i]["file_changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["path"].as_str().unwrap().into(),
                    c["op"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    assert_eq!(ops(0), [("app/health.py".into(), "write".into())], "whole");
    assert_eq!(
        ops(1),
        [
            ("app/api.py".into(), "patch".into()),
            ("../outside.py".into(), "opaque".into())
        ],
        "udiff; a path outside the repository is kept as the log says (mapping ignores it)"
    );
    assert!(
        ops(2).is_empty(),
        "the response in the wrong format changed nothing"
    );
    assert_eq!(
        ops(3),
        [("app/admin.py".into(), "replace".into())],
        "the reflection is a turn"
    );
    assert!(ops(4).is_empty(), "a block cut off at the end is no edit");
    assert_eq!(
        turns[1]["tool_calls"][0]["arguments"]["command"],
        "pytest -q"
    );
    assert_eq!(
        kinds(&v),
        [
            "implementation",
            "implementation",
            "implementation", // its text carries an edit, though Aider could not apply it
            "implementation",
            "planning"
        ]
    );
    assert!(v["warnings"].to_string().contains("2 chats"));
}

#[test]
fn specstory_cursor_text_and_openhands_v1_sessions() {
    let r = Repo::new();
    let spec = "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n_**User (2025-12-29 16:28Z)**_\n\nfix the ssrf\n\n---\n\n_**Agent (model m1, mode Agent)**_\n\nI'll validate the host.\n\n---\n\n<tool-use data-tool-type=\"write\" data-tool-name=\"search_replace\">\n\n<details><summary>Tool use: **search_replace** • Edit file: /w/app/fetch.py</summary>\n\n```diff\n@@ -1,2 +1,3 @@\n  def fetch(url):\n+     check_host(url)\n      return get(url)\n```\n\n</details>\n\n</tool-use>\n\n---\n\nNow the tests.\n\n---\n\nTool use: **run_terminal_cmd**\n\n```bash\npytest -q\n```\n\n```\n3 passed\n```\n\n---\n\nThe fix is complete and internal hosts are now blocked.\n\n---\n";
    let f = write(&r, "s.md", spec.as_bytes());
    let v = turns_json(&r, &f);
    assert_eq!(kinds(&v), ["implementation", "verification", "review"]);
    assert_eq!(v["turns"][0]["timestamp"], "2025-12-29T16:28:00Z");
    assert_eq!(v["turns"][0]["file_changes"][0]["op"], "patch");
    let txt = "user:\n<user_query>\nfix the ssrf\n</user_query>\n\nassistant:\nChecking the host.\n[Tool call] StrReplace\n  path: /w/app/fetch.py\n  old_string: return get(url)\n  new_string: check_host(url)\n    return get(url)\n\n[Tool result] StrReplace\n\nassistant:\n[Tool call] Shell\n  command: pytest -q\n\n[Tool result] Shell\n";
    let f = write(&r, "c.txt", txt.as_bytes());
    let v = turns_json(&r, &f);
    assert_eq!(v["format"], "cursor");
    assert_eq!(kinds(&v), ["implementation", "verification"]);
    // an OpenHands V1 conversation folder
    let dir = r.home().join("conv/events");
    std::fs::create_dir_all(&dir).unwrap();
    let events = [
        r#"{"kind":"MessageEvent","source":"user","id":"a","llm_message":{"role":"user","content":[{"type":"text","text":"fix the ssrf"}]}}"#,
        r#"{"kind":"ActionEvent","source":"agent","id":"b","llm_response_id":"r","tool_name":"file_editor","tool_call_id":"c","action":{"kind":"FileEditorAction","command":"create","path":"/workspace/app/guard.py","file_text":"def check_host(u): ...\n"}}"#,
        r#"{"kind":"ObservationEvent","source":"environment","id":"d","tool_call_id":"c","observation":{"content":[{"type":"text","text":"created"}]}}"#,
    ];
    for (i, e) in events.iter().enumerate() {
        std::fs::write(dir.join(format!("event-{i:05}-x.json")), e).unwrap();
    }
    let v = turns_json(&r, r.home().join("conv").to_str().unwrap());
    assert_eq!(v["format"], "openhands");
    assert_eq!(
        v["turns"][0]["file_changes"][0]["path"],
        "/workspace/app/guard.py"
    );
    assert_eq!(v["turns"][0]["tool_calls"][0]["result"]["text"], "created");
}

/// The conversation old Aider versions wrote into the commit body: read with REV^{commit},
/// found by blame-origin, and its edit tied to the write.
#[test]
fn aider_conversation_in_a_commit_body() {
    let r = Repo::new();
    r.write("app.py", "KEY = 'x'\n");
    r.commit_as(crate::common::HUMAN, "base");
    r.write("app.py", "import os\nKEY = os.environ['KEY']\n");
    let msg = "aider: read the key from the environment\n\n# Aider chat conversation:\n\nUSER: do not hard-code the key\n\nASSISTANT: app.py\n```\n<<<<<<< SEARCH\nKEY = 'x'\n=======\nimport os\nKEY = os.environ['KEY']\n>>>>>>> REPLACE\n```\n";
    r.commit(msg);
    let v = turns_json(&r, "HEAD^{commit}");
    assert_eq!(v["format"], "aider");
    assert_eq!(v["turns"][0]["file_changes"][0]["op"], "replace");
    let f = r.finding(
        "f.yaml",
        "file: app.py\nfragment: KEY = os.environ['KEY']\ncwe: 798\n",
    );
    let p = r
        .sage(&[
            "provenance",
            "--finding",
            &f,
            "--base",
            "HEAD~1",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(p["provenance"]["introducing_write"]["turn"], 1, "{p}");
}
