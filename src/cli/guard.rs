//! `git sage guard`: install the pre-write hook in an agent's project configuration, and
//! answer it (`guard check`, run by the agent before each file write).

use std::io::Read;
use std::time::Instant;

use clap::{Args, Subcommand};

use super::Context;
use crate::error::{Error, Result};
use crate::guard::hook::{self, Agent};
use crate::guard::{self as g, install};

/// Ask an agent for the security plan before its first write (docs/guard.md)
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
git sage guard install --agent claude-code\n  \
git sage guard uninstall --agent claude-code\n  \
git sage guard check --agent codex < hook-input.json")]
pub(crate) struct GuardArgs {
    #[command(subcommand)]
    pub cmd: GuardCmd,
}

#[derive(Debug, Subcommand)]
pub(crate) enum GuardCmd {
    /// Add the guard to the agent's project-level hook configuration (idempotent)
    Install(AgentArg),
    /// Take it out again: the file as it was, byte for byte, when untouched since
    Uninstall(AgentArg),
    /// Read the agent's hook JSON on stdin and allow or deny the write (what the hook runs)
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub(crate) struct AgentArg {
    /// The agent whose configuration to change
    #[arg(long, value_enum)]
    pub agent: Agent,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The agent the hook was installed for (the payload's shape decides when they differ)
    #[arg(long, value_enum)]
    pub agent: Option<Agent>,
}

pub(crate) fn run(ctx: &Context, args: &GuardArgs) -> Result<i32> {
    match &args.cmd {
        GuardCmd::Install(a) | GuardCmd::Uninstall(a) => {
            let repo = ctx.repo()?;
            let root = repo.workdir().ok_or_else(|| {
                Error::input("a bare repository has no work tree for agent configuration")
            })?;
            let said = match &args.cmd {
                GuardCmd::Install(_) => install::install(&root, &repo.git_dir(), a.agent)?,
                _ => install::uninstall(&root, &repo.git_dir(), a.agent)?,
            };
            crate::say!("{said}");
            Ok(0)
        }
        GuardCmd::Check(a) => Ok(check(ctx, a)),
    }
}

/// Largest hook input read: tool inputs carry whole files.
const STDIN_CAP: u64 = 64 << 20;

/// Never an error exit: a guard that breaks must not stop the user's agent. Its own failures
/// allow the write with a warning, unless `sage.guardStrict` asks to deny then.
fn check(ctx: &Context, a: &CheckArgs) -> i32 {
    let start = Instant::now();
    let mut stdin = String::new();
    let read = std::io::stdin()
        .take(STDIN_CAP)
        .read_to_string(&mut stdin)
        .map_err(|e| Error::env(format!("cannot read the hook input: {e}")));
    let call = read.and_then(|_| hook::parse(&stdin, a.agent));
    let agent = call
        .as_ref()
        .map(|c| c.agent)
        .unwrap_or(a.agent.unwrap_or(Agent::ClaudeCode));
    let outcome = match &call {
        Ok(c) => decide(ctx, c),
        Err(e) => Err(Error::input(e.message().to_string())),
    };
    let strict = ctx.settings().map(|s| s.guard_strict).unwrap_or(false);
    let (deny, why) = match &outcome {
        Ok((o, _)) => (o.deny.clone(), o.why.clone()),
        Err(e) if strict => (
            Some(format!(
                "git sage guard could not check this write ({}), and sage.guardStrict is set",
                e.message()
            )),
            format!("internal error, strict: {}", e.message()),
        ),
        Err(e) => {
            crate::say!(
                "git-sage: warning: guard: {} (the write is allowed; sage.guardStrict denies instead)",
                e.message()
            );
            (None, format!("internal error, allowed: {}", e.message()))
        }
    };
    if let Ok(c) = &call
        && c.writes
    {
        let root = outcome
            .as_ref()
            .ok()
            .and_then(|(_, r)| r.clone())
            .or_else(|| ctx.repo().ok().and_then(|r| r.workdir()));
        if let Some(root) = root {
            let facts = outcome.as_ref().ok().and_then(|(o, _)| o.facts.as_ref());
            let line = g::LogLine {
                schema: g::LOG_SCHEMA,
                tool: crate::tool::Tool::current(),
                time: g::utc_now(),
                agent: agent.name(),
                session: c.session_id.as_deref(),
                tool_name: &c.tool,
                paths: &c.paths,
                decision: if deny.is_some() { "deny" } else { "allow" },
                why,
                facts,
                ms: g::ms(start),
            };
            if let Err(e) = g::log(&root, &line) {
                crate::say!("git-sage: warning: guard: {}", e.message());
            }
        }
    }
    let (out, code) = hook::answer(agent, deny.as_deref());
    // A reader that went away (`| head`) is no reason to panic: the decision is the exit code.
    if !out.is_empty()
        && let Err(e) = ctx.print(&format!("{out}\n"))
    {
        crate::say!("git-sage: warning: guard: {}", e.message());
    }
    code
}

/// The CWE of a finding the repository keeps that this write bears on (`Some(None)`: one
/// without a CWE): a write of the finding's file, or of a file that uses it (names its module).
/// A README typo fix is not a write on a kept SSRF finding.
fn kept_finding_written(
    root: &std::path::Path,
    settings: &crate::settings::Settings,
    call: &hook::Call,
) -> Option<Option<u32>> {
    let anchors: Vec<crate::anchor::Anchor> =
        crate::finding::discover::all(root, &settings.findings)
            .iter()
            .filter_map(|f| crate::finding::load_all(f).ok())
            .flatten()
            .collect();
    if anchors.is_empty() {
        return None;
    }
    let cwd = call
        .cwd
        .as_deref()
        .map_or_else(|| root.to_path_buf(), std::path::PathBuf::from);
    let written: Vec<std::path::PathBuf> = call.paths.iter().map(|p| cwd.join(p)).collect();
    anchors.iter().find_map(|a| {
        let file = root.join(&a.file);
        // The module a caller names: `fetcher` of media/fetcher.py.
        let stem = std::path::Path::new(&a.file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| s.len() >= 3);
        // A path the agent gave from elsewhere (its own checkout) still ends with the file.
        let bears = written.iter().any(|w| {
            w == &file
                || w.ends_with(&a.file)
                || stem.as_deref().is_some_and(|stem| {
                    crate::files::read_text(w, "file", 1 << 20)
                        .is_ok_and(|text| names_word(&text, stem))
                })
        });
        bears.then_some(a.cwe)
    })
}

/// Whether `text` holds `word` as a whole identifier.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// The decision, and the repository root the log goes under.
fn decide(ctx: &Context, call: &hook::Call) -> Result<(g::Outcome, Option<std::path::PathBuf>)> {
    if !call.writes {
        return Ok((
            g::decide(
                call,
                &Default::default(),
                &ctx.tr,
                crate::settings::GuardMode::Auto,
                None,
                None,
            )?,
            None,
        ));
    }
    // The agent's working directory names the repository; the hook may run elsewhere.
    let repo = match &call.cwd {
        Some(d) => crate::git::Repo::discover(std::path::Path::new(d)).or_else(|_| ctx.repo()),
        None => ctx.repo(),
    }
    .ok();
    let settings = crate::settings::Settings::load(repo.as_ref(), &ctx.env)?;
    let root = repo.as_ref().and_then(|r| r.workdir());
    let finding = root
        .as_ref()
        .and_then(|root| kept_finding_written(root, &settings, call));
    let state = repo
        .as_ref()
        .map(|r| r.git_dir().join("sage").join("guard").join("sessions"));
    let o = g::decide(
        call,
        &settings,
        &ctx.tr,
        settings.guard,
        finding,
        state.as_deref(),
    )?;
    Ok((o, root))
}
