//! Issue 43's trust faults through the binary, each reproduced first: what must never happen
//! whatever the input — a panic on a closed pipe, among others.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::{DEMO_FINDING, Repo};

/// Runs git-sage in `dir` with its stdout a pipe nobody reads (closed before it starts).
pub(crate) fn into_closed_pipe(
    r: &Repo,
    dir: &std::path::Path,
    args: &[&str],
    stdin: &[u8],
) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = r
        .sage_command(dir, args)
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that does not read its input may have gone already.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every command that writes to stdout treats a reader that went away as success, as
/// ripgrep does: no panic, no error line, exit 0.
#[test]
fn every_command_into_a_closed_pipe_exits_quietly() {
    let r = Repo::new();
    let d = r.demo();
    let session = ".sage/sessions/fix-ssrf.yaml";
    let runs: &[&[&str]] = &[
        &["--help"],
        &["blame-origin", "--help"],
        &["--version"],
        &["completions", "bash"],
        &["checkpoint"],
        &["turns", session],
        &["turns", session, "--format", "json"],
        &[
            "judge",
            session,
            "--cwe",
            "918",
            "--format",
            "json",
            "--no-cache",
        ],
        &["blame-origin", "--finding", DEMO_FINDING],
        &[
            "blame-origin",
            "--finding",
            DEMO_FINDING,
            "--format",
            "json",
        ],
        &["blame-origin", "--finding", DEMO_FINDING, "--format", "md"],
        &[
            "blame-origin",
            "--finding",
            DEMO_FINDING,
            "--format",
            "sarif",
        ],
        &["provenance", "--finding", DEMO_FINDING],
        &[
            "blame-origin",
            "--finding",
            DEMO_FINDING,
            "--format",
            "html",
        ],
        &["config"],
        &["hooks", "status"],
    ];
    for args in runs {
        let (code, err) = into_closed_pipe(&r, &d, args, b"");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

/// Issue 43 (6): a committed `.agent-trace/git-sage.jsonl` link to a file outside the worktree
/// was rewritten by `blame-origin --agent-trace`. It is refused with one line, exit 2.
#[test]
fn agent_trace_records_never_follow_a_link_out_of_the_worktree() {
    let r = Repo::new();
    let d = r.demo();
    let outside = r.home().join("bashrc");
    std::fs::write(&outside, "alias ll='ls -l'\n").unwrap();
    std::fs::create_dir_all(d.join(".agent-trace")).unwrap();
    std::os::unix::fs::symlink(&outside, d.join(".agent-trace/git-sage.jsonl")).unwrap();
    r.blame_demo(&d, &["--agent-trace", "-q"])
        .bad_input("outside the worktree");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "alias ll='ls -l'\n"
    );
    // A link that stays inside is followed.
    std::fs::remove_file(d.join(".agent-trace/git-sage.jsonl")).unwrap();
    std::os::unix::fs::symlink("mine.jsonl", d.join(".agent-trace/git-sage.jsonl")).unwrap();
    r.blame_demo(&d, &["--agent-trace", "-q"]).ok();
    assert!(d.join(".agent-trace/mine.jsonl").exists());
}

/// Issue 43 (6): every file git sage writes in the worktree by its own choice of path refuses
/// a committed link out of it: an agent's settings file (`guard install` and `uninstall`) and
/// an agent file the repository commits (`checkpoint --agent-file CLAUDE.md`).
#[test]
fn settings_and_agent_files_never_follow_a_link_out_of_the_worktree() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let outside = r.home().join("user-settings.json");
    std::fs::write(&outside, "{\"theme\": \"dark\"}\n").unwrap();
    std::fs::create_dir_all(d.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, d.join(".claude/settings.json")).unwrap();
    for verb in ["install", "uninstall"] {
        r.sage(&["-C", ds, "guard", verb, "--agent", "claude-code"])
            .bad_input("outside the worktree");
    }
    let bashrc = r.home().join("bashrc");
    std::fs::write(&bashrc, "alias ll='ls -l'\n").unwrap();
    std::os::unix::fs::symlink(&bashrc, d.join("CLAUDE.md")).unwrap();
    r.sage(&["-C", ds, "checkpoint", "--agent-file", "CLAUDE.md"])
        .bad_input("CLAUDE.md is a symbolic link to");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "alias ll='ls -l'\n"
    );
}

