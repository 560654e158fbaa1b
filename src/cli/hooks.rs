//! `git sage hooks install|uninstall|status`, and the hook runner (`git sage hook NAME`).
//! Installation keeps any existing hook: our lines live between markers and leave again on
//! uninstall; `core.hooksPath` is respected; `notes.rewriteRef` gains refs/notes/sage.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::Context;
use crate::error::{Error, Result};
use crate::git::{NOTES_REF, Repo};

pub const HOOKS: [&str; 4] = [
    "pre-merge-commit",
    "pre-push",
    "post-rewrite",
    "prepare-commit-msg",
];
const START: &str =
    "# >>> git-sage >>> (managed by `git sage hooks install`; do not edit between the markers)";
const END: &str = "# <<< git-sage <<<";

/// Install, remove or inspect the git hooks
#[derive(Debug, Args)]
#[command(
    after_help = "Hooks: pre-merge-commit (analyse the merged branch against .sage/findings/, write notes),\npre-push, post-rewrite (keep notes across rebase/amend), prepare-commit-msg (Sage-Session trailer).\nSettings: sage.findings, sage.scanner, sage.block (refuse merges), sage.strict (internal errors block)."
)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub cmd: HooksCmd,
}

#[derive(Debug, Subcommand)]
pub enum HooksCmd {
    /// Install the hooks (idempotent; existing hook content is kept)
    Install,
    /// Remove git sage's lines from the hooks (restoring what was there)
    Uninstall,
    /// Which hooks are installed, and where
    Status,
}

/// Runs one hook (used by the scripts in hooks/)
#[derive(Debug, Args)]
pub struct HookArgs {
    #[arg(value_parser = HOOKS)]
    pub name: String,
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

fn block(name: &str) -> String {
    format!(
        "{START}\ncommand -v git-sage >/dev/null 2>&1 && {{ git sage hook {name} \"$@\" || exit $?; }}\n{END}\n"
    )
}

/// `text` with our block put in (or taken out when `name` is `None`).
pub fn splice(text: &str, name: Option<&str>) -> String {
    let ours = name.map(block);
    if let Some(out) = super::markers::replace_between(text, START, END, ours.as_deref()) {
        return out;
    }
    match ours {
        None => text.to_string(),
        Some(b) if text.trim().is_empty() => format!("#!/bin/sh\n{b}"),
        Some(b) => {
            let mut out = text.to_string();
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&b);
            out
        }
    }
}

fn io_err(what: &str, p: &Path, e: std::io::Error) -> Error {
    Error::env(format!("cannot {what} {}: {e}", p.display()))
        .hint("check the permissions of the hooks directory (core.hooksPath)")
}

fn make_executable(p: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mut perm = std::fs::metadata(p)
            .map_err(|e| io_err("read", p, e))?
            .permissions();
        perm.set_mode(perm.mode() | 0o755);
        std::fs::set_permissions(p, perm).map_err(|e| io_err("make executable", p, e))?;
    }
    Ok(())
}

fn hook_paths(repo: &Repo) -> Result<(PathBuf, Vec<(String, PathBuf)>)> {
    let dir = repo.hooks_dir()?;
    let list = HOOKS.iter().map(|h| (h.to_string(), dir.join(h))).collect();
    Ok((dir, list))
}

