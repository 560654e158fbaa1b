//! `git sage hooks install|uninstall|status`, and the hook runner (`git sage hook NAME`).
//!
//! A hook that is already there is never edited: it is moved aside, untouched, to
//! `NAME.sage-orig` (a rename: content, mode, a missing final newline and a symlink all stay
//! as they were), and our own shell wrapper takes its place, runs `git-sage hook NAME` first
//! and then the user's hook with the same arguments and input. Uninstall renames it back.
//! This works whatever language the user's hook is written in, and an `exit 0` in it cannot
//! hide our part. `core.hooksPath` is respected; `notes.rewriteRef` gains refs/notes/sage.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::Context;
use anyhow::Context as _;

use crate::error::{Error, Result};
use crate::git::{NOTES_REF, Repo};
use crate::settings::Settings;

pub(crate) const HOOKS: [&str; 4] = [
    "pre-merge-commit",
    "pre-push",
    "post-rewrite",
    "prepare-commit-msg",
];
/// The second line of every wrapper we write; how `status` and `uninstall` know it is ours.
const START: &str =
    "# >>> git-sage >>> (managed by `git sage hooks install`; do not edit between the markers)";
const END: &str = "# <<< git-sage <<<";
/// Where the user's own hook waits while ours is installed.
const KEPT: &str = "sage-orig";

/// Install, remove or inspect the git hooks
#[derive(Debug, Args)]
#[command(
    after_help = "Hooks: pre-merge-commit (analyse the merged branch against .sage/findings/, write notes),\npre-push, post-rewrite (keep notes across rebase/amend), prepare-commit-msg (Sage-Session trailer).\nA hook that is already there is kept, untouched, as NAME.sage-orig and runs after git sage's part;\nuninstall puts it back byte for byte. Without git-sage on PATH the hooks warn and let git go on.\nSettings: sage.findings, sage.scanner, sage.block (refuse merges), sage.strict (internal errors block)."
)]
pub(crate) struct HooksArgs {
    #[command(subcommand)]
    pub cmd: HooksCmd,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCmd {
    /// Install the hooks (idempotent; an existing hook is kept and still runs)
    Install,
    /// Remove git sage's hooks, putting back what was there byte for byte
    Uninstall,
    /// Which hooks are installed, and where
    Status,
}

/// Runs one hook (used by the scripts in hooks/)
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    #[arg(value_parser = HOOKS)]
    pub name: String,
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Hooks that git feeds on standard input: both our part and the user's hook need it.
fn reads_stdin(name: &str) -> bool {
    matches!(name, "pre-push" | "post-rewrite")
}

/// The wrapper installed as hook `name`.
pub(crate) fn wrapper(name: &str) -> String {
    // post-rewrite's exit status is ignored by git, so the user's hook runs whatever ours said.
    let stop_on_failure = name != "post-rewrite";
    let (read, feed) = if reads_stdin(name) {
        (
            // `x` keeps trailing newlines through the command substitution.
            "input=$(cat; echo x)\ninput=${input%x}\n",
            "printf '%s' \"$input\" | ",
        )
    } else {
        ("", "")
    };
    let after_ours = if stop_on_failure {
        "  [ \"$status\" -eq 0 ] || exit \"$status\"\n"
    } else {
        ""
    };
    format!(
        "#!/bin/sh\n{START}\n\
# git-sage's {name} hook runs first; a hook that was here before is kept untouched as\n\
# {name}.{KEPT} and runs after it. `git sage hooks uninstall` puts that one back.\n\
# Without git-sage on PATH this warns and lets git go on.\n\
{read}status=0\n\
if command -v git-sage >/dev/null 2>&1; then\n\
  {feed}git-sage hook {name} \"$@\"\n\
  status=$?\n\
{after_ours}\
else\n\
  echo \"git-sage: warning: git-sage is not on PATH; its {name} hook did nothing (install it, or run git sage hooks uninstall)\" >&2\n\
fi\n\
if [ -x \"$0.{KEPT}\" ]; then\n\
  {feed}\"$0.{KEPT}\" \"$@\"\n\
  status=$?\n\
fi\n\
exit \"$status\"\n\
{END}\n"
    )
}

/// What sits at a hook's path.
#[derive(Debug, PartialEq, Eq)]
enum State {
    Missing,
    /// Our wrapper (any version of it).
    Ours,
    /// A hook an older git-sage appended its block to (text with the block taken out).
    Appended(String),
    /// Somebody else's hook.
    Foreign,
}

fn state(path: &Path) -> anyhow::Result<State> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::Missing),
        Err(e) => return Err(e).with_context(|| doing("read", path)),
    };
    if !meta.file_type().is_file() {
        return Ok(State::Foreign); // a symlink or something stranger: never opened, only moved
    }
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(1 << 20).read_to_end(&mut text))
        .with_context(|| doing("read", path))?;
    let Ok(text) = String::from_utf8(text) else {
        return Ok(State::Foreign);
    };
    if text.lines().nth(1) == Some(START) {
        return Ok(State::Ours);
    }
    // Older versions appended this exact block; only its exact form counts as ours.
    let old_block = |name: &str| {
        format!(
            "{START}\ncommand -v git-sage >/dev/null 2>&1 && {{ git sage hook {name} \"$@\" || exit $?; }}\n{END}\n"
        )
    };
    if let Some(name) = path.file_name().and_then(|n| n.to_str())
        && text.contains(&old_block(name))
    {
        return Ok(State::Appended(text.replacen(&old_block(name), "", 1)));
    }
    Ok(State::Foreign)
}

