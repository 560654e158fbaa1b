//! The origin rule (docs/method.md#origin-rule), as pure functions over plain data: the earliest
//! turn at which the record shows a deviation from the security intent, its type, and the missed
//! opportunities after it.

use crate::i18n::Tr;
use serde::{Deserialize, Serialize};

mod margin;
pub(crate) use margin::Margin;
#[cfg(test)]
use margin::Nudge;

use crate::history::ProvenanceStatus;
use crate::judge::scores::{Quotes, Scores, Skip, TurnScore};
use crate::transcript::TurnKind;

/// The rule's thresholds and switches (flags and `sage.*` config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Levers {
    /// A later implementation or review turn with VR ≤ this is a missed opportunity.
    pub vr_max: u8,
    /// … or with SA ≤ this.
    pub sa_max: u8,
    /// Report `not_noticed` / `noticed_chose_poorly` instead of the three types.
    pub two_types: bool,
}

impl Default for Levers {
    fn default() -> Self {
        Levers {
            vr_max: 1,
            sa_max: 1,
            two_types: false,
        }
    }
}

/// One judged turn, as the rule needs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnFacts {
    pub turn: u32,
    pub kind: TurnKind,
    pub applicable: bool,
    pub opportunity: bool,
    /// `None`: scoring failed.
    pub scores: Option<Scores>,
    pub quotes: Quotes,
    /// The turn touched the anchored file or code that uses it (for ordering reports).
    pub touches_anchor: bool,
    /// What the judge was unsure of (`None`: it gave no confidence).
    pub doubt: Option<crate::judge::scores::Doubt>,
    /// The kind the judge read, where it differs from what the turn does.
    pub judge_kind: Option<TurnKind>,
}

impl TurnFacts {
    /// A judged turn as the rule reads it; `touches_anchor` from the turn's edits and words.
    pub(crate) fn of(t: &TurnScore, touches_anchor: bool) -> TurnFacts {
        TurnFacts {
            turn: t.turn,
            kind: t.kind,
            applicable: t.applicable,
            opportunity: t.opportunity,
            scores: t.scores,
            quotes: t.quotes.clone(),
            touches_anchor,
            doubt: t.doubt.clone(),
            judge_kind: t.judge_kind,
        }
    }
}

/// What provenance and mapping tell the rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Input {
    pub status: ProvenanceStatus,
    /// The introducing write's turn, when mapped (only for `introduced`).
    pub introducing_turn: Option<u32>,
    /// The delivered repair's turn: the last agent write mapped to a turn.
    pub delivered_turn: Option<u32>,
    /// The last turn of the task's scope.
    pub last_turn: u32,
    /// The judged turns, in order.
    pub turns: Vec<TurnFacts>,
    /// No session could be read for the range.
    pub no_session: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OriginType {
    InadequateDefence,
    UnaddressedRequirement,
    DefectInChange,
    /// Two-type view of (ii).
    NotNoticed,
    /// Two-type view of (i) and (iii).
    NoticedChosePoorly,
}

impl OriginType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OriginType::InadequateDefence => "inadequate_defence",
            OriginType::UnaddressedRequirement => "unaddressed_requirement",
            OriginType::DefectInChange => "defect_in_change",
            OriginType::NotNoticed => "not_noticed",
            OriginType::NoticedChosePoorly => "noticed_chose_poorly",
        }
    }

    /// The type in words, in the run's language (reports people read).
    pub(crate) fn words_shown(self, tr: &Tr) -> String {
        tr.t(&format!("origin.{}", self.as_str()))
    }

    /// The type explained in a sentence, in the run's language.
    pub(crate) fn explained(self, tr: &Tr) -> String {
        tr.t(&format!("origin.long.{}", self.as_str()))
    }

    pub(crate) fn words(self) -> &'static str {
        match self {
            OriginType::InadequateDefence => "inadequate defence",
            OriginType::UnaddressedRequirement => "unaddressed requirement",
            OriginType::DefectInChange => "defect in the code change",
            OriginType::NotNoticed => "not noticed",
            OriginType::NoticedChosePoorly => "noticed, chose poorly",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    Localized,
    Undetermined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reason {
    NoCandidate,
    ScoringFailed,
    NoSession,
}

/// The rule's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Origin {
    pub status: Status,
    pub turn: Option<u32>,
    #[serde(rename = "type")]
    pub kind: Option<OriginType>,
    pub quote: Option<String>,
    pub reason: Option<Reason>,
    /// The bound B the candidates were taken up to, and what it was.
    #[serde(default)]
    pub bound: Option<u32>,
    #[serde(default)]
    pub bound_by: Option<String>,
    /// In words, for reports.
    #[serde(default)]
    pub detail: Option<String>,
    /// How firm the verdict is (docs/method.md#margin); `None` where nothing can be weighed.
    #[serde(default)]
    pub margin: Option<Margin>,
}

