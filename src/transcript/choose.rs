//! Which of the sessions found for a range is the one behind the anchored code
//! (docs/session-format.md#which-session): chosen by evidence read from each session's own
//! edits, with the reason said and the others listed with why not.

use crate::error::Result;
use crate::git::Oid;

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
    pub why: String,
    pub others: Vec<String>,
}

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
    let why = if named {
        "named with --session".to_string()
    } else if read.is_empty() {
        "the only session found".to_string()
    } else if e.holds && read.iter().all(|r| !r.2.holds) {
        format!("the only one with an edit that wrote the anchored code in {file}")
    } else if e.own && read.iter().all(|r| r.2.holds != e.holds || !r.2.own) {
        "the introducing commit's own session".to_string()
    } else if e.touch
        && read
            .iter()
            .all(|r| r.2.holds != e.holds || r.2.own != e.own || !r.2.touch)
    {
        format!("the only one whose edits touch {file}")
    } else if e.touch {
        format!(
            "its edits touch {file}; the fullest such copy ({} turns)",
            t.turns.len()
        )
    } else {
        format!(
            "none touches {file}; the fullest copy ({} turns)",
            t.turns.len()
        )
    };
    let others = read
        .iter()
        .map(|(f, t, e)| {
            let what = if e.holds {
                ""
            } else if e.touch {
                ", edits the anchored file but not the anchored code"
            } else {
                ", no edit of the anchored file"
            };
            format!("{} ({} turns{what})", f.name, t.turns.len())
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
