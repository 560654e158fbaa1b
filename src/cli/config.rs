//! `git sage config`: every setting git sage reads, its effective value, and where it came from.

use clap::Args;

use super::Context;
use crate::error::Result;
use crate::settings::{KEYS, Key};

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
pub(crate) struct ConfigArgs {}

pub(crate) fn run(ctx: &Context, _: &ConfigArgs) -> Result<i32> {
    let repo = ctx.repo().ok();
    let mut out = String::new();
    // Loading them checks every value: a bad one is reported here as everywhere else.
    ctx.settings()?;
    for Key { key, default, what } in KEYS {
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
    // Values come from the user's and the repository's config: controls shown, not obeyed.
    ctx.print_text(&out)?;
    Ok(0)
}
