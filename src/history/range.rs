//! The range under study: base detection, the first-parent commits, and which are the agent's.

use regex::Regex;

use crate::error::{Error, Result};
use crate::git::{ChainCommit, CommitInfo, Oid, Repo};

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

    let commits = repo.first_parent_chain(base, tip)?;
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
