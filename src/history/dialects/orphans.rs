//! Notes a squash, rebase or amend left behind (docs/dialects.md#squashes-and-rebases): the
//! tools' notes stay on the commits that were rewritten, which the branch no longer reaches,
//! and the commit that replaced them has none. For a write with no record of its own, the
//! claims of those notes are carried over when the lines they claim hold the anchored lines
//! the write itself added or changed, by text; how many matched says how far the claim can be
//! trusted. Notes on commits built on the write (later work, not a rewrite of it) are not.

use std::cmp::Reverse;
use std::collections::HashMap;

use super::noted::{self, NOTE_CAP, NoteAt, NoteReader};
use super::{Author, Claim, Dialect, Evidence, Lines, Matched, MatchedBy, added_lines};
use super::{agentblame, git_ai, weigh, whogitit};
use crate::error::Result;
use crate::git::{CommitInfo, Oid, PathLookup, Repo};
use crate::timing::stage;

/// The most notes on rewritten commits read per dialect, newest commits first: a long-lived
/// repository can hold thousands, and the rewritten commits a branch replaced are recent.
const CAP: usize = 200;

/// What the source of a rewritten commit's note adds: that it is not on the branch, and the
/// likely reason, which git cannot confirm (an abandoned branch looks the same).
const REWRITTEN: &str = "not in the branch: rewritten by a squash or rebase?";

/// The note readers whose notes a rewrite leaves behind.
const READERS: &[&NoteReader] = &[&git_ai::NOTES, &whogitit::NOTES, &agentblame::NOTES];

/// A write with no record of its own about its anchored lines.
pub(crate) struct Unclaimed<'a> {
    pub commit: Oid,
    pub path: &'a str,
    /// The file's path before the write (in its first parent), which a rename changes.
    pub before: &'a str,
    /// The anchored lines, numbered from 1, with their text at the write.
    pub anchored: Vec<(u32, String)>,
}

/// Reads the notes on commits the range's `tip` does not reach, and carries their claims over
/// to `writes` by content, into `ev.claims`. The notes' skipped records join `ev.skipped`, and
/// the record that counted the notes outside the range says what became of them.
pub(crate) fn match_rewritten(
    repo: &Repo,
    tip: Oid,
    writes: &[Unclaimed],
    ev: &mut Evidence,
) -> Result<()> {
    let mut paths: Vec<&str> = writes.iter().map(|w| w.path).collect();
    paths.sort_unstable();
    paths.dedup();
    let left = read_rewritten(repo, tip, &paths, ev)?;
    if left.is_empty() {
        return Ok(());
    }
    let mut texts = Texts {
        repo,
        files: HashMap::new(),
        built_on: HashMap::new(),
    };
    for w in writes {
        // A note speaks of the lines its commit made, and so does a carried claim: only the
        // anchored lines this write added or changed can be a rewritten commit's.
        let written = written(repo, w)?;
        let anchored: Vec<(u32, &str)> = w
            .anchored
            .iter()
            .filter(|(n, _)| written.iter().any(|r| r.contains(*n)))
            .map(|(n, t)| (*n, t.as_str()))
            .collect();
        let carried = carry(&mut texts, w, &anchored, &left)?;
        ev.claims.extend(carried);
    }
    Ok(())
}

/// The lines of the write's version of its file that it added or changed from its first
/// parent's (all of them when it has none).
fn written(repo: &Repo, w: &Unclaimed) -> Result<Vec<Lines>> {
    let text = |tree: Oid, path: &str| -> Result<String> {
        Ok(match repo.file_in_tree(tree, path) {
            Ok(b) => b.map(|b| String::from_utf8_lossy(&b).into_owned()),
            // A partial clone may lack the blob: nothing known of it.
            Err(e) if e.is_missing_object() => None,
            Err(e) => return Err(e),
        }
        .unwrap_or_default())
    };
    let Some(info) = repo.commit_if_present(w.commit)? else {
        return Ok(Vec::new());
    };
    let now = text(info.tree, w.path)?;
    let before = match info.parents.first() {
        Some(p) => match repo.commit_if_present(*p)? {
            Some(parent) => text(parent.tree, w.before)?,
            None => String::new(),
        },
        None => String::new(),
    };
    Ok(added_lines(&before, &now))
}

