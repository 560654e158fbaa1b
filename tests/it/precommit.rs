//! The pre-commit framework's hooks (`.pre-commit-hooks.yaml`), run by `pre-commit try-repo`
//! against the demo repository: the variants for a git-sage already on PATH, at the
//! pre-merge-commit and pre-push stages, as a user of the framework runs them.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{Repo, Run};

/// A repository holding this checkout's hook definitions and scripts, committed: what
/// `pre-commit` clones when a config names this project.
fn hook_repo(r: &Repo) -> std::path::PathBuf {
    let dir = r.home().join("hook-repo");
    std::fs::create_dir_all(dir.join("hooks")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join(".pre-commit-hooks.yaml"),
        dir.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    for e in std::fs::read_dir(root.join("hooks")).unwrap() {
        let p = e.unwrap().path();
        let to = dir.join("hooks").join(p.file_name().unwrap());
        std::fs::copy(&p, &to).unwrap();
    }
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "hooks",
        ],
    ] {
        git(r, &dir, args);
    }
    dir
}

/// `pre-commit` with git-sage on PATH, in `dir`.
fn pre_commit(r: &Repo, dir: &Path, args: &[&str]) -> Run {
    let mut cmd = r.command_as_merger("pre-commit", dir);
    cmd.args(args)
        .env("PRE_COMMIT_HOME", r.home().join("pre-commit-cache"))
        .stdin(Stdio::null());
    Run::from(cmd.output().unwrap())
}

fn git(r: &Repo, dir: &Path, args: &[&str]) {
    let ok = r
        .command_as_merger("git", dir)
        .args(args)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn the_system_hooks_run_through_pre_commit_try_repo() {
    if Command::new("pre-commit")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::common::skip("pre-commit is not installed (pip install pre-commit)");
        return;
    }
    let r = Repo::new();
    let d = r.demo();
    let hooks = hook_repo(&r);
    let hr = hooks.to_str().unwrap();

    // pre-merge-commit: a merge of the agent's branch in progress, as git runs the hook.
    git(&r, &d, &["checkout", "-q", "main"]);
    git(
        &r,
        &d,
        &["merge", "--no-ff", "--no-commit", "agent/fix-ssrf"],
    );
    let t = std::time::Instant::now();
    let run = pre_commit(
        &r,
        &d,
        &[
            "try-repo",
            hr,
            "git-sage-pre-merge-system",
            "--hook-stage",
            "pre-merge-commit",
            "--verbose",
        ],
    );
    let merge_secs = t.elapsed().as_secs_f64();
    assert_eq!(run.code, 0, "{run:?}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("Passed"), "{said}");
    assert!(
        said.contains("ssrf-preview: introduced, origin turn 1"),
        "{said}"
    );
    git(&r, &d, &["merge", "--abort"]);

    // pre-push: the framework passes the range in its environment.
    let push = |verbose: bool| {
        let mut args = vec![
            "try-repo",
            hr,
            "git-sage-pre-push-system",
            "--hook-stage",
            "pre-push",
            "--from-ref",
            "main",
            "--to-ref",
            "agent/fix-ssrf",
        ];
        if verbose {
            args.push("--verbose");
        }
        pre_commit(&r, &d, &args)
    };
    let t = std::time::Instant::now();
    let run = push(true);
    let push_secs = t.elapsed().as_secs_f64();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 0, "{said}");
    assert!(said.contains("ssrf-preview: introduced"), "{said}");
    // With sage.block the push is refused: the hook fails.
    git(&r, &d, &["config", "sage.block", "true"]);
    let run = push(false);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(format!("{}{}", run.stdout, run.stderr).contains("Failed"));
    eprintln!("pre-commit try-repo: pre-merge-commit {merge_secs:.2} s, pre-push {push_secs:.2} s");
}
