//! Git integration: origin notes, hooks with real merges and rebases, session recording,
//! settings, man pages — and the odd repositories (detached, bare, no identity).

use crate::common::{AGENT, HUMAN, Repo};

fn run_git(dir: &std::path::Path, r: &Repo, args: &[&str]) -> crate::common::Run {
    let mut cmd = r.command_as_merger("git", dir);
    cmd.args(args);
    crate::common::Run::from(cmd.output().unwrap())
}

#[test]
fn notes_sections_replace_keep_and_show() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let blame = |extra: &[&str]| {
        let mut a = vec!["-C", ds, "blame-origin", "--notes", "-q"];
        a.extend_from_slice(extra);
        r.sage(&a).ok()
    };
    blame(&["--finding", ".sage/findings/ssrf-preview.yaml"]);
    blame(&["--finding", ".sage/findings/ssrf-preview.yaml"]);
    blame(&[
        "--anchor-file",
        "media/fetcher.py",
        "--anchor-snippet",
        "resp.read(MAX_BYTES)",
        "--id",
        "read-cap",
    ]);
    let log = run_git(&d, &r, &["log", "--notes=sage", "--format=%h %s%n%N"])
        .ok()
        .stdout;
    assert!(log.contains("sage: origin turn 1 (inadequate defence) for ssrf-preview (CWE-918); introduced here (write 2, turn 3)"), "{log}");
    let tip = r.sage(&["-C", ds, "notes", "show"]).ok().stdout;
    assert_eq!(
        tip.matches("for ssrf-preview").count(),
        1,
        "re-analysis replaced, not duplicated: {tip}"
    );
    assert!(tip.contains("for read-cap"), "other sections kept: {tip}");
    let v = r.sage(&["-C", ds, "notes", "show", "--json"]).ok().json();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(
        r.sage(&["-C", ds, "notes", "show", "HEAD~2"]).code,
        1,
        "no note on the test commit"
    );
    // never another tool's notes ref
    assert!(run_git(&d, &r, &["notes", "list"]).stdout.trim().is_empty());
}

