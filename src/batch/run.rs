//! Runs cases on worker threads, one repository at a time per worker; each finished case is
//! handed back at once so it can be written before the next one ends (resumability).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::{Case, CaseResult, CaseStatus, RESULT_SCHEMA};
use crate::error::Result;
use crate::git::Repo;
use crate::history::range::{self, AgentMatcher};
use crate::judge::run::Options;
use crate::origin::Levers;
use crate::pipeline::{self, BlameRequest};
use crate::report::doc::ReportDoc;

/// How every case is analysed.
#[derive(Clone)]
pub(crate) struct RunOptions {
    /// Cases at once.
    pub jobs: usize,
    pub judge: Options,
    pub levers: Levers,
    pub judge_sees_anchor: bool,
    /// A case with turns the judge could not score still counts as analysed.
    pub allow_partial: bool,
    /// Every case's report lists every write in `provenance.writes[]`.
    pub all_writes: bool,
    /// The environment, for each case's settings.
    pub env: crate::env::Env,
    /// The language reports are read in.
    pub lang: crate::lang::Lang,
}

/// `blame-origin` for one case.
pub(crate) fn analyse(case: &Case, opts: &RunOptions) -> Result<ReportDoc> {
    let doc = with_case(case, opts, |repo, range, agents, req| {
        pipeline::blame(repo, range, agents, req).map(|(doc, _)| doc)
    })?;
    // Not a result unless allowed: a turn without scores would bias the origin and the
    // tables. The answers that did come back are cached, so the rerun asks only for the rest.
    match crate::judge::failed::error(&doc.failed_turns) {
        Some(e) if !opts.allow_partial => Err(e),
        _ => Ok(doc),
    }
}

/// `batch --estimate` for one case: what judging it would cost, no judge called.
pub(crate) fn estimate(case: &Case, opts: &RunOptions) -> Result<crate::judge::cost::EstimateDoc> {
    with_case(case, opts, pipeline::estimate)
}

/// Opens a case's repository, range and finding as `blame-origin` would, and hands them on.
fn with_case<T>(
    case: &Case,
    opts: &RunOptions,
    f: impl FnOnce(&Repo, &range::Range, &AgentMatcher, BlameRequest) -> Result<T>,
) -> Result<T> {
    let repo = Repo::discover(&case.repo)?;
    // Each case's repository has its own settings.
    let settings = crate::settings::Settings::load(Some(&repo), &opts.env)?;
    let anchor = crate::finding::load(&crate::finding::Request {
        finding: Some(case.finding.clone()),
        select: case.select.clone(),
        inline: None,
        given: Default::default(),
    })?;
    let range = range::resolve_watching(
        &repo,
        case.tip.as_deref(),
        case.base.as_deref(),
        settings.base.as_deref(),
        Some(&anchor.file),
    )?;
    let agents =
        AgentMatcher::from_settings(case.agent.as_deref(), settings.agent_pattern.as_deref())?;
    let mut judge = opts.judge.clone();
    judge.progress = false;
    if case.task.is_some() {
        judge.task = case.task.clone();
    }
    if let Some(c) = &case.criterion {
        judge.criterion = c.clone();
    }
    let templates_dir = judge.templates_dir.clone();
    let req = BlameRequest {
        anchor: &anchor,
        session: case.session.as_deref(),
        judge,
        levers: opts.levers,
        judge_sees_anchor: opts.judge_sees_anchor,
        unconfirmed: anchor.unconfirmed,
        templates_dir,
        all_writes: opts.all_writes,
        confirm_with: None,
        cwe_given: false,
        lang: opts.lang,
    };
    f(&repo, &range, &agents, req)
}

/// Runs one case, turning errors and panics into a failed result.
pub(crate) fn run_one(case: &Case, opts: &RunOptions) -> CaseResult {
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| analyse(case, opts)));
    let (status, report, error, exit_code) = match outcome {
        Ok(Ok(doc)) => (CaseStatus::Ok, Some(doc), None, None),
        Ok(Err(e)) => (
            CaseStatus::Failed,
            None,
            Some(e.to_string()),
            Some(e.exit_code()),
        ),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            (
                CaseStatus::Failed,
                None,
                Some(format!("internal error: {msg}")),
                Some(3),
            )
        }
    };
    CaseResult {
        schema: RESULT_SCHEMA.into(),
        tool: Some(crate::tool::Tool::current()),
        case: case.id.clone(),
        labels: case.labels.clone(),
        status,
        error,
        exit_code,
        seconds: (start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        report,
    }
}

/// Runs `cases` with `opts.jobs` workers; `done` receives each result as it finishes, on the
/// calling thread. A case that fails does not stop the others; an error from `done` (say,
/// the results file cannot be written) does, once running cases end.
pub(crate) fn run_all(
    cases: &[&Case],
    opts: &RunOptions,
    mut done: impl FnMut(CaseResult) -> Result<()>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let workers = opts.jobs.clamp(1, cases.len().max(1));
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<CaseResult>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            s.spawn(move || {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    if tx.send(run_one(case, opts)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut first_err = None;
        for r in rx {
            if first_err.is_some() {
                continue;
            }
            if let Err(e) = done(r) {
                stop.store(true, Ordering::Relaxed);
                first_err = Some(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    })
}
