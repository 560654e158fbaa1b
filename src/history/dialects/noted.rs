//! What the note-based readers share: walking another tool's notes refs for the commits of a
//! range, preferring the first ref that has a note on a commit, never loading a note over the
//! size cap, turning a dialect's parse into claims and skipped records, and counting the notes
//! on commits outside the range into one skipped record (keeping them, for [`super::orphans`]).

use std::collections::{HashMap, HashSet};

use super::{Author, Claim, Covered, Dialect, Evidence, Lines};
use crate::error::Result;
use crate::git::{NoteText, Oid, Repo};

/// The most bytes a reader loads from one note. Real notes reach a few MB when a transcript
/// is inlined (git-ai's old `messages`, whogitit's per-line content); past this, the note is
/// skipped rather than read.
pub(super) const NOTE_CAP: u64 = 8 << 20;

/// A note-based dialect: where its notes are, and how one becomes claims.
pub(super) struct NoteReader {
    pub dialect: Dialect,
    /// The refs to read, the dialect's own first: a commit's note is taken from the first ref
    /// that has one.
    pub refs: fn(&Repo) -> Result<Vec<String>>,
    /// One note's claims; `Err` says why none of it could be read.
    pub parse: fn(&Note) -> std::result::Result<NoteClaims, String>,
}

/// What a dialect read from one note.
pub(super) struct NoteClaims {
    pub claims: Vec<Claim>,
    /// Why some of the note was not read (`3 attestation lines not read (first: line 4)`).
    pub partly: Option<String>,
    /// Lines of files the note speaks of without a claim (whogitit's `Original`), by path.
    pub covered: Vec<(String, Vec<Lines>)>,
}

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

    /// A claim of this note about `lines` of `path`, with nothing else known yet: the dialect
    /// fills in what its record names.
    pub(super) fn claim(
        &self,
        dialect: Dialect,
        path: String,
        lines: Vec<Lines>,
        author: Author,
    ) -> Claim {
        Claim {
            dialect,
            commit: self.commit,
            path: Some(path),
            lines,
            author,
            agent: None,
            model: None,
            session: None,
            transcript: None,
            trace: None,
            content_hash: None,
            source: self.source.clone(),
            matched: None,
        }
    }
}

/// A note found in a notes ref, not read yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteAt {
    pub commit: Oid,
    pub blob: Oid,
    pub notes_ref: String,
    /// Whether `notes_ref` is the dialect's own (the first), which sources do not name.
    pub own: bool,
}

/// A dialect's notes on commits outside the range, and the skipped record that counts them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outside {
    pub dialect: Dialect,
    /// Index of the counting record in the evidence's `skipped`.
    pub record: usize,
    pub notes: Vec<NoteAt>,
}

/// `git-ai note on 3f2a9c1`, `whogitit note on 3f2a9c1 (refs/notes/ai-blame)`.
pub(super) fn source(dialect: Dialect, at: &NoteAt) -> String {
    let mut s = format!("{} note on {}", dialect.name(), at.commit.short());
    if !at.own {
        s.push_str(&format!(" ({})", at.notes_ref));
    }
    s
}

/// Reads the note on each commit of `commits` (in that order, each commit once), taking it
/// from the first of the reader's refs that has one. Notes over `cap` bytes, or whose blob is
/// missing, are skipped with the reason; notes on commits outside `commits` are counted into
/// one skipped record and kept in `ev.outside`. Only a git error is an `Err`.
pub(super) fn each_note(
    repo: &Repo,
    commits: &[Oid],
    reader: &NoteReader,
    cap: u64,
    ev: &mut Evidence,
) -> Result<()> {
    let mut refs = (reader.refs)(repo)?;
    // A ref that names a blob, a tree or a tag is said and left alone (walking it would abort).
    refs.retain(|r| match repo.unreadable_notes_ref(r) {
        Ok(None) => true,
        Ok(Some(why)) => {
            ev.skip(reader.dialect, r.clone(), format!("{why}; not read"));
            false
        }
        Err(e) => {
            ev.skip(reader.dialect, r.clone(), format!("{e}; not read"));
            false
        }
    });
    let (found, outside) = list(repo, commits, &refs)?;
    let mut done: HashSet<Oid> = HashSet::new();
    for commit in commits {
        if let Some(at) = found.get(commit)
            && done.insert(*commit)
        {
            read_one(repo, reader, at, source(reader.dialect, at), cap, ev)?;
        }
    }
    if !outside.is_empty() {
        let n = outside.len();
        let mut at: Vec<&str> = Vec::new();
        for note in &outside {
            if !at.contains(&note.notes_ref.as_str()) {
                at.push(&note.notes_ref);
            }
        }
        ev.skip(
            reader.dialect,
            at.join(", "),
            format!("{} on commits outside the range", count(n, "note")),
        );
        ev.outside.push(Outside {
            dialect: reader.dialect,
            record: ev.skipped.len() - 1,
            notes: outside,
        });
    }
    Ok(())
}

/// The notes of `refs` on `commits`, by commit, and those on other commits; for each commit
/// the first ref with a note on it wins.
fn list(
    repo: &Repo,
    commits: &[Oid],
    refs: &[String],
) -> Result<(HashMap<Oid, NoteAt>, Vec<NoteAt>)> {
    let wanted: HashSet<Oid> = commits.iter().copied().collect();
    let mut found: HashMap<Oid, NoteAt> = HashMap::new();
    let mut outside = Vec::new();
    let mut seen_outside: HashSet<Oid> = HashSet::new();
    for (i, notes_ref) in refs.iter().enumerate() {
        for (commit, blob) in repo.foreign_notes(notes_ref)? {
            let at = NoteAt {
                commit,
                blob,
                notes_ref: notes_ref.clone(),
                own: i == 0,
            };
            if wanted.contains(&commit) {
                found.entry(commit).or_insert(at);
            } else if seen_outside.insert(commit) {
                outside.push(at);
            }
        }
    }
    Ok((found, outside))
}

/// Reads one note into `ev`: its claims, or why it (or part of it) could not be read.
pub(super) fn read_one(
    repo: &Repo,
    reader: &NoteReader,
    at: &NoteAt,
    source: String,
    cap: u64,
    ev: &mut Evidence,
) -> Result<()> {
    let dialect = reader.dialect;
    match repo.foreign_note_text(at.blob, cap)? {
        NoteText::Bytes(bytes) => {
            let note = Note {
                commit: at.commit,
                bytes,
                source,
            };
            match (reader.parse)(&note) {
                Ok(parsed) => {
                    if let Some(why) = parsed.partly {
                        ev.skip(dialect, note.source(), why);
                    }
                    ev.claims.extend(parsed.claims);
                    ev.covered
                        .extend(parsed.covered.into_iter().map(|(path, lines)| Covered {
                            commit: at.commit,
                            path,
                            lines,
                        }));
                }
                Err(why) => ev.skip(dialect, note.source(), why),
            }
        }
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
            format!(
                "{} names a note blob the repository does not have",
                at.notes_ref
            ),
        ),
    }
    Ok(())
}

/// `1 note`, `3 attestation lines`: a count with its noun.
pub(super) fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
    fn sizes_and_counts_read_plainly() {
        assert_eq!(bytes(812), "812 bytes");
        assert_eq!(bytes(8 << 20), "8.0 MiB");
        assert_eq!(count(1, "note"), "1 note");
        assert_eq!(count(3, "attestation line"), "3 attestation lines");
    }
}
