//! What the note-based readers share: walking another tool's notes refs for the commits of a
//! range, preferring the first ref that has a note on a commit, never loading a note over the
//! size cap, and counting the notes on commits outside the range into one skipped record.

use std::collections::{HashMap, HashSet};

use super::{Dialect, Evidence};
use crate::error::Result;
use crate::git::{NoteText, Oid, Repo};

/// The most bytes a reader loads from one note. Real notes reach a few MB when a transcript
/// is inlined (git-ai's old `messages`, whogitit's per-line content); past this, the note is
/// skipped rather than read.
pub(super) const NOTE_CAP: u64 = 8 << 20;

/// One note to parse: where it was read, and its bytes.
pub(super) struct Note {
    pub commit: Oid,
    pub bytes: Vec<u8>,
    source: String,
}

impl Note {
    /// `git-ai note on 3f2a9c1`, with the ref when it was not the dialect's own
    /// (`… (refs/notes/ai-remote/origin)`): what claims and skipped records cite.
    pub(super) fn source(&self) -> &str {
        &self.source
    }
}

/// Calls `read` for the note on each commit of `commits` (in that order, each commit once),
/// taking it from the first of `refs` that has one. Notes over `cap` bytes, or whose blob is
/// missing, are skipped with the reason; notes on commits outside `commits` are counted into
/// one skipped record. Only a git error is an `Err`.
pub(super) fn each_note(
    repo: &Repo,
    commits: &[Oid],
    dialect: Dialect,
    refs: &[String],
    cap: u64,
    ev: &mut Evidence,
    mut read: impl FnMut(&Note, &mut Evidence),
) -> Result<()> {
    let wanted: HashSet<Oid> = commits.iter().copied().collect();
    let mut found: HashMap<Oid, (usize, Oid)> = HashMap::new();
    let mut outside: HashSet<Oid> = HashSet::new();
    let mut outside_refs: Vec<&str> = Vec::new();
    for (i, notes_ref) in refs.iter().enumerate() {
        let mut here = false;
        for (commit, blob) in repo.foreign_notes(notes_ref)? {
            if wanted.contains(&commit) {
                found.entry(commit).or_insert((i, blob));
            } else if outside.insert(commit) {
                here = true;
            }
        }
        if here {
            outside_refs.push(notes_ref);
        }
    }
    let mut done: HashSet<Oid> = HashSet::new();
    for &commit in commits {
        let Some(&(i, blob)) = found.get(&commit) else {
            continue;
        };
        if !done.insert(commit) {
            continue;
        }
        let notes_ref = refs[i].as_str();
        let mut source = format!("{} note on {}", dialect.name(), commit.short());
        if i > 0 {
            source.push_str(&format!(" ({notes_ref})"));
        }
        match repo.foreign_note_text(blob, cap)? {
            NoteText::Bytes(bytes) => read(
                &Note {
                    commit,
                    bytes,
                    source,
                },
                ev,
            ),
            NoteText::TooLarge(size) => ev.skip(
                dialect,
                source,
                format!(
                    "the note is {}, over the {} a note may take; not read",
                    bytes(size),
                    bytes(cap)
                ),
            ),
            NoteText::Missing => ev.skip(
                dialect,
                source,
                format!("{notes_ref} names a note blob the repository does not have"),
            ),
        }
    }
    if !outside.is_empty() {
        let n = outside.len();
        ev.skip(
            dialect,
            outside_refs.join(", "),
            format!(
                "{n} note{} on commits outside the range",
                if n == 1 { "" } else { "s" }
            ),
        );
    }
    Ok(())
}

/// `3.2 MB`, `812 bytes`: a size for a skipped record.
fn bytes(n: u64) -> String {
    if n < 1 << 20 {
        format!("{n} bytes")
    } else {
        format!("{:.1} MiB", n as f64 / f64::from(1 << 20))
    }
}

/// Ranges as a dialect gave them, sorted and with overlapping or touching ones joined
/// (AgentBlame v3 writes `31-33,79,15` and repeats lines).
pub(super) fn normalise(mut lines: Vec<super::Lines>) -> Vec<super::Lines> {
    lines.sort_by_key(|l| (l.start, l.end));
    let mut out: Vec<super::Lines> = Vec::with_capacity(lines.len());
    for l in lines {
        match out.last_mut() {
            Some(last) if l.start <= last.end.saturating_add(1) => last.end = last.end.max(l.end),
            _ => out.push(l),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Lines;
    use super::*;

    #[test]
    fn ranges_sorted_and_joined() {
        let l = |start, end| Lines { start, end };
        assert_eq!(
            normalise(vec![l(31, 33), l(79, 79), l(15, 15)]),
            [l(15, 15), l(31, 33), l(79, 79)]
        );
        assert_eq!(
            normalise(vec![l(52, 52), l(54, 63), l(53, 53), l(52, 52), l(65, 65)]),
            [l(52, 63), l(65, 65)]
        );
        assert_eq!(normalise(vec![]), []);
    }

    #[test]
    fn sizes_read_plainly() {
        assert_eq!(bytes(812), "812 bytes");
        assert_eq!(bytes(8 << 20), "8.0 MiB");
    }
}
