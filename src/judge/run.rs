//! Orchestration: which turns are judged, in what prompts, by which backends, how often; with
//! concurrency (`--jobs`), pacing (`--rpm`), retries that honour Retry-After, the on-disk
//! cache (which is also how an interrupted run resumes), and token accounting.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::answer::{self, Answer};
use super::backends::{Backend, CallError, Request, Spec, family};
use super::cache::{self, Cache, Entry, Usage};
use super::model::{JudgeInfo, SCORES_SCHEMA, ScoreSet, Scores, ScoresDoc, TurnScore};
use super::offline::Offline;
use super::prompt::{Prompt, Renderer, Templates, TurnView, fence_for, views};
use super::verify::verify;
use crate::error::{Error, Result};
use crate::transcript::mapping::Scope;
use crate::transcript::{Transcript, TurnKind};

/// How turns are put to the judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// One call per turn, turns 1..t only (the default).
    Prefix,
    /// One call for all turns (cheaper; the judge sees later turns).
    Single,
}

/// Everything `git sage judge` and `blame-origin` let the user set.
#[derive(Debug, Clone)]
pub struct Options {
    pub judges: Vec<Spec>,
    pub protocol: Protocol,
    pub repeat: u32,
    pub jobs: usize,
    pub rpm: Option<u32>,
    pub context_tokens: Option<usize>,
    pub quotes_required: bool,
    /// The confirmed defect, shown to the judge only on request.
    pub anchor_for_judge: Option<String>,
    pub criterion: String,
    pub task: Option<String>,
    pub cwe_hint: Option<u32>,
    pub templates_dir: Option<PathBuf>,
    pub cache: Cache,
    pub record: Option<PathBuf>,
    pub timeout: Duration,
    pub tries: u32,
    pub answer_tries: u32,
    pub progress: bool,
    /// Collect the uncached requests of HTTP judges here instead of making them (the first
    /// pass of `batch --batch-api`); their turns come back as failed.
    pub defer: Option<Arc<Mutex<Vec<Deferred>>>>,
}

/// A request set aside for a provider's batch interface.
#[derive(Debug, Clone)]
pub struct Deferred {
    pub judge: Spec,
    /// Where the answer goes in the cache.
    pub cache_key: String,
    /// The provider's request body (chat completions or messages).
    pub body: Value,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            judges: vec![Spec::Offline],
            protocol: Protocol::Prefix,
            repeat: 1,
            jobs: 8,
            rpm: None,
            context_tokens: None,
            quotes_required: true,
            anchor_for_judge: None,
            criterion: "security".into(),
            task: None,
            cwe_hint: None,
            templates_dir: None,
            cache: Cache::disabled(),
            record: None,
            timeout: Duration::from_secs(120),
            tries: 5,
            answer_tries: 3,
            progress: true,
            defer: None,
        }
    }
}

/// What one judging run produced, beyond the scores.
pub struct Outcome {
    pub doc: ScoresDoc,
    /// Turns whose scoring failed because the judge could not be reached (exit 3).
    pub unreachable: usize,
}

/// Spaces request starts to at most `rpm` per minute.
struct Pacer {
    interval: Option<Duration>,
    next: Mutex<Instant>,
}

impl Pacer {
    async fn wait(&self) {
        let Some(step) = self.interval else { return };
        let at = {
            let mut next = self.next.lock().expect("pacer lock");
            let now = Instant::now();
            let at = (*next).max(now);
            *next = at + step;
            at
        };
        let now = Instant::now();
        if at > now {
            tokio::time::sleep(at - now).await;
        }
    }
}

/// One request to make: a turn (or all, for `single`) of one repeat of one judge.
struct Job {
    turn: Option<u32>,
    prompt: Prompt,
    elided: bool,
    request_key: String,
}

enum JobResult {
    Answers(Vec<Answer>),
    Failed { error: String, unreachable: bool },
}

