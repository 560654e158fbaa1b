//! Faults and hostile inputs: hooks that must never break the user's git, outputs onto special
//! files, unbounded inputs. Devices are made in temporary directories (never the system's own
//! /dev entries); where this process may not make them, CI fails and a local run says skipped.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{DEMO_FINDING, Repo};

/// A git run with exactly `path` as PATH (so git-sage may be absent from it).
fn git_with_path(r: &Repo, dir: &Path, path: &str, args: &[&str]) -> crate::common::Run {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", path)
        .env("HOME", r.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", r.home().join(".gitconfig"))
        .env("GIT_AUTHOR_NAME", "Dana Dev")
        .env("GIT_AUTHOR_EMAIL", "dana@example.com")
        .env("GIT_COMMITTER_NAME", "Dana Dev")
        .env("GIT_COMMITTER_EMAIL", "dana@example.com");
    crate::common::Run::from(cmd.output().unwrap())
}

/// A PATH with git and a POSIX shell but no git-sage.
fn path_without_sage() -> String {
    let path = "/usr/bin:/bin".to_string();
    let found = Command::new("sh")
        .args(["-c", "command -v git-sage"])
        .env_clear()
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        !found.status.success(),
        "git-sage is installed in {path}: this test needs a PATH without it"
    );
    path
}

/// A stand-in `git-sage` that logs its arguments and standard input to `log`.
fn fake_sage(dir: &Path, log: &Path, exit: i32) -> PathBuf {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("git-sage");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"sage $*\" >> '{log}'\ncat >> '{log}'\nexit {exit}\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Whether this process may make device nodes (root); a CI run must.
fn can_mknod(dir: &Path) -> bool {
    let probe = dir.join("probe-null");
    let ok = Command::new("mknod")
        .arg(&probe)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&probe);
    if !ok {
        crate::common::skip("cannot make device nodes here (not root)");
    }
    ok
}

