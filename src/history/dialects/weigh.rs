//! What the dialects' claims change about who made each write (docs/dialects.md#how-claims-are-used):
//! a pure rule over plain data. Line-level claims about the anchored lines decide; a commit's
//! trailers never do (they say an agent helped, not which lines it wrote). A claim carried over
//! from a note a squash or rebase left behind, by matching line texts, decides only when the
//! write has no record of its own and the match is of high confidence.

use std::collections::HashSet;

use serde::Serialize;

use super::{Author, Claim, Confidence, Evidence};
use crate::git::Oid;
use crate::i18n::Tr;

/// A write as the rule sees it: its commit, the anchored file's path there, the lines of the
/// anchored code in it (empty when the defect is absent), and whose the write is so far.
#[derive(Debug, Clone)]
pub(crate) struct WriteFacts<'a> {
    pub commit: Oid,
    pub path: &'a str,
    pub anchored: Vec<u32>,
    pub agent: bool,
    pub changed: bool,
}

/// What the claims say of one write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Decision {
    /// 1-based, as reports number writes.
    pub write: usize,
    /// Whose the write is after the claims (`None`: they do not decide).
    pub agent: Option<bool>,
    /// Whether that changes what the commit's author, committer and trailers said.
    pub changed: bool,
    pub why: Why,
    /// Indexes into the evidence's claims that were weighed.
    #[serde(skip)]
    pub claims: Vec<usize>,
}

/// Why the claims decided whose a write is, or did not: a typed reason, worded when shown —
/// in the report's language for people, in English in JSON (`why` stays a string there).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Why {
    pub said: Said,
    /// The session's edits, matched by content too, tie the write to this turn.
    pub session: Option<(u32, crate::history::attribution::MappedBy)>,
}

/// What the claims said; `sources` lists the records, as their dialects name them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Said {
    /// The claims name no author.
    Unknown,
    /// The anchored lines are the agent's.
    Agent { sources: String },
    /// A person's, or a person's edit on the agent's lines.
    Person { sources: String },
    /// Claims conflict; those naming the edit say the agent's.
    TracedAgent { sources: String },
    /// Claims conflict; those naming the edit say a person's.
    TracedPerson { sources: String },
    /// Claims conflict and none is more specific: the commit's authorship stands.
    Conflict { agent: String, person: String },
    /// Only a match by content with notes on rewritten commits, too weak to decide.
    Weak {
        confidence: &'static str,
        sources: String,
    },
    /// Matched by content with high confidence, then what those claims said.
    Matched(Box<Said>),
}

impl Said {
    fn shown(&self, tr: &Tr) -> String {
        match self {
            Said::Unknown => tr.t("why.unknown"),
            Said::Agent { sources } => tr.tf("why.agent", &[("sources", sources)]),
            Said::Person { sources } => tr.tf("why.person", &[("sources", sources)]),
            Said::TracedAgent { sources } => tr.tf("why.traced_agent", &[("sources", sources)]),
            Said::TracedPerson { sources } => tr.tf("why.traced_person", &[("sources", sources)]),
            Said::Conflict { agent, person } => {
                tr.tf("why.conflict", &[("agent", agent), ("person", person)])
            }
            Said::Weak {
                confidence,
                sources,
            } => tr.tf(
                "why.weak",
                &[("confidence", &confidence), ("sources", sources)],
            ),
            Said::Matched(inner) => tr.tf("why.matched", &[("why", &inner.shown(tr))]),
        }
    }
}

impl Why {
    /// In `tr`'s language.
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        let mut s = self.said.shown(tr);
        if let Some((turn, by)) = self.session {
            s.push_str(&tr.tf("why.session", &[("turn", &turn), ("by", &by.as_str())]));
        }
        s
    }

    /// In English, as documents keep it.
    pub(crate) fn english(&self) -> String {
        self.shown(Tr::english())
    }

    fn said(said: Said) -> Why {
        Why {
            said,
            session: None,
        }
    }
}

impl std::fmt::Display for Why {
    /// English: what documents hold.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.english())
    }
}

impl Serialize for Why {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.english())
    }
}

