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
