//! `git sage record`: copy the current agent session of this worktree into .sage/sessions/,
//! secrets redacted, so it is committed alongside the patch (and the prepare-commit-msg hook
//! adds its `Sage-Session:` trailer).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use clap::{Args, ValueEnum};
use sha2::{Digest, Sha256};

use super::Context;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Agent {
    Auto,
    ClaudeCode,
    Codex,
    Gemini,
    Aider,
}

/// Copy the current agent session into .sage/sessions/ (secrets redacted)
#[derive(Debug, Args)]
#[command(
    after_help = "Looked for, for this worktree:\n  Claude Code  ~/.claude/projects/<worktree path with / and . as ->/*.jsonl\n  Codex        ~/.codex/sessions/**/rollout-*.jsonl whose session_meta cwd is the worktree\n  Gemini CLI   ~/.gemini/tmp/*/chats/session-*.json[l] whose projectHash is the worktree's\n  Aider        .aider.chat.history.md in the worktree\n--agent auto takes the most recently written."
)]
pub(crate) struct RecordArgs {
    /// Which agent's session to take
    #[arg(long, value_enum, default_value_t = Agent::Auto)]
    pub agent: Agent,

    /// Copy this file instead of looking for one
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// Refuse sessions larger than this many MB [default: sage.recordMaxSize, else 20]
    #[arg(long, value_name = "MB")]
    pub max_size: Option<u64>,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() && depth > 0 {
            walk(&p, depth - 1, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

/// The first `n` bytes of a file as text (lossy), without reading the rest.
fn first_bytes(p: &Path, n: u64) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(p)
        .ok()?
        .take(n)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

fn newest(mut v: Vec<PathBuf>) -> Option<PathBuf> {
    v.sort_by_key(|p| std::cmp::Reverse(mtime(p)));
    v.into_iter().next()
}

/// Claude Code names a project folder after its path with every non-alphanumeric as `-`.
pub(crate) fn claude_dir_name(worktree: &Path) -> String {
    worktree
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn find(agent: Agent, worktree: &Path) -> Option<(Agent, PathBuf)> {
    let h = home()?;
    let w = worktree.to_string_lossy().into_owned();
    match agent {
        Agent::ClaudeCode => {
            let mut v = Vec::new();
            walk(
                &h.join(".claude/projects").join(claude_dir_name(worktree)),
                0,
                &mut v,
            );
            newest(
                v.into_iter()
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .collect(),
            )
            .map(|p| (agent, p))
        }
        Agent::Codex => {
            let mut v = Vec::new();
            walk(&h.join(".codex/sessions"), 4, &mut v);
            let mine: Vec<PathBuf> = v
                .into_iter()
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
                })
                .filter(|p| {
                    // Only the first line (session_meta) says where the session ran.
                    first_bytes(p, 1 << 20)
                        .and_then(|t| {
                            t.lines()
                                .next()
                                .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                        })
                        .is_some_and(|v| {
                            v.pointer("/payload/cwd").and_then(|c| c.as_str()) == Some(w.as_str())
                        })
                })
                .collect();
            newest(mine).map(|p| (agent, p))
        }
        Agent::Gemini => {
            let hash: String = Sha256::digest(w.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let mut v = Vec::new();
            walk(&h.join(".gemini/tmp"), 2, &mut v);
            let mine: Vec<PathBuf> = v
                .into_iter()
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("session-"))
                })
                // The project hash sits in the session's first lines.
                .filter(|p| first_bytes(p, 64 << 10).is_some_and(|t| t.contains(&hash)))
                .collect();
            newest(mine).map(|p| (agent, p))
        }
        Agent::Aider => {
            let p = worktree.join(".aider.chat.history.md");
            p.is_file().then_some((agent, p))
        }
        Agent::Auto => {
            let all: Vec<(Agent, PathBuf)> =
                [Agent::ClaudeCode, Agent::Codex, Agent::Gemini, Agent::Aider]
                    .into_iter()
                    .filter_map(|a| find(a, worktree))
                    .collect();
            all.into_iter().max_by_key(|(_, p)| mtime(p))
        }
    }
}