/// Issue 43 (4): a token pasted into a commit subject appeared in the JSON report's
/// `introducing_write.summary` and on the HTML page.
#[test]
fn a_secret_in_a_commit_subject_stays_out_of_every_report() {
    use crate::common::{AGENT, HUMAN};
    let r = Repo::new();
    r.write(
        "media/fetcher.py",
        "import urllib.request\n\n\ndef download(url):\n    return urllib.request.urlopen(url).read()\n",
    );
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    let f = r.finding(
        "ssrf.yaml",
        "id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - 'if not url.startswith(\"https://\"):'\n",
    );
    r.write(
        "media/fetcher.py",
        "import urllib.request\n\n\ndef download(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return urllib.request.urlopen(url).read()\n",
    );
    let keys = [
        "ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2",
        "sk_live_Zq8Xw2Ve4Rt6Yu8Io0Pa2S",
        "AKIAQWERTYUIOPASDFGH",
    ];
    r.commit_as(
        AGENT,
        &format!("fix SSRF, CI token {} {} {}", keys[0], keys[1], keys[2]),
    );
    for format in ["json", "html", "md", "text", "sarif"] {
        let run = r.sage(&[
            "blame-origin",
            "--finding",
            &f,
            "--agent",
            "Claude Agent",
            "--format",
            format,
            "-q",
        ]);
        assert!(run.code == 0, "{format}: {run:?}");
        for k in keys {
            assert!(!run.stdout.contains(k), "{k} in the {format} report");
        }
        if format == "json" {
            let v = run.json();
            let summary = v["provenance"]["introducing_write"]["summary"].to_string();
            assert!(summary.contains("[REDACTED:github-token]"), "{summary}");
        }
    }
}

/// Issue 43 (13): a SARIF `startLine` of 4294967305 wrapped to line 9 and ran; `--out DIR`
/// exited 3; `--out` onto a FIFO nobody reads blocked for ever.
#[test]
fn line_numbers_out_of_range_a_folder_and_a_fifo_nobody_reads_end_with_one_line() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let sarif = r.home().join("big.sarif");
    std::fs::write(
        &sarif,
        r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Bandit"}},"results":[{"ruleId":"B310","message":{"text":"urlopen"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"media/fetcher.py"},"region":{"startLine":4294967305}}}]}]}]}"#,
    )
    .unwrap();
    r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        sarif.to_str().unwrap(),
    ])
    .bad_input("startLine = 4294967305 is not a line number");
    let folder = r.home().join("reports");
    std::fs::create_dir_all(&folder).unwrap();
    r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        DEMO_FINDING,
        "--out",
        folder.to_str().unwrap(),
    ])
    .bad_input("is a directory");
    let fifo = r.home().join("nobody-reads");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let start = std::time::Instant::now();
    let run = r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        DEMO_FINDING,
        "--format",
        "json",
        "--out",
        fifo.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("FIFO"), "{}", run.stderr);
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