#[test]
fn concurrent_note_writers_lose_nothing() {
    let r = Repo::new();
    let d = r.demo();
    let bin = assert_cmd::cargo::cargo_bin("git-sage");
    let writers = |ids: std::ops::Range<u32>| -> Vec<std::process::Child> {
        ids.map(|k| {
            std::process::Command::new(&bin)
                .current_dir(&d)
                .args([
                    "blame-origin",
                    "-q",
                    "--notes",
                    "--anchor-file",
                    "media/fetcher.py",
                    "--anchor-snippet",
                    "MAX_BYTES",
                    "--id",
                    &format!("finding-{k}"),
                ])
                .env("HOME", r.home())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", r.home().join(".gitconfig"))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect()
    };
    let sections = || -> std::collections::BTreeSet<String> {
        let v = r
            .sage(&["-C", d.to_str().unwrap(), "notes", "show", "--json"])
            .ok()
            .json();
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["finding"].as_str().unwrap().to_string())
            .collect()
    };
    // git-sage against git-sage: compare-and-swap keeps all eight.
    for mut c in writers(0..8) {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(sections().len(), 8, "{:?}", sections());
    // git's own writer on the same ref and commits, all the while: whatever git reports as
    // written stays (our writes never replace a tip they did not build on).
    let user = {
        let d = d.clone();
        let home = r.home().to_path_buf();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            for k in 0..30 {
                let target = if k % 2 == 0 { "HEAD" } else { "HEAD~1" };
                let ok = std::process::Command::new("git")
                    .current_dir(&d)
                    .args([
                        "notes",
                        "--ref=sage",
                        "append",
                        "-m",
                        &format!("user note {k}"),
                        target,
                    ])
                    .env("HOME", &home)
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
                    .env("GIT_AUTHOR_NAME", "U")
                    .env("GIT_AUTHOR_EMAIL", "u@example.com")
                    .env("GIT_COMMITTER_NAME", "U")
                    .env("GIT_COMMITTER_EMAIL", "u@example.com")
                    .stderr(std::process::Stdio::null())
                    .status()
                    .unwrap()
                    .success();
                if ok {
                    kept.push((target, format!("user note {k}")));
                }
            }
            kept
        })
    };
    for mut c in writers(8..16) {
        assert!(c.wait().unwrap().success());
    }
    let kept = user.join().unwrap();
    assert!(
        kept.len() >= 20,
        "git's own writer mostly succeeds: {}",
        kept.len()
    );
    let user_notes_kept = || {
        for (target, text) in &kept {
            let note = run_git(&d, &r, &["notes", "--ref=sage", "show", target])
                .ok()
                .stdout;
            assert!(
                note.contains(text.as_str()),
                "{text} (git notes said it was written) is gone from {target}:\n{note}"
            );
        }
    };
    user_notes_kept();
    // git itself writes notes without compare-and-swap, so under load a section can still be
    // dropped by it after git-sage's watch; running again restores it, and keeps the rest.
    for mut c in writers(0..16) {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(sections().len(), 16, "{:?}", sections());
    user_notes_kept();
}

#[test]
fn hooks_install_is_idempotent_keeps_and_restores_existing_hooks() {
    let r = Repo::new();
    let hooks = r.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("pre-push"), "#!/bin/sh\necho mine\n").unwrap();
    r.sage(&["hooks", "install"]).ok();
    let once = std::fs::read_to_string(hooks.join("pre-push")).unwrap();
    assert!(once.contains("git-sage hook pre-push"), "{once}");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push.sage-orig")).unwrap(),
        "#!/bin/sh\necho mine\n",
        "the user's hook is kept aside, untouched"
    );
    r.sage(&["hooks", "install"]).ok();
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        once
    );
    let status = r.sage(&["hooks", "status"]).ok().stdout;
    assert!(
        status.contains("pre-merge-commit     installed")
            && status.contains("pre-push             installed; then runs pre-push.sage-orig")
            && status.contains("notes.rewriteRef includes refs/notes/sage: yes"),
        "{status}"
    );
    assert_eq!(
        r.git(&["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/sage"
    );
    r.sage(&["hooks", "uninstall"]).ok();
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    assert!(!hooks.join("pre-merge-commit").exists());
    assert!(!hooks.join("pre-push.sage-orig").exists());
    // core.hooksPath is respected, and an existing rewriteRef value is kept
    r.git(&["config", "core.hooksPath", "myhooks"]);
    r.git(&["config", "--add", "notes.rewriteRef", "refs/notes/commits"]);
    r.sage(&["hooks", "install"]).ok();
    assert!(r.path().join("myhooks/post-rewrite").exists());
    assert_eq!(
        r.git(&["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/sage\nrefs/notes/commits",
        "uninstall leaves rewriteRef; install does not add a duplicate"
    );
    // a hooks path that cannot be a directory: one clear line
    r.git(&["config", "core.hooksPath", "afile"]);
    std::fs::write(r.path().join("afile"), "x").unwrap();
    let run = r.sage(&["hooks", "install"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("afile"), "{}", run.stderr);
}

fn merge(d: &std::path::Path, r: &Repo) -> crate::common::Run {
    run_git(d, r, &["checkout", "-q", "main"]).ok();
    run_git(
        d,
        r,
        &["merge", "--no-ff", "-m", "merge agent", "agent/fix-ssrf"],
    )
}

#[test]
fn merge_hook_summarises_writes_notes_and_blocks_only_when_asked() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("git sage: merge of"), "{}", m.stderr);
    assert!(
        m.stderr
            .contains("ssrf-preview: introduced, origin turn 1 (inadequate defence)"),
        "{}",
        m.stderr
    );
    let note = r
        .sage(&["-C", ds, "notes", "show", "agent/fix-ssrf"])
        .ok()
        .stdout;
    assert!(note.contains("origin turn 1"), "{note}");
    // sage.block=true refuses the merge while the finding is present
    run_git(&d, &r, &["reset", "-q", "--hard", "HEAD~1"]).ok();
    run_git(&d, &r, &["config", "sage.block", "true"]).ok();
    let m = merge(&d, &r);
    assert_ne!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("merge refused"), "{}", m.stderr);
    run_git(&d, &r, &["merge", "--abort"]);
    // an internal error warns and lets the merge go on ...
    run_git(&d, &r, &["config", "sage.block", "false"]).ok();
    run_git(&d, &r, &["config", "sage.judge", "nonsense"]).ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("hook could not run"), "{}", m.stderr);
    // ... unless sage.strict=true
    run_git(&d, &r, &["reset", "-q", "--hard", "HEAD~1"]).ok();
    run_git(&d, &r, &["config", "sage.strict", "true"]).ok();
    let m = merge(&d, &r);
    assert_ne!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("sage.strict=true"), "{}", m.stderr);
}

