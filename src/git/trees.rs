//! Trees: path lookups (`PathLookup`, `entry_at`, `path_id`), listings, tree-to-tree diffs
//! and rename detection.

use std::path::Path;
use std::rc::Rc;

use super::idhash::IdMap;
use super::pack::Kind;
use super::{Oid, Repo, git_err};
use crate::error::{Error, Result};

/// The file found at a path in a commit's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The blob at the path.
    pub blob: Oid,
}

/// Looks up one path in many trees, remembering every subtree already resolved: commits
/// that did not touch the path's directories cost one root-tree read each.
#[derive(Debug, Clone)]
pub struct PathLookup {
    components: Vec<Vec<u8>>,
    /// The path names a directory (its tree), not a file.
    dir: bool,
    /// `memo[d]`: a tree at depth `d` → the blob the rest of the path names in it.
    memo: Vec<IdMap<Oid, Option<Oid>>>,
}

impl PathLookup {
    /// A lookup of `path` (slash-separated), empty until first used.
    pub fn new(path: &str) -> PathLookup {
        let components: Vec<Vec<u8>> = path
            .split('/')
            .filter(|c| !c.is_empty())
            .map(|c| c.as_bytes().to_vec())
            .collect();
        let memo = vec![IdMap::default(); components.len()];
        PathLookup {
            components,
            dir: false,
            memo,
        }
    }

    /// A lookup of the directory `path`: what it finds is the directory's tree.
    pub fn dir(path: &str) -> PathLookup {
        PathLookup {
            dir: true,
            ..PathLookup::new(path)
        }
    }

    /// Whether the answer for this root tree is already known (no read needed).
    #[cfg(test)]
    pub fn knows(&self, tree: Oid) -> bool {
        self.memo.first().is_some_and(|m| m.contains_key(&tree))
    }

    /// Whether this is a lookup of `path` (what `new` was given, up to empty components).
    pub fn is_for(&self, path: &str) -> bool {
        let mut parts = path.split('/').filter(|c| !c.is_empty());
        self.components
            .iter()
            .all(|c| parts.next() == Some(std::str::from_utf8(c).unwrap_or_default()))
            && parts.next().is_none()
    }
}

/// A file that differs between two trees; `None` on the side that has no file there.
struct FileChange {
    path: String,
    old: Option<Oid>,
    new: Option<Oid>,
}

/// The fewest non-blank lines a file needs to be taken for a copy of another.
const MIN_COPY_LINES: usize = 3;

/// Where a file that appears in a commit came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The path it had (a rename) or has besides (a copy) in the parent.
    pub from: String,
    /// Whether the parent's file is gone (a rename) or still there (a copy).
    pub copy: bool,
    /// Per cent of lines in common (100: the same content).
    pub similarity: u8,
}

impl Origin {
    fn renamed(from: &str, similarity: u8) -> Origin {
        Origin {
            from: from.to_string(),
            copy: false,
            similarity,
        }
    }

    fn copied(from: &str, similarity: u8) -> Origin {
        Origin {
            from: from.to_string(),
            copy: true,
            similarity,
        }
    }
}

/// Per cent of the lines of the larger text that the two have in common, by a line diff;
/// `None` when it cannot reach `floor`. The diff is the costly part, so it runs only where
/// the lines the texts share as multisets (which no diff can exceed) could reach the floor.
fn similarity(a: &[u8], b: &[u8], floor: u8) -> Option<u8> {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let lines = a.lines().count().max(b.lines().count()).max(1);
    let score = |same: usize| ((same * 100) / lines).min(100) as u8;
    if score(lines_shared_at_most(&a, &b)) < floor {
        return None;
    }
    let diff = similar::TextDiff::from_lines(a.as_ref(), b.as_ref());
    let same: usize = diff
        .ops()
        .iter()
        .filter_map(|op| match op {
            similar::DiffOp::Equal { len, .. } => Some(*len),
            _ => None,
        })
        .sum();
    Some(score(same)).filter(|s| *s >= floor)
}

/// How many lines the two texts share counted as multisets, line endings ignored: at least
/// what any line diff of them finds equal.
fn lines_shared_at_most(a: &str, b: &str) -> usize {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in a.lines() {
        *counts.entry(l).or_default() += 1;
    }
    let mut shared = 0;
    for l in b.lines() {
        if let Some(c) = counts.get_mut(l)
            && *c > 0
        {
            *c -= 1;
            shared += 1;
        }
    }
    shared
}