/// Issue 43 (14): SARIF `artifactLocation.uri` was not percent-encoded; a path with a space,
/// `#`, `%`, `?` and brackets is encoded, and read back as the same path.
#[test]
fn sarif_uris_are_percent_encoded_and_read_back() {
    use crate::common::{AGENT, HUMAN};
    let r = Repo::new();
    let path = "media/a b#c%d?e[1].py";
    r.write(path, "def download(url):\n    return url\n");
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write(
        path,
        "def download(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return url\n",
    );
    r.commit_as(AGENT, "fix");
    let f = r.finding(
        "odd.yaml",
        &format!("id: odd\ncwe: 918\nfile: '{path}'\nfragments:\n  - 'if not url.startswith(\"https://\"):'\n"),
    );
    let out = r.home().join("odd.sarif");
    r.sage(&[
        "blame-origin",
        "--finding",
        &f,
        "--agent",
        "Claude Agent",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ])
    .ok();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let uri =
        &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(uri, "media/a%20b%23c%25d%3Fe%5B1%5D.py");
    // Read back as a finding: the same file.
    let back = r
        .sage(&[
            "provenance",
            "--finding",
            out.to_str().unwrap(),
            "--agent",
            "Claude Agent",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(back["finding"]["file"], path, "{back}");
}

/// Issue 43 (17, part): `git sage config` printed raw ESC from a value; `HEAD:media` (a folder)
/// was "does not exist".
#[test]
fn config_shows_controls_and_a_folder_at_a_revision_is_named_one() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    r.sage(&["-C", ds, "turns", "HEAD:media"])
        .bad_input("media is a folder at HEAD, not a session file");
    let g = Command::new("git")
        .args([
            "-C",
            ds,
            "config",
            "sage.task",
            "fix \u{1b}]0;pwned\u{7} it",
        ])
        .status()
        .unwrap();
    assert!(g.success());
    let out = r.sage(&["-C", ds, "config"]).ok().stdout;
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("\\x1b]0;pwned\\x07"), "{out}");
}

/// Issue 43 (17): a control character on line 8 of a YAML file was reported on line 1; under
/// `--all` a finding whose path is wrong, leads out or names a folder did not say which
/// finding file (or which result of a SARIF file) it was.
#[test]
fn yaml_controls_are_placed_and_every_path_error_names_its_finding() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let yaml = r.home().join("f.yaml");
    std::fs::write(
        &yaml,
        "id: x\ncwe: 918\nfile: media/fetcher.py\nlines: 1-2\n# a\n# b\n# c\ntitle: \"a\u{1}b\"\n",
    )
    .unwrap();
    r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        yaml.to_str().unwrap(),
    ])
    .bad_input("f.yaml:8: control character U+0001 at column 10");
    let session = r.home().join("s.yaml");
    std::fs::write(&session, "turns:\n  - text: ok\n\n  - text: \"a\u{7}b\"\n").unwrap();
    r.sage(&["-C", ds, "turns", session.to_str().unwrap()])
        .bad_input("s.yaml:4: control character U+0007 at column 13");

    let extra = d.join(".sage/findings/zz.yaml");
    for (file, says) in [
        (
            "media/nope.py",
            "zz.yaml: media/nope.py is not in the repository",
        ),
        (
            "../../etc/x.py",
            "zz.yaml: the path ../../etc/x.py leads out of the repository",
        ),
        (
            "media",
            "zz.yaml: media is a folder at HEAD; a finding names a file in it",
        ),
    ] {
        std::fs::write(
            &extra,
            format!("id: y\ncwe: 918\nfile: {file}\nlines: 1-2\n"),
        )
        .unwrap();
        r.sage(&["-C", ds, "blame-origin", "--all", "-q"])
            .bad_input(says);
    }
    std::fs::remove_file(&extra).unwrap();
    let sarif = r.home().join("two.sarif");
    let result = |uri: &str| {
        serde_json::json!({"ruleId": "r", "message": {"text": "ssrf"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": 1}}}]})
    };
    std::fs::write(
        &sarif,
        serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
            "results": [result("media/fetcher.py"), result("media/nope.py")]}]})
        .to_string(),
    )
    .unwrap();
    let run = r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--all",
        "--finding",
        sarif.to_str().unwrap(),
    ]);
    assert!(
        run.stderr
            .contains("two.sarif (result 2): media/nope.py is not in the repository"),
        "{run:?}"
    );
}

/// Issue 43 (17): a repository path holding a newline split one-line messages in two.
#[test]
fn a_newline_in_the_repository_path_keeps_messages_on_one_line() {
    let r = Repo::new();
    let odd = r.home().join("a\nb");
    std::fs::create_dir_all(&odd).unwrap();
    let d = odd.join("demo");
    r.sage(&["demo", "--keep", d.to_str().unwrap(), "--format", "json"])
        .ok();
    let run = r
        .sage(&["-C", d.to_str().unwrap(), "hooks", "install"])
        .ok();
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{:?}", run.stderr);
    assert!(lines[0].contains("a\\nb/demo"), "{lines:?}");
}
