//! The stages wired together: range → provenance → session → mapping, shared by the commands.

use crate::error::Result;
use crate::git::Repo;
use crate::history::provenance::{self, Provenance};
use crate::history::range::Range;
use crate::report::json::SessionJson;
use crate::transcript::discover::{self, Found};
use crate::transcript::mapping::{self, Mapping, Scope, WriteView};
use crate::transcript::{self, Transcript};

/// How hard to look for a session when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// Everything SPEC §3 lists (trailers need every commit's message).
    Full,
    /// Only places whose change shows between base and tip trees (no commit reads):
    /// `.sage/sessions/`, `.aider.chat.history.md`, `.specstory/history/`; everything for
    /// ranges of at most `FULL_DISCOVERY_MAX` commits.
    Cheap,
}

/// Ranges up to this many commits get full discovery even in cheap mode (it costs a diff and
/// a commit read per commit).
pub const FULL_DISCOVERY_MAX: usize = 500;

/// A session mapped onto a range.
pub struct Session {
    pub found: Found,
    pub transcript: Transcript,
    pub mapping: Mapping,
    pub scope: Scope,
    /// Other sessions that were found but not used.
    pub others: Vec<String>,
}

impl Session {
    pub fn json(&self) -> SessionJson {
        SessionJson {
            source: self.found.name.clone(),
            found_by: self.found.found_by.clone(),
            format: self.transcript.format.name().to_string(),
            turns: self.transcript.turns.len(),
            scope: self.scope.clone(),
        }
    }
}

const CHEAP_PATHS: &[&str] = &[
    ".sage/sessions",
    ".aider.chat.history.md",
    ".specstory/history",
];

/// Finds the range's session (or reads the named one), maps writes to turns, and refines the
/// provenance with the mapping. A discovered session that cannot be parsed becomes a note;
/// a named one that cannot is an error.
pub fn attach_session(
    repo: &Repo,
    range: &Range,
    prov: &mut Provenance,
    named: Option<&str>,
    discovery: Discovery,
) -> Result<Option<Session>> {
    if named.is_none() && discovery == Discovery::Cheap && range.commits.len() > FULL_DISCOVERY_MAX
    {
        let base_tree = repo.tree_of(range.base)?;
        let tip_tree = range.commits.last().map_or(base_tree, |c| c.tree);
        let mut any = false;
        for p in CHEAP_PATHS {
            if repo.path_id(base_tree, p)? != repo.path_id(tip_tree, p)? {
                any = true;
            }
        }
        if !any {
            return Ok(None);
        }
    }
    let infos = range
        .commits
        .iter()
        .map(|c| repo.commit_info(c.id))
        .collect::<Result<Vec<_>>>()?;
    let mut candidates = match named {
        Some(s) => vec![discover::explicit(Some(repo), s)?],
        None => discover::discover(repo, range, &infos)?,
    };
    if candidates.is_empty() {
        return Ok(None);
    }
    let mut errors = Vec::new();
    let mut chosen: Option<(Found, Transcript)> = None;
    let mut others = Vec::new();
    for f in candidates.drain(..) {
        if chosen.is_some() {
            others.push(f.name);
            continue;
        }
        match transcript::parse(f.input(), None) {
            Ok(t) => chosen = Some((f, t)),
            Err(e) if named.is_some() => return Err(e),
            Err(e) => errors.push(format!(
                "session {} ({}) could not be read: {e}",
                f.name, f.found_by
            )),
        }
    }
    prov.notes.extend(errors);
    let Some((found, transcript)) = chosen else {
        return Ok(None);
    };
    let base_tree = repo.tree_of(range.base)?;
    let views: Vec<WriteView> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| WriteView {
            info,
            parent_tree: if i == 0 { base_tree } else { infos[i - 1].tree },
            anchored_path: prov.writes[i].snapshot.path.as_str(),
        })
        .collect();
    let mapping = mapping::map(repo, &views, &transcript)?;
    let scope = mapping::scope(&transcript, &mapping);
    if !others.is_empty() {
        prov.notes.push(format!(
            "other sessions found and not used: {}",
            others.join(", ")
        ));
    }
    provenance::apply_mapping(repo, prov, &mapping)?;
    Ok(Some(Session {
        found,
        transcript,
        mapping,
        scope,
        others,
    }))
}