/// Judges the in-scope turns of a transcript.
pub fn judge(t: &Transcript, scope: &Scope, opts: &Options) -> Result<Outcome> {
    let templates = Templates::load(opts.templates_dir.as_deref())?;
    let criterion = templates.criterion(&opts.criterion)?;
    // The task leaves the machine in every prompt: redacted like the turns (the scope's task
    // already is; one given with --task or sage.task is redacted here).
    let (task, task_redactions) = match opts.task.as_deref() {
        Some(t) => crate::redact::redact(t),
        None => (
            scope.task.clone().unwrap_or_else(|| {
                "(no task text was found; judge against the criterion in general)".into()
            }),
            0,
        ),
    };
    let in_scope: Vec<&crate::transcript::Turn> = t
        .turns
        .iter()
        .filter(|x| x.turn >= scope.first && x.turn <= scope.last)
        .collect();
    let owned: Vec<crate::transcript::Turn> = in_scope.iter().map(|x| (*x).clone()).collect();
    let (tviews, redactions) = views(&owned);
    let redactions = redactions + task_redactions;
    let fence = fence_for(&task, &tviews);
    let renderer = Renderer::new(
        &templates,
        criterion,
        task.clone(),
        opts.anchor_for_judge.clone(),
        fence,
        opts.context_tokens,
    );
    let kinds: Vec<TurnKind> = in_scope.iter().map(|x| x.kind).collect();
    let applicable: Vec<bool> = kinds
        .iter()
        .map(|k| *k != TurnKind::Administrative)
        .collect();

    let mut sets = Vec::new();
    let mut unreachable = 0;
    let record = opts
        .record
        .as_ref()
        .map(|p| Arc::new(Mutex::new(Recorder::open(p))));
    for spec in &opts.judges {
        for r in 0..opts.repeat.max(1) {
            let mut info = JudgeInfo {
                name: spec.name(),
                protocol: match opts.protocol {
                    Protocol::Prefix => "prefix".into(),
                    Protocol::Single => "single".into(),
                },
                repeat: (opts.repeat > 1).then_some(r + 1),
                calls: 0,
                cached: 0,
                input_tokens: 0,
                output_tokens: 0,
                cached_input_tokens: 0,
                cost_usd: None,
                redactions: redactions as u64,
                warnings: Vec::new(),
            };
            if spec == &Spec::Offline {
                info.warnings.push(
                    "offline draft: phrase lists, not a language model; confirm with an LLM judge"
                        .into(),
                );
                let off = Offline::new(
                    &opts.criterion,
                    &task,
                    opts.cwe_hint,
                    opts.templates_dir.as_deref(),
                )?;
                info.warnings
                    .push(format!("offline lexicons: {}", off.selected));
                let turns = tviews
                    .iter()
                    .zip(&kinds)
                    .map(|(v, k)| {
                        finish_turn(Some(off.score(v, *k)), v, *k, opts.quotes_required, None)
                    })
                    .collect();
                info.calls = tviews.len() as u64;
                sets.push(ScoreSet { judge: info, turns });
                continue;
            }
            if let (Some(agent), Some(judge_model)) = (t.model.as_deref(), spec.model())
                && let (Some(a), Some(j)) = (family(agent), family(judge_model))
                && a == j
            {
                info.warnings.push(format!(
                    "the judge ({judge_model}) is of the same model family as the agent ({agent}); prefer a judge from another family"
                ));
            }
            if opts.protocol == Protocol::Single {
                info.warnings.push("single-call protocol: the judge saw every turn at once, so later turns may bias earlier scores (hindsight)".into());
            }
            let backend = Backend::new(spec.clone(), opts.timeout)?;
            let jobs = build_jobs(&renderer, &tviews, &applicable, opts, &templates.version, r)?;
            if jobs.iter().any(|j| j.elided) {
                info.warnings.push(
                    "some old tool outputs or arguments were elided to fit --context-tokens".into(),
                );
            }
            let (results, usage, calls, cached) = run_jobs(&backend, jobs, opts, record.clone())?;
            info.calls = calls;
            info.cached = cached;
            info.input_tokens = usage.input_tokens;
            info.output_tokens = usage.output_tokens;
            info.cached_input_tokens = usage.cached_input_tokens;
            info.cost_usd = usage.cost_usd;
            let mut turns = Vec::new();
            for (i, v) in tviews.iter().enumerate() {
                if !applicable[i] {
                    turns.push(not_applicable(v.n, kinds[i]));
                    continue;
                }
                let found = results.iter().find_map(|(turn, res)| match res {
                    JobResult::Answers(list) => list
                        .iter()
                        .find(|a| a.turn == v.n && turn.is_none_or(|t| t == v.n))
                        .cloned()
                        .map(Ok),
                    JobResult::Failed { error, unreachable } if turn.is_none_or(|t| t == v.n) => {
                        Some(Err((error.clone(), *unreachable)))
                    }
                    _ => None,
                });
                match found {
                    Some(Ok(a)) => turns.push(finish_turn(
                        Some(a),
                        v,
                        kinds[i],
                        opts.quotes_required,
                        None,
                    )),
                    Some(Err((e, u))) => {
                        if u {
                            unreachable += 1;
                        }
                        turns.push(finish_turn(
                            None,
                            v,
                            kinds[i],
                            opts.quotes_required,
                            Some(e),
                        ));
                    }
                    None => turns.push(finish_turn(
                        None,
                        v,
                        kinds[i],
                        opts.quotes_required,
                        Some("the judge's answer has no object for this turn".into()),
                    )),
                }
            }
            sets.push(ScoreSet { judge: info, turns });
        }
    }
    let first = sets.remove(0);
    Ok(Outcome {
        doc: ScoresDoc {
            schema: SCORES_SCHEMA.into(),
            judge: first.judge,
            turns: first.turns,
            sets,
            scope: Some(scope.clone()),
        },
        unreachable,
    })
}

