//! `git sage blame-origin`: the main job — provenance, turns, judge, origin rule and report.

use clap::{Args, ValueEnum};

use super::Context;
use super::args::{FindingArgs, JudgeArgs, LeverArgs, RangeArgs};
use super::output::{OutputArgs, emit, warn_all};
use super::util::{finding_request, judge_options, levers, render};
use crate::error::Result;
use crate::finding;
use crate::history::range;
use crate::pipeline::{self, BlameRequest};

/// What `--fail-on` gates on (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailOn {
    /// An origin turn was localised.
    Origin,
    /// The defect was introduced in the range (by the agent or another commit).
    Introduced,
}

/// Where the agent's repair first went wrong (docs/method.md#origin-rule)
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
git sage blame-origin                # the one finding kept in .sage/findings/\n  \
git sage blame-origin --finding bandit.json --cwe 918 --out origin.md\n  \
git sage blame-origin agent/fix --base main --finding scan.sarif \\\n      \
--select B310 --out origin.md --out origin.sarif\n  \
git sage blame-origin --judge openai:gpt-4.1 \\\n      \
--judge anthropic:claude-sonnet-4-5 --repeat 3\n  \
git sage blame-origin --find-anchor bandit --out sage.sarif")]
pub(crate) struct BlameOriginArgs {
    #[command(flatten)]
    pub range: RangeArgs,

    #[command(flatten)]
    pub finding: FindingArgs,

    /// No confirmed finding: run this scanner on the files the range changed and take its most
    /// severe result, marked unconfirmed in every report
    #[arg(long, value_enum, value_name = "SCANNER", conflicts_with_all = ["finding", "anchor_file"], help_heading = "Finding")]
    pub find_anchor: Option<crate::settings::Scanner>,

    /// The agent's session transcript (path or REV:path) [default: found in git]
    #[arg(long, value_name = "SESSION", help_heading = "Session")]
    pub session: Option<String>,

    #[command(flatten)]
    pub judge: JudgeArgs,

    /// Show the judge the confirmed defect (its scores are then not prefix-blind)
    #[arg(long, help_heading = "Judge")]
    pub judge_sees_anchor: bool,

    #[command(flatten)]
    pub levers: LeverArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Write origin notes (refs/notes/sage) on the introducing write and the branch tip
    #[arg(long, help_heading = "Output")]
    pub notes: bool,

    /// Exit 1 when an origin is localised, or when the defect was introduced in the range
    /// (a run with turns the judge could not score exits 3 instead)
    #[arg(long, value_enum, value_name = "WHAT", help_heading = "Output")]
    pub fail_on: Option<FailOn>,
}

pub(crate) fn run(ctx: &Context, args: &BlameOriginArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    let settings = ctx.settings()?;
    let range = range::resolve(
        &repo,
        args.range.branch.as_deref(),
        args.range.base.as_deref(),
        settings.base.as_deref(),
    )?;
    let agents = range::AgentMatcher::from_settings(
        args.range.agent.as_deref(),
        settings.agent_pattern.as_deref(),
    )?;
    // Every flag and setting is checked before the finding is read or a scanner runs.
    let targets = args
        .output
        .targets("blame-origin", &super::output::REPORT)?;
    let judge = judge_options(settings, &args.judge)?;
    let allow_partial = super::util::allow_partial(settings, &args.judge);
    let levers = levers(settings, &args.levers)?;
    let (anchor, unconfirmed) = match args.find_anchor {
        Some(scanner) => {
            let mut a = crate::screen::anchorless::find_anchor(
                &repo,
                &range,
                scanner,
                settings.templates.clone(),
                args.finding.cwe.as_deref().and_then(finding::parse_cwe),
            )?;
            finding::apply_given(&mut a, &args.finding.given())?;
            (a, true)
        }
        None => {
            let a = finding::load(&finding_request(ctx, settings, &args.finding)?)?;
            let unconfirmed = a.unconfirmed;
            (a, unconfirmed)
        }
    };
    let templates_dir = judge.templates_dir.clone();
    let req = BlameRequest {
        anchor: &anchor,
        session: args.session.as_deref(),
        judge,
        levers,
        judge_sees_anchor: args.judge_sees_anchor,
        unconfirmed,
        templates_dir,
    };
    let (doc, _) = pipeline::blame(&repo, &range, &agents, req)?;
    emit(ctx, &targets, &doc, |f| render(&doc, f))?;
    warn_all(&doc.warnings);
    // Failed scoring ends the run here, before notes (shared with everyone who fetches them)
    // and before --fail-on: a gate must not pass on turns nobody judged.
    let scored = super::util::check_scoring(&doc.failed_turns, allow_partial);
    if args.notes && scored.is_ok() {
        let n = crate::notes::write(&repo, &doc)?;
        crate::say!(
            "git-sage: wrote {n} note(s) under {} (git log --notes=sage)",
            crate::git::NOTES_REF
        );
    }
    std::mem::forget(repo);
    scored?;
    let gate = match args.fail_on {
        Some(FailOn::Origin) => doc.origin.status == crate::origin::Status::Localized,
        Some(FailOn::Introduced) => matches!(
            doc.provenance.status,
            crate::history::ProvenanceStatus::Introduced
                | crate::history::ProvenanceStatus::IntroducedByOther
        ),
        None => false,
    };
    Ok(if gate { 1 } else { 0 })
}
