//! After the README's install, on a fresh account: `git sage --help` finds the man page through
//! PATH alone, `-h` says where the full help is, and the completion scripts, loaded by bash, zsh
//! and fish, complete both `git sage …` and `git-sage …`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Run, skip};

/// The system directories only: a PATH inherited from the developer could hold another
/// git-sage, or a directory whose share/man has an older page.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A fresh account: git-sage in PREFIX/bin, that directory on PATH, a home of its own.
struct Account {
    root: tempfile::TempDir,
}

impl Account {
    fn new() -> Account {
        let a = Account {
            root: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(a.bin()).unwrap();
        std::fs::create_dir_all(a.home()).unwrap();
        // As cargo install leaves it: a file of its own in PREFIX/bin (a symbolic link would
        // resolve to the build directory).
        let exe = assert_cmd::cargo::cargo_bin("git-sage");
        let dest = a.bin().join("git-sage");
        if std::fs::hard_link(&exe, &dest).is_err() {
            std::fs::copy(&exe, &dest).unwrap();
        }
        a
    }

    fn prefix(&self) -> PathBuf {
        self.root.path().join("prefix")
    }

    fn bin(&self) -> PathBuf {
        self.prefix().join("bin")
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn file(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `program` under the account's pinned environment, in its home.
    fn cmd(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .current_dir(self.home())
            .env("PATH", format!("{}:{SYSTEM_PATH}", self.bin().display()))
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home().join(".gitconfig"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("TERM", "dumb")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> Run {
        self.run_cmd(self.cmd(program).args(args))
    }

    /// Runs with output to files (no pipe to fill) and a time limit, for interactive shells.
    fn run_cmd(&self, cmd: &mut Command) -> Run {
        let out = tempfile::NamedTempFile::new_in(self.root.path()).unwrap();
        let err = tempfile::NamedTempFile::new_in(self.root.path()).unwrap();
        let mut child = cmd
            .stdout(out.reopen().unwrap())
            .stderr(err.reopen().unwrap())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code().unwrap_or(-1);
            }
            if start.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                child.wait().unwrap();
                break -1;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Run {
            code,
            stdout: std::fs::read_to_string(out.path()).unwrap(),
            stderr: std::fs::read_to_string(err.path()).unwrap(),
        }
    }

    /// Whether `program` is on the account's PATH.
    fn has(&self, program: &str) -> bool {
        std::iter::once(self.bin())
            .chain(SYSTEM_PATH.split(':').map(PathBuf::from))
            .any(|d| d.join(program).is_file())
    }
}

/// Help text with its wrapping undone.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn same_file(a: &Path, b: &Path) -> bool {
    a.canonicalize().unwrap() == b.canonicalize().unwrap()
}

#[test]
fn help_shows_the_manual_after_install_man() {
    let a = Account::new();
    let man = a.has("man");
    let found = |a: &Account| man && a.run("man", &["-w", "git-sage"]).code == 0;
    // Before: -h does not send anyone to a page that is not there.
    let h = words(&a.run("git", &["sage", "-h"]).ok().stdout);
    if !found(&a) {
        assert!(
            h.contains("see more with 'git-sage --help'")
                && h.contains("'git sage --help' needs 'git sage install-man'"),
            "{h}"
        );
    }
    // `git-sage --help` (not through git) is clap's long help.
    let long = a.run("git-sage", &["--help"]).ok();
    assert!(long.stdout.contains("Exit status"), "{}", long.stdout);

    // The README's second command, as git runs it: beside the binary, no --dir.
    let run = a.run("git", &["sage", "install-man"]).ok();
    let dir = a.prefix().join("share/man/man1");
    assert!(same_file(Path::new(run.stdout.trim()), &dir), "{run:?}");
    for page in ["git-sage.1", "git-sage-blame-origin.1", "git-sage-hooks.1"] {
        assert!(dir.join(page).is_file(), "{page} missing");
    }
    assert!(
        !dir.join("git-sage-hook.1").exists(),
        "hidden command got a page"
    );
    if !man {
        skip("`man` is not installed: `git sage --help` not checked");
        return;
    }
    assert!(
        run.stderr.contains("`git sage --help` now shows them"),
        "{run:?}"
    );
    // man finds it from PATH alone (no MANPATH in this environment)...
    let w = a.run("man", &["-w", "git-sage"]).ok();
    assert!(
        same_file(Path::new(w.stdout.trim()), &dir.join("git-sage.1")),
        "{w:?}"
    );
    // ...and so does git, which runs `man git-sage` for `git sage --help`.
    let help = a.run("git", &["sage", "--help"]);
    assert_eq!(help.code, 0, "{help:?}");
    assert!(
        help.stdout.contains("NAME") && help.stdout.contains("git-sage"),
        "{help:?}"
    );
    let h = words(&a.run("git", &["sage", "-h"]).ok().stdout);
    assert!(h.contains("see more with 'git sage --help'"), "{h}");
    // Subcommands keep clap's own help flag.
    let sub = a.run("git", &["sage", "provenance", "-h"]).ok();
    assert!(sub.stdout.contains("-h, --help"), "{}", sub.stdout);
}

#[test]
fn install_man_falls_back_to_the_data_directory() {
    let a = Account::new();
    // PREFIX/share cannot hold a directory (as root, permissions would not stop the write).
    a.file("prefix/share", "");
    let data = a.root.path().join("data");
    let run = a.run_cmd(
        a.cmd("git-sage")
            .arg("install-man")
            .env("XDG_DATA_HOME", &data),
    );
    let run = run.ok();
    assert!(
        same_file(Path::new(run.stdout.trim()), &data.join("man/man1")),
        "{run:?}"
    );
    assert!(data.join("man/man1/git-sage.1").is_file());
    assert!(run.stderr.contains("wrote"), "{run:?}");
    // An explicit --dir that cannot be written is an error, not a fallback.
    let bad = a.prefix().join("share/x");
    let run = a.run("git-sage", &["install-man", "--dir", bad.to_str().unwrap()]);
    assert_eq!(run.code, 3, "{run:?}");
}

/// Each case prints `NAME: word|word|…` (COMPREPLY, trailing spaces dropped).
const BASH_CASES: &str = r#"
show() { local IFS='|'; printf '%s: %s\n' "$1" "${COMPREPLY[*]% }"; }
direct() {  # the function bash runs for `git-sage …` (complete -F)
    local name=$1; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    local f; f=$(complete -p git-sage | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
    "$f" git-sage "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    show "$name"
}
"#;

#[test]
fn bash_completes_git_sage_and_git_dash_sage() {
    let a = Account::new();
    if !a.has("bash") {
        skip("bash is not installed");
        return;
    }
    let script = a.run("git-sage", &["completions", "bash"]).ok().stdout;
    // Where bash-completion looks for a user's completions (BASH_COMPLETION_USER_DIR or
    // ~/.local/share/bash-completion).
    let file = a.file(
        "home/.local/share/bash-completion/completions/git-sage",
        &script,
    );
    let contract = format!(
        r#"{BASH_CASES}
source '{file}'
complete -p git-sage
direct subcommand git-sage blame-o
direct option git-sage blame-origin --fo
direct value git-sage blame-origin --format ''
direct nested git-sage hooks i
direct hidden git-sage h
# git-completion.bash's contract for `git sage …`: words, cword, cur, prev, __git_cmd_idx,
# then _git_sage.
via_git() {{
    local name=$1 __git_cmd_idx=$2; shift 2
    local words=("$@") cword=$(($# - 1))
    local cur=${{words[cword]}} prev=${{words[cword-1]}}
    COMPREPLY=()
    _git_sage
    show "$name"
}}
via_git git-subcommand 1 git sage bl
via_git git-option 3 git -C . sage blame-origin --fo
"#,
        file = file.display()
    );
    let run = a
        .run("bash", &["--norc", "--noprofile", "-c", &contract])
        .ok();
    let out = run.stdout;
    assert!(
        out.contains("complete -o bashdefault -o default") && out.contains(" git-sage\n"),
        "{out}"
    );
    for line in [
        "subcommand: blame-origin\n",
        "option: --format\n",
        "nested: install\n",
        "hidden: hooks\n",
        "git-subcommand: blame-origin\n",
        "git-option: --format\n",
    ] {
        assert!(out.contains(line), "no {line:?} in:\n{out}\n{}", run.stderr);
    }
    let values = out.lines().find_map(|l| l.strip_prefix("value: "));
    assert!(
        values.is_some_and(|v| v.split('|').any(|w| w == "json") && v.contains("sarif")),
        "{out}"
    );
    assert!(!out.contains("hook|") && !out.contains("|hook\n"), "{out}");

    // For real: bash-completion and git's own completion, which loads the file above by
    // itself the first time `git sage` is completed.
    let loader = Path::new("/usr/share/bash-completion/bash_completion");
    if !loader.is_file() {
        skip(
            "bash-completion is not installed: `git sage <TAB>` through git's completion not checked",
        );
        return;
    }
    let real = format!(
        r#"{BASH_CASES}
source {loader}
git_line() {{  # what bash does on TAB after `git …`
    local name=$1; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}
    COMPREPLY=()
    _completion_loader git
    local f; f=$(complete -p git | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
    "$f" git "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    show "$name"
}}
git_line command git sa
git_line subcommand git sage bl
git_line option git sage blame-origin --fo
git_line hidden git sage h
complete -p git-sage
"#,
        loader = loader.display()
    );
    let run = a.run("bash", &["--norc", "--noprofile", "-c", &real]);
    let out = &run.stdout;
    for line in [
        "subcommand: blame-origin\n",
        "option: --format\n",
        "hidden: hooks\n",
    ] {
        assert!(out.contains(line), "no {line:?} in:\n{out}\n{}", run.stderr);
    }
    assert!(
        out.lines()
            .filter_map(|l| l.strip_prefix("command: "))
            .any(|l| l.split('|').any(|w| w == "sage")),
        "{out}"
    );
}

/// Types LINE and TAB into an interactive zsh on a pseudo-terminal and records every match
/// offered (compadd is wrapped: zsh has no non-interactive way to ask its completion).
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PROMPT='> '; fpath=($FUNCS \$fpath); autoload -Uz compinit; compinit -u -d $OUT.dump"
zpty -w z 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a m; builtin compadd -O m "$@"; print -rl -- $m >> $OUT; builtin compadd "$@"
}'
# The echo of what is typed shows $((6*7)), the output 42: wait for the shell, not the echo,
# and for its next prompt (a line typed before the line editor starts can be lost).
zpty -w z 'print READY-$((6*7))'
zpty -r z out '*READY-42*> '
zpty -w -n z "$LINE"$'\t'
zpty -w z $'\C-u''print DONE-$((6*7))'
zpty -r z out '*DONE-42*'
zpty -d z
"#;

#[test]
fn zsh_completes_git_sage_and_git_dash_sage() {
    let a = Account::new();
    if !a.has("zsh") {
        skip("zsh is not installed");
        return;
    }
    let script = a.run("git-sage", &["completions", "zsh"]).ok().stdout;
    a.file("home/.zfunc/_git-sage", &script);
    let driver = a.file("zsh-driver.zsh", ZSH_DRIVER);
    let offered = |line: &str| -> Vec<String> {
        let out = a.root.path().join("offered");
        let _ = std::fs::remove_file(&out);
        let run = a.run_cmd(
            a.cmd("zsh")
                .arg("-f")
                .arg(&driver)
                .env("FUNCS", a.home().join(".zfunc"))
                .env("OUT", &out)
                .env("LINE", line),
        );
        assert_eq!(run.code, 0, "{line}: {run:?}");
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    };
    for (line, want) in [
        ("git-sage blame-o", "blame-origin"),
        ("git-sage blame-origin --fo", "--format"),
        ("git sage bl", "blame-origin"),
        ("git -C . sage blame-origin --fo", "--format"),
        ("git sage h", "hooks"),
        ("git sa", "sage"),
    ] {
        let got = offered(line);
        assert!(got.iter().any(|w| w == want), "{line}: {got:?}");
        assert!(!got.iter().any(|w| w == "hook"), "{line}: {got:?}");
    }
}

#[test]
fn fish_completes_git_sage_and_git_dash_sage() {
    let a = Account::new();
    if !a.has("fish") {
        skip("fish is not installed");
        return;
    }
    let script = a.run("git-sage", &["completions", "fish"]).ok().stdout;
    // Where the help says: conf.d, read at start-up.
    a.file("home/.config/fish/conf.d/git-sage.fish", &script);
    for (line, want) in [
        ("git-sage blame-o", "blame-origin"),
        ("git-sage blame-origin --fo", "--format"),
        ("git-sage turns --from mark", "markdown"),
        ("git sage bl", "blame-origin"),
        ("git -C . sage blame-origin --fo", "--format"),
        ("git sage h", "hooks"),
        ("git sa", "sage"),
    ] {
        let run = a.run("fish", &["-c", &format!("complete -C '{line}'")]);
        // fish reports a line of the script it cannot read on stderr, and goes on.
        assert!(run.code == 0 && run.stderr.is_empty(), "{line}: {run:?}");
        let words: Vec<&str> = run
            .stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap_or(""))
            .collect();
        assert!(words.contains(&want), "{line}: {words:?}");
        assert!(!words.contains(&"hook"), "{line}: {words:?}");
    }
}
