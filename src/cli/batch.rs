//! `git sage batch`: blame-origin over a corpus of cases, resumable, shardable, with the
//! summary tables.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::Context;
use super::args::{JudgeArgs, LeverArgs};
use super::output::{Format, OutputArgs, Target, emit};
use crate::batch::run::{self, RunOptions};
use crate::batch::summary::{self, Summary};
use crate::batch::{CaseResult, CaseStatus, Manifest, Shard, read_results};
use crate::error::{Error, Result};

/// Run blame-origin over a corpus of cases (a manifest) and print the summary tables
#[derive(Debug, Args)]
#[command(
    mut_arg("format", |a| super::output::only(a, &super::output::SUMMARY)),
    after_help = "Results are JSONL, one sage.batch/1 line per case (its sage.report/1 and labels). Finished cases \
are skipped when the command runs again; failed ones are retried; judge answers are cached, so nothing is asked twice.\n\n\
Examples:\n  git sage batch corpus.yaml\n  \
git sage batch corpus.yaml --shard 2/4 --results s2.jsonl  # one CI matrix job\n  \
git sage batch --summarize shard*.jsonl --out summary.md  # tables over shards\n  \
git sage batch corpus.yaml --judge openai:gpt-4.1 --batch-api\n\nThe manifest format: docs/batch.md"
)]
pub(crate) struct BatchArgs {
    /// The manifest (sage.manifest/1 YAML)
    #[arg(value_name = "MANIFEST", required_unless_present = "summarize")]
    pub manifest: Option<PathBuf>,

    /// Results file (JSONL) [default: MANIFEST's name with .results.jsonl, or .shard-I-of-N.jsonl]
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,

    /// Cases analysed at once [default: the number of CPUs]; each case's judge makes up to
    /// --jobs requests at once
    #[arg(long, value_name = "N")]
    pub cases: Option<usize>,

    /// Run only the I-th of N interleaved parts of the manifest (CI matrices)
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,

    /// Run nothing: print the tables over these results files (e.g. every shard's)
    #[arg(long, value_name = "RESULTS", num_args = 1.., conflicts_with_all = ["manifest", "shard", "results"])]
    pub summarize: Vec<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Send the judge calls through the provider's batch interface (OpenAI Batch, Anthropic
    /// Message Batches): cheaper, slower; an interrupted wait resumes on the next run
    #[arg(long, help_heading = "Judge")]
    pub batch_api: bool,

    /// How often to ask the provider whether a batch has finished
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        help_heading = "Judge"
    )]
    pub poll_interval: u64,

    /// Submit the batch (or check on it) and stop instead of waiting; run again to collect
    #[arg(long, requires = "batch_api", help_heading = "Judge")]
    pub no_wait: bool,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub levers: LeverArgs,

    #[command(flatten)]
    pub writes: super::args::WritesArgs,
}

fn default_out(manifest: &Path, shard: Option<Shard>) -> PathBuf {
    let stem = manifest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "batch".into());
    let name = match shard {
        Some(s) => format!("{stem}.shard-{}-of-{}.jsonl", s.index, s.count),
        None => format!("{stem}.results.jsonl"),
    };
    manifest.with_file_name(name)
}

fn render(ctx: &Context, s: &Summary, targets: &[Target]) -> Result<()> {
    emit(ctx, targets, s, |f| {
        Ok(match f {
            Format::Md => summary::markdown(s),
            _ => summary::text(s),
        })
    })
}

/// 0 when every case was analysed; else the worst failure's code (3 retryable, 2 bad input).
fn exit_for(results: &[CaseResult]) -> i32 {
    results
        .iter()
        .filter(|r| r.status == CaseStatus::Failed)
        .map(|r| r.exit_code.unwrap_or(3))
        .max()
        .unwrap_or(0)
}

/// Truncates a results file after its last complete line (an interrupted write's fragment).
fn drop_torn_tail(path: &Path) -> Result<()> {
    let bytes = crate::files::read_input(path, "results", crate::files::SESSION_CAP)?;
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(keep as u64))
        .map_err(|e| {
            Error::env(format!(
                "cannot cut the unfinished line off {}: {e}",
                path.display()
            ))
        })
}

/// Rewrites the results file with one line per case, in manifest order.
fn compact(path: &Path, order: &[String]) -> Result<()> {
    let (mut results, _) = read_results(path)?;
    let pos = |c: &str| order.iter().position(|o| o == c).unwrap_or(usize::MAX);
    results.sort_by_key(|r| pos(&r.case));
    let mut bytes = Vec::new();
    for r in &results {
        serde_json::to_writer(&mut bytes, r)
            .map_err(|e| Error::env(format!("cannot encode a result: {e}")))?;
        bytes.push(b'\n');
    }
    crate::files::write_output(path, &bytes)
        .map_err(|e| Error::env(format!("cannot write {}: {e}", path.display())))
}

