//! The guard's rule (docs/guard.md#policy): a write in a task that bears on security waits for
//! a turn that holds the security plan — threat, defence with a bypass, scope and an attacking
//! test, each at 2 or more. A pure function over plain facts; `gather` finds the facts.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::judge::scores::Scores;
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
    Allow { why: String },
    Deny { missing: Vec<&'static str> },
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
        (b.tr, "the threat (source → sink)"),
        (b.di, "the defence and one way around it"),
        (b.sa, "the scope (every place that needs the defence)"),
        (b.vr, "the verification (a test with an attacking input)"),
    ]
    .into_iter()
    .filter(|(s, _)| *s < 2)
    .map(|(_, w)| w)
    .collect();
    Verdict::Deny { missing }
}

/// The CWE a text names (`CWE-918`), if any.
pub(crate) fn cwe_in(text: &str) -> Option<u32> {
    let lower = text.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("cwe-") {
        let digits: String = rest[i + 4..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(n) = digits.parse::<u32>()
            && n > 0
        {
            return Some(n);
        }
        rest = &rest[i + 4..];
    }
    None
}

/// What `gather` is given: the session so far and the repository's word.
pub(crate) struct Given<'a> {
    pub transcript: Option<&'a Transcript>,
    /// `sage.task`, which overrides the session's own task.
    pub task: Option<&'a str>,
    /// `always`, `auto` or `off` (`sage.guard`).
    pub mode: &'a str,
    /// The CWE of a finding kept in the repository, and whether there is one.
    pub finding: Option<Option<u32>>,
    pub templates: Option<&'a Path>,
    /// The judge to ask (`sage.guardJudge`); the offline one when `None`.
    pub judge: Option<crate::judge::backends::Spec>,
    /// Where a model judge's answers are cached: each check asks only about new turns.
    pub cache_dir: Option<&'a str>,
}

/// The facts of one call: the task (the user messages that opened the current exchange and
/// the one before it), its relevance, and the offline judge's scores of their turns so far.
pub(crate) fn gather(g: &Given) -> Result<Facts> {
    let at = |t: &Transcript, turn: u32| {
        crate::transcript::mapping::scope(
            t,
            &crate::transcript::mapping::Mapping::default(),
            (turn > 0).then_some(turn),
        )
    };
    // The exchange before the current one too: an agent that plans, then writes after the
    // user's "go ahead", made its plan there.
    let scope = g.transcript.map(|t| {
        let mut cur = at(t, t.turns.len() as u32);
        if cur.first > 1 {
            let prev = at(t, cur.first - 1);
            if prev.first < cur.first {
                cur.first = prev.first;
                cur.task = match (prev.task, cur.task) {
                    (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
                    (a, b) => a.or(b),
                };
            }
        }
        cur
    });
    let task = g
        .task
        .map(str::to_string)
        .or_else(|| scope.as_ref().and_then(|s| s.task.clone()))
        .unwrap_or_default();
    let task_cwe = cwe_in(&task);
    let mut cwe = task_cwe.or(g.finding.flatten());
    let mut relevance = match g.mode {
        "off" => None,
        "always" => Some(Relevance::Always),
        _ if task_cwe.is_some() => Some(Relevance::TaskCwe),
        _ if g.finding.is_some() => Some(Relevance::Finding),
        _ => None,
    };
    // The lexicons only when the task's words must decide, or name the weakness for the
    // checklist ("the SSRF"): loading them is a good part of the check's time.
    if g.mode != "off" && (relevance.is_none() || cwe.is_none()) {
        let offline =
            crate::judge::offline::Offline::new("security", &task, cwe, None, g.templates)?;
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
    let (Some(t), Some(mut scope)) = (g.transcript, scope) else {
        return Ok(facts);
    };
    // With nothing else to go on, the task's own turns decide: a task whose turns name a
    // specific threat bears on security ("fix the review findings" that turn out to be an
    // injection). Off means off.
    if g.mode == "off" || t.turns.is_empty() {
        return Ok(facts);
    }
    scope.task = Some(task.clone());
    let spec = g
        .judge
        .clone()
        .unwrap_or(crate::judge::backends::Spec::Offline);
    let cache = match spec {
        crate::judge::backends::Spec::Offline => crate::judge::cache::Cache::disabled(),
        _ => crate::judge::cache::Cache::new(crate::judge::cache::default_dir(g.cache_dir)),
    };
    let opts = crate::judge::run::Options {
        judges: vec![spec],
        protocol: crate::judge::run::Protocol::Prefix,
        repeat: 1,
        jobs: 1,
        rpm: None,
        context_tokens: None,
        quotes_required: true,
        anchor_for_judge: None,
        criterion: "security".into(),
        task: Some(task),
        cwe_hint: cwe,
        anchor_file: None,
        templates_dir: g.templates.map(Path::to_path_buf),
        cache,
        record: None,
        timeout: Duration::from_secs(20),
        tries: 2,
        answer_tries: 1,
        progress: false,
        defer: None,
    };
    let doc = crate::judge::run::judge(t, &scope, &opts)?;
    // A turn the judge could not score is no plan, and no proof of its absence either: the
    // guard cannot decide (and fails open unless strict).
    if let Some(e) = crate::judge::failed::error(&doc.failed_turns) {
        return Err(e);
    }
    for ts in &doc.turns {
        let Some(s) = ts.scores.as_ref().filter(|_| ts.applicable) else {
            continue;
        };
        facts.turns_judged += 1;
        facts.best.tr = facts.best.tr.max(s.tr);
        facts.best.di = facts.best.di.max(s.di);
        facts.best.vr = facts.best.vr.max(s.vr);
        facts.best.sa = facts.best.sa.max(s.sa);
        if facts.plan_turn.is_none() && s.tr >= 2 && s.di >= 2 && s.vr >= 2 && s.sa >= 2 {
            facts.plan_turn = Some(ts.turn);
        }
    }
    if facts.relevance.is_none() && facts.best.tr >= 1 {
        facts.relevance = Some(Relevance::SessionThreat);
    }
    Ok(facts)
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
            Verdict::Deny { missing } => assert_eq!(
                missing,
                [
                    "the scope (every place that needs the defence)",
                    "the verification (a test with an attacking input)"
                ]
            ),
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
