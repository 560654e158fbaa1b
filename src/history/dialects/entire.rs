//! Entire (docs/dialects.md#entire): the `Entire-Checkpoint:` trailers on the range's commits,
//! each resolved in Entire's checkpoint stores — one ref per checkpoint
//! (`refs/entire/checkpoints/<last two characters>/<id>`, the checkpoint at the tree's root)
//! first, the `entire/checkpoints/v1` branch (`<id[..2]>/<id[2..]>/`) after — and every session
//! folder of the checkpoint (`0/`, `1/`, …) turned into a commit-level claim: the agent, model
//! and session its `metadata.json` names, how many of the commit's lines Entire counted as the
//! agent's (`initial_attribution`), and where its transcript (`full.jsonl`) is.

use serde_json::Value;

use super::trailers::trailer;
use super::{Author, Claim, Dialect, Evidence, Transcript};
use crate::error::Result;
use crate::git::{Oid, Repo};

/// The checkpoint branch, local or remote-tracking.
pub(crate) const V1_BRANCH: &str = "entire/checkpoints/v1";
/// Where the per-checkpoint refs live.
const REFS: &str = "refs/entire/checkpoints";
/// What to run when a checkpoint is in no store.
pub(crate) const FETCH_HINT: &str = "git fetch origin 'refs/entire/checkpoints/*:refs/entire/checkpoints/*' (one ref per checkpoint), or git fetch origin entire/checkpoints/v1:entire/checkpoints/v1 (the checkpoint branch)";
/// The transcript file of a session folder, best first: the agent's own transcript, then
/// Entire's compact one.
pub(crate) const TRANSCRIPT_FILES: [&str; 3] = ["full.jsonl", "full.json", "transcript.jsonl"];

/// Whether `id` is a checkpoint id: a legacy 12-hex id or a 26-character ULID (Crockford
/// base32, no I, L, O or U).
pub(crate) fn is_checkpoint_id(id: &str) -> bool {
    let hex = id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit());
    let ulid = id.len() == 26
        && id.bytes().all(|b| {
            b.is_ascii_digit()
                || (b.is_ascii_alphabetic()
                    && !matches!(b.to_ascii_uppercase(), b'I' | b'L' | b'O' | b'U'))
        });
    hex || ulid
}

/// Where a checkpoint was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    /// The ref (`refs/entire/checkpoints/DB/01M0…`) or branch (`entire/checkpoints/v1`,
    /// `origin/entire/checkpoints/v1`) that holds it, as `REV:path` names it.
    pub store: String,
    /// The store's root tree.
    pub tree: Oid,
    /// The checkpoint's folder in that tree, with a trailing `/`; empty for a per-checkpoint ref.
    pub dir: String,
}

impl Located {
    /// `REV:path` of a file of the checkpoint (`0/full.jsonl`).
    pub(crate) fn name(&self, rel: &str) -> String {
        format!("{}:{}{rel}", self.store, self.dir)
    }

    /// The session folders of the checkpoint (`0`, `1`, …), in order.
    pub(crate) fn sessions(&self, repo: &Repo) -> Result<Vec<String>> {
        let dir = self.dir.trim_end_matches('/');
        let mut out: Vec<(u32, String)> = repo
            .list_dir(self.tree, dir)?
            .into_iter()
            .filter(|(_, is_dir)| *is_dir)
            .filter_map(|(n, _)| Some((n.parse().ok()?, n)))
            .collect();
        out.sort();
        Ok(out.into_iter().map(|(_, n)| n).collect())
    }
}

/// Entire's checkpoint stores in a repository: the per-checkpoint refs are looked up by name,
/// the branches (local first, then remote-tracking copies) listed once.
pub(crate) struct Stores {
    branches: Vec<(String, Oid)>,
    /// Remote-tracking copies of per-checkpoint refs (`refs/remotes/origin/entire/checkpoints/DB/…`).
    remote_refs: Vec<(String, Oid)>,
}

impl Stores {
    /// Lists the branches that hold checkpoints.
    pub(crate) fn open(repo: &Repo) -> Result<Stores> {
        let mut branches = Vec::new();
        for (name, id) in repo.refs_matching(&format!("refs/heads/{V1_BRANCH}"))? {
            branches.push((name.trim_start_matches("refs/heads/").to_string(), id));
        }
        for (name, id) in repo.refs_matching(&format!("refs/remotes/*/{V1_BRANCH}"))? {
            if !branches.iter().any(|(_, o)| *o == id) {
                branches.push((name.trim_start_matches("refs/remotes/").to_string(), id));
            }
        }
        let remote_refs = repo
            .refs_matching("refs/remotes/*/entire/checkpoints/*")?
            .into_iter()
            .filter(|(name, _)| !name.ends_with(&format!("/{V1_BRANCH}")))
            .collect();
        Ok(Stores {
            branches,
            remote_refs,
        })
    }

