//! Orchestration: which turns are judged, in what prompts, by which backends, how often, and
//! how the answers become the scores document. Making the requests — concurrency (`--jobs`),
//! pacing (`--rpm`), retries, the on-disk cache (which is also how an interrupted run
//! resumes) and token accounting — is `jobs`'.

use crate::warning::Warning;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::runtime::Runtime;

use super::backends::{Backend, Spec, family};
use super::cache;
use super::endpoint::check_credentials;
use super::jobs::{self, Job, JobResult, Ran, Recorder};
use super::manual;
use super::offline::Offline;
pub(crate) use super::options::{Deferred, Options, Protocol};
use super::outcome::{
    Outcome, failed_turn, not_applicable, put_to_judge, result_for, scored_turn, skipped_turn,
};
use super::prompt::{Renderer, Templates, TurnView, fence_for, views};
use super::scores::{
    FailedTurn, FailureCause, JudgeInfo, SCORES_SCHEMA, ScoreSet, ScoresDoc, TurnScore,
};
use crate::error::{Error, Result};
use crate::lang::Lang;
use crate::transcript::mapping::Scope;
use crate::transcript::{Transcript, TurnKind};

/// What every judge and repeat of one `judge()` call shares.
struct Input<'a> {
    views: Vec<TurnView>,
    kinds: Vec<TurnKind>,
    /// Secrets masked in the turns and the task, for the judge's header.
    redactions: usize,
    /// Also holds the redacted task, which the offline judge reads too.
    renderer: Renderer<'a>,
    /// The templates' version, part of every cache key.
    version: &'a str,
    /// The agent's model, for the same-family warning.
    agent_model: Option<&'a str>,
    /// Prices and default context budgets.
    prices: super::cost::Prices,
}

impl<'a> Input<'a> {
    /// Redacts the task and the in-scope turns, and sets up their prompts.
    fn prepare(
        t: &'a Transcript,
        scope: &Scope,
        opts: &Options,
        templates: &'a Templates,
    ) -> Result<Input<'a>> {
        let criterion = templates.criterion(&opts.criterion)?;
        // The task leaves the machine in every prompt: redacted like the turns (the scope's task
        // already is; one given with --task or sage.task is redacted here).
        let (task, task_redactions) = match opts.task.as_deref() {
            Some(task) => crate::redact::redact(task),
            None => (
                scope
                    .task
                    .clone()
                    .unwrap_or_else(|| super::prompt::no_task(templates.lang).into()),
                0,
            ),
        };
        let in_scope: Vec<&crate::transcript::Turn> = t
            .turns
            .iter()
            .filter(|x| x.turn >= scope.first && x.turn <= scope.last)
            .collect();
        let (tviews, redactions) = views(&in_scope);
        // The fence guards prompts; the offline judge writes none.
        let prompts = opts.judges.iter().any(|j| *j != Spec::Offline);
        let fence = if prompts {
            fence_for(&task, &tviews)
        } else {
            String::new()
        };
        Ok(Input {
            kinds: in_scope.iter().map(|x| x.kind).collect(),
            renderer: Renderer::new(
                templates,
                criterion,
                task,
                opts.anchor_for_judge.clone(),
                fence,
                opts.context_tokens,
            ),
            views: tviews,
            redactions: redactions + task_redactions,
            version: &templates.version,
            agent_model: t.model.as_deref(),
            prices: match prompts {
                true => super::cost::Prices::load(opts.templates_dir.as_deref())?,
                false => super::cost::Prices::none(),
            },
        })
    }

    /// The requests `spec` would get for repeat `r`, under its context budget.
    fn jobs(&self, spec: &Spec, opts: &Options, r: u32) -> Result<Vec<Job>> {
        plan_jobs(
            &self.renderer_for(spec, opts),
            &self.views,
            &self.kinds,
            opts.protocol,
            self.version,
            r,
        )
    }

    /// The renderer under `spec`'s context budget: `--context-tokens N` (0: none), else the
    /// price table's default for its model.
    fn renderer_for(&self, spec: &Spec, opts: &Options) -> Renderer<'a> {
        let budget = match opts.context_tokens {
            Some(0) => None,
            Some(n) => Some(n),
            None => Some(self.prices.budget_for(spec)),
        };
        self.renderer
            .with_budget(budget, Some(self.prices.tokenizer_for(spec)))
    }
}