/// A failed hook operation, with what to check when the cause is the file system.
fn permissions(e: anyhow::Error) -> Error {
    Error::from(e).or_hint("check the permissions of the hooks directory (core.hooksPath)")
}

/// What file operations on hooks add to an I/O error: the operation and the file.
fn doing(what: &str, p: &Path) -> String {
    format!("cannot {what} {}", p.display())
}

fn kept_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".{KEPT}"));
    PathBuf::from(s)
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Writes our wrapper at `path` (atomically, mode 0755).
fn write_wrapper(name: &str, path: &Path) -> anyhow::Result<()> {
    crate::files::write_atomic(path, wrapper(name).as_bytes())
        .with_context(|| doing("write", path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| doing("make executable", path))?;
    }
    Ok(())
}

/// Writes text back to a hook an older version appended to, keeping its mode.
fn rewrite_keeping_mode(path: &Path, text: &str) -> anyhow::Result<()> {
    let perm = std::fs::metadata(path)
        .with_context(|| doing("read", path))?
        .permissions();
    crate::files::write_atomic(path, text.as_bytes()).with_context(|| doing("write", path))?;
    std::fs::set_permissions(path, perm).with_context(|| doing("write", path))
}

fn install_one(name: &str, path: &Path) -> anyhow::Result<&'static str> {
    let kept = kept_path(path);
    let mut st = state(path)?;
    if let State::Appended(text) = &st {
        rewrite_keeping_mode(path, text)?;
        st = State::Foreign;
    }
    match st {
        State::Ours => {
            if std::fs::read_to_string(path).ok().as_deref() == Some(wrapper(name).as_str()) {
                return Ok("already installed");
            }
            write_wrapper(name, path)?;
            Ok("updated")
        }
        State::Missing if exists(&kept) => {
            // Our wrapper was deleted by hand: the kept hook is the user's current one.
            std::fs::rename(&kept, path).with_context(|| doing("restore", &kept))?;
            install_one(name, path)
        }
        State::Missing => {
            write_wrapper(name, path)?;
            Ok("installed")
        }
        State::Foreign if exists(&kept) => Err(Error::input(format!(
            "cannot install the {name} hook: {} exists and so does {}",
            path.display(),
            kept.display()
        ))
        .into()),
        State::Foreign | State::Appended(_) => {
            std::fs::rename(path, &kept).with_context(|| doing("move aside", path))?;
            if let Err(e) = write_wrapper(name, path) {
                let _ = std::fs::rename(&kept, path);
                return Err(e);
            }
            Ok("the existing hook is kept and runs after it")
        }
    }
}

fn uninstall_one(path: &Path) -> anyhow::Result<Option<&'static str>> {
    let kept = kept_path(path);
    match state(path)? {
        State::Ours => {
            if exists(&kept) {
                // rename replaces our wrapper in one step
                std::fs::rename(&kept, path).with_context(|| doing("restore", &kept))?;
                Ok(Some("removed; the earlier hook is back"))
            } else {
                std::fs::remove_file(path).with_context(|| doing("remove", path))?;
                Ok(Some("removed"))
            }
        }
        State::Appended(text) => {
            if text == "#!/bin/sh\n" {
                std::fs::remove_file(path).with_context(|| doing("remove", path))?;
            } else {
                rewrite_keeping_mode(path, &text)?;
            }
            Ok(Some("removed (installed by an older git-sage)"))
        }
        State::Missing | State::Foreign => Ok(None),
    }
}

fn hook_paths(repo: &Repo) -> Result<(PathBuf, Vec<(String, PathBuf)>)> {
    let dir = repo.hooks_dir()?;
    let list = HOOKS.iter().map(|h| (h.to_string(), dir.join(h))).collect();
    Ok((dir, list))
}

