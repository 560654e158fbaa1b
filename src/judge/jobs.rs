//! Making one judge × repeat's requests: answers already in the cache (which is also how an
//! interrupted run resumes), requests set aside for a provider's batch interface, and calls —
//! at most `--jobs` at a time, paced to `--rpm`, retried with backoff that honours Retry-After,
//! and asked again (the invalid answer shown back) until an answer parses.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use tokio::runtime::Runtime;
use tokio::task::JoinSet;

use super::answer::{self, Answer};
use super::backends::{Backend, CallError, Reply, Request};
use super::cache::{self, Cache, Entry, Usage};
use super::options::{Deferred, Options};
use super::prompt::Prompt;
use super::scores::FailureCause;
use crate::error::{Error, Result};

/// One request to make: a turn (or all, for `single`) of one repeat of one judge.
pub(super) struct Job {
    /// `None`: every turn at once (`--protocol single`).
    pub turn: Option<u32>,
    pub prompt: Prompt,
    pub elided: bool,
    /// Everything but the backend that decides the answer, hashed.
    pub request_key: String,
}

impl Job {
    fn request<'a>(&'a self, schema: &'a Value, repairs: &'a [(String, String)]) -> Request<'a> {
        Request {
            prompt: &self.prompt,
            repairs,
            schema,
            single: self.turn.is_none(),
            key: &self.request_key,
        }
    }

    /// The answers in a reply (or a cached one), or why it cannot be used.
    fn parse(&self, text: &str) -> std::result::Result<Vec<Answer>, String> {
        match self.turn {
            Some(t) => answer::parse_one(text, t).map(|a| vec![a]),
            None => answer::parse_many(text),
        }
    }
}

/// What came of a job.
#[derive(Debug)]
pub(super) enum JobResult {
    Answers(Vec<Answer>),
    Failed(JobError),
    /// Not asked: its answer could not change the origin or the missed opportunities.
    Skipped(super::scores::Skip),
}

/// Decides, as answers come in, which turns need no call (rule-aware scheduling,
/// docs/judge.md#scheduling). Jobs are started in turn order, so each decision sees every
/// answer that is back by then.
pub(super) trait Gate {
    /// What came of the job for `turn`.
    fn learn(&mut self, turn: u32, result: &JobResult);
    /// Whether the job for `turn`, not yet started, can go unasked, and why.
    fn skip(&mut self, turn: u32) -> Option<super::scores::Skip>;
}

/// Why a job has no answers. `Display` is the text the turns' `error` records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum JobError {
    /// The server refused the credentials (401, 403); later jobs of the judge are not sent.
    Refused(String),
    /// The backend refused in a way another try cannot fix (a 4xx, no recorded answer…).
    Fatal(String),
    /// Every try failed in a way that might have passed (timeouts, 5xx, 429…).
    Unreachable { tries: u32, last: String },
    /// The judge answered every time, never in a usable form.
    Invalid { tries: u32, last: String },
    /// Set aside for the provider's batch interface (the first pass of `batch --batch-api`).
    Deferred,
    /// The manual judge has no answer for it yet; the words say where it goes.
    Pending(String),
    /// The manual judge's answer for it cannot be used; the words name its file.
    Unusable(String),
    /// Not sent: `--max-cost` would have been passed; the words give the figures.
    OverBudget(String),
}