/// One entry of a raw tree object.
#[derive(Clone, Copy)]
struct RawEntry<'a> {
    name: &'a [u8],
    dir: bool,
    id: &'a [u8],
}

/// The entries of a raw tree object (`<mode> <name>\0<20-byte id>`), in their stored order.
struct RawEntries<'a>(&'a [u8]);

impl<'a> Iterator for RawEntries<'a> {
    type Item = RawEntry<'a>;

    fn next(&mut self) -> Option<RawEntry<'a>> {
        let d = self.0;
        let sp = memchr::memchr(b' ', d)?;
        let nul = sp + 1 + memchr::memchr(0, &d[sp + 1..])?;
        let id = d.get(nul + 1..nul + 21)?;
        self.0 = &d[nul + 21..];
        Some(RawEntry {
            name: &d[sp + 1..nul],
            dir: &d[..sp] == b"40000",
            id,
        })
    }
}

/// git's order of tree entries: by name, a directory's name compared as if it ended in `/`.
fn git_order(a: &RawEntry, b: &RawEntry) -> std::cmp::Ordering {
    let key = |e: &RawEntry, i: usize| match e.name.get(i) {
        Some(c) => Some(*c),
        None if e.dir && i == e.name.len() => Some(b'/'),
        None => None,
    };
    for i in 0..=a.name.len().max(b.name.len()) {
        match (key(a, i), key(b, i)) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => return x.cmp(&y),
        }
    }
    std::cmp::Ordering::Equal
}

/// Finds `name` in a raw tree object (`<mode> <name>\0<20-byte id>` entries).
fn raw_tree_entry<'a>(mut data: &'a [u8], name: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    while !data.is_empty() {
        let sp = memchr::memchr(b' ', data)?;
        let nul = sp + 1 + memchr::memchr(0, &data[sp + 1..])?;
        let mode = &data[..sp];
        let entry = &data[sp + 1..nul];
        let id = data.get(nul + 1..nul + 21)?;
        if entry == name {
            return Some((mode, id));
        }
        data = &data[nul + 21..];
    }
    None
}

impl Repo {
    /// The blob at a path of a tree (the tree, for a lookup made by `PathLookup::dir`), through
    /// raw tree objects and the lookup's memo.
    pub fn blob_at(&self, look: &mut PathLookup, tree: Oid) -> Result<Option<Oid>> {
        if look.components.is_empty() {
            return Ok(None);
        }
        let mut chain: Vec<(usize, Oid)> = Vec::new();
        let mut depth = 0;
        let mut cur = tree;
        let found = loop {
            if let Some(r) = look.memo[depth].get(&cur) {
                break *r;
            }
            chain.push((depth, cur));
            let Some((Kind::Tree, data)) = self.read_raw(cur)? else {
                break None;
            };
            let last = depth + 1 == look.components.len();
            match raw_tree_entry(&data, &look.components[depth]) {
                None => break None,
                // A directory's tree; else regular files only (100644, 100755): not
                // symlinks, not submodules.
                Some((mode, id)) if last && look.dir => {
                    break (mode == b"40000").then(|| Oid::from_raw(id));
                }
                Some((mode, id)) if last => {
                    break mode.starts_with(b"100").then(|| Oid::from_raw(id));
                }
                Some((mode, id)) if mode == b"40000" => {
                    cur = Oid::from_raw(id);
                    depth += 1;
                }
                Some(_) => break None,
            }
        };
        for (d, t) in chain {
            look.memo[d].insert(t, found);
        }
        Ok(found)
    }

    /// A raw tree's bytes (`None` for no tree), or an error when the object is not a tree.
    fn raw_tree(&self, tree: Option<Oid>) -> Result<Option<Rc<Vec<u8>>>> {
        let Some(t) = tree else { return Ok(None) };
        match self.read_raw(t)? {
            Some((Kind::Tree, data)) => Ok(Some(data)),
            _ => Err(Error::env(format!(
                "tree {} is missing or not a tree",
                t.short()
            ))),
        }
    }