/// How many notes outside the range were read as rewritten, were rewritten but over the
/// cap, or are on commits the clone lacks.
#[derive(Default)]
struct Tally {
    read: usize,
    unread: usize,
    absent: usize,
    /// On commits built on the tip: later work, not a rewrite of it.
    later: usize,
}

impl Tally {
    /// What the count of notes outside the range adds.
    fn said(&self) -> String {
        let on = |n: usize, one: &str, many: &str| {
            format!(
                "{} on {}",
                noted::count(n, "note"),
                if n == 1 { one } else { many }
            )
        };
        let mut s = String::new();
        if self.read > 0 {
            s.push_str(&format!(
                "; {} the branch no longer has (rewritten by a squash or rebase?), read to match the anchored lines by content",
                on(self.read, "a commit", "commits")
            ));
        }
        if self.later > 0 {
            s.push_str(&format!(
                "; {} built on the tip (later work, not a rewrite of it), not read",
                on(self.later, "a commit", "commits")
            ));
        }
        if self.unread > 0 {
            s.push_str(&format!(
                "; {} the branch no longer has, not read (at most {CAP} are, newest first)",
                on(self.unread, "an older commit", "older commits")
            ));
        }
        if self.absent > 0 {
            s.push_str(&format!(
                "; {} this clone does not have (pruned after a rewrite, or beyond a shallow clone's depth)",
                on(self.absent, "a commit", "commits")
            ));
        }
        s
    }
}

/// The claims about `paths` of the notes on rewritten commits: commits the clone has, that
/// changed one of the paths, that `tip` does not reach and that do not reach `tip`. Notes on
/// its ancestors are old history and stay counted as outside the range; notes on commits built
/// on it (later work on the branch, when the range ends before the branch does) are counted as
/// that.
fn read_rewritten(repo: &Repo, tip: Oid, paths: &[&str], ev: &mut Evidence) -> Result<Vec<Claim>> {
    let mut out = Vec::new();
    for group in std::mem::take(&mut ev.outside) {
        let Some(reader) = READERS.iter().find(|r| r.dialect == group.dialect) else {
            continue;
        };
        let mut tally = Tally::default();
        let mut scratch = Evidence::default();
        let t = stage("rewritten notes: which changed the file");
        let candidates = candidates(repo, &group.notes, paths, &mut tally)?;
        drop(t);
        let t = stage("rewritten notes: which the branch lost");
        let ids: Vec<Oid> = candidates.iter().map(|at| at.commit).collect();
        let lost = repo.unreached(tip, &ids)?;
        drop(t);
        let _t = stage("rewritten notes: reading");
        for at in candidates
            .into_iter()
            .filter(|at| lost.contains(&at.commit))
        {
            if tally.read == CAP {
                tally.unread += 1;
                continue;
            }
            if repo.is_ancestor(tip, at.commit)? {
                tally.later += 1;
                continue;
            }
            tally.read += 1;
            let source = format!("{} ({REWRITTEN})", noted::source(reader.dialect, at));
            noted::read_one(repo, reader, at, source, NOTE_CAP, &mut scratch)?;
        }
        if let Some(record) = ev.skipped.get_mut(group.record) {
            record.why.push_str(&tally.said());
        }
        ev.skipped.append(&mut scratch.skipped);
        out.extend(
            scratch
                .claims
                .into_iter()
                .filter(|c| c.path.as_deref().is_some_and(|p| paths.contains(&p))),
        );
    }
    Ok(out)
}

/// The notes whose commit the clone has and changed one of `paths`, newest commit first.
fn candidates<'n>(
    repo: &Repo,
    notes: &'n [NoteAt],
    paths: &[&str],
    tally: &mut Tally,
) -> Result<Vec<&'n NoteAt>> {
    let mut found = Vec::new();
    // One lookup per path for all the commits: each remembers the subtrees it resolved.
    let mut looks: Vec<PathLookup> = paths.iter().map(|p| PathLookup::new(p)).collect();
    for at in notes {
        match repo.commit_if_present(at.commit)? {
            None => tally.absent += 1,
            Some(info) if changes(repo, &info, &mut looks)? => found.push((info.time, at)),
            Some(_) => {}
        }
    }
    found.sort_by_key(|(time, _)| Reverse(*time));
    Ok(found.into_iter().map(|(_, at)| at).collect())
}

