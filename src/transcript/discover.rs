//! Finding the session transcript(s) committed alongside the range's writes
//! (docs/session-format.md#which-session), in order: `--session`; `Sage-Session:` trailers; files
//! under `.sage/sessions/` changed in the range; known agent paths; `Entire-Checkpoint:` trailers
//! (the checkpoint's own ref under `refs/entire/checkpoints/`, else the `entire/checkpoints/v1`
//! branch); Aider conversations in commit messages; failing all of
//! these, an Aider history outside the range (working tree, or any branch's history) that logs one
//! of its commits.

use crate::error::{Error, Result};
use crate::git::{CommitInfo, Oid, Repo};

use super::lines::Input;
use crate::history::dialects::entire;

/// A transcript found for a range, and how.
pub(crate) struct Found {
    pub name: String,
    pub found_by: String,
    pub bytes: Vec<u8>,
    /// The commit the session belongs to, when the evidence names one (the commit carrying
    /// the trailer or the checkpoint, the one that changed the file, the one whose message
    /// holds the conversation).
    pub commit: Option<Oid>,
}

impl Found {
    pub(crate) fn input(&self) -> Input {
        Input::from_bytes(self.name.clone(), self.bytes.clone())
    }
}

/// The value of a trailer (`Key: value`) in a commit message, case-insensitive key: one
/// parser for the history's dialect readers and for session discovery.
pub(crate) use crate::history::dialects::trailers::trailer;

const ENTIRE_BRANCH: &str = entire::V1_BRANCH;
/// The folders sessions are read from when the range changed a file in them.
pub(crate) const SESSION_DIRS: [&str; 2] = [".sage/sessions", ".specstory/history"];

/// Aider's chat history: at the top of the repository, or in a folder of it.
pub(crate) const AIDER_HISTORY: &str = ".aider.chat.history.md";

/// Reads an explicit `--session` argument: a path (relative to where git sage runs) or `REV:path`.
pub(crate) fn explicit(repo: Option<&Repo>, session: &str) -> Result<Found> {
    let path = std::path::Path::new(session);
    if path.is_dir() {
        return match super::lines::folder_events(path) {
            Some(bytes) => Ok(Found {
                name: session.to_string(),
                found_by: "--session".into(),
                bytes: bytes?,
                commit: None,
            }),
            None => Err(
                Error::input(format!("{session} is a directory, not a session file"))
                    .hint("name the transcript file, or a conversation folder with events/*.json"),
            ),
        };
    }
    if path.exists() {
        let bytes = crate::files::read_input(path, "session", crate::files::SESSION_CAP)?;
        return Ok(Found {
            name: session.to_string(),
            found_by: "--session".into(),
            bytes,
            commit: None,
        });
    }
    if let (Some(rev), Some(repo)) = (session.strip_suffix("^{commit}"), repo) {
        let id = repo.resolve_commit(rev)?;
        return Ok(Found {
            name: session.to_string(),
            found_by: "--session".into(),
            bytes: repo.commit_info(id)?.message.into_bytes(),
            commit: Some(id),
        });
    }
    if let (Some((rev, file)), Some(repo)) = (session.split_once(':'), repo)
        && !rev.is_empty()
        && !file.is_empty()
    {
        return match repo.file_at_rev(rev, file)? {
            Some(bytes) => Ok(Found {
                name: session.to_string(),
                found_by: "--session".into(),
                bytes,
                commit: None,
            }),
            None => Err(not_at_rev(repo, rev, file)),
        };
    }
    Err(
        Error::input(format!("cannot read session {session}: no such file"))
            .hint("give a path, or REV:path for a file in git"),
    )
}

/// Why `REV:path` names no session file: a folder, or nothing at that revision.
fn not_at_rev(repo: &Repo, rev: &str, file: &str) -> Error {
    let folder = repo
        .resolve_commit(rev)
        .and_then(|c| repo.tree_of(c))
        .and_then(|t| repo.dir_id(t, file.trim_end_matches('/')))
        .is_ok_and(|d| d.is_some());
    match folder {
        true => {
            Error::input(format!("{file} is a folder at {rev}, not a session file")).hint(format!(
                "name a file in it, e.g. {rev}:{}/<file>",
                file.trim_end_matches('/')
            ))
        }
        false => Error::input(format!("{file} does not exist at {rev}"))
            .hint("name a file committed at that revision, e.g. HEAD:.sage/sessions/<file>"),
    }
}

