//! Quote anchoring (docs/method.md#quotes): a non-zero score stands only on a verbatim quote from
//! the turn being scored — its text, reasoning, tool arguments or diffs, as the judge saw them.

use super::scores::{Dim, Quotes, Rejected, Scores};

/// Collapses runs of whitespace to one space and trims.
pub(crate) fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sets unsupported scores to 0 and says why; returns the kept quotes. `parts` are the pieces of
/// the turn a quote may come from (`TurnView::parts`); a quote may also span them.
pub(crate) fn verify(
    scores: &mut Scores,
    quotes: &Quotes,
    parts: &[&str],
    required: bool,
) -> (Quotes, Vec<Rejected>) {
    // A quote that stands as it is in one part needs no folded copy of the whole turn: an
    // offline judge's quotes always do, and the copy is the cost on a long log.
    let mut folded: Option<String> = None;
    let mut found = |q: &str| {
        parts.iter().any(|p| p.contains(q))
            || folded
                .get_or_insert_with(|| squash(&parts.join("\n")))
                .contains(&squash(q))
    };
    let mut kept = Quotes::default();
    let mut rejected = Vec::new();
    for d in Dim::ALL {
        let s = scores.get(d);
        let q = quotes.get(d);
        if s == 0 {
            continue;
        }
        let reason = match q {
            None => Some("no quote given for a non-zero score".to_string()),
            Some(q) if squash(q).is_empty() => Some("empty quote".to_string()),
            Some(q) if !found(q) => Some("the quote is not in this turn".to_string()),
            Some(_) => None,
        };
        match reason {
            Some(r) if required => {
                rejected.push(Rejected {
                    dim: d,
                    score: s,
                    quote: q.map(str::to_string),
                    reason: r,
                });
                scores.set(d, 0);
            }
            _ => kept.set(d, q.map(str::to_string)),
        }
    }
    (kept, rejected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fabricated_quotes_zero_the_score() {
        let corpus = "We will check that the\n   scheme is https before downloading.";
        let mut s = Scores {
            tr: 2,
            di: 2,
            vr: 1,
            sa: 0,
        };
        let q = Quotes {
            tr: Some("attackers can reach 169.254.169.254".into()),
            di: Some("check that the scheme is https".into()),
            vr: None,
            sa: Some("ignored: score is 0".into()),
        };
        let (kept, rejected) = verify(&mut s, &q, &[corpus], true);
        assert_eq!(
            s,
            Scores {
                tr: 0,
                di: 2,
                vr: 0,
                sa: 0
            }
        );
        assert_eq!(kept.di.as_deref(), Some("check that the scheme is https"));
        assert_eq!(rejected.len(), 2);
        assert_eq!(rejected[0].dim, Dim::Tr);
        assert_eq!(rejected[1].reason, "no quote given for a non-zero score");
        // --no-quotes: a draft that keeps scores
        let mut s = Scores {
            tr: 2,
            di: 0,
            vr: 0,
            sa: 0,
        };
        let (_, rejected) = verify(&mut s, &Quotes::default(), &[corpus], false);
        assert!(rejected.is_empty());
        assert_eq!(s.tr, 2);
    }
}
