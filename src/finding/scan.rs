//! Anchor-less mode (`--find-anchor bandit|semgrep`): run a scanner on the files the range
//! changed and take its most severe result as the anchor, marked unconfirmed. Scanners parse
//! the files; they do not run them.

use std::process::Command;

use super::{ScanResult, to_anchors};
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::history::range::Range;
use crate::model::Anchor;

/// The command that runs a scanner here, if any: its own executable, else the Python module.
pub fn scanner_command(name: &str) -> Option<Vec<String>> {
    let works = |cmd: &[&str]| {
        Command::new(cmd[0])
            .args(&cmd[1..])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(&[name, "--version"]) {
        return Some(vec![name.to_string()]);
    }
    if name == "bandit" && works(&["python3", "-m", "bandit", "--version"]) {
        return Some(vec!["python3".into(), "-m".into(), "bandit".into()]);
    }
    None
}

pub fn find_anchor(repo: &Repo, range: &Range, scanner: &str) -> Result<Anchor> {
    if scanner == "screen" {
        return crate::screen::top_anchor(repo, range);
    }
    let base_tree = repo.tree_of(range.base)?;
    let tip_tree = range.commits.last().map_or(base_tree, |c| c.tree);
    let dir = tempfile::tempdir()
        .map_err(|e| Error::env(format!("cannot make a scratch directory: {e}")))?;
    let mut files = 0;
    for p in repo.changed_paths(base_tree, tip_tree)? {
        if let Some(bytes) = repo.file_in_tree(tip_tree, &p)? {
            let dest = dir.path().join(&p);
            std::fs::create_dir_all(dest.parent().expect("a file has a parent"))
                .map_err(|e| Error::env(format!("cannot write {}: {e}", dest.display())))?;
            std::fs::write(&dest, &*bytes)
                .map_err(|e| Error::env(format!("cannot write {}: {e}", dest.display())))?;
            files += 1;
        }
    }
    if files == 0 {
        return Err(Error::input(
            "the range changes no files that exist at the tip, so there is nothing to scan",
        )
        .hint("pass --finding with a confirmed defect"));
    }
    let cmd = scanner_command(scanner).ok_or_else(|| {
        Error::env(format!("{scanner} is not installed")).hint(if scanner == "bandit" {
            "pip install bandit, or pass --finding"
        } else {
            "pip install semgrep, or pass --finding"
        })
    })?;
    let root = dir.path().to_string_lossy().into_owned();
    let mut c = Command::new(&cmd[0]);
    c.args(&cmd[1..]);
    match scanner {
        "bandit" => c.args(["-f", "json", "-q", "-r", &root]),
        _ => c.args([
            "scan",
            "--json",
            "--quiet",
            "--config",
            &std::env::var("SAGE_SEMGREP_CONFIG").unwrap_or_else(|_| "auto".into()),
            &root,
        ]),
    };
    let out = c
        .output()
        .map_err(|e| Error::env(format!("cannot run {scanner}: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let results: Vec<ScanResult> = match scanner {
        "bandit" => super::bandit::parse(&text, scanner),
        _ => super::semgrep::parse(&text, scanner),
    }
    .map_err(|e| {
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
        .map(|(_, r)| r)
        .ok_or_else(|| {
            Error::input(format!(
                "{scanner} found nothing in the {files} file(s) the range changed"
            ))
            .hint("pass --finding with a confirmed defect")
        })?;
    let mut r = best;
    if let Some(f) = &r.file {
        let f = f.replace('\\', "/");
        r.file = Some(
            f.strip_prefix(&format!("{}/", root.trim_end_matches('/')))
                .unwrap_or(&f)
                .to_string(),
        );
    }
    let mut anchors = to_anchors(
        vec![r],
        if scanner == "bandit" {
            "bandit-json"
        } else {
            "semgrep-json"
        },
        scanner,
    )?;
    let mut a = anchors.remove(0);
    a.id = format!("unconfirmed:{}", a.id);
    Ok(a)
}
