//! The only module that touches git2: opens the repository and hands out owned values.

pub mod commit_graph;
pub mod idhash;
pub mod loose;
pub mod pack;

use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use commit_graph::CommitGraph;
use idhash::IdMap;
use pack::{Kind, PackReader, Packs};

use crate::error::{Error, Result};

/// A git object id, owned and printable; keeps git2's type out of the other modules.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Oid(git2::Oid);

impl Oid {
    fn from_raw(bytes: &[u8]) -> Oid {
        Oid(git2::Oid::from_bytes(bytes).expect("20-byte object id"))
    }

    pub fn short(&self) -> String {
        let mut s = self.hex();
        s.truncate(7);
        s
    }

    /// The full hex name (what Display prints, without going through the formatter).
    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(40);
        for &b in self.0.as_bytes() {
            out.push(DIGITS[(b >> 4) as usize] as char);
            out.push(DIGITS[(b & 15) as usize] as char);
        }
        out
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Oid({})", self.short())
    }
}

/// What git2 tells about a commit, as plain owned data.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: Oid,
    pub parents: Vec<Oid>,
    pub tree: Oid,
    pub author_name: String,
    pub author_email: String,
    pub committer_name: String,
    pub committer_email: String,
    /// Seconds since the epoch, committer time.
    pub time: i64,
    /// Seconds since the epoch, author time: kept by a rebase, a cherry-pick or an amend, so
    /// closer to when the change was made.
    pub author_time: i64,
    pub summary: String,
    pub message: String,
}

impl CommitInfo {
    /// The values of `Co-authored-by:` trailers (case-insensitive key), in order.
    pub fn co_authors(&self) -> Vec<String> {
        self.message
            .lines()
            .filter_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.trim()
                    .eq_ignore_ascii_case("co-authored-by")
                    .then(|| value.trim().to_string())
            })
            .collect()
    }
}

/// The file found at a path in a commit's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub blob: Oid,
}

/// A commit of a first-parent chain, with what the history walk needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainCommit {
    pub id: Oid,
    pub tree: Oid,
    pub first_parent: Option<Oid>,
    pub merge: bool,
    /// For a commit of a merged side branch: the first-parent merge that brought it in.
    pub via_merge: Option<Oid>,
}

/// Looks up one path in many trees, remembering every subtree already resolved: commits
/// that did not touch the path's directories cost one root-tree read each.
pub struct PathLookup {
    components: Vec<Vec<u8>>,
    /// `memo[d]`: a tree at depth `d` → the blob the rest of the path names in it.
    memo: Vec<IdMap<Oid, Option<Oid>>>,
}

