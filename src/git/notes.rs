//! Notes storage under refs/notes/sage: reading a note, and rewriting one by compare-and-swap
//! on the notes ref under its lock, with git's fanout layout.

use std::path::Path;

use super::{Oid, Repo, git_err};
use crate::error::{Error, Result};

/// The notes ref git sage writes; never another tool's.
pub const NOTES_REF: &str = "refs/notes/sage";

/// A note of another tool's, read with a size cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteText {
    /// The note's bytes, as stored.
    Bytes(Vec<u8>),
    /// The note is this many bytes, more than the cap; it was not read.
    TooLarge(u64),
    /// The notes tree names a blob the repository does not have.
    Missing,
}

impl Repo {
    /// Why `notes_ref` cannot be read as notes: it names a blob, a tree or a tag rather than a
    /// notes commit (`None` when it is a commit or absent). libgit2's note lookups trust the
    /// ref to name a commit and abort the process on anything else, so every notes ref is
    /// checked here before one is walked. The ref's own target is checked, never peeled: a tag
    /// pointing at a commit aborts them too.
    pub fn unreadable_notes_ref(&self, notes_ref: &str) -> Result<Option<String>> {
        let target = match self.inner.find_reference(notes_ref) {
            Ok(r) => match r.resolve() {
                Ok(r) => r.target(),
                Err(e) => return Err(git_err(format_args!("cannot read {notes_ref}"), e)),
            },
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            // A name git cannot hold as a ref is simply not there.
            Err(e) if e.code() == git2::ErrorCode::InvalidSpec => return Ok(None),
            Err(e) => return Err(git_err(format_args!("cannot read {notes_ref}"), e)),
        };
        let Some(id) = target else {
            return Ok(Some(format!("{notes_ref} names no object")));
        };
        let odb = self
            .inner
            .odb()
            .map_err(|e| git_err("cannot open the object database", e))?;
        match odb.read_header(id) {
            Ok((_, git2::ObjectType::Commit)) => Ok(None),
            Ok((_, kind)) => Ok(Some(format!(
                "{notes_ref} points at a {} ({}), not a notes commit",
                kind.str(),
                Oid(id).short()
            ))),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(Some(format!(
                "{notes_ref} points at {}, which the repository does not have",
                Oid(id).short()
            ))),
            Err(e) => Err(git_err(format_args!("cannot read {notes_ref}"), e)),
        }
    }

    /// Whether a foreign notes ref must not be walked.
    fn refuse_notes_ref(&self, notes_ref: &str) -> Result<bool> {
        Ok(self.unreadable_notes_ref(notes_ref)?.is_some())
    }

