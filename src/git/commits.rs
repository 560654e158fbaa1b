//! Commits: parsing, revision resolution, ancestry, first-parent chains and merged sides,
//! refs, and the versions of a path across branches.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};

use super::commit_graph::CommitGraph;
use super::pack::Kind;
use super::trees::PathLookup;
use super::{Oid, Repo, git_err};
use crate::error::{Error, Result};

/// What git2 tells about a commit, as plain owned data.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    /// The commit.
    pub id: Oid,
    /// Its parents, first parent first.
    pub parents: Vec<Oid>,
    /// Its root tree.
    pub tree: Oid,
    /// The author's name.
    pub author_name: String,
    /// The author's email.
    pub author_email: String,
    /// The committer's name.
    pub committer_name: String,
    /// The committer's email.
    pub committer_email: String,
    /// Seconds since the epoch, committer time.
    pub time: i64,
    /// Seconds since the epoch, author time: kept by a rebase, a cherry-pick or an amend, so
    /// closer to when the change was made.
    pub author_time: i64,
    /// The first paragraph of the message, on one line.
    pub summary: String,
    /// The whole message.
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

/// A commit of a first-parent chain, with what the history walk needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainCommit {
    /// The commit.
    pub id: Oid,
    /// Its root tree.
    pub tree: Oid,
    /// Its first parent, if any.
    pub first_parent: Option<Oid>,
    /// Whether it has more than one parent.
    pub merge: bool,
    /// For a commit of a merged side branch: the first-parent merge that brought it in.
    pub via_merge: Option<Oid>,
}

/// How many commits a long pass reads between letting go of the pack pages it mapped
/// (`Repo::release_pack_pages`): its resident set stays near git's for the same question.
const RELEASE_EVERY: usize = 2048;

/// The same for the walk up a first-parent chain without a commit-graph: its commits lie
/// side by side in the pack, so letting go more often only has them faulted in again.
const CHAIN_RELEASE_EVERY: usize = 4096;

/// The fewest commits a thread of the commit-graph's pass takes: below it a thread costs more
/// than it saves. Small in tests, so that theirs run over threads too.
const MIN_STRETCH: usize = if cfg!(test) { 4 } else { 4096 };

impl Repo {
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

