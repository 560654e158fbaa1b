//! The only module that touches git2: opens the repository and hands out owned values.
//! The rest of the crate sees this facade; the work is split by subject below it.

pub(crate) mod commit_graph;
mod commits;
mod config;
pub(crate) mod idhash;
pub(crate) mod loose;
mod notes;
mod objects;
pub mod pack;
#[cfg(test)]
pub(crate) mod testgit;
mod trees;
mod worktree;

use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pack::{PackReader, Packs};

pub(crate) use commits::mentions;
pub use commits::{ChainCommit, CommitInfo};
pub use config::parse_bool;
pub use notes::{NOTES_REF, NoteText};
pub use trees::{Entry, PathLookup, in_repo_path};

use crate::error::{Error, Result};

/// A git object id, owned and printable; keeps git2's type out of the other modules.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Oid(git2::Oid);

impl Oid {
    fn from_raw(bytes: &[u8]) -> Oid {
        Oid(git2::Oid::from_bytes(bytes).expect("20-byte object id"))
    }

    /// A full 40-digit hex name (a record's `vcs.revision`, a test's fixed id); `None` for
    /// anything else.
    pub fn from_hex(s: &str) -> Option<Oid> {
        (s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| git2::Oid::from_str(s).ok().map(Oid))
            .flatten()
    }

    /// The first seven hex digits, as git abbreviates.
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

/// An open repository. Not `Sync` (git2 is not); keep it on one thread, and give worker
/// threads a `WorkerSeed` to open their own.
pub struct Repo {
    inner: git2::Repository,
    packs: OnceCell<Arc<Packs>>,
    reader: RefCell<Option<PackReader>>,
    /// git's commit-graph, opened once (`None` inside: none, or history is rewritten).
    graph: OnceCell<Option<std::rc::Rc<commit_graph::CommitGraph>>>,
    /// Asked once: libgit2 looks at the shallow file on every call.
    shallow: OnceCell<bool>,
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

    /// Opens the repository containing `dir` to read its configuration only. Nothing reads
    /// objects through this handle, so the loose-object check of `discover` (which reads every
    /// loose object once) is not needed: a command that only wants `sage.*` settings does not
    /// pay for it.
    pub fn discover_config_only(dir: &Path) -> Option<Repo> {
        git2::Repository::discover(dir).ok().map(Repo::wrap)
    }

    fn wrap(inner: git2::Repository) -> Repo {
        Repo {
            inner,
            packs: OnceCell::new(),
            reader: RefCell::new(None),
            graph: OnceCell::new(),
            shallow: OnceCell::new(),
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

    /// The top of the work tree, if the repository has one.
    pub fn workdir(&self) -> Option<PathBuf> {
        self.inner.workdir().map(Path::to_path_buf)
    }

    /// The repository's `.git` directory.
    pub fn git_dir(&self) -> PathBuf {
        self.inner.path().to_path_buf()
    }

    /// Whether this clone is shallow (history cut at some depth).
    pub fn is_shallow(&self) -> bool {
        *self.shallow.get_or_init(|| self.inner.is_shallow())
    }
}