    /// The note on `commit` under refs/notes/sage, if any.
    pub fn read_note(&self, commit: Oid) -> Result<Option<String>> {
        self.check_notes_ref()?;
        match self.inner.find_note(Some(NOTES_REF), commit.0) {
            Ok(n) => Ok(Some(
                String::from_utf8_lossy(n.message_bytes()).into_owned(),
            )),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(
                format_args!("cannot read the note on {}", commit.short()),
                e,
            )),
        }
    }

    /// The note on `commit` under another tool's notes ref (`refs/notes/ai`), read only: git
    /// sage never writes there. `None` when the ref or the note is absent.
    /// A ref that is not a notes commit reads as absent: ask [`Repo::unreadable_notes_ref`]
    /// to say why.
    pub fn foreign_note(&self, notes_ref: &str, commit: Oid) -> Result<Option<Vec<u8>>> {
        if self.refuse_notes_ref(notes_ref)? {
            return Ok(None);
        }
        match self.inner.find_note(Some(notes_ref), commit.0) {
            Ok(n) => Ok(Some(n.message_bytes().to_vec())),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(
                format_args!("cannot read the {notes_ref} note on {}", commit.short()),
                e,
            )),
        }
    }

    /// The commits that carry a note under `notes_ref` (empty when the ref is absent).
    pub fn foreign_noted(&self, notes_ref: &str) -> Result<Vec<Oid>> {
        if self.refuse_notes_ref(notes_ref)? {
            return Ok(Vec::new());
        }
        let notes = match self.inner.notes(Some(notes_ref)) {
            Ok(n) => n,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(git_err(format_args!("cannot list {notes_ref}"), e)),
        };
        let mut out: Vec<Oid> = notes.flatten().map(|(_, commit)| Oid(commit)).collect();
        out.sort();
        Ok(out)
    }

    /// The notes under another tool's `notes_ref`, read only: each annotated commit with the
    /// note's blob, by commit (empty when the ref is absent). The blobs are not read here, so
    /// that a caller can look at their size first ([`Repo::foreign_note_text`]).
    pub fn foreign_notes(&self, notes_ref: &str) -> Result<Vec<(Oid, Oid)>> {
        if self.refuse_notes_ref(notes_ref)? {
            return Ok(Vec::new());
        }
        let notes = match self.inner.notes(Some(notes_ref)) {
            Ok(n) => n,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(git_err(format_args!("cannot list {notes_ref}"), e)),
        };
        let mut out = Vec::new();
        for note in notes {
            let (blob, commit) =
                note.map_err(|e| git_err(format_args!("cannot list {notes_ref}"), e))?;
            out.push((Oid(commit), Oid(blob)));
        }
        out.sort();
        Ok(out)
    }

    /// A note blob's bytes, unless it is larger than `cap` bytes; then only its size, so that
    /// a huge note (a whole transcript inline) is never loaded. Missing blobs are `Missing`,
    /// not an error.
    pub fn foreign_note_text(&self, blob: Oid, cap: u64) -> Result<NoteText> {
        let odb = self
            .inner
            .odb()
            .map_err(|e| git_err("cannot open the object database", e))?;
        let size = match odb.read_header(blob.0) {
            Ok((size, _)) => size as u64,
            // A partial or damaged clone: the note is listed, its text is not here.
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(NoteText::Missing),
            Err(e) => {
                return Err(git_err(
                    format_args!("cannot read note blob {}", blob.short()),
                    e,
                ));
            }
        };
        if size > cap {
            return Ok(NoteText::TooLarge(size));
        }
        Ok(NoteText::Bytes(self.read_blob(blob)?.to_vec()))
    }

    /// A notes ref that names something other than a commit is not ours to overwrite.
    fn check_notes_ref(&self) -> Result<()> {
        match self.unreadable_notes_ref(NOTES_REF)? {
            None => Ok(()),
            Some(why) => Err(Error::input(why).hint(format!(
                "inspect it with `git show {NOTES_REF}`; move it aside with `git update-ref -d {NOTES_REF}` if it is not needed"
            ))),
        }
    }

    /// Creates refs/notes/sage as an empty notes commit when it does not exist, so that
    /// `notes.rewriteRef` names a valid ref before the first note is written. An existing ref
    /// is left as it is.
    pub fn ensure_notes_ref(&self) -> Result<()> {
        self.check_notes_ref()?;
        if self.notes_tip().is_some() {
            return Ok(());
        }
        let fail = |e: git2::Error| git_err(format_args!("cannot create {NOTES_REF}"), e);
        let sig = self.note_signature();
        let tree = self
            .inner
            .treebuilder(None)
            .and_then(|b| b.write())
            .and_then(|id| self.inner.find_tree(id))
            .map_err(fail)?;
        let commit = self
            .inner
            .commit(
                None,
                &sig,
                &sig,
                "Notes ref created by 'git sage hooks install'\n",
                &tree,
                &[],
            )
            .map_err(fail)?;
        match self
            .inner
            .reference(NOTES_REF, commit, false, "git sage hooks install")
        {
            Ok(_) => Ok(()),
            // Another writer made it first: theirs stands.
            Err(e) if e.code() == git2::ErrorCode::Exists => Ok(()),
            Err(e) => Err(fail(e)),
        }
    }

    /// The identity notes are written with: the user's, else `git-sage`.
    fn note_signature(&self) -> git2::Signature<'static> {
        self.inner
            .signature()
            .or_else(|_| git2::Signature::now("git-sage", "git-sage@localhost"))
            .expect("a fixed signature is valid")
    }

    /// The commit `refs/notes/sage` points at, if it exists.
    pub fn notes_tip(&self) -> Option<Oid> {
        self.inner.refname_to_id(NOTES_REF).ok().map(Oid)
    }

    /// Rewrites the note on `commit` as `edit(old)` says, as git does: build a notes commit
    /// on the ref's current tip, then move the ref only if it still points at that tip (under
    /// the ref's own lock file, `refs/notes/sage.lock`, which `git notes` takes too). When
    /// another writer — git-sage or `git notes` — got there first, start again from its tip.
    pub fn update_note(&self, commit: Oid, edit: &dyn Fn(Option<&str>) -> String) -> Result<()> {
        self.check_notes_ref()?;
        let sig = self.note_signature();
        let fail = |e: git2::Error| {
            git_err(
                format_args!("cannot write the note on {}", commit.short()),
                e,
            )
        };
        let start = std::time::Instant::now();
        let mut delay = std::time::Duration::from_millis(2);
        loop {
            let tip = match self.inner.refname_to_id(NOTES_REF) {
                Ok(id) => Some(self.inner.find_commit(id).map_err(fail)?),
                Err(e) if e.code() == git2::ErrorCode::NotFound => None,
                Err(e) => return Err(fail(e)),
            };
            let tree = tip.as_ref().map(|c| c.tree()).transpose().map_err(fail)?;
            let found = match &tree {
                Some(t) => note_in_tree(t, commit.0).map_err(fail)?,
                None => None,
            };
            let old = match &found {
                Some((_, blob)) => Some(
                    String::from_utf8_lossy(self.inner.find_blob(*blob).map_err(fail)?.content())
                        .into_owned(),
                ),
                None => None,
            };
            let new = edit(old.as_deref());
            if old.as_deref() == Some(new.as_str()) {
                return Ok(());
            }
            let blob = self.inner.blob(new.as_bytes()).map_err(fail)?;
            let mut update = git2::build::TreeUpdateBuilder::new();
            let path = match &found {
                Some((path, _)) => path.clone(),
                None => note_path(&self.inner, tree.as_ref(), commit.0),
            };
            update.upsert(&path, blob, git2::FileMode::Blob);
            let empty;
            let base = match &tree {
                Some(t) => t,
                None => {
                    empty = self
                        .inner
                        .find_tree(
                            self.inner
                                .treebuilder(None)
                                .and_then(|b| b.write())
                                .map_err(fail)?,
                        )
                        .map_err(fail)?;
                    &empty
                }
            };
            let new_tree = self
                .inner
                .find_tree(update.create_updated(&self.inner, base).map_err(fail)?)
                .map_err(fail)?;
            let parents: Vec<&git2::Commit> = tip.iter().collect();
            let notes_commit = self
                .inner
                .commit(
                    None,
                    &sig,
                    &sig,
                    "Notes added by 'git sage'\n",
                    &new_tree,
                    &parents,
                )
                .map_err(fail)?;
            let log = format!("notes: note on {} by git sage", commit.short());
            let moved = match &tip {
                Some(t) => {
                    self.inner
                        .reference_matching(NOTES_REF, notes_commit, true, t.id(), &log)
                }
                None => self.inner.reference(NOTES_REF, notes_commit, false, &log),
            };
            match moved {
                Ok(_) => return Ok(()),
                // Someone else moved the ref (or holds its lock): their write stands; redo ours on it.
                Err(e)
                    if matches!(
                        e.code(),
                        git2::ErrorCode::Modified
                            | git2::ErrorCode::Locked
                            | git2::ErrorCode::Exists
                    ) =>
                {
                    if start.elapsed() > std::time::Duration::from_secs(30) {
                        return Err(Error::env(format!(
                            "cannot write the note on {}: {NOTES_REF} kept changing or stayed locked for 30 s",
                            commit.short()
                        ))
                        .hint(format!("if no git is running, remove {NOTES_REF}.lock in the git directory")));
                    }
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(fail(e)),
            }
        }
    }
}

