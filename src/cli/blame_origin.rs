//! `git sage blame-origin`: the main job — provenance, turns, judge, origin rule and report.

use clap::{Args, ValueEnum};

use super::Context;
use super::args::{FindingArgs, JudgeArgs, LeverArgs, RangeArgs};
use crate::error::{Error, Result};
use crate::finding;
use crate::history::range;
use crate::origin::Levers;
use crate::pipeline::{self, BlameRequest};
use crate::report::doc::ReportDoc;

/// Report formats of `blame-origin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
    Md,
    Html,
    Sarif,
}

/// What `--fail-on` gates on (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// An origin turn was localised.
    Origin,
    /// The defect was introduced in the range (by the agent or another commit).
    Introduced,
}

/// Where the agent's repair first went wrong (SPEC §6)
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  git sage blame-origin --finding .sage/findings/ssrf.yaml\n  git sage blame-origin agent/fix --finding bandit.sarif --select B310 --format md --out origin.md\n  git sage blame-origin --finding f.yaml --judge openai:gpt-4.1 --judge anthropic:claude-sonnet-4-5 --repeat 3\n  git sage blame-origin --find-anchor bandit --format sarif --out sage.sarif"
)]
pub struct BlameOriginArgs {
    #[command(flatten)]
    pub range: RangeArgs,

    #[command(flatten)]
    pub finding: FindingArgs,

    /// No confirmed finding: run this scanner on the files the range changed and take its most
    /// severe result, marked unconfirmed in every report
    #[arg(long, value_name = "SCANNER", value_parser = ["bandit", "semgrep", "screen"], conflicts_with_all = ["finding", "anchor_file"], help_heading = "Finding")]
    pub find_anchor: Option<String>,

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

    /// Report format
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, help_heading = "Output")]
    pub format: ReportFormat,

    /// Write the report to FILE instead of stdout
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub out: Option<std::path::PathBuf>,

    /// Write origin notes (refs/notes/sage) on the introducing write and the branch tip
    #[arg(long, help_heading = "Output")]
    pub notes: bool,

    /// Exit 1 when an origin is localised, or when the defect was introduced in the range
    #[arg(long, value_enum, value_name = "WHAT", help_heading = "Output")]
    pub fail_on: Option<FailOn>,
}

/// Origin-rule levers from flags, then `git config sage.*`.
pub fn levers(ctx: &Context, a: &LeverArgs) -> Result<Levers> {
    let (vr, sa, two_types) = (a.vr_max, a.sa_max, a.two_types);
    let repo = ctx.repo().ok();
    let cfg = |k: &str| -> Result<Option<u8>> {
        match repo
            .as_ref()
            .and_then(|r| r.config_string(k).ok().flatten())
        {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| {
                Error::input(format!(
                    "git config {k} = {v:?} is not a number from 0 to 3"
                ))
            }),
        }
    };
    let l = Levers {
        vr_max: vr.or(cfg("sage.vrMax")?).unwrap_or(1),
        sa_max: sa.or(cfg("sage.saMax")?).unwrap_or(1),
        two_types,
    };
    if l.vr_max > 3 || l.sa_max > 3 {
        return Err(Error::input("--vr-max and --sa-max take 0 to 3"));
    }
    Ok(l)
}

/// Renders a report in a format.
pub fn render(doc: &ReportDoc, format: ReportFormat) -> Result<String> {
    Ok(match format {
        ReportFormat::Text => crate::term::clean(&crate::report::text::report(doc)).into_owned(),
        ReportFormat::Md => crate::report::markdown::report(doc),
        ReportFormat::Html => crate::report::html::report(doc),
        ReportFormat::Json => crate::report::jsonfmt::to_string(doc)
            .map_err(|e| Error::env(format!("cannot encode JSON: {e}")))?,
        ReportFormat::Sarif => {
            let mut s = serde_json::to_string_pretty(&crate::report::sarif::report(doc))
                .map_err(|e| Error::env(format!("cannot encode SARIF: {e}")))?;
            s.push('\n');
            s
        }
    })
}

/// Writes a rendered report to `--out` or stdout.
pub fn emit(ctx: &Context, text: &str, out: Option<&std::path::Path>) -> Result<()> {
    match out {
        Some(p) => crate::files::write_output(p, text.as_bytes())
            .map_err(|e| Error::env(format!("cannot write {}: {e}", p.display()))),
        None => ctx.print(text),
    }
}

pub fn run(ctx: &Context, args: &BlameOriginArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    let range = range::resolve(
        &repo,
        args.range.branch.as_deref(),
        args.range.base.as_deref(),
    )?;
    let agents = range::AgentMatcher::from_settings(&repo, args.range.agent.as_deref())?;
    let (anchor, unconfirmed) = match &args.find_anchor {
        Some(scanner) => (
            crate::screen::anchorless::find_anchor(&repo, &range, scanner)?,
            true,
        ),
        None => {
            let a = finding::load(&args.finding.request())?;
            let unconfirmed = a.unconfirmed;
            (a, unconfirmed)
        }
    };
    let mut judge = super::judge::options(ctx, &args.judge)?;
    judge.task = judge.task.clone();
    let templates_dir = judge.templates_dir.clone();
    let req = BlameRequest {
        anchor: &anchor,
        session: args.session.as_deref(),
        judge,
        levers: levers(ctx, &args.levers)?,
        judge_sees_anchor: args.judge_sees_anchor,
        unconfirmed,
        templates_dir,
    };
    let (doc, unreachable) = pipeline::blame(&repo, &range, &agents, req)?;
    emit(ctx, &render(&doc, args.format)?, args.out.as_deref())?;
    if args.notes {
        let n = super::notes::write(&repo, &doc)?;
        crate::say!(
            "git-sage: wrote {n} note(s) under {} (git log --notes=sage)",
            crate::git::NOTES_REF
        );
    }
    std::mem::forget(repo);
    if unreachable > 0 {
        return Err(Error::env(format!(
            "{unreachable} turn(s) could not be scored: the judge was unreachable after retries"
        ))
        .hint("run the same command again: finished judge calls are cached and are not repeated"));
    }
    let gate = match args.fail_on {
        Some(FailOn::Origin) => doc.origin.status == crate::origin::Status::Localized,
        Some(FailOn::Introduced) => matches!(
            doc.provenance.status,
            crate::model::ProvenanceStatus::Introduced
                | crate::model::ProvenanceStatus::IntroducedByOther
        ),
        None => false,
    };
    Ok(if gate { 1 } else { 0 })
}
