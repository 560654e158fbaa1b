//! Issue 43's trust faults through the binary, each reproduced first: what must never happen
//! whatever the input — a panic on a closed pipe, among others.

use std::process::{Command, Stdio};

use crate::common::{DEMO_FINDING, Repo};

/// Runs git-sage in `dir` with its stdout a pipe nobody reads (closed before it starts).
fn into_closed_pipe(r: &Repo, dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_git-sage"))
        .args(args)
        .current_dir(dir)
        .env("HOME", r.home())
        .env("XDG_CONFIG_HOME", r.home().join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
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
        let (code, err) = into_closed_pipe(&r, &d, args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}
