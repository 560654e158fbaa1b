//! `git sage blame-origin`: the main job — provenance, turns, judge, origin rule and report.

use crate::term::Styled;
use clap::{Args, ValueEnum};

use super::Context;
use super::args::{FindingArgs, JudgeArgs, LeverArgs, RangeArgs, WritesArgs};
use super::output::Format;
use super::output::{OutputArgs, emit, warn_all};
use super::util::{finding_request, judge_options, levers, render};
use crate::anchor::Anchor;
use crate::error::{Error, Result};
use crate::finding;
use crate::history::range;
use crate::pipeline::{self, BlameRequest};
use crate::report::doc::ReportDoc;

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
git sage blame-origin --find-anchor bandit --out sage.sarif\n  \
git sage blame-origin --finding scan.sarif --all \\\n      \
--out sage.sarif --out origin.md")]
pub(crate) struct BlameOriginArgs {
    #[command(flatten)]
    pub range: RangeArgs,

    #[command(flatten)]
    pub finding: FindingArgs,

    /// No confirmed finding: run this scanner on the files the range changed and take its most
    /// severe result, marked unconfirmed in every report
    #[arg(long, value_enum, value_name = "SCANNER", conflicts_with_all = ["finding", "anchor_file"], help_heading = "Finding")]
    pub find_anchor: Option<crate::settings::Scanner>,

    /// Explain every result of the finding file (without --finding: of every finding file the
    /// repository keeps) in one run: one SARIF run with a result each, one Markdown or text
    /// section each, JSON as `sage.reports/1` (HTML holds one finding)
    #[arg(long, conflicts_with_all = ["select", "id", "anchor_file", "find_anchor"], help_heading = "Finding")]
    pub all: bool,

    /// The agent's session transcript (path or REV:path) [default: found in git]
    #[arg(long, value_name = "SESSION", help_heading = "Session")]
    pub session: Option<String>,

    #[command(flatten)]
    pub judge: JudgeArgs,

    /// Show the judge the confirmed defect (its scores are then not prefix-blind)
    #[arg(long, help_heading = "Judge")]
    pub judge_sees_anchor: bool,

    /// When the verdict is a close call, re-score with JUDGE (openai:MODEL, anthropic:MODEL,
    /// command:CMD, replay:FILE) exactly the turns it depends on, and let its answers stand
    /// for them (docs/method.md#margin)
    #[arg(long, value_name = "JUDGE", help_heading = "Judge")]
    pub confirm_with: Option<String>,

    #[command(flatten)]
    pub levers: LeverArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub writes: WritesArgs,

    /// Write origin notes (refs/notes/sage) on the introducing write and the branch tip
    #[arg(long, help_heading = "Output")]
    pub notes: bool,