/// What the LLM judges of one `judge()` call share.
struct Shared {
    /// Built at the first LLM judge: a run with only the offline judge starts no threads.
    runtime: Option<Runtime>,
    record: Option<Arc<Mutex<Recorder>>>,
}

impl Shared {
    fn runtime(&mut self) -> Result<&Runtime> {
        if self.runtime.is_none() {
            self.runtime = Some(jobs::runtime()?);
        }
        Ok(self.runtime.as_ref().expect("just built"))
    }
}

/// Judges the in-scope turns of a transcript. Turns that could not be scored are in the
/// document's `failed_turns`; what that means for the exit is the caller's to decide.
pub(crate) fn judge(t: &Transcript, scope: &Scope, opts: &Options) -> Result<ScoresDoc> {
    // Every judge's key before the first judge's first request.
    check_credentials(&opts.judges)?;
    check_manual(opts)?;
    let stage = crate::timing::stage("judge: templates");
    let lang = opts
        .judge_lang
        .unwrap_or_else(|| detected_lang(t, scope, opts.task.as_deref()));
    let templates = Templates::load(opts.templates_dir.as_deref(), lang)?;
    drop(stage);
    let stage = crate::timing::stage("judge: turns for the judge");
    let input = Input::prepare(t, scope, opts, &templates)?;
    drop(stage);
    let mut shared = Shared {
        runtime: None,
        record: opts
            .record
            .as_deref()
            .map(|p| Arc::new(Mutex::new(Recorder::open(p)))),
    };
    let mut sets = Vec::new();
    let mut failed_turns = Vec::new();
    for spec in &opts.judges {
        for r in 0..opts.repeat.max(1) {
            let mut info = judge_info(spec, opts, r, input.redactions);
            // The offline judge renders no prompt: its phrase lists are every language's.
            info.lang = (*spec != Spec::Offline).then_some(lang);
            let turns = if spec == &Spec::Offline {
                let _stage = crate::timing::stage("judge: offline scoring");
                offline_turns(&input, opts, &mut info)?
            } else {
                let (turns, failed) = match spec {
                    Spec::Manual { dir } => manual_turns(spec, dir, t, &input, opts, &mut info)?,
                    _ => model_turns(spec, r, &input, opts, &mut shared, &mut info)?,
                };
                failed_turns.extend(failed.into_iter().map(|(turn, cause, error)| FailedTurn {
                    turn,
                    judge: info.name.clone(),
                    repeat: info.repeat,
                    cause,
                    error,
                }));
                turns
            };
            sets.push(ScoreSet { judge: info, turns });
        }
    }
    let first = sets.remove(0);
    Ok(ScoresDoc {
        schema: SCORES_SCHEMA.into(),
        tool: Some(crate::tool::Tool::current()),
        judge: first.judge,
        turns: first.turns,
        sets,
        scope: Some(scope.clone()),
        failed_turns,
    })
}

