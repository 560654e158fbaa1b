//! What the dialects' claims change about who made each write (docs/dialects.md#how-claims-are-used):
//! a pure rule over plain data. Line-level claims about the anchored lines decide; a commit's
//! trailers never do (they say an agent helped, not which lines it wrote).

use serde::Serialize;

use super::{Author, Claim, Evidence};
use crate::git::Oid;

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
    pub why: String,
    /// Indexes into the evidence's claims that were weighed.
    #[serde(skip)]
    pub claims: Vec<usize>,
}

/// Whose the anchored lines of a write are, per the line-level claims about them.
fn verdict(claims: &[(usize, &Claim)]) -> (Option<bool>, String) {
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
    match (agent, human) {
        (0, 0) => (None, "the claims name no author (unknown)".into()),
        (_, 0) => (
            Some(true),
            format!(
                "the anchored lines are the agent's ({})",
                sources(|a| a == Author::Agent)
            ),
        ),
        (0, _) => (
            Some(false),
            format!(
                "the anchored lines are a person's or a person's edit on the agent's lines ({})",
                sources(|a| matches!(a, Author::Human | Author::AgentModified))
            ),
        ),
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
                (a, 0) if a > 0 => (
                    Some(true),
                    format!(
                        "claims conflict; the ones naming the edit say the agent's ({})",
                        sources(|a| a == Author::Agent)
                    ),
                ),
                (0, h) if h > 0 => (
                    Some(false),
                    format!(
                        "claims conflict; the ones naming the edit say a person's ({})",
                        sources(|a| matches!(a, Author::Human | Author::AgentModified))
                    ),
                ),
                _ => (
                    None,
                    format!(
                        "claims conflict and none is more specific: agent ({}) vs person ({}); the commit's authorship stands",
                        sources(|a| a == Author::Agent),
                        sources(|a| matches!(a, Author::Human | Author::AgentModified))
                    ),
                ),
            }
        }
    }
}

/// The rule: for each write that changed the anchored file and holds the anchored code, the
/// line-level claims about those lines at that commit decide whose the write is.
pub(crate) fn weigh(writes: &[WriteFacts], ev: &Evidence) -> Vec<Decision> {
    let mut out = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        if !w.changed || w.anchored.is_empty() {
            continue;
        }
        let about: Vec<(usize, &Claim)> = ev
            .claims
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
            .collect();
        if about.is_empty() {
            continue;
        }
        let (agent, why) = verdict(&about);
        out.push(Decision {
            write: i + 1,
            agent,
            changed: agent.is_some_and(|a| a != w.agent),
            why,
            claims: about.iter().map(|(k, _)| *k).collect(),
        });
    }
    out
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
        assert!(d[0].why.contains("conflict"), "{}", d[0].why);
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
}
