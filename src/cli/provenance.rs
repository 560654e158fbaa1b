//! `git sage provenance`: was the defect inherited or introduced, and by which write? No LLM.

use clap::Args;

use super::Context;
use super::args::{FindingArgs, RangeArgs, WritesArgs};
use super::output::{DATA, Format, OutputArgs, emit};
use crate::error::Result;
use crate::finding;
use crate::history::{provenance, range};
use crate::pipeline;
use crate::report;

/// Provenance of a confirmed finding over the branch (docs/method.md#provenance)
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
git sage provenance                  # the one finding kept in .sage/findings/\n  \
git sage provenance agent/fix --base main --finding bandit.json \\\n      \
--select B310 --fail-on introduced\n  \
git sage provenance --anchor-file media/fetcher.py \\\n      \
--anchor-snippet 'url.startswith(\"https://\")' --format json")]
#[command(mut_arg("format", |a| super::output::only(a, &DATA)))]
pub(crate) struct ProvenanceArgs {
    #[command(flatten)]
    pub range: RangeArgs,

    #[command(flatten)]
    pub finding: FindingArgs,

    /// The agent's session transcript (path or REV:path), to tie writes to turns
    /// [default: one found in .sage/sessions/ or a known agent path changed in the range]
    #[arg(long, value_name = "SESSION", help_heading = "Session")]
    pub session: Option<String>,

    /// Do not look for a session; writes are not tied to turns
    #[arg(long, conflicts_with = "session", help_heading = "Session")]
    pub no_session: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub writes: WritesArgs,

    /// Exit 1 when the defect was introduced in the range (by the agent or another commit)
    #[arg(long, value_enum, value_name = "WHAT", help_heading = "Output")]
    pub fail_on: Option<FailOn>,
}

/// What `--fail-on` gates on (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    /// The defect was introduced in the range (by the agent or another commit).
    Introduced,
}

pub(crate) fn run(ctx: &Context, args: &ProvenanceArgs) -> Result<i32> {
    let targets = args.output.targets("provenance", &DATA)?;
    let t = crate::timing::stage("finding");
    let anchor = finding::load(&super::util::finding_request(
        ctx,
        ctx.settings()?,
        &args.finding,
    )?)?;
    drop(t);
    let t = crate::timing::stage("open repository");
    let repo = ctx.repo()?;
    drop(t);
    let t = crate::timing::stage("range");
    let settings = ctx.settings()?;
    let range = range::resolve_watching(
        &repo,
        args.range.branch.as_deref(),
        args.range.base.as_deref(),
        settings.base.as_deref(),
        Some(&anchor.file),
    )?;
    drop(t);
    let agents = range::AgentMatcher::from_settings(
        args.range.agent.as_deref(),
        settings.agent_pattern.as_deref(),
    )?;
    let t = crate::timing::stage("provenance (total)");
    let (range, prov) = provenance::analyse(&repo, &range, &anchor, &agents)?;
    drop(t);
    let t = crate::timing::stage("session");
    let (mut prov, session) = if args.no_session {
        (prov, None)
    } else {
        pipeline::attach_session(
            &repo,
            &range,
            prov,
            args.session.as_deref(),
            pipeline::Discovery::Cheap,
            None,
        )?
    };
    drop(t);
    if targets.iter().any(|t| t.format == Format::Text) {
        let changed: Vec<bool> = prov.writes.iter().map(|w| w.changed).collect();
        let listed = report::text::listed_writes(&changed, prov.introducing);
        provenance::describe(&repo, &mut prov, &listed)?;
    }
    let t = crate::timing::stage("build report");
    let all_writes = args.writes.all(settings);
    let session_json = session.as_ref().map(|s| s.json());
    let doc =
        report::json::provenance_doc(&anchor, &range, &prov, session_json.clone(), all_writes);
    // The flag shapes the JSON only: people read every write of a short range either way.
    let listing = (!all_writes && targets.iter().any(|t| t.format == Format::Text))
        .then(|| report::json::provenance_doc(&anchor, &range, &prov, session_json, true));
    drop(t);
    let t = crate::timing::stage("print");
    emit(ctx, &targets, &doc, |_| {
        Ok(report::text::provenance(listing.as_ref().unwrap_or(&doc)))
    })?;
    drop(t);
    // Freeing the repository's caches takes longer than the exit does.
    std::mem::forget(repo);
    let introduced = matches!(
        prov.status,
        crate::history::ProvenanceStatus::Introduced
            | crate::history::ProvenanceStatus::IntroducedByOther
    );
    Ok(match args.fail_on {
        Some(FailOn::Introduced) if introduced => 1,
        _ => 0,
    })
}