/// What judging the in-scope turns would send, counted without a call (`--estimate`): the
/// prompts each judge and repeat would get, built as a run builds them, less those the answer
/// cache holds. No key is needed, nothing leaves the machine.
pub(crate) fn estimate(
    t: &Transcript,
    scope: &Scope,
    opts: &Options,
) -> Result<super::cost::EstimateDoc> {
    let lang = opts
        .judge_lang
        .unwrap_or_else(|| detected_lang(t, scope, opts.task.as_deref()));
    let templates = Templates::load(opts.templates_dir.as_deref(), lang)?;
    let input = Input::prepare(t, scope, opts, &templates)?;
    // The table is named even when only the offline judge runs (it loads none).
    let prices = super::cost::Prices::load(opts.templates_dir.as_deref())?;
    let judged = input.kinds.iter().filter(|k| put_to_judge(**k)).count() as u64;
    let mut estimates = Vec::new();
    for spec in &opts.judges {
        for r in 0..opts.repeat.max(1) {
            let repeat = (opts.repeat > 1).then_some(r + 1);
            if *spec == Spec::Offline {
                estimates.push(super::cost::estimate(spec, repeat, &[], 1, &prices));
                continue;
            }
            let jobs = input.jobs(spec, opts, r)?;
            let identity = format!("{}|{}", spec.name(), super::endpoint::base_url(spec));
            let prompts: Vec<(&super::prompt::Prompt, bool)> = jobs
                .iter()
                .map(|j| {
                    let key = cache::key(&[&identity, &j.request_key]);
                    (&j.prompt, opts.cache.get(&key).is_some())
                })
                .collect();
            let per_answer = match opts.protocol {
                Protocol::Prefix => 1,
                Protocol::Single => judged,
            };
            let mut e = super::cost::estimate(spec, repeat, &prompts, per_answer, &prices);
            if jobs.iter().any(|j| j.elided) {
                e.warnings.push(Warning::Elided);
            }
            estimates.push(e);
        }
    }
    Ok(super::cost::EstimateDoc::new(
        input.views.len() as u64,
        judged,
        protocol_name(opts.protocol),
        prices.source,
        estimates,
    ))
}

/// An estimate with no session to judge: no calls, the price table still named.
pub(crate) fn estimate_nothing(opts: &Options) -> Result<super::cost::EstimateDoc> {
    let prices = super::cost::Prices::load(opts.templates_dir.as_deref())?;
    Ok(super::cost::EstimateDoc::new(
        0,
        0,
        protocol_name(opts.protocol),
        prices.source,
        Vec::new(),
    ))
}

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Prefix => "prefix",
        Protocol::Single => "single",
    }
}

/// The language of the prompts when none is asked for: that of the in-scope turns' messages
/// and reasoning (`lang::detect`), else of the task when the turns hold no letters. One
/// language for the whole session, so each turn's prompt stays a prefix of the next.
fn detected_lang(t: &Transcript, scope: &Scope, task: Option<&str>) -> Lang {
    let turns = t
        .turns
        .iter()
        .filter(|x| x.turn >= scope.first && x.turn <= scope.last)
        .flat_map(|x| std::iter::once(x.text.as_str()).chain(x.reasoning.as_deref()));
    crate::lang::detect(turns)
        .or_else(|| crate::lang::detect(task.or(scope.task.as_deref())))
        .unwrap_or(Lang::En)
}

/// The judge's header before any request is made.
fn judge_info(spec: &Spec, opts: &Options, r: u32, redactions: usize) -> JudgeInfo {
    JudgeInfo {
        name: spec.name(),
        protocol: protocol_name(opts.protocol).into(),
        // Numbered only when there are repeats: a plain run's header has no repeat at all.
        repeat: (opts.repeat > 1).then_some(r + 1),
        redactions: redactions as u64,
        // Nothing asked yet.
        ..Default::default()
    }
}