/// A later turn that could have caught the defect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Missed {
    pub turn: u32,
    pub kind: TurnKind,
    pub vr: u8,
    pub sa: u8,
    /// The turn touched the anchored file or code that uses it: the most relevant first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub touches_anchor: bool,
}

fn undetermined(
    reason: Reason,
    bound: Option<u32>,
    bound_by: Option<String>,
    detail: String,
) -> Origin {
    Origin {
        status: Status::Undetermined,
        turn: None,
        kind: None,
        quote: None,
        reason: Some(reason),
        bound,
        bound_by,
        detail: Some(detail),
        margin: None,
    }
}

/// What can set the bound, as `bound_by` says it: in English, as JSON is language-neutral;
/// the reports people read say it in their language (`report::bound_words`).
pub(crate) const BOUND_BY_WRITE: &str = "the introducing write";
/// The introducing write maps to no turn.
pub(crate) const BOUND_BY_LAST_UNMAPPED: &str =
    "the last turn in scope (the introducing write maps to no turn)";
/// Not introduced by the agent: its last mapped write.
pub(crate) const BOUND_BY_DELIVERED: &str = "the delivered repair";
/// No write maps to a turn.
pub(crate) const BOUND_BY_LAST_NONE: &str = "the last turn in scope (no write maps to a turn)";

/// The bound B, what set it, and whether (iii) may apply at it.
fn bound(input: &Input) -> (u32, String, bool) {
    match (input.status, input.introducing_turn) {
        (ProvenanceStatus::Introduced, Some(t)) => (t, BOUND_BY_WRITE.to_string(), true),
        (ProvenanceStatus::Introduced, None) => {
            (input.last_turn, BOUND_BY_LAST_UNMAPPED.to_string(), false)
        }
        (_, _) => match input.delivered_turn {
            Some(t) => (t, BOUND_BY_DELIVERED.to_string(), false),
            None => (input.last_turn, BOUND_BY_LAST_NONE.to_string(), false),
        },
    }
}

/// Whether turn `t` qualifies under (i) or (ii) — the scan's test, one turn at a time.
fn qualifies(t: &TurnFacts, s: Scores, bound: u32) -> Option<OriginType> {
    if !t.applicable {
        return None;
    }
    if t.turn < bound && s.di > 0 {
        return Some(OriginType::InadequateDefence);
    }
    (t.opportunity && s.tr == 0 && s.di == 0).then_some(OriginType::UnaddressedRequirement)
}

/// How far the scan of 1..B can already go while some turns are still being judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settled {
    /// A turn the scan needs has no answer yet.
    Open,
    /// The turn the scan stops at failed: `scoring_failed` whatever comes after it.
    Failed(u32),
    /// The origin is this turn, whatever comes after it.
    Origin(u32),
    /// No candidate up to the bound, nor (iii) at it.
    NoOrigin(u32),
}