impl JobError {
    /// The failure as the report's data records it, by what the user can do about it.
    pub(super) fn cause(&self) -> FailureCause {
        match self {
            JobError::Refused(_) => FailureCause::Refused,
            JobError::Fatal(_) => FailureCause::Fatal,
            JobError::Unreachable { .. } => FailureCause::Unreachable,
            JobError::Invalid { .. } => FailureCause::InvalidAnswer,
            JobError::Deferred | JobError::Pending(_) => FailureCause::Deferred,
            JobError::Unusable(_) => FailureCause::InvalidAnswer,
            JobError::OverBudget(_) => FailureCause::OverBudget,
        }
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::Refused(m) => write!(f, "refused: {m}"),
            JobError::Fatal(m) => write!(f, "fatal: {m}"),
            JobError::Unreachable { tries, last } => {
                write!(
                    f,
                    "the judge could not be reached after {tries} tries: {last}"
                )
            }
            JobError::Invalid { tries, last } => {
                write!(
                    f,
                    "the judge answered invalid JSON {tries} times (last: {last})"
                )
            }
            JobError::Deferred => f.write_str("deferred to the provider's batch interface"),
            JobError::Pending(m) | JobError::Unusable(m) | JobError::OverBudget(m) => {
                f.write_str(m)
            }
        }
    }
}

/// What a judge × repeat's jobs gave, in the jobs' order, and what they cost.
pub(super) struct Ran {
    pub results: Vec<(Option<u32>, JobResult)>,
    pub usage: Usage,
    /// Requests sent, every try counted (a retried request is billed again).
    pub requests: u64,
    /// Jobs the cache answered without a request.
    pub cache_hits: u64,
    /// Jobs not asked, since their answers could not change the result.
    pub skipped: u64,
}

/// The runtime every request of a `judge()` call runs on.
pub(super) fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::env(format!("cannot start the async runtime: {e}")))
}

/// Runs a judge × repeat's jobs on `rt`. With a gate, a job is asked only if the gate, having
/// seen every answer back by then, still needs it.
pub(super) fn run(
    rt: &Runtime,
    backend: Backend,
    jobs: Vec<Job>,
    opts: &Options,
    record: Option<Arc<Mutex<Recorder>>>,
    price: Option<&super::cost::Price>,
    mut gate: Option<&mut dyn Gate>,
) -> Ran {
    let bar = progress_bar(jobs.len(), &backend.spec.name(), opts.progress);
    let caller = Arc::new(Caller {
        price: price.cloned(),
        spend: opts.spend.clone(),
        identity: backend.identity(),
        backend,
        schema: answer::schema(),
        pacer: Pacer::new(opts.rpm),
        tally: Tally::default(),
        cache: opts.cache.clone(),
        record,
        tries: opts.tries.max(1),
        answer_tries: opts.answer_tries.max(1),
        refused: Mutex::new(None),
        bar,
    });
    let turns: Vec<Option<u32>> = jobs.iter().map(|j| j.turn).collect();
    let mut results: Vec<Option<JobResult>> = turns.iter().map(|_| None).collect();
    let mut calls = Vec::new();
    for (i, job) in jobs.into_iter().enumerate() {
        let cache_key = cache::key(&[&caller.identity, &job.request_key]);
        match caller.without_call(&job, &cache_key, opts.defer.as_deref()) {
            Some(r) => {
                // Answers from the cache are free, and known before any call.
                if let (Some(g), Some(t)) = (gate.as_deref_mut(), job.turn) {
                    g.learn(t, &r);
                }
                results[i] = Some(r);
            }
            None => calls.push((i, job, cache_key)),
        }
    }
    for (i, r) in rt.block_on(call_all(caller.clone(), calls, opts.jobs, gate)) {
        results[i] = Some(r);
    }
    caller.bar.finish_and_clear();
    let skipped = results
        .iter()
        .filter(|r| matches!(r, Some(JobResult::Skipped(_))))
        .count() as u64;
    Ran {
        results: turns
            .into_iter()
            .zip(results.into_iter().map(|r| r.expect("every job settled")))
            .collect(),
        usage: *caller.tally.usage.lock().expect("usage"),
        requests: caller.tally.requests.load(Ordering::Relaxed),
        cache_hits: caller.tally.cache_hits.load(Ordering::Relaxed),
        skipped,
    }
}