/// Where the note on `commit` sits in a notes tree: at its hex name, or fanned out as git does
/// for large trees (`ab/cdef…`, `ab/cd/ef…`).
fn note_in_tree(
    tree: &git2::Tree,
    commit: git2::Oid,
) -> std::result::Result<Option<(String, git2::Oid)>, git2::Error> {
    let hex = commit.to_string();
    for depth in 0..=3 {
        let path = fanned(&hex, depth);
        match tree.get_path(Path::new(&path)) {
            Ok(e) if e.kind() == Some(git2::ObjectType::Blob) => return Ok(Some((path, e.id()))),
            Ok(_) => {}
            Err(e) if e.code() == git2::ErrorCode::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// `hex` with `depth` two-digit directories in front, as git's notes fanout writes it.
fn fanned(hex: &str, depth: usize) -> String {
    let mut out = String::new();
    for i in 0..depth {
        out.push_str(&hex[i * 2..i * 2 + 2]);
        out.push('/');
    }
    out.push_str(&hex[depth * 2..]);
    out
}

/// Where a new note goes: at the fanout depth the tree already uses (git reads any).
fn note_path(repo: &git2::Repository, tree: Option<&git2::Tree>, commit: git2::Oid) -> String {
    let hex = commit.to_string();
    let mut depth = 0;
    let mut cur = tree.cloned();
    while let Some(t) = cur.take() {
        if depth >= 3 {
            break;
        }
        let is_fan = |e: &git2::TreeEntry| {
            e.kind() == Some(git2::ObjectType::Tree)
                && e.name()
                    .is_ok_and(|n| n.len() == 2 && n.bytes().all(|b| b.is_ascii_hexdigit()))
        };
        let sub = t
            .get_name(&hex[depth * 2..depth * 2 + 2])
            .filter(|e| is_fan(e))
            .or_else(|| t.iter().find(|e| is_fan(e)));
        let Some(sub) = sub else { break };
        depth += 1;
        cur = repo.find_tree(sub.id()).ok();
    }
    fanned(&hex, depth)
}