    /// The best common ancestor of two commits, if they share history.
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
        self.first_parent_chain_with(base, tip, &mut |_| {})
    }

    /// `first_parent_chain`, telling `seen` of each commit as the walk reads it (newest
    /// first), so other work can start on it while the walk goes on.
    pub fn first_parent_chain_with(
        &self,
        base: Oid,
        tip: Oid,
        seen: &mut dyn FnMut(&ChainCommit),
    ) -> Result<Vec<ChainCommit>> {
        // Usual case: the base is on the tip's first-parent chain. Follow parent pointers,
        // through git's commit-graph once the chain proves long (no commit inflated there).
        const GRAPH_AFTER: usize = 64;
        let mut out: Vec<ChainCommit> = Vec::new();
        let mut graph: Option<Option<std::rc::Rc<CommitGraph>>> = None;
        let mut pos: Option<u32> = None;
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if id == base {
                out.reverse();
                return Ok(out);
            }
            if (out.len() + 1).is_multiple_of(CHAIN_RELEASE_EVERY) {
                self.release_pack_pages();
            }
            if out.len() == GRAPH_AFTER && graph.is_none() {
                graph = Some(self.graph());
            }
            if let Some(Some(g)) = &graph
                && let Some((_, gc)) = match pos {
                    // The position came with the id from the child's parent field.
                    Some(p) => g.get(p).map(|gc| (p, gc)),
                    None => g
                        .find(id.0.as_bytes())
                        .and_then(|p| g.get(p).map(|gc| (p, gc)))
                        .filter(|(_, gc)| gc.id == id.0.as_bytes()),
                }
            {
                let parent = gc
                    .first_parent
                    .and_then(|pp| g.id_at(pp).map(|pid| (pp, Oid::from_raw(pid))));
                let c = ChainCommit {
                    id,
                    tree: Oid::from_raw(&gc.tree),
                    first_parent: parent.map(|(_, pid)| pid),
                    merge: gc.merge,
                    via_merge: None,
                };
                seen(&c);
                out.push(c);
                pos = parent.map(|(pp, _)| pp);
                cur = parent.map(|(_, pid)| pid);
                continue;
            }
            pos = None;
            let c = self.read_chain_commit(id)?;
            cur = c.first_parent;
            seen(&c);
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
            let c = self.read_chain_commit(Oid(id.map_err(walk_err)?))?;
            seen(&c);
            chain.push(c);
        }
        Ok(chain)
    }

    fn read_chain_commit(&self, id: Oid) -> Result<ChainCommit> {
        // From the mapped packs when they hold it: libgit2's commit lookup costs about twice
        // as much, most of it locks and a parse of fields the chain never uses.
        // Only the header is inflated (the message is most of a commit), unless it runs long.
        // A shallow clone's cut-off commits keep parents the clone lacks; libgit2 reads them
        // through the shallow file, so it reads them there.
        let shallow = self.is_shallow();
        if !shallow
            && let Some((super::pack::Kind::Commit, raw, whole)) = self.read_packed_head(id, 512)
            && let Some(c) = chain_commit(id, &raw, whole)
        {
            return Ok(c);
        }
        if !shallow
            && let Some((super::pack::Kind::Commit, raw)) = self.read_packed(id)
            && let Some(c) = chain_commit(id, &raw, true)
        {
            return Ok(c);
        }
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

    /// What git's changed-path filters say of each commit and `path`: `Some(false)` when the
    /// commit surely left the path (and its directories) as its first parent had them,
    /// `Some(true)` when it may have changed them, `None` when no filter covers the commit.
    /// `None` overall when the repository has no graph with filters.
    pub fn path_filters(&self, commits: &[Oid], path: &str) -> Option<Vec<Option<bool>>> {
        let graph = self.graph()?;
        if !graph.has_filters() {
            return None;
        }
        let keys = super::commit_graph::BloomKey::with_dirs(path);
        let mut out = vec![None; commits.len()];
        // Newest first along first parents: each commit's position is its child's first
        // parent's, so only a commit off that chain is searched for.
        let mut next: Option<u32> = None;
        for (i, c) in commits.iter().enumerate().rev() {
            let id = c.0.as_bytes();
            let at = next
                .and_then(|p| graph.get(p).filter(|g| g.id == id).map(|g| (p, g)))
                .or_else(|| graph.find(id).and_then(|p| graph.get(p).map(|g| (p, g))));
            let Some((pos, g)) = at else {
                next = None;
                continue;
            };
            out[i] = graph.maybe_changed(pos, &keys);
            next = g.first_parent;
        }
        Some(out)
    }

    /// Whether git's commit-graph is there (the first-parent walk reads no commit object).
    pub fn has_commit_graph(&self) -> bool {
        self.graph().is_some()
    }

    /// Whether git's commit-graph carries changed-path filters here.
    pub fn has_path_filters(&self) -> bool {
        self.graph().is_some_and(|g| g.has_filters())
    }

    /// The commit-graph, opened on first use and kept.
    fn graph(&self) -> Option<std::rc::Rc<CommitGraph>> {
        self.graph
            .get_or_init(|| self.commit_graph().map(std::rc::Rc::new))
            .clone()
    }

    /// Those of `commits` that `tip` does not reach (what `git rev-list COMMITS... ^TIP`
    /// lists of them). One walk for all: asking each commit in turn walks the shared history
    /// once per commit.
    pub fn unreached(&self, tip: Oid, commits: &[Oid]) -> Result<std::collections::HashSet<Oid>> {
        let mut out = std::collections::HashSet::new();
        if commits.is_empty() {
            return Ok(out);
        }
        let err = |e| {
            git_err(
                format_args!("cannot walk the history of {}", tip.short()),
                e,
            )
        };
        let mut walk = self.inner.revwalk().map_err(err)?;
        walk.hide(tip.0).map_err(err)?;
        for c in commits {
            walk.push(c.0).map_err(err)?;
        }
        let wanted: std::collections::HashSet<Oid> = commits.iter().copied().collect();
        for id in walk {
            let id = Oid(id.map_err(err)?);
            if wanted.contains(&id) {
                out.insert(id);
            }
        }
        Ok(out)
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

    /// HEAD's commit (none when unborn) and every local and remote-tracking branch's.
    fn branch_tips(&self) -> Result<Vec<Oid>> {
        let mut tips: Vec<Oid> = Vec::new();
        if let Ok(head) = self.inner.head()
            && let Ok(c) = head.peel_to_commit()
        {
            tips.push(Oid(c.id()));
        }
        for glob in ["refs/heads/*", "refs/remotes/*"] {
            tips.extend(self.refs_matching(glob)?.into_iter().map(|(_, id)| id));
        }
        Ok(tips)
    }

    /// The versions of a file across the repository's branches (HEAD, local and
    /// remote-tracking), newest commit first: each commit that set `path` to new content, with
    /// that blob. At most `limit` commits are walked; the bool says whether the walk was cut.
    /// `workers` threads may share the commit-graph's pass (`graph_rules_out`).
    pub fn path_versions(
        &self,
        path: &str,
        limit: usize,
        workers: usize,
    ) -> Result<(Vec<(Oid, Oid)>, bool)> {
        if self.graph_rules_out(path, workers)? {
            return Ok((Vec::new(), false));
        }
        // Newest commit first by committer time over every branch, as libgit2's time-sorted
        // walk goes, but through our own pack reader: libgit2 made an object of every commit,
        // and a repository without a commit-graph paid half a second for 20,000 of them.
        let mut look = PathLookup::new(path);
        let mut out: Vec<(Oid, Oid)> = Vec::new();
        let mut trees: std::collections::HashMap<Oid, Oid> = Default::default();
        let mut queue: BinaryHeap<(i64, Reverse<usize>, Oid)> = BinaryHeap::new();
        let mut parents_of: std::collections::HashMap<Oid, Vec<Oid>> = Default::default();
        let mut pushed = 0usize;
        let mut push =
            |id: Oid,
             queue: &mut BinaryHeap<(i64, Reverse<usize>, Oid)>,
             trees: &mut std::collections::HashMap<Oid, Oid>,
             parents_of: &mut std::collections::HashMap<Oid, Vec<Oid>>| {
                if trees.contains_key(&id) {
                    return;
                }
                // A commit that cannot be read is left out, as the walk before did.
                let Ok(c) = self.commit_brief(id, &[]) else {
                    return;
                };
                trees.insert(id, c.tree);
                parents_of.insert(id, c.parents);
                queue.push((c.time, Reverse(pushed), id));
                pushed += 1;
            };
        for tip in self.branch_tips()? {
            push(tip, &mut queue, &mut trees, &mut parents_of);
        }
        let mut n = 0usize;
        while let Some((_, _, id)) = queue.pop() {
            if n >= limit {
                return Ok((out, true));
            }
            n += 1;
            if n.is_multiple_of(RELEASE_EVERY) {
                self.release_pack_pages();
            }
            let parents = parents_of.remove(&id).unwrap_or_default();
            for &p in &parents {
                push(p, &mut queue, &mut trees, &mut parents_of);
            }
            let Some(blob) = self.blob_at(&mut look, trees[&id])? else {
                continue;
            };
            let before = match parents.first().and_then(|p| trees.get(p)) {
                Some(&t) => self.blob_at(&mut look, t)?,
                None => None,
            };
            if before != Some(blob) && !out.iter().any(|(_, b)| *b == blob) {
                out.push((id, blob));
            }
        }
        Ok((out, false))
    }

    /// Whether git's commit-graph shows that no commit of the branches `path_versions` walks
    /// ever set `path` to new content: every branch tip is in the graph (which then holds all
    /// their history), and each commit whose changed-path filter may hold the path has the
    /// same file there as its first parent. One pass over the graph's filters instead of a
    /// walk that reads every commit; `false` when the graph cannot tell.
    fn graph_rules_out(&self, path: &str, workers: usize) -> Result<bool> {
        let Some(graph) = self.graph().filter(|g| g.has_filters()) else {
            return Ok(false);
        };
        let tips = self.branch_tips()?;
        if tips.iter().any(|t| graph.find(t.0.as_bytes()).is_none()) {
            return Ok(false);
        }
        let keys = super::commit_graph::BloomKey::with_dirs(path);
        let mut maybe: Vec<(u64, u32)> = (0..graph.len())
            .filter(|&pos| graph.maybe_changed(pos, &keys) != Some(false))
            .map(|pos| (graph.date(pos).unwrap_or(0), pos))
            .collect();
        // Newest first, as history runs: a tree is stored as a delta against a nearby
        // version, which is then still in the reader's cache. Each thread takes one stretch.
        maybe.sort_unstable_by(|a, b| b.cmp(a));
        // Each commit's root tree and its first parent's; `None` where the graph cannot say.
        let trees: Vec<Option<(Oid, Option<Oid>)>> = maybe
            .iter()
            .map(|&(_, pos)| {
                let c = graph.get(pos)?;
                let parent = c.first_parent.and_then(|p| graph.get(p));
                Some((
                    Oid::from_raw(&c.tree),
                    parent.map(|p| Oid::from_raw(&p.tree)),
                ))
            })
            .collect();
        // Whether a stretch holds a commit that wrote the path, or one the graph cannot give.
        let written = |repo: &Repo, part: &[Option<(Oid, Option<Oid>)>], stop: &AtomicBool| {
            let mut look = PathLookup::new(path);
            for (k, &pair) in part.iter().enumerate() {
                if stop.load(Ordering::Relaxed) {
                    return Ok(true);
                }
                if (k + 1).is_multiple_of(RELEASE_EVERY) {
                    repo.release_pack_pages();
                }
                let Some((tree, parent)) = pair else {
                    return Ok(true);
                };
                let Some(blob) = repo.blob_at(&mut look, tree)? else {
                    continue;
                };
                let before = match parent {
                    Some(p) => repo.blob_at(&mut look, p)?,
                    None => None,
                };
                if before != Some(blob) {
                    stop.store(true, Ordering::Relaxed);
                    return Ok(true);
                }
            }
            Ok::<_, Error>(false)
        };
        let stop = AtomicBool::new(false);
        let per = trees.len().div_ceil(workers.clamp(1, 8)).max(MIN_STRETCH);
        let mut parts = trees.chunks(per);
        let mine = parts.next().unwrap_or(&[]);
        let found = std::thread::scope(|s| -> Result<bool> {
            let (written, stop) = (&written, &stop);
            let handles: Vec<_> = parts
                .map(|part| {
                    let seed = self.worker_seed();
                    s.spawn(move || written(&Repo::from_seed(seed)?, part, stop))
                })
                .collect();
            let mut found = written(self, mine, stop)?;
            for h in handles {
                found |= h
                    .join()
                    .map_err(|_| Error::env("a history worker thread panicked"))??;
            }
            Ok(found)
        })?;
        if found {
            return Ok(false);
        }
        Ok(true)
    }

    /// A commit's metadata and message.
    pub fn commit_info(&self, id: Oid) -> Result<CommitInfo> {
        // Through the pack reader when it has the commit: no libgit2 object, no lock.
        if let Some((Kind::Commit, data)) = self.read_packed_once(id)
            && let Some(info) = parse_commit(id, &data)
        {
            return Ok(info);
        }
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

    /// What placing a commit in a session needs of it, read for every commit of a range: ids,
    /// times and summary, and the message only when it mentions one of `keys` (ASCII case
    /// ignored) — its readers look in it for those alone. Names and emails are left empty.
    /// Keeping 46,000 messages and names no one reads was a third of the reading's time
    /// (allocation, page faults) and 40 MB.
    pub fn commit_brief(&self, id: Oid, keys: &[&str]) -> Result<CommitInfo> {
        if let Some((Kind::Commit, data)) = self.read_packed_once(id)
            && let Some(info) = parse_brief(id, &data, keys)
        {
            return Ok(info);
        }
        let mut info = self.commit_info(id)?;
        for s in [
            &mut info.author_name,
            &mut info.author_email,
            &mut info.committer_name,
            &mut info.committer_email,
        ] {
            *s = String::new();
        }
        if !keys.iter().any(|k| mentions(info.message.as_bytes(), k)) {
            info.message = String::new();
        }
        Ok(info)
    }

    /// A commit's metadata, or `None` when the repository does not have the commit: notes name
    /// commits by id only, so a note can outlive the commit it is on (a rewritten commit, once
    /// pruned) or lie beyond a shallow clone's depth.
    pub fn commit_if_present(&self, id: Oid) -> Result<Option<CommitInfo>> {
        match self.read_raw(id)? {
            None => Ok(None),
            Some((Kind::Commit, data)) => match parse_commit(id, &data) {
                Some(info) => Ok(Some(info)),
                None => self.commit_info(id).map(Some),
            },
            Some(_) => Ok(None),
        }
    }

    /// The branch `HEAD` names (`agent/fix-ssrf`), or `None` when it is detached or unborn.
    pub fn head_branch(&self) -> Option<String> {
        let head = self.inner.head().ok()?;
        if !head.is_branch() {
            return None;
        }
        head.shorthand().ok().map(str::to_string)
    }

    /// The tree id of a commit.
    pub fn tree_of(&self, commit: Oid) -> Result<Oid> {
        let c = self
            .inner
            .find_commit(commit.0)
            .map_err(|e| git_err(format_args!("cannot read commit {}", commit.short()), e))?;
        Ok(Oid(c.tree_id()))
    }
}

/// The first paragraph of a message, its words on one line.
fn summary_of(message: &str) -> String {
    let first_para = message.trim_start().split("\n\n").next().unwrap_or("");
    let mut summary = String::with_capacity(first_para.len());
    for word in first_para.split_whitespace() {
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str(word);
    }
    summary
}

/// Whether `text` holds `key`, ASCII case ignored.
pub(crate) fn mentions(text: &[u8], key: &str) -> bool {
    let k = key.as_bytes();
    let Some(&first) = k.first() else {
        return true;
    };
    memchr::memchr2_iter(first.to_ascii_lowercase(), first.to_ascii_uppercase(), text).any(|i| {
        text.get(i..i + k.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(k))
    })
}

/// A raw commit object's headers and message, as bytes.
struct Headers<'a> {
    tree: Oid,
    parents: Vec<Oid>,
    /// `Name <email> 1700000000 +0000`
    author: &'a [u8],
    committer: &'a [u8],
    message: &'a [u8],
}

/// Splits a raw commit object (headers, blank line, message) as `git cat-file commit` shows
/// it; `None` for what it cannot read (the callers fall back to libgit2).
fn headers(data: &[u8]) -> Option<Headers<'_>> {
    let (head, message) = match memchr::memmem::find(data, b"\n\n") {
        Some(i) => (&data[..i], &data[i + 2..]),
        None => (data, &b""[..]),
    };
    // As `str::lines` reads it: a last line break ends the last line, not an empty one.
    let head = head.strip_suffix(b"\n").unwrap_or(head);
    let oid = |v: &[u8]| Some(Oid(git2::Oid::from_str(std::str::from_utf8(v).ok()?).ok()?));
    let (mut tree, mut parents, mut author, mut committer) = (None, Vec::new(), None, None);
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.first() == Some(&b' ') {
            continue; // continuation of a multi-line header (gpgsig, mergetag)
        }
        let sp = memchr::memchr(b' ', line)?;
        let (key, value) = (&line[..sp], &line[sp + 1..]);
        match key {
            b"tree" => tree = Some(oid(value)?),
            b"parent" => parents.push(oid(value)?),
            b"author" => author = Some(value),
            b"committer" => committer = Some(value),
            _ => {}
        }
    }
    Some(Headers {
        tree: tree?,
        parents,
        author: author?,
        committer: committer?,
        message,
    })
}

