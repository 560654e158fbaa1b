//! Test helper: runs the real `git` in a directory with a pinned identity and no user or
//! system config, for tests that check git's own files (commit-graphs, trees) against git.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir`; panics with its output when it fails; its stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    git_env(dir, args, &[])
}

/// [`git`] with more environment (`GIT_COMMITTER_DATE`, …).
pub(crate) fn git_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", dir.join(".no-gitconfig"))
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .envs(env.iter().copied())
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}