/// The scan of [`locate`] over what is known so far: `input.turns` holds the turns answered
/// (a failed one with no scores), `pending` those still to be answered.
fn settled(input: &Input, pending: &std::collections::BTreeSet<u32>) -> Settled {
    let (bound, _, iii_allowed) = bound(input);
    let mut known = input.turns.iter().filter(|t| t.turn <= bound).peekable();
    let mut waiting = pending.range(..=bound).peekable();
    loop {
        // Both lists are in turn order: the scan meets whichever turn comes first.
        let next_known = known.peek().map(|t| t.turn);
        match (next_known, waiting.peek()) {
            (_, Some(&&w)) if next_known.is_none_or(|k| w < k) => return Settled::Open,
            (Some(_), _) => {
                let t = known.next().expect("peeked");
                let Some(s) = t.scores else {
                    return Settled::Failed(t.turn);
                };
                if qualifies(t, s, bound).is_some() {
                    return Settled::Origin(t.turn);
                }
            }
            (None, _) => break,
        }
    }
    if iii_allowed && let Some(t) = input.turns.iter().find(|t| t.turn == bound) {
        match t.scores {
            None => return Settled::Failed(bound),
            Some(s) if t.applicable && (s.tr > 0 || s.di > 0) => return Settled::Origin(bound),
            Some(_) => {}
        }
    }
    Settled::NoOrigin(bound)
}

/// Turns still to be judged whose scores can no longer change [`locate`]'s answer, given the
/// answers so far (`input.turns`; a failed turn has no scores). `pending` holds each turn
/// still to be judged with its kind, which comes from what the turn does (the transcript),
/// not from the judge. Skipping them gives the same origin and missed opportunities as
/// judging every turn: a property test runs the rule both ways.
pub(crate) fn unneeded(input: &Input, pending: &[(u32, TurnKind)]) -> Vec<(u32, Skip)> {
    if input.no_session {
        return Vec::new();
    }
    let waiting: std::collections::BTreeSet<u32> = pending.iter().map(|p| p.0).collect();
    let now = settled(input, &waiting);
    let skip = |turn: u32, kind: TurnKind| match now {
        Settled::Open => None,
        Settled::Failed(at) => (turn > at).then_some(Skip::AfterFailure),
        Settled::NoOrigin(b) => (turn > b).then_some(Skip::PastBound),
        Settled::Origin(o) => (turn > o
            && !matches!(kind, TurnKind::Implementation | TurnKind::Review))
        .then_some(Skip::AfterOrigin),
    };
    pending
        .iter()
        .filter_map(|&(turn, kind)| skip(turn, kind).map(|s| (turn, s)))
        .collect()
}

/// The origin rule as a model judge's schedule: a case's frame (its `turns` empty), asked
/// about the turns judged so far.
#[derive(Debug)]
pub(crate) struct Scheduler(pub Input);

impl crate::judge::schedule::Schedule for Scheduler {
    fn unneeded(&self, known: &[TurnScore], pending: &[(u32, TurnKind)]) -> Vec<(u32, Skip)> {
        let input = Input {
            turns: known.iter().map(|t| TurnFacts::of(t, false)).collect(),
            ..self.0.clone()
        };
        unneeded(&input, pending)
    }
}

/// Applies the origin rule (docs/method.md#origin-rule): returns the origin, with its margin,
/// and the missed opportunities after it.
pub(crate) fn locate(input: &Input, levers: &Levers) -> (Origin, Vec<Missed>) {
    let mut origin = origin_of(input, levers);
    let missed = missed(input, levers, &origin);
    origin.margin = margin::margin(input, levers, &origin);
    (origin, missed)
}