/// The offline judge: phrase lists, no requests; every turn counts as one call.
fn offline_turns(input: &Input, opts: &Options, info: &mut JudgeInfo) -> Result<Vec<TurnScore>> {
    info.warnings.push(Warning::OfflineDraft);
    let stage = crate::timing::stage("judge: offline lexicons");
    // Russian or Chinese words only where the task or a turn holds such letters.
    let langs = crate::lang::written_in(
        std::iter::once(input.renderer.task.as_str())
            .chain(input.views.iter().flat_map(TurnView::parts)),
    );
    let off = Offline::in_langs(
        &opts.criterion,
        &input.renderer.task,
        opts.cwe_hint,
        opts.anchor_file.as_deref(),
        opts.templates_dir.as_deref(),
        &langs,
    )?;
    drop(stage);
    info.warnings.push(Warning::OfflineLexicons {
        selected: off.selected.clone(),
    });
    info.calls = input.views.len() as u64;
    // What earlier turns wrote (tests with attacks, whole files): each turn still sees only its
    // prefix, since an entry counts only for the turns after the one that made it.
    let history = off.history(&input.views);
    let positions = super::offline::Position::of_scope(&input.views, &off);
    // The model reads what the rules found; writing its features out is for training it, and
    // then the rules alone answer.
    let model = match &opts.features_out {
        None if opts.offline_model => Some(super::offline::Model::embedded()?),
        _ => None,
    };
    let dump = opts.features_out.is_some();
    let score = |views: &[TurnView], kinds: &[TurnKind], pos: &[super::offline::Position]| {
        views
            .iter()
            .zip(kinds)
            .zip(pos)
            .map(|((v, k), p)| {
                let (answer, x) = off.judge(v, *k, &history, *p, model.as_ref(), dump);
                (scored_turn(answer, v, *k, opts.quotes_required), x)
            })
            .collect::<Vec<_>>()
    };
    let parts = super::parallel_parts(input.views.len());
    let scored: Vec<(TurnScore, Vec<f32>)> = if parts <= 1 {
        score(&input.views, &input.kinds, &positions)
    } else {
        // Phrase matching over every sentence of a long log: the turns are split over the
        // cores.
        let size = input.views.len().div_ceil(parts);
        std::thread::scope(|s| {
            let handles: Vec<_> = input
                .views
                .chunks(size)
                .zip(input.kinds.chunks(size))
                .zip(positions.chunks(size))
                .map(|((v, k), p)| s.spawn(move || score(v, k, p)))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    if let Some(path) = &opts.features_out {
        let mut out = String::new();
        for (t, x) in &scored {
            out.push_str(&serde_json::json!({"turn": t.turn, "x": x}).to_string());
            out.push('\n');
        }
        let names = serde_json::json!({"features": super::offline::feature_names()});
        std::fs::write(path, format!("{names}\n{out}"))
            .map_err(|e| Error::env(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(scored.into_iter().map(|(t, _)| t).collect())
}

/// An LLM judge (or a command, or a replay) for one repeat: plans the requests, makes them and
/// scores the turns from the answers. Also returns the turns whose scoring failed.
fn model_turns(
    spec: &Spec,
    r: u32,
    input: &Input,
    opts: &Options,
    shared: &mut Shared,
    info: &mut JudgeInfo,
) -> Result<(Vec<TurnScore>, Vec<Failure>)> {
    info.warnings
        .extend(model_warnings(input.agent_model, spec, opts.protocol));
    let backend = Backend::new(spec.clone(), opts.timeout)?;
    let jobs = input.jobs(spec, opts, r)?;
    if jobs.iter().any(|j| j.elided) {
        info.warnings.push(Warning::Elided);
    }
    let record = shared.record.clone();
    let price = input.prices.for_judge(spec).cloned();
    if opts.spend.is_some()
        && price.is_none()
        && matches!(spec, Spec::OpenAi { .. } | Spec::Anthropic { .. })
    {
        return Err(Error::input(format!(
            "--max-cost: {} has no price in {}, so its spend cannot be kept under a limit",
            spec.name(),
            input.prices.source
        ))
        .hint("add the model to a prices.yaml in your templates directory (--templates DIR), or drop --max-cost"));
    }
    // A provider's batch interface is sent everything at once: no answer comes back before
    // the choice. A single-call judge sees every turn in one request.
    let mut gate = match (&opts.schedule, &opts.defer, opts.protocol) {
        (Some(schedule), None, Protocol::Prefix) => Some(super::schedule::RuleGate::new(
            schedule.as_ref(),
            &input.views,
            &input.kinds,
            opts.quotes_required,
        )),
        _ => None,
    };
    let ran = jobs::run(
        shared.runtime()?,
        backend,
        jobs,
        opts,
        record,
        price.as_ref(),
        gate.as_mut().map(|g| g as &mut dyn jobs::Gate),
    );
    account(info, &ran, price.as_ref());
    Ok(assemble(
        &input.views,
        &input.kinds,
        &ran.results,
        opts.quotes_required,
    ))
}

/// A manual judge (`manual:DIR`): the prompts a model judge would be sent, exported to its
/// directory the first time, and the replies saved there since as its answers.
fn manual_turns(
    spec: &Spec,
    dir: &Path,
    t: &Transcript,
    input: &Input,
    opts: &Options,
    info: &mut JudgeInfo,
) -> Result<(Vec<TurnScore>, Vec<Failure>)> {
    info.warnings
        .extend(model_warnings(None, spec, opts.protocol));
    let jobs = manual_jobs(input, opts)?;
    let results = manual::collect(dir, &manual_session(t, input, opts), &jobs)?;
    info.calls = results
        .iter()
        .filter(|(_, r)| matches!(r, JobResult::Answers(_)))
        .count() as u64;
    Ok(assemble(
        &input.views,
        &input.kinds,
        &results,
        opts.quotes_required,
    ))
}

/// `judge --export DIR`: the prompts of a manual judge written to DIR, no answer read.
pub(crate) fn export(
    t: &Transcript,
    scope: &Scope,
    opts: &Options,
    dir: &Path,
) -> Result<manual::Exported> {
    let opts = Options {
        judges: vec![Spec::Manual {
            dir: dir.to_path_buf(),
        }],
        ..opts.clone()
    };
    check_manual(&opts)?;
    let lang = opts
        .judge_lang
        .unwrap_or_else(|| detected_lang(t, scope, opts.task.as_deref()));
    let templates = Templates::load(opts.templates_dir.as_deref(), lang)?;
    let input = Input::prepare(t, scope, &opts, &templates)?;
    let jobs = manual_jobs(&input, &opts)?;
    manual::export(dir, &manual_session(t, &input, &opts), &jobs)
}

/// A person answers each prompt once: repeats would ask them the same thing again.
fn check_manual(opts: &Options) -> Result<()> {
    if opts.repeat > 1 && opts.judges.iter().any(|j| matches!(j, Spec::Manual { .. })) {
        return Err(Error::input(format!(
            "--repeat {}: the manual judge answers each turn once",
            opts.repeat
        ))
        .hint("drop --repeat, or repeat with another judge"));
    }
    Ok(())
}

/// The manual judge's prompts: the same requests a model judge's first repeat makes.
fn manual_jobs(input: &Input, opts: &Options) -> Result<Vec<Job>> {
    let manual = opts
        .judges
        .iter()
        .find(|j| matches!(j, Spec::Manual { .. }))
        .cloned()
        .unwrap_or(Spec::Offline);
    input.jobs(&manual, opts, 0)
}

/// What a manual judge's directory records its prompts were made from.
fn manual_session<'a>(t: &'a Transcript, input: &'a Input, opts: &Options) -> manual::Session<'a> {
    let turns = match (input.views.first(), input.views.last()) {
        (Some(a), Some(b)) => format!("{}-{}", a.n, b.n),
        _ => "none".into(),
    };
    manual::Session {
        source: &t.source,
        digest: manual::digest(&input.renderer.task, &input.views),
        turns,
        criterion: &input.renderer.criterion.name,
        protocol: match opts.protocol {
            Protocol::Prefix => "prefix",
            Protocol::Single => "single",
        },
        templates: input.version,
    }
}

/// Why an LLM judge's scores may deserve less trust, known before any request.
fn model_warnings(agent: Option<&str>, spec: &Spec, protocol: Protocol) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if let (Some(agent), Some(judge_model)) = (agent, spec.model())
        && let (Some(a), Some(j)) = (family(agent), family(judge_model))
        && a == j
    {
        warnings.push(Warning::SameFamily {
            judge: judge_model.to_string(),
            agent: agent.to_string(),
        });
    }
    if protocol == Protocol::Single {
        warnings.push(Warning::SingleCall);
    }
    warnings
}

/// The requests of one repeat: one per turn put to the judge (its prefix), or one for all
/// turns (`single`). The repeat is part of the key, so a repeat asks afresh instead of
/// finding the first answer in the cache.
fn plan_jobs(
    r: &Renderer,
    views: &[TurnView],
    kinds: &[TurnKind],
    protocol: Protocol,
    version: &str,
    repeat: u32,
) -> Result<Vec<Job>> {
    let key = |text: &str, turn: &str| cache::key(&[version, text, turn, &repeat.to_string()]);
    match protocol {
        Protocol::Single => {
            let prompt = r.single(views)?;
            let request_key = key(&prompt.text(), "all");
            Ok(vec![Job {
                turn: None,
                prompt,
                elided: false,
                request_key,
            }])
        }
        Protocol::Prefix => {
            let turns: Vec<u32> = views
                .iter()
                .zip(kinds)
                .filter(|(_, k)| put_to_judge(**k))
                .map(|(v, _)| v.n)
                .collect();
            Ok(r.prefixes(views, &turns)?
                .into_iter()
                .zip(&turns)
                .map(|((prompt, elided), &turn)| {
                    let request_key = key(&prompt.text(), &turn.to_string());
                    Job {
                        turn: Some(turn),
                        prompt,
                        elided,
                        request_key,
                    }
                })
                .collect())
        }
    }
}

/// What the requests cost, into the judge's header: the provider's own figure where it gives
/// one, else the usage at the price table's prices.
fn account(info: &mut JudgeInfo, ran: &Ran, price: Option<&super::cost::Price>) {
    info.calls = ran.requests;
    info.cached = ran.cache_hits;
    info.input_tokens = ran.usage.input_tokens;
    info.output_tokens = ran.usage.output_tokens;
    info.cached_input_tokens = ran.usage.cached_input_tokens;
    info.skipped = ran.skipped;
    info.cost_usd = ran.usage.cost_usd.or_else(|| {
        price
            .filter(|_| ran.requests > 0)
            .map(|p| p.cost(&ran.usage))
    });
}

/// The error of a turn that a `single` answer left out.
const NO_OBJECT: &str = "the judge's answer has no object for this turn";

/// A turn whose scoring failed: its number, why, and the error its record carries.
type Failure = (u32, FailureCause, String);

/// Every in-scope turn's record from the jobs' results, and the turns whose scoring failed.
fn assemble(
    views: &[TurnView],
    kinds: &[TurnKind],
    results: &[(Option<u32>, JobResult)],
    quotes_required: bool,
) -> (Vec<TurnScore>, Vec<Failure>) {
    let mut turns = Vec::with_capacity(views.len());
    let mut failed = Vec::new();
    for (v, &kind) in views.iter().zip(kinds) {
        if !put_to_judge(kind) {
            turns.push(not_applicable(v.n, kind));
            continue;
        }
        let (cause, error) = match result_for(results, v.n) {
            Some(Outcome::Answer(a)) => {
                turns.push(scored_turn(a.clone(), v, kind, quotes_required));
                continue;
            }
            Some(Outcome::Skipped(why)) => {
                turns.push(skipped_turn(v.n, kind, why));
                continue;
            }
            Some(Outcome::Failed(e)) => (e.cause(), e.to_string()),
            None => (FailureCause::InvalidAnswer, NO_OBJECT.to_string()),
        };
        turns.push(failed_turn(v.n, kind, error.clone()));
        failed.push((v.n, cause, error));
    }
    (turns, failed)
}

/// Reads a scores file (`git sage judge --out`) back.
pub(crate) fn read_scores(path: &std::path::Path) -> Result<ScoresDoc> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::answer::Answer;
    use crate::judge::jobs::JobError;
    use crate::judge::scores::Scores;
    use crate::transcript::{Input as Source, parse};

    fn view(n: u32, text: &str) -> TurnView {
        TurnView {
            n,
            agent: "assistant".into(),
            kind: "review".into(),
            text: text.into(),
            reasoning: None,
            reasoning_redacted: false,
            calls: Vec::new(),
            changes: Vec::new(),
        }
    }

    fn answer(turn: u32) -> Answer {
        Answer {
            turn,
            applicable: true,
            opportunity: true,
            kind: TurnKind::Review,
            scores: Scores::default(),
            quotes: Default::default(),
            doubt: None,
        }
    }

    fn unreachable() -> JobError {
        JobError::Unreachable {
            tries: 2,
            last: "HTTP 503: busy".into(),
        }
    }

    #[test]
    fn a_turn_takes_its_own_jobs_answer_or_error_and_a_single_job_speaks_for_all() {
        let prefix = vec![
            (Some(1), JobResult::Answers(vec![answer(1)])),
            (
                Some(2),
                JobResult::Failed(JobError::Fatal("HTTP 401".into())),
            ),
        ];
        assert_eq!(result_for(&prefix, 1), Some(Outcome::Answer(&answer(1))));
        assert_eq!(
            result_for(&prefix, 2),
            Some(Outcome::Failed(&JobError::Fatal("HTTP 401".into())))
        );
        assert_eq!(result_for(&prefix, 3), None);

        let single = vec![(None, JobResult::Answers(vec![answer(1), answer(3)]))];
        assert_eq!(result_for(&single, 3), Some(Outcome::Answer(&answer(3))));
        assert_eq!(result_for(&single, 2), None);
        let failed = vec![(None, JobResult::Failed(unreachable()))];
        assert_eq!(
            result_for(&failed, 7),
            Some(Outcome::Failed(&unreachable()))
        );
    }

    #[test]
    fn assembly_marks_administrative_turns_and_lists_every_failure_with_its_cause() {
        let views: Vec<TurnView> = (1..=5).map(|n| view(n, "we check the scheme")).collect();
        let kinds = [
            TurnKind::Review,
            TurnKind::Administrative,
            TurnKind::Review,
            TurnKind::Review,
            TurnKind::Review,
        ];
        let results = vec![
            (Some(1), JobResult::Answers(vec![answer(1)])),
            (Some(3), JobResult::Failed(unreachable())),
            (
                Some(4),
                JobResult::Failed(JobError::Fatal("HTTP 400: bad".into())),
            ),
            (Some(5), JobResult::Failed(JobError::Deferred)),
        ];
        let (turns, failed) = assemble(&views, &kinds, &results, false);
        let causes: Vec<(u32, FailureCause)> = failed.iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(
            causes,
            [
                (3, FailureCause::Unreachable),
                (4, FailureCause::Fatal),
                (5, FailureCause::Deferred)
            ]
        );
        assert_eq!(failed[1].2, "fatal: HTTP 400: bad", "the turn's own error");
        assert!(turns[0].scores.is_some() && turns[0].error.is_none());
        assert!(!turns[1].applicable && turns[1].scores == Some(Scores::default()));
        let errors: Vec<Option<&str>> = turns.iter().map(|t| t.error.as_deref()).collect();
        assert_eq!(
            errors,
            [
                None,
                None,
                Some("the judge could not be reached after 2 tries: HTTP 503: busy"),
                Some("fatal: HTTP 400: bad"),
                Some("deferred to the provider's batch interface"),
            ]
        );
        assert!(
            turns[2..]
                .iter()
                .all(|t| t.scores.is_none() && t.applicable)
        );

        let single = vec![(None, JobResult::Answers(vec![answer(1)]))];
        let (turns, failed) = assemble(&views[..1], &kinds[..1], &single, false);
        assert_eq!((turns[0].error.as_deref(), failed.len()), (None, 0));
        let (turns, failed) = assemble(&views[2..3], &kinds[2..3], &single, false);
        assert_eq!(turns[0].error.as_deref(), Some(NO_OBJECT));
        assert_eq!(failed[0].1, FailureCause::InvalidAnswer);
    }

    #[test]
    fn warnings_name_a_same_family_judge_and_the_single_protocol() {
        let claude = Spec::Anthropic {
            model: "claude-opus-4".into(),
        };
        let gpt = Spec::OpenAi {
            model: "gpt-5".into(),
        };
        let same = model_warnings(Some("claude-sonnet-4"), &claude, Protocol::Prefix);
        assert_eq!(
            same,
            [Warning::SameFamily {
                judge: "claude-opus-4".into(),
                agent: "claude-sonnet-4".into()
            }]
        );
        assert!(model_warnings(Some("claude-sonnet-4"), &gpt, Protocol::Prefix).is_empty());
        assert!(model_warnings(None, &claude, Protocol::Prefix).is_empty());
        let single = model_warnings(None, &gpt, Protocol::Single);
        assert_eq!(single.len(), 1);
        assert!(single[0].english().starts_with("single-call protocol:"));
    }

    #[test]
    fn the_prompt_language_is_the_turns_else_the_tasks() {
        let session = |task: &str, turns: &[&str]| {
            let mut y = format!("schema: sage.session/1\ntask: {task:?}\nturns:\n");
            for t in turns {
                y.push_str(&format!("  - text: {t:?}\n"));
            }
            let t = parse(Source::from_bytes("s.yaml", y.into_bytes()), None).unwrap();
            let scope = Scope {
                first: 1,
                last: t.turns.len() as u32,
                task: Some(task.into()),
                reason: String::new(),
            };
            detected_lang(&t, &scope, None)
        };
        assert_eq!(
            session("Fix the SSRF", &["Проверим схему.", "Тесты зелёные."]),
            Lang::Ru
        );
        assert_eq!(
            session("Исправь SSRF", &["Checking the scheme.", "Done."]),
            Lang::En
        );
        // Turns without letters of their own: the task's language.
        assert_eq!(session("修复 SSRF 漏洞", &["```\nx = 1\n```"]), Lang::Zh);
        assert_eq!(session("", &["…"]), Lang::En);
    }

    #[test]
    fn header_numbers_repeats_only_when_there_are_several() {
        let spec = Spec::OpenAi { model: "m".into() };
        let once = judge_info(&spec, &Options::default(), 0, 2);
        assert_eq!(
            (once.name.as_str(), once.protocol.as_str(), once.repeat),
            ("openai:m", "prefix", None)
        );
        assert_eq!(once.redactions, 2);
        let opts = Options {
            repeat: 3,
            protocol: Protocol::Single,
            ..Options::default()
        };
        let third = judge_info(&spec, &opts, 2, 0);
        assert_eq!((third.protocol.as_str(), third.repeat), ("single", Some(3)));
    }

    const SESSION: &str = r#"schema: sage.session/1
task: Fix the SSRF in the product photo download.
turns:
  - text: We will check that the scheme is https.
  - text: Committing.
  - text: Tests are green.
"#;

    #[test]
    fn plan_skips_administrative_turns_and_keys_each_prompt_turn_and_repeat() {
        let t = parse(
            Source::from_bytes("s.yaml", SESSION.as_bytes().to_vec()),
            None,
        )
        .unwrap();
        let (views, _) = views(&t.turns);
        let tpl = Templates::load(None, crate::lang::Lang::En).unwrap();
        let r = Renderer::new(
            &tpl,
            tpl.criterion("security").unwrap(),
            "fix".into(),
            None,
            fence_for("fix", &views),
            None,
        );
        let kinds = [
            TurnKind::Review,
            TurnKind::Administrative,
            TurnKind::Verification,
        ];
        let plan =
            |protocol, repeat| plan_jobs(&r, &views, &kinds, protocol, "v1", repeat).unwrap();

        let jobs = plan(Protocol::Prefix, 0);
        assert_eq!(
            jobs.iter().map(|j| j.turn).collect::<Vec<_>>(),
            [Some(1), Some(3)]
        );
        // The cache format: these parts, in this order, decide whether an answer is reused.
        let j = &jobs[1];
        assert_eq!(
            j.request_key,
            cache::key(&["v1", &j.prompt.text(), "3", "0"])
        );
        let again = plan(Protocol::Prefix, 1);
        assert_ne!(again[1].request_key, j.request_key);
        assert_eq!(again[1].prompt, j.prompt);

        let single = plan(Protocol::Single, 0);
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].turn, None);
        assert_eq!(
            single[0].request_key,
            cache::key(&["v1", &single[0].prompt.text(), "all", "0"])
        );
    }
}