impl PathLookup {
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

/// An open repository. Not `Sync` (git2 is not); keep it on one thread, and give worker
/// threads a `WorkerSeed` to open their own.
pub struct Repo {
    inner: git2::Repository,
    packs: OnceCell<Arc<Packs>>,
    reader: RefCell<Option<PackReader>>,
}

/// What a worker thread needs to open its own `Repo` sharing the mapped packs.
pub struct WorkerSeed {
    git_dir: PathBuf,
    packs: Arc<Packs>,
}

fn git_err(context: impl fmt::Display, e: git2::Error) -> Error {
    Error::env(format!("{context}: {}", e.message()))
}

impl Repo {
    /// Opens the repository containing `dir`, like git does (walking up to the top level).
    pub fn discover(dir: &Path) -> Result<Repo> {
        // git itself does not re-hash objects it reads; libgit2 does by default, which
        // costs a fifth of a history walk. Integrity is `git fsck`'s job, not ours.
        git2::opts::strict_hash_verification(false);
        // The walks below read each commit and tree once and keep their own memo; libgit2's
        // object cache would only add bookkeeping and a slow teardown.
        git2::opts::enable_caching(false);
        match git2::Repository::discover(dir) {
            Ok(inner) => {
                // Before libgit2 reads anything: a cut-short loose object hangs it.
                loose::guard(&inner.commondir().join("objects")).map_err(|c| {
                    Error::env(format!(
                        "the repository is damaged: loose object {} ({}) {}",
                        c.id,
                        c.path.display(),
                        c.reason
                    ))
                    .hint("git fsck names every damaged object; restore it from another clone (git fetch), or remove it if git fsck says nothing needs it")
                })?;
                Ok(Repo::wrap(inner))
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => Err(Error::input(format!(
                "{} is not inside a git repository",
                dir.display()
            ))
            .hint("run git sage inside a repository, or pass -C <dir>")),
            Err(e) => Err(git_err(
                format_args!("cannot open the repository at {}", dir.display()),
                e,
            )),
        }
    }

    fn wrap(inner: git2::Repository) -> Repo {
        Repo {
            inner,
            packs: OnceCell::new(),
            reader: RefCell::new(None),
        }
    }

    fn packs(&self) -> &Arc<Packs> {
        self.packs
            .get_or_init(|| Packs::open(&self.inner.commondir().join("objects")))
    }

    /// What a worker thread needs to open its own handle (git2 handles are not Sync).
    pub fn worker_seed(&self) -> WorkerSeed {
        WorkerSeed {
            git_dir: self.inner.path().to_path_buf(),
            packs: Arc::clone(self.packs()),
        }
    }

    /// A worker thread's own handle on the repository of `seed`.
    pub fn from_seed(seed: WorkerSeed) -> Result<Repo> {
        let inner = git2::Repository::open(&seed.git_dir)
            .map_err(|e| git_err(format_args!("cannot open {}", seed.git_dir.display()), e))?;
        let repo = Repo::wrap(inner);
        let _ = repo.packs.set(seed.packs);
        Ok(repo)
    }

    /// An object's kind and bytes: from the mapped packs when they have it, else libgit2.
    fn read_raw(&self, id: Oid) -> Result<Option<(Kind, Rc<Vec<u8>>)>> {
        let mut reader = self.reader.borrow_mut();
        let reader = reader.get_or_insert_with(|| PackReader::new(Arc::clone(self.packs())));
        if let Some(found) = reader.read(id.0.as_bytes()) {
            return Ok(Some(found));
        }
        let odb = self
            .inner
            .odb()
            .map_err(|e| git_err("cannot open the object database", e))?;
        let obj = match odb.read(id.0) {
            Ok(o) => o,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => {
                return Err(git_err(
                    format_args!("cannot read object {}", id.short()),
                    e,
                ));
            }
        };
        let kind = match obj.kind() {
            git2::ObjectType::Commit => Kind::Commit,
            git2::ObjectType::Tree => Kind::Tree,
            git2::ObjectType::Blob => Kind::Blob,
            _ => Kind::Tag,
        };
        Ok(Some((kind, Rc::new(obj.data().to_vec()))))
    }

    /// Creates a repository at `dir` whose HEAD points at `branch` (no commits yet).
    pub fn init(dir: &Path, branch: &str) -> Result<Repo> {
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head(branch);
        let inner = git2::Repository::init_opts(dir, &opts).map_err(|e| {
            git_err(
                format_args!("cannot create a repository in {}", dir.display()),
                e,
            )
        })?;
        Ok(Repo::wrap(inner))
    }

    /// Commits `changes` (path → new content, `None` deletes) on top of `parent` and points
    /// `branch` at the result. Signatures and dates are explicit, so the same call makes the
    /// same commit everywhere; the user's git config (signing, hooks) plays no part.
    pub fn commit_files(
        &self,
        branch: &str,
        parent: Option<Oid>,
        changes: &[(&str, Option<&[u8]>)],
        message: &str,
        who: (&str, &str),
        time: i64,
    ) -> Result<Oid> {
        let err = |e| git_err("cannot write a commit", e);
        let base = match parent {
            Some(p) => Some(
                self.inner
                    .find_commit(p.0)
                    .map_err(err)?
                    .tree()
                    .map_err(err)?,
            ),
            None => None,
        };
        let mut update = git2::build::TreeUpdateBuilder::new();
        for (path, content) in changes {
            match content {
                Some(bytes) => {
                    let blob = self.inner.blob(bytes).map_err(err)?;
                    update.upsert(*path, blob, git2::FileMode::Blob);
                }
                None => {
                    update.remove(*path);
                }
            }
        }
        let tree_id = match &base {
            Some(t) => update.create_updated(&self.inner, t).map_err(err)?,
            None => {
                let empty = self
                    .inner
                    .treebuilder(None)
                    .map_err(err)?
                    .write()
                    .map_err(err)?;
                let empty = self.inner.find_tree(empty).map_err(err)?;
                update.create_updated(&self.inner, &empty).map_err(err)?
            }
        };
        let tree = self.inner.find_tree(tree_id).map_err(err)?;
        let sig = git2::Signature::new(who.0, who.1, &git2::Time::new(time, 0)).map_err(err)?;
        let parents: Vec<git2::Commit> = match parent {
            Some(p) => vec![self.inner.find_commit(p.0).map_err(err)?],
            None => Vec::new(),
        };
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        let id = self
            .inner
            .commit(
                Some(&format!("refs/heads/{branch}")),
                &sig,
                &sig,
                message,
                &tree,
                &refs,
            )
            .map_err(err)?;
        Ok(Oid(id))
    }

    /// Points HEAD at `branch` and makes the work tree match it.
    pub fn checkout_branch(&self, branch: &str) -> Result<()> {
        let err = |e| git_err(format_args!("cannot check out {branch}"), e);
        self.inner
            .set_head(&format!("refs/heads/{branch}"))
            .map_err(err)?;
        let mut co = git2::build::CheckoutBuilder::new();
        co.force();
        self.inner.checkout_head(Some(&mut co)).map_err(err)
    }

    /// The top of the work tree, if the repository has one.
    pub fn workdir(&self) -> Option<PathBuf> {
        self.inner.workdir().map(Path::to_path_buf)
    }

    pub fn git_dir(&self) -> PathBuf {
        self.inner.path().to_path_buf()
    }

    pub fn is_shallow(&self) -> bool {
        self.inner.is_shallow()
    }

    /// A `git config` value (repository, then global and system), if set.
    pub fn config_string(&self, key: &str) -> Result<Option<String>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        match config.get_string(key) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(Error::input(format!(
                "git config {key} cannot be read: {}",
                e.message()
            ))),
        }
    }

