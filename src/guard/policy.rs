//! The guard's rule (docs/guard.md#policy): a write in a task that bears on security waits for
//! a turn that holds the security plan — threat, defence with a bypass, scope and an attacking
//! test, each at 2 or more. A pure function over plain facts; `gather` finds the facts.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::judge::scores::Scores;
use crate::settings::GuardMode;
use crate::transcript::Transcript;

/// Why the task bears on security, when it does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Relevance {
    /// `sage.guard = always`.
    Always,
    /// The task names a CWE.
    TaskCwe,
    /// A confirmed finding is kept in the repository.
    Finding,
    /// The task names a threat in the criterion's or a CWE list's words.
    Lexicon,
    /// A turn of the task names a specific threat (TR 2 or more): the agent itself sees one.
    SessionThreat,
}

/// What the rule decides from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Facts {
    pub relevance: Option<Relevance>,
    pub cwe: Option<u32>,
    /// The first turn whose four scores are all at least 2.
    pub plan_turn: Option<u32>,
    /// The highest score of each dimension over the task's turns so far.
    pub best: Scores,
    pub turns_judged: usize,
}

/// The rule's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub(crate) enum Verdict {
    Allow {
        why: String,
    },
    /// What the plan still lacks: keys of the strings that say it (templates/i18n/).
    Deny {
        missing: Vec<&'static str>,
    },
}

/// The guard's rule.
pub(crate) fn decide(f: &Facts) -> Verdict {
    if f.relevance.is_none() {
        return Verdict::Allow {
            why: "the task does not bear on security".into(),
        };
    }
    if let Some(t) = f.plan_turn {
        return Verdict::Allow {
            why: format!("turn {t} holds the security plan"),
        };
    }
    let b = &f.best;
    let missing: Vec<&'static str> = [
        (b.tr, "guard.threat"),
        (b.di, "guard.defence"),
        (b.sa, "guard.scope"),
        (b.vr, "guard.verification"),
    ]
    .into_iter()
    .filter(|(s, _)| *s < 2)
    .map(|(_, w)| w)
    .collect();
    Verdict::Deny { missing }
}

/// The CWE a text names (`CWE-918`), if any.
pub(crate) fn cwe_in(text: &str) -> Option<u32> {
    crate::finding::cwe_named_in(text)
}

/// A user message that may open the task, numbered as in the whole session (secrets
/// redacted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct User {
    pub before_turn: u32,
    pub text: String,
}

/// What the judge said of the turns of one exchange (the turns after one user message).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Exchange {
    /// The `before_turn` of the user message that opened it (0: before any).
    pub opener: u32,
    pub best: Scores,
    pub turns: usize,
}

/// What earlier checks of the session judged: each turn is judged once, when a check first
/// sees it finished (the turn being written is judged again by every check until it is).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Prior {
    /// The user messages before the window (those that open the current task and the one
    /// before it).
    pub users: Vec<User>,
    /// Turns 1..=judged are folded in below.
    pub judged: u32,
    /// The first finished turn that held the plan, in any exchange.
    pub plan: Option<u32>,
    /// The exchanges still in reach of the task.
    pub exchanges: Vec<Exchange>,
}

/// The index of the message that opens the current exchange, and of the one before it.
fn openers(users: &[User], turns: u32) -> (Option<usize>, Option<usize>) {
    let cur = users.iter().rposition(|u| u.before_turn <= turns.max(1));
    let prev = cur.and_then(|c| {
        let b = users[c].before_turn;
        users[..c].iter().rposition(|u| u.before_turn < b)
    });
    (cur, prev)
}

impl Prior {
    /// What a window needs from before it, when it starts `offset` bytes into the session
    /// after `turns` finished turns (the session's cut).
    pub(crate) fn before(mut self, offset: u64, turns: u32) -> Prior {
        if offset == 0 {
            self.users.clear();
        } else {
            self.users.retain(|u| u.before_turn <= turns + 1);
            let (cur, prev) = openers(&self.users, turns + 1);
            self.users = prev
                .into_iter()
                .chain(cur)
                .map(|i| self.users[i].clone())
                .collect();
        }
        self
    }

    /// The exchange a turn belongs to: the last user message before it.
    fn exchange_of(&self, users: &[User], turn: u32) -> u32 {
        users
            .iter()
            .rev()
            .find(|u| u.before_turn <= turn)
            .map_or(0, |u| u.before_turn)
    }
}