/// The origin alone, without its margin.
fn origin_of(input: &Input, levers: &Levers) -> Origin {
    if input.no_session {
        return undetermined(
            Reason::NoSession,
            None,
            None,
            "no session transcript was found for the range, so no turn can be scored".into(),
        );
    }
    let (bound, bound_by, iii_allowed) = bound(input);
    let mut origin: Option<(u32, OriginType, Option<String>)> = None;
    for t in input.turns.iter().filter(|t| t.turn <= bound) {
        let Some(s) = t.scores else {
            return undetermined(
                Reason::ScoringFailed,
                Some(bound),
                Some(bound_by),
                format!(
                    "turn {} could not be scored, and no earlier turn qualifies",
                    t.turn
                ),
            );
        };
        match qualifies(t, s, bound) {
            Some(OriginType::InadequateDefence) => {
                origin = Some((t.turn, OriginType::InadequateDefence, t.quotes.di.clone()));
                break;
            }
            Some(kind) => {
                origin = Some((t.turn, kind, None));
                break;
            }
            None => {}
        }
    }
    if origin.is_none() && iii_allowed {
        match input.turns.iter().find(|t| t.turn == bound) {
            Some(t) if t.scores.is_none() => {
                return undetermined(
                    Reason::ScoringFailed,
                    Some(bound),
                    Some(bound_by),
                    format!("the introducing write's turn {bound} could not be scored"),
                );
            }
            Some(t) if t.applicable => {
                let s = t.scores.unwrap_or_default();
                if s.tr > 0 || s.di > 0 {
                    let q = t.quotes.di.clone().or_else(|| t.quotes.tr.clone());
                    origin = Some((bound, OriginType::DefectInChange, q));
                }
            }
            _ => {}
        }
    }
    let Some((turn, mut kind, quote)) = origin else {
        return undetermined(
            Reason::NoCandidate,
            Some(bound),
            Some(bound_by),
            format!(
                "no turn up to {bound} qualifies: none named a defence before it, and none with an opportunity was silent on the threat"
            ),
        );
    };
    if levers.two_types {
        kind = match kind {
            OriginType::UnaddressedRequirement => OriginType::NotNoticed,
            _ => OriginType::NoticedChosePoorly,
        };
    }
    Origin {
        status: Status::Localized,
        turn: Some(turn),
        kind: Some(kind),
        quote,
        reason: None,
        bound: Some(bound),
        bound_by: Some(bound_by),
        detail: None,
        margin: None,
    }
}

