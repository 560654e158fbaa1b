//! The origin rule (docs/method.md#origin-rule), as pure functions over plain data: the earliest
//! turn at which the record shows a deviation from the security intent, its type, and the missed
//! opportunities after it.

use serde::{Deserialize, Serialize};

use crate::history::ProvenanceStatus;
use crate::judge::scores::{Quotes, Scores};
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
    pub(crate) fn words_shown(self) -> String {
        crate::i18n::t(&format!("origin.{}", self.as_str()))
    }

    /// The type explained in a sentence, in the run's language.
    pub(crate) fn explained(self) -> String {
        crate::i18n::t(&format!("origin.long.{}", self.as_str()))
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
    }
}

/// Applies the origin rule (docs/method.md#origin-rule): returns the origin and the missed
/// opportunities after it.
pub(crate) fn locate(input: &Input, levers: &Levers) -> (Origin, Vec<Missed>) {
    if input.no_session {
        return (
            undetermined(
                Reason::NoSession,
                None,
                None,
                "no session transcript was found for the range, so no turn can be scored".into(),
            ),
            Vec::new(),
        );
    }
    // The bound B, and whether (iii) may apply at it.
    let (bound, bound_by, iii_allowed) = match (input.status, input.introducing_turn) {
        (ProvenanceStatus::Introduced, Some(t)) => (t, "the introducing write".to_string(), true),
        (ProvenanceStatus::Introduced, None) => (
            input.last_turn,
            "the last turn in scope (the introducing write maps to no turn)".to_string(),
            false,
        ),
        (_, _) => match input.delivered_turn {
            Some(t) => (t, "the delivered repair".to_string(), false),
            None => (
                input.last_turn,
                "the last turn in scope (no write maps to a turn)".to_string(),
                false,
            ),
        },
    };
    let mut origin: Option<(u32, OriginType, Option<String>)> = None;
    for t in input.turns.iter().filter(|t| t.turn <= bound) {
        let Some(s) = t.scores else {
            return (
                undetermined(
                    Reason::ScoringFailed,
                    Some(bound),
                    Some(bound_by),
                    format!(
                        "turn {} could not be scored, and no earlier turn qualifies",
                        t.turn
                    ),
                ),
                Vec::new(),
            );
        };
        if !t.applicable {
            continue;
        }
        if t.turn < bound && s.di > 0 {
            origin = Some((t.turn, OriginType::InadequateDefence, t.quotes.di.clone()));
            break;
        }
        if t.opportunity && s.tr == 0 && s.di == 0 {
            origin = Some((t.turn, OriginType::UnaddressedRequirement, None));
            break;
        }
    }
    if origin.is_none() && iii_allowed {
        match input.turns.iter().find(|t| t.turn == bound) {
            Some(t) if t.scores.is_none() => {
                return (
                    undetermined(
                        Reason::ScoringFailed,
                        Some(bound),
                        Some(bound_by),
                        format!("the introducing write's turn {bound} could not be scored"),
                    ),
                    Vec::new(),
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
        return (
            undetermined(
                Reason::NoCandidate,
                Some(bound),
                Some(bound_by),
                format!(
                    "no turn up to {bound} qualifies: none named a defence before it, and none with an opportunity was silent on the threat"
                ),
            ),
            Vec::new(),
        );
    };
    if levers.two_types {
        kind = match kind {
            OriginType::UnaddressedRequirement => OriginType::NotNoticed,
            _ => OriginType::NoticedChosePoorly,
        };
    }
    let missed = input
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
        .collect();
    (
        Origin {
            status: Status::Localized,
            turn: Some(turn),
            kind: Some(kind),
            quote,
            reason: None,
            bound: Some(bound),
            bound_by: Some(bound_by),
            detail: None,
        },
        missed,
    )
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

    #[test]
    fn table() {
        let l = Levers::default();
        // (i) named defence before the introducing write — the worked example
        let ex = input(
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
        );
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

    proptest! {
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