fn not_applicable(turn: u32, kind: TurnKind) -> TurnScore {
    TurnScore {
        turn,
        kind,
        applicable: false,
        opportunity: false,
        scores: Some(Scores::default()),
        quotes: Default::default(),
        rejected_quotes: Vec::new(),
        error: None,
    }
}

/// Verifies quotes and makes the turn's record; `None` answers are scoring failures.
fn finish_turn(
    a: Option<Answer>,
    v: &TurnView,
    kind: TurnKind,
    quotes_required: bool,
    error: Option<String>,
) -> TurnScore {
    match a {
        Some(mut a) => {
            let (quotes, rejected) =
                verify(&mut a.scores, &a.quotes, &v.quotable(), quotes_required);
            TurnScore {
                turn: v.n,
                kind: a.kind,
                applicable: a.applicable,
                opportunity: a.opportunity,
                scores: Some(a.scores),
                quotes,
                rejected_quotes: rejected,
                error: None,
            }
        }
        None => TurnScore {
            turn: v.n,
            kind,
            applicable: true,
            opportunity: true,
            scores: None,
            quotes: Default::default(),
            rejected_quotes: Vec::new(),
            error: Some(error.unwrap_or_else(|| "scoring failed".into())),
        },
    }
}

fn build_jobs(
    r: &Renderer,
    tviews: &[TurnView],
    applicable: &[bool],
    opts: &Options,
    version: &str,
    repeat: u32,
) -> Result<Vec<Job>> {
    let key = |prompt: &Prompt, turn: &str| {
        cache::key(&[version, &prompt.text(), turn, &repeat.to_string()])
    };
    match opts.protocol {
        Protocol::Single => {
            let prompt = r.single(tviews)?;
            let request_key = key(&prompt, "all");
            Ok(vec![Job {
                turn: None,
                prompt,
                elided: false,
                request_key,
            }])
        }
        Protocol::Prefix => tviews
            .iter()
            .zip(applicable)
            .filter(|(_, a)| **a)
            .map(|(v, _)| {
                let (prompt, elided) = r.prefix(tviews, v.n)?;
                let request_key = key(&prompt, &v.n.to_string());
                Ok(Job {
                    turn: Some(v.n),
                    prompt,
                    elided,
                    request_key,
                })
            })
            .collect(),
    }
}

