//! How firm a verdict is (docs/method.md#margin): the single changes — one score by ±1, one
//! kind or opportunity flipped, on one turn up to the bound — that would move the origin turn or
//! type, and what the verdict would then be. Pure, like the rule it re-runs.

use crate::i18n::Tr;
use serde::{Deserialize, Serialize};

use super::{Input, Levers, Origin, OriginType, Status, TurnFacts, origin_of};
use crate::judge::scores::Dim;
use crate::transcript::TurnKind;

/// One step away from the judged facts of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub(crate) enum Nudge {
    /// A score one point higher or lower.
    Score { dim: Dim, from: u8, to: u8 },
    /// The kind read otherwise: an administrative turn as planning (so it is judged), any other
    /// as administrative (so it is not).
    Kind { from: TurnKind, to: TurnKind },
    /// The opportunity flag flipped.
    Opportunity { from: bool, to: bool },
}

/// A single change that moves the verdict, and the verdict it leads to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Flip {
    pub turn: u32,
    #[serde(flatten)]
    pub nudge: Nudge,
    /// The origin turn it would give (`None`: undetermined).
    pub origin_turn: Option<u32>,
    /// Its type (`None`: undetermined).
    #[serde(rename = "type")]
    pub origin_type: Option<OriginType>,
    /// The new verdict would rest on turns that have no scores (not put to the judge, since
    /// they could not matter before, or failed): what it would be is not known.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unscored: bool,
}

/// The verdict's margin: firm when no single change moves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Margin {
    pub firm: bool,
    /// Every single change that moves the origin turn or type, in turn order.
    pub flips: Vec<Flip>,
}

impl Margin {
    /// The flip a report names: a score before an opportunity before a kind (a judge's score
    /// is the likeliest to be off by one), then the earliest turn.
    pub(crate) fn headline(&self) -> Option<&Flip> {
        let rank = |f: &Flip| match f.nudge {
            Nudge::Score { .. } => 0,
            Nudge::Opportunity { .. } => 1,
            Nudge::Kind { .. } => 2,
        };
        self.flips.iter().min_by_key(|f| (rank(f), f.turn))
    }

    /// The margin in a line, in the run's language: "firm: …", or "close call: if turn 3's DI
    /// were 0, the origin would be turn 5 (unaddressed requirement)".
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        let Some(f) = self.headline() else {
            return tr.t("margin.firm");
        };
        let change = match f.nudge {
            Nudge::Score { dim, to, .. } => tr.tf(
                "margin.if_score",
                &[
                    ("turn", &f.turn),
                    ("dim", &dim.key().to_uppercase()),
                    ("to", &to),
                ],
            ),
            Nudge::Kind { to, .. } => tr.tf(
                "margin.if_kind",
                &[
                    ("turn", &f.turn),
                    ("kind", &tr.t(&format!("kind.{}", to.as_str()))),
                ],
            ),
            Nudge::Opportunity { to: true, .. } => {
                tr.tf("margin.if_opportunity", &[("turn", &f.turn)])
            }
            Nudge::Opportunity { to: false, .. } => {
                tr.tf("margin.if_no_opportunity", &[("turn", &f.turn)])
            }
        };
        let then = match (f.origin_turn, f.origin_type) {
            _ if f.unscored => tr.t("margin.then_unscored"),
            (Some(turn), Some(k)) => tr.tf(
                "margin.then_turn",
                &[("turn", &turn), ("type", &k.words_shown(tr))],
            ),
            _ => tr.t("margin.then_undetermined"),
        };
        let mut line = tr.tf("margin.close", &[("change", &change), ("then", &then)]);
        if self.flips.len() > 1 {
            line.push_str(&tr.tf("margin.more", &[("n", &self.flips.len())]));
        }
        line
    }

    /// The turns a close call depends on, each once, in order: what a model judge re-scores
    /// to settle it (`--confirm-with`).
    pub(crate) fn turns(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self.flips.iter().map(|f| f.turn).collect();
        out.dedup();
        out
    }
}

/// The one-step changes of a turn's facts that its judge finds plausible: those its doubt
/// names, or, from a judge that gives no confidence, every score ±1 and the opportunity flag.
/// A kind comes from what the turn does, not from the judge, so it is flipped only where the
/// judge read the turn as another kind than the transcript does (`judge_kind`).
pub(super) fn nudges(t: &TurnFacts) -> Vec<(Nudge, TurnFacts)> {
    let mut out = Vec::new();
    if let Some(s) = t.scores.filter(|_| t.applicable) {
        for dim in Dim::ALL {
            let from = s.get(dim);
            let steps = [from.checked_sub(1), (from < 3).then_some(from + 1)];
            for to in steps.into_iter().flatten().filter(|&to| match &t.doubt {
                None => true,
                Some(d) => d.scores.iter().any(|x| x.dim == dim && x.score == to),
            }) {
                let mut n = t.clone();
                let mut changed = s;
                changed.set(dim, to);
                n.scores = Some(changed);
                out.push((Nudge::Score { dim, from, to }, n));
            }
        }
        if t.doubt.as_ref().is_none_or(|d| d.opportunity) {
            let mut n = t.clone();
            n.opportunity = !t.opportunity;
            out.push((
                Nudge::Opportunity {
                    from: t.opportunity,
                    to: n.opportunity,
                },
                n,
            ));
        }
    }
    if t.scores.is_some()
        && let Some(to) = t.judge_kind.filter(|k| *k != t.kind)
    {
        let mut n = t.clone();
        n.kind = to;
        n.applicable = to != TurnKind::Administrative;
        if !n.applicable {
            n.opportunity = false;
            n.scores = Some(Default::default());
        }
        out.push((Nudge::Kind { from: t.kind, to }, n));
    }
    out
}

fn verdict(o: &Origin) -> (Option<u32>, Option<OriginType>) {
    match o.status {
        Status::Localized => (o.turn, o.kind),
        Status::Undetermined => (None, None),
    }
}

/// The margin of `origin`, the rule's answer for `input` under `levers`. `None` where there is
/// nothing to weigh: no session, or a turn the decision needs could not be scored.
pub(crate) fn margin(input: &Input, levers: &Levers, origin: &Origin) -> Option<Margin> {
    if input.no_session || origin.reason == Some(super::Reason::ScoringFailed) {
        return None;
    }
    let now = verdict(origin);
    // The scan stops at the first qualifying turn: a change after the origin cannot move it,
    // except where the origin is (iii) or there is none, which the whole span up to B decides.
    let bound = origin.bound.unwrap_or(input.last_turn);
    let last = match (origin.turn, origin.kind) {
        (Some(t), Some(k)) if !matches!(k, OriginType::DefectInChange) => t,
        _ => bound,
    };
    let mut flips = Vec::new();
    let mut alt = input.clone();
    for (i, t) in input.turns.iter().enumerate() {
        if t.turn > last {
            break;
        }
        for (nudge, changed) in nudges(t) {
            alt.turns[i] = changed;
            let o = origin_of(&alt, levers);
            alt.turns[i] = t.clone();
            let then = verdict(&o);
            let unscored = o.reason == Some(super::Reason::ScoringFailed);
            if then != now || unscored {
                flips.push(Flip {
                    turn: t.turn,
                    nudge,
                    origin_turn: then.0,
                    origin_type: then.1,
                    unscored,
                });
            }
        }
    }
    Some(Margin {
        firm: flips.is_empty(),
        flips,
    })
}