#[test]
fn merge_hook_with_turns_nobody_judged_claims_no_origin() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let script = r.home().join("garbage.sh");
    std::fs::write(&script, "#!/bin/sh\ncat >/dev/null\necho 'looks fine'\n").unwrap();
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    run_git(
        &d,
        &r,
        &[
            "config",
            "sage.judge",
            &format!("command:sh {}", script.display()),
        ],
    )
    .ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "a warning, git goes on: {m:?}");
    assert!(
        m.stderr
            .contains("ssrf-preview: introduced, origin not judged (6 turn(s) could not be scored"),
        "{}",
        m.stderr
    );
    assert!(m.stderr.contains("hook could not run"), "{}", m.stderr);
    let note = r.sage(&["-C", ds, "notes", "show", "agent/fix-ssrf"]);
    assert!(
        !note.stdout.contains("origin turn"),
        "no note claims an origin: {note:?}"
    );
    run_git(&d, &r, &["reset", "-q", "--hard", "HEAD~1"]).ok();
    run_git(&d, &r, &["config", "sage.strict", "true"]).ok();
    let m = merge(&d, &r);
    assert_ne!(m.code, 0, "strict: the merge stops: {m:?}");
    run_git(&d, &r, &["merge", "--abort"]);
    run_git(&d, &r, &["config", "sage.strict", "false"]).ok();
    run_git(&d, &r, &["config", "sage.allowPartial", "true"]).ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(!m.stderr.contains("hook could not run"), "{}", m.stderr);
}

#[test]
fn notes_survive_rebase_and_amend() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "-q",
        "--notes",
        "--finding",
        ".sage/findings/ssrf-preview.yaml",
    ])
    .ok();
    // main moves on; the agent branch is rebased onto it
    run_git(&d, &r, &["checkout", "-q", "main"]).ok();
    std::fs::write(d.join("CHANGES.md"), "main moved\n").unwrap();
    run_git(&d, &r, &["add", "CHANGES.md"]).ok();
    run_git(&d, &r, &["commit", "-q", "-m", "main moves"]).ok();
    run_git(&d, &r, &["checkout", "-q", "agent/fix-ssrf"]).ok();
    run_git(&d, &r, &["rebase", "-q", "main"]).ok();
    let note = r.sage(&["-C", ds, "notes", "show", "HEAD"]).ok().stdout;
    assert!(
        note.contains("for ssrf-preview"),
        "rebased tip keeps its note: {note}"
    );
    let fix = run_git(&d, &r, &["log", "--format=%H", "--grep", "Fix SSRF", "-1"])
        .ok()
        .stdout;
    assert!(
        r.sage(&["-C", ds, "notes", "show", fix.trim()])
            .ok()
            .stdout
            .contains("introduced here")
    );
    // without notes.rewriteRef, the post-rewrite hook carries them across an amend
    run_git(&d, &r, &["config", "--unset-all", "notes.rewriteRef"]).ok();
    run_git(
        &d,
        &r,
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "Document the https-only rule (amended)",
        ],
    )
    .ok();
    let note = r.sage(&["-C", ds, "notes", "show", "HEAD"]).ok().stdout;
    assert!(
        note.contains("for ssrf-preview"),
        "amended tip keeps its note: {note}"
    );
}