/// Appends what each call answered, for `replay:FILE` later.
struct Recorder {
    file: Option<std::fs::File>,
}

impl Recorder {
    fn open(p: &PathBuf) -> Recorder {
        Recorder {
            file: std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok(),
        }
    }

    fn write(&mut self, key: &str, turn: Option<u32>, answer: &str, usage: &Usage) {
        use std::io::Write;
        if let Some(f) = &mut self.file {
            let line =
                serde_json::json!({"key": key, "turn": turn, "answer": answer, "usage": usage});
            let _ = writeln!(f, "{line}");
        }
    }
}

type Results = (Vec<(Option<u32>, JobResult)>, Usage, u64, u64);

fn run_jobs(
    backend: &Backend,
    jobs: Vec<Job>,
    opts: &Options,
    record: Option<Arc<Mutex<Recorder>>>,
) -> Result<Results> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::env(format!("cannot start the async runtime: {e}")))?;
    let bar = indicatif::ProgressBar::new(jobs.len() as u64);
    if opts.progress {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "judging {msg} [{bar:30}] {pos}/{len} turns ({elapsed})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_message(backend.spec.name());
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let schema = answer::schema();
    let pacer = Pacer {
        interval: opts
            .rpm
            .filter(|&r| r > 0)
            .map(|r| Duration::from_secs_f64(60.0 / r as f64)),
        next: Mutex::new(Instant::now()),
    };
    let identity = backend.identity();
    let usage = Mutex::new(Usage::default());
    let counts = Mutex::new((0u64, 0u64));
    let results = rt.block_on(async {
        let sem = tokio::sync::Semaphore::new(opts.jobs.max(1));
        let tasks = jobs.iter().map(|job| {
            let sem = &sem;
            let schema = &schema;
            let pacer = &pacer;
            let identity = &identity;
            let usage = &usage;
            let counts = &counts;
            let bar = &bar;
            let record = record.clone();
            async move {
                let _permit = sem.acquire().await.expect("semaphore open");
                let cache_key = cache::key(&[identity, &job.request_key]);
                let parse = |text: &str| -> std::result::Result<Vec<Answer>, String> {
                    match job.turn {
                        Some(t) => answer::parse_one(text, t).map(|a| vec![a]),
                        None => answer::parse_many(text),
                    }
                };
                if let Some(hit) = opts.cache.get(&cache_key)
                    && let Ok(a) = parse(&hit.answer)
                {
                    counts.lock().expect("counts").1 += 1;
                    bar.inc(1);
                    return (job.turn, JobResult::Answers(a));
                }
                if let Some(defer) = &opts.defer {
                    let req = Request {
                        prompt: &job.prompt,
                        repairs: &[],
                        schema,
                        single: job.turn.is_none(),
                        key: &job.request_key,
                    };
                    let body = match &backend.spec {
                        Spec::OpenAi { model } => Some(backend.openai_body(model, &req)),
                        Spec::Anthropic { model } => Some(backend.anthropic_body(model, &req)),
                        _ => None,
                    };
                    if let Some(body) = body {
                        defer.lock().expect("deferred").push(Deferred {
                            judge: backend.spec.clone(),
                            cache_key,
                            body,
                        });
                        bar.inc(1);
                        return (
                            job.turn,
                            JobResult::Failed {
                                error: "deferred to the provider's batch interface".into(),
                                unreachable: true,
                            },
                        );
                    }
                }
                let mut repairs: Vec<(String, String)> = Vec::new();
                let mut last_error = String::new();
                for _ in 0..opts.answer_tries.max(1) {
                    let req = Request {
                        prompt: &job.prompt,
                        repairs: &repairs,
                        schema,
                        single: job.turn.is_none(),
                        key: &job.request_key,
                    };
                    let reply =
                        match call_with_retries(backend, &req, pacer, opts.tries, counts).await {
                            Ok(r) => r,
                            Err(e) => {
                                bar.inc(1);
                                return (
                                    job.turn,
                                    JobResult::Failed {
                                        error: e.clone(),
                                        unreachable: !e.starts_with("fatal:"),
                                    },
                                );
                            }
                        };
                    usage.lock().expect("usage").add(&reply.usage);
                    match parse(&reply.text) {
                        Ok(a) => {
                            opts.cache.put(
                                &cache_key,
                                &Entry {
                                    answer: reply.text.clone(),
                                    usage: reply.usage,
                                },
                            );
                            if let Some(rec) = &record {
                                rec.lock().expect("recorder").write(
                                    &job.request_key,
                                    job.turn,
                                    &reply.text,
                                    &reply.usage,
                                );
                            }
                            bar.inc(1);
                            return (job.turn, JobResult::Answers(a));
                        }
                        Err(e) => {
                            last_error = e.clone();
                            repairs.push((reply.text, e));
                        }
                    }
                }
                bar.inc(1);
                (
                    job.turn,
                    JobResult::Failed {
                        error: format!(
                            "the judge answered invalid JSON {} times (last: {last_error})",
                            opts.answer_tries.max(1)
                        ),
                        unreachable: false,
                    },
                )
            }
        });
        join_all(tasks).await
    });
    bar.finish_and_clear();
    let u = *usage.lock().expect("usage");
    let (calls, cached) = *counts.lock().expect("counts");
    Ok((results, u, calls, cached))
}