/// What `gather` is given: the session's window (from the cut of the last check) and what
/// the checks before judged, and the repository's word.
pub(crate) struct Given<'a> {
    pub transcript: Option<&'a Transcript>,
    /// The session's turns before the window's first.
    pub base: u32,
    pub prior: Prior,
    /// `sage.task`, which overrides the session's own task.
    pub task: Option<&'a str>,
    /// When to ask for the plan (`sage.guard`).
    pub mode: crate::settings::GuardMode,
    /// The CWE of a finding kept in the repository, and whether there is one.
    pub finding: Option<Option<u32>>,
    pub templates: Option<&'a Path>,
    /// The judge to ask (`sage.guardJudge`); the offline one when `None`.
    pub judge: Option<crate::judge::backends::Spec>,
    /// Where a model judge's answers are cached: each check asks only about new turns.
    pub cache_dir: Option<&'a Path>,
    /// The language of a model judge's prompts (`sage.judgeLang`); `None`: the log's.
    pub judge_lang: Option<crate::lang::Lang>,
}

/// How the guard asks its judge: one turn at a time over the turns no check has judged,
/// every turn scored, the phrase rules alone for the offline judge.
fn judge_options(g: &Given, task: String, cwe: Option<u32>) -> crate::judge::run::Options {
    let spec = g
        .judge
        .clone()
        .unwrap_or(crate::judge::backends::Spec::Offline);
    let cache = match spec {
        crate::judge::backends::Spec::Offline => crate::judge::cache::Cache::disabled(),
        _ => crate::judge::cache::Cache::new(g.cache_dir.map(Path::to_path_buf)),
    };
    // One turn at a time, each scored, with a short wait and few retries: an agent is
    // waiting on the answer.
    crate::judge::run::Options {
        judges: vec![spec],
        jobs: 1,
        task: Some(task),
        cwe_hint: cwe,
        templates_dir: g.templates.map(Path::to_path_buf),
        judge_lang: g.judge_lang,
        cache,
        timeout: Duration::from_secs(20),
        tries: 2,
        answer_tries: 1,
        progress: false,
        score_all: true,
        // The guard asks whether the plan spells out each part: the phrase rules say.
        offline_model: false,
        ..Default::default()
    }
}

fn raise(best: &mut Scores, s: &Scores) {
    best.tr = best.tr.max(s.tr);
    best.di = best.di.max(s.di);
    best.vr = best.vr.max(s.vr);
    best.sa = best.sa.max(s.sa);
}

fn holds_plan(s: &Scores) -> bool {
    s.tr >= 2 && s.di >= 2 && s.vr >= 2 && s.sa >= 2
}

