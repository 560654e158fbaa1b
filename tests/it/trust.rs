//! Issue 43's trust faults through the binary, each reproduced first: what must never happen
//! whatever the input — a panic on a closed pipe, among others.

use std::io::Write;
use std::process::Stdio;

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