/// Runs futures concurrently on the current task and collects their outputs in order.
async fn join_all<F: std::future::Future>(futs: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futs {
        set.push(Box::pin(f));
    }
    let mut out: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in set.iter_mut().enumerate() {
            if out[i].is_some() {
                continue;
            }
            match f.as_mut().poll(cx) {
                std::task::Poll::Ready(v) => out[i] = Some(v),
                std::task::Poll::Pending => pending = true,
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}

/// One request with retries: exponential backoff from 0.5 s (capped at 30 s), or the
/// server's Retry-After when it gives one. Errors come back as text; fatal ones say so.
async fn call_with_retries(
    backend: &Backend,
    req: &Request<'_>,
    pacer: &Pacer,
    tries: u32,
    counts: &Mutex<(u64, u64)>,
) -> std::result::Result<super::backends::Reply, String> {
    let mut delay = Duration::from_millis(500);
    let mut last = String::new();
    for attempt in 0..tries.max(1) {
        pacer.wait().await;
        counts.lock().expect("counts").0 += 1;
        match backend.call(req).await {
            Ok(r) => return Ok(r),
            Err(CallError::Fatal(m)) => return Err(format!("fatal: {m}")),
            Err(CallError::Retry { message, after }) => {
                last = message;
                if attempt + 1 == tries.max(1) {
                    break;
                }
                let wait = after.unwrap_or(delay).min(Duration::from_secs(120));
                tokio::time::sleep(wait).await;
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
    }
    Err(format!(
        "the judge could not be reached after {} tries: {last}",
        tries.max(1)
    ))
}

/// Reads a scores file (`git sage judge --out`) back.
pub fn read_scores(path: &std::path::Path) -> Result<ScoresDoc> {
    let text = crate::files::read_text(path, "scores", crate::files::DOC_CAP)?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::input(format!("{}:{}: not JSON: {e}", path.display(), e.line())))?;
    if v.get("schema").and_then(Value::as_str) != Some(SCORES_SCHEMA) {
        return Err(
            Error::input(format!("{}: not a {SCORES_SCHEMA} file", path.display()))
                .hint("write one with git sage judge --out FILE"),
        );
    }
    serde_json::from_value(v).map_err(|e| Error::input(format!("{}: {e}", path.display())))
}