/// The facts of one call, and what the next check of the session needs. The task is the user
/// message that opened the current exchange and the one before it (an agent that plans, then
/// writes after the user's "go ahead", made its plan there); the plan may be in any turn so
/// far; the turns not judged by an earlier check are judged now.
pub(crate) fn gather(mut g: Given) -> Result<(Facts, Prior)> {
    let mut prior = std::mem::take(&mut g.prior);
    let mut users = std::mem::take(&mut prior.users);
    if let Some(t) = g.transcript {
        users.extend(t.context.iter().filter(|m| m.role == "user").map(|m| User {
            before_turn: m.before_turn + g.base,
            text: crate::redact::redact(&m.text).0,
        }));
    }
    let turns = g.base + g.transcript.map_or(0, |t| t.turns.len() as u32);
    let (cur, prev) = openers(&users, turns);
    let session_task = match (prev.map(|i| &users[i].text), cur.map(|i| &users[i].text)) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b).cloned(),
    };
    let keys: Vec<u32> = match (prev, cur) {
        (None, None) => vec![0],
        (p, c) => p
            .into_iter()
            .chain(c)
            .map(|i| users[i].before_turn)
            .collect(),
    };
    let task = g
        .task
        .map(str::to_string)
        .or(session_task)
        .unwrap_or_default();
    let task_cwe = cwe_in(&task);
    let mut cwe = task_cwe.or(g.finding.flatten());
    let mut relevance = match g.mode {
        GuardMode::Off => None,
        GuardMode::Always => Some(Relevance::Always),
        _ if task_cwe.is_some() => Some(Relevance::TaskCwe),
        _ if g.finding.is_some() => Some(Relevance::Finding),
        _ => None,
    };
    // The lexicons only when the task's words must decide, or name the weakness for the
    // checklist ("the SSRF"): loading them is a good part of the check's time.
    if g.mode != GuardMode::Off && (relevance.is_none() || cwe.is_none()) {
        let offline = crate::judge::offline::Offline::in_langs(
            "security",
            &task,
            cwe,
            None,
            g.templates,
            &crate::lang::written_in([task.as_str()]),
        )?;
        cwe = cwe.or_else(|| offline.first_cwe());
        if relevance.is_none() && offline.task_names_threat() {
            relevance = Some(Relevance::Lexicon);
        }
    }
    let mut facts = Facts {
        relevance,
        cwe,
        plan_turn: None,
        best: Scores::default(),
        turns_judged: 0,
    };
    prior.users = users;
    // Off means off; with no turns there is nothing to judge.
    let Some(t) = g
        .transcript
        .filter(|t| g.mode != GuardMode::Off && !t.turns.is_empty())
    else {
        return Ok((facts, prior));
    };
    let len = t.turns.len() as u32;
    let first = (prior.judged + 1).saturating_sub(g.base).clamp(1, len);
    let scope = crate::transcript::mapping::Scope {
        first,
        last: len,
        task: Some(task.clone()),
        reason: "the guard: the turns no check has judged".into(),
    };
    let opts = judge_options(&g, task, cwe);
    let doc = crate::judge::run::judge(t, &scope, &opts)?;
    // A turn the judge could not score is no plan, and no proof of its absence either: the
    // guard cannot decide (and fails open unless strict).
    if let Some(e) = crate::judge::failed::error(&doc.failed_turns) {
        return Err(e);
    }
    // The last turn may still grow (the agent is writing it): it counts now, and is judged
    // again by the next check; the finished ones are kept.
    let mut open = None;
    for ts in &doc.turns {
        let Some(s) = ts.scores.as_ref().filter(|_| ts.applicable) else {
            continue;
        };
        let n = g.base + ts.turn;
        if n == turns {
            open = Some(*s);
            continue;
        }
        if n <= prior.judged {
            continue;
        }
        let key = prior.exchange_of(&prior.users, n);
        match prior.exchanges.iter_mut().find(|e| e.opener == key) {
            Some(e) => {
                raise(&mut e.best, s);
                e.turns += 1;
            }
            None => {
                let mut e = Exchange {
                    opener: key,
                    ..Default::default()
                };
                raise(&mut e.best, s);
                e.turns = 1;
                prior.exchanges.push(e);
            }
        }
        if prior.plan.is_none() && holds_plan(s) {
            prior.plan = Some(n);
        }
    }
    prior.judged = prior.judged.max(turns - 1);
    prior
        .exchanges
        .retain(|e| keys.first().is_none_or(|k| e.opener >= *k));
    for e in prior.exchanges.iter().filter(|e| keys.contains(&e.opener)) {
        raise(&mut facts.best, &e.best);
        facts.turns_judged += e.turns;
    }
    facts.plan_turn = prior.plan;
    if let Some(s) = open.filter(|_| keys.contains(&prior.exchange_of(&prior.users, turns))) {
        raise(&mut facts.best, &s);
        facts.turns_judged += 1;
        if facts.plan_turn.is_none() && holds_plan(&s) {
            facts.plan_turn = Some(turns);
        }
    }
    if facts.relevance.is_none() && facts.best.tr >= 1 {
        facts.relevance = Some(Relevance::SessionThreat);
    }
    Ok((facts, prior))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(rel: Option<Relevance>, plan: Option<u32>, best: [u8; 4]) -> Facts {
        Facts {
            relevance: rel,
            cwe: Some(918),
            plan_turn: plan,
            best: Scores {
                tr: best[0],
                di: best[1],
                vr: best[2],
                sa: best[3],
            },
            turns_judged: 3,
        }
    }

    #[test]
    fn a_security_task_waits_for_the_plan() {
        assert!(matches!(
            decide(&facts(None, None, [0; 4])),
            Verdict::Allow { .. }
        ));
        assert!(matches!(
            decide(&facts(Some(Relevance::Lexicon), Some(2), [2; 4])),
            Verdict::Allow { .. }
        ));
        match decide(&facts(Some(Relevance::TaskCwe), None, [2, 2, 1, 0])) {
            Verdict::Deny { missing } => assert_eq!(missing, ["guard.scope", "guard.verification"]),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_cwe_is_read_from_the_task() {
        assert_eq!(cwe_in("Fix CWE-918 in the fetcher"), Some(918));
        assert_eq!(cwe_in("cwe-x then CWE-22."), Some(22));
        assert_eq!(cwe_in("no weakness named"), None);
    }
}
