//! Quote anchoring (docs/method.md#quotes): a non-zero score stands only on a verbatim quote from
//! the turn being scored — its text, reasoning, tool arguments or diffs, as the judge saw them.

use super::scores::{Dim, Quotes, Rejected, Scores};

/// Collapses runs of whitespace to one space and trims. Between two characters of a script
/// written without spaces (Chinese), a run of whitespace is a line break inside a sentence,
/// not a space between words, and goes: a quote of a wrapped Chinese sentence, copied on one
/// line, is still the sentence. Punctuation, full-width or not, is left as it is.
pub(crate) fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        let joined = out.chars().next_back().is_some_and(spaceless)
            && word.chars().next().is_some_and(spaceless);
        if !out.is_empty() && !joined {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A character of a script or of punctuation that Chinese writes without spaces around it:
/// Han, kana, and the CJK and full-width punctuation (`，`, `。`, `：`, `（`).
fn spaceless(c: char) -> bool {
    crate::lang::is_han(c)
        || matches!(c, '\u{3000}'..='\u{30FF}' | '\u{FF00}'..='\u{FF65}' | '\u{FE30}'..='\u{FE4F}')
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
                // A rejected quote is stored and shown: what a judge made up may hold a
                // secret the turn's redacted text no longer has.
                rejected.push(Rejected {
                    dim: d,
                    score: s,
                    quote: q.map(|q| crate::redact::redact(q).0),
                    reason: r,
                });
                scores.set(d, 0);
            }
            _ => kept.set(d, q.map(|q| crate::redact::redact(q).0)),
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

    #[test]
    fn chinese_and_russian_quotes_survive_line_breaks_and_keep_their_punctuation() {
        // A Chinese sentence wrapped inside a log has no space at the break; the quote does not
        // either, or has one where the judge's answer put it.
        let corpus = "预览下载器会抓取卖家提供的\n任意 URL。计划：下载前先检查协议是否为 https，\n并添加一个测试。";
        let zh = |q: &str| {
            let mut s = Scores {
                tr: 2,
                di: 0,
                vr: 0,
                sa: 0,
            };
            let q = Quotes {
                tr: Some(q.into()),
                ..Quotes::default()
            };
            verify(&mut s, &q, &[corpus], true).1.is_empty()
        };
        assert!(zh("预览下载器会抓取卖家提供的任意 URL。"));
        assert!(zh("检查协议是否为 https，并添加一个测试。"));
        assert!(zh("检查协议是否为 https， 并添加一个测试。"));
        // Full-width punctuation is the text: an ASCII comma is another quote.
        assert!(!zh("检查协议是否为 https,并添加一个测试。"));
        // Words are still words: a space between Latin or Cyrillic words never disappears.
        assert_eq!(squash("任意 URL"), "任意 URL");
        assert_eq!(squash("Проверим,\n что  схема"), "Проверим, что схема");
        assert_eq!(
            squash("抓取\n　卖家"),
            "抓取卖家",
            "an ideographic space too"
        );
        let ru = "План: перед загрузкой\nпроверим, что схема — https.";
        let mut s = Scores {
            tr: 0,
            di: 2,
            vr: 0,
            sa: 0,
        };
        let q = Quotes {
            di: Some("перед загрузкой проверим, что схема — https.".into()),
            ..Quotes::default()
        };
        assert!(verify(&mut s, &q, &[ru], true).1.is_empty());
        assert_eq!(s.di, 2);
    }
}
