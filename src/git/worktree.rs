//! The work tree and what sits beside it: the index, checkouts, the hooks directory, MERGE_HEAD,
//! and the writer of demo and test repositories (`init`, `commit_files`).

use std::path::{Path, PathBuf};

use super::{Oid, Repo, git_err};
use crate::error::Result;

impl Repo {
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
}