/// A character device like /dev/zero (1,5) or /dev/null (1,3), made in `dir`.
fn char_device(dir: &Path, name: &str, minor: u32) -> PathBuf {
    let p = dir.join(name);
    let st = Command::new("mknod")
        .arg(&p)
        .args(["c", "1", &minor.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    p
}

fn is_char_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_char_device()
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(st.success());
}

#[test]
fn hooks_without_git_sage_on_path_warn_and_let_git_go_on() {
    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.commit("init");
    let remote = r.home().join("remote.git");
    r.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    r.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    r.sage(&["hooks", "install"]).ok();
    let path = path_without_sage();
    // commit (prepare-commit-msg), merge (pre-merge-commit), push (pre-push), amend (post-rewrite)
    let commit = git_with_path(
        &r,
        r.path(),
        &path,
        &["commit", "-q", "--allow-empty", "-m", "x"],
    );
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(
        commit.stderr.contains("warning: git-sage is not on PATH"),
        "{}",
        commit.stderr
    );
    r.git(&["checkout", "-q", "-b", "side"]);
    r.write("b.txt", "b\n");
    r.commit("side");
    r.git(&["checkout", "-q", "main"]);
    let merge = git_with_path(
        &r,
        r.path(),
        &path,
        &["merge", "--no-ff", "-m", "m", "side"],
    );
    assert_eq!(merge.code, 0, "{merge:?}");
    let push = git_with_path(&r, r.path(), &path, &["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{push:?}");
    let amend = git_with_path(
        &r,
        r.path(),
        &path,
        &["commit", "-q", "--amend", "-m", "m2"],
    );
    assert_eq!(amend.code, 0, "{amend:?}");
    // the scripts shipped in hooks/ behave the same under core.hooksPath
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
    r.git(&["config", "core.hooksPath", shipped.to_str().unwrap()]);
    let commit = git_with_path(
        &r,
        r.path(),
        &path,
        &["commit", "-q", "--allow-empty", "-m", "y"],
    );
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(commit.stderr.contains("warning"), "{}", commit.stderr);
}

/// Every kind of existing hook survives install + uninstall byte for byte, mode and link
/// included, and still runs (after ours, with the same arguments and input) while installed.
#[test]
fn hooks_install_wraps_any_hook_and_uninstall_restores_it_exactly() {
    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.commit("init");
    let hooks = r.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let ran = r.home().join("ran.log");
    // A Python hook without a final newline, mode 700.
    let py = format!(
        "#!/usr/bin/env python3\nimport sys\nopen('{}', 'a').write('python ' + ' '.join(sys.argv[1:]) + '\\n')",
        ran.display()
    );
    std::fs::write(hooks.join("prepare-commit-msg"), &py).unwrap();
    std::fs::set_permissions(
        hooks.join("prepare-commit-msg"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    // A shell hook that ends in `exit 0` and reads stdin.
    let sh = format!(
        "#!/bin/sh\necho \"user pre-push $*\" >> '{}'\ncat >> '{}'\nexit 0\n",
        ran.display(),
        ran.display()
    );
    std::fs::write(hooks.join("pre-push"), &sh).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // A symlink to a hook shared with other repositories, outside this one.
    let shared = r.home().join("shared-hooks");
    std::fs::create_dir_all(&shared).unwrap();
    let target = "#!/bin/sh\n# shared post-rewrite\n# >>> git-sage >>> looks like ours, is not\n";
    std::fs::write(shared.join("post-rewrite"), target).unwrap();
    std::os::unix::fs::symlink(shared.join("post-rewrite"), hooks.join("post-rewrite")).unwrap();
    // An empty hook.
    std::fs::write(hooks.join("pre-merge-commit"), "").unwrap();

    r.sage(&["hooks", "install"]).ok();
    r.sage(&["hooks", "install"]).ok(); // idempotent
    assert_eq!(
        std::fs::read_to_string(shared.join("post-rewrite")).unwrap(),
        target,
        "a shared hook outside the repository is never modified"
    );
    let status = r.sage(&["hooks", "status"]).ok().stdout;
    for h in [
        "pre-merge-commit",
        "pre-push",
        "post-rewrite",
        "prepare-commit-msg",
    ] {
        assert!(
            status.contains(&format!("installed; then runs {h}.sage-orig")),
            "{status}"
        );
    }

    // While installed: ours first, then the user's, with the same arguments and stdin.
    let log = r.home().join("sage.log");
    let fake = fake_sage(r.home(), &log, 0);
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let remote = r.home().join("remote.git");
    r.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    let c = git_with_path(
        &r,
        r.path(),
        &path,
        &["commit", "-q", "--allow-empty", "-m", "x"],
    );
    assert_eq!(c.code, 0, "{c:?}");
    let p = git_with_path(
        &r,
        r.path(),
        &path,
        &["push", "-q", remote.to_str().unwrap(), "main"],
    );
    assert_eq!(p.code, 0, "{p:?}");
    let sage_log = std::fs::read_to_string(&log).unwrap();
    let user_log = std::fs::read_to_string(&ran).unwrap();
    assert!(
        sage_log.contains("sage hook prepare-commit-msg .git/COMMIT_EDITMSG message"),
        "{sage_log}"
    );
    assert!(
        user_log.contains("python .git/COMMIT_EDITMSG message"),
        "{user_log}"
    );
    let head = r.git(&["rev-parse", "HEAD"]);
    let pushed = format!("refs/heads/main {head} refs/heads/main ");
    assert!(
        sage_log.contains(&format!("sage hook pre-push {}", remote.display()))
            && sage_log.contains(&pushed),
        "our hook gets the arguments and stdin: {sage_log}"
    );
    assert!(
        user_log.contains(&format!("user pre-push {}", remote.display()))
            && user_log.contains(&pushed),
        "the user's hook after `exit 0`-style code still gets its stdin: {user_log}"
    );
    // A refusal from git-sage stops the push before the user's hook.
    std::fs::remove_file(&ran).unwrap();
    let fake = fake_sage(&r.home().join("refusing"), &r.home().join("x.log"), 1);
    r.write("b.txt", "b\n");
    r.commit("b");
    let refused = git_with_path(
        &r,
        r.path(),
        &format!("{}:/usr/bin:/bin", fake.display()),
        &["push", "-q", remote.to_str().unwrap(), "main"],
    );
    assert_ne!(refused.code, 0, "{refused:?}");

    r.sage(&["hooks", "uninstall"]).ok();
    assert_eq!(
        std::fs::read_to_string(hooks.join("prepare-commit-msg")).unwrap(),
        py
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&hooks.join("prepare-commit-msg")), 0o700);
    assert_eq!(std::fs::read_to_string(hooks.join("pre-push")).unwrap(), sh);
    assert_eq!(
        std::fs::read_link(hooks.join("post-rewrite")).unwrap(),
        shared.join("post-rewrite"),
        "the symlink itself is back"
    );
    assert_eq!(
        std::fs::read(hooks.join("pre-merge-commit")).unwrap(),
        b"",
        "an empty hook stays"
    );
    for h in [
        "pre-merge-commit",
        "pre-push",
        "post-rewrite",
        "prepare-commit-msg",
    ] {
        assert!(!hooks.join(format!("{h}.sage-orig")).exists());
    }
    let again = r.sage(&["hooks", "uninstall"]).ok();
    assert!(
        again.stderr.contains("no git-sage hooks were installed"),
        "{}",
        again.stderr
    );
}

#[test]
fn hooks_from_an_older_version_are_converted() {
    let r = Repo::new();
    let hooks = r.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let old = "#!/bin/sh\necho mine\n# >>> git-sage >>> (managed by `git sage hooks install`; do not edit between the markers)\ncommand -v git-sage >/dev/null 2>&1 && { git sage hook pre-push \"$@\" || exit $?; }\n# <<< git-sage <<<\n";
    std::fs::write(hooks.join("pre-push"), old).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    assert!(
        r.sage(&["hooks", "status"])
            .ok()
            .stdout
            .contains("installed by an older git-sage")
    );
    r.sage(&["hooks", "install"]).ok();
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push.sage-orig")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    r.sage(&["hooks", "uninstall"]).ok();
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    let mode = std::fs::metadata(hooks.join("pre-push"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
    // a foreign hook and a kept one both present: refuse, naming them
    std::fs::write(hooks.join("pre-push.sage-orig"), "#!/bin/sh\n").unwrap();
    r.sage(&["hooks", "install"])
        .bad_input("pre-push.sage-orig");
}

#[test]
fn out_writes_fifos_devices_and_symlink_targets_in_place() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let blame = |out: &Path| {
        r.sage(&[
            "-C",
            ds,
            "blame-origin",
            "-q",
            "--finding",
            DEMO_FINDING,
            "--format",
            "md",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    // FIFO: the reader gets the report, the FIFO stays a FIFO
    let fifo = tmp.path().join("report.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    blame(&fifo).ok();
    let got = reader.join().unwrap();
    assert!(got.contains("inadequate defence"), "{got}");
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // symlink: the target gets the report, the link stays
    let real = tmp.path().join("real.md");
    std::fs::write(&real, "old").unwrap();
    let link = tmp.path().join("link.md");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    blame(&link).ok();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("inadequate defence")
    );
    // a device node made here (the null device): still a device afterwards
    if can_mknod(tmp.path()) {
        let null = char_device(tmp.path(), "null", 3);
        blame(&null).ok();
        assert!(is_char_device(&null), "the device was replaced by a file");
        // judge --out and checkpoint follow the same rule
        r.sage(&[
            "-C",
            ds,
            "judge",
            "HEAD:.sage/sessions/fix-ssrf.yaml",
            "-q",
            "--out",
            null.to_str().unwrap(),
        ])
        .ok();
        assert!(is_char_device(&null));
    }
    // a symlinked agent file (CLAUDE.md -> AGENTS.md) keeps its link
    std::fs::write(d.join("AGENTS.md"), "# Agents\n").unwrap();
    std::os::unix::fs::symlink("AGENTS.md", d.join("CLAUDE.md")).unwrap();
    r.sage(&["-C", ds, "checkpoint", "--agent-file", "CLAUDE.md"])
        .ok();
    assert!(
        std::fs::symlink_metadata(d.join("CLAUDE.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(d.join("AGENTS.md"))
            .unwrap()
            .contains("git-sage")
    );
}

#[test]
fn endless_inputs_are_capped_by_what_is_read() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    if !can_mknod(tmp.path()) {
        return;
    }
    let zero = char_device(tmp.path(), "zero", 5);
    let z = zero.to_str().unwrap();
    let t = std::time::Instant::now();
    r.sage(&["-C", ds, "record", "--session", z])
        .bad_input("over the 20 MB cap");
    r.sage(&["-C", ds, "record", "--session", z, "--max-size", "1"])
        .bad_input("over the 1 MB cap");
    r.sage(&["turns", z]).bad_input("not a transcript format");
    r.sage(&["turns", z, "--from", "claude-code"])
        .bad_input("longer than 256 MiB");
    r.sage(&["-C", ds, "blame-origin", "--finding", z])
        .bad_input("more than 256 MiB");
    assert!(t.elapsed().as_secs() < 60, "{:?}", t.elapsed());
    // under a memory limit the same input is one line and exit 2, never an abort
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &format!(
            "ulimit -v 600000 && exec '{}' turns '{z}' --from aider",
            assert_cmd::cargo::cargo_bin("git-sage").display()
        ),
    ]);
    let run = crate::common::Run::from(cmd.output().unwrap());
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

/// Runs the binary with a deadline: a hang is a failure, not a stuck test run.
fn sage_with_deadline(r: &Repo, dir: &Path, args: &[&str], secs: u64) -> crate::common::Run {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("git-sage"))
        .current_dir(dir)
        .args(args)
        .env("HOME", r.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", r.home().join(".gitconfig"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() >= secs {
            child.kill().unwrap();
            panic!("git-sage {args:?} still running after {secs} s: a hang");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    crate::common::Run::from(child.wait_with_output().unwrap())
}

#[test]
fn a_cut_short_loose_object_is_reported_not_looped_on() {
    let r = Repo::new();
    let d = r.demo();
    // the demo's objects are loose; cut the agent's fix commit in half
    let out = Command::new("git")
        .current_dir(&d)
        .args(["rev-parse", "HEAD~1"])
        .output()
        .unwrap();
    let id = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let obj = d.join(".git/objects").join(&id[..2]).join(&id[2..]);
    crate::common::cut_in_half(&obj);
    for args in [
        &["provenance", "--finding", DEMO_FINDING][..],
        &["blame-origin", "--finding", DEMO_FINDING][..],
    ] {
        let run = sage_with_deadline(&r, &d, args, 20);
        assert_eq!(run.code, 3, "{run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(
            run.stderr.contains(&id) && run.stderr.contains("truncated"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_cut_short_pack_is_called_damage_not_an_empty_repository() {
    let r = Repo::new();
    let d = r.demo();
    let st = Command::new("git")
        .current_dir(&d)
        .args(["repack", "-adq"])
        .status()
        .unwrap();
    assert!(st.success());
    let pack = std::fs::read_dir(d.join(".git/objects/pack"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    crate::common::cut_in_half(&pack);
    let run = sage_with_deadline(&r, &d, &["provenance", "--finding", DEMO_FINDING], 20);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("damaged") && !run.stderr.contains("empty repository"),
        "{}",
        run.stderr
    );
}

/// A Claude Code log of three lines; `mid` is the assistant's planning message.
fn claude_log(mid: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"fix the ssrf in download_preview\"}}\n");
    out.extend_from_slice(b"{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"u2\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"");
    out.extend_from_slice(mid.as_bytes());
    out.extend_from_slice(b"\"}]}}\n");
    out.extend_from_slice(b"{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":\"u3\",\"timestamp\":\"2026-01-01T00:00:02Z\",\"message\":{\"id\":\"m2\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"Tests are green.\"}]}}\n");
    out
}

#[test]
fn unreadable_session_lines_are_reported_and_control_bytes_cost_no_turn() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let plan = "Plan: resolve the host and reject private and loopback addresses to stop the SSRF.";
    let clean = tmp.path().join("clean.jsonl");
    std::fs::write(&clean, claude_log(plan)).unwrap();
    let nul = tmp.path().join("nul.jsonl");
    std::fs::write(&nul, claude_log(&plan.replacen("host", "ho\0st", 1))).unwrap();
    let report = |session: &Path| {
        r.sage(&[
            "-C",
            ds,
            "blame-origin",
            "--finding",
            DEMO_FINDING,
            "--session",
            session.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json()
    };
    let (a, b) = (report(&clean), report(&nul));
    assert_eq!(
        b["session"]["turns"], 2,
        "a raw NUL in a line costs no turn"
    );
    assert_eq!(
        (&a["origin"]["turn"], &a["origin"]["type"]),
        (&b["origin"]["turn"], &b["origin"]["type"])
    );
    assert!(b["session"].get("skipped_lines").is_none());
    // a line that is not JSON at all: left out, and every report says so
    let torn = tmp.path().join("torn.jsonl");
    let mut bytes = claude_log(plan);
    bytes.splice(0..0, b"{\"type\":\"assistant\", garbage\n".iter().copied());
    std::fs::write(&torn, bytes).unwrap();
    let v = report(&torn);
    assert_eq!(
        v["session"]["skipped_lines"][0]["line"], 1,
        "{}",
        v["session"]
    );
    assert!(
        v["warnings"]
            .to_string()
            .contains("could not be read and were left out")
    );
    for format in ["text", "md", "html"] {
        let out = r
            .sage(&[
                "-C",
                ds,
                "blame-origin",
                "--finding",
                DEMO_FINDING,
                "--session",
                torn.to_str().unwrap(),
                "--format",
                format,
            ])
            .ok();
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(
            all.contains("could not be read and were left out"),
            "{format}: {all}"
        );
    }
}

#[test]
fn terminal_escapes_from_logs_and_names_are_shown_not_obeyed() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("esc.jsonl");
    std::fs::write(
        &log,
        claude_log("Plan \\u001b]0;pwned\\u0007\\u001b[2J check the host\\r"),
    )
    .unwrap();
    let l = log.to_str().unwrap();
    for args in [
        vec!["turns", l],
        vec![
            "-C",
            ds,
            "blame-origin",
            "--finding",
            DEMO_FINDING,
            "--session",
            l,
        ],
        vec!["-C", ds, "judge", l],
    ]
    .into_iter()
    // Issue 43 (7): Markdown and HTML carried them raw, to stdout and to a file.
    .chain(["md", "html"].map(|f| {
        vec![
            "-C",
            ds,
            "blame-origin",
            "--finding",
            DEMO_FINDING,
            "--session",
            l,
            "--format",
            f,
        ]
    })) {
        let out = r.sage(&args).ok();
        assert!(
            !out.stdout.contains('\u{1b}')
                && !out.stdout.contains('\u{7}')
                && !out.stdout.contains('\r'),
            "{args:?}: {:?}",
            out.stdout
        );
        if args[0] == "turns" {
            assert!(out.stdout.contains("\\x1b]0;pwned\\x07"), "{}", out.stdout);
        }
    }
    let page = tmp.path().join("page.html");
    r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        DEMO_FINDING,
        "--session",
        l,
        "--out",
        page.to_str().unwrap(),
    ])
    .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains('\u{1b}') && !html.contains('\u{7}'),
        "the page file"
    );
    // an error naming a file whose name holds an escape
    let bad = tmp.path().join("f\u{1b}[31m.yaml");
    std::fs::write(&bad, "not: [a finding").unwrap();
    let out = r.sage(&["-C", ds, "blame-origin", "--finding", bad.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
}

#[test]
fn paths_that_leave_the_repository_are_bad_input_naming_them() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let f = DEMO_FINDING;
    r.sage(&["-C", ds, "turns", "HEAD:../x"])
        .bad_input("HEAD:../x: the path leads out of the repository");
    r.sage(&["-C", ds, "turns", "HEAD:/etc/passwd"])
        .bad_input("HEAD:/etc/passwd: the path is absolute");
    r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        f,
        "--session",
        "HEAD:media/../../x",
    ])
    .bad_input("HEAD:media/../../x");
    r.sage(&[
        "-C",
        ds,
        "provenance",
        "--anchor-file",
        "../etc/passwd",
        "--anchor-snippet",
        "root",
    ])
    .bad_input("../etc/passwd leads out of the repository");
    let esc = r.finding(
        "esc.yaml",
        "file: media/../../../etc/passwd\nfragment: root\n",
    );
    r.sage(&["-C", ds, "provenance", "--finding", &esc])
        .bad_input("leads out of the repository");
    // the same paths made plain still work
    r.sage(&[
        "-C",
        ds,
        "turns",
        "HEAD:./.sage//sessions/../sessions/fix-ssrf.yaml",
    ])
    .ok();
    let ok = r.finding(
        "ok.yaml",
        "file: ./media/../media//fetcher.py\nfragment: url.startswith(\"https://\")\n",
    );
    let v = r
        .sage(&["-C", ds, "provenance", "--finding", &ok, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "introduced");
}

#[test]
fn record_keeps_other_sessions_stays_in_the_worktree_and_refuses_garbage() {
    let r = Repo::new();
    r.write("a.py", "x = 1\n");
    r.commit("base");
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("one").join("session.jsonl");
    let b = tmp.path().join("two").join("session.jsonl");
    std::fs::create_dir_all(a.parent().unwrap()).unwrap();
    std::fs::create_dir_all(b.parent().unwrap()).unwrap();
    let line = |id: &str, text: &str| {
        format!(
            "{{\"type\":\"assistant\",\"sessionId\":\"{id}\",\"uuid\":\"u{text}\",\"message\":{{\"id\":\"m{text}\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
        )
    };
    std::fs::write(&a, line("A", "first")).unwrap();
    std::fs::write(&b, line("B", "other")).unwrap();
    let rec = |p: &Path| {
        r.sage(&[
            "record",
            "--agent",
            "claude-code",
            "--session",
            p.to_str().unwrap(),
        ])
    };
    let first = rec(&a).ok();
    assert_eq!(
        first.stdout.trim(),
        ".sage/sessions/claude-code-session.jsonl"
    );
    r.git(&["add", "-A"]);
    // the same session, grown: replaces its older copy
    std::fs::write(&a, format!("{}{}", line("A", "first"), line("A", "second"))).unwrap();
    assert_eq!(
        rec(&a).ok().stdout.trim(),
        ".sage/sessions/claude-code-session.jsonl"
    );
    r.git(&["add", "-A"]);
    // another session of the same file name: the staged one is kept
    let other = rec(&b).ok();
    assert_eq!(
        other.stdout.trim(),
        ".sage/sessions/claude-code-session-2.jsonl"
    );
    assert!(
        other.stderr.contains("holds another session and is kept"),
        "{}",
        other.stderr
    );
    let kept =
        std::fs::read_to_string(r.path().join(".sage/sessions/claude-code-session.jsonl")).unwrap();
    assert!(kept.contains("second") && !kept.contains("other"), "{kept}");
    // binary garbage and files that are no transcript are refused
    let bin = tmp.path().join("garbage.jsonl");
    std::fs::write(&bin, [0u8, 159, 146, 150, 0, 1, 2, 255]).unwrap();
    rec(&bin).bad_input("is binary");
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "just some notes\n").unwrap();
    r.sage(&["record", "--session", notes.to_str().unwrap()])
        .bad_input("not a session transcript git sage can read");
    // a .sage/sessions that leads out of the worktree is refused, and nothing is written there
    std::fs::remove_dir_all(r.path().join(".sage")).unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(r.path().join(".sage")).unwrap();
    std::os::unix::fs::symlink(&outside, r.path().join(".sage/sessions")).unwrap();
    rec(&a).bad_input(".sage/sessions is a symbolic link");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn broken_finding_files_say_where_and_deep_yaml_is_refused_at_once() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    // a SARIF cut short, as a killed scanner leaves it
    let sarif = r
        .sage(&[
            "-C",
            ds,
            "blame-origin",
            "-q",
            "--finding",
            DEMO_FINDING,
            "--format",
            "sarif",
        ])
        .ok()
        .stdout;
    let cut = r.finding("cut.sarif", &sarif[..sarif.len() / 2]);
    let line = sarif[..sarif.len() / 2].lines().count();
    r.sage(&["-C", ds, "provenance", "--finding", &cut])
        .bad_input(&format!("cut.sarif:{line}: the JSON ends early"));
    let bad = r.finding(
        "bad.yaml",
        "file: media/fetcher.py\nfragment: x\n  oops: [1\n",
    );
    r.sage(&["-C", ds, "provenance", "--finding", &bad])
        .bad_input("bad.yaml:");
    // 200 KB of nesting: one line naming the file and line, in well under a second each
    let deep = "[".repeat(200_000);
    let t = std::time::Instant::now();
    let f = r.finding("deep.yaml", &format!("file: a.py\nfragment: {deep}\n"));
    r.sage(&["-C", ds, "provenance", "--finding", &f])
        .bad_input("deep.yaml:2: nested deeper");
    let m = r.finding("deep-manifest.yaml", &format!("cases:\n  - {deep}\n"));
    r.sage(&["batch", &m])
        .bad_input("deep-manifest.yaml:2: nested deeper");
    let s = r.finding(
        "deep-session.yaml",
        &format!("schema: sage.session/1\nturns: {deep}\n"),
    );
    r.sage(&["turns", &s])
        .bad_input("deep-session.yaml:2: nested deeper");
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
}
