//! The range under study: base detection, the first-parent commits, and which are the agent's.

use regex::Regex;

use crate::error::{Error, Result};
use crate::git::{ChainCommit, CommitInfo, Oid, PathLookup, Repo};

/// Where the base came from, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BaseSource {
    /// `--base REV`.
    Flag(String),
    /// merge-base of the tip with `git config sage.base`.
    Config(String),
    /// merge-base of the tip with the default branch found (origin/HEAD, main, master).
    DefaultBranch(String),
}

impl BaseSource {
    pub(crate) fn describe(&self) -> String {
        match self {
            BaseSource::Flag(rev) => format!("--base {rev}"),
            BaseSource::Config(rev) => format!("merge-base with {rev} (git config sage.base)"),
            BaseSource::DefaultBranch(rev) => format!("merge-base with {rev}"),
        }
    }
}

/// `base..tip` along first parents, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Range {
    pub base: Oid,
    pub tip: Oid,
    pub tip_name: String,
    pub base_source: BaseSource,
    /// Oldest first; never empty.
    pub commits: Vec<ChainCommit>,
    /// The blob at a watched path in each commit's tree, looked up while the walk read the
    /// commits (see [`resolve_watching`]); a cache, `None` when nothing was watched.
    pub looked: Option<PathLookup>,
}

/// The first-parent walk, with a worker looking up `path` in each tree it reads. The worker's
/// lookups are only a cache: should one fail, none are kept, and provenance makes them (and
/// reports the error) itself.
fn walk_watching(
    repo: &Repo,
    base: Oid,
    tip: Oid,
    path: &str,
) -> Result<(Vec<ChainCommit>, Option<PathLookup>)> {
    let seed = repo.worker_seed();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<Oid>();
        let worker = s.spawn(move || -> Result<PathLookup> {
            let repo = Repo::from_seed(seed)?;
            let mut look = PathLookup::new(path);
            for tree in rx {
                repo.blob_at(&mut look, tree)?;
            }
            Ok(look)
        });
        // A send fails only once the worker has stopped on an error: then nothing is kept.
        let chain = repo.first_parent_chain_with(base, tip, &mut |c| {
            let _ = tx.send(c.tree);
        });
        drop(tx);
        let looked = worker.join().ok().and_then(Result::ok);
        Ok((chain?, looked))
    })
}

/// Default branches tried, in order, when neither `--base` nor `sage.base` is set.
const DEFAULT_BRANCHES: [&str; 3] = ["origin/HEAD", "main", "master"];

/// Resolves the range from the user's tip (default `HEAD`), `--base`, else `sage.base`
/// (`base_setting`), else a default branch.
pub(crate) fn resolve(
    repo: &Repo,
    tip_rev: Option<&str>,
    base_rev: Option<&str>,
    base_setting: Option<&str>,
) -> Result<Range> {
    resolve_watching(repo, tip_rev, base_rev, base_setting, None)
}

/// `resolve`, and where the walk has to read every commit (no commit-graph), the blob at
/// `watch` in each commit's tree is looked up on another thread while it does: provenance
/// needs those, and the two take about as long, so the range costs the longer of the two
/// instead of their sum.
pub(crate) fn resolve_watching(
    repo: &Repo,
    tip_rev: Option<&str>,
    base_rev: Option<&str>,
    base_setting: Option<&str>,
    watch: Option<&str>,
) -> Result<Range> {
    let tip_name = tip_rev.unwrap_or("HEAD").to_string();
    let tip = repo.try_resolve_commit(&tip_name)?.ok_or_else(|| {
        if tip_name == "HEAD" {
            Error::input("HEAD does not point at a commit (empty repository?)")
                .hint("commit something first, or name the branch to analyse")
        } else {
            Error::input(format!("unknown revision {tip_name}"))
                .hint("name a branch, tag or commit of this repository")
        }
    })?;

    let (base, base_source) = if let Some(rev) = base_rev {
        (repo.resolve_commit(rev)?, BaseSource::Flag(rev.to_string()))
    } else if let Some(rev) = base_setting.map(str::to_string) {
        let other = repo.resolve_commit(&rev).map_err(|_| {
            Error::input(format!(
                "git config sage.base names {rev}, which does not resolve"
            ))
            .hint("git config sage.base <branch>, or pass --base")
        })?;
        let base = repo.merge_base(tip, other).ok_or_else(|| {
            Error::input(format!(
                "{tip_name} and {rev} (git config sage.base) share no history"
            ))
            .hint("pass --base with the commit the agent's branch started from")
        })?;
        (base, BaseSource::Config(rev))
    } else {
        default_base(repo, tip, &tip_name)?
    };

    let (commits, looked) = match watch
        .filter(|_| !repo.has_commit_graph() && crate::history::parallel::workers() > 1)
    {
        Some(path) => walk_watching(repo, base, tip, path)?,
        None => (repo.first_parent_chain(base, tip)?, None),
    };
    // Checked after the walk: when the oldest commit's parent is the base (the usual case)
    // this costs nothing, where a graph search up front would walk all of history.
    // A base off the first-parent chain (on a merged branch) is fine when the tip reaches it:
    // the range is `base..tip` as git defines it.
    let ancestor = match commits.first() {
        Some(oldest) => oldest.first_parent == Some(base) || repo.is_ancestor(base, tip)?,
        None => base == tip,
    };
    if !ancestor {
        return Err(Error::input(format!(
            "base {} is not an ancestor of {tip_name}",
            match &base_source {
                BaseSource::Flag(rev) => rev.clone(),
                other => other.describe(),
            }
        ))
        .hint(if repo.is_shallow() {
            "this is a shallow clone: the base may lie beyond its depth (git fetch --deepen=N or --unshallow); else pass --base with the commit the agent's branch started from"
        } else {
            "pass --base with the commit the agent's branch started from (git merge-base main <branch>)"
        }));
    }
    if commits.is_empty() {
        return Err(Error::input(format!(
            "the range {}..{tip_name} holds no commits ({}, base {})",
            base.short(),
            base_source.describe(),
            base.short()
        ))
        .hint("pass --base with the commit the agent's branch started from"));
    }
    Ok(Range {
        base,
        tip,
        tip_name,
        base_source,
        commits,
        looked,
    })
}

