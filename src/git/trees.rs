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
pub struct PathLookup {
    components: Vec<Vec<u8>>,
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
        PathLookup { components, memo }
    }
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
    /// The blob at a path of a tree, through raw tree objects and the lookup's memo.
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
                // Regular files only (100644, 100755): not symlinks, not submodules.
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

    /// Entries of a raw tree: name → (is a directory, id).
    fn raw_entries(
        &self,
        tree: Option<Oid>,
    ) -> Result<std::collections::BTreeMap<Vec<u8>, (bool, Oid)>> {
        let mut out = std::collections::BTreeMap::new();
        let Some(t) = tree else { return Ok(out) };
        let Some((Kind::Tree, data)) = self.read_raw(t)? else {
            return Err(Error::env(format!(
                "tree {} is missing or not a tree",
                t.short()
            )));
        };
        let mut d: &[u8] = &data;
        while !d.is_empty() {
            let (Some(sp), Some(nul)) = (memchr::memchr(b' ', d), memchr::memchr(0, d)) else {
                break;
            };
            let Some(id) = d.get(nul + 1..nul + 21) else {
                break;
            };
            out.insert(
                d[sp + 1..nul].to_vec(),
                (&d[..sp] == b"40000", Oid::from_raw(id)),
            );
            d = &d[nul + 21..];
        }
        Ok(out)
    }

    fn diff_into(
        &self,
        old: Option<Oid>,
        new: Option<Oid>,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<()> {
        if old == new {
            return Ok(());
        }
        let a = self.raw_entries(old)?;
        let b = self.raw_entries(new)?;
        let mut names: Vec<&Vec<u8>> = a.keys().chain(b.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let (x, y) = (a.get(name), b.get(name));
            if x.map(|e| e.1) == y.map(|e| e.1) && x.map(|e| e.0) == y.map(|e| e.0) {
                continue;
            }
            let path = format!("{prefix}{}", String::from_utf8_lossy(name));
            let dir = |e: Option<&(bool, Oid)>| e.filter(|e| e.0).map(|e| e.1);
            let file = |e: Option<&(bool, Oid)>| e.is_some_and(|e| !e.0);
            if file(x) || file(y) {
                out.push(path.clone());
            }
            if dir(x).is_some() || dir(y).is_some() {
                self.diff_into(dir(x), dir(y), &format!("{path}/"), out)?;
            }
        }
        Ok(())
    }

    /// Paths whose content differs between two trees (added, deleted or modified files),
    /// by comparing tree objects directly: unchanged subtrees cost nothing.
    pub fn changed_paths(&self, old_tree: Oid, new_tree: Oid) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.diff_into(Some(old_tree), Some(new_tree), "", &mut out)?;
        Ok(out)
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

    /// If `path` in `new_tree` is a file renamed from another path of `old_tree`, that path.
    pub fn renamed_from(&self, old_tree: Oid, new_tree: Oid, path: &str) -> Result<Option<String>> {
        let err = |e| git_err("cannot compare trees for renames", e);
        let old = self.inner.find_tree(old_tree.0).map_err(err)?;
        let new = self.inner.find_tree(new_tree.0).map_err(err)?;
        let mut opts = git2::DiffOptions::new();
        opts.skip_binary_check(true);
        let mut diff = self
            .inner
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
            .map_err(err)?;
        let mut find = git2::DiffFindOptions::new();
        find.renames(true);
        diff.find_similar(Some(&mut find)).map_err(err)?;
        for delta in diff.deltas() {
            if delta.status() == git2::Delta::Renamed
                && delta.new_file().path() == Some(Path::new(path))
            {
                return Ok(delta
                    .old_file()
                    .path()
                    .map(|p| p.to_string_lossy().replace('\\', "/")));
            }
        }
        Ok(None)
    }

    /// The id of whatever a path names in a tree (file or directory).
    pub fn path_id(&self, tree: Oid, path: &str) -> Result<Option<Oid>> {
        Ok(self.lookup(tree, path)?.map(|(id, _)| id))
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