    /// Where checkpoint `id` is: its own ref first, the branch after. `None` when no store
    /// holds it.
    pub(crate) fn locate(&self, repo: &Repo, id: &str) -> Result<Option<Located>> {
        match self.locate_ref(repo, id)? {
            Some(found) => Ok(Some(found)),
            None => self.locate_branch(repo, id),
        }
    }

    /// Checkpoint `id` in its own ref, local or a remote-tracking copy.
    pub(crate) fn locate_ref(&self, repo: &Repo, id: &str) -> Result<Option<Located>> {
        if id.len() < 3 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Ok(None);
        }
        let shard = &id[id.len() - 2..];
        // `v1/`, `v2/` under refs/entire/checkpoints are Entire's other stores, not checkpoints.
        if matches!(shard, "v1" | "v2") {
            return Ok(None);
        }
        let own = format!("{REFS}/{shard}/{id}");
        let suffix = format!("/entire/checkpoints/{shard}/{id}");
        let found = repo.refs_matching(&own)?.into_iter().next().or_else(|| {
            self.remote_refs
                .iter()
                .find(|(n, _)| n.ends_with(&suffix))
                .cloned()
        });
        match found {
            Some((name, commit)) => Ok(Some(Located {
                store: name,
                tree: repo.tree_of(commit)?,
                dir: String::new(),
            })),
            None => Ok(None),
        }
    }

    /// Checkpoint `id` on a checkpoint branch (the local one first).
    pub(crate) fn locate_branch(&self, repo: &Repo, id: &str) -> Result<Option<Located>> {
        if id.len() < 3 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Ok(None);
        }
        let dir = format!("{}/{}", &id[..2], &id[2..]);
        for (name, tip) in &self.branches {
            let tree = repo.tree_of(*tip)?;
            if !repo.list_dir(tree, &dir)?.is_empty() {
                return Ok(Some(Located {
                    store: name.clone(),
                    tree,
                    dir: format!("{dir}/"),
                }));
            }
        }
        Ok(None)
    }

    /// The first checkpoint branch and its tree, if there is one.
    pub(crate) fn first_branch(&self) -> Option<(&str, Oid)> {
        self.branches.first().map(|(n, t)| (n.as_str(), *t))
    }
}

/// Reads the Entire checkpoints the commits name.
pub(crate) fn read(repo: &Repo, commits: &[Oid], ev: &mut Evidence) -> Result<()> {
    let mut stores: Option<Stores> = None;
    for &commit in commits {
        let info = repo.commit_info(commit)?;
        let mut ids: Vec<&str> = Vec::new();
        for value in trailer(&info.message, "Entire-Checkpoint") {
            for id in value.split([',', ' ', '\t']).filter(|s| !s.is_empty()) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        if ids.is_empty() {
            continue;
        }
        // Documented by Entire, though not seen written: kept with the claim when present.
        let stated = trailer(&info.message, "Entire-Attribution")
            .first()
            .copied();
        let stores = match &mut stores {
            Some(s) => s,
            None => stores.insert(Stores::open(repo)?),
        };
        for id in ids {
            let at = format!("Entire-Checkpoint {id} on {}", commit.short());
            if !is_checkpoint_id(id) {
                ev.skip(
                    Dialect::Entire,
                    at,
                    "not a checkpoint id (12 hex digits or a 26-character ULID)",
                );
                continue;
            }
            match stores.locate(repo, id)? {
                Some(loc) => checkpoint(repo, &loc, id, commit, stated, ev)?,
                None => ev.skip(
                    Dialect::Entire,
                    at,
                    format!("no checkpoint store holds it: {FETCH_HINT}"),
                ),
            }
        }
    }
    Ok(())
}

/// The claims of one checkpoint: one per session folder.
fn checkpoint(
    repo: &Repo,
    loc: &Located,
    id: &str,
    commit: Oid,
    stated: Option<&str>,
    ev: &mut Evidence,
) -> Result<()> {
    let sessions = loc.sessions(repo)?;
    if sessions.is_empty() {
        ev.skip(
            Dialect::Entire,
            loc.name(""),
            format!(
                "checkpoint {id} (named by {}) holds no session folder (0/, 1/, …)",
                commit.short()
            ),
        );
        return Ok(());
    }
    let several = sessions.len() > 1;
    for n in sessions {
        let meta_path = format!("{}{n}/metadata.json", loc.dir);
        let at = loc.name(&format!("{n}/metadata.json"));
        let meta = match repo.file_in_tree(loc.tree, &meta_path) {
            Ok(Some(bytes)) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) if v.is_object() => Some(v),
                Ok(_) => {
                    ev.skip(Dialect::Entire, at, "not a JSON object");
                    continue;
                }
                Err(e) => {
                    ev.skip(Dialect::Entire, at, format!("not JSON: {e}"));
                    continue;
                }
            },
            Ok(None) => None,
            Err(e) if e.is_missing_object() => {
                ev.skip(
                    Dialect::Entire,
                    at,
                    format!("{e} (a partial clone? fetch {} again)", loc.store),
                );
                continue;
            }
            Err(e) => return Err(e),
        };
        let text = |k: &str| {
            meta.as_ref()
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        if let Some(other) = text("checkpoint_id").filter(|o| o != id) {
            ev.skip(
                Dialect::Entire,
                at,
                format!("its metadata names checkpoint {other}, not {id}"),
            );
            continue;
        }
        let mut transcript = None;
        for file in TRANSCRIPT_FILES {
            let path = format!("{}{n}/{file}", loc.dir);
            if repo.path_id(loc.tree, &path)?.is_some() {
                transcript = Some(Transcript::Blob(loc.name(&format!("{n}/{file}"))));
                break;
            }
        }
        let attribution = meta.as_ref().and_then(|m| m.get("initial_attribution"));
        let (author, share) = share(attribution);
        let mut source = format!(
            "Entire checkpoint {id} ({}) on {}",
            loc.store,
            commit.short()
        );
        if several {
            source.push_str(&format!(", session {n}"));
        }
        if let Some(share) = share {
            source.push_str(&format!(": {share}"));
        }
        if let Some(stated) = stated {
            source.push_str(&format!(" (Entire-Attribution: {stated})"));
        }
        ev.claims.push(Claim {
            dialect: Dialect::Entire,
            commit,
            path: None,
            lines: Vec::new(),
            author,
            agent: text("agent"),
            model: text("model"),
            session: text("session_id"),
            transcript,
            trace: Some(id.to_string()),
            content_hash: None,
            source,
            matched: None,
        });
    }
    Ok(())
}