/// `batch --estimate`: what judging the cases still to run would cost, no judge called. A
/// case that cannot be read is a note, as it would be a failed result.
fn estimate(
    ctx: &Context,
    targets: &[super::output::Target],
    todo: &[&crate::batch::Case],
    opts: &RunOptions,
    done: usize,
) -> Result<i32> {
    let mut docs = Vec::with_capacity(todo.len());
    let mut failed = Vec::new();
    for case in todo {
        match crate::batch::run::estimate(case, opts) {
            Ok(mut d) => {
                for e in &mut d.estimates {
                    e.case = Some(case.id.clone());
                }
                for n in &mut d.notes {
                    *n = format!("case {}: {n}", case.id);
                }
                docs.push(d);
            }
            Err(e) => failed.push(format!("case {}: not estimated: {e}", case.id)),
        }
    }
    let mut doc = match crate::judge::cost::EstimateDoc::combine(docs) {
        Some(d) => d,
        None => crate::judge::run::estimate_nothing(&opts.judge)?,
    };
    if done > 0 {
        doc.notes.insert(
            0,
            format!("{done} case(s) already have results and are not counted"),
        );
    }
    doc.notes.extend(failed);
    emit(ctx, targets, &doc, |_| Ok(doc.render()))?;
    Ok(0)
}

pub(crate) fn run(ctx: &Context, args: &BatchArgs) -> Result<i32> {
    let targets = args.output.targets("batch", &super::output::SUMMARY)?;
    if !args.summarize.is_empty() {
        return summarize(ctx, &args.summarize, &targets);
    }
    let manifest_path = args.manifest.as_ref().expect("clap requires MANIFEST");
    let manifest = Manifest::load(manifest_path)?;
    let plan = Plan::new(args, &manifest, manifest_path)?;
    let opts = run_options(ctx, args)?;
    let done = plan.mine.len() - plan.todo.len();
    if args.judge.estimate {
        return estimate(ctx, &targets, &plan.todo, &opts, done);
    }
    if args.batch_api {
        crate::batch::deferred::check(&opts)?;
    }
    {
        crate::say!(
            "git-sage: {} case(s){}: {} already done, {} to run → {}",
            plan.mine.len(),
            args.shard
                .map(|s| format!(" in shard {}/{}", s.index, s.count))
                .unwrap_or_default(),
            done,
            plan.todo.len(),
            plan.out.display()
        );
    }
    if args.batch_api && !plan.todo.is_empty() {
        let ready = crate::batch::deferred::prepare(
            &plan.todo,
            &opts,
            &plan.out,
            std::time::Duration::from_secs(args.poll_interval.max(1)),
            !args.no_wait,
            crate::term::quiet(),
        )?;
        if !ready {
            crate::say!(
                "git-sage: the judge batch is still running at the provider; run the same command again to collect it"
            );
            return Ok(0);
        }
    }
    append_results(&plan.todo, &opts, &plan.out)?;
    super::util::say_spend(&opts.judge);
    let order: Vec<String> = manifest.cases.iter().map(|c| c.id.clone()).collect();
    compact(&plan.out, &order)?;
    conclude(ctx, &targets, &plan)
}

/// `batch --summarize`: the tables over results files already written, nothing run.
fn summarize(ctx: &Context, paths: &[PathBuf], targets: &[Target]) -> Result<i32> {
    let mut all = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(Error::input(format!(
                "cannot read {}: no such file",
                p.display()
            )));
        }
        all.extend(read_results(p)?.0);
    }
    let s = summary::summarise(&all);
    render(ctx, &s, targets)?;
    Ok(0)
}

/// The cases this run is for and where their results go.
struct Plan<'a> {
    out: PathBuf,
    /// The manifest's cases in this shard.
    mine: Vec<&'a crate::batch::Case>,
    /// Those without a finished result in `out`: failed ones run again.
    todo: Vec<&'a crate::batch::Case>,
}