pub fn run(ctx: &Context, args: &HooksArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    let (dir, hooks) = hook_paths(&repo)?;
    match args.cmd {
        HooksCmd::Install => {
            std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
            for (name, path) in &hooks {
                let old = match std::fs::read_to_string(path) {
                    Ok(t) => t,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                    Err(e) => return Err(io_err("read", path, e)),
                };
                let new = splice(&old, Some(name));
                if new != old {
                    std::fs::write(path, &new).map_err(|e| io_err("write", path, e))?;
                }
                make_executable(path)?;
            }
            if !repo
                .config_all("notes.rewriteRef")?
                .iter()
                .any(|v| v == NOTES_REF)
            {
                repo.config_add("notes.rewriteRef", NOTES_REF)?;
            }
            eprintln!(
                "git-sage: hooks installed in {} ({}); notes.rewriteRef includes {NOTES_REF}",
                dir.display(),
                HOOKS.join(", ")
            );
        }
        HooksCmd::Uninstall => {
            for (_, path) in &hooks {
                let Ok(old) = std::fs::read_to_string(path) else {
                    continue;
                };
                let new = splice(&old, None);
                if new == old {
                    continue;
                }
                if new.trim().is_empty() || new.trim() == "#!/bin/sh" {
                    std::fs::remove_file(path).map_err(|e| io_err("remove", path, e))?;
                } else {
                    std::fs::write(path, &new).map_err(|e| io_err("write", path, e))?;
                }
            }
            eprintln!(
                "git-sage: hooks removed from {} (notes.rewriteRef is left as it is)",
                dir.display()
            );
        }
        HooksCmd::Status => {
            let mut out = format!(
                "hooks directory: {}{}\n",
                dir.display(),
                if repo.config_string("core.hooksPath")?.is_some() {
                    " (core.hooksPath)"
                } else {
                    ""
                }
            );
            for (name, path) in &hooks {
                let state = match std::fs::read_to_string(path) {
                    Ok(t) if t.contains(START) => "installed",
                    Ok(_) => "other hook present, git sage not installed",
                    Err(_) => "not installed",
                };
                out.push_str(&format!("  {name:<20} {state}\n"));
            }
            let rewrite = repo
                .config_all("notes.rewriteRef")?
                .iter()
                .any(|v| v == NOTES_REF);
            out.push_str(&format!(
                "notes.rewriteRef includes {NOTES_REF}: {}\n",
                if rewrite { "yes" } else { "no" }
            ));
            ctx.print(&out)?;
        }
    }
    Ok(0)
}

/// Runs a hook; internal errors warn and let git go on unless `sage.strict=true`.
pub fn run_hook(ctx: &Context, args: &HookArgs) -> Result<i32> {
    let strict = ctx
        .repo()
        .ok()
        .and_then(|r| r.config_string("sage.strict").ok().flatten())
        .is_some_and(|v| truthy(&v));
    match hook(ctx, args) {
        Ok(code) => Ok(code),
        Err(e) if strict => {
            eprintln!(
                "git-sage: {} hook failed: {e} (sage.strict=true: stopping)",
                args.name
            );
            Ok(1)
        }
        Err(e) => {
            eprintln!(
                "git-sage: warning: {} hook could not run: {e}; letting git go on (set sage.strict=true to stop instead)",
                args.name
            );
            Ok(0)
        }
    }
}

pub fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "true" | "yes" | "on" | "1"
    )
}

fn hook(ctx: &Context, args: &HookArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    match args.name.as_str() {
        "pre-merge-commit" => {
            // MERGE_HEAD exists for merges that stopped; an automatic merge only says what it
            // merges in GIT_REFLOG_ACTION ("merge <branch>").
            let head = match repo.merge_head()? {
                Some(h) => h,
                None => {
                    let action = std::env::var("GIT_REFLOG_ACTION").unwrap_or_default();
                    let mut it = action.split_whitespace();
                    if it.next() != Some("merge") {
                        return Ok(0);
                    }
                    let Some(rev) = it.find(|a| !a.starts_with('-')) else {
                        return Ok(0);
                    };
                    match repo.try_resolve_commit(rev)? {
                        Some(h) => h,
                        None => return Ok(0),
                    }
                }
            };
            let base = repo
                .merge_base(repo.resolve_commit("HEAD")?, head)
                .ok_or_else(|| Error::env("the branches being merged share no history"))?;
            super::gate::check(ctx, &repo, &base.to_string(), &head.to_string(), "merge")
        }
        "pre-push" => {
            let mut input = String::new();
            std::io::stdin().read_to_string(&mut input).ok();
            // The pre-commit framework keeps stdin to itself and passes the range
            // in its environment instead.
            if input.trim().is_empty()
                && let (Ok(from), Ok(to)) = (
                    std::env::var("PRE_COMMIT_FROM_REF"),
                    std::env::var("PRE_COMMIT_TO_REF"),
                )
            {
                input = format!("local {to} remote {from}\n");
            }
            let mut code = 0;
            for line in input.lines() {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() < 4 || f[1].chars().all(|c| c == '0') {
                    continue;
                }
                let tip = repo.resolve_commit(f[1])?;
                let base = if f[3].chars().all(|c| c == '0') {
                    match crate::history::range::resolve(&repo, Some(f[1]), None) {
                        Ok(r) => r.base,
                        Err(_) => continue,
                    }
                } else {
                    match repo
                        .try_resolve_commit(f[3])?
                        .and_then(|r| repo.merge_base(r, tip))
                    {
                        Some(b) => b,
                        None => continue,
                    }
                };
                if base == tip {
                    continue;
                }
                code = code.max(super::gate::check(
                    ctx,
                    &repo,
                    &base.to_string(),
                    &tip.to_string(),
                    "push",
                )?);
            }
            Ok(code)
        }
        "post-rewrite" => {
            if repo
                .config_all("notes.rewriteRef")?
                .iter()
                .any(|v| v == NOTES_REF)
            {
                return Ok(0); // git copies the notes itself
            }
            let mut input = String::new();
            std::io::stdin().read_to_string(&mut input).ok();
            for line in input.lines() {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() >= 2
                    && let (Some(a), Some(b)) = (
                        repo.try_resolve_commit(f[0])?,
                        repo.try_resolve_commit(f[1])?,
                    )
                {
                    repo.copy_note(a, b)?;
                }
            }
            Ok(0)
        }
        "prepare-commit-msg" => {
            let Some(file) = args.args.first() else {
                return Ok(0);
            };
            let sessions: Vec<String> = repo
                .staged_paths()?
                .into_iter()
                .filter(|p| p.starts_with(".sage/sessions/"))
                .collect();
            if sessions.is_empty() {
                return Ok(0);
            }
            let msg = std::fs::read_to_string(file)
                .map_err(|e| Error::env(format!("cannot read {file}: {e}")))?;
            let new = add_trailers(&msg, &sessions);
            if new != msg {
                std::fs::write(file, new)
                    .map_err(|e| Error::env(format!("cannot write {file}: {e}")))?;
            }
            Ok(0)
        }
        other => Err(Error::input(format!("unknown hook {other}"))),
    }
}