    /// Resolves a revision to a commit; `None` when the revision does not exist.
    pub fn try_resolve_commit(&self, rev: &str) -> Result<Option<Oid>> {
        match self.inner.revparse_single(rev) {
            // A name that points at an object the database lists but cannot read: damage, not
            // a missing revision (a cut-short pack would otherwise read as "empty repository").
            Err(e) if e.class() == git2::ErrorClass::Odb || e.class() == git2::ErrorClass::Zlib => {
                let target = self
                    .inner
                    .resolve_reference_from_short_name(rev)
                    .ok()
                    .and_then(|r| r.resolve().ok())
                    .and_then(|r| r.target());
                let listed =
                    target.is_some_and(|id| self.inner.odb().is_ok_and(|odb| odb.exists(id)));
                match target {
                    Some(id) if listed => Err(Error::env(format!(
                        "{rev} points at {}, which cannot be read: {}",
                        Oid(id).short(),
                        e.message()
                    ))
                    .hint("the repository is damaged (a pack or object cut short?): git fsck names what is broken; fetch it again from another clone")),
                    Some(id) if !self.is_shallow() => Err(Error::env(format!(
                        "{rev} points at {}, which is not in the repository",
                        Oid(id).short()
                    ))
                    .hint("the repository is damaged or a partial clone: git fsck, or fetch the object again")),
                    _ => Ok(None),
                }
            }
            Ok(obj) => match obj.peel_to_commit() {
                Ok(c) => Ok(Some(Oid(c.id()))),
                Err(_) => Err(Error::input(format!("revision {rev} is not a commit"))),
            },
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::NotFound
                        | git2::ErrorCode::Ambiguous
                        | git2::ErrorCode::InvalidSpec
                ) || e.class() == git2::ErrorClass::Odb =>
            {
                Ok(None)
            }
            Err(e) => Err(git_err(format_args!("cannot resolve {rev}"), e)),
        }
    }

    /// Resolves a revision to a commit, or says which revision is unknown.
    pub fn resolve_commit(&self, rev: &str) -> Result<Oid> {
        self.try_resolve_commit(rev)?.ok_or_else(|| {
            let hint = if self.is_shallow() {
                "this is a shallow clone; the commit may lie beyond its depth (git fetch --deepen=N or --unshallow)"
            } else {
                "check the name with git rev-parse, or fetch it first"
            };
            Error::input(format!("unknown revision {rev}")).hint(hint)
        })
    }

    pub fn merge_base(&self, a: Oid, b: Oid) -> Option<Oid> {
        self.inner.merge_base(a.0, b.0).ok().map(Oid)
    }

    /// True when `ancestor` is `commit` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: Oid, commit: Oid) -> Result<bool> {
        if ancestor == commit {
            return Ok(true);
        }
        // Cheap common case first: the ancestor is a parent. A full graph search walks
        // the whole history.
        if let Ok(c) = self.inner.find_commit(commit.0)
            && c.parent_ids().any(|p| p == ancestor.0)
        {
            return Ok(true);
        }
        self.inner
            .graph_descendant_of(commit.0, ancestor.0)
            .map_err(|e| git_err("cannot compare commits", e))
    }

    /// The commits of `base..tip` on the first-parent chain, oldest first
    /// (what `git rev-list --first-parent --reverse base..tip` lists).
    pub fn first_parent_chain(&self, base: Oid, tip: Oid) -> Result<Vec<ChainCommit>> {
        // Usual case: the base is on the tip's first-parent chain. Follow parent pointers,
        // through git's commit-graph once the chain proves long (no commit inflated there).
        const GRAPH_AFTER: usize = 64;
        let mut out: Vec<ChainCommit> = Vec::new();
        let mut graph: Option<Option<CommitGraph>> = None;
        let mut pos: Option<u32> = None;
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if id == base {
                out.reverse();
                return Ok(out);
            }
            if out.len() == GRAPH_AFTER && graph.is_none() {
                graph = Some(self.commit_graph());
            }
            if let Some(Some(g)) = &graph
                && let Some(p) = pos.or_else(|| g.find(id.0.as_bytes()))
                && let Some(gc) = g.get(p)
                && gc.id == id.0.as_bytes()
            {
                let parent = gc
                    .first_parent
                    .and_then(|pp| g.get(pp).map(|pc| (pp, pc.id)));
                out.push(ChainCommit {
                    id,
                    tree: Oid::from_raw(&gc.tree),
                    first_parent: parent.map(|(_, pid)| Oid::from_raw(&pid)),
                    merge: gc.merge,
                    via_merge: None,
                });
                pos = parent.map(|(pp, _)| pp);
                cur = parent.map(|(_, pid)| Oid::from_raw(&pid));
                continue;
            }
            pos = None;
            let c = self.read_chain_commit(id)?;
            cur = c.first_parent;
            out.push(c);
        }
        // The base is off the chain (say, on a merged side branch): git's own meaning of
        // `--first-parent base..tip`, everything reachable from the base left out.
        let walk_err = |e| {
            git_err(
                format_args!("cannot walk {}..{}", base.short(), tip.short()),
                e,
            )
        };
        let mut walk = self.inner.revwalk().map_err(walk_err)?;
        walk.simplify_first_parent().map_err(walk_err)?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
            .map_err(walk_err)?;
        walk.push(tip.0).map_err(walk_err)?;
        walk.hide(base.0).map_err(walk_err)?;
        let mut chain = Vec::new();
        for id in walk {
            chain.push(self.read_chain_commit(Oid(id.map_err(walk_err)?))?);
        }
        Ok(chain)
    }

    fn read_chain_commit(&self, id: Oid) -> Result<ChainCommit> {
        let c = self.inner.find_commit(id.0).map_err(|e| {
            let hint = if self.is_shallow() {
                " (beyond this shallow clone's depth?)"
            } else {
                ""
            };
            git_err(format_args!("cannot read commit {}{hint}", id.short()), e)
        })?;
        Ok(ChainCommit {
            id,
            tree: Oid(c.tree_id()),
            first_parent: c.parent_id(0).ok().map(Oid),
            merge: c.parent_count() > 1,
            via_merge: None,
        })
    }

    /// The commits a merge brought in: its second parent's first-parent chain down to where
    /// it forked from the first parent, oldest first, each marked with the merge; commits the
    /// range's `base` already holds are left out.
    pub fn merged_side(&self, merge: Oid, base: Oid) -> Result<Vec<ChainCommit>> {
        let err = |e| git_err(format_args!("cannot read merge {}", merge.short()), e);
        let c = self.inner.find_commit(merge.0).map_err(err)?;
        let (Ok(first), Ok(second)) = (c.parent_id(0), c.parent_id(1)) else {
            return Ok(Vec::new());
        };
        let Some(fork) = self.merge_base(Oid(first), Oid(second)) else {
            return Ok(Vec::new());
        };
        let mut side = self.first_parent_chain(fork, Oid(second))?;
        let mut kept = Vec::with_capacity(side.len());
        for mut s in side.drain(..) {
            if !self.is_ancestor(s.id, base)? {
                s.via_merge = Some(merge);
                kept.push(s);
            }
        }
        Ok(kept)
    }

    /// git's commit-graph, unless history is rewritten by grafts, replace refs or a
    /// shallow boundary (git ignores its graph then too).
    fn commit_graph(&self) -> Option<CommitGraph> {
        let common = self.inner.commondir();
        if self.is_shallow() || common.join("info/grafts").exists() {
            return None;
        }
        if std::env::var_os("GIT_NO_REPLACE_OBJECTS").is_none()
            && self
                .inner
                .references_glob("refs/replace/*")
                .map(|mut r| r.next().is_some())
                .unwrap_or(true)
        {
            return None;
        }
        CommitGraph::open(&common.join("objects"))
    }

    /// Commits of the refs matching a glob (`refs/remotes/*/entire/checkpoints/v1`), by name.
    pub fn refs_matching(&self, glob: &str) -> Result<Vec<(String, Oid)>> {
        let refs = self
            .inner
            .references_glob(glob)
            .map_err(|e| git_err(format_args!("cannot list {glob}"), e))?;
        let mut out = Vec::new();
        for r in refs.flatten() {
            if let (Ok(name), Ok(c)) = (r.name(), r.peel_to_commit()) {
                out.push((name.to_string(), Oid(c.id())));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The versions of a file across the repository's branches (HEAD, local and
    /// remote-tracking), newest commit first: each commit that set `path` to new content, with
    /// that blob. At most `limit` commits are walked; the bool says whether the walk was cut.
    pub fn path_versions(&self, path: &str, limit: usize) -> Result<(Vec<(Oid, Oid)>, bool)> {
        let walk_err = |e| git_err(format_args!("cannot walk the history of {path}"), e);
        let mut walk = self.inner.revwalk().map_err(walk_err)?;
        walk.set_sorting(git2::Sort::TIME).map_err(walk_err)?;
        // An unborn HEAD or a repository without branches has nothing to walk.
        let _ = walk.push_head();
        for glob in ["refs/heads/*", "refs/remotes/*"] {
            walk.push_glob(glob).map_err(walk_err)?;
        }
        let mut look = PathLookup::new(path);
        let mut out: Vec<(Oid, Oid)> = Vec::new();
        for (n, id) in walk.enumerate() {
            if n >= limit {
                return Ok((out, true));
            }
            let Ok(id) = id else { continue };
            let Ok(c) = self.inner.find_commit(id) else {
                continue;
            };
            let Some(blob) = self.blob_at(&mut look, Oid(c.tree_id()))? else {
                continue;
            };
            let before = match c.parent(0) {
                Ok(p) => self.blob_at(&mut look, Oid(p.tree_id()))?,
                Err(_) => None,
            };
            if before != Some(blob) && !out.iter().any(|(_, b)| *b == blob) {
                out.push((Oid(id), blob));
            }
        }
        Ok((out, false))
    }

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

    pub fn commit_info(&self, id: Oid) -> Result<CommitInfo> {
        // Through the pack reader when it has the commit: no libgit2 object, no lock.
        if let Some((Kind::Commit, data)) = self.read_raw(id)?
            && let Some(info) = parse_commit(id, &data)
        {
            return Ok(info);
        }
        let c = self
            .inner
            .find_commit(id.0)
            .map_err(|e| git_err(format_args!("cannot read commit {}", id.short()), e))?;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let author = c.author();
        let committer = c.committer();
        Ok(CommitInfo {
            id,
            parents: c.parent_ids().map(Oid).collect(),
            tree: Oid(c.tree_id()),
            author_name: text(author.name_bytes()),
            author_email: text(author.email_bytes()),
            committer_name: text(committer.name_bytes()),
            committer_email: text(committer.email_bytes()),
            time: committer.when().seconds(),
            author_time: author.when().seconds(),
            summary: text(c.summary_bytes().unwrap_or_default()),
            message: text(c.message_bytes()),
        })
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

    /// The tree id of a commit.
    pub fn tree_of(&self, commit: Oid) -> Result<Oid> {
        let c = self
            .inner
            .find_commit(commit.0)
            .map_err(|e| git_err(format_args!("cannot read commit {}", commit.short()), e))?;
        Ok(Oid(c.tree_id()))
    }

    /// The blob at `path` in a tree, if the path names a file there.
    pub fn entry_at(&self, tree: Oid, path: &str) -> Result<Option<Entry>> {
        let tree = self
            .inner
            .find_tree(tree.0)
            .map_err(|e| git_err(format_args!("cannot read tree {}", tree.short()), e))?;
        match tree.get_path(Path::new(path)) {
            Ok(entry) if entry.kind() == Some(git2::ObjectType::Blob) => Ok(Some(Entry {
                blob: Oid(entry.id()),
            })),
            Ok(_) => Ok(None),
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

    /// Reads a blob's content.
    pub fn read_blob(&self, id: Oid) -> Result<Rc<Vec<u8>>> {
        match self.read_raw(id)? {
            Some((Kind::Blob, data)) => Ok(data),
            Some(_) => Err(Error::env(format!("object {} is not a blob", id.short()))),
            None => Err(Error::missing(format!(
                "blob {} is missing from the repository",
                id.short()
            ))),
        }
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
        let t = self
            .inner
            .find_tree(tree.0)
            .map_err(|e| git_err(format_args!("cannot read tree {}", tree.short()), e))?;
        match t.get_path(Path::new(path)) {
            Ok(e) => Ok(Some(Oid(e.id()))),
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

    /// Writes the files of a commit's tree into `dir` (which need not be this repository's
    /// worktree), with their modes.
    pub fn checkout_to(&self, commit: Oid, dir: &Path) -> Result<()> {
        let c = self
            .inner
            .find_commit(commit.0)
            .map_err(|e| git_err(format_args!("cannot read commit {}", commit.short()), e))?;
        let mut co = git2::build::CheckoutBuilder::new();
        co.target_dir(dir).force().recreate_missing(true);
        self.inner
            .checkout_tree(c.as_object(), Some(&mut co))
            .map_err(|e| {
                git_err(
                    format_args!("cannot write {} into {}", commit.short(), dir.display()),
                    e,
                )
            })
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

/// Parses a raw commit object (headers, blank line, message) like `git cat-file commit`.
fn parse_commit(id: Oid, data: &[u8]) -> Option<CommitInfo> {
    let text = String::from_utf8_lossy(data);
    let (head, message) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut tree = None;
    let mut parents = Vec::new();
    let mut author = None;
    let mut committer = None;
    for line in head.lines() {
        if line.starts_with(' ') {
            continue; // continuation of a multi-line header (gpgsig, mergetag)
        }
        let (key, value) = line.split_once(' ')?;
        match key {
            "tree" => tree = Some(Oid(git2::Oid::from_str(value).ok()?)),
            "parent" => parents.push(Oid(git2::Oid::from_str(value).ok()?)),
            "author" => author = Some(value),
            "committer" => committer = Some(value),
            _ => {}
        }
    }
    // `Name <email> 1700000000 +0000`
    let person = |v: &str| -> Option<(String, String, i64)> {
        let lt = v.find('<')?;
        let gt = lt + v[lt..].find('>')?;
        let when: i64 = v[gt + 1..].split_whitespace().next()?.parse().ok()?;
        Some((v[..lt].trim().to_string(), v[lt + 1..gt].to_string(), when))
    };
    let (an, ae, author_time) = person(author?)?;
    let (cn, ce, time) = person(committer?)?;
    let first_para = message.trim_start().split("\n\n").next().unwrap_or("");
    let summary = first_para.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(CommitInfo {
        id,
        parents,
        tree: tree?,
        author_name: an,
        author_email: ae,
        committer_name: cn,
        committer_email: ce,
        time,
        author_time,
        summary,
        message: message.to_string(),
    })
}

/// The notes ref git sage writes; never another tool's.
pub const NOTES_REF: &str = "refs/notes/sage";

impl Repo {
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

    /// A notes ref that names something other than a commit is not ours to overwrite.
    fn check_notes_ref(&self) -> Result<()> {
        match self.inner.find_reference(NOTES_REF) {
            Ok(r) => match r.peel(git2::ObjectType::Any) {
                Ok(obj) if obj.kind() == Some(git2::ObjectType::Commit) => Ok(()),
                Ok(obj) => Err(Error::input(format!(
                    "{NOTES_REF} points at a {} ({}), not a notes commit",
                    obj.kind().map_or("object", |k| k.str()),
                    Oid(obj.id()).short()
                ))
                .hint(format!("inspect it with `git show {NOTES_REF}`; move it aside with `git update-ref -d {NOTES_REF}` if it is not needed"))),
                Err(e) => Err(git_err(format_args!("cannot read {NOTES_REF}"), e)),
            },
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(()),
            Err(e) => Err(git_err(format_args!("cannot read {NOTES_REF}"), e)),
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

    /// A config value with where it came from (`local`, `global`, `system`, …).
    pub fn config_entry(&self, key: &str) -> Result<Option<(String, String)>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        let entries = match config.entries(Some(&regex_escape(key))) {
            Ok(e) => e,
            Err(_) => return Ok(None),
        };
        let mut last = None;
        let mut entries = entries;
        while let Some(Ok(e)) = entries.next() {
            if e.name().is_ok_and(|n| n.eq_ignore_ascii_case(key)) {
                let level = match e.level() {
                    git2::ConfigLevel::System => "system",
                    git2::ConfigLevel::XDG | git2::ConfigLevel::Global => "global",
                    git2::ConfigLevel::Local => "local",
                    git2::ConfigLevel::Worktree => "worktree",
                    _ => "other",
                };
                last = Some((
                    String::from_utf8_lossy(e.value_bytes()).into_owned(),
                    level.to_string(),
                ));
            }
        }
        Ok(last)
    }

    /// Every value of a multi-valued config key.
    pub fn config_all(&self, key: &str) -> Result<Vec<String>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        let mut out = Vec::new();
        if let Ok(mut entries) = config.multivar(key, None) {
            while let Some(Ok(e)) = entries.next() {
                out.push(String::from_utf8_lossy(e.value_bytes()).into_owned());
            }
        }
        Ok(out)
    }

    /// Adds a value to a multi-valued key of the repository's config.
    pub fn config_add(&self, key: &str, value: &str) -> Result<()> {
        self.local_config()?
            .set_multivar(key, "^$", value)
            .map_err(|e| git_err(format_args!("cannot set {key}"), e))
    }

    /// The repository's own config file (`.git/config`), for writing.
    fn local_config(&self) -> Result<git2::Config> {
        self.inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?
            .open_level(git2::ConfigLevel::Local)
            .map_err(|e| git_err("cannot open the repository config", e))
    }

    /// Removes one value of a multi-valued key of the repository's config.
    pub fn config_remove(&self, key: &str, value: &str) -> Result<()> {
        let mut local = self.local_config()?;
        match local.remove_multivar(key, &format!("^{}$", regex_escape(value))) {
            Ok(()) => Ok(()),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(()),
            Err(e) => Err(git_err(format_args!("cannot unset {key}"), e)),
        }
    }

    /// Where hooks run: `core.hooksPath` (relative to the work tree), else the git dir's hooks/.
    pub fn hooks_dir(&self) -> Result<PathBuf> {
        if let Some(p) = self.config_string("core.hooksPath")? {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                return Ok(p);
            }
            let base = self.workdir().unwrap_or_else(|| self.git_dir());
            return Ok(base.join(p));
        }
        Ok(self.inner.commondir().join("hooks"))
    }

    pub fn is_bare(&self) -> bool {
        self.inner.is_bare()
    }

    /// `MERGE_HEAD` during a merge.
    pub fn merge_head(&self) -> Result<Option<Oid>> {
        let p = self.inner.path().join("MERGE_HEAD");
        match std::fs::read_to_string(&p) {
            Ok(t) => Ok(t
                .lines()
                .next()
                .and_then(|l| git2::Oid::from_str(l.trim()).ok())
                .map(Oid)),
            Err(_) => Ok(None),
        }
    }

    /// Paths staged in the index that differ from HEAD (added or modified).
    pub fn staged_paths(&self) -> Result<Vec<String>> {
        let err = |e| git_err("cannot read the index", e);
        let head_tree = self.inner.head().ok().and_then(|h| h.peel_to_tree().ok());
        let index = self.inner.index().map_err(err)?;
        let diff = self
            .inner
            .diff_tree_to_index(head_tree.as_ref(), Some(&index), None)
            .map_err(err)?;
        Ok(diff
            .deltas()
            .filter(|d| d.status() != git2::Delta::Deleted)
            .filter_map(|d| {
                d.new_file()
                    .path()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
            })
            .collect())
    }

    /// `git notes copy` for refs/notes/sage (post-rewrite without notes.rewriteRef).
    pub fn copy_note(&self, from: Oid, to: Oid) -> Result<()> {
        let Some(text) = self.read_note(from)? else {
            return Ok(());
        };
        self.update_note(to, &|old| match old {
            None => text.clone(),
            Some(o) => crate::notes::merge_text(o, &text),
        })
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
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
