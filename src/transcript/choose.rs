//! Which of the sessions found for a range is the one behind the anchored code
//! (docs/session-format.md#which-session): chosen by evidence read from each session's own
//! edits, with the reason said and the others listed with why not.

use crate::error::Result;
use crate::git::Oid;
use crate::i18n::Tr;

use super::Transcript;
use super::discover::Found;
use super::mapping;

/// What the choice is asked about: the range's facts, as plain values.
pub(crate) struct Question<'a> {
    /// The commit that introduced the anchored code, when provenance found it.
    pub introducing: Option<Oid>,
    /// The anchored file's paths through the range (renames) and at the tip.
    pub paths: Vec<String>,
    /// The anchored file as the reasons name it.
    pub file: &'a str,
    /// Named with `--session`: a session that cannot be read is an error, not a note.
    pub named: bool,
    /// Whether a text holds the anchored code (`None`: a missing defence, no code to hold).
    pub holds: Option<&'a dyn Fn(&str) -> bool>,
}

/// The chosen session, why, and the others with why not.
pub(crate) struct Chosen {
    pub found: Found,
    pub transcript: Transcript,
    pub why: Because,
    pub others: Vec<Other>,
}

/// Why a session was chosen: the first criterion that told the sessions apart. Worded when
/// shown; English in JSON (`chosen_because`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Because {
    /// Named with `--session`.
    Named,
    /// The only session found.
    Only,
    /// The only one with an edit that wrote the anchored code.
    WroteCode { file: String },
    /// The introducing commit's own session.
    OwnSession,
    /// The only one whose edits touch the anchored file.
    OnlyTouching { file: String },
    /// Its edits touch the file; the fullest such copy.
    FullestTouching { file: String, turns: usize },
    /// None touches the file; the fullest copy.
    Fullest { file: String, turns: usize },
    /// Read back from a document, shown as written.
    Said(String),
}

impl Because {
    /// In `tr`'s language.
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        match self {
            Because::Named => tr.t("choose.named"),
            Because::Only => tr.t("choose.only"),
            Because::WroteCode { file } => tr.tf("choose.wrote_code", &[("file", file)]),
            Because::OwnSession => tr.t("choose.own"),
            Because::OnlyTouching { file } => tr.tf("choose.only_touching", &[("file", file)]),
            Because::FullestTouching { file, turns } => tr.tf(
                "choose.fullest_touching",
                &[("file", file), ("turns", turns)],
            ),
            Because::Fullest { file, turns } => {
                tr.tf("choose.fullest", &[("file", file), ("turns", turns)])
            }
            Because::Said(s) => s.clone(),
        }
    }

    /// In English, as documents keep it.
    pub(crate) fn english(&self) -> String {
        self.shown(Tr::english())
    }
}

crate::english_in_json!(Because, Because::Said);

/// How far another session's edits went towards the anchored code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edits {
    /// One wrote the anchored code.
    Code,
    /// They edit the anchored file, not the anchored code.
    File,
    /// None edits the anchored file.
    None,
}

/// Another session found, with why it was not chosen. English in JSON (`considered`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Other {
    Found {
        name: String,
        turns: usize,
        edits: Edits,
    },
    /// Read back from a document, shown as written.
    Said(String),
}

impl Other {
    /// In `tr`'s language.
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        match self {
            Other::Found { name, turns, edits } => {
                let what = match edits {
                    Edits::Code => String::new(),
                    Edits::File => tr.t("choose.other_file"),
                    Edits::None => tr.t("choose.other_none"),
                };
                tr.tf(
                    "choose.other",
                    &[("name", name), ("turns", turns), ("what", &what)],
                )
            }
            Other::Said(s) => s.clone(),
        }
    }

    /// In English, as documents keep it.
    pub(crate) fn english(&self) -> String {
        self.shown(Tr::english())
    }
}

crate::english_in_json!(Other, Other::Said);

/// How many discovered sessions are read to choose among them.
const MAX_CANDIDATES: usize = 32;