#[test]
fn record_copies_the_session_and_the_commit_gets_its_trailer() {
    let r = Repo::new();
    r.write("a.py", "x = 1\n");
    r.commit_as(HUMAN, "base");
    r.sage(&["hooks", "install"]).ok();
    // a fake Claude Code home for this worktree
    let wt = r.path().canonicalize().unwrap();
    let proj = r
        .home()
        .join(".claude/projects")
        .join(wt.to_string_lossy().replace(['/', '.', '_'], "-"));
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("4606c3cc.jsonl"),
        "{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{\"id\":\"m\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"EqAKsk-proj-abcdefghijklmnopqrstuvwxyz1234\"},{\"type\":\"text\",\"text\":\"token ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}]}}\n",
    )
    .unwrap();
    let out = r.sage(&["record"]).ok();
    assert_eq!(
        out.stdout.trim(),
        ".sage/sessions/claude-code-4606c3cc.jsonl"
    );
    let copy = std::fs::read_to_string(r.path().join(".sage/sessions/claude-code-4606c3cc.jsonl"))
        .unwrap();
    assert!(
        copy.contains("[REDACTED:github-token]") && !copy.contains("ghp_"),
        "{copy}"
    );
    assert!(
        copy.contains("\"signature\":\"EqAKsk-proj-abcdefghijklmnopqrstuvwxyz1234\""),
        "signatures untouched: {copy}"
    );
    // staged with the patch: prepare-commit-msg adds the trailer
    r.write("a.py", "x = 2\n");
    r.git(&["add", "-A"]);
    r.git_as(AGENT, &["commit", "-q", "-m", "fix"]);
    let msg = r.git(&["log", "-1", "--format=%B"]);
    assert!(
        msg.contains("Sage-Session: .sage/sessions/claude-code-4606c3cc.jsonl"),
        "{msg}"
    );
    // caps and misses are clear
    r.sage(&["record", "--max-size", "0"])
        .bad_input("over the 0 MB cap");
    r.sage(&["record", "--agent", "codex"])
        .bad_input("no Codex session found");
}

#[test]
fn config_man_and_completions() {
    let r = Repo::new();
    r.git(&["config", "sage.judge", "openai:gpt-4.1"]);
    let c = r.sage(&["config"]).ok().stdout;
    assert!(
        c.contains("sage.judge           = openai:gpt-4.1") && c.contains("[git config (local)]"),
        "{c}"
    );
    assert!(
        c.contains("sage.block           = false") && c.contains("[default]"),
        "{c}"
    );
    let man = r.path().join("man");
    r.sage(&["install-man", "--dir", man.to_str().unwrap()])
        .ok();
    let page = std::fs::read_to_string(man.join("man1/git-sage.1")).unwrap();
    assert!(
        page.contains(".TH git-sage") && page.contains("blame\\-origin"),
        "{}",
        &page[..300]
    );
    assert!(man.join("man1/git-sage-blame-origin.1").exists());
    for sh in ["bash", "zsh", "fish"] {
        assert!(
            r.sage(&["completions", sh])
                .ok()
                .stdout
                .contains("blame-origin")
        );
    }
}

#[test]
fn odd_repositories() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    // detached HEAD
    run_git(&d, &r, &["checkout", "-q", "--detach", "agent/fix-ssrf"]).ok();
    let v = r
        .sage(&[
            "-C",
            ds,
            "blame-origin",
            "--finding",
            ".sage/findings/ssrf-preview.yaml",
            "--format",
            "json",
            "--notes",
        ])
        .ok()
        .json();
    assert_eq!(v["origin"]["turn"], 1);
    // no user identity: notes fall back to git-sage
    let who = run_git(&d, &r, &["log", "-1", "--format=%an", "refs/notes/sage"])
        .ok()
        .stdout;
    assert_eq!(who.trim(), "git-sage");
    // a bare clone: provenance and the report still work
    let bare = r.path().join("bare.git");
    run_git(
        &d,
        &r,
        &["clone", "-q", "--bare", ds, bare.to_str().unwrap()],
    )
    .ok();
    let f = d.join(".sage/findings/ssrf-preview.yaml");
    let v = r
        .sage(&[
            "-C",
            bare.to_str().unwrap(),
            "blame-origin",
            "agent/fix-ssrf",
            "--base",
            "main",
            "--finding",
            f.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "introduced");
    r.sage(&["-C", bare.to_str().unwrap(), "record"])
        .bad_input("bare repository");
    // a notes ref that is not a notes commit is not overwritten
    let blob = run_git(&d, &r, &["hash-object", "-w", "--stdin"]).stdout;
    let blob = if blob.trim().is_empty() {
        run_git(&d, &r, &["rev-parse", "HEAD:README.md"])
            .ok()
            .stdout
    } else {
        blob
    };
    run_git(&d, &r, &["update-ref", "refs/notes/sage", blob.trim()]).ok();
    let run = r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "-q",
        "--finding",
        ".sage/findings/ssrf-preview.yaml",
        "--notes",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("refs/notes/sage points at a blob"),
        "{}",
        run.stderr
    );
}