pub(crate) fn run(ctx: &Context, args: &HooksArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    let (dir, hooks) = hook_paths(&repo)?;
    match args.cmd {
        HooksCmd::Install => {
            std::fs::create_dir_all(&dir)
                .with_context(|| doing("create", &dir))
                .map_err(permissions)?;
            // Every conflict before any change: a refused install leaves nothing half done.
            for (name, path) in &hooks {
                if matches!(state(path)?, State::Foreign | State::Appended(_))
                    && exists(&kept_path(path))
                {
                    return Err(Error::input(format!(
                        "cannot install the {name} hook: {} exists and so does {}",
                        path.display(),
                        kept_path(path).display()
                    ))
                    .hint("move one of them away, then run git sage hooks install again"));
                }
            }
            let mut notes = Vec::new();
            for (name, path) in &hooks {
                let what = install_one(name, path)
                    .with_context(|| format!("installing the {name} hook"))
                    .map_err(permissions)?;
                if what != "installed" && what != "already installed" {
                    notes.push(format!("{name}: {what}"));
                }
            }
            if !repo
                .config_all("notes.rewriteRef")?
                .iter()
                .any(|v| v == NOTES_REF)
            {
                repo.config_add("notes.rewriteRef", NOTES_REF)?;
            }
            // git warns on every amend and rebase while notes.rewriteRef names a ref that does
            // not exist yet: an empty notes commit makes it exist.
            repo.ensure_notes_ref()?;
            let notes = match notes.is_empty() {
                true => String::new(),
                false => format!(" ({})", notes.join("; ")),
            };
            crate::say!(
                "git-sage: hooks installed in {}{notes}; notes.rewriteRef includes {NOTES_REF}",
                dir.display(),
            );
        }
        HooksCmd::Uninstall => {
            let mut done = Vec::new();
            for (name, path) in &hooks {
                let removed = uninstall_one(path)
                    .with_context(|| format!("removing the {name} hook"))
                    .map_err(permissions)?;
                if let Some(what) = removed {
                    done.push(format!("{name}: {what}"));
                }
            }
            if done.is_empty() {
                crate::say!(
                    "git-sage: no git-sage hooks were installed in {}",
                    dir.display()
                );
            } else {
                crate::say!(
                    "git-sage: hooks removed from {} ({}); notes.rewriteRef is left as it is",
                    dir.display(),
                    done.join("; ")
                );
            }
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
                let state = match state(path)? {
                    State::Ours if exists(&kept_path(path)) => {
                        format!("installed; then runs {name}.{KEPT}")
                    }
                    State::Ours => "installed".into(),
                    State::Appended(_) => {
                        "installed by an older git-sage (run git sage hooks install to update)"
                            .into()
                    }
                    State::Foreign => "other hook present, git sage not installed".into(),
                    State::Missing => "not installed".into(),
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
pub(crate) fn run_hook(ctx: &Context, args: &HookArgs) -> Result<i32> {
    let strict = Settings::strict_of(ctx.repo().ok().as_ref());
    match hook(ctx, args) {
        Ok(code) => Ok(code),
        Err(e) if strict => {
            crate::say!(
                "git-sage: {} hook failed: {e} (sage.strict=true: stopping)",
                args.name
            );
            Ok(1)
        }
        Err(e) => {
            crate::say!(
                "git-sage: warning: {} hook could not run: {e}; letting git go on (set sage.strict=true to stop instead)",
                args.name
            );
            Ok(0)
        }
    }
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
            super::gate::check(
                ctx,
                &repo,
                (&base.to_string(), &head.to_string()),
                "merge",
                &args.name,
            )
        }
        "pre-push" => {
            // The pre-commit framework keeps stdin to itself and passes the range in its
            // environment instead: then stdin is not read (it may be a terminal).
            let mut input = String::new();
            match (
                std::env::var("PRE_COMMIT_FROM_REF"),
                std::env::var("PRE_COMMIT_TO_REF"),
            ) {
                (Ok(from), Ok(to)) => input = format!("local {to} remote {from}\n"),
                _ => {
                    std::io::stdin().read_to_string(&mut input).ok();
                }
            }
            let mut code = 0;
            for line in input.lines() {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() < 4 || f[1].chars().all(|c| c == '0') {
                    continue;
                }
                let tip = repo.resolve_commit(f[1])?;
                let base = if f[3].chars().all(|c| c == '0') {
                    match crate::history::range::resolve(
                        &repo,
                        Some(f[1]),
                        None,
                        ctx.settings()?.base.as_deref(),
                    ) {
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
                    (&base.to_string(), &tip.to_string()),
                    "push",
                    &args.name,
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
                    crate::notes::copy_note(&repo, a, b)?;
                }
            }
            Ok(0)
        }
        "prepare-commit-msg" => {
            let Some(file) = args.args.first() else {
                return Ok(0);
            };
            let (sessions, odd): (Vec<String>, Vec<String>) = repo
                .staged_paths()?
                .into_iter()
                .filter(|p| p.starts_with(".sage/sessions/"))
                .partition(|p| !p.chars().any(char::is_control));
            // A name holding a line break would write trailers of its own (`Sage-Turn: 1`),
            // which provenance trusts: such a session gets none.
            for p in &odd {
                crate::say!(
                    "git-sage: warning: {} has a control character in its name: no Sage-Session trailer for it",
                    p.escape_debug()
                );
            }
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
pub(crate) fn add_trailers(msg: &str, sessions: &[String]) -> String {
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
    fn wrappers_are_recognised_and_stdin_is_shared() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pre-push");
        std::fs::write(&p, wrapper("pre-push")).unwrap();
        assert_eq!(state(&p).unwrap(), State::Ours);
        assert!(wrapper("pre-push").contains("printf '%s' \"$input\" | git-sage hook pre-push"));
        assert!(!wrapper("pre-merge-commit").contains("input="));
        // a user's line that merely looks like our marker is not ours
        std::fs::write(&p, format!("#!/bin/sh\necho hi\n{START}\n")).unwrap();
        assert_eq!(state(&p).unwrap(), State::Foreign);
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