/// The session to use among those found (docs/session-format.md#which-session), by evidence: one
/// with an edit whose new text holds the anchored code, then the one the introducing commit itself
/// carries, then one whose edits touch the anchored file, then the fullest copy (a checkpoint may
/// hold a partial one, cut before the edit that matters), then discovery order. Returns it, why,
/// and the others with why not. A named session that cannot be read is an error; a discovered one a
/// note.
///
/// `earlier` finds the sessions checkpointed just before the range, asked only when none of
/// `candidates` wrote the anchored code; the notes it gives are kept only when one of its
/// sessions did. Returns the choice and notes on what could not be read or considered.
pub(crate) fn choose(
    q: &Question,
    candidates: Vec<Found>,
    earlier: impl FnOnce() -> Result<(Vec<Found>, Vec<String>)>,
) -> Result<(Option<Chosen>, Vec<String>)> {
    let (intro, paths, named, holds) = (q.introducing, &q.paths, q.named, q.holds);
    let on_file = |p: &str| paths.iter().any(|q| mapping::same_file(p, q));
    let evidence = |t: &Transcript, own: bool| {
        let changes = || t.turns.iter().flat_map(|turn| &turn.file_changes);
        Evidence {
            // A pathless edit (a shell command's text) may be the one that wrote it.
            holds: holds.is_some_and(|h| {
                changes().any(|c| {
                    (c.path.is_empty() || on_file(&c.path)) && h(&mapping::new_text(&c.edit))
                })
            }),
            own,
            touch: changes().any(|c| on_file(&c.path)),
            turns: t.turns.len(),
        }
    };
    let mut read: Vec<(Found, Transcript, Evidence)> = Vec::new();
    let mut notes = Vec::new();
    let mut take = |candidates: Vec<Found>, read: &mut Vec<(Found, Transcript, Evidence)>| {
        let total = candidates.len();
        for f in candidates.into_iter().take(MAX_CANDIDATES) {
            match super::parse(f.input(), None) {
                Ok(t) => {
                    let e = evidence(&t, intro.is_some() && f.commit == intro);
                    read.push((f, t, e));
                }
                Err(e) if named => return Err(e),
                Err(e) => notes.push(format!(
                    "session {} ({}) could not be read: {e}",
                    f.name, f.found_by
                )),
            }
        }
        if total > MAX_CANDIDATES {
            notes.push(format!(
                "{total} sessions found; the first {MAX_CANDIDATES} were considered"
            ));
        }
        Ok(())
    };
    take(candidates, &mut read)?;
    // No session found with the range wrote the anchored code: the one that did may have been
    // checkpointed with a commit just before it.
    if !named && holds.is_some() && !read.iter().any(|r| r.2.holds) {
        let (more, more_notes) = earlier()?;
        let before = read.len();
        take(more, &mut read)?;
        // Only a session that wrote it is worth adding; the rest would be noise.
        if read[before..].iter().any(|r| r.2.holds) {
            notes.extend(more_notes);
        } else {
            read.truncate(before);
        }
    }
    if read.is_empty() {
        return Ok((None, notes));
    }
    let best = (0..read.len())
        .max_by_key(|&i| {
            let e = &read[i].2;
            (e.holds, e.own, e.touch, e.turns, std::cmp::Reverse(i))
        })
        .expect("not empty");
    let (found, t, e) = read.remove(best);
    let file = q.file;
    // Only the first criterion that told the sessions apart is worth saying.
    let file = file.to_string();
    let turns = t.turns.len();
    let why = if named {
        Because::Named
    } else if read.is_empty() {
        Because::Only
    } else if e.holds && read.iter().all(|r| !r.2.holds) {
        Because::WroteCode { file }
    } else if e.own && read.iter().all(|r| r.2.holds != e.holds || !r.2.own) {
        Because::OwnSession
    } else if e.touch
        && read
            .iter()
            .all(|r| r.2.holds != e.holds || r.2.own != e.own || !r.2.touch)
    {
        Because::OnlyTouching { file }
    } else if e.touch {
        Because::FullestTouching { file, turns }
    } else {
        Because::Fullest { file, turns }
    };
    let others = read
        .iter()
        .map(|(f, t, e)| Other::Found {
            name: f.name.clone(),
            turns: t.turns.len(),
            edits: match (e.holds, e.touch) {
                (true, _) => Edits::Code,
                (false, true) => Edits::File,
                (false, false) => Edits::None,
            },
        })
        .collect();
    let chosen = Chosen {
        found,
        transcript: t,
        why,
        others,
    };
    Ok((Some(chosen), notes))
}

/// What a session offers as evidence that it is the one behind the code, strongest first.
struct Evidence {
    holds: bool,
    own: bool,
    touch: bool,
    turns: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

    /// The reasons read as they always did in English, and in the report's language when shown.
    #[test]
    fn reasons_for_a_choice_are_worded_when_shown() {
        let why = Because::FullestTouching {
            file: "app.py".into(),
            turns: 12,
        };
        assert_eq!(
            why.english(),
            "its edits touch app.py; the fullest such copy (12 turns)"
        );
        let other = Other::Found {
            name: "s.jsonl".into(),
            turns: 3,
            edits: Edits::None,
        };
        assert_eq!(
            other.english(),
            "s.jsonl (3 turns, no edit of the anchored file)"
        );
        let zh = Tr::load(Lang::Zh, None).unwrap();
        assert_eq!(Because::Only.shown(&zh), "唯一找到的会话");
        let json = serde_json::to_string(&other).unwrap();
        assert_eq!(
            serde_json::from_str::<Other>(&json).unwrap().english(),
            other.english()
        );
    }
}