    /// The files that differ between two trees: path, old blob, new blob (`None` where the
    /// side has no file there). Both trees are walked side by side in git's own entry order,
    /// so an unchanged entry costs a comparison and an unchanged subtree is not read.
    fn diff_files(
        &self,
        old: Option<Oid>,
        new: Option<Oid>,
        prefix: &str,
        out: &mut Vec<FileChange>,
    ) -> Result<()> {
        if old == new {
            return Ok(());
        }
        let (a, b) = (self.raw_tree(old)?, self.raw_tree(new)?);
        let mut x = RawEntries(a.as_deref().map_or(&[][..], |v| &v[..]));
        let mut y = RawEntries(b.as_deref().map_or(&[][..], |v| &v[..]));
        let (mut ex, mut ey) = (x.next(), y.next());
        while ex.is_some() || ey.is_some() {
            let (mut l, mut r) = match (ex, ey) {
                (Some(l), Some(r)) => match git_order(&l, &r) {
                    std::cmp::Ordering::Less => (Some(l), None),
                    std::cmp::Ordering::Greater => (None, Some(r)),
                    std::cmp::Ordering::Equal => (Some(l), Some(r)),
                },
                other => other,
            };
            if l.is_some() {
                ex = x.next();
            }
            if r.is_some() {
                ey = y.next();
            }
            // A file and a directory of the same name come apart in git's order (the
            // directory sorts as `name/`): pair them up by name again.
            if let (Some(e), None, Some(n)) = (l, r, ey)
                && n.name == e.name
            {
                r = Some(n);
                ey = y.next();
            } else if let (None, Some(e), Some(n)) = (l, r, ex)
                && n.name == e.name
            {
                l = Some(n);
                ex = x.next();
            }
            if let (Some(p), Some(q)) = (l, r)
                && p.id == q.id
                && p.dir == q.dir
            {
                continue;
            }
            let name = l.or(r).map(|e| e.name).unwrap_or_default();
            let path = format!("{prefix}{}", String::from_utf8_lossy(name));
            let file = |e: Option<RawEntry>| e.filter(|e| !e.dir).map(|e| Oid::from_raw(e.id));
            let dir = |e: Option<RawEntry>| e.filter(|e| e.dir).map(|e| Oid::from_raw(e.id));
            if file(l).is_some() || file(r).is_some() {
                out.push(FileChange {
                    path: path.clone(),
                    old: file(l),
                    new: file(r),
                });
            }
            if dir(l).is_some() || dir(r).is_some() {
                self.diff_files(dir(l), dir(r), &format!("{path}/"), out)?;
            }
        }
        Ok(())
    }

