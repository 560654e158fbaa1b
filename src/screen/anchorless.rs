//! Anchor-less mode (`--find-anchor bandit|semgrep|screen`, `sage.scanner`): without a
//! confirmed finding, take the strongest result over the files the range changed as the
//! anchor, marked unconfirmed. It lives above screening because `screen` is one of its
//! sources; the external scanners come from `crate::scanners`.

use std::path::PathBuf;

use super::{Options, screen};
use crate::anchor::{Anchor, AnchorKind, AnchorSource, Locator};
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::history::range::Range;
use crate::scanners::{self, Kind, Scratch};
use crate::settings::Scanner;

/// What a scanner made of the range: its strongest result, or nothing (and what it looked at).
pub(crate) enum Scan {
    Found(Box<Anchor>),
    Nothing(String),
}

/// The strongest result as the anchor; a scanner that finds nothing is bad input here, as
/// the user asked for an anchor (`--find-anchor`).
pub(crate) fn find_anchor(
    repo: &Repo,
    range: &Range,
    scanner: Scanner,
    templates_dir: Option<PathBuf>,
    task_cwe: Option<u32>,
) -> Result<Anchor> {
    match scan(repo, range, scanner, templates_dir, task_cwe)? {
        Scan::Found(a) => Ok(*a),
        Scan::Nothing(why) => Err(Error::input(why).hint("pass --finding with a confirmed defect")),
    }
}

/// Runs `scanner` over the files the range changed. Finding nothing is an answer, not a
/// failure: the hooks say it as such (a scanner that cannot run is an error).
pub(crate) fn scan(
    repo: &Repo,
    range: &Range,
    scanner: Scanner,
    templates_dir: Option<PathBuf>,
    task_cwe: Option<u32>,
) -> Result<Scan> {
    let kind = match scanner {
        Scanner::Screen => return top_candidate(repo, range, templates_dir, task_cwe),
        Scanner::Bandit => Kind::Bandit,
        Scanner::Semgrep => Kind::Semgrep,
    };
    let scanner = kind.name();
    let base_tree = repo.tree_of(range.base)?;
    let tip_tree = range.commits.last().map_or(base_tree, |c| c.tree);
    let tree = Scratch::of_changes(repo, base_tree, tip_tree)?;
    let files = tree.files();
    if files == 0 {
        return Ok(Scan::Nothing(
            "the range changes no files that exist at the tip, so there is nothing to scan".into(),
        ));
    }
    let installed = scanners::probe(kind).ok_or_else(|| {
        Error::env(format!("{scanner} is not installed")).hint(match kind {
            Kind::Bandit => "pip install bandit, or pass --finding",
            Kind::Semgrep => "pip install semgrep, or pass --finding",
        })
    })?;
    let out = installed
        .start(&tree)
        .and_then(scanners::Running::finish)
        .map_err(|e| Error::env(format!("cannot run {scanner}: {e}")))?;
    let results = installed.results(&out, &tree).map_err(|e| {
        let err = String::from_utf8_lossy(&out.stderr);
        Error::env(format!(
            "{scanner} gave no readable report ({e}): {}",
            err.lines().last().unwrap_or("").trim()
        ))
    })?;
    // Most severe first; ties broken by position for a stable choice.
    let best = results
        .into_iter()
        .enumerate()
        .max_by_key(|(i, r)| (r.severity, std::cmp::Reverse(*i)))
        .map(|(_, r)| r);
    let Some(best) = best else {
        return Ok(Scan::Nothing(format!(
            "{scanner} found nothing in the {files} file(s) the range changed"
        )));
    };
    let mut anchors = crate::finding::to_anchors(vec![best], installed.kind.format(), scanner)?;
    let mut a = anchors.remove(0);
    a.id = format!("unconfirmed:{}", a.id);
    Ok(Scan::Found(Box::new(a)))
}

/// `screen`: the strongest candidate of the range, as an unconfirmed anchor on its lines.
/// `task_cwe` is the weakness the user named (`--cwe`), which screening then looks for.
fn top_candidate(
    repo: &Repo,
    range: &Range,
    templates_dir: Option<PathBuf>,
    task_cwe: Option<u32>,
) -> Result<Scan> {
    let opts = Options {
        templates_dir,
        task_cwe,
        ..Options::default()
    };
    let doc = screen(repo, range, &opts)?;
    let Some(c) = doc.candidates.first() else {
        return Ok(Scan::Nothing(format!(
            "git sage screen found no candidate among the {} Python file(s) the range changed",
            doc.counts.files
        )));
    };
    Ok(Scan::Found(Box::new(Anchor {
        id: format!("unconfirmed:screen:{}:{}", c.path, c.start),
        cwe: c.cwe,
        class: None,
        file: c.path.clone(),
        locator: Locator::Lines {
            start: c.start,
            end: c.end,
            snippet: None,
        },
        kind: AnchorKind::Present,
        description: Some(format!(
            "screen candidate, R {:.1}: {}",
            c.score,
            c.reasons.join("; ")
        )),
        source: AnchorSource {
            format: "screen",
            tool: Some("git-sage screen".into()),
            rule: None,
            path: None,
            index: None,
            said: None,
            security_severity: None,
        },
        unconfirmed: true,
    })))
}