/// Whose the anchored lines of a write are, per the line-level claims about them.
fn verdict(claims: &[(usize, &Claim)]) -> (Option<bool>, Said) {
    let says = |pred: fn(Author) -> bool| claims.iter().filter(|(_, c)| pred(c.author)).count();
    let agent = says(|a| a == Author::Agent);
    let human = says(|a| matches!(a, Author::Human | Author::AgentModified));
    let sources = |pred: fn(Author) -> bool| {
        claims
            .iter()
            .filter(|(_, c)| pred(c.author))
            .map(|(_, c)| c.source.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let agents = || sources(|a| a == Author::Agent);
    let people = || sources(|a| matches!(a, Author::Human | Author::AgentModified));
    match (agent, human) {
        (0, 0) => (None, Said::Unknown),
        (_, 0) => (Some(true), Said::Agent { sources: agents() }),
        (0, _) => (Some(false), Said::Person { sources: people() }),
        _ => {
            // Records that name the edit that made the lines are the most specific: they win
            // over records that do not, and agree or leave the question open among themselves.
            let traced: Vec<&(usize, &Claim)> =
                claims.iter().filter(|(_, c)| c.trace.is_some()).collect();
            let t_agent = traced
                .iter()
                .filter(|(_, c)| c.author == Author::Agent)
                .count();
            let t_human = traced.len() - t_agent;
            match (t_agent, t_human) {
                (a, 0) if a > 0 => (Some(true), Said::TracedAgent { sources: agents() }),
                (0, h) if h > 0 => (Some(false), Said::TracedPerson { sources: people() }),
                _ => (
                    None,
                    Said::Conflict {
                        agent: agents(),
                        person: people(),
                    },
                ),
            }
        }
    }
}

/// The claims on a write's commit about its anchored lines (or the whole file), with their
/// indexes in the evidence.
fn about<'e>(w: &WriteFacts, ev: &'e Evidence) -> Vec<(usize, &'e Claim)> {
    ev.claims
        .iter()
        .enumerate()
        .filter(|(_, c)| c.commit == w.commit)
        .filter(|(_, c)| c.path.as_deref() == Some(w.path))
        .filter(|(_, c)| {
            c.lines.is_empty()
                || w.anchored
                    .iter()
                    .any(|&l| c.lines.iter().any(|r| r.contains(l)))
        })
        .collect()
}

/// Whether a record on the write's own commit speaks of its anchored lines: then no claim
/// needs to be carried over from elsewhere. A record that covers them without claiming them
/// (whogitit's `Original`: there before the commit's session) speaks of them too: it says the
/// commit's session did not write them, which no note on another commit can overrule.
pub(crate) fn has_own_claims(w: &WriteFacts, ev: &Evidence) -> bool {
    about(w, ev).iter().any(|(_, c)| c.matched.is_none())
        || ev.covered.iter().any(|c| {
            c.commit == w.commit
                && c.path == w.path
                && w.anchored
                    .iter()
                    .any(|&l| c.lines.iter().any(|r| r.contains(l)))
        })
}

/// The rule: for each write that changed the anchored file and holds the anchored code, the
/// line-level claims about those lines at that commit decide whose the write is. Records on
/// the commit itself come first; claims matched by content count only without them, and only
/// those of high confidence.
pub(crate) fn weigh(writes: &[WriteFacts], ev: &Evidence) -> Vec<Decision> {
    let mut out = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        if !w.changed || w.anchored.is_empty() {
            continue;
        }
        let about = about(w, ev);
        if about.is_empty() {
            continue;
        }
        let (own, carried): (Vec<_>, Vec<_>) =
            about.into_iter().partition(|(_, c)| c.matched.is_none());
        let (agent, said, used) = if own.is_empty() {
            weigh_carried(carried)
        } else {
            let (agent, said) = verdict(&own);
            (agent, said, own)
        };
        let why = Why::said(said);
        out.push(Decision {
            write: i + 1,
            agent,
            changed: agent.is_some_and(|a| a != w.agent),
            why,
            claims: used.iter().map(|(k, _)| *k).collect(),
        });
    }
    out
}

/// The verdict of claims matched by content: the high-confidence ones decide as records on
/// the commit would; weaker ones are only shown.
fn weigh_carried(carried: Vec<(usize, &Claim)>) -> (Option<bool>, Said, Vec<(usize, &Claim)>) {
    let confidence = |c: &Claim| c.matched.map(|m| m.confidence);
    let (strong, weak): (Vec<_>, Vec<_>) = carried
        .into_iter()
        .partition(|(_, c)| confidence(c) == Some(Confidence::High));
    if strong.is_empty() {
        let best = weak
            .iter()
            .filter_map(|(_, c)| confidence(c))
            .max()
            .unwrap_or(Confidence::Low);
        let sources: Vec<&str> = weak.iter().map(|(_, c)| c.source.as_str()).collect();
        let said = Said::Weak {
            confidence: best.name(),
            sources: sources.join("; "),
        };
        return (None, said, weak);
    }
    let (agent, said) = verdict(&strong);
    (agent, Said::Matched(Box::new(said)), strong)
}