/// The missed opportunities after a localised origin (none for an undetermined one).
fn missed(input: &Input, levers: &Levers, origin: &Origin) -> Vec<Missed> {
    let Some(turn) = origin.turn.filter(|_| origin.status == Status::Localized) else {
        return Vec::new();
    };
    input
        .turns
        .iter()
        .filter(|t| {
            t.turn > turn
                && t.applicable
                && matches!(t.kind, TurnKind::Implementation | TurnKind::Review)
        })
        .filter_map(|t| {
            let s = t.scores?;
            (s.vr <= levers.vr_max || s.sa <= levers.sa_max).then_some(Missed {
                turn: t.turn,
                kind: t.kind,
                vr: s.vr,
                sa: s.sa,
                touches_anchor: t.touches_anchor,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(turn: u32, kind: TurnKind, s: Option<(u8, u8, u8, u8)>, opp: bool) -> TurnFacts {
        TurnFacts {
            turn,
            kind,
            applicable: kind != TurnKind::Administrative,
            opportunity: opp,
            scores: s.map(|(tr, di, vr, sa)| Scores { tr, di, vr, sa }),
            quotes: Quotes {
                di: Some(format!("di quote {turn}")),
                tr: Some(format!("tr quote {turn}")),
                ..Default::default()
            },
            touches_anchor: false,
            doubt: None,
            judge_kind: None,
        }
    }

    fn input(
        status: ProvenanceStatus,
        intro: Option<u32>,
        delivered: Option<u32>,
        turns: Vec<TurnFacts>,
    ) -> Input {
        let last_turn = turns.last().map_or(0, |x| x.turn);
        Input {
            status,
            introducing_turn: intro,
            delivered_turn: delivered,
            last_turn,
            turns,
            no_session: false,
        }
    }

    use ProvenanceStatus::*;
    use TurnKind::*;

    /// The method's worked example: a defence named at turn 1, the introducing write at 3.
    fn worked_example() -> Input {
        input(
            Introduced,
            Some(3),
            Some(6),
            vec![
                t(1, Planning, Some((2, 2, 0, 0)), true),
                t(2, Implementation, Some((0, 1, 1, 0)), true),
                t(3, Implementation, Some((0, 2, 0, 0)), true),
                t(4, Verification, Some((0, 0, 1, 0)), true),
                t(5, Review, Some((2, 0, 1, 0)), true),
            ],
        )
    }

    #[test]
    fn table() {
        let l = Levers::default();
        // (i) named defence before the introducing write — the worked example
        let ex = worked_example();
        let (o, m) = locate(&ex, &l);
        assert_eq!(
            (o.status, o.turn, o.kind),
            (
                Status::Localized,
                Some(1),
                Some(OriginType::InadequateDefence)
            )
        );
        assert_eq!(o.quote.as_deref(), Some("di quote 1"));
        assert_eq!(m.iter().map(|x| x.turn).collect::<Vec<_>>(), [2, 3, 5]);
        // (ii) silent on the threat with an opportunity, possibly at the write itself
        let ii = input(
            Introduced,
            Some(2),
            None,
            vec![
                t(1, Planning, Some((0, 0, 0, 0)), false),
                t(2, Implementation, Some((0, 0, 0, 0)), true),
            ],
        );
        assert_eq!(
            locate(&ii, &l).0.kind,
            Some(OriginType::UnaddressedRequirement)
        );
        assert_eq!(locate(&ii, &l).0.turn, Some(2));
        // the earliest of (i) and (ii)
        let both = input(
            Inherited,
            None,
            Some(3),
            vec![
                t(1, Planning, Some((0, 0, 0, 0)), true),
                t(2, Planning, Some((0, 2, 0, 0)), true),
                t(3, Implementation, Some((0, 0, 0, 0)), true),
            ],
        );
        assert_eq!(locate(&both, &l).0.turn, Some(1));
        // (iii) only as the fallback, at the introducing write
        let iii = input(
            Introduced,
            Some(2),
            None,
            vec![
                t(1, Planning, Some((1, 0, 0, 0)), false),
                t(2, Implementation, Some((2, 1, 0, 0)), true),
            ],
        );
        let (o, _) = locate(&iii, &l);
        assert_eq!(
            (o.turn, o.kind),
            (Some(2), Some(OriginType::DefectInChange))
        );
        assert_eq!(o.quote.as_deref(), Some("di quote 2"));
        // never (iii) for inherited defects
        let inh = input(
            Inherited,
            None,
            Some(2),
            vec![
                t(1, Planning, Some((1, 0, 0, 0)), false),
                t(2, Implementation, Some((2, 1, 0, 0)), true),
            ],
        );
        // DI at the bound (t = B) is not (i): no candidate
        assert_eq!(locate(&inh, &l).0.reason, Some(Reason::NoCandidate));
        // a failed turn met before any qualifying one
        let failed = input(
            Introduced,
            Some(3),
            None,
            vec![
                t(1, Planning, Some((1, 0, 0, 0)), false),
                t(2, Planning, None, true),
                t(3, Implementation, Some((0, 2, 0, 0)), true),
            ],
        );
        assert_eq!(locate(&failed, &l).0.reason, Some(Reason::ScoringFailed));
        // ... but not when a qualifying turn came first
        let ok = input(
            Introduced,
            Some(3),
            None,
            vec![
                t(1, Planning, Some((0, 1, 0, 0)), true),
                t(2, Planning, None, true),
                t(3, Implementation, Some((0, 2, 0, 0)), true),
            ],
        );
        assert_eq!(locate(&ok, &l).0.turn, Some(1));
        // the introducing write's own turn failed → scoring_failed instead of (iii)
        let iii_failed = input(
            Introduced,
            Some(2),
            None,
            vec![
                t(1, Planning, Some((1, 0, 0, 0)), false),
                t(2, Implementation, None, true),
            ],
        );
        assert_eq!(
            locate(&iii_failed, &l).0.reason,
            Some(Reason::ScoringFailed)
        );
        // introduced but unmapped: B is the last turn and (iii) cannot apply
        let unmapped = input(
            Introduced,
            None,
            None,
            vec![
                t(1, Planning, Some((1, 0, 0, 0)), false),
                t(2, Implementation, Some((2, 1, 0, 0)), true),
            ],
        );
        let (o, _) = locate(&unmapped, &l);
        assert_eq!((o.reason, o.bound), (Some(Reason::NoCandidate), Some(2)));
        // administrative turns are never candidates
        let admin = input(
            Inherited,
            None,
            Some(2),
            vec![
                t(1, Administrative, Some((0, 0, 0, 0)), true),
                t(2, Planning, Some((0, 1, 0, 0)), true),
                t(3, Review, Some((0, 0, 0, 0)), true),
            ],
        );
        assert_eq!(locate(&admin, &l).0.reason, Some(Reason::NoCandidate));
        // no session
        let mut none = input(Inherited, None, None, vec![]);
        none.no_session = true;
        assert_eq!(locate(&none, &l).0.reason, Some(Reason::NoSession));
        // levers: two types, thresholds
        let two = Levers {
            two_types: true,
            ..l
        };
        assert_eq!(
            locate(&ex, &two).0.kind,
            Some(OriginType::NoticedChosePoorly)
        );
        assert_eq!(locate(&ii, &two).0.kind, Some(OriginType::NotNoticed));
        let strict = Levers {
            vr_max: 0,
            sa_max: 0,
            ..l
        };
        let strict_ex = input(
            Introduced,
            Some(3),
            None,
            vec![
                t(1, Planning, Some((2, 2, 0, 0)), true),
                t(2, Review, Some((0, 0, 2, 2)), true),
                t(3, Review, Some((0, 0, 0, 2)), true),
            ],
        );
        assert_eq!(
            locate(&strict_ex, &strict)
                .1
                .iter()
                .map(|x| x.turn)
                .collect::<Vec<_>>(),
            [3]
        );
        assert_eq!(
            locate(&strict_ex, &l)
                .1
                .iter()
                .map(|x| x.turn)
                .collect::<Vec<_>>(),
            [3]
        );
        let loose = Levers {
            vr_max: 2,
            sa_max: 2,
            ..l
        };
        assert_eq!(locate(&ex, &loose).1.len(), 3);
    }

    /// The same verdict and missed opportunities, and a margin that weighs the same changes;
    /// where a scheduled run left turns unjudged, a change's outcome may rest on them
    /// (`unscored`) instead of being known.
    fn same_but_unscored(
        (a, ma): (Origin, Vec<Missed>),
        (b, mb): (Origin, Vec<Missed>),
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(&ma, &mb);
        let strip = |o: &Origin| Origin {
            margin: None,
            ..o.clone()
        };
        prop_assert_eq!(strip(&a), strip(&b));
        match (&a.margin, &b.margin) {
            (Some(x), Some(y)) => {
                prop_assert_eq!(x.flips.len(), y.flips.len());
                for (f, g) in x.flips.iter().zip(&y.flips) {
                    prop_assert_eq!((f.turn, f.nudge), (g.turn, g.nudge));
                    if !f.unscored {
                        prop_assert_eq!(f, g);
                    }
                }
            }
            (x, y) => prop_assert_eq!(x, y),
        }
        Ok(())
    }

    #[test]
    fn margin() {
        let l = Levers::default();
        // The worked example: a defence named at turn 1, DI 2; no single change moves it.
        let (o, _) = locate(&worked_example(), &l);
        let m = o.margin.unwrap();
        assert!(m.firm, "{m:?}");
        assert!(m.shown(Tr::english()).starts_with("firm:"));
        // A defence named with DI 1 rests on one point: at 0 the silent plan turn is (ii).
        let mut close = worked_example();
        close.turns[0].scores = Some(Scores {
            tr: 0,
            di: 1,
            vr: 0,
            sa: 0,
        });
        let (o, _) = locate(&close, &l);
        let m = o.margin.unwrap();
        assert!(!m.firm);
        let f = m.headline().unwrap();
        assert_eq!(f.turn, 1);
        assert_eq!(
            f.nudge,
            Nudge::Score {
                dim: crate::judge::scores::Dim::Di,
                from: 1,
                to: 0
            }
        );
        assert_eq!(
            (f.origin_turn, f.origin_type),
            (Some(1), Some(OriginType::UnaddressedRequirement))
        );
        assert!(
            m.shown(Tr::english()).starts_with(
                "close call: if turn 1's DI were 0, the origin would be turn 1 (unaddressed requirement)"
            ),
            "{}",
            m.shown(Tr::english())
        );
        // A judge sure of its scores there: only the changes it doubts are weighed.
        let mut sure = close.clone();
        for t in &mut sure.turns {
            t.doubt = Some(Default::default());
        }
        assert!(locate(&sure, &l).0.margin.unwrap().firm);
        sure.turns[0].doubt = Some(crate::judge::scores::Doubt {
            scores: vec![crate::judge::scores::DimScore {
                dim: crate::judge::scores::Dim::Di,
                score: 0,
            }],
            opportunity: false,
        });
        assert_eq!(locate(&sure, &l).0.margin.unwrap().flips.len(), 1);
        // No margin where nothing can be weighed.
        let none = Input {
            no_session: true,
            ..close
        };
        assert!(locate(&none, &l).0.margin.is_none());
    }

    fn arb() -> impl Strategy<Value = Input> {
        let turn = (
            0u8..5,
            prop::option::weighted(0.9, (0u8..4, 0u8..4, 0u8..4, 0u8..4)),
            any::<bool>(),
        );
        (
            prop::collection::vec(turn, 1..10),
            0u8..4,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(ts, st, intro, deliv)| {
                let kinds = [
                    Planning,
                    Implementation,
                    Review,
                    Verification,
                    Administrative,
                ];
                let turns: Vec<TurnFacts> = ts
                    .into_iter()
                    .enumerate()
                    .map(|(i, (k, s, o))| t(i as u32 + 1, kinds[k as usize], s, o))
                    .collect();
                let n = turns.len() as u32;
                let status =
                    [Inherited, Introduced, IntroducedByOther, NoCodeLocation][st as usize];
                let pick = |b: bool| b.then_some(n.div_ceil(2));
                input(
                    status,
                    if status == Introduced {
                        pick(intro)
                    } else {
                        None
                    },
                    pick(deliv),
                    turns,
                )
            })
    }

    /// Judges `full`'s turns as a run does: in turn order, at most `window` at a time, answers
    /// arriving in the order `arrivals` picks, each turn first checked against [`unneeded`].
    /// Returns what the run ends with: the answered turns, and the skipped ones with no
    /// scores, as a report holds them.
    fn scheduled(full: &Input, window: usize, arrivals: &[usize]) -> (Input, usize) {
        let mut known = Input {
            turns: Vec::new(),
            ..full.clone()
        };
        let mut queue: std::collections::VecDeque<&TurnFacts> = full.turns.iter().collect();
        let mut flying: Vec<&TurnFacts> = Vec::new();
        let mut skipped = Vec::new();
        let mut picks = arrivals.iter().cycle();
        while !queue.is_empty() || !flying.is_empty() {
            while flying.len() < window
                && let Some(next) = queue.front()
            {
                let pending: Vec<(u32, TurnKind)> = queue
                    .iter()
                    .chain(flying.iter())
                    .map(|t| (t.turn, t.kind))
                    .collect();
                let skip = unneeded(&known, &pending);
                let next = *next;
                queue.pop_front();
                if skip.iter().any(|(t, _)| *t == next.turn) {
                    skipped.push(next.turn);
                } else {
                    flying.push(next);
                }
            }
            if !flying.is_empty() {
                let i = picks.next().copied().unwrap_or(0) % flying.len();
                let done = flying.remove(i);
                known.turns.push(done.clone());
                known.turns.sort_by_key(|t| t.turn);
            }
        }
        let asked = known.turns.len();
        for t in skipped {
            let mut f = full.turns.iter().find(|x| x.turn == t).unwrap().clone();
            f.scores = None;
            known.turns.push(f);
        }
        known.turns.sort_by_key(|t| t.turn);
        (known, asked)
    }

    #[test]
    fn scheduling_skips_what_cannot_matter() {
        // The worked example: origin at 1, so the verification turn 4 is not asked.
        let ex = worked_example();
        let (run, asked) = scheduled(&ex, 1, &[0]);
        assert_eq!(asked, 4);
        assert_eq!(
            locate(&run, &Levers::default()),
            locate(&ex, &Levers::default())
        );
        // a failure before any candidate: nothing after it is asked
        let failed = input(
            Inherited,
            None,
            None,
            vec![
                t(1, Planning, None, true),
                t(2, Implementation, Some((0, 0, 0, 0)), true),
                t(3, Review, Some((0, 0, 0, 0)), true),
            ],
        );
        assert_eq!(scheduled(&failed, 1, &[0]).1, 1);
        // no candidate up to the bound: the turns past it are not asked
        let past = input(
            Inherited,
            None,
            Some(2),
            vec![
                t(1, Planning, Some((1, 0, 0, 0)), false),
                t(2, Implementation, Some((1, 0, 0, 0)), false),
                t(3, Review, Some((0, 0, 0, 0)), true),
            ],
        );
        assert_eq!(scheduled(&past, 1, &[0]).1, 2);
        // an answer still out keeps everything after it asked
        let (_, asked) = scheduled(&ex, 5, &[0]);
        assert_eq!(asked, 5);
    }

    proptest! {
        /// The saving never changes the answer: the rule over what a scheduled run asked (and
        /// the skipped turns with no scores, as the report holds them) gives the same origin
        /// and missed opportunities as over every turn judged.
        #[test]
        fn scheduling_gives_the_same_result(
            inp in arb(),
            applicable in prop::collection::vec(any::<bool>(), 10),
            vr in 0u8..3,
            sa in 0u8..3,
            two in any::<bool>(),
            window in 1usize..5,
            arrivals in prop::collection::vec(0usize..8, 1..12),
        ) {
            let mut inp = inp;
            for (t, a) in inp.turns.iter_mut().zip(applicable) {
                t.applicable = t.kind != Administrative && a;
            }
            let levers = Levers { vr_max: vr, sa_max: sa, two_types: two };
            let (run, asked) = scheduled(&inp, window, &arrivals);
            prop_assert!(asked <= inp.turns.len());
            same_but_unscored(locate(&run, &levers), locate(&inp, &levers))?;
            let answered = Input {
                turns: run.turns.iter().filter(|t| inp.turns.iter().any(|x| x == *t)).cloned().collect(),
                ..run.clone()
            };
            // Turns left out altogether are invisible to the margin's what-ifs: only the
            // verdict itself is the same.
            let strip = |(o, m): (Origin, Vec<Missed>)| (Origin { margin: None, ..o }, m);
            prop_assert_eq!(strip(locate(&answered, &levers)), strip(locate(&inp, &levers)));
        }

        /// The margin weighs every single change that moves the verdict: trying every change
        /// of every turn, after the origin and past the bound too, finds no other.
        #[test]
        fn margin_misses_no_change_that_moves_the_verdict(inp in arb(), two in any::<bool>()) {
            let levers = Levers { two_types: two, ..Levers::default() };
            let (o, _) = locate(&inp, &levers);
            let Some(m) = o.margin.clone() else {
                prop_assert!(o.reason == Some(Reason::ScoringFailed) || inp.no_session);
                return Ok(());
            };
            let now = (o.turn, o.kind);
            let mut every = Vec::new();
            for (i, t) in inp.turns.iter().enumerate() {
                for (nudge, changed) in margin::nudges(t) {
                    let mut alt = inp.clone();
                    alt.turns[i] = changed;
                    let a = origin_of(&alt, &levers);
                    let failed = a.reason == Some(Reason::ScoringFailed);
                    let then = if a.status == Status::Localized { (a.turn, a.kind) } else { (None, None) };
                    if then != now || failed {
                        every.push((t.turn, nudge));
                    }
                }
            }
            let listed: Vec<(u32, Nudge)> = m.flips.iter().map(|f| (f.turn, f.nudge)).collect();
            prop_assert_eq!(listed, every);
            prop_assert_eq!(m.firm, m.flips.is_empty());
        }

        #[test]
        fn rule_invariants(inp in arb(), vr in 0u8..3, sa in 0u8..3) {
            let (o, missed) = locate(&inp, &Levers { vr_max: vr, sa_max: sa, two_types: false });
            if let Some(turn) = o.turn {
                // the origin never lies after the bound
                prop_assert!(turn <= o.bound.unwrap());
                // (iii) never for inherited (or other non-agent) defects
                if o.kind == Some(OriginType::DefectInChange) {
                    prop_assert_eq!(inp.status, Introduced);
                }
                // missed opportunities always after the origin
                prop_assert!(missed.iter().all(|m| m.turn > turn));
            } else {
                prop_assert!(missed.is_empty());
            }
        }
    }
}