#[test]
fn pre_push_analyses_what_is_pushed() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let remote = r.path().join("remote.git");
    run_git(&d, &r, &["init", "-q", "--bare", remote.to_str().unwrap()]).ok();
    run_git(
        &d,
        &r,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    )
    .ok();
    run_git(&d, &r, &["push", "-q", "origin", "main"]).ok();
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    // a real push of the agent branch: the new commits are analysed, notes written
    let p = run_git(&d, &r, &["push", "origin", "agent/fix-ssrf"]);
    assert_eq!(p.code, 0, "{p:?}");
    assert!(
        p.stderr.contains("ssrf-preview: introduced, origin turn 1"),
        "{}",
        p.stderr
    );
    assert!(
        r.sage(&["-C", ds, "notes", "show", "agent/fix-ssrf"])
            .ok()
            .stdout
            .contains("origin turn 1")
    );
    // sage.block refuses the push
    run_git(&d, &r, &["config", "sage.block", "true"]).ok();
    run_git(&d, &r, &["commit", "-q", "--allow-empty", "-m", "one more"]).ok();
    let p = run_git(&d, &r, &["push", "origin", "agent/fix-ssrf"]);
    assert_ne!(p.code, 0, "{p:?}");
    // the pre-commit framework passes the range in its environment, not on stdin
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("git-sage"));
    cmd.current_dir(&d)
        .args(["hook", "pre-push", "origin", remote.to_str().unwrap()])
        .env("HOME", r.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", r.home().join(".gitconfig"))
        .env("PRE_COMMIT_FROM_REF", "main")
        .env("PRE_COMMIT_TO_REF", "agent/fix-ssrf")
        .stdin(std::process::Stdio::null());
    let run = crate::common::Run::from(cmd.output().unwrap());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("ssrf-preview: introduced"),
        "{}",
        run.stderr
    );
}

/// A notes tree git has fanned out (`ab/cdef…`, as it does past a few hundred notes): a
/// note is updated where it is, a new one goes in at the same depth, git reads both.
#[test]
fn notes_in_a_fanned_out_tree() {
    let r = Repo::new();
    let mut script = String::new();
    for i in 1..=300 {
        let msg = format!("c{i}\n");
        script.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter D <d@x> {} +0000\ndata {}\n{msg}",
            1_700_000_000 + i,
            msg.len()
        ));
        if i > 1 {
            script.push_str(&format!("from :{}\n", i - 1));
        }
        script.push('\n');
    }
    script.push_str("commit refs/notes/sage\ncommitter D <d@x> 1700000999 +0000\ndata 6\nnotes\n");
    for i in 1..300 {
        script.push_str(&format!("N inline :{i}\ndata 8\nnote{i:03}\n"));
    }
    script.push('\n');
    let mut fi = std::process::Command::new("git");
    fi.current_dir(r.path()).args(["fast-import", "--quiet"]);
    let out = crate::common::feed(fi, script.as_bytes());
    assert!(out.status.success(), "{out:?}");
    let tree = r.git(&["ls-tree", "refs/notes/sage"]);
    assert!(
        tree.lines().all(|l| l.contains(" tree ")),
        "git fanned the notes out: {tree}"
    );
    let repo = sage::git::Repo::discover(r.path()).unwrap();
    let old = repo.resolve_commit("main~10").unwrap();
    let new = repo.resolve_commit("main").unwrap(); // the one commit without a note
    repo.update_note(old, &|n| format!("{}plus\n", n.unwrap_or("")))
        .unwrap();
    repo.update_note(new, &|n| {
        assert!(n.is_none());
        "fresh\n".into()
    })
    .unwrap();
    assert_eq!(
        r.git(&["notes", "--ref=sage", "show", "main~10"]),
        "note290\nplus"
    );
    assert_eq!(r.git(&["notes", "--ref=sage", "show", "main"]), "fresh");
    let all = r.git(&["ls-tree", "-r", "--name-only", "refs/notes/sage"]);
    assert_eq!(all.lines().count(), 300, "no note twice");
    let hex = new.to_string();
    assert!(
        all.lines()
            .any(|l| l == format!("{}/{}", &hex[..2], &hex[2..])),
        "the new note sits at the tree's fanout depth"
    );
}