/// Makes the calls, at most `limit` at a time, and returns each result with its job's index.
/// Calls start in turn order (the pacer's slots and the provider's prompt cache follow the
/// prefixes as they grow); before each, the gate learns every answer back and may skip it.
async fn call_all(
    caller: Arc<Caller>,
    calls: Vec<(usize, Job, String)>,
    limit: usize,
    mut gate: Option<&mut dyn Gate>,
) -> Vec<(usize, JobResult)> {
    let limit = limit.max(1);
    let mut set = JoinSet::new();
    let mut done = Vec::with_capacity(calls.len());
    let mut over: Option<String> = None;
    let settle = |joined: Result<(usize, Option<u32>, JobResult), tokio::task::JoinError>,
                  gate: &mut Option<&mut dyn Gate>,
                  done: &mut Vec<(usize, JobResult)>| {
        match joined {
            Ok((i, turn, r)) => {
                if let (Some(g), Some(t)) = (gate.as_deref_mut(), turn) {
                    g.learn(t, &r);
                }
                done.push((i, r));
            }
            // A panicking call is a bug: it reaches the caller as a panic, not as a failed turn.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    };
    for (i, job, cache_key) in calls {
        // A free slot first (none is needed once over --max-cost: nothing more is sent).
        while over.is_none() && set.len() >= limit {
            let joined = set.join_next().await.expect("a task is running");
            settle(joined, &mut gate, &mut done);
        }
        // What came back meanwhile may make this call unneeded.
        while let Some(joined) = set.try_join_next() {
            settle(joined, &mut gate, &mut done);
        }
        if let (Some(g), Some(t)) = (gate.as_deref_mut(), job.turn)
            && let Some(why) = g.skip(t)
        {
            caller.bar.inc(1);
            done.push((i, JobResult::Skipped(why)));
            continue;
        }
        // Once a call would pass --max-cost, it and every later one stay unsent: the turns
        // are judged in order, so what was judged is a prefix of the session.
        let reserved = match over.clone().map_or_else(|| caller.reserve(&job), Err) {
            Ok(r) => r,
            Err(why) => {
                let r = JobResult::Failed(JobError::OverBudget(why.clone()));
                if let (Some(g), Some(t)) = (gate.as_deref_mut(), job.turn) {
                    g.learn(t, &r);
                }
                done.push((i, r));
                over = Some(why);
                continue;
            }
        };
        let caller = caller.clone();
        set.spawn(async move {
            let (result, used) = caller.call_job(&job, &cache_key).await;
            if let (Some(spend), Some(price)) = (&caller.spend, &caller.price) {
                spend.settle(reserved, used.cost_usd.unwrap_or_else(|| price.cost(&used)));
            }
            (i, job.turn, result)
        });
    }
    while let Some(joined) = set.join_next().await {
        settle(joined, &mut gate, &mut done);
    }
    done
}

/// What every call of one judge × repeat needs; shared by the spawned tasks.
struct Caller {
    /// The judge's prices, for `--max-cost`.
    price: Option<super::cost::Price>,
    /// The run's spend under `--max-cost`.
    spend: Option<Arc<super::cost::Spend>>,
    backend: Backend,
    /// Which backend answered, as the cache keys name it.
    identity: String,
    schema: Value,
    pacer: Pacer,
    tally: Tally,
    cache: Cache,
    record: Option<Arc<Mutex<Recorder>>>,
    tries: u32,
    answer_tries: u32,
    /// The first refusal of the credentials: the jobs not yet sent fail with it unsent.
    refused: Mutex<Option<String>>,
    bar: ProgressBar,
}

impl Caller {
    /// A job that needs no call: answered by the cache, or set aside for the batch interface.
    /// A cached answer that does not parse is asked again rather than trusted.
    fn without_call(
        &self,
        job: &Job,
        cache_key: &str,
        defer: Option<&Mutex<Vec<Deferred>>>,
    ) -> Option<JobResult> {
        if let Some(hit) = self.cache.get(cache_key)
            && let Ok(a) = job.parse(&hit.answer)
        {
            self.tally.cache_hits.fetch_add(1, Ordering::Relaxed);
            self.bar.inc(1);
            return Some(JobResult::Answers(a));
        }
        let defer = defer?;
        let body = self.backend.batch_body(&job.request(&self.schema, &[]))?;
        defer.lock().expect("deferred").push(Deferred {
            judge: self.backend.spec.clone(),
            cache_key: cache_key.to_string(),
            body,
        });
        self.bar.inc(1);
        Some(JobResult::Failed(JobError::Deferred))
    }

    /// The refusal that stopped this judge, if one did.
    fn refusal(&self) -> Option<JobError> {
        let refused = self.refused.lock().expect("refused");
        refused.clone().map(JobError::Refused)
    }

    /// Asks until an answer parses, at most `answer_tries` times, each time showing the judge
    /// its earlier invalid answers; the valid one goes to the cache and the record.
    /// Also returns what the call's tries used, as the provider reported it.
    async fn call_job(&self, job: &Job, cache_key: &str) -> (JobResult, Usage) {
        let mut used = Usage::default();
        let result = match self.refusal() {
            Some(e) => Err(e),
            None => self.ask(job, cache_key, &mut used).await,
        };
        self.bar.inc(1);
        let result = match result {
            Ok(a) => JobResult::Answers(a),
            Err(e) => JobResult::Failed(e),
        };
        (result, used)
    }

    /// Sets aside what a call should cost under `--max-cost` (every input token at the
    /// uncached price, the answer at the price table's size): the amount to settle once it
    /// is back, or why it may not be sent.
    fn reserve(&self, job: &Job) -> std::result::Result<f64, String> {
        let (Some(spend), Some(price)) = (&self.spend, &self.price) else {
            return Ok(0.0);
        };
        let schema = serde_json::to_string(&self.schema).unwrap_or_default();
        let text = job.prompt.text();
        let input =
            price.tokenizer.count(&text) + super::cost::overhead(price.tokenizer.count(&schema));
        let projected = price.cost(&Usage {
            input_tokens: input,
            output_tokens: price.answer_tokens,
            cached_input_tokens: 0,
            cost_usd: None,
        });
        spend.reserve(projected).map(|()| projected)
    }

    async fn ask(
        &self,
        job: &Job,
        cache_key: &str,
        used: &mut Usage,
    ) -> std::result::Result<Vec<Answer>, JobError> {
        let mut repairs: Vec<(String, String)> = Vec::new();
        let mut last = String::new();
        for _ in 0..self.answer_tries {
            let reply = self
                .call_with_retries(&job.request(&self.schema, &repairs))
                .await?;
            self.tally.usage.lock().expect("usage").add(&reply.usage);
            used.add(&reply.usage);
            match job.parse(&reply.text) {
                Ok(a) => {
                    self.keep(job, cache_key, &reply);
                    return Ok(a);
                }
                Err(e) => {
                    last = e.clone();
                    repairs.push((reply.text, e));
                }
            }
        }
        Err(JobError::Invalid {
            tries: self.answer_tries,
            last,
        })
    }

    /// Stores a valid answer at once, so an interrupted run does not pay for it again.
    fn keep(&self, job: &Job, cache_key: &str, reply: &Reply) {
        self.cache.put(
            cache_key,
            &Entry {
                answer: reply.text.clone(),
                usage: reply.usage,
            },
        );
        if let Some(rec) = &self.record {
            rec.lock().expect("recorder").write(
                &job.request_key,
                job.turn,
                &reply.text,
                &reply.usage,
            );
        }
    }

    /// One request, tried up to `tries` times while the failures are transient.
    async fn call_with_retries(&self, req: &Request<'_>) -> std::result::Result<Reply, JobError> {
        let mut backoff = Backoff::default();
        let mut last = String::new();
        for attempt in 0..self.tries {
            self.pacer.wait().await;
            // Another job's refusal also ends this one's retries.
            if let Some(e) = self.refusal() {
                return Err(e);
            }
            self.tally.requests.fetch_add(1, Ordering::Relaxed);
            match self.backend.call(req).await {
                Ok(r) => return Ok(r),
                Err(CallError::Refused(m)) => {
                    self.refused
                        .lock()
                        .expect("refused")
                        .get_or_insert_with(|| m.clone());
                    return Err(JobError::Refused(m));
                }
                Err(CallError::Fatal(m)) => return Err(JobError::Fatal(m)),
                Err(CallError::Retry { message, after }) => {
                    last = message;
                    if attempt + 1 == self.tries {
                        break;
                    }
                    tokio::time::sleep(backoff.next(after)).await;
                }
            }
        }
        Err(JobError::Unreachable {
            tries: self.tries,
            last,
        })
    }
}

/// What the calls cost; atomics (and a lock for the float cost) because tasks on both worker
/// threads add to it.
#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    cache_hits: AtomicU64,
    usage: Mutex<Usage>,
}

/// The waits between tries: doubling from 0.5 s up to 30 s, unless the server said how long
/// (Retry-After, capped at 120 s). The doubling goes on under Retry-After, so a server that
/// stops sending it does not bring the delay back to 0.5 s.
struct Backoff {
    delay: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            delay: Duration::from_millis(500),
        }
    }
}