/// Whether a commit changed one of `paths` from its first parent: a note speaks of the lines
/// its commit made, so a commit that left the file alone has nothing to say about it.
fn changes(repo: &Repo, info: &CommitInfo, looks: &mut [PathLookup]) -> Result<bool> {
    let parent_tree = match info.parents.first() {
        Some(p) => repo.commit_if_present(*p)?.map(|c| c.tree),
        None => None,
    };
    for look in looks {
        let now = repo.blob_at(look, info.tree)?;
        let before = match parent_tree {
            Some(t) => repo.blob_at(look, t)?,
            None => None,
        };
        if now.is_some() && now != before {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The claims carried over to one write: per dialect and author, the `anchored` lines (those
/// the write added or changed) that the claims' lines hold. Claims on commits built on the
/// write are never carried: a rewrite of a commit does not have it in its history.
fn carry(
    texts: &mut Texts,
    w: &Unclaimed,
    anchored: &[(u32, &str)],
    left: &[Claim],
) -> Result<Vec<Claim>> {
    let of = weigh::matchable(anchored);
    if of == 0 {
        return Ok(Vec::new());
    }
    type Hits<'c> = Vec<(&'c Claim, Vec<u32>)>;
    let mut groups: Vec<((Dialect, Author), Hits)> = Vec::new();
    for c in left.iter().filter(|c| c.path.as_deref() == Some(w.path)) {
        let claimed = texts.claimed(c)?;
        let claimed: Vec<&str> = claimed.iter().map(String::as_str).collect();
        let hits = weigh::content_hits(anchored, &claimed);
        if hits.is_empty() || texts.built_on(c.commit, w.commit)? {
            continue;
        }
        let key = (c.dialect, c.author);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push((c, hits)),
            None => groups.push((key, vec![(c, hits)])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(_, hits)| carried(w, &hits, of))
        .collect())
}

/// One carried-over claim: the lines matched, the names of the claim that matched most, and
/// every note that matched in its source.
fn carried(w: &Unclaimed, hits: &[(&Claim, Vec<u32>)], of: u32) -> Claim {
    let mut lines: Vec<u32> = hits.iter().flat_map(|(_, h)| h.iter().copied()).collect();
    lines.sort_unstable();
    lines.dedup();
    let matched = lines.len() as u32;
    let best = hits
        .iter()
        .min_by_key(|(_, h)| Reverse(h.len()))
        .map(|(c, _)| *c)
        .expect("a group holds a claim");
    let mut sources: Vec<&str> = Vec::new();
    for (c, _) in hits {
        if !sources.contains(&c.source.as_str()) {
            sources.push(&c.source);
        }
    }
    Claim {
        commit: w.commit,
        path: Some(w.path.to_string()),
        lines: noted::normalise(lines.iter().map(|&l| Lines { start: l, end: l }).collect()),
        content_hash: None,
        source: format!(
            "{}, matched by content: {matched} of {of} anchored lines",
            sources.join("; ")
        ),
        matched: Some(Matched {
            by: MatchedBy::Content,
            of,
            matched,
            confidence: weigh::confidence(matched, of),
        }),
        ..best.clone()
    }
}

/// The rewritten commits' files, each read once, and which of those commits are built on
/// which writes, each asked once.
struct Texts<'r> {
    repo: &'r Repo,
    files: HashMap<(Oid, String), Option<Vec<String>>>,
    built_on: HashMap<(Oid, Oid), bool>,
}

impl Texts<'_> {
    /// Whether `commit` has `write` in its history (is later work on it, not a rewrite).
    fn built_on(&mut self, commit: Oid, write: Oid) -> Result<bool> {
        if let Some(&b) = self.built_on.get(&(commit, write)) {
            return Ok(b);
        }
        let b = self.repo.is_ancestor(write, commit)?;
        self.built_on.insert((commit, write), b);
        Ok(b)
    }

    /// The texts of the lines a claim names, in its commit's version of its file (none when
    /// that file cannot be read).
    fn claimed(&mut self, c: &Claim) -> Result<Vec<String>> {
        let path = c.path.clone().unwrap_or_default();
        let key = (c.commit, path);
        if !self.files.contains_key(&key) {
            let file = self.file(c.commit, &key.1)?;
            self.files.insert(key.clone(), file);
        }
        let Some(Some(file)) = self.files.get(&key) else {
            return Ok(Vec::new());
        };
        let last = file.len() as u32;
        Ok(c.lines
            .iter()
            .flat_map(|r| r.start.max(1)..=r.end.min(last))
            .map(|n| file[n as usize - 1].clone())
            .collect())
    }

    fn file(&self, commit: Oid, path: &str) -> Result<Option<Vec<String>>> {
        let Some(info) = self.repo.commit_if_present(commit)? else {
            return Ok(None);
        };
        match self.repo.file_in_tree(info.tree, path) {
            Ok(bytes) => Ok(bytes.map(|b| {
                String::from_utf8_lossy(&b)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })),
            // A partial clone may lack the blob: nothing to match, not a failed run.
            Err(e) if e.is_missing_object() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(n: u8) -> Oid {
        Oid::from_hex(&format!("{n:02x}").repeat(20)).unwrap()
    }

    fn left(commit: Oid, lines: (u32, u32), session: &str) -> Claim {
        Claim {
            dialect: Dialect::GitAi,
            commit,
            path: Some("app.py".into()),
            lines: vec![Lines {
                start: lines.0,
                end: lines.1,
            }],
            author: Author::Agent,
            agent: Some("claude".into()),
            model: None,
            session: Some(session.into()),
            transcript: None,
            trace: None,
            content_hash: Some("sha256:00".into()),
            source: format!("git-ai note on {} ({REWRITTEN})", commit.short()),
            matched: None,
        }
    }

    #[test]
    fn claims_of_several_rewritten_commits_join_on_the_write() {
        let (a, b, w) = (oid(1), oid(2), oid(9));
        let write = Unclaimed {
            commit: w,
            path: "app.py",
            before: "app.py",
            anchored: vec![(5, "x".into()), (6, "y".into()), (7, "z".into())],
        };
        // Two commits a squash replaced each wrote part of the anchored lines.
        let (ca, cb) = (left(a, (1, 9), "s-a"), left(b, (1, 9), "s-b"));
        let c = carried(&write, &[(&ca, vec![5]), (&cb, vec![6, 7])], 3);
        assert_eq!(c.commit, w);
        assert_eq!(c.lines, [Lines { start: 5, end: 7 }]);
        // The names of the claim that matched most; no hash of other lines is kept.
        assert_eq!(c.session.as_deref(), Some("s-b"));
        assert_eq!(c.content_hash, None);
        assert_eq!(
            c.matched,
            Some(Matched {
                by: MatchedBy::Content,
                of: 3,
                matched: 3,
                confidence: super::super::Confidence::High
            })
        );
        assert_eq!(
            c.source,
            format!(
                "git-ai note on {} ({REWRITTEN}); git-ai note on {} ({REWRITTEN}), matched by content: 3 of 3 anchored lines",
                a.short(),
                b.short()
            )
        );
    }

    #[test]
    fn what_became_of_the_notes_outside_the_range() {
        assert_eq!(Tally::default().said(), "");
        let t = Tally {
            read: 1,
            unread: 3,
            absent: 2,
            later: 2,
        };
        assert_eq!(
            t.said(),
            format!(
                "; 1 note on a commit the branch no longer has (rewritten by a squash or rebase?), read to match the anchored lines by content; 2 notes on commits built on the tip (later work, not a rewrite of it), not read; 3 notes on older commits the branch no longer has, not read (at most {CAP} are, newest first); 2 notes on commits this clone does not have (pruned after a rewrite, or beyond a shallow clone's depth)"
            )
        );
    }
}