/// Opens a session named on the command line for streaming: a file, a conversation folder
/// (`events/*.json`), `REV:path` or `REV^{commit}` read from git (`repo` opens it when needed).
pub(crate) fn open(session: &str, repo: &dyn Fn() -> Result<Repo>) -> Result<Input> {
    let path = std::path::Path::new(session);
    if path.is_dir() {
        return match crate::transcript::lines::folder_events(path) {
            Some(bytes) => Ok(Input::from_bytes(session, bytes?)),
            None => Err(
                Error::input(format!("{session} is a directory, not a session file"))
                    .hint("name the transcript file, or a conversation folder with events/*.json"),
            ),
        };
    }
    if path.exists() {
        return Input::from_file(session, path)
            .map_err(|e| Error::input(format!("cannot read {session}: {e}")));
    }
    if let Some(rev) = session.strip_suffix("^{commit}") {
        // A commit's message: old Aider versions wrote the conversation there.
        let repo = repo()?;
        let id = repo.resolve_commit(rev)?;
        return Ok(Input::from_bytes(
            session,
            repo.commit_info(id)?.message.into_bytes(),
        ));
    }
    if let Some((rev, file)) = session.split_once(':')
        && !rev.is_empty()
        && !file.is_empty()
    {
        let repo = repo()?;
        return match repo.file_at_rev(rev, file)? {
            Some(bytes) => Ok(Input::from_bytes(session, bytes)),
            None => Err(not_at_rev(&repo, rev, file)),
        };
    }
    Err(
        Error::input(format!("cannot read session {session}: no such file"))
            .hint("give a path, or REV:path for a file in git"),
    )
}

/// Sessions as they are found: in order, each once, with notes on what could not be used.
struct Collector<'r> {
    repo: &'r Repo,
    found: Vec<Found>,
    notes: Vec<String>,
}