    /// Also write Agent Trace records of the writes that changed the file, the result under
    /// metadata["dev.git-sage"] (docs/dialects.md#what-git-sage-writes) [default FILE:
    /// sage.agentTrace, else .agent-trace/git-sage.jsonl]
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, help_heading = "Output")]
    pub agent_trace: Option<Option<std::path::PathBuf>>,

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
    let confirm_with = confirm_judge(args)?;
    let allow_partial = super::util::allow_partial(settings, &args.judge);
    let levers = levers(settings, &args.levers)?;
    let trace = trace_file(&repo, ctx, settings, args.agent_trace.as_ref())?;
    if args.all && targets.iter().any(|t| t.format == Format::Html) {
        return Err(Error::input("--all writes text, Markdown, JSON and SARIF")
            .hint("an HTML report holds one finding: pick it with --select"));
    }
    let anchors = anchors(ctx, &repo, &range, settings, args)?;
    if args.judge.estimate {
        if let Some(t) = targets
            .iter()
            .find(|t| !matches!(t.format, Format::Text | Format::Json))
        {
            return Err(Error::input(format!(
                "--estimate writes text or JSON, not {}",
                t.format.name()
            ))
            .hint("--format json, or --out FILE.json"));
        }
        let mut docs = Vec::with_capacity(anchors.len());
        for (anchor, unconfirmed) in &anchors {
            let mut req = request(args, anchor, *unconfirmed, &judge, levers, false, None);
            req.lang = ctx.tr.lang();
            docs.push(pipeline::estimate(&repo, &range, &agents, req)?);
        }
        let doc = crate::judge::cost::EstimateDoc::combine(docs).expect("at least one finding");
        emit(ctx, &targets, &doc, |_| Ok(doc.render()))?;
        return Ok(0);
    }
    let mut docs = Vec::with_capacity(anchors.len());
    for (anchor, unconfirmed) in &anchors {
        let mut req = request(
            args,
            anchor,
            *unconfirmed,
            &judge,
            levers,
            args.writes.all(settings),
            confirm_with.clone(),
        );
        // The recommendation in the language the report is read in.
        req.lang = ctx.tr.lang();
        let (doc, _) = pipeline::blame(&repo, &range, &agents, req)?;
        docs.push(doc);
    }
    if args.all {
        let set = ReportSet {
            schema: REPORTS_SCHEMA,
            tool: crate::tool::Tool::current(),
            reports: &docs,
        };
        emit(ctx, &targets, &set, |f| render_all(&docs, f, &ctx.tr))?;
    } else {
        emit(ctx, &targets, &docs[0], |f| render(&docs[0], f, &ctx.tr))?;
    }
    for doc in &docs {
        warn_all(&ctx.tr, &doc.warnings);
    }
    super::util::say_spend(&judge);
    // Failed scoring ends the run here, before notes (shared with everyone who fetches them)
    // and before --fail-on: a gate must not pass on turns nobody judged.
    let failed: Vec<_> = docs
        .iter()
        .flat_map(|d| d.failed_turns.iter().cloned())
        .collect();
    let scored = super::util::check_scoring(&failed, allow_partial);
    if args.notes && scored.is_ok() {
        let mut n = 0;
        for doc in &docs {
            n += crate::notes::write(&repo, doc)?;
        }
        crate::say!(
            "git-sage: wrote {n} note(s) under {} (git log --notes=sage)",
            crate::git::NOTES_REF
        );
    }
    if scored.is_ok()
        && let Some(path) = &trace
    {
        let n = crate::trace::write(&repo, &docs, path)?;
        crate::say!(
            "git-sage: wrote {n} Agent Trace record(s) to {}",
            shown(path, &ctx.cwd)
        );
    }
    std::mem::forget(repo);
    scored?;
    let gate = docs.iter().any(|doc| match args.fail_on {
        Some(FailOn::Origin) => doc.origin.status == crate::origin::Status::Localized,
        Some(FailOn::Introduced) => matches!(
            doc.provenance.status,
            crate::history::ProvenanceStatus::Introduced
                | crate::history::ProvenanceStatus::IntroducedByOther
        ),
        None => false,
    });
    Ok(if gate { 1 } else { 0 })
}

/// `--confirm-with`: the judge a close call is sent to, its credentials checked up front.
fn confirm_judge(args: &BlameOriginArgs) -> Result<Option<crate::judge::backends::Spec>> {
    let Some(j) = &args.confirm_with else {
        return Ok(None);
    };
    let spec = crate::judge::backends::Spec::parse(j)?;
    if !args.judge.estimate {
        crate::judge::endpoint::check_credentials(std::slice::from_ref(&spec))?;
    }
    Ok(Some(spec))
}

/// The findings to analyse, each with whether it is unconfirmed: one scanner's finding found
/// in the range (`--find-anchor`), every finding file (`--all`), or the one given.
fn anchors(
    ctx: &Context,
    repo: &crate::git::Repo,
    range: &range::Range,
    settings: &crate::settings::Settings,
    args: &BlameOriginArgs,
) -> Result<Vec<(Anchor, bool)>> {
    Ok(match args.find_anchor {
        Some(scanner) => {
            let mut a = crate::screen::anchorless::find_anchor(
                repo,
                range,
                scanner,
                settings.templates.clone(),
                args.finding.cwe.as_deref().and_then(finding::parse_cwe),
            )?;
            finding::apply_given(&mut a, &args.finding.given())?;
            vec![(a, true)]
        }
        None if args.all => {
            let given = args.finding.given();
            let mut out = Vec::new();
            for path in finding_files(ctx, settings, &args.finding)? {
                let kept = super::util::is_kept(ctx, settings, &path);
                for mut a in finding::load_all_checked(&path)? {
                    finding::apply_given(&mut a, &given)?;
                    if kept {
                        finding::confirm_kept(&mut a);
                    }
                    let unconfirmed = a.unconfirmed;
                    out.push((a, unconfirmed));
                }
            }
            out
        }
        None => {
            let req = finding_request(ctx, settings, &args.finding)?;
            let mut a = finding::load(&req)?;
            if req
                .finding
                .as_deref()
                .is_some_and(|p| super::util::is_kept(ctx, settings, p))
            {
                finding::confirm_kept(&mut a);
            }
            let unconfirmed = a.unconfirmed;
            vec![(a, unconfirmed)]
        }
    })
}