/// Adds `Sage-Session: <path>` trailers (those not already there) before the comment lines.
pub fn add_trailers(msg: &str, sessions: &[String]) -> String {
    let missing: Vec<&String> = sessions
        .iter()
        .filter(|s| {
            !msg.lines()
                .any(|l| l.trim() == format!("Sage-Session: {s}"))
        })
        .collect();
    if missing.is_empty() {
        return msg.to_string();
    }
    let lines: Vec<&str> = msg.lines().collect();
    let body_end = lines
        .iter()
        .position(|l| l.starts_with('#'))
        .unwrap_or(lines.len());
    let mut body: Vec<String> = lines[..body_end].iter().map(|s| s.to_string()).collect();
    while body.last().is_some_and(|l| l.trim().is_empty()) {
        body.pop();
    }
    let ends_in_trailers = body.last().is_some_and(|l| {
        l.split_once(": ")
            .is_some_and(|(k, _)| !k.is_empty() && !k.contains(' '))
    });
    if !body.is_empty() && !ends_in_trailers {
        body.push(String::new());
    }
    for s in missing {
        body.push(format!("Sage-Session: {s}"));
    }
    let mut out = body.join("\n");
    out.push('\n');
    if body_end < lines.len() {
        out.push('\n');
        out.push_str(&lines[body_end..].join("\n"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_keeps_other_content() {
        let mine = "#!/bin/sh\necho mine\n";
        let once = splice(mine, Some("pre-push"));
        assert!(once.starts_with(mine) && once.contains("git sage hook pre-push"));
        assert_eq!(splice(&once, Some("pre-push")), once);
        assert_eq!(splice(&once, None), mine);
        assert!(splice("", Some("post-rewrite")).starts_with("#!/bin/sh\n# >>> git-sage"));
    }

    #[test]
    fn trailers() {
        let m = "Fix SSRF\n\n# Please enter the commit message\n# Lines starting with '#' are ignored\n";
        let out = add_trailers(m, &[".sage/sessions/a.jsonl".into()]);
        assert_eq!(
            out,
            "Fix SSRF\n\nSage-Session: .sage/sessions/a.jsonl\n\n# Please enter the commit message\n# Lines starting with '#' are ignored\n"
        );
        assert_eq!(add_trailers(&out, &[".sage/sessions/a.jsonl".into()]), out);
        let t = add_trailers("Fix\n\nCo-authored-by: X <x@y>\n", &["s.yaml".into()]);
        assert_eq!(t, "Fix\n\nCo-authored-by: X <x@y>\nSage-Session: s.yaml\n");
    }
}
