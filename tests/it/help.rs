//! Help, version, and running as a git subcommand.

use crate::common::Repo;

#[test]
fn help_lists_commands_exit_codes_and_examples() {
    let r = Repo::new();
    let run = r.sage(&["--help"]).ok();
    for needle in ["provenance", "-C <DIR>", "Exit status", "git config"] {
        assert!(
            run.stdout.contains(needle),
            "--help lacks {needle}: {}",
            run.stdout
        );
    }
    let run = r.sage(&["provenance", "-h"]).ok();
    for needle in [
        "--finding",
        "--select",
        "--anchor-file",
        "--base",
        "--agent",
        "--format",
        "Examples",
    ] {
        assert!(
            run.stdout.contains(needle),
            "provenance -h lacks {needle}: {}",
            run.stdout
        );
    }
    assert!(r.sage(&["--version"]).ok().stdout.starts_with("git-sage "));
    // usage errors are exit 2 too
    assert_eq!(r.sage(&["provenance", "--format", "xml"]).code, 2);
    assert_eq!(r.sage(&["no-such-command"]).code, 2);
}

#[test]
fn runs_as_git_subcommand() {
    let r = Repo::new();
    let bin = assert_cmd::cargo::cargo_bin("git-sage");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("git")
        .current_dir(r.path())
        .env("PATH", path)
        .args(["sage", "--version"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("git-sage "));
}

#[test]
fn help_examples_are_whole_commands_on_an_80_column_terminal() {
    let r = Repo::new();
    let top = r.sage(&["--help"]).ok().stdout;
    let commands: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() > 10, "{commands:?}");
    let mut with_examples = 0;
    for c in &commands {
        let help = r
            .sage_env(r.path(), &[c, "--help"], &[("COLUMNS", "80")])
            .ok()
            .stdout;
        let Some(ex) = help.split("Examples:\n").nth(1) else {
            continue;
        };
        with_examples += 1;
        let mut continued = false;
        for line in ex.lines().take_while(|l| !l.trim().is_empty()) {
            assert!(line.chars().count() <= 80, "{c}: too wide: {line}");
            let ok = if continued {
                line.starts_with("      ")
            } else {
                line.starts_with("  git sage ")
            };
            assert!(
                ok,
                "{c} --help: an example was wrapped mid-command: {line:?}\n{ex}"
            );
            continued = line.ends_with(" \\");
        }
    }
    assert!(with_examples >= 10, "{with_examples}");
}