/// What the pipeline is asked for one finding.
fn request<'a>(
    args: &'a BlameOriginArgs,
    anchor: &'a Anchor,
    unconfirmed: bool,
    judge: &crate::judge::run::Options,
    levers: crate::origin::Levers,
    all_writes: bool,
    confirm_with: Option<crate::judge::backends::Spec>,
) -> BlameRequest<'a> {
    BlameRequest {
        anchor,
        session: args.session.as_deref(),
        judge: judge.clone(),
        levers,
        judge_sees_anchor: args.judge_sees_anchor,
        unconfirmed,
        templates_dir: judge.templates_dir.clone(),
        all_writes,
        confirm_with,
        cwe_given: args.finding.cwe.is_some(),
        lang: crate::lang::Lang::En,
    }
}

/// Where `--agent-trace` (or `sage.agentTrace`) puts records, if anywhere: the flag's file
/// relative to the working directory, the setting's relative to the working tree's top.
fn trace_file(
    repo: &crate::git::Repo,
    ctx: &Context,
    settings: &crate::settings::Settings,
    flag: Option<&Option<std::path::PathBuf>>,
) -> Result<Option<std::path::PathBuf>> {
    let (path, base) = match (flag, &settings.agent_trace) {
        (Some(p), _) => (p.clone(), ctx.cwd.clone()),
        (None, Some(p)) => (p.clone(), repo.workdir().unwrap_or_else(|| ctx.cwd.clone())),
        (None, None) => return Ok(None),
    };
    crate::trace::target(repo, &base, path.as_deref()).map(Some)
}

/// A path as the user would type it from the working directory.
fn shown(path: &std::path::Path, cwd: &std::path::Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// The finding files `--all` reads: the one `--finding` names, else every one the repository
/// keeps under `sage.findings`.
fn finding_files(
    ctx: &Context,
    settings: &crate::settings::Settings,
    args: &super::args::FindingArgs,
) -> Result<Vec<std::path::PathBuf>> {
    if let Some(f) = &args.finding {
        return Ok(vec![f.clone()]);
    }
    let repo = ctx.repo()?;
    let root = repo.workdir().unwrap_or_else(|| ctx.cwd.clone());
    let files = crate::finding::discover::all(&root, &settings.findings);
    if files.is_empty() {
        return Err(
            Error::input("--all: no finding given, and none kept in the repository").hint(format!(
                "pass --finding FILE, or keep findings at {}",
                settings.findings.join(", ")
            )),
        );
    }
    Ok(files)
}

/// `sage.reports/1`: the reports of every finding of one run (`--all`).
const REPORTS_SCHEMA: &str = "sage.reports/1";

#[derive(serde::Serialize)]
struct ReportSet<'a> {
    schema: &'static str,
    tool: crate::tool::Tool,
    reports: &'a [ReportDoc],
}

/// Every finding's report in one document: one SARIF run, one section per finding otherwise.
fn render_all(docs: &[ReportDoc], format: Format, tr: &crate::i18n::Tr) -> Result<Styled> {
    if format == Format::Sarif {
        let mut s = serde_json::to_string_pretty(&crate::report::sarif::reports(docs))
            .map_err(|e| Error::env(format!("cannot encode SARIF: {e}")))?;
        s.push('\n');
        return Ok(s.into());
    }
    let sep = match format {
        Format::Md => "\n---\n\n",
        _ => "\n",
    };
    let mut all = Styled::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            all.push_str(sep);
        }
        all.append(render(d, format, tr)?);
    }
    Ok(all)
}
