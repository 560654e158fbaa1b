//! What became of each turn: the jobs' answers, failures and skips turned into the turn's
//! record (quotes checked), shared by the run's assembly and the rule-aware scheduler.

use super::answer::Answer;
use super::jobs::{JobError, JobResult};
use super::prompt::TurnView;
use super::scores::{Scores, Skip, TurnScore};
use super::verify::verify;
use crate::transcript::TurnKind;

/// Administrative turns are not put to an LLM judge.
pub(super) fn put_to_judge(kind: TurnKind) -> bool {
    kind != TurnKind::Administrative
}

/// What the jobs say of one turn.
#[derive(Debug, PartialEq)]
pub(super) enum Outcome<'a> {
    Answer(&'a Answer),
    Failed(&'a JobError),
    Skipped(Skip),
}

/// The answer for turn `n`, else what became of the job that asked about it. A job for one
/// turn speaks only for that turn; a `single` job (turn `None`) for every turn.
pub(super) fn result_for(results: &[(Option<u32>, JobResult)], n: u32) -> Option<Outcome<'_>> {
    results
        .iter()
        .filter(|(turn, _)| turn.is_none_or(|t| t == n))
        .find_map(|(_, r)| outcome(r, n))
}

/// What one job's result says of turn `n`.
pub(super) fn outcome(r: &JobResult, n: u32) -> Option<Outcome<'_>> {
    match r {
        JobResult::Answers(list) => list.iter().find(|a| a.turn == n).map(Outcome::Answer),
        JobResult::Failed(e) => Some(Outcome::Failed(e)),
        JobResult::Skipped(why) => Some(Outcome::Skipped(*why)),
    }
}

pub(super) fn not_applicable(turn: u32, kind: TurnKind) -> TurnScore {
    TurnScore {
        turn,
        kind,
        applicable: false,
        opportunity: false,
        scores: Some(Scores::default()),
        quotes: Default::default(),
        rejected_quotes: Vec::new(),
        error: None,
        judge_kind: None,
        skipped: None,
        doubt: None,
    }
}

/// A turn the judge answered for, its quotes checked against what the turn really says. Its
/// kind is what the turn does (`kind`, from the transcript): the judge's own, when it differs,
/// is kept beside it.
pub(super) fn scored_turn(
    mut a: Answer,
    v: &TurnView,
    kind: TurnKind,
    quotes_required: bool,
) -> TurnScore {
    let (quotes, rejected) = verify(&mut a.scores, &a.quotes, &v.parts(), quotes_required);
    TurnScore {
        turn: v.n,
        kind,
        applicable: a.applicable,
        opportunity: a.opportunity,
        scores: Some(a.scores),
        quotes,
        rejected_quotes: rejected,
        error: None,
        judge_kind: (a.kind != kind).then_some(a.kind),
        skipped: None,
        doubt: a.doubt,
    }
}

/// A turn whose scoring failed: no scores (never read as zeros), and why.
pub(super) fn failed_turn(turn: u32, kind: TurnKind, error: String) -> TurnScore {
    TurnScore {
        turn,
        kind,
        applicable: true,
        opportunity: true,
        scores: None,
        quotes: Default::default(),
        rejected_quotes: Vec::new(),
        error: Some(error),
        judge_kind: None,
        skipped: None,
        doubt: None,
    }
}

/// A turn not put to the judge: no scores, no error, and why it was not needed.
pub(super) fn skipped_turn(turn: u32, kind: TurnKind, why: Skip) -> TurnScore {
    TurnScore {
        skipped: Some(why),
        error: None,
        ..failed_turn(turn, kind, String::new())
    }
}