impl<'a> Plan<'a> {
    /// Reads what `out` already holds, first cutting off a line an interrupted run left
    /// unfinished.
    fn new(args: &BatchArgs, manifest: &'a Manifest, manifest_path: &Path) -> Result<Plan<'a>> {
        let out = args
            .results
            .clone()
            .unwrap_or_else(|| default_out(manifest_path, args.shard));
        let mine: Vec<&crate::batch::Case> = manifest
            .cases
            .iter()
            .enumerate()
            .filter(|(i, _)| args.shard.is_none_or(|s| s.takes(*i)))
            .map(|(_, c)| c)
            .collect();
        let (previous, torn) = read_results(&out)?;
        if torn > 0 {
            // Cut the fragment off before appending, or the next record is glued to it.
            drop_torn_tail(&out)?;
            crate::say!(
                "git-sage: {}: an unfinished last line was dropped (that case runs again)",
                out.display()
            );
        }
        let finished: std::collections::HashSet<&str> = previous
            .iter()
            .filter(|r| r.status == CaseStatus::Ok)
            .map(|r| r.case.as_str())
            .collect();
        let todo: Vec<&crate::batch::Case> = mine
            .iter()
            .copied()
            .filter(|c| !finished.contains(c.id.as_str()))
            .collect();
        Ok(Plan { out, mine, todo })
    }
}

/// How the cases are run: how many at once, the judges (no manual one) and the levers.
fn run_options(ctx: &Context, args: &BatchArgs) -> Result<RunOptions> {
    let case_jobs = args
        .cases
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let mut judge = super::util::judge_options(ctx.settings()?, &args.judge)?;
    judge.progress = false;
    if let Some(manual) = judge
        .judges
        .iter()
        .find(|j| matches!(j, crate::judge::backends::Spec::Manual { .. }))
    {
        // Every case's prompts would meet in one directory.
        return Err(Error::input(format!(
            "--judge {}: a manual judge takes one session per directory, not a corpus",
            manual.name()
        ))
        .hint("judge a case by hand with git sage blame-origin --judge manual:DIR, or use a model judge"));
    }
    Ok(RunOptions {
        jobs: case_jobs,
        judge,
        levers: super::util::levers(ctx.settings()?, &args.levers)?,
        judge_sees_anchor: false,
        allow_partial: super::util::allow_partial(ctx.settings()?, &args.judge),
        all_writes: args.writes.all(ctx.settings()?),
        env: ctx.env.clone(),
        lang: ctx.tr.lang(),
    })
}

/// Runs the cases, appending each result to `out` as it comes (an interrupted run keeps what
/// it finished), with a progress bar and a line per failed case.
fn append_results(todo: &[&crate::batch::Case], opts: &RunOptions, out: &Path) -> Result<()> {
    let bar = indicatif::ProgressBar::new(todo.len() as u64);
    if crate::term::quiet() || todo.is_empty() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    } else {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "batch [{bar:30}] {pos}/{len} cases {msg} ({elapsed}, eta {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(|e| Error::env(format!("cannot open {}: {e}", out.display())))?;
    let mut failed = 0usize;
    run::run_all(todo, opts, |r| {
        if r.status == CaseStatus::Failed {
            failed += 1;
            bar.set_message(format!("· {failed} failed"));
            bar.suspend(|| {
                crate::say!(
                    "git-sage: case {} failed: {}",
                    r.case,
                    r.error.as_deref().unwrap_or("")
                )
            });
        }
        let mut line = serde_json::to_vec(&r)
            .map_err(|e| Error::env(format!("cannot encode a result: {e}")))?;
        line.push(b'\n');
        file.write_all(&line)
            .and_then(|_| file.flush())
            .map_err(|e| Error::env(format!("cannot write {}: {e}", out.display())))?;
        bar.inc(1);
        Ok(())
    })?;
    bar.finish_and_clear();
    Ok(())
}

/// The tables over this shard's results (earlier runs' too), the warnings they call for, and
/// the exit code.
fn conclude(ctx: &Context, targets: &[Target], plan: &Plan) -> Result<i32> {
    let (results, _) = read_results(&plan.out)?;
    let ids: std::collections::HashSet<&str> = plan.mine.iter().map(|c| c.id.as_str()).collect();
    let these: Vec<CaseResult> = results
        .into_iter()
        .filter(|r| ids.contains(r.case.as_str()))
        .collect();
    render(ctx, &summary::summarise(&these), targets)?;
    let partial = these
        .iter()
        .filter(|r| {
            r.report
                .as_ref()
                .is_some_and(|d| !d.failed_turns.is_empty())
        })
        .count();
    if partial > 0 {
        crate::say!(
            "git-sage: warning: {partial} case(s) counted with turns the judge could not score (--allow-partial; failed_turns in their reports)"
        );
    }
    let code = exit_for(&these);
    if code != 0 {
        crate::say!(
            "git-sage: {} case(s) failed (listed above); run the same command again to retry them",
            these
                .iter()
                .filter(|r| r.status == CaseStatus::Failed)
                .count()
        );
    }
    Ok(code)
}
