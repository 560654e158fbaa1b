//! Rule-aware scheduling (docs/judge.md#scheduling): as a model judge's answers come back, the
//! turns whose scores could no longer change the result are not asked. What "the result" is
//! belongs to the caller (`blame-origin`: the origin rule); this holds the answers it reads.

use std::collections::BTreeMap;

use super::jobs::{Gate, JobResult};
use super::outcome::{Outcome, failed_turn, not_applicable, outcome, put_to_judge, scored_turn};
use super::prompt::TurnView;
use super::scores::{Skip, TurnScore};
use crate::transcript::TurnKind;

pub(crate) use super::options::Schedule;

/// Asks only the given turns: what a confirming judge re-scores (`--confirm-with`).
#[derive(Debug)]
pub(crate) struct Only(pub std::collections::BTreeSet<u32>);

impl Schedule for Only {
    fn unneeded(&self, _known: &[TurnScore], pending: &[(u32, TurnKind)]) -> Vec<(u32, Skip)> {
        pending
            .iter()
            .filter(|(t, _)| !self.0.contains(t))
            .map(|(t, _)| (*t, Skip::Settled))
            .collect()
    }
}

/// One judge × repeat's answers so far, in turn order, and the turns still to be answered.
pub(super) struct RuleGate<'a> {
    schedule: &'a dyn Schedule,
    known: Vec<TurnScore>,
    pending: BTreeMap<u32, TurnKind>,
    views: BTreeMap<u32, (&'a TurnView, TurnKind)>,
    quotes_required: bool,
}

impl<'a> RuleGate<'a> {
    /// Every turn put to the judge is pending; the others (administrative) are known as not
    /// applicable from the start, as the report holds them.
    pub(super) fn new(
        schedule: &'a dyn Schedule,
        views: &'a [TurnView],
        kinds: &[TurnKind],
        quotes_required: bool,
    ) -> RuleGate<'a> {
        let mut known = Vec::new();
        let mut pending = BTreeMap::new();
        for (v, &kind) in views.iter().zip(kinds) {
            if put_to_judge(kind) {
                pending.insert(v.n, kind);
            } else {
                known.push(not_applicable(v.n, kind));
            }
        }
        RuleGate {
            schedule,
            known,
            pending,
            views: views
                .iter()
                .zip(kinds)
                .map(|(v, &k)| (v.n, (v, k)))
                .collect(),
            quotes_required,
        }
    }
}

impl Gate for RuleGate<'_> {
    fn learn(&mut self, turn: u32, result: &JobResult) {
        let Some(&(view, kind)) = self.views.get(&turn) else {
            return;
        };
        self.pending.remove(&turn);
        // The rule reads the scores as the report will hold them: quotes checked first.
        let score = match outcome(result, turn) {
            Some(Outcome::Answer(a)) => scored_turn(a.clone(), view, kind, self.quotes_required),
            Some(Outcome::Skipped(_)) => return,
            Some(Outcome::Failed(_)) | None => failed_turn(turn, kind, String::new()),
        };
        let at = self.known.partition_point(|t| t.turn < turn);
        self.known.insert(at, score);
    }

    fn skip(&mut self, turn: u32) -> Option<Skip> {
        let pending: Vec<(u32, TurnKind)> = self.pending.iter().map(|(t, k)| (*t, *k)).collect();
        let why = self
            .schedule
            .unneeded(&self.known, &pending)
            .into_iter()
            .find(|(t, _)| *t == turn)
            .map(|(_, why)| why)?;
        self.pending.remove(&turn);
        Some(why)
    }
}