pub(crate) fn run(ctx: &Context, args: &RecordArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    let worktree = repo
        .workdir()
        .ok_or_else(|| Error::input("a bare repository has no worktree to record a session for"))?;
    let worktree = worktree.canonicalize().unwrap_or(worktree);
    let (agent, src) = match &args.session {
        Some(p) => (args.agent, p.clone()),
        None => find(args.agent, &worktree)
            .or_else(|| {
                let cwd = ctx.cwd.canonicalize().ok()?;
                (cwd != worktree).then(|| find(args.agent, &cwd)).flatten()
            })
            .ok_or_else(|| {
                Error::input(format!("no {} session found for {}", match args.agent { Agent::Auto => "agent".into(), a => format!("{a:?}") }, worktree.display()))
                    .hint("run git sage record from the worktree the agent worked in, or pass --session FILE")
            })?,
    };
    let max_mb = args.max_size.unwrap_or(ctx.settings()?.record_max_mb);
    // Capped by what is read: a FIFO or a device reports size 0 and may never end.
    let cap = max_mb.saturating_mul(1024 * 1024);
    let cannot =
        |e: &dyn std::fmt::Display| Error::input(format!("cannot read {}: {e}", src.display()));
    let mut file = crate::files::open_to_read(&src).map_err(|e| cannot(&e))?;
    let mut bytes = Vec::new();
    match crate::files::read_to_end_capped(&mut file, cap, &mut bytes) {
        Ok(()) => {}
        Err(crate::files::ReadError::TooLarge(_)) => {
            return Err(Error::input(format!("{} is over the {max_mb} MB cap for recorded sessions", src.display()))
                .hint("raise it with --max-size MB (or git config sage.recordMaxSize), or record a shorter session"));
        }
        Err(e) => return Err(cannot(&e)),
    }
    // Only a transcript git sage can read is worth committing: a binary file or the wrong
    // file is refused here, not discovered at analysis time.
    let forced = match agent {
        Agent::ClaudeCode => Some(crate::transcript::Format::ClaudeCode),
        Agent::Codex => Some(crate::transcript::Format::Codex),
        Agent::Gemini => Some(crate::transcript::Format::GeminiCli),
        Agent::Aider => Some(crate::transcript::Format::Aider),
        Agent::Auto => None,
    };
    let shown = src.display().to_string();
    if bytes.contains(&0) && std::str::from_utf8(&bytes).is_err() {
        return Err(Error::input(format!(
            "{shown} is binary, not a session transcript"
        )));
    }
    let parse = |b: &[u8], forced| {
        crate::transcript::parse(
            crate::transcript::Input::from_bytes(shown.clone(), b.to_vec()),
            forced,
        )
    };
    let parsed = parse(&bytes, None)
        .or_else(|e| forced.map_or(Err(e), |f| parse(&bytes, Some(f))))
        .map_err(|e| {
            Error::input(format!("{shown} is not a session transcript git sage can read: {}", e.message()))
                .hint("pass the agent's session file (git sage turns FILE shows what git sage reads in it)")
        })?;
    let (text, redactions) = crate::redact::redact_document(&String::from_utf8_lossy(&bytes));
    let stem = src
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    let ext = src
        .extension()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "log".into());
    let prefix = match agent {
        Agent::ClaudeCode => "claude-code",
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
        Agent::Aider => "aider",
        Agent::Auto => "session",
    };
    let dir = sessions_dir(&worktree)?;
    let base = format!("{prefix}-{}", stem.trim_start_matches('.'));
    let (name, replaced) = free_name(&dir, &base, &ext, &text, &parsed)?;
    let dest = dir.join(&name);
    crate::files::write_atomic(&dest, text.as_bytes())
        .map_err(|e| Error::env(format!("cannot write {}: {e}", dest.display())))?;
    if let Some(other) = replaced {
        crate::say!(
            "git-sage: .sage/sessions/{other} holds another session and is kept; this one goes to .sage/sessions/{name}"
        );
    }
    let rel = format!(".sage/sessions/{name}");
    ctx.print(&format!("{rel}\n"))?;
    crate::say!(
        "git-sage: recorded {} ({} KB, {redactions} secret(s) redacted) as {rel}; `git add {rel}` and commit it with the patch (the prepare-commit-msg hook adds its Sage-Session: trailer)",
        src.display(),
        bytes.len() / 1024
    );
    // What the agent-side guard decided during the session belongs with it.
    if worktree.join(".sage/guard.log").is_file() {
        crate::say!(
            "git-sage: `git add .sage/guard.log` too: the guard's decisions on the session's writes (docs/guard.md#the-log)"
        );
    }
    Ok(0)
}