/// A person header's name, email and seconds.
fn person(v: &[u8]) -> Option<(String, String, i64)> {
    let lt = memchr::memchr(b'<', v)?;
    let gt = lt + memchr::memchr(b'>', &v[lt..])?;
    let when = String::from_utf8_lossy(&v[gt + 1..]);
    let when: i64 = when.split_whitespace().next()?.parse().ok()?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Some((
        text(&v[..lt]).trim().to_string(),
        text(&v[lt + 1..gt]),
        when,
    ))
}

/// [`Repo::commit_brief`] from a raw commit object: no names, and the message kept only when
/// it mentions a key. Same answers as [`parse_commit`] for the fields it fills.
fn parse_brief(id: Oid, data: &[u8], keys: &[&str]) -> Option<CommitInfo> {
    let h = headers(data)?;
    let (_, _, author_time) = person(h.author)?;
    let (_, _, time) = person(h.committer)?;
    let text = String::from_utf8_lossy(h.message);
    let keep = keys.iter().any(|k| mentions(h.message, k));
    Some(CommitInfo {
        id,
        parents: h.parents,
        tree: h.tree,
        author_name: String::new(),
        author_email: String::new(),
        committer_name: String::new(),
        committer_email: String::new(),
        time,
        author_time,
        summary: summary_of(&text),
        message: if keep {
            text.into_owned()
        } else {
            String::new()
        },
    })
}