/// Every `sage.*` setting is parsed the same way everywhere: a bad value is bad input naming
/// its key in every command; a hook warns and lets git go on unless `sage.strict` says so.
#[test]
fn bad_settings_are_named_everywhere() {
    let r = Repo::new();
    r.write("a.py", "x = 1\n");
    r.commit("base");
    for (key, value) in [
        ("sage.jobs", "many"),
        ("sage.block", "sometimes"),
        ("sage.vrMax", "9"),
        ("sage.scanner", "lint"),
        ("sage.templates", "nowhere"),
    ] {
        r.git(&["config", key, value]);
        r.sage(&["config"]).bad_input(&format!("git config {key}"));
        r.sage(&[
            "provenance",
            "--anchor-file",
            "a.py",
            "--anchor-snippet",
            "x = 1",
        ])
        .bad_input(&format!("git config {key}"));
        r.git(&["config", "--unset", key]);
    }
    // git's spellings of booleans are accepted
    r.git(&["config", "sage.block", "Yes"]);
    let c = r.sage(&["config"]).ok().stdout;
    assert!(c.contains("sage.block           = Yes"), "{c}");
    // the pre-merge hook with a broken setting: a warning, git goes on
    r.git(&["config", "sage.block", "sometimes"]);
    r.sage(&["hooks", "install"]).ok();
    r.git(&["checkout", "-q", "-b", "side"]);
    r.write("b.py", "y = 2\n");
    r.commit("side");
    r.git(&["checkout", "-q", "main"]);
    r.write("c.py", "z = 3\n");
    r.commit("main moves");
    let out = run_git(r.path(), &r, &["merge", "--no-edit", "side"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("git config sage.block"), "{out:?}");
    // strict: the same error stops the merge
    r.git(&["reset", "-q", "--hard", "HEAD~1"]);
    r.git(&["config", "sage.strict", "true"]);
    let out = run_git(r.path(), &r, &["merge", "--no-edit", "side"]);
    assert_ne!(out.code, 0, "{out:?}");
}

/// A hooks directory that cannot be made: one line naming the operation, the path and the
/// cause, with what to check.
#[test]
fn hooks_install_says_what_failed_and_where() {
    let r = Repo::new();
    r.write("blocker", "a file, not a directory\n");
    r.commit("base");
    r.git(&["config", "core.hooksPath", "blocker/hooks"]);
    let out = r.sage(&["hooks", "install"]);
    assert_eq!(out.code, 3, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{out:?}");
    assert!(
        lines[0].contains("cannot create") && lines[0].contains("blocker/hooks"),
        "{out:?}"
    );
    assert!(lines[0].contains("hint: check the permissions"), "{out:?}");
}

/// Issue 43 (9): another tool's notes ref that names a blob, a tree or a tag made libgit2's
/// note walk abort the process (exit 134), and a merge with hooks installed failed with it.
/// Each is now skipped and said; refs/notes/agent-trace at a blob too.
#[test]
fn foreign_notes_refs_at_a_blob_tree_or_tag_are_skipped_and_said() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let outside = r.home().join("blob.txt");
    std::fs::write(&outside, "not a notes commit\n").unwrap();
    let g = |args: &[&str]| run_git(&d, &r, args).ok().stdout.trim().to_string();
    let blob = g(&["hash-object", "-w", outside.to_str().unwrap()]);
    let tree = g(&["rev-parse", "HEAD^{tree}"]);
    g(&["tag", "-a", "-m", "a tag", "t-notes", "HEAD"]);
    let tag = g(&["rev-parse", "t-notes"]);
    for (name, id) in [
        ("refs/notes/ai", &blob),
        ("refs/notes/whogitit", &tree),
        ("refs/notes/agentblame", &tag),
        ("refs/notes/ai-blame", &blob),
        ("refs/notes/agent-trace", &blob),
    ] {
        g(&["update-ref", name, id]);
    }
    let run = r.sage(&[
        "-C",
        ds,
        "blame-origin",
        "--finding",
        ".sage/findings/ssrf-preview.yaml",
        "--format",
        "json",
        "-q",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let v = run.json();
    let skipped = v["provenance"]["evidence"]["skipped"].to_string();
    for (name, what) in [
        ("refs/notes/ai", "a blob"),
        ("refs/notes/whogitit", "a tree"),
        ("refs/notes/agentblame", "a tag"),
        ("refs/notes/agent-trace", "a blob"),
    ] {
        assert!(
            skipped.contains(&format!("{name} points at {what}")),
            "{name}: {skipped}"
        );
    }
    // The merge gate runs the same reading: the merge goes through.
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("git sage: merge of"), "{}", m.stderr);
    // Our own ref at a tag is refused with one line, never walked.
    g(&["update-ref", "refs/notes/sage", &tag]);
    r.sage(&["-C", ds, "notes", "show", "agent/fix-ssrf"])
        .bad_input("refs/notes/sage points at a tag");
}

/// Issue 43 (16): after `hooks install`, `git commit --amend` warned "notes ref
/// refs/notes/sage is invalid" until a first note existed.
#[test]
fn amending_after_hooks_install_warns_of_no_invalid_notes_ref() {
    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.commit("first");
    r.sage(&["hooks", "install"]).ok();
    let amend = run_git(
        r.path(),
        &r,
        &["commit", "-q", "--amend", "-m", "first, again"],
    );
    assert_eq!(amend.code, 0, "{amend:?}");
    assert!(!amend.stderr.contains("invalid"), "{}", amend.stderr);
    // The ref holds no note, and git sage reads it as such.
    assert_eq!(r.git(&["notes", "--ref=sage", "list"]), "");
    let show = r.sage(&["notes", "show", "HEAD"]);
    assert!(!show.stderr.contains("points at"), "{show:?}");
    // Installing again leaves the ref as it is.
    let tip = r.git(&["rev-parse", "refs/notes/sage"]);
    r.sage(&["hooks", "install"]).ok();
    assert_eq!(r.git(&["rev-parse", "refs/notes/sage"]), tip);
}

/// Issue 43 (8): a session file named `a\nSage-Turn: 1\nx.yaml`, staged with hooks installed,
/// wrote a `Sage-Turn: 1` trailer through the Sage-Session one, which provenance trusted.
#[test]
fn a_session_name_with_a_line_break_writes_no_trailer() {
    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.commit("first");
    r.sage(&["hooks", "install"]).ok();
    let dir = r.path().join(".sage/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a\nSage-Turn: 1\nx.yaml"),
        "schema: sage.session/1\nturns: []\n",
    )
    .unwrap();
    std::fs::write(dir.join("ok.yaml"), "schema: sage.session/1\nturns: []\n").unwrap();
    run_git(r.path(), &r, &["add", "-A"]).ok();
    let c = run_git(r.path(), &r, &["commit", "-q", "-m", "add sessions"]);
    assert_eq!(c.code, 0, "{c:?}");
    let msg = r.git(&["log", "-1", "--format=%B"]);
    assert!(!msg.contains("Sage-Turn"), "{msg}");
    assert!(c.stderr.contains("control character"), "{}", c.stderr);
    assert!(
        msg.contains("Sage-Session: .sage/sessions/ok.yaml"),
        "{msg}"
    );
}

/// Issue 43 (11): with `sage.scanner=bandit` and `sage.block=true`, the merge gate refused on
/// the scanner's unconfirmed result (on code the base already had) and called it confirmed.
/// A scanner's claim is reported, never enforced; a finding the repository keeps still blocks.
#[test]
fn the_merge_gate_blocks_on_kept_findings_only() {
    let have_bandit = std::process::Command::new("python3")
        .args(["-m", "bandit", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_bandit {
        crate::common::skip("Bandit is not installed (python3 -m pip install bandit)");
        return;
    }
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    // No finding kept: the scanner's results stand in, unconfirmed.
    let kept = d.join(".sage/findings/ssrf-preview.yaml");
    let yaml = std::fs::read_to_string(&kept).unwrap();
    std::fs::remove_file(&kept).unwrap();
    run_git(&d, &r, &["config", "sage.scanner", "bandit"]).ok();
    run_git(&d, &r, &["config", "sage.block", "true"]).ok();
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("unconfirmed:B310"), "{}", m.stderr);
    assert!(m.stderr.contains("not blocking"), "{}", m.stderr);
    assert!(!m.stderr.contains("refused"), "{}", m.stderr);
    // Kept again: confirmed, and the gate refuses while it is present.
    run_git(&d, &r, &["reset", "-q", "--hard", "HEAD~1"]).ok();
    std::fs::write(&kept, yaml).unwrap();
    let m = merge(&d, &r);
    assert_ne!(m.code, 0, "{m:?}");
    assert!(m.stderr.contains("1 confirmed finding(s)"), "{}", m.stderr);
}

/// Issue 43 (17, part): right after a merge made with the hooks installed, `git sage notes
/// show` looked at the merge commit and found nothing; the notes are on the merged branch.
#[test]
fn notes_show_after_a_hook_driven_merge_finds_the_merged_branchs_note() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    r.sage(&["-C", ds, "hooks", "install"]).ok();
    let m = merge(&d, &r);
    assert_eq!(m.code, 0, "{m:?}");
    let show = r.sage(&["-C", ds, "notes", "show"]).ok();
    assert!(show.stdout.contains("origin turn 1"), "{show:?}");
    assert!(show.stderr.contains("is a merge"), "{}", show.stderr);
}

/// Issue 44 (8): with the hooks installed and nothing to check, a merge printed nothing, so
/// nobody could tell the hooks ran; and with `sage.scanner=screen`, a screen that found no
/// candidate read "hook could not run". Each now says one line of what it did.
#[test]
fn hooks_with_nothing_to_check_say_so() {
    let r = Repo::new();
    r.write("app.py", "def add(a, b):\n    return a + b\n");
    r.commit_as(HUMAN, "base");
    r.sage(&["hooks", "install"]).ok();
    let diverge = |n: u32| {
        r.git(&["checkout", "-q", "-b", &format!("side{n}"), "main"]);
        r.write(&format!("util{n}.py"), "def double(x):\n    return 2 * x\n");
        r.commit_as(AGENT, "add a helper");
        r.git(&["checkout", "-q", "main"]);
        r.write(&format!("notes{n}.txt"), "main moves\n");
        r.commit_as(HUMAN, "main moves");
    };
    // No finding kept, no scanner.
    diverge(1);
    let m = run_git(r.path(), &r, &["merge", "--no-edit", "side1"]);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(
        m.stderr
            .contains("git sage: no finding to check (pre-merge-commit)"),
        "{}",
        m.stderr
    );
    assert_eq!(m.stderr.matches("git sage").count(), 1, "{}", m.stderr);
    // The scanner is git sage's screening, and it finds no candidate.
    r.git(&["config", "sage.scanner", "screen"]);
    diverge(2);
    let m = run_git(r.path(), &r, &["merge", "--no-edit", "side2"]);
    assert_eq!(m.code, 0, "{m:?}");
    assert!(
        m.stderr
            .contains("git sage: screen found nothing to check (pre-merge-commit)"),
        "{}",
        m.stderr
    );
    assert!(!m.stderr.contains("could not run"), "{}", m.stderr);
    // A push with nothing to check says so too, in the language asked for.
    let remote = r.home().join("remote.git");
    run_git(
        r.home(),
        &r,
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    )
    .ok();
    r.git(&["config", "sage.lang", "ru"]);
    r.git(&["config", "--unset", "sage.scanner"]);
    diverge(3);
    let p = run_git(r.path(), &r, &["push", remote.to_str().unwrap(), "side3"]);
    assert_eq!(p.code, 0, "{p:?}");
    assert!(
        p.stderr
            .contains("git sage: нет находок для проверки (pre-push)"),
        "{}",
        p.stderr
    );
}