/// A line too plain to tell one author's from another's: under four characters once white
/// space is dropped (`end`, `fi`, blank), or without a letter or digit (`});`, `*/ }`). Such
/// lines stand in every file, so their matching says nothing.
pub(crate) fn is_trivial(line: &str) -> bool {
    let mut seen = 0;
    let mut word = false;
    for ch in line.chars().filter(|c| !c.is_whitespace()) {
        seen += 1;
        word |= ch.is_alphanumeric();
    }
    seen < 4 || !word
}

/// The anchored lines (number, text) that are not trivial and stand, white space at either
/// end aside, among the lines a record claims.
pub(crate) fn content_hits(anchored: &[(u32, &str)], claimed: &[&str]) -> Vec<u32> {
    let claimed: HashSet<&str> = claimed.iter().map(|l| l.trim()).collect();
    anchored
        .iter()
        .filter(|(_, text)| !is_trivial(text) && claimed.contains(text.trim()))
        .map(|(n, _)| *n)
        .collect()
}

/// How many anchored lines could match at all: the ones that are not trivial.
pub(crate) fn matchable(anchored: &[(u32, &str)]) -> u32 {
    anchored.iter().filter(|(_, t)| !is_trivial(t)).count() as u32
}

/// How far `matched` of `of` matchable anchored lines can be trusted: high at 90% or more
/// and at least two lines (one line matches too easily by chance), medium at half or more.
pub(crate) fn confidence(matched: u32, of: u32) -> Confidence {
    if of > 0 && matched * 10 >= of * 9 && matched >= 2 {
        Confidence::High
    } else if of > 0 && matched * 2 >= of {
        Confidence::Medium
    } else {
        Confidence::Low
    }
}