fn default_base(repo: &Repo, tip: Oid, tip_name: &str) -> Result<(Oid, BaseSource)> {
    let mut tried = Vec::new();
    for name in DEFAULT_BRANCHES {
        let Some(other) = repo.try_resolve_commit(name)? else {
            continue;
        };
        tried.push(name);
        if let Some(base) = repo.merge_base(tip, other) {
            // On the default branch itself the merge-base is the tip: try the next candidate.
            if base != tip {
                return Ok((base, BaseSource::DefaultBranch(name.to_string())));
            }
        }
    }
    let why = if tried.is_empty() {
        "no origin/HEAD, main or master to take the merge-base with".to_string()
    } else {
        format!("{tip_name} is not ahead of {}", tried.join(" or "))
    };
    Err(
        Error::input(format!("cannot find the base of {tip_name}: {why}"))
            .hint("pass --base <rev> or set git config sage.base <branch>"),
    )
}

/// Tells agent commits from the others (`--agent` / `sage.agentPattern`).
#[derive(Debug, Clone)]
pub(crate) struct AgentMatcher {
    pattern: Option<Regex>,
}

impl AgentMatcher {
    /// Every commit is the agent's.
    pub(crate) fn everyone() -> Self {
        AgentMatcher { pattern: None }
    }

    /// A regex over author, committer and `Co-authored-by:`; `origin` names where it came from.
    pub(crate) fn new(pattern: &str, origin: &str) -> Result<Self> {
        let re = Regex::new(pattern).map_err(|e| {
            let msg = e.to_string();
            let last = msg.lines().last().unwrap_or("invalid").trim().to_string();
            Error::input(format!(
                "{origin}: {pattern:?} is not a valid regex: {last}"
            ))
        })?;
        Ok(AgentMatcher { pattern: Some(re) })
    }

    /// From the flag, else `sage.agentPattern` (`setting`), else everyone.
    pub(crate) fn from_settings(flag: Option<&str>, setting: Option<&str>) -> Result<Self> {
        if let Some(p) = flag {
            return Self::new(p, "--agent");
        }
        match setting {
            Some(p) => Self::new(p, "git config sage.agentPattern"),
            None => Ok(Self::everyone()),
        }
    }

    /// Whether telling agent from other commits needs each commit's author and message.
    pub(crate) fn needs_commit_info(&self) -> bool {
        self.pattern.is_some()
    }

    /// Whether a commit is an agent write. Merge commits never are: what they bring in was
    /// written on the other side of the merge.
    pub(crate) fn is_agent(&self, c: &CommitInfo) -> bool {
        if c.parents.len() > 1 {
            return false;
        }
        let Some(re) = &self.pattern else {
            return true;
        };
        let author = format!("{} <{}>", c.author_name, c.author_email);
        let committer = format!("{} <{}>", c.committer_name, c.committer_email);
        re.is_match(&author)
            || re.is_match(&committer)
            || c.co_authors().iter().any(|who| re.is_match(who))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::testgit::git;

    /// The lookups made beside the walk are the walk's commits' blobs at the path, as git
    /// names them, through edits, commits that leave the file alone, a deletion and its
    /// return.
    #[test]
    fn lookups_beside_the_walk_are_gits_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        std::fs::create_dir_all(d.join("a")).unwrap();
        std::fs::write(d.join("other.txt"), "0").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "base"]);
        for i in 0..40 {
            match i % 5 {
                0 | 3 => std::fs::write(d.join("a/b.txt"), format!("v{i}\n")).unwrap(),
                4 if i == 19 => std::fs::remove_file(d.join("a/b.txt")).unwrap(),
                _ => std::fs::write(d.join("other.txt"), format!("{i}")).unwrap(),
            }
            git(d, &["add", "-A"]);
            git(
                d,
                &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
            );
        }
        let repo = Repo::discover(d).unwrap();
        let tip = repo.resolve_commit("HEAD").unwrap();
        let base = repo.resolve_commit("HEAD~40").unwrap();
        let (chain, looked) = walk_watching(&repo, base, tip, "a/b.txt").unwrap();
        assert_eq!(chain, repo.first_parent_chain(base, tip).unwrap());
        let mut looked = looked.expect("the worker's lookups");
        assert!(looked.is_for("a/b.txt") && looked.is_for("a//b.txt"));
        assert!(!looked.is_for("a/b") && !looked.is_for("a/b.txt/c") && !looked.is_for("b.txt"));
        let mut present = 0;
        for c in &chain {
            assert!(
                looked.knows(c.tree),
                "{} was looked up beside the walk",
                c.id.short()
            );
            let theirs = std::process::Command::new("git")
                .current_dir(d)
                .args([
                    "rev-parse",
                    "-q",
                    "--verify",
                    &format!("{}:a/b.txt", c.id.hex()),
                ])
                .output()
                .unwrap();
            let theirs = String::from_utf8(theirs.stdout).unwrap();
            let ours = repo.blob_at(&mut looked, c.tree).unwrap();
            assert_eq!(ours.map(|b| b.hex()).unwrap_or_default(), theirs.trim());
            present += usize::from(ours.is_some());
        }
        assert!(present > 0 && present < chain.len(), "{present}");
    }
}