/// `.sage/sessions` of the worktree, made if missing; refused when it (or `.sage`) is a link or
/// lies outside the worktree, where a recorded session would never be committed.
fn sessions_dir(worktree: &Path) -> Result<PathBuf> {
    for rel in [".sage", ".sage/sessions"] {
        let p = worktree.join(rel);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                return Err(Error::input(format!(
                    "{rel} is a symbolic link (to {to}); git sage records sessions only into a directory of the worktree"
                ))
                .hint("make it a plain directory, then run git sage record again"));
            }
            Ok(m) if !m.is_dir() => {
                return Err(Error::input(format!("{} is not a directory", p.display())));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&p)
                    .map_err(|e| Error::env(format!("cannot create {}: {e}", p.display())))?;
            }
            Err(e) => return Err(Error::env(format!("cannot read {}: {e}", p.display()))),
        }
    }
    Ok(worktree.join(".sage/sessions"))
}

/// The file name to record under: `base.ext`, unless that holds another session (not an older
/// copy of this one), then `base-2.ext`, `base-3.ext`, … Returns the name and, when a file
/// was passed over, its name.
fn free_name(
    dir: &Path,
    base: &str,
    ext: &str,
    text: &str,
    parsed: &crate::transcript::Transcript,
) -> Result<(String, Option<String>)> {
    let mut passed = None;
    for n in 1..1000 {
        let name = match n {
            1 => format!("{base}.{ext}"),
            n => format!("{base}-{n}.{ext}"),
        };
        let p = dir.join(&name);
        let meta = match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((name, passed)),
            Err(e) => return Err(Error::env(format!("cannot read {}: {e}", p.display()))),
            Ok(m) => m,
        };
        if meta.is_file() {
            let old = crate::files::read_input(&p, "recorded session", crate::files::SESSION_CAP)?;
            let old = String::from_utf8_lossy(&old);
            if same_session(&old, text, parsed) {
                return Ok((name, passed));
            }
        }
        passed.get_or_insert(name);
    }
    Err(Error::input(format!(
        "{} holds too many sessions named {base}",
        dir.display()
    )))
}

/// Whether `old` is an earlier copy of the session now being recorded: the same session id,
/// or (for logs that only grow) a prefix of it.
fn same_session(old: &str, new: &str, parsed: &crate::transcript::Transcript) -> bool {
    if new.starts_with(old) || old == new {
        return true;
    }
    let old_id = crate::transcript::parse(
        crate::transcript::Input::from_bytes("old", old.as_bytes().to_vec()),
        Some(parsed.format),
    )
    .ok()
    .and_then(|t| t.session_id);
    old_id.is_some() && old_id == parsed.session_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_survive_redaction() {
        let line = r#"{"type":"thinking","thinking":"key sk-proj-abcdefghijklmnopqrstuvwx1234","signature":"ErAEClkIDRgCsk-proj-abcdefghijklmnopqrstuvwxyzABCD"}"#;
        let (out, n) = crate::redact::redact_document(line);
        assert_eq!(n, 1);
        assert!(out.contains("[REDACTED:openai-key]"));
        assert!(
            out.contains("\"signature\":\"ErAEClkIDRgCsk-proj-abcdefghijklmnopqrstuvwxyzABCD\"")
        );
        assert_eq!(
            claude_dir_name(Path::new("/home/me/my.shop")),
            "-home-me-my-shop"
        );
    }
}