/// Who a session's `initial_attribution` says wrote the commit, and its numbers in words:
/// `agent 233 of 233 committed lines, a person added 0 and changed 0 (Entire: 97.9% agent)`.
/// A checkpoint without the numbers still says an agent worked on the commit alongside its
/// committer: `Mixed`.
fn share(attribution: Option<&Value>) -> (Author, Option<String>) {
    let Some(a) = attribution.filter(|a| a.is_object()) else {
        return (Author::Mixed, None);
    };
    let num = |k: &str| a.get(k).and_then(Value::as_u64);
    let (agent, total) = (num("agent_lines"), num("total_committed"));
    let human = num("human_added").unwrap_or(0) + num("human_modified").unwrap_or(0);
    let author = match (agent.unwrap_or(0), human) {
        (0, 0) => Author::Unknown,
        (_, 0) => Author::Agent,
        (0, _) => Author::Human,
        _ => Author::Mixed,
    };
    let mut words = Vec::new();
    match (agent, total) {
        (Some(n), Some(t)) => words.push(format!("agent {n} of {t} committed lines")),
        (Some(n), None) => words.push(format!("agent {n} lines")),
        _ => {}
    }
    if let (Some(added), Some(changed)) = (num("human_added"), num("human_modified")) {
        words.push(format!("a person added {added} and changed {changed}"));
    }
    let mut out = words.join(", ");
    if let Some(p) = a.get("agent_percentage").and_then(Value::as_f64) {
        let p = format!("Entire: {p:.1}% agent");
        out = if out.is_empty() {
            p
        } else {
            format!("{out} ({p})")
        };
    }
    (author, (!out.is_empty()).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checkpoint_ids() {
        assert!(is_checkpoint_id("0b907c12affb"));
        assert!(is_checkpoint_id("01M0B0AWQYB1J85CGAE6C7QEDB"));
        assert!(!is_checkpoint_id("01M0B0AWQYB1J85CGAE6C7QEDI")); // I is not Crockford
        assert!(!is_checkpoint_id("0b907c12aff"));
        assert!(!is_checkpoint_id("0b907c12affg"));
        assert!(!is_checkpoint_id("v1"));
    }

    #[test]
    fn attribution_in_words() {
        let a = json!({"agent_lines": 146, "total_committed": 200, "human_added": 50,
            "human_modified": 4, "agent_percentage": 73.0});
        assert_eq!(
            share(Some(&a)),
            (
                Author::Mixed,
                Some("agent 146 of 200 committed lines, a person added 50 and changed 4 (Entire: 73.0% agent)".into())
            )
        );
        let all = json!({"agent_lines": 10, "total_committed": 10, "human_added": 0, "human_modified": 0});
        assert_eq!(share(Some(&all)).0, Author::Agent);
        assert_eq!(share(None), (Author::Mixed, None));
        assert_eq!(share(Some(&json!({}))), (Author::Unknown, None));
    }
}