impl Collector<'_> {
    fn push(&mut self, name: String, by: String, bytes: Vec<u8>, commit: Oid) {
        if !self.found.iter().any(|f| f.name == name) {
            self.found.push(Found {
                name,
                found_by: by,
                bytes,
                commit: Some(commit),
            });
        }
    }

    /// A file of a tree. One whose blob this clone lacks (a partial or blob-filtered clone, a
    /// mirror that left large files out) is noted and skipped: the other sessions can still
    /// answer.
    fn read(&mut self, tree: Oid, name: &str, path: &str) -> Result<Option<Vec<u8>>> {
        match self.repo.file_in_tree(tree, path) {
            Ok(bytes) => Ok(bytes.map(|b| b.to_vec())),
            Err(e) if e.is_missing_object() => {
                let note = format!(
                    "{name}: {e}; skipped (a partial clone? git fetch the ref that holds it)"
                );
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Sessions named by `Sage-Session:` trailers: a file in the commit that carries them.
    fn trailers(&mut self, infos: &[CommitInfo]) -> Result<()> {
        for c in infos.iter().rev() {
            for path in trailer(&c.message, SESSION_TRAILER) {
                let path = path.trim_start_matches("./");
                let name = format!("{}:{path}", c.id.short());
                if let Some(bytes) = self.read(c.tree, &name, path)? {
                    let by = format!("Sage-Session trailer on {}", c.id.short());
                    self.push(name, by, bytes, c.id);
                }
            }
        }
        Ok(())
    }

    /// Files in known places that the range changed, as of the last commit that changed them;
    /// `.sage/sessions` first: recorded on purpose.
    fn known_paths(&mut self, infos: &[CommitInfo], changed_by: &[Vec<String>]) -> Result<()> {
        let mut changed: Vec<(String, Oid, Oid)> = Vec::new(); // (path, commit, tree)
        for (c, paths) in infos.iter().zip(changed_by) {
            for p in paths.iter().cloned() {
                let under = |d: &str| p.strip_prefix(d).is_some_and(|r| r.starts_with('/'));
                let known = p == AIDER_HISTORY
                    || p.strip_suffix(AIDER_HISTORY)
                        .is_some_and(|r| r.ends_with('/'))
                    || SESSION_DIRS.iter().any(|d| under(d));
                if known {
                    changed.retain(|(q, _, _)| *q != p);
                    changed.push((p, c.id, c.tree));
                }
            }
        }
        changed.sort_by_key(|(p, _, _)| !p.starts_with(".sage/sessions/"));
        for (p, commit, tree) in changed {
            let name = format!("{}:{p}", commit.short());
            if let Some(bytes) = self.read(tree, &name, &p)? {
                let by = if p.starts_with(".sage/sessions/") {
                    "file under .sage/sessions/ changed in the range"
                } else {
                    "known agent path changed in the range"
                };
                self.push(name, by.to_string(), bytes, commit);
            }
        }
        Ok(())
    }

    /// Entire checkpoints named by `Entire-Checkpoint:` trailers, one folder per session of
    /// the checkpoint (`<n>/`): in the checkpoint's own ref (`refs/entire/checkpoints/<last
    /// two>/<id>`, the checkpoint at its root) first, else under `<id[..2]>/<id[2..]>/` on the
    /// checkpoint branch. `whose` says whose checkpoint it is in `found_by`.
    fn checkpoints(&mut self, infos: &[CommitInfo], whose: &str) -> Result<()> {
        let checkpoints: Vec<(&CommitInfo, &str)> = infos
            .iter()
            .flat_map(|c| {
                trailer(&c.message, CHECKPOINT_TRAILER)
                    .into_iter()
                    .filter(|id| id.len() >= 3 && id.chars().all(|ch| ch.is_ascii_alphanumeric()))
                    .map(move |id| (c, id))
            })
            .collect();
        if checkpoints.is_empty() {
            return Ok(());
        }
        let stores = entire::Stores::open(self.repo)?;
        let mut on_branch = Vec::new();
        for (c, id) in checkpoints {
            match stores.locate_ref(self.repo, id)? {
                Some(loc) => {
                    let parts = loc.sessions(self.repo)?;
                    if parts.is_empty() {
                        self.notes.push(format!(
                            "{} holds no session folder (named by {})",
                            loc.store,
                            c.id.short()
                        ));
                    }
                    self.sessions(&loc, &parts, c.id, whose)?;
                }
                None => on_branch.push((c, id)),
            }
        }
        if on_branch.is_empty() {
            return Ok(());
        }
        let Some((branch, tip)) = stores.first_branch() else {
            self.notes.push(format!(
                "{} commit(s) carry Entire-Checkpoint trailers for checkpoints in no ref of their own, and this repository has no {ENTIRE_BRANCH} branch: {}",
                on_branch.len(),
                entire::FETCH_HINT
            ));
            return Ok(());
        };
        // One branch answers: a remote-tracking copy of the same checkpoints adds nothing.
        let tree = match self.repo.tree_of(tip) {
            Ok(t) => t,
            Err(e) => {
                self.notes.push(format!("{branch} cannot be read: {e}"));
                return Ok(());
            }
        };
        for (c, id) in &on_branch {
            let dir = format!("{}/{}", &id[..2], &id[2..]);
            let mut parts = match self.repo.list_dir(tree, &dir) {
                Ok(p) => p,
                Err(_) => {
                    self.notes.push(format!(
                        "{branch} has no checkpoint {id} (named by {}): not a checkpoint tree?",
                        c.id.short()
                    ));
                    continue;
                }
            };
            if parts.is_empty() {
                let is_file = matches!(self.repo.entry_at(tree, &dir), Ok(Some(_)));
                self.notes.push(if is_file {
                    format!(
                        "{branch}:{dir} is a file, not a checkpoint folder (named by {}): not a checkpoint tree?",
                        c.id.short()
                    )
                } else {
                    format!(
                        "{branch} holds no checkpoint {id} (named by {})",
                        c.id.short()
                    )
                });
            }
            let loc = entire::Located {
                store: branch.to_string(),
                tree,
                dir: format!("{dir}/"),
            };
            parts.sort_by_key(|(n, _)| n.parse::<u32>().unwrap_or(u32::MAX));
            let parts: Vec<String> = parts
                .into_iter()
                .filter(|(_, d)| *d)
                .map(|(n, _)| n)
                .collect();
            self.sessions(&loc, &parts, c.id, whose)?;
        }
        Ok(())
    }

    /// The transcript of each session folder of a checkpoint.
    fn sessions(
        &mut self,
        loc: &entire::Located,
        parts: &[String],
        commit: Oid,
        whose: &str,
    ) -> Result<()> {
        for n in parts {
            let mut any = false;
            for file in entire::TRANSCRIPT_FILES {
                let path = format!("{}{n}/{file}", loc.dir);
                let name = loc.name(&format!("{n}/{file}"));
                let before = self.notes.len();
                if let Some(bytes) = self.read(loc.tree, &name, &path)? {
                    let by = format!("Entire-Checkpoint trailer on {}{whose}", commit.short());
                    self.push(name, by, bytes, commit);
                    any = true;
                    break;
                }
                if self.notes.len() > before {
                    // Present but unreadable: already said; the other names would not help.
                    any = true;
                    break;
                }
            }
            if !any {
                self.notes.push(format!(
                    "{}{n} holds no transcript file (full.jsonl)",
                    loc.name("")
                ));
            }
        }
        Ok(())
    }

    /// Old Aider versions wrote the chat into the commit body; the Aider reader takes it as is.
    fn aider_messages(&mut self, infos: &[CommitInfo]) {
        for c in infos {
            if c.message.contains(AIDER_CONVERSATION) {
                self.push(
                    format!("{} message", c.id.short()),
                    "Aider conversation in the commit message".into(),
                    c.message.clone().into_bytes(),
                    c.id,
                );
            }
        }
    }
}

/// Every session the range points at, in discovery order, with notes on what could not be
/// used. `infos` are the range's commits, in order, and `changed` the paths each changed.
pub(crate) fn discover(
    repo: &Repo,
    infos: &[CommitInfo],
    changed_by: &[Vec<String>],
) -> Result<(Vec<Found>, Vec<String>)> {
    let mut c = Collector {
        repo,
        found: Vec::new(),
        notes: Vec::new(),
    };
    c.trailers(infos)?;
    c.known_paths(infos, changed_by)?;
    c.checkpoints(infos, "")?;
    c.aider_messages(infos);
    if c.found.is_empty() {
        let _t = crate::timing::stage("discover: Aider history elsewhere");
        let more = aider_elsewhere(repo, infos, &mut c.notes)?;
        c.found.extend(more);
    }
    Ok((c.found, c.notes))
}

/// Checkpoints of commits just before the range (`earlier`, newest first): an agent's session
/// runs across commits, and the one that wrote the code may have been checkpointed with an
/// earlier commit than the one that committed it.
pub(crate) fn earlier_checkpoints(
    repo: &Repo,
    earlier: &[CommitInfo],
) -> Result<(Vec<Found>, Vec<String>)> {
    let mut c = Collector {
        repo,
        found: Vec::new(),
        notes: Vec::new(),
    };
    c.checkpoints(earlier, ", before the range")?;
    Ok((c.found, c.notes))
}

/// The trailer naming a session committed with the commit.
pub(crate) const SESSION_TRAILER: &str = "Sage-Session";
/// The trailer naming an Entire checkpoint.
pub(crate) const CHECKPOINT_TRAILER: &str = "Entire-Checkpoint";
/// What old Aider versions put before the chat they wrote into the commit body.
pub(crate) const AIDER_CONVERSATION: &str = "# Aider chat conversation:";

/// How many commits the search for an Aider history outside the range walks.
const AIDER_WALK: usize = 20_000;

/// Aider appends to its chat history as it goes, so the range rarely changes it: the copy in
/// the working tree, else the newest committed version on any branch (it may be deleted since),
/// counts if it logs one of the range's commits (`> Commit 1a2b3c4`).
fn aider_elsewhere(
    repo: &Repo,
    infos: &[CommitInfo],
    notes: &mut Vec<String>,
) -> Result<Option<Found>> {
    if infos.is_empty() {
        return Ok(None);
    }
    let names = |bytes: &[u8]| logged_commit(bytes, infos);
    if let Some(dir) = repo.workdir() {
        let path = dir.join(AIDER_HISTORY);
        // Only a regular file: the working tree is untrusted and may hold a FIFO or a link.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && let Ok(bytes) = std::fs::read(&path)
            && let Some(c) = names(&bytes)
        {
            return Ok(Some(Found {
                name: path.display().to_string(),
                found_by: format!(
                    "Aider history in the working tree, which logs range commit {}",
                    c.short()
                ),
                bytes,
                commit: None,
            }));
        }
    }
    let (versions, cut) = repo.path_versions(
        AIDER_HISTORY,
        AIDER_WALK,
        crate::history::parallel::workers(),
    )?;
    for (commit, blob) in versions {
        let bytes = match repo.read_blob(blob) {
            Ok(b) => b,
            Err(e) if e.is_missing_object() => {
                notes.push(format!("{}:{AIDER_HISTORY}: {e}; skipped", commit.short()));
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(c) = names(&bytes) {
            return Ok(Some(Found {
                name: format!("{}:{AIDER_HISTORY}", commit.short()),
                found_by: format!(
                    "Aider history committed in {}, which logs range commit {}",
                    commit.short(),
                    c.short()
                ),
                bytes: bytes.to_vec(),
                commit: Some(commit),
            }));
        }
    }
    if cut {
        notes.push(format!(
            "looked for an Aider history in the newest {AIDER_WALK} commits only"
        ));
    }
    Ok(None)
}

/// The first range commit an Aider history logs (`> Commit <hash> <message>`).
fn logged_commit(bytes: &[u8], infos: &[CommitInfo]) -> Option<Oid> {
    let hexes: Vec<(String, Oid)> = infos.iter().map(|c| (c.id.hex(), c.id)).collect();
    bytes.split(|&b| b == b'\n').find_map(|line| {
        let rest = line.strip_prefix(b"> Commit ")?;
        let word = rest.split(|b| b.is_ascii_whitespace()).next()?;
        let word = std::str::from_utf8(word).ok()?.to_ascii_lowercase();
        if word.len() < 7 || !word.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        hexes
            .iter()
            .find(|(h, _)| h.starts_with(&word))
            .map(|(_, id)| *id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::dialects::conformance_b::{FITCHECK_REF, build};

    #[test]
    fn trailers() {
        let m = "fix\n\nbody\n\nSage-Session: .sage/sessions/a.jsonl\nsage-turn: 4\nEntire-Checkpoint: 2444cdc4a359\n";
        assert_eq!(trailer(m, "Sage-Session"), [".sage/sessions/a.jsonl"]);
        assert_eq!(trailer(m, "Sage-Turn"), ["4"]);
        assert_eq!(trailer(m, "Entire-Checkpoint"), ["2444cdc4a359"]);
        assert!(trailer(m, "Nope").is_empty());
    }

    /// Session discovery (transcript/discover.rs) finds the transcript in the per-checkpoint ref,
    /// and says what to fetch for the dangling one.
    #[test]
    fn discovery_reads_per_checkpoint_refs() {
        let b = build("entire/fitcheck-refs");
        let infos: Vec<_> = b
            .ids(&["before", "stats", "nav"])
            .into_iter()
            .map(|id| b.repo.commit_info(id).unwrap())
            .collect();
        let changed = vec![Vec::new(); infos.len()];
        let (found, notes) = discover(&b.repo, &infos, &changed).unwrap();
        assert_eq!(found.len(), 1, "{notes:?}");
        assert_eq!(found[0].name, format!("{FITCHECK_REF}:0/full.jsonl"));
        assert_eq!(
            found[0].found_by,
            format!("Entire-Checkpoint trailer on {}", b.short("stats"))
        );
        assert_eq!(found[0].commit, Some(b.id("stats")));
        assert!(
            String::from_utf8_lossy(&found[0].bytes).contains("blob 3d17e283"),
            "the finalized transcript, from the ref's tip"
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("1 commit(s) carry Entire-Checkpoint trailers for checkpoints in no ref of their own, and this repository has no entire/checkpoints/v1 branch: git fetch origin 'refs/entire/checkpoints/*"), "{notes:?}");
        // and on the branch store, as before
        let b = build("entire/eagerminds-v1");
        let infos = vec![b.repo.commit_info(b.id("scaffold")).unwrap()];
        let (found, notes) = discover(&b.repo, &infos, &[Vec::new()]).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            found[0].name,
            "entire/checkpoints/v1:0b/907c12affb/0/full.jsonl"
        );
        assert_eq!(
            String::from_utf8_lossy(&found[0].bytes).lines().count(),
            3,
            "the reduced full.jsonl"
        );
        // the same checkpoint also in a ref of its own: the ref answers
        let sub = b.git(&["rev-parse", "entire/checkpoints/v1:0b/907c12affb"]);
        let commit = b.git(&["commit-tree", &sub, "-m", "Checkpoint: 0b907c12affb"]);
        b.git(&[
            "update-ref",
            "refs/entire/checkpoints/fb/0b907c12affb",
            &commit,
        ]);
        let repo = Repo::discover(&b.path).unwrap();
        let (found, _) = discover(&repo, &infos, &[Vec::new()]).unwrap();
        assert_eq!(
            found[0].name,
            "refs/entire/checkpoints/fb/0b907c12affb:0/full.jsonl"
        );
    }
}