/// Parses a raw commit object (headers, blank line, message) like `git cat-file commit`.
fn parse_commit(id: Oid, data: &[u8]) -> Option<CommitInfo> {
    let h = headers(data)?;
    let (an, ae, author_time) = person(h.author)?;
    let (cn, ce, time) = person(h.committer)?;
    let message = String::from_utf8_lossy(h.message).into_owned();
    Some(CommitInfo {
        id,
        parents: h.parents,
        tree: h.tree,
        author_name: an,
        author_email: ae,
        committer_name: cn,
        committer_email: ce,
        time,
        author_time,
        summary: summary_of(&message),
        message,
    })
}

/// The tree and parents from a raw commit's header (`tree X`, then `parent X` lines, as
/// git-cat-file(1) prints it), given the commit or, when `whole` is false, its first bytes;
/// `None` when the header is not that shape or does not end within those bytes.
fn chain_commit(id: Oid, raw: &[u8], whole: bool) -> Option<ChainCommit> {
    let hex = |line: &[u8], key: &[u8]| {
        line.strip_prefix(key)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(Oid::from_hex)
    };
    let mut rest = raw;
    let mut line = || {
        let end = rest.iter().position(|b| *b == b'\n')?;
        let (l, r) = rest.split_at(end);
        rest = &r[1..];
        Some(l)
    };
    let tree = hex(line()?, b"tree ")?;
    let mut parents = Vec::new();
    loop {
        match line() {
            Some(l) if l.starts_with(b"parent ") => parents.push(hex(l, b"parent ")?),
            Some(_) => break,
            // A header cut off by the prefix may hold more parents.
            None if !whole => return None,
            None => break,
        }
    }
    Some(ChainCommit {
        id,
        tree,
        first_parent: parents.first().copied(),
        merge: parents.len() > 1,
        via_merge: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::testgit::{git, git_env};

    /// The brief read gives what the full parse gives for ids, times and summary, and keeps a
    /// message exactly when it mentions a key, in any case: signed and merge commits, no
    /// message, a message that is not UTF-8, CRLF headers.
    #[test]
    fn a_brief_read_agrees_with_the_full_parse() {
        let id = Oid::from_hex("1111111111111111111111111111111111111111").unwrap();
        let t = "2222222222222222222222222222222222222222";
        let p = "3333333333333333333333333333333333333333";
        let q = "4444444444444444444444444444444444444444";
        let head = format!(
            "tree {t}\nparent {p}\nparent {q}\nauthor A B <a@x> 1700000000 +0100\ncommitter C <c@x> 1700000500 -0200\n"
        );
        let signed = format!(
            "{head}gpgsig -----BEGIN PGP SIGNATURE-----\n abc\n -----END PGP SIGNATURE-----\n"
        );
        let keys = ["Sage-Turn", "# Aider chat conversation:"];
        let cases: Vec<(Vec<u8>, bool)> = vec![
            (
                format!("{head}\n  fix the\n  client\n\nbody\n").into_bytes(),
                false,
            ),
            (format!("{head}\nfix\n\nsage-TURN: 3\n").into_bytes(), true),
            (
                format!("{signed}\nfix\n\nSage-Turn: 3\n").into_bytes(),
                true,
            ),
            (
                format!("{head}\naider: x\n\n# Aider chat conversation:\n").into_bytes(),
                true,
            ),
            (head.clone().into_bytes(), false),
            (
                [format!("{head}\nf\u{e9}").as_bytes(), b"\xff\xfe\n"].concat(),
                false,
            ),
            (head.replace('\n', "\r\n").into_bytes(), false),
        ];
        for (raw, kept) in cases {
            let full = parse_commit(id, &raw).unwrap();
            let brief = parse_brief(id, &raw, &keys).unwrap();
            let shown = String::from_utf8_lossy(&raw).into_owned();
            assert_eq!(brief.parents, full.parents, "{shown}");
            assert_eq!(brief.tree, full.tree, "{shown}");
            assert_eq!(
                (brief.time, brief.author_time),
                (full.time, full.author_time)
            );
            assert_eq!(brief.summary, full.summary, "{shown}");
            assert!(brief.author_name.is_empty() && brief.committer_email.is_empty());
            let message = if kept {
                full.message.clone()
            } else {
                String::new()
            };
            assert_eq!(brief.message, message, "{shown}");
        }
        // What a full parse refuses, the brief one refuses too (both fall back to libgit2).
        let broken = format!("tree {t}\nauthor nobody\n\nmsg\n");
        assert!(parse_commit(id, broken.as_bytes()).is_none());
        assert!(parse_brief(id, broken.as_bytes(), &keys).is_none());
    }

    /// A commit-graph with changed-path filters proves a file was never written only when it
    /// was not: a file added and deleted again on a side branch, a file that never was, and a
    /// graph gone stale (a branch tip newer than it) give the walk's answer.
    #[test]
    fn the_graph_rules_a_file_out_only_when_no_branch_ever_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        let commit = |path: &str, text: Option<&str>, msg: &str| {
            match text {
                Some(t) => std::fs::write(d.join(path), t).unwrap(),
                None => std::fs::remove_file(d.join(path)).unwrap(),
            }
            git(d, &["add", "-A"]);
            git(d, &["commit", "-q", "-m", msg]);
        };
        for i in 0..20 {
            commit("f", Some(&format!("{i}\n")), &format!("c{i}"));
        }
        git(d, &["checkout", "-q", "-b", "side", "HEAD~5"]);
        commit("chat.md", Some("kept\n"), "keep");
        commit("chat.md", None, "drop");
        git(d, &["checkout", "-q", "main"]);
        git(
            d,
            &["commit-graph", "write", "--reachable", "--changed-paths"],
        );
        let repo = Repo::discover(d).unwrap();
        assert!(repo.has_path_filters());
        assert!(repo.graph_rules_out("never.md", 2).unwrap());
        assert!(!repo.graph_rules_out("chat.md", 2).unwrap());
        let (versions, _) = repo.path_versions("chat.md", 100, 2).unwrap();
        let kept = git(d, &["rev-parse", "side~1"]);
        assert_eq!(versions.len(), 1);
        assert_eq!(versions[0].0.hex(), kept.trim());
        assert!(repo.path_versions("never.md", 100, 2).unwrap().0.is_empty());
        // A tip the graph does not hold: it cannot tell.
        commit("f", Some("newer\n"), "newer than the graph");
        let repo = Repo::discover(d).unwrap();
        assert!(!repo.graph_rules_out("never.md", 2).unwrap());
        assert!(repo.path_versions("never.md", 100, 2).unwrap().0.is_empty());
    }

    /// Letting go of the mapped pack pages loses nothing: objects read before read the same
    /// after.
    #[test]
    fn pack_pages_released_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        for i in 0..5 {
            std::fs::write(d.join("f"), format!("{i}\n").repeat(1000)).unwrap();
            git(d, &["add", "f"]);
            git(d, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        git(d, &["gc", "-q"]);
        let repo = Repo::discover(d).unwrap();
        let tip = Oid::from_hex(git(d, &["rev-parse", "HEAD"]).trim()).unwrap();
        let before = repo.commit_info(tip).unwrap();
        let blob = repo
            .blob_at(&mut PathLookup::new("f"), before.tree)
            .unwrap()
            .unwrap();
        let text = repo.read_blob(blob).unwrap();
        repo.release_pack_pages();
        let after = repo.commit_info(tip).unwrap();
        assert_eq!((after.tree, after.message), (before.tree, before.message));
        assert_eq!(repo.read_blob(blob).unwrap(), text);
        assert_eq!(text.len(), 2000);
    }

    /// The walk for a file's versions goes newest commit first over every branch, whatever
    /// branch holds it: versions come in that order, each once, and a walk cut short says so.
    #[test]
    fn versions_come_newest_first_across_branches() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        let at = |when: u32, path: &str, text: &str, msg: &str| {
            std::fs::write(d.join(path), text).unwrap();
            git(d, &["add", "-A"]);
            let date = format!("@{} +0000", 1_700_000_000 + when * 100);
            let dates = [("GIT_AUTHOR_DATE", &*date), ("GIT_COMMITTER_DATE", &*date)];
            git_env(d, &["commit", "-q", "-m", msg], &dates);
            git(d, &["rev-parse", "HEAD"]).trim().to_string()
        };
        at(1, "chat.md", "one\n", "m1");
        let two = at(2, "chat.md", "two\n", "m2");
        at(3, "f", "x\n", "m3");
        git(d, &["checkout", "-q", "-b", "side", "HEAD~2"]);
        let three = at(4, "chat.md", "three\n", "s1");
        at(5, "f", "y\n", "s2");
        git(d, &["checkout", "-q", "main"]);
        // Back to an earlier text, later than everything: not a new version.
        at(6, "chat.md", "one\n", "m4");
        let repo = Repo::discover(d).unwrap();
        let (versions, cut) = repo.path_versions("chat.md", 100, 2).unwrap();
        let got: Vec<String> = versions.iter().map(|(c, _)| c.hex()).collect();
        let m4 = git(d, &["rev-parse", "main"]).trim().to_string();
        assert_eq!(got, [m4, three, two]);
        assert!(!cut);
        let (versions, cut) = repo.path_versions("chat.md", 2, 2).unwrap();
        assert!(cut);
        assert_eq!(versions.len(), 1);
    }

    /// The chain read from the packs is the one libgit2 reads, merges included, and the
    /// same as git's `rev-list --first-parent`.
    #[test]
    fn packed_chain_is_libgit2s() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        for i in 0..3 {
            std::fs::write(d.join("f"), format!("{i}\n")).unwrap();
            git(d, &["add", "f"]);
            git(d, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        git(d, &["checkout", "-q", "-b", "side", "HEAD~1"]);
        std::fs::write(d.join("g"), "side\n").unwrap();
        git(d, &["add", "g"]);
        git(d, &["commit", "-q", "-m", "side"]);
        git(d, &["checkout", "-q", "main"]);
        git(d, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
        git(d, &["repack", "-q", "-a", "-d"]);
        let repo = Repo::discover(d).unwrap();
        let tip = repo.resolve_commit("HEAD").unwrap();
        let base = repo.resolve_commit("HEAD~3").unwrap();
        let chain = repo.first_parent_chain(base, tip).unwrap();
        let ids: Vec<String> = chain.iter().map(|c| c.id.hex()).collect();
        let want = git(
            d,
            &["rev-list", "--first-parent", "--reverse", "HEAD~3..HEAD"],
        );
        assert_eq!(ids, want.lines().collect::<Vec<_>>());
        let mut heads = 0;
        for c in &chain {
            let (kind, raw) = repo.read_packed(c.id).expect("packed");
            assert_eq!(kind, super::super::pack::Kind::Commit);
            let g = repo.inner.find_commit(c.id.0).unwrap();
            let fast = chain_commit(c.id, &raw, true).unwrap();
            // cut inside the parents: unknown; cut after them: known
            assert!(chain_commit(c.id, &raw[..60], false).is_none());
            let header = raw.windows(10).position(|w| w == b"committer ").unwrap();
            assert_eq!(
                chain_commit(c.id, &raw[..header], false).unwrap().merge,
                c.merge
            );
            // a commit stored as a delta of another has no head of its own to read
            if let Some((_, head, whole)) = repo.read_packed_head(c.id, 120) {
                assert!(!whole && head == raw[..120]);
                heads += 1;
            }
            assert_eq!(fast.tree, Oid(g.tree_id()));
            assert_eq!(fast.first_parent, g.parent_id(0).ok().map(Oid));
            assert_eq!(fast.merge, g.parent_count() > 1);
        }
        assert!(heads > 0);
        assert!(chain.last().unwrap().merge);
        assert!(chain_commit(tip, b"author x\n", true).is_none());
    }
}
