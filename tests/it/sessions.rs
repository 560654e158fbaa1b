//! Sessions in git, and tying writes to turns: replay, Aider commits, trailers, timestamps.

use crate::common::{AGENT, HUMAN, Repo};

const ANCHOR: &str = "file: app.py\nfragment: 'if not url.startswith(\"https://\"):'\n";

fn base() -> Repo {
    let r = Repo::new();
    r.write("app.py", "def fetch(url):\n    return get(url)\n");
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r
}

fn prov(r: &Repo, extra: &[&str]) -> serde_json::Value {
    let f = r.finding("a.yaml", ANCHOR);
    let mut args = vec!["provenance", "--finding", f.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    r.sage(&args).ok().json()
}

const SESSION_TWO_EDITS: &str = r#"schema: sage.session/1
task: fix the SSRF in fetch
turns:
  - text: "Plan: we will check the scheme."
  - text: Adding the scheme check.
    file_changes:
      - path: app.py
        old: "def fetch(url):\n"
        new: "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n"
  - text: And a log line.
    file_changes:
      - path: app.py
        old: "    return get(url)\n"
        new: "    log(url)\n    return get(url)\n"
  - text: Tests are green.
"#;

#[test]
fn multi_edit_commit_is_split_by_replay() {
    let r = base();
    r.write("app.py", "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    log(url)\n    return get(url)\n");
    r.write(".sage/sessions/fix.yaml", SESSION_TWO_EDITS);
    let c = r.commit("fix ssrf");
    let v = prov(&r, &[]);
    let p = &v["provenance"];
    assert_eq!(
        v["session"]["found_by"],
        "file under .sage/sessions/ changed in the range"
    );
    let writes = p["writes"].as_array().unwrap();
    assert_eq!(writes.len(), 2, "{writes:?}");
    assert_eq!(
        (
            writes[0]["commit"].as_str().unwrap(),
            writes[0]["edit"].as_u64(),
            writes[0]["turn"].as_u64()
        ),
        (c.as_str(), Some(1), Some(2))
    );
    assert_eq!(
        (writes[1]["edit"].as_u64(), writes[1]["turn"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(p["introducing_write"]["turn"], 2);
    assert_eq!(p["introducing_write"]["mapped_by"], "replay");
    assert_eq!(p["reconstruction"], "per-write");
    assert_eq!(v["session"]["scope"]["first"], 1);
    // Where git's changed-path filters rule commits out, discovery finds the same session.
    r.git(&["commit-graph", "write", "--reachable", "--changed-paths"]);
    assert_eq!(prov(&r, &[]), v);
}

#[test]
fn squashed_commit_is_final_only() {
    let r = base();
    // The commit holds both edits plus a manual change the transcript never made.
    r.write("app.py", "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    log(url)  # squashed\n    return get(url)\n");
    r.write(".sage/sessions/fix.yaml", SESSION_TWO_EDITS);
    r.commit("squash");
    let v = prov(&r, &[]);
    assert_eq!(v["provenance"]["reconstruction"], "final-only");
    assert_eq!(v["provenance"]["writes"].as_array().unwrap().len(), 1);
    // replay diverged: the edit whose new text holds the anchored code wrote it
    assert_eq!(
        (
            v["provenance"]["introducing_write"]["turn"].as_u64(),
            v["provenance"]["introducing_write"]["mapped_by"].as_str()
        ),
        (Some(2), Some("fragment"))
    );
    assert!(
        v["provenance"]["notes"]
            .to_string()
            .contains("did not reproduce")
    );
    // and where it diverged
    let notes = v["provenance"]["notes"].to_string();
    assert!(
        notes
            .contains("at line 4 the edits give `log(url)`, the commit has `log(url)  # squashed`"),
        "{notes}"
    );
}

#[test]
fn aider_commit_lines_map_turns() {
    let r = base();
    r.write("app.py", "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n");
    let c1 = r.commit_as(
        ("Dana Dev (aider)", "dana@example.com"),
        "fix: check the scheme",
    );
    r.write("README.md", "https only\n");
    let c2 = r.commit_as(("Dana Dev (aider)", "dana@example.com"), "docs: https only");
    let history = format!(
        "\n# aider chat started at 2026-01-01 10:00:00\n\n#### fix the ssrf  \n\nI will check the scheme.\n\n> Applied edit to app.py  \n> Commit {} fix: check the scheme  \n\n#### document it  \n\nDone.\n\n> Commit {} docs: https only  \n",
        &c1[..7],
        &c2[..7]
    );
    r.write(".aider.chat.history.md", &history);
    r.commit_as(HUMAN, "keep the chat");
    let v = prov(&r, &["--agent", "aider", "--all-writes"]);
    let w = v["provenance"]["writes"].as_array().unwrap();
    assert_eq!(
        (w[0]["turn"].as_u64(), w[0]["mapped_by"].as_str()),
        (Some(1), Some("aider-commit"))
    );
    assert_eq!(
        (w[1]["turn"].as_u64(), w[1]["mapped_by"].as_str()),
        (Some(2), Some("aider-commit"))
    );
    assert_eq!(w[2]["agent"], false);
    assert_eq!(v["session"]["format"], "aider");
}

#[test]
fn trailer_explicit_session_and_timestamps() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    std::fs::write(
        &session,
        "{\"schema\":\"sage.session/1\",\"task\":\"fix it\"}\n{\"text\":\"plan\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\n{\"text\":\"edit\",\"timestamp\":\"2026-01-01T00:00:05Z\",\"tool_calls\":[{\"name\":\"Bash\",\"arguments\":{\"command\":\"sed -i s/x/y/ app.py\"}}]}\n{\"text\":\"more\",\"timestamp\":\"2026-01-01T00:00:07Z\"}\n{\"text\":\"last\",\"timestamp\":\"2026-01-01T01:00:00Z\"}\n",
    )
    .unwrap();
    r.write("app.py", "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n");
    r.git_as(AGENT, &["add", "-A"]);
    r.git_as(AGENT, &["commit", "-q", "-m", "fix\n\nSage-Turn: 2"]);
    // the test clock: commit dates are 2026-01-01T00:00:SS with SS counting git calls
    r.write("b.txt", "b\n");
    r.commit("second");
    let s = session.to_str().unwrap();
    let v = prov(&r, &["--session", s]);
    let w = v["provenance"]["writes"].as_array().unwrap();
    assert_eq!(
        (w[0]["turn"].as_u64(), w[0]["mapped_by"].as_str()),
        (Some(2), Some("trailer"))
    );
    assert_eq!(w[1]["mapped_by"], "timestamp");
    assert_eq!(w[1]["turn"], 3);
    assert_eq!(v["session"]["found_by"], "--session");
    // --no-session leaves turns out
    let v = prov(&r, &["--no-session"]);
    assert!(v["provenance"]["writes"][0]["turn"].is_null());
    assert!(v.get("session").is_none());
}

#[test]
fn entire_checkpoint_branch() {
    let r = base();
    let claude = concat!(
        "{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"fix the ssrf\"}}\n",
        "{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"u2\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"Checking the scheme.\"}]}}\n",
        "{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"u3\",\"timestamp\":\"2026-01-01T00:00:02Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Edit\",\"input\":{\"file_path\":\"/repo/app.py\",\"old_string\":\"def fetch(url):\\n\",\"new_string\":\"def fetch(url):\\n    if not url.startswith(\\\"https://\\\"):\\n        raise ValueError(url)\\n\"}}]}}\n",
        "{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u4\",\"cwd\":\"/repo\",\"timestamp\":\"2026-01-01T00:00:03Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}]},\"toolUseResult\":{\"filePath\":\"/repo/app.py\"}}\n",
    );
    // the checkpoint branch holds the transcript
    checkpoint_branch(&r, &[("ab/cdef012345/0/full.jsonl", claude)]);
    agent_commit(
        &r,
        "app.py",
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n",
        "fix\n\nEntire-Checkpoint: abcdef012345",
    );
    let v = prov(&r, &[]);
    assert_eq!(v["session"]["format"], "claude-code");
    assert!(
        v["session"]["found_by"]
            .as_str()
            .unwrap()
            .starts_with("Entire-Checkpoint")
    );
    assert_eq!(v["provenance"]["introducing_write"]["turn"], 1);
    assert_eq!(v["provenance"]["introducing_write"]["mapped_by"], "replay");
}

/// A commit bundling many turns: the write is the turn whose edit made the anchored code,
/// not the commit's last edit (another file, a later touch-up).
#[test]
fn a_bundled_commit_lands_on_the_turn_that_wrote_the_code() {
    let r = base();
    let session = r#"schema: sage.session/1
task: fix the SSRF in fetch
turns:
  - text: "Plan: we will check the scheme."
  - text: Adding the scheme check.
    file_changes:
      - path: app.py
        old: "def fetch(url):\n"
        new: "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n"
  - text: Documenting it.
    file_changes:
      - {path: README.md, content: "https only\n"}
  - text: And the changelog.
    file_changes:
      - {path: CHANGES.md, content: "- https\n"}
"#;
    r.write("app.py", "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n");
    r.write("README.md", "https only\n");
    r.write("CHANGES.md", "- https\n");
    r.write(".sage/sessions/fix.yaml", session);
    r.commit("fix ssrf, docs, changelog");
    let v = prov(&r, &[]);
    let w = &v["provenance"]["introducing_write"];
    assert_eq!(
        (w["turn"].as_u64(), w["mapped_by"].as_str()),
        (Some(2), Some("replay")),
        "{v}"
    );
    assert_eq!(v["session"]["scope"]["first"], 1);
}

/// Timestamps map only inside a session's span, and only a session that touched the file;
/// every write left unmapped says why.
#[test]
fn timestamps_never_map_into_an_unrelated_session() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    // a session twelve days before the commit, about another file
    let old = dir.path().join("old.jsonl");
    std::fs::write(
        &old,
        "{\"schema\":\"sage.session/1\",\"task\":\"docs\"}\n{\"text\":\"writing docs\",\"timestamp\":\"2025-12-20T00:00:00Z\",\"file_changes\":[{\"path\":\"docs.md\",\"content\":\"x\\n\"}]}\n",
    )
    .unwrap();
    r.write("app.py", "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n");
    r.commit("fix");
    let v = prov(&r, &["--session", old.to_str().unwrap()]);
    let w = &v["provenance"]["introducing_write"];
    assert!(w["turn"].is_null(), "{v}");
    assert_eq!(
        w["unmapped_reason"],
        "no edit of the session touches the files this commit changed"
    );
    // the same session, now editing app.py but long before the commit
    std::fs::write(
        &old,
        "{\"schema\":\"sage.session/1\",\"task\":\"docs\"}\n{\"text\":\"an edit\",\"timestamp\":\"2025-12-20T00:00:00Z\",\"file_changes\":[{\"path\":\"app.py\",\"old\":\"nothing like it\",\"new\":\"x\"}]}\n",
    )
    .unwrap();
    let v = prov(&r, &["--session", old.to_str().unwrap()]);
    let w = &v["provenance"]["introducing_write"];
    assert!(w["turn"].is_null(), "{v}");
    let reason = w["unmapped_reason"].as_str().unwrap();
    assert!(reason.contains("after the session's last turn"), "{reason}");
    // the text report says it too
    let f = r.finding("a.yaml", ANCHOR);
    let text = r
        .sage(&[
            "provenance",
            "--finding",
            &f,
            "--session",
            old.to_str().unwrap(),
        ])
        .ok()
        .stdout;
    assert!(
        text.contains("not mapped to a turn: the commit is"),
        "{text}"
    );
}

/// A Claude Code session of one edit of app.py (or, with `other`, of another file).
fn claude_session(edit_path: &str, lines_before: usize) -> String {
    let mut s = String::from(
        "{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"fix the ssrf\"}}\n",
    );
    for i in 0..lines_before {
        s.push_str(&format!("{{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"p{i}\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{{\"id\":\"mp{i}\",\"model\":\"claude-x\",\"content\":[{{\"type\":\"text\",\"text\":\"Looking around, step {i}.\"}}]}}}}\n"));
    }
    s.push_str(&format!("{{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"u3\",\"timestamp\":\"2026-01-01T00:00:02Z\",\"message\":{{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Edit\",\"input\":{{\"file_path\":\"/repo/{edit_path}\",\"old_string\":\"def fetch(url):\\n\",\"new_string\":\"def fetch(url):\\n    if not url.startswith(\\\"https://\\\"):\\n        raise ValueError(url)\\n\"}}}}]}}}}\n"));
    s.push_str(&format!("{{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u4\",\"cwd\":\"/repo\",\"timestamp\":\"2026-01-01T00:00:03Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}}]}},\"toolUseResult\":{{\"filePath\":\"/repo/{edit_path}\"}}}}\n"));
    s
}

/// Writes an `entire/checkpoints/v1` branch holding `files` and comes back to the agent branch.
fn checkpoint_branch(r: &Repo, files: &[(&str, &str)]) {
    r.git(&["checkout", "-q", "--orphan", "entire/checkpoints/v1"]);
    r.git(&["rm", "-rq", "--cached", "."]);
    std::fs::remove_file(r.path().join("app.py")).unwrap();
    for (path, content) in files {
        r.write(path, content);
    }
    r.commit_as(HUMAN, "checkpoints");
    r.git(&["checkout", "-q", "-f", "agent"]);
    for (path, _) in files {
        let top = path.split('/').next().unwrap();
        let _ = std::fs::remove_dir_all(r.path().join(top));
        let _ = std::fs::remove_file(r.path().join(top));
    }
}

/// The agent commits `path` with `content` and the message `msg`.
fn agent_commit(r: &Repo, path: &str, content: &str, msg: &str) {
    r.write(path, content);
    r.git_as(AGENT, &["add", path]);
    r.git_as(AGENT, &["commit", "-q", "-m", msg]);
}

/// Entire on a plain clone: the checkpoints only as origin/entire/checkpoints/v1; the
/// checkpoint's several sessions chosen by evidence; a missing branch gets a hint.
#[test]
fn entire_checkpoints_on_a_plain_clone_chosen_by_evidence() {
    let r = base();
    // session 0 edits another file; session 1 is a partial copy; session 2 the full one
    checkpoint_branch(
        &r,
        &[
            (
                "ab/cdef012345/0/full.jsonl",
                claude_session("other.py", 0).as_str(),
            ),
            (
                "ab/cdef012345/1/full.jsonl",
                claude_session("app.py", 0).as_str(),
            ),
            (
                "ab/cdef012345/2/full.jsonl",
                claude_session("app.py", 3).as_str(),
            ),
            ("ab/cdef012345/3/metadata.json", "{}"),
        ],
    );
    agent_commit(
        &r,
        "app.py",
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n",
        "fix\n\nEntire-Checkpoint: abcdef012345",
    );
    // a plain clone: only remote-tracking refs
    let clone = r.home().join("clone");
    let url = format!("file://{}", r.path().display());
    r.git(&[
        "clone",
        "-q",
        "--no-single-branch",
        &url,
        clone.to_str().unwrap(),
    ]);
    let f = r.finding("a.yaml", ANCHOR);
    let run = |extra: &[&str]| {
        let mut args = vec![
            "provenance",
            "--finding",
            f.as_str(),
            "--format",
            "json",
            "--base",
            "origin/main",
        ];
        args.extend_from_slice(extra);
        r.sage_in(&clone, &args).ok().json()
    };
    let v = run(&[]);
    let s = &v["session"];
    assert_eq!(
        s["source"], "origin/entire/checkpoints/v1:ab/cdef012345/2/full.jsonl",
        "{v}"
    );
    assert!(
        s["chosen_because"].as_str().unwrap().contains("fullest"),
        "{s}"
    );
    assert_eq!(s["considered"].as_array().unwrap().len(), 2, "{s}");
    assert!(
        s["considered"]
            .to_string()
            .contains("no edit of the anchored file"),
        "{s}"
    );
    assert_eq!(v["provenance"]["introducing_write"]["turn"], 4);
    assert!(
        v["provenance"]["notes"]
            .to_string()
            .contains("holds no transcript file"),
        "{}",
        v["provenance"]["notes"]
    );
    // without the checkpoint branch: a hint to fetch it
    let bare = r.home().join("bare");
    r.git(&[
        "clone",
        "-q",
        "--single-branch",
        "--branch",
        "agent",
        &url,
        bare.to_str().unwrap(),
    ]);
    let v = r
        .sage_in(
            &bare,
            &[
                "provenance",
                "--finding",
                f.as_str(),
                "--format",
                "json",
                "--base",
                "origin/agent~1",
            ],
        )
        .ok()
        .json();
    assert!(
        v["provenance"]["notes"]
            .to_string()
            .contains("git fetch origin entire/checkpoints/v1"),
        "{}",
        v["provenance"]["notes"]
    );
    // a session whose blob this clone lacks (a partial clone): noted, the others still answer
    let blob = r.git(&[
        "rev-parse",
        "entire/checkpoints/v1:ab/cdef012345/2/full.jsonl",
    ]);
    let blob = blob.trim();
    let loose = r
        .path()
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    std::fs::remove_file(&loose).unwrap();
    let v = r
        .sage(&[
            "provenance",
            "--finding",
            f.as_str(),
            "--format",
            "json",
            "--base",
            "main",
        ])
        .ok()
        .json();
    assert_eq!(
        v["session"]["source"], "entire/checkpoints/v1:ab/cdef012345/1/full.jsonl",
        "{v}"
    );
    let notes = v["provenance"]["notes"].to_string();
    assert!(
        notes.contains(&format!("blob {} is missing", &blob[..7])) && notes.contains("skipped"),
        "{notes}"
    );
}

/// The introducing commit's own checkpoint holds a copy cut before the edit that wrote the
/// code; a later commit's checkpoint holds the whole session. Evidence beats ownership: the
/// session with the edit is chosen, and the write maps to that edit's turn.
#[test]
fn a_truncated_own_copy_loses_to_the_session_with_the_edit() {
    let r = base();
    let full = claude_session("app.py", 2);
    let cut: String = full.lines().take(3).map(|l| format!("{l}\n")).collect();
    checkpoint_branch(
        &r,
        &[
            ("ab/cdef012345/0/full.jsonl", cut.as_str()),
            ("cd/ef01234567/0/full.jsonl", full.as_str()),
        ],
    );
    agent_commit(
        &r,
        "app.py",
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n",
        "fix\n\nEntire-Checkpoint: abcdef012345",
    );
    agent_commit(
        &r,
        "README.md",
        "https only\n",
        "docs\n\nEntire-Checkpoint: cdef01234567",
    );
    let v = prov(&r, &["--base", "main"]);
    let s = &v["session"];
    assert_eq!(
        s["source"], "entire/checkpoints/v1:cd/ef01234567/0/full.jsonl",
        "{v}"
    );
    assert!(
        s["chosen_because"]
            .as_str()
            .unwrap()
            .contains("the only one with an edit that wrote the anchored code"),
        "{s}"
    );
    assert!(
        s["considered"].to_string().contains("ab/cdef012345/0"),
        "{s}"
    );
    let w = &v["provenance"]["introducing_write"];
    assert_eq!(
        (w["turn"].as_u64(), w["mapped_by"].as_str()),
        (Some(3), Some("replay")),
        "{w}"
    );
}

/// Aider appends to its history as it works, so the range rarely changes it: the copy in the
/// working tree counts, else the newest committed version on any branch — even one deleted
/// since — as long as it logs one of the range's commits.
#[test]
fn an_aider_history_outside_the_range_that_logs_its_commit() {
    let r = base();
    agent_commit(
        &r,
        "app.py",
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n",
        "fix: check the scheme",
    );
    let sha = r
        .git(&["rev-parse", "--short=7", "HEAD"])
        .trim()
        .to_string();
    let history = |commit: &str| {
        format!(
            "\n# aider chat started at 2026-01-01 10:00:00\n\n#### look around  \n\nReading app.py.\n\n#### fix the ssrf  \n\napp.py\n```python\n<<<<<<< SEARCH\ndef fetch(url):\n=======\ndef fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n>>>>>>> REPLACE\n```\n\n> Applied edit to app.py  \n> Commit {commit} fix: check the scheme  \n"
        )
    };
    let run = || prov(&r, &["--base", "main"]);
    // nothing logs the commit: no session
    r.write(".aider.chat.history.md", &history("0000000"));
    let v = run();
    assert!(v.get("session").is_none(), "{v}");
    // the working tree's copy
    r.write(".aider.chat.history.md", &history(&sha));
    let v = run();
    let s = &v["session"];
    assert!(
        s["found_by"].as_str().unwrap().contains("working tree"),
        "{s}"
    );
    assert_eq!(v["provenance"]["introducing_write"]["turn"], 2, "{v}");
    // committed later on another branch, then deleted there: the version that logs it
    r.git(&["checkout", "-q", "-b", "later"]);
    r.git(&["add", ".aider.chat.history.md"]);
    r.commit_as(HUMAN, "keep the chat");
    let kept = r
        .git(&["rev-parse", "--short=7", "HEAD"])
        .trim()
        .to_string();
    r.remove(".aider.chat.history.md");
    r.commit_as(HUMAN, "drop the chat");
    r.git(&["checkout", "-q", "agent"]);
    let v = prov(&r, &["--base", "main", "agent"]);
    let s = &v["session"];
    assert_eq!(s["source"], format!("{kept}:.aider.chat.history.md"), "{s}");
    assert!(
        s["found_by"]
            .as_str()
            .unwrap()
            .contains(&format!("logs range commit {sha}")),
        "{s}"
    );
    assert_eq!(v["provenance"]["introducing_write"]["turn"], 2, "{v}");
    // A commit-graph with changed-path filters finds the same deleted version; so does one
    // gone stale (a branch tip it does not hold), and one without filters.
    r.git(&["commit-graph", "write", "--reachable", "--changed-paths"]);
    assert_eq!(prov(&r, &["--base", "main", "agent"]), v);
    r.git(&["checkout", "-q", "-b", "newer", "later"]);
    r.write("notes.txt", "n\n");
    r.commit_as(HUMAN, "newer than the graph");
    r.git(&["checkout", "-q", "agent"]);
    assert_eq!(prov(&r, &["--base", "main", "agent"]), v);
    r.git(&["commit-graph", "write", "--reachable"]);
    assert_eq!(prov(&r, &["--base", "main", "agent"]), v);
}

/// A session runs across commits: the one that wrote the code was checkpointed with the
/// commit before the range, and the committing commit's own checkpoint holds only the commit
/// step. The earlier checkpoint is searched because none of the range's wrote the code.
#[test]
fn the_session_that_wrote_it_may_be_checkpointed_before_the_range() {
    let r = base();
    checkpoint_branch(
        &r,
        &[
            (
                "ab/cdef012345/0/full.jsonl",
                claude_session("other.py", 0).as_str(),
            ),
            (
                "cd/ef01234567/0/full.jsonl",
                claude_session("app.py", 1).as_str(),
            ),
        ],
    );
    agent_commit(
        &r,
        "PLAN.md",
        "check the scheme\n",
        "plan\n\nEntire-Checkpoint: cdef01234567",
    );
    agent_commit(
        &r,
        "app.py",
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n",
        "fix\n\nEntire-Checkpoint: abcdef012345",
    );
    let v = prov(&r, &["--base", "agent~1"]);
    let s = &v["session"];
    assert_eq!(
        s["source"], "entire/checkpoints/v1:cd/ef01234567/0/full.jsonl",
        "{v}"
    );
    assert!(
        s["found_by"].as_str().unwrap().contains("before the range"),
        "{s}"
    );
    let w = &v["provenance"]["introducing_write"];
    assert_eq!(w["turn"], 2, "{w}");
    // a range whose own session wrote it does not look further back
    let v = prov(&r, &["--base", "main"]);
    assert_eq!(
        v["session"]["source"], "entire/checkpoints/v1:cd/ef01234567/0/full.jsonl",
        "{v}"
    );
    assert!(
        !v["session"]["found_by"]
            .as_str()
            .unwrap()
            .contains("before the range")
    );
}

/// A rebased commit keeps its author time but gets a later committer time: the edit that
/// wrote the code is the last one before the author time, not a later rewrite that happened
/// before the rebase.
#[test]
fn a_rebased_commit_is_placed_by_its_author_time() {
    let r = base();
    let fixed = "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n";
    let mut s = String::from(
        "{\"type\":\"user\",\"uuid\":\"u1\",\"cwd\":\"/repo\",\"timestamp\":\"2025-12-31T22:40:00Z\",\"message\":{\"role\":\"user\",\"content\":\"fix the ssrf\"}}\n",
    );
    let write = |s: &mut String, id: &str, at: &str, content: &str| {
        let content = serde_json::to_string(content).unwrap();
        s.push_str(&format!("{{\"type\":\"assistant\",\"uuid\":\"a{id}\",\"timestamp\":\"{at}\",\"message\":{{\"id\":\"m{id}\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t{id}\",\"name\":\"Write\",\"input\":{{\"file_path\":\"/repo/app.py\",\"content\":{content}}}}}]}}}}\n"));
        s.push_str(&format!("{{\"type\":\"user\",\"uuid\":\"r{id}\",\"cwd\":\"/repo\",\"timestamp\":\"{at}\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t{id}\",\"content\":\"ok\"}}]}}}}\n"));
    };
    write(&mut s, "1", "2025-12-31T22:50:00Z", fixed);
    s.push_str("{\"type\":\"user\",\"uuid\":\"u2\",\"cwd\":\"/repo\",\"timestamp\":\"2025-12-31T23:30:00Z\",\"message\":{\"role\":\"user\",\"content\":\"now tidy it\"}}\n");
    write(
        &mut s,
        "2",
        "2025-12-31T23:40:00Z",
        &format!("# tidy\n{fixed}"),
    );
    r.write(".sage/sessions/s.jsonl", &s);
    // committed by hand with a reviewer's line, so no edit reproduces it: the holder decides
    r.write("app.py", &format!("{fixed}# reviewed\n"));
    r.git_as(AGENT, &["add", "."]);
    r.git_as(
        AGENT,
        &[
            "commit",
            "-q",
            "--date",
            "2025-12-31T23:00:00Z",
            "-m",
            "fix",
        ],
    );
    let v = prov(&r, &["--base", "main"]);
    let w = &v["provenance"]["introducing_write"];
    assert_eq!(
        (w["turn"].as_u64(), w["mapped_by"].as_str()),
        (Some(1), Some("fragment")),
        "{v}"
    );
}

/// Commits app.py and a session under .sage/sessions/, then runs provenance from `base`.
fn with_session(r: &Repo, app: &str, session: &str, base: &str) -> serde_json::Value {
    r.write("app.py", app);
    r.write(".sage/sessions/s.yaml", session);
    r.commit("fix");
    prov(r, &["--base", base])
}

/// The introducing write's turn and how it was mapped.
fn intro(v: &serde_json::Value) -> (Option<u64>, Option<&str>) {
    let w = &v["provenance"]["introducing_write"];
    (w["turn"].as_u64(), w["mapped_by"].as_str())
}

const FIXED: &str = "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n";

/// The file written whole, rewritten, then written back as committed: the commit's content
/// comes from the last write before the commit, not the first that happened to match.
#[test]
fn replay_takes_the_last_write_before_the_commit() {
    let r = base();
    let yaml = |s: &str| serde_json::to_string(s).unwrap();
    let session = format!(
        "schema: sage.session/1\ntask: fix the SSRF\nturns:\n  - text: Writing it.\n    timestamp: 2025-12-31T23:50:00Z\n    file_changes:\n      - {{path: app.py, content: {fixed}}}\n  - text: Trying another way.\n    timestamp: 2025-12-31T23:51:00Z\n    file_changes:\n      - {{path: app.py, content: {other}}}\n  - text: Back to the first version.\n    timestamp: 2025-12-31T23:52:00Z\n    file_changes:\n      - {{path: app.py, content: {fixed}}}\n  - text: Done, later tidying.\n    timestamp: 2026-01-01T03:00:00Z\n    file_changes:\n      - {{path: app.py, content: {fixed}}}\n",
        fixed = yaml(FIXED),
        other = yaml("def fetch(url):\n    return get(url)\n"),
    );
    let v = with_session(&r, FIXED, &session, "main");
    assert_eq!(intro(&v), (Some(3), Some("replay")), "{v}");
}

/// Code the commit holds twice is there once both copies are: the edit that added the
/// second copy completed it.
#[test]
fn code_held_twice_is_written_by_the_edit_that_completes_it() {
    let r = base();
    r.write(
        "app.py",
        "def fetch(url):\n    return get(url)\n\ndef head(url):\n    return get(url)\n",
    );
    r.commit("two functions");
    let session = r#"schema: sage.session/1
task: fix the SSRF
turns:
  - text: Checking fetch.
    file_changes:
      - path: app.py
        old: "def fetch(url):\n"
        new: "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n"
  - text: And head.
    file_changes:
      - path: app.py
        old: "def head(url):\n"
        new: "def head(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n"
"#;
    let v = with_session(
        &r,
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n\ndef head(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n",
        session,
        "HEAD~1",
    );
    assert_eq!(intro(&v), (Some(2), Some("replay")), "{v}");
}

/// The session's edits of the file landed on other lines than the anchored code (a person or
/// a generator wrote that): the write stays unmapped and says so; no commit-level or timed
/// guess stands in for it.
#[test]
fn edits_that_wrote_other_lines_do_not_claim_the_code() {
    let r = base();
    let session = r#"schema: sage.session/1
task: document fetch
turns:
  - text: Adding a docstring.
    timestamp: 2025-12-31T23:50:00Z
    file_changes:
      - path: app.py
        old: "def fetch(url):\n"
        new: "def fetch(url):\n    \"\"\"Fetches a URL over the network,\n    returning the body.\"\"\"\n"
  - text: Adding a changelog line.
    timestamp: 2025-12-31T23:51:00Z
    file_changes:
      - {path: CHANGES.md, content: "- docs\n"}
"#;
    r.write("app.py", "def fetch(url):\n    \"\"\"Fetches a URL over the network,\n    returning the body.\"\"\"\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return get(url)\n");
    r.write("CHANGES.md", "- docs\n");
    r.write(".sage/sessions/s.yaml", session);
    r.commit("docs and a check");
    let v = prov(&r, &["--base", "main"]);
    let w = &v["provenance"]["introducing_write"];
    assert!(w["turn"].is_null(), "{v}");
    let why = v["provenance"]["writes"][0]["unmapped_reason"].to_string();
    assert!(
        why.contains("wrote other lines of it, not the anchored code"),
        "{why}"
    );
}

/// Every edit of the file shows its text and none holds the anchored code: the commit's time
/// inside the session is no evidence that the session wrote it.
#[test]
fn a_time_does_not_stand_in_for_an_edit_that_is_not_there() {
    let r = base();
    let session = r#"schema: sage.session/1
task: rename the helper
turns:
  - text: Renaming.
    timestamp: 2025-12-31T23:50:00Z
    file_changes:
      - path: app.py
        old: "    return get(url)\n"
        new: "    return fetch_url(url)\n"
  - text: Done.
    timestamp: 2026-01-01T00:30:00Z
"#;
    let v = with_session(
        &r,
        "def fetch(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return fetch_url(url)\n",
        session,
        "main",
    );
    let w = &v["provenance"]["writes"][0];
    assert!(w["turn"].is_null(), "{v}");
    assert!(
        w["unmapped_reason"]
            .as_str()
            .unwrap()
            .contains("none of them holds the anchored code"),
        "{w}"
    );
}

/// Bad input around sessions: a clear line, no wrong mapping, no crash.
#[test]
fn bad_sessions_say_why_and_map_nothing_wrong() {
    // a checkpoint ref whose checkpoint is not a tree
    let r = base();
    checkpoint_branch(&r, &[("ab/cdef012345", "not a folder\n")]);
    agent_commit(
        &r,
        "app.py",
        FIXED,
        "fix\n\nEntire-Checkpoint: abcdef012345",
    );
    let v = prov(&r, &["--base", "main"]);
    assert_eq!(v["provenance"]["status"], "introduced");
    assert!(v.get("session").is_none(), "{v}");
    assert!(
        v["provenance"]["notes"]
            .to_string()
            .contains("entire/checkpoints/v1:ab/cdef012345 is a file, not a checkpoint folder"),
        "{}",
        v["provenance"]["notes"]
    );

    let case = |session: &str, name: &str| {
        let r = base();
        r.write("app.py", FIXED);
        r.write(&format!(".sage/sessions/{name}"), session);
        r.commit("fix");
        prov(&r, &["--base", "main"])
    };
    // a session with no edits
    let v = case(
        "schema: sage.session/1\ntask: fix it\nturns:\n  - text: Looking.\n  - text: Done.\n",
        "s.yaml",
    );
    let w = &v["provenance"]["introducing_write"];
    assert!(w["turn"].is_null(), "{v}");
    assert_eq!(
        w["unmapped_reason"], "the session holds no file edits",
        "{v}"
    );
    // Windows absolute paths in a Claude Code log
    let win = concat!(
        "{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u1\",\"cwd\":\"C:\\\\work\\\\shop\",\"message\":{\"role\":\"user\",\"content\":\"fix the ssrf\"}}\n",
        "{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"u2\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Edit\",\"input\":{\"file_path\":\"C:\\\\work\\\\shop\\\\app.py\",\"old_string\":\"def fetch(url):\\n\",\"new_string\":\"def fetch(url):\\n    if not url.startswith(\\\"https://\\\"):\\n        raise ValueError(url)\\n\"}}]}}\n",
        "{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u3\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}]}}\n",
    );
    let v = case(win, "s.jsonl");
    let w = &v["provenance"]["introducing_write"];
    assert_eq!(
        (w["turn"].as_u64(), w["mapped_by"].as_str()),
        (Some(1), Some("replay")),
        "{v}"
    );
    // edits that never apply and do not hold the code
    let v = case(
        "schema: sage.session/1\ntask: fix it\nturns:\n  - text: Editing.\n    file_changes:\n      - {path: app.py, old: \"no such text\\n\", new: \"other text\\n\"}\n",
        "s.yaml",
    );
    let w = &v["provenance"]["introducing_write"];
    assert!(w["turn"].is_null(), "{v}");
    assert!(
        w["unmapped_reason"]
            .as_str()
            .unwrap()
            .contains("do not reproduce this commit"),
        "{v}"
    );
}