    /// Paths whose content differs between two trees (added, deleted or modified files),
    /// by comparing tree objects directly: unchanged subtrees cost nothing.
    pub fn changed_paths(&self, old_tree: Oid, new_tree: Oid) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.diff_files(Some(old_tree), Some(new_tree), "", &mut out)?;
        Ok(out.into_iter().map(|c| c.path).collect())
    }

    /// Files that differ between two versions of one folder (either may be absent), named
    /// with `prefix` before them: what a commit changed under a folder it is known to have
    /// changed, without diffing the rest of the tree.
    pub fn changed_files_in(
        &self,
        old_dir: Option<Oid>,
        new_dir: Option<Oid>,
        prefix: &str,
    ) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.diff_files(old_dir, new_dir, prefix, &mut out)?;
        Ok(out.into_iter().map(|c| c.path).collect())
    }

    /// Every file of a tree with its blob, through raw tree objects.
    fn file_ids(&self, tree: Oid, prefix: &str, out: &mut Vec<(String, Oid)>) -> Result<()> {
        let data = self.raw_tree(Some(tree))?.unwrap_or_default();
        for e in RawEntries(&data) {
            let path = format!("{prefix}{}", String::from_utf8_lossy(e.name));
            if e.dir {
                self.file_ids(Oid::from_raw(e.id), &format!("{path}/"), out)?;
            } else {
                out.push((path, Oid::from_raw(e.id)));
            }
        }
        Ok(())
    }

    /// Where `path`, a file of `new_tree` that `old_tree` lacks, came from, as git's `-M`
    /// and `-C` would say: a file the commit deleted with the same content (an exact rename),
    /// else one that kept it (an exact copy), else the most similar deleted file, else the
    /// most similar file the commit changed or one of the same name (at least half the lines
    /// the same). Only the anchored path is looked for, so a commit that moves every file
    /// costs one tree diff and, in the usual case, no blob read.
    pub fn origin_of(&self, old_tree: Oid, new_tree: Oid, path: &str) -> Result<Option<Origin>> {
        let Some(blob) = self.blob_at(&mut PathLookup::new(path), new_tree)? else {
            return Ok(None);
        };
        let mut changes = Vec::new();
        self.diff_files(Some(old_tree), Some(new_tree), "", &mut changes)?;
        let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let own = name(path);
        // Same name first: of several files with the blob, the one that kept its name moved.
        let by_name = |mut v: Vec<(String, Oid)>| {
            v.sort_by_key(|(p, _)| (name(p) != own, p.clone()));
            v
        };
        let deleted = by_name(
            changes
                .iter()
                .filter(|c| c.new.is_none())
                .filter_map(|c| c.old.map(|o| (c.path.clone(), o)))
                .collect(),
        );
        if let Some((from, _)) = deleted.iter().find(|(_, o)| *o == blob) {
            return Ok(Some(Origin::renamed(from, 100)));
        }
        // A file of a line or two (an empty `__init__.py`) has twins everywhere: no copy.
        let text = self.read_blob(blob)?;
        let lines = text
            .split(|b| *b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
            .count();
        let mut old_files = Vec::new();
        if lines >= MIN_COPY_LINES {
            self.file_ids(old_tree, "", &mut old_files)?;
        }
        let old_files = by_name(old_files);
        if let Some((from, _)) = old_files.iter().find(|(_, o)| *o == blob) {
            return Ok(Some(Origin::copied(from, 100)));
        }
        if let Some((from, score)) = self.most_similar(&text, &deleted)? {
            return Ok(Some(Origin::renamed(&from, score)));
        }
        // Copy sources, as `-C` takes them: files the commit changed, and files of the
        // same name anywhere (what a copy-then-edit most often starts from).
        let candidates: Vec<(String, Oid)> = old_files
            .into_iter()
            .filter(|(p, _)| {
                name(p) == own
                    || changes
                        .iter()
                        .any(|c| c.path == *p && c.old.is_some() && c.new.is_some())
            })
            .collect();
        Ok(self
            .most_similar(&text, &candidates)?
            .map(|(from, score)| Origin::copied(&from, score)))
    }

    /// The candidate most like `text` (per cent of lines in common, at least 50), if any.
    /// Candidates whose size is far from `text`'s cannot reach half and are not read.
    fn most_similar(
        &self,
        text: &[u8],
        candidates: &[(String, Oid)],
    ) -> Result<Option<(String, u8)>> {
        const MAX_READ: usize = 500;
        let mut best: Option<(String, u8)> = None;
        let mut read = 0;
        for (p, id) in candidates {
            if read == MAX_READ {
                break;
            }
            let Some(size) = self.blob_size(*id)? else {
                continue;
            };
            let (a, b) = (text.len().max(1), size.max(1));
            if a > 2 * b || b > 2 * a {
                continue;
            }
            read += 1;
            let other = self.read_blob(*id)?;
            let floor = best.as_ref().map_or(50, |(_, s)| s.saturating_add(1));
            if let Some(score) = similarity(text, &other, floor) {
                best = Some((p.clone(), score));
                if score == 100 {
                    break;
                }
            }
        }
        Ok(best)
    }

    /// What a path names in a tree: its id and whether it is a blob; `None` when absent.
    fn lookup(&self, tree: Oid, path: &str) -> Result<Option<(Oid, bool)>> {
        let t = self
            .inner
            .find_tree(tree.0)
            .map_err(|e| git_err(format_args!("cannot read tree {}", tree.short()), e))?;
        match t.get_path(Path::new(path)) {
            Ok(e) => Ok(Some((
                Oid(e.id()),
                e.kind() == Some(git2::ObjectType::Blob),
            ))),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(_) if in_repo_path(path).is_err() => Err(Error::input(format!(
                "{path}: the path {}",
                in_repo_path(path)
                    .err()
                    .unwrap_or("is not a path in the repository")
            ))),
            Err(e) => Err(git_err(format_args!("cannot look up {path}"), e)),
        }
    }

    /// The blob at `path` in a tree, if the path names a file there.
    pub fn entry_at(&self, tree: Oid, path: &str) -> Result<Option<Entry>> {
        Ok(self
            .lookup(tree, path)?
            .filter(|(_, blob)| *blob)
            .map(|(id, _)| Entry { blob: id }))
    }

    /// The content of `path` at revision `rev` (`REV:path` arguments); `None` when absent.
    pub fn file_at_rev(&self, rev: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let clean = in_repo_path(path).map_err(|why| {
            Error::input(format!("{rev}:{path}: the path {why}"))
                .hint("in REV:path the path is relative to the repository's top directory")
        })?;
        let commit = self.resolve_commit(rev)?;
        let tree = self.tree_of(commit)?;
        match self.entry_at(tree, &clean)? {
            Some(e) => Ok(Some(self.read_blob(e.blob)?.to_vec())),
            None => Ok(None),
        }
    }

    /// The id of whatever a path names in a tree (file or directory).
    pub fn path_id(&self, tree: Oid, path: &str) -> Result<Option<Oid>> {
        Ok(self.lookup(tree, path)?.map(|(id, _)| id))
    }

    /// The id of the directory a path names in a tree; `None` when absent or a file.
    pub fn dir_id(&self, tree: Oid, path: &str) -> Result<Option<Oid>> {
        Ok(self
            .lookup(tree, path)?
            .filter(|(_, blob)| !*blob)
            .map(|(id, _)| id))
    }

    /// The content of a file of a tree, if the path names a file there.
    pub fn file_in_tree(&self, tree: Oid, path: &str) -> Result<Option<Rc<Vec<u8>>>> {
        match self.blob_at(&mut PathLookup::new(path), tree)? {
            Some(b) => Ok(Some(self.read_blob(b)?)),
            None => Ok(None),
        }
    }

    /// Every file path of a tree (recursively), with `/` separators.
    pub fn tree_paths(&self, tree: Oid) -> Result<Vec<String>> {
        let t = self
            .inner
            .find_tree(tree.0)
            .map_err(|e| git_err(format_args!("cannot read tree {}", tree.short()), e))?;
        let mut out = Vec::new();
        t.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                out.push(format!("{dir}{name}"));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| git_err("cannot walk a tree", e))?;
        Ok(out)
    }

    /// Entries of a directory of a tree: (name, is a directory).
    pub fn list_dir(&self, tree: Oid, dir: &str) -> Result<Vec<(String, bool)>> {
        let err = |e| git_err(format_args!("cannot list {dir}"), e);
        let root = self.inner.find_tree(tree.0).map_err(err)?;
        let sub = if dir.is_empty() {
            root
        } else {
            match root.get_path(Path::new(dir)) {
                Ok(e) if e.kind() == Some(git2::ObjectType::Tree) => {
                    self.inner.find_tree(e.id()).map_err(err)?
                }
                _ => return Ok(Vec::new()),
            }
        };
        Ok(sub
            .iter()
            .map(|e| {
                (
                    String::from_utf8_lossy(e.name_bytes()).into_owned(),
                    e.kind() == Some(git2::ObjectType::Tree),
                )
            })
            .collect())
    }

    /// Every file path of a tree (recursive), for resolving scanner paths.
    pub fn file_paths(&self, tree: Oid) -> Result<Vec<String>> {
        let err = |e| git_err(format_args!("cannot list tree {}", tree.short()), e);
        let t = self.inner.find_tree(tree.0).map_err(err)?;
        let mut out = Vec::new();
        t.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                out.push(format!(
                    "{dir}{}",
                    String::from_utf8_lossy(entry.name_bytes())
                ));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(err)?;
        Ok(out)
    }
}