/// The lines of `text` that hold the anchored code: each line where a fragment's first
/// non-blank line occurs (white space ignored, as the matcher does) and the fragment's other
/// lines after it, or the lines a pattern's matches span.
pub(crate) fn anchored_lines(text: &str, fragments: &[String], pattern: Option<&str>) -> Vec<u32> {
    let mut out = Vec::new();
    if let Some(p) = pattern {
        if let Ok(re) = regex::Regex::new(p) {
            for m in re.find_iter(text) {
                let first = text[..m.start()].matches('\n').count() as u32 + 1;
                let last = first + m.as_str().matches('\n').count() as u32;
                out.extend(first..=last);
            }
        }
    } else {
        let squash = |s: &str| s.split_whitespace().collect::<String>();
        let lines: Vec<String> = text.lines().map(squash).collect();
        for f in fragments {
            let want: Vec<String> = f.lines().map(squash).filter(|l| !l.is_empty()).collect();
            let Some(head) = want.first() else { continue };
            for (i, l) in lines.iter().enumerate() {
                if l.contains(head.as_str()) {
                    out.extend((i as u32 + 1)..=(i + want.len()) as u32);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// For an anchor that named whole lines of the tip's file: the lines of `text` equal to them
/// (white space aside), not merely containing them; where the text is in several places, the
/// place nearest the line the tip had it on (`tip_line`).
pub(crate) fn lines_equal_to(text: &str, fragments: &[String], tip_line: Option<u32>) -> Vec<u32> {
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let lines: Vec<String> = text.lines().map(squash).collect();
    let mut out = Vec::new();
    for f in fragments {
        let want: Vec<String> = f.lines().map(squash).collect();
        if want.is_empty() || want.len() > lines.len() {
            continue;
        }
        let starts: Vec<usize> = (0..=lines.len() - want.len())
            .filter(|&i| lines[i..i + want.len()] == want[..])
            .collect();
        let near = |i: &usize| (*i as i64 + 1 - i64::from(tip_line.unwrap_or(1))).abs();
        if let Some(i) = starts.iter().min_by_key(|i| near(i)) {
            out.extend((*i as u32 + 1)..=(*i + want.len()) as u32);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Dialect, Lines};
    use super::*;

    fn oid(n: u8) -> Oid {
        Oid::from_hex(&format!("{n:02x}").repeat(20)).unwrap()
    }

    fn claim(
        dialect: Dialect,
        commit: Oid,
        author: Author,
        lines: (u32, u32),
        trace: bool,
    ) -> Claim {
        Claim {
            dialect,
            commit,
            path: Some("app.py".into()),
            lines: vec![Lines {
                start: lines.0,
                end: lines.1,
            }],
            author,
            agent: None,
            model: None,
            session: None,
            transcript: None,
            trace: trace.then(|| "t_1".into()),
            content_hash: None,
            source: format!("{} note", dialect.name()),
            matched: None,
        }
    }

    fn write(commit: Oid, anchored: Vec<u32>, agent: bool) -> WriteFacts<'static> {
        WriteFacts {
            commit,
            path: "app.py",
            anchored,
            agent,
            changed: true,
        }
    }

    #[test]
    fn line_claims_about_the_anchored_lines_decide_and_trailers_do_not() {
        let (a, b) = (oid(1), oid(2));
        let mut ev = Evidence::default();
        // A person's commit whose anchored lines git-ai says the agent wrote (a squash of the
        // agent's work); an agent's commit whose anchored lines whogitit says a person edited.
        ev.claims
            .push(claim(Dialect::GitAi, a, Author::Agent, (10, 14), true));
        ev.claims.push(claim(
            Dialect::Whogitit,
            b,
            Author::AgentModified,
            (3, 3),
            true,
        ));
        // Lines elsewhere, and a trailer, say nothing about the anchored code.
        ev.claims
            .push(claim(Dialect::GitAi, b, Author::Agent, (40, 50), true));
        let mut t = claim(Dialect::GitAi, b, Author::Agent, (1, 1), false);
        t.path = None;
        t.lines.clear();
        ev.claims.push(t);
        let d = weigh(&[write(a, vec![12], false), write(b, vec![3], true)], &ev);
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].write, d[0].agent, d[0].changed),
            (1, Some(true), true)
        );
        assert_eq!(
            (d[1].write, d[1].agent, d[1].changed),
            (2, Some(false), true)
        );
        assert_eq!(d[1].claims, [1]);
        // No claim about the anchored lines: nothing decided.
        assert!(weigh(&[write(b, vec![20], true)], &ev).is_empty());
    }

    #[test]
    fn conflicting_claims_are_settled_by_the_one_naming_the_edit_or_left_open() {
        let a = oid(3);
        let mut ev = Evidence::default();
        ev.claims
            .push(claim(Dialect::GitAi, a, Author::Agent, (1, 5), true));
        ev.claims
            .push(claim(Dialect::AgentBlame, a, Author::Human, (1, 5), false));
        let d = weigh(&[write(a, vec![2], false)], &ev);
        assert_eq!(d[0].agent, Some(true), "{}", d[0].why);
        ev.claims[0].trace = None;
        let d = weigh(&[write(a, vec![2], false)], &ev);
        assert_eq!(d[0].agent, None);
        assert!(d[0].why.english().contains("conflict"), "{}", d[0].why);
    }

    /// A claim carried over from a rewritten commit's note, matched `matched` of `of`.
    fn carried(commit: Oid, author: Author, matched: u32, of: u32) -> Claim {
        let mut c = claim(Dialect::GitAi, commit, author, (10, 14), true);
        c.source = format!(
            "git-ai note on 0a0a0a0 (not in the branch: rewritten by a squash or rebase?), matched by content: {matched} of {of} anchored lines"
        );
        c.matched = Some(super::super::Matched {
            by: super::super::MatchedBy::Content,
            of,
            matched,
            confidence: confidence(matched, of),
        });
        c
    }

    #[test]
    fn plain_lines_never_match_and_confidence_needs_most_lines_and_two() {
        for plain in [
            "", "   ", "}", "});", "*/ }", "end", "fi", "x = 1", "-- ----", "]]]]",
        ] {
            assert!(is_trivial(plain), "{plain:?}");
        }
        for code in ["return x", "raise ValueError(url)", "if x {"] {
            assert!(!is_trivial(code), "{code:?}");
        }
        let anchored = [
            (5, "    if not url.startswith(\"https://\"):"),
            (6, "        raise ValueError(url)"),
            (7, "    }"),
            (8, "    return get(url)"),
        ];
        let claimed = [
            "if not url.startswith(\"https://\"):",
            "\traise ValueError(url)  ",
            "}",
            "return get(url) # no",
        ];
        // White space at either end is not a difference; a closing brace is no evidence.
        assert_eq!(content_hits(&anchored, &claimed), [5, 6]);
        assert_eq!(matchable(&anchored), 3);
        let c = |m, of| confidence(m, of);
        assert_eq!(
            [
                c(2, 2),
                c(9, 10),
                c(5, 5),
                c(1, 1),
                c(8, 10),
                c(1, 2),
                c(4, 10),
                c(0, 3),
                c(0, 0)
            ],
            [
                Confidence::High,
                Confidence::High,
                Confidence::High,
                // One line matches too easily by chance, however alone it stands.
                Confidence::Medium,
                Confidence::Medium,
                Confidence::Medium,
                Confidence::Low,
                Confidence::Low,
                Confidence::Low,
            ]
        );
    }

    #[test]
    fn a_content_match_decides_only_when_strong_and_only_without_a_record_of_the_write() {
        let (a, b) = (oid(4), oid(5));
        let mut ev = Evidence::default();
        // A person's squash whose anchored lines match a rewritten commit's agent lines.
        ev.claims.push(carried(a, Author::Agent, 5, 5));
        let w = write(a, vec![12], false);
        assert!(!has_own_claims(&w, &ev));
        let d = weigh(std::slice::from_ref(&w), &ev);
        assert_eq!((d[0].agent, d[0].changed), (Some(true), true));
        assert!(
            d[0].why.english().starts_with("matched by content"),
            "{}",
            d[0].why
        );
        assert!(
            d[0].why.english().contains("high confidence"),
            "{}",
            d[0].why
        );
        // Half the lines: shown, never deciding.
        ev.claims[0] = carried(a, Author::Agent, 1, 2);
        let d = weigh(std::slice::from_ref(&w), &ev);
        assert_eq!((d[0].agent, d[0].changed), (None, false));
        assert!(
            d[0].why
                .english()
                .contains("medium confidence, too weak to decide"),
            "{}",
            d[0].why
        );
        // A record on the write itself outranks any match: here it says a person.
        ev.claims[0] = carried(a, Author::Agent, 5, 5);
        ev.claims
            .push(claim(Dialect::Whogitit, a, Author::Human, (12, 12), false));
        assert!(has_own_claims(&w, &ev));
        let d = weigh(std::slice::from_ref(&w), &ev);
        assert_eq!(d[0].agent, Some(false));
        assert_eq!(d[0].claims, [1]);
        // Strong matches that disagree leave the commit's authorship standing.
        let mut ev = Evidence::default();
        ev.claims.push(carried(b, Author::Agent, 3, 3));
        let mut human = carried(b, Author::Human, 3, 3);
        human.trace = None;
        ev.claims.push(human);
        ev.claims[0].trace = None;
        let d = weigh(&[write(b, vec![10], true)], &ev);
        assert_eq!(d[0].agent, None, "{}", d[0].why);
    }

    #[test]
    fn whole_lines_are_matched_whole_and_nearest_the_tips() {
        let text = "/**\n * a\n */\nself.edits.push(e);\nself.edits\n/**\n";
        let f = |s: &str| vec![s.to_string()];
        assert_eq!(lines_equal_to(text, &f("self.edits"), Some(5)), [5]);
        assert_eq!(lines_equal_to(text, &f("/**"), Some(6)), [6]);
        assert_eq!(lines_equal_to(text, &f("/**"), Some(2)), [1]);
        assert_eq!(lines_equal_to(text, &f(" * a\n */"), None), [2, 3]);
        assert_eq!(lines_equal_to(text, &f("nowhere"), None), Vec::<u32>::new());
    }

    #[test]
    fn the_anchored_lines_of_a_file() {
        let text = "import os\n\ndef f(url):\n    if url.startswith('https://'):\n        return get(url)\n";
        assert_eq!(
            anchored_lines(
                text,
                &["if url.startswith('https://'):\n    return get(url)".into()],
                None
            ),
            [4, 5]
        );
        assert_eq!(anchored_lines(text, &[], Some(r"get\(url\)")), [5]);
        assert!(anchored_lines(text, &["nowhere()".into()], None).is_empty());
    }

    /// A decision's reason reads as it always did in English, and in the report's language
    /// when shown.
    #[test]
    fn a_decisions_reason_is_worded_when_shown() {
        let why = Why {
            said: Said::Matched(Box::new(Said::Agent {
                sources: "git-ai".into(),
            })),
            session: Some((4, crate::history::attribution::MappedBy::Replay)),
        };
        assert_eq!(
            why.english(),
            "matched by content to notes left on rewritten commits, high confidence: the anchored lines are the agent's (git-ai); the session's edits match too: turn 4 made the write (mapped by replay)"
        );
        let ru = Tr::load(crate::lang::Lang::Ru, None).unwrap();
        assert!(
            why.shown(&ru)
                .contains("привязанные строки принадлежат агенту (git-ai)")
        );
        assert_eq!(
            serde_json::to_value(&why).unwrap(),
            serde_json::Value::String(why.english())
        );
    }
}