impl Backoff {
    fn next(&mut self, retry_after: Option<Duration>) -> Duration {
        let wait = retry_after
            .unwrap_or(self.delay)
            .min(Duration::from_secs(120));
        self.delay = (self.delay * 2).min(Duration::from_secs(30));
        wait
    }
}

/// Spaces request starts to at most `rpm` per minute.
struct Pacer {
    interval: Option<Duration>,
    next: Mutex<Instant>,
}

impl Pacer {
    /// No pacing without `--rpm`, or with `--rpm 0`.
    fn new(rpm: Option<u32>) -> Pacer {
        Pacer {
            interval: rpm
                .filter(|&r| r > 0)
                .map(|r| Duration::from_secs_f64(60.0 / r as f64)),
            next: Mutex::new(Instant::now()),
        }
    }

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

fn progress_bar(len: usize, judge: &str, show: bool) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    if show {
        bar.set_style(
            ProgressStyle::with_template("judging {msg} [{bar:30}] {pos}/{len} turns ({elapsed})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(judge.to_string());
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

/// Appends what each call answered, for `replay:FILE` later.
pub(super) struct Recorder {
    file: Option<std::fs::File>,
}

impl Recorder {
    /// A file that cannot be opened records nothing: the run matters more than its record.
    pub(super) fn open(p: &Path) -> Recorder {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::backends::Spec;

    #[test]
    fn job_errors_read_as_before_and_name_their_cause() {
        let cases = [
            (
                JobError::Refused("HTTP 401: bad key".into()),
                "refused: HTTP 401: bad key",
                FailureCause::Refused,
            ),
            (
                JobError::Fatal("HTTP 404: no".into()),
                "fatal: HTTP 404: no",
                FailureCause::Fatal,
            ),
            (
                JobError::Unreachable {
                    tries: 5,
                    last: "HTTP 503: busy".into(),
                },
                "the judge could not be reached after 5 tries: HTTP 503: busy",
                FailureCause::Unreachable,
            ),
            (
                JobError::Invalid {
                    tries: 3,
                    last: "no JSON object found in the answer".into(),
                },
                "the judge answered invalid JSON 3 times (last: no JSON object found in the answer)",
                FailureCause::InvalidAnswer,
            ),
            (
                JobError::Deferred,
                "deferred to the provider's batch interface",
                FailureCause::Deferred,
            ),
            (
                JobError::Pending("no answer yet in d/turn-001.answer.md".into()),
                "no answer yet in d/turn-001.answer.md",
                FailureCause::Deferred,
            ),
            (
                JobError::Unusable("d/turn-001.answer.md:2: not JSON".into()),
                "d/turn-001.answer.md:2: not JSON",
                FailureCause::InvalidAnswer,
            ),
        ];
        for (e, text, cause) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(e.cause(), cause, "{e}");
        }
    }

    #[test]
    fn backoff_doubles_to_30s_and_honours_retry_after_up_to_120s() {
        let mut b = Backoff::default();
        let ms = |d: Duration| d.as_millis();
        assert_eq!(ms(b.next(None)), 500);
        assert_eq!(ms(b.next(None)), 1000);
        assert_eq!(ms(b.next(Some(Duration::from_secs(7)))), 7000);
        assert_eq!(
            ms(b.next(None)),
            4000,
            "Retry-After does not stop the doubling"
        );
        assert_eq!(ms(b.next(Some(Duration::from_secs(600)))), 120_000);
        for _ in 0..5 {
            b.next(None);
        }
        assert_eq!(ms(b.next(None)), 30_000);
    }

    #[test]
    fn pacer_interval_from_rpm() {
        assert_eq!(Pacer::new(None).interval, None);
        assert_eq!(Pacer::new(Some(0)).interval, None);
        assert_eq!(
            Pacer::new(Some(120)).interval,
            Some(Duration::from_millis(500))
        );
    }

    fn answer_json(turn: u32) -> String {
        serde_json::json!({"turn": turn, "applicable": true, "opportunity": true, "kind": "review",
            "scores": {"tr": 1, "di": 0, "vr": 0, "sa": 0},
            "quotes": {"tr": null, "di": null, "vr": null, "sa": null}})
        .to_string()
    }

    fn job(turn: u32) -> Job {
        Job {
            turn: Some(turn),
            prompt: Prompt {
                system: "s".into(),
                blocks: vec![format!("turn {turn}")],
                instruction: "i".into(),
            },
            elided: false,
            request_key: cache::key(&[&turn.to_string()]),
        }
    }

    /// A replay judge that knows turns 1 and 3 (not 2), and an enabled cache.
    fn setup(dir: &Path) -> (Backend, Options) {
        let replay = dir.join("replay.jsonl");
        let lines: Vec<String> = [1, 3]
            .iter()
            .map(|&t| {
                serde_json::json!({"key": job(t).request_key, "answer": answer_json(t)}).to_string()
            })
            .collect();
        std::fs::write(&replay, lines.join("\n")).unwrap();
        let spec = Spec::Replay { file: replay };
        let opts = Options {
            judges: vec![spec.clone()],
            cache: Cache::new(Some(dir.join("cache"))),
            jobs: 2,
            progress: false,
            ..Options::default()
        };
        (Backend::new(spec, opts.timeout).unwrap(), opts)
    }

    #[test]
    fn results_keep_job_order_and_a_second_run_is_answered_by_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let rt = runtime().unwrap();
        let turns_of = |ran: &Ran| -> Vec<String> {
            ran.results
                .iter()
                .map(|(t, r)| match r {
                    JobResult::Answers(a) => format!("{t:?}:{}", a[0].turn),
                    JobResult::Failed(e) => format!("{t:?}:{}", &e.to_string()[..6]),
                    JobResult::Skipped(why) => format!("{t:?}:{why:?}"),
                })
                .collect()
        };
        let three = || {
            let (backend, opts) = setup(dir.path());
            run(
                &rt,
                backend,
                (1..=3).map(job).collect(),
                &opts,
                None,
                None,
                None,
            )
        };
        let first = three();
        assert_eq!(
            turns_of(&first),
            ["Some(1):1", "Some(2):fatal:", "Some(3):3"]
        );
        assert_eq!((first.requests, first.cache_hits), (3, 0));

        let second = three();
        assert_eq!(turns_of(&second), turns_of(&first));
        assert_eq!((second.requests, second.cache_hits), (1, 2));
    }
}