/// A path inside a tree, as the user wrote it, made plain (`./a//b/../c` is `a/c`), or why it
/// cannot name anything inside the repository.
pub fn in_repo_path(path: &str) -> std::result::Result<String, &'static str> {
    if path.starts_with('/') {
        return Err("is absolute");
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if p == ".." {
            parts.pop().ok_or("leads out of the repository")?;
        } else {
            parts.push(p);
        }
    }
    if parts.is_empty() {
        return Err("names no file");
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use crate::git::Repo;
    use crate::git::testgit::git;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut never drops a pair the diff would keep: with any floor, the score is
        /// the diff's whenever the diff's reaches the floor.
        #[test]
        fn the_shared_lines_bound_never_hides_a_similar_file(
            a in proptest::collection::vec("[ab]{0,2}(\r)?", 0..12),
            b in proptest::collection::vec("[ab]{0,2}(\r)?", 0..12),
            floor in 0u8..=100,
        ) {
            let (a, b) = (a.join("\n"), b.join("\n"));
            let full = super::similarity(a.as_bytes(), b.as_bytes(), 0).unwrap();
            let cut = super::similarity(a.as_bytes(), b.as_bytes(), floor);
            prop_assert_eq!(cut, (full >= floor).then_some(full));
        }
    }

    /// A directory lookup finds the directory's tree as git names it, across commits and
    /// through its memo; a file or a missing path at that name is no directory.
    #[test]
    fn directory_lookups_find_gits_trees() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        let write = |p: &str, text: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        write("media/app.py", "1");
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "one"]);
        write("media/.agent-trace/a.jsonl", "{}");
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "two"]);
        let repo = Repo::discover(d).unwrap();
        let mut look = super::PathLookup::dir("media/.agent-trace");
        let mut file = super::PathLookup::dir("media/app.py");
        for (rev, has) in [("HEAD~1", false), ("HEAD", true), ("HEAD~1", false)] {
            let tree = repo.tree_of(repo.resolve_commit(rev).unwrap()).unwrap();
            let found = repo.blob_at(&mut look, tree).unwrap();
            assert_eq!(found.is_some(), has, "{rev}");
            if let Some(id) = found {
                let want = git(d, &["rev-parse", &format!("{rev}:media/.agent-trace")]);
                assert_eq!(id.hex(), want.trim());
            }
            assert_eq!(repo.blob_at(&mut file, tree).unwrap(), None);
        }
    }

    /// Every step's changed files, as `git diff --name-only` lists them, including names that
    /// sort around a directory's (`a`, `a.txt`, `a-b`, `a/`) and files turning into directories.
    #[test]
    fn changed_paths_are_gits() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        let steps: &[&[(&str, Option<&str>)]] = &[
            &[
                ("a", Some("1")),
                ("a.txt", Some("1")),
                ("a-b", Some("1")),
                ("b/c", Some("1")),
            ],
            &[("a", None), ("a/x", Some("2")), ("b/c", Some("2"))],
            &[
                ("a.txt", None),
                ("a/x", None),
                ("a", Some("3")),
                ("b/d/e", Some("3")),
            ],
            &[
                ("b/c", None),
                ("b/d/e", None),
                ("b", Some("file now")),
                ("z", Some("4")),
            ],
            &[("a-b", Some("5")), ("a0", Some("5"))],
        ];
        for step in steps {
            for (p, content) in *step {
                let f = d.join(p);
                match content {
                    Some(c) => {
                        if f.is_dir() {
                            std::fs::remove_dir_all(&f).unwrap();
                        }
                        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
                        if f.is_file() || !f.exists() {
                            std::fs::write(&f, c).unwrap();
                        }
                    }
                    None => {
                        let _ = std::fs::remove_file(&f);
                    }
                }
            }
            // A file that becomes a directory's name: make room for it.
            git(d, &["add", "-A"]);
            git(d, &["commit", "-q", "--allow-empty", "-m", "step"]);
        }
        let repo = Repo::discover(d).unwrap();
        for k in 0..steps.len() - 1 {
            let old = format!("HEAD~{}", steps.len() - 1 - k);
            let new = format!("HEAD~{}", steps.len() - 2 - k);
            let want: Vec<String> = git(d, &["diff", "--no-renames", "--name-only", &old, &new])
                .lines()
                .map(str::to_string)
                .collect();
            let a = repo.tree_of(repo.resolve_commit(&old).unwrap()).unwrap();
            let b = repo.tree_of(repo.resolve_commit(&new).unwrap()).unwrap();
            let mut got = repo.changed_paths(a, b).unwrap();
            got.sort();
            let mut want = want;
            want.sort();
            assert_eq!(got, want, "{old}..{new}");
        }
    }
}
