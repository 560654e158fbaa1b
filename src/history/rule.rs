//! The provenance rule (docs/method.md#provenance) as a pure function over (write, present?) facts.

/// One write of the range, reduced to what the rule needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fact {
    /// Whether the write is the agent's (else a human or other commit of the range).
    pub agent: bool,
    /// Whether the defect is present in the snapshot after this write.
    pub present: bool,
}

/// Why the anchor could not be located at the final snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotLocated {
    /// Present in no snapshot at all, baseline included.
    Never,
    /// Present at some point, gone at the end; `last` is the last write index (0-based)
    /// after which it was still present, `None` when only the baseline had it.
    Gone { last: Option<usize> },
}

/// The rule's answer; write indexes are 0-based positions in the facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Inherited,
    Introduced { write: usize },
    IntroducedByOther { write: usize },
    NoCodeLocation(NotLocated),
}

/// Applies the rule of docs/method.md#provenance to the baseline and the writes in order.
///
/// The introducing write is the earliest write after which the defect is present in every
/// later snapshot, so a remove-and-restore yields the restoring write.
pub(crate) fn decide(base_present: bool, writes: &[Fact]) -> Verdict {
    let final_present = writes.last().map_or(base_present, |w| w.present);
    if !final_present {
        let last = writes.iter().rposition(|w| w.present);
        return if last.is_none() && !base_present {
            Verdict::NoCodeLocation(NotLocated::Never)
        } else {
            Verdict::NoCodeLocation(NotLocated::Gone { last })
        };
    }
    // The defect is present at the end: find where the final run of presence starts.
    let first_of_run = match writes.iter().rposition(|w| !w.present) {
        Some(absent_at) => absent_at + 1,
        None if base_present => return Verdict::Inherited,
        None => 0,
    };
    if writes[first_of_run].agent {
        Verdict::Introduced {
            write: first_of_run,
        }
    } else {
        Verdict::IntroducedByOther {
            write: first_of_run,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn a(present: bool) -> Fact {
        Fact {
            agent: true,
            present,
        }
    }
    fn h(present: bool) -> Fact {
        Fact {
            agent: false,
            present,
        }
    }

    #[test]
    fn table() {
        use NotLocated::*;
        use Verdict::*;
        let cases: Vec<(bool, Vec<Fact>, Verdict)> = vec![
            // present throughout
            (true, vec![a(true), a(true)], Inherited),
            // present at base, untouched range
            (true, vec![h(true)], Inherited),
            // written by the agent's second write
            (
                false,
                vec![a(false), a(true), a(true)],
                Introduced { write: 1 },
            ),
            // written by the very first write
            (false, vec![a(true)], Introduced { write: 0 }),
            // removed and restored: the restoring write
            (
                false,
                vec![a(true), a(false), a(true)],
                Introduced { write: 2 },
            ),
            // inherited, removed, then restored: not inherited any more
            (true, vec![a(false), a(true)], Introduced { write: 1 }),
            // a human commit wrote it
            (
                false,
                vec![a(false), h(true), a(true)],
                IntroducedByOther { write: 1 },
            ),
            // the agent restored what a human had removed
            (true, vec![h(false), a(true)], Introduced { write: 1 }),
            // never present anywhere
            (false, vec![a(false), a(false)], NoCodeLocation(Never)),
            // present earlier, fixed at the end
            (
                false,
                vec![a(true), a(false)],
                NoCodeLocation(Gone { last: Some(0) }),
            ),
            (true, vec![a(false)], NoCodeLocation(Gone { last: None })),
            // no writes at all
            (true, vec![], Inherited),
            (false, vec![], NoCodeLocation(Never)),
        ];
        for (base, writes, want) in cases {
            assert_eq!(decide(base, &writes), want, "base={base} writes={writes:?}");
        }
    }

    fn facts() -> impl Strategy<Value = (bool, Vec<Fact>)> {
        (
            any::<bool>(),
            prop::collection::vec((any::<bool>(), any::<bool>()), 0..12),
        )
            .prop_map(|(b, v)| {
                (
                    b,
                    v.into_iter()
                        .map(|(agent, present)| Fact { agent, present })
                        .collect(),
                )
            })
    }

    proptest! {
        #[test]
        fn introducing_write_stays_present_to_the_end((base, writes) in facts()) {
            match decide(base, &writes) {
                Verdict::Introduced { write } | Verdict::IntroducedByOther { write } => {
                    prop_assert!(writes[write..].iter().all(|w| w.present));
                    // earliest such write: the one before it (or the base) lacks the defect
                    let before = if write == 0 { base } else { writes[write - 1].present };
                    prop_assert!(!before);
                    prop_assert_eq!(
                        matches!(decide(base, &writes), Verdict::Introduced { .. }),
                        writes[write].agent
                    );
                }
                Verdict::Inherited => {
                    prop_assert!(base && writes.iter().all(|w| w.present));
                }
                Verdict::NoCodeLocation(_) => {
                    prop_assert!(!writes.last().map_or(base, |w| w.present));
                }
            }
        }
    }
}
