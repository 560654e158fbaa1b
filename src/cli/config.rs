//! `git sage config`: every setting git sage reads, its effective value, and where it came from.

use clap::Args;

use super::Context;
use crate::error::Result;

/// The settings git sage reads (git config sage.*), with their defaults.
pub const SETTINGS: &[(&str, &str, &str)] = &[
    (
        "sage.base",
        "merge-base with origin/HEAD, main or master",
        "the branch the agent's work started from",
    ),
    (
        "sage.agentPattern",
        "every commit",
        "regex over author, committer, Co-authored-by naming agent commits",
    ),
    (
        "sage.judge",
        "offline",
        "offline | openai:MODEL | anthropic:MODEL | command:CMD | replay:FILE",
    ),
    ("sage.jobs", "8", "judge calls at once"),
    ("sage.rpm", "no cap", "judge requests per minute"),
    (
        "sage.task",
        "the user message that opened the task",
        "the task text given to the judge",
    ),
    (
        "sage.templates",
        "embedded",
        "directory overriding templates/judge, lexicons, recommendations",
    ),
    (
        "sage.cacheDir",
        "$XDG_CACHE_HOME/git-sage",
        "judge answer cache",
    ),
    (
        "sage.vrMax",
        "1",
        "missed opportunity when VR is at most this",
    ),
    (
        "sage.saMax",
        "1",
        "missed opportunity when SA is at most this",
    ),
    (
        "sage.findings",
        ".sage/findings/*.{sarif,json,yaml,yml}",
        "findings the hooks analyse (multi-valued)",
    ),
    (
        "sage.scanner",
        "none",
        "bandit | semgrep | screen: the hooks' anchor when there are no findings",
    ),
    (
        "sage.block",
        "false",
        "hooks refuse a merge/push while a confirmed finding is present",
    ),
    (
        "sage.strict",
        "false",
        "an internal error in a hook stops git",
    ),
    ("sage.notes", "true", "hooks write origin notes"),
    (
        "sage.recordMaxSize",
        "20",
        "largest session `git sage record` copies, in MB",
    ),
];

const ENV: &[&str] = &[
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "XDG_CACHE_HOME",
    "SAGE_TIMING",
    "SAGE_THREADS",
];

/// List the effective settings and where each comes from
#[derive(Debug, Args)]
#[command(
    after_help = "Flags override settings; API keys are read from the environment only and never shown."
)]
pub struct ConfigArgs {}

pub fn run(ctx: &Context, _: &ConfigArgs) -> Result<i32> {
    let repo = ctx.repo().ok();
    let mut out = String::new();
    for (key, default, what) in SETTINGS {
        let (value, source) = match repo
            .as_ref()
            .and_then(|r| r.config_entry(key).ok().flatten())
        {
            Some((v, level)) => (v, format!("git config ({level})")),
            None => (default.to_string(), "default".to_string()),
        };
        out.push_str(&format!("{key:<20} = {value:<45} [{source}]  {what}\n"));
    }
    out.push('\n');
    for var in ENV {
        let shown = match std::env::var(var) {
            Ok(v) if var.ends_with("_KEY") => format!("set ({} characters)", v.len()),
            Ok(v) => v,
            Err(_) => "unset".into(),
        };
        out.push_str(&format!("{var:<20} = {shown}\n"));
    }
    ctx.print(&out)?;
    Ok(0)
}
