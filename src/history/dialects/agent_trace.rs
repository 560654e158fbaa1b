//! Agent Trace (docs/dialects.md#agent-trace): Trace Records of the cursor/agent-trace
//! specification, v0.1.0, read as its README's JSON Schema describes them, from committed
//! `.agent-trace/*.jsonl` files (any directory) and from notes under `refs/notes/agent-trace`
//! (a convention of several tools; the specification leaves storage open). Also writes
//! records (`record`), for git sage's own findings.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::{Author, Claim, Dialect, Evidence, Lines, Transcript};
use crate::error::Result;
use crate::git::{CommitInfo, Oid, PathLookup, Repo, in_repo_path};

/// The notes ref tools that keep Agent Trace records in notes use.
pub(crate) const NOTES_REF: &str = "refs/notes/agent-trace";

/// The `.agent-trace/` directories whose records can be about `files`: the repository's own
/// and one in each directory above a file (a project inside a monorepo keeps its own). Only
/// these are read, so the cost follows the anchored file's depth rather than the size of
/// each commit: a commit that reformats ten thousand files is not diffed in full.
fn trace_dirs(files: &[&str]) -> Vec<String> {
    let mut out = vec![DIR.to_string()];
    for f in files {
        let mut at = 0;
        while let Some(i) = f[at..].find('/') {
            let dir = format!("{}/{DIR}", &f[..at + i]);
            if !out.contains(&dir) {
                out.push(dir);
            }
            at += i + 1;
        }
    }
    out
}

const DIR: &str = ".agent-trace";

/// Whether a path names a committed trace file: `*.jsonl` right inside an `.agent-trace/`.
fn is_trace_file(path: &str) -> bool {
    let Some((dir, name)) = path.rsplit_once('/') else {
        return false;
    };
    (dir == ".agent-trace" || dir.ends_with("/.agent-trace")) && name.ends_with(".jsonl")
}

/// One range of a record, with whoever the record says wrote it.
#[derive(Debug, Clone, PartialEq)]
struct Range {
    lines: Lines,
    content_hash: Option<String>,
    /// `(type, model_id)`: the range's own contributor, else its conversation's.
    contributor: Option<(Author, Option<String>)>,
}

/// A Trace Record, reduced to what claims need.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    id: String,
    /// `vcs.revision` when `vcs.type` is git.
    revision: Option<String>,
    tool: Option<String>,
    /// `(path, url, ranges)` per conversation of each file.
    conversations: Vec<(String, Option<String>, Vec<Range>)>,
}

/// Why a record is not used: a short reason shared by similar records, and the first one's detail.
#[derive(Debug, Clone, PartialEq)]
struct Unusable {
    reason: String,
    detail: String,
}

fn unusable(reason: impl Into<String>, detail: impl Into<String>) -> Unusable {
    Unusable {
        reason: reason.into(),
        detail: detail.into(),
    }
}

/// A contributor object (`{type, model_id?}`).
fn contributor(v: &Value, at: &str) -> std::result::Result<(Author, Option<String>), Unusable> {
    let bad = |d: String| unusable("does not follow the Agent Trace schema", d);
    let Some(o) = v.as_object() else {
        return Err(bad(format!("{at}: not an object")));
    };
    let author = match o.get("type").and_then(Value::as_str) {
        Some("ai") => Author::Agent,
        Some("human") => Author::Human,
        Some("mixed") => Author::Mixed,
        Some("unknown") => Author::Unknown,
        Some(other) => {
            return Err(bad(format!(
                "{at}.type is {other:?}, not human, ai, mixed or unknown"
            )));
        }
        None => return Err(bad(format!("{at}: no type"))),
    };
    let model = match o.get("model_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(_) => return Err(bad(format!("{at}.model_id is not a string"))),
    };
    Ok((author, model))
}

/// A record's path, repo-relative with `/` (Windows writers use `\`).
fn clean_path(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let drive = p.len() >= 2 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic();
    if drive {
        return None;
    }
    in_repo_path(&p).ok()
}

/// Reads one Trace Record, as the README's schema (v0.1.0) describes it.
fn parse(v: &Value) -> std::result::Result<Record, Unusable> {
    let Some(o) = v.as_object() else {
        return Err(unusable("not a JSON object", ""));
    };
    let missing: Vec<&str> = ["version", "id", "timestamp", "files"]
        .into_iter()
        .filter(|k| o.get(*k).is_none_or(Value::is_null))
        .collect();
    if !missing.is_empty() {
        return Err(unusable(
            format!("not an Agent Trace record: missing {}", missing.join(", ")),
            "",
        ));
    }
    let bad = |d: String| unusable("does not follow the Agent Trace schema", d);
    let version = o["version"]
        .as_str()
        .ok_or_else(|| bad("version is not a string".into()))?;
    let parts: Vec<&str> = version.split('.').collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(unusable(
            format!("version {version:?} is not MAJOR.MINOR.PATCH"),
            "",
        ));
    }
    if !parts[0].trim_start_matches('0').is_empty() {
        return Err(unusable(
            format!("Agent Trace version {version}: this reader knows major version 0 only"),
            "",
        ));
    }
    let id = o["id"]
        .as_str()
        .ok_or_else(|| bad("id is not a string".into()))?
        .to_string();
    if !o["timestamp"].is_string() {
        return Err(bad("timestamp is not a string".into()));
    }
    let revision = match o.get("vcs") {
        None | Some(Value::Null) => None,
        Some(Value::Object(vcs)) => match (vcs.get("type"), vcs.get("revision")) {
            (Some(Value::String(t)), Some(Value::String(r))) => (t == "git").then(|| r.clone()),
            _ => return Err(bad("vcs needs a type and a revision".into())),
        },
        Some(_) => return Err(bad("vcs is not an object".into())),
    };
    let tool = o
        .get("tool")
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let files = o["files"]
        .as_array()
        .ok_or_else(|| bad("files is not an array".into()))?;
    let mut conversations = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let at = format!("files[{i}]");
        let path = f
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("{at}: no path")))?;
        let clean = clean_path(path).ok_or_else(|| {
            unusable(
                "a path is not relative to the repository",
                format!("{at}.path {path:?}"),
            )
        })?;
        let convs = f
            .get("conversations")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("{at}: no conversations array")))?;
        for (j, c) in convs.iter().enumerate() {
            let at = format!("{at}.conversations[{j}]");
            if !c.is_object() {
                return Err(bad(format!("{at}: not an object")));
            }
            let url = match c.get("url") {
                None | Some(Value::Null) => None,
                Some(Value::String(u)) => Some(u.clone()),
                Some(_) => return Err(bad(format!("{at}.url is not a string"))),
            };
            let who = match c.get("contributor") {
                None | Some(Value::Null) => None,
                Some(v) => Some(contributor(v, &format!("{at}.contributor"))?),
            };
            let ranges = c
                .get("ranges")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(format!("{at}: no ranges array")))?;
            let mut out = Vec::new();
            for (k, r) in ranges.iter().enumerate() {
                let at = format!("{at}.ranges[{k}]");
                let line = |key: &str| {
                    r.get(key)
                        .and_then(Value::as_u64)
                        .filter(|n| *n >= 1)
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| bad(format!("{at}.{key} is not a line number (from 1)")))
                };
                let (start, end) = (line("start_line")?, line("end_line")?);
                if end < start {
                    return Err(bad(format!("{at} ends before it starts")));
                }
                let own = match r.get("contributor") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(contributor(v, &format!("{at}.contributor"))?),
                };
                out.push(Range {
                    lines: Lines { start, end },
                    content_hash: r
                        .get("content_hash")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    contributor: own.or_else(|| who.clone()),
                });
            }
            conversations.push((clean.clone(), url, out));
        }
    }
    Ok(Record {
        id,
        revision,
        tool,
        conversations,
    })
}

/// The name git sage writes in `tool.name`.
pub(crate) const OWN_TOOL: &str = env!("CARGO_PKG_NAME");

/// A record as claims may use it: git sage's own records (`blame-origin --agent-trace`) hold
/// its conclusions, and reading them back as evidence would let a run confirm itself.
fn usable(v: &Value) -> std::result::Result<Record, Unusable> {
    let rec = parse(v)?;
    if rec.tool.as_deref() == Some(OWN_TOOL) {
        return Err(unusable(
            "written by git sage: its own conclusions, not evidence",
            "",
        ));
    }
    Ok(rec)
}

/// Unusable records, counted per place and reason: one skipped entry each.
#[derive(Default)]
struct Tally(BTreeMap<(String, String), (usize, usize, String)>);

impl Tally {
    fn add(&mut self, at: &str, line: usize, why: Unusable) {
        let e = self
            .0
            .entry((at.to_string(), why.reason))
            .or_insert((0, line, why.detail));
        e.0 += 1;
    }

    fn flush(self, ev: &mut Evidence) {
        for ((at, reason), (n, line, detail)) in self.0 {
            let detail = if detail.is_empty() {
                String::new()
            } else {
                format!(": {detail}")
            };
            let count = if n == 1 {
                format!("line {line}")
            } else {
                format!("{n} records, the first on line {line}")
            };
            ev.skip(
                Dialect::AgentTrace,
                at,
                format!("{reason} ({count}{detail})"),
            );
        }
    }
}

/// The claims of one usable record, on `commit`.
fn claims(rec: &Record, commit: Oid, source: &str, ev: &mut Evidence) {
    for (path, url, ranges) in &rec.conversations {
        for r in ranges {
            let (author, model) = r.contributor.clone().unwrap_or((Author::Unknown, None));
            ev.claims.push(Claim {
                dialect: Dialect::AgentTrace,
                commit,
                path: Some(path.clone()),
                lines: vec![r.lines],
                author,
                agent: rec.tool.clone(),
                model,
                session: None,
                transcript: url.clone().map(Transcript::Url),
                trace: Some(rec.id.clone()),
                content_hash: r.content_hash.clone(),
                source: source.to_string(),
                matched: None,
            });
        }
    }
}

/// The range's commits by full hex, for matching `vcs.revision` (full, or abbreviated to at
/// least 7 digits).
struct InRange(Vec<(String, Oid)>);

impl InRange {
    fn find(&self, rev: &str) -> Option<Oid> {
        let rev = rev.trim().to_ascii_lowercase();
        if rev.len() < 7 {
            return None;
        }
        self.0
            .iter()
            .find(|(h, _)| h.starts_with(&rev))
            .map(|(_, id)| *id)
    }
}

fn names(rev: &str, id: Oid) -> bool {
    let rev = rev.trim().to_ascii_lowercase();
    rev.len() >= 7 && id.hex().starts_with(&rev)
}

/// Reads the Agent Trace records about the commits: those their commits add to the committed
/// trace files that can be about `files` (see [`trace_dirs`]), and their notes under
/// `refs/notes/agent-trace`.
pub(crate) fn read(repo: &Repo, commits: &[Oid], files: &[&str], ev: &mut Evidence) -> Result<()> {
    let range = InRange(commits.iter().map(|c| (c.hex(), *c)).collect());
    let mut tally = Tally::default();
    let dirs = trace_dirs(files);
    // Changed-path filters rule out, for most commits, that a trace directory changed at all.
    let filters: Vec<Option<Vec<Option<bool>>>> =
        dirs.iter().map(|d| repo.path_filters(commits, d)).collect();
    // One lookup per directory across all the commits: subtrees already read are remembered.
    let mut lookups: Vec<PathLookup> = dirs.iter().map(|d| PathLookup::dir(d)).collect();
    // A notes ref that is not a notes commit is said once and not walked. The commits it
    // annotates are listed once, so a commit without a note costs a lookup in that list, not
    // two reads of the ref (which cost most of this reader's time on a long range).
    let noted: Vec<Oid> = match repo.unreadable_notes_ref(NOTES_REF)? {
        None => repo.foreign_noted(NOTES_REF)?,
        Some(why) => {
            ev.skip(Dialect::AgentTrace, NOTES_REF, format!("{why}; not read"));
            Vec::new()
        }
    };
    for (i, &commit) in commits.iter().enumerate() {
        let maybe: Vec<usize> = (0..dirs.len())
            .filter(|&k| filters[k].as_ref().is_none_or(|f| f[i] != Some(false)))
            .collect();
        // A commit adds records only to a trace directory its tree has: its tree (from the
        // commit-graph when there is one) is read before the whole commit is.
        let mut present = Vec::new();
        if !maybe.is_empty() {
            let tree = repo.tree_of(commit)?;
            for k in maybe {
                if repo.blob_at(&mut lookups[k], tree)?.is_some() {
                    present.push(dirs[k].as_str());
                }
            }
        }
        if !present.is_empty() {
            let info = repo.commit_info(commit)?;
            committed(repo, &info, &present, &range, &mut tally, ev)?;
        }
        if noted.binary_search(&commit).is_err() {
            continue;
        }
        if let Some(note) = repo.foreign_note(NOTES_REF, commit)? {
            let at = format!("{NOTES_REF} on {}", commit.short());
            for (line, v) in values(&note, &at, &mut tally) {
                match usable(&v) {
                    Ok(rec) => {
                        let source = format!("Agent Trace record {} in {at}", rec.id);
                        claims(&rec, commit, &source, ev);
                    }
                    Err(why) => tally.add(&at, line, why),
                }
            }
        }
    }
    tally.flush(ev);
    Ok(())
}

/// The JSON values of a note or of added lines: one document (an object, or an array of
/// them), else one per line; with their line numbers. Lines that are not JSON are tallied.
fn values(bytes: &[u8], at: &str, tally: &mut Tally) -> Vec<(usize, Value)> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(items)) => return items.into_iter().map(|v| (1, v)).collect(),
        Ok(v) => return vec![(1, v)],
        Err(_) => {}
    }
    let mut out = Vec::new();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(v) => out.push((i + 1, v)),
            Err(e) => tally.add(at, i + 1, unusable("not JSON", e.to_string())),
        }
    }
    out
}

/// Records that `info` added to the trace files of `dirs`: lines of the file at the commit
/// that none of its parents had.
fn committed(
    repo: &Repo,
    info: &CommitInfo,
    dirs: &[&str],
    range: &InRange,
    tally: &mut Tally,
    ev: &mut Evidence,
) -> Result<()> {
    let mut parent_trees = Vec::new();
    for p in &info.parents {
        parent_trees.push(repo.tree_of(*p)?);
    }
    let mut paths = Vec::new();
    for dir in dirs {
        let Some(new) = repo.dir_id(info.tree, dir)? else {
            continue;
        };
        let mut olds = Vec::new();
        for t in &parent_trees {
            olds.push(repo.dir_id(*t, dir)?);
        }
        // A parent with the same directory has every line the commit has.
        if olds.contains(&Some(new)) {
            continue;
        }
        let inside = match olds.first() {
            Some(Some(old)) => repo.changed_paths(*old, new)?,
            _ => repo.tree_paths(new)?,
        };
        paths.extend(inside.into_iter().map(|p| format!("{dir}/{p}")));
    }
    let short = info.id.short();
    for path in paths.into_iter().filter(|p| is_trace_file(p)) {
        let at = format!("{path} at {short}");
        let read = |tree: Oid| match repo.file_in_tree(tree, &path) {
            Ok(b) => Ok(Ok(b)),
            Err(e) if e.is_missing_object() => Ok(Err(e.to_string())),
            Err(e) => Err(e),
        };
        let new = match read(info.tree)? {
            Ok(Some(b)) => b,
            Ok(None) => continue, // deleted
            Err(e) => {
                ev.skip(Dialect::AgentTrace, at, e);
                continue;
            }
        };
        let mut olds = Vec::new();
        for t in &parent_trees {
            match read(*t)? {
                Ok(Some(b)) => olds.push(b),
                Ok(None) => {}
                Err(e) => {
                    ev.skip(
                        Dialect::AgentTrace,
                        format!("{path} in a parent of {short}"),
                        e,
                    );
                }
            }
        }
        // How often each line occurs in the parent that has it most.
        let mut before: HashMap<&[u8], usize> = HashMap::new();
        for old in &olds {
            let mut counts: HashMap<&[u8], usize> = HashMap::new();
            for l in old.split(|b| *b == b'\n') {
                *counts.entry(l).or_default() += 1;
            }
            for (l, n) in counts {
                let e = before.entry(l).or_default();
                *e = (*e).max(n);
            }
        }
        for (i, line) in new.split(|b| *b == b'\n').enumerate() {
            if let Some(n) = before.get_mut(line)
                && *n > 0
            {
                *n -= 1;
                continue;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let v = match serde_json::from_slice::<Value>(line) {
                Ok(v) => v,
                Err(e) => {
                    tally.add(&at, i + 1, unusable("not JSON", e.to_string()));
                    continue;
                }
            };
            let rec = match usable(&v) {
                Ok(r) => r,
                Err(why) => {
                    tally.add(&at, i + 1, why);
                    continue;
                }
            };
            let base = format!("Agent Trace record {} in {path} at {short}", rec.id);
            // Hooks record the revision checked out while the agent edits (the commit's
            // parent); the lines land in the commit that adds the record.
            let (commit, source) = match rec.revision.as_deref() {
                None => (info.id, base),
                Some(r) if names(r, info.id) => (info.id, base),
                Some(r) => match info.parents.iter().find(|p| names(r, **p)) {
                    Some(p) => (
                        info.id,
                        format!("{base} (recorded on its parent {})", p.short()),
                    ),
                    None => match range.find(r) {
                        Some(other) => (other, format!("{base}, about {}", other.short())),
                        None => {
                            tally.add(
                                &at,
                                i + 1,
                                unusable(
                                    "names a vcs.revision outside the range",
                                    r.chars().take(12).collect::<String>(),
                                ),
                            );
                            continue;
                        }
                    },
                },
            };
            claims(&rec, commit, &source, ev);
        }
    }
    Ok(())
}

// Writing ------------------------------------------------------------------------------------

/// The Agent Trace version git sage writes.
pub(crate) const WRITE_VERSION: &str = "0.1.0";
/// The `metadata` key git sage's own data goes under (reverse-domain notation, as the specification's section on metadata suggests).
pub(crate) const METADATA_KEY: &str = "dev.git-sage";

/// What one record git sage writes says: these lines of this file, at this commit.
#[derive(Debug, Clone)]
pub(crate) struct Write<'a> {
    /// Repo-relative, with `/`.
    pub path: &'a str,
    pub ranges: &'a [Lines],
    /// The commit (40 hex digits).
    pub revision: &'a str,
    /// git sage's version, for `tool.version`.
    pub tool_version: &'a str,
    /// Who wrote the lines, if known (`None` writes `unknown`).
    pub author: Option<Author>,
    /// models.dev `provider/model`, if known.
    pub model_id: Option<&'a str>,
    /// Where the conversation is, if known.
    pub url: Option<&'a str>,
    /// RFC 3339, given by the caller (records are reproducible).
    pub timestamp: &'a str,
    /// Goes under `metadata["dev.git-sage"]`; `null` leaves metadata out.
    pub sage: Value,
}

/// A conforming v0.1.0 Trace Record. Its `id` is a UUID derived from the rest of the record
/// (SHA-256, version 8 and the RFC 9562 variant set): the same inputs give the same record.
pub(crate) fn record(w: &Write) -> Value {
    let mut contributor = Map::new();
    let kind = match w.author {
        Some(Author::Agent) => "ai",
        Some(Author::Human) => "human",
        Some(Author::Mixed | Author::AgentModified) => "mixed",
        Some(Author::Unknown) | None => "unknown",
    };
    contributor.insert("type".into(), json!(kind));
    if let Some(m) = w.model_id.filter(|m| !m.is_empty()) {
        let m: String = m.chars().take(250).collect();
        contributor.insert("model_id".into(), json!(m));
    }
    let mut conversation = Map::new();
    if let Some(u) = w.url {
        conversation.insert("url".into(), json!(u));
    }
    conversation.insert("contributor".into(), Value::Object(contributor));
    conversation.insert(
        "ranges".into(),
        Value::Array(
            w.ranges
                .iter()
                .map(|r| json!({"start_line": r.start, "end_line": r.end}))
                .collect(),
        ),
    );
    let mut rec = Map::new();
    rec.insert("version".into(), json!(WRITE_VERSION));
    rec.insert("timestamp".into(), json!(w.timestamp));
    rec.insert("vcs".into(), json!({"type": "git", "revision": w.revision}));
    rec.insert(
        "tool".into(),
        json!({"name": OWN_TOOL, "version": w.tool_version}),
    );
    rec.insert(
        "files".into(),
        json!([{"path": w.path, "conversations": [Value::Object(conversation)]}]),
    );
    if !w.sage.is_null() {
        rec.insert("metadata".into(), json!({ METADATA_KEY: w.sage }));
    }
    let id = uuid_of(&serde_json::to_vec(&rec).unwrap_or_default());
    rec.insert("id".into(), json!(id));
    Value::Object(rec)
}

/// A UUID from the SHA-256 of `bytes`: version 8 (RFC 9562's custom layout), RFC variant.
fn uuid_of(bytes: &[u8]) -> String {
    use sha2::Digest;
    let h = sha2::Sha256::digest(bytes);
    let mut b = [0u8; 16];
    b.copy_from_slice(&h[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(v: Value) -> std::result::Result<Record, Unusable> {
        parse(&v)
    }

    #[test]
    fn trace_directories_are_the_roots_and_the_files_ancestors() {
        assert_eq!(trace_dirs(&[]), [".agent-trace"]);
        assert_eq!(
            trace_dirs(&["a/b/c.py", "a/d.py", "e.py"]),
            [".agent-trace", "a/.agent-trace", "a/b/.agent-trace"]
        );
    }

    /// Records in the project directory holding the file are read, at any depth; those of a
    /// sibling project are not, and a commit that left the directories alone adds none.
    #[test]
    fn committed_records_of_the_files_projects() {
        use crate::git::testgit::git;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        let record = |id: &str, path: &str| {
            format!(
                r#"{{"version":"0.1.0","id":"{id}","timestamp":"t","files":[{{"path":"{path}","conversations":[{{"contributor":{{"type":"ai"}},"ranges":[{{"start_line":1,"end_line":1}}]}}]}}]}}"#
            )
        };
        let write = |p: &str, text: &str| {
            let p = d.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("apps/web/src/x.py", "x = 1\n");
        write("README", "r\n");
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "base"]);
        write("apps/web/src/x.py", "x = 2\n");
        write(
            "apps/web/.agent-trace/t.jsonl",
            &format!("{}\n", record("in-project", "apps/web/src/x.py")),
        );
        write(
            "apps/api/.agent-trace/t.jsonl",
            &format!("{}\n", record("sibling", "apps/web/src/x.py")),
        );
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "agent"]);
        write("README", "s\n");
        git(d, &["commit", "-q", "-am", "other"]);
        let repo = Repo::discover(d).unwrap();
        let ids: Vec<Oid> = git(d, &["rev-list", "HEAD~2..HEAD"])
            .lines()
            .map(|h| Oid::from_hex(h).unwrap())
            .collect();
        let mut ev = Evidence::default();
        read(&repo, &ids, &["apps/web/src/x.py"], &mut ev).unwrap();
        let found: Vec<&str> = ev
            .claims
            .iter()
            .filter_map(|c| c.trace.as_deref())
            .collect();
        assert_eq!(found, ["in-project"], "{ev:#?}");
        assert_eq!(ev.claims[0].commit, ids[1]);
    }

    #[test]
    fn the_readme_minimal_record() {
        let r = rec(json!({
            "version": "0.1.0", "id": "550e8400-e29b-41d4-a716-446655440000",
            "timestamp": "2026-01-25T10:00:00Z",
            "files": [{"path": "src/app.ts", "conversations": [
                {"contributor": {"type": "ai"}, "ranges": [{"start_line": 1, "end_line": 50}]}]}]
        }))
        .unwrap();
        assert_eq!(r.revision, None);
        assert_eq!(r.conversations.len(), 1);
        assert_eq!(r.conversations[0].0, "src/app.ts");
        assert_eq!(
            r.conversations[0].2[0].contributor,
            Some((Author::Agent, None))
        );
    }

    #[test]
    fn per_range_contributor_overrides_and_windows_paths() {
        let r = rec(json!({
            "version": "0.1.0", "id": "x", "timestamp": "t",
            "vcs": {"type": "jj", "revision": "kkmpptxz"},
            "files": [{"path": "src\\a.ts", "conversations": [
                {"contributor": {"type": "ai", "model_id": "openai/gpt-4o"},
                 "ranges": [{"start_line": 1, "end_line": 2},
                            {"start_line": 3, "end_line": 3, "contributor": {"type": "human"}}]}]}]
        }))
        .unwrap();
        assert_eq!(r.revision, None, "a jj change id names no git commit");
        assert_eq!(r.conversations[0].0, "src/a.ts");
        let who: Vec<_> = r.conversations[0]
            .2
            .iter()
            .map(|x| x.contributor.clone())
            .collect();
        assert_eq!(
            who,
            [
                Some((Author::Agent, Some("openai/gpt-4o".into()))),
                Some((Author::Human, None))
            ]
        );
    }

    #[test]
    fn what_is_not_a_record() {
        let why = |v: Value| rec(v).unwrap_err().reason;
        assert_eq!(
            why(json!({"schema": "agent-trace/v0.1.0", "file_path": "/x", "timestamp": "t"})),
            "not an Agent Trace record: missing version, id, files"
        );
        let base =
            |version: &str| json!({"version": version, "id": "x", "timestamp": "t", "files": []});
        assert!(rec(base("0.2.7")).is_ok());
        assert!(why(base("1.0.0")).contains("major version 0 only"));
        assert!(why(base("1.0")).contains("not MAJOR.MINOR.PATCH"));
        let path = json!({"version": "0.1.0", "id": "x", "timestamp": "t",
            "files": [{"path": "c:\\Users\\me\\a.ts", "conversations": []}]});
        assert_eq!(why(path), "a path is not relative to the repository");
        let kind = json!({"version": "0.1.0", "id": "x", "timestamp": "t",
            "files": [{"path": "a", "conversations": [{"contributor": {"type": "bot"}, "ranges": []}]}]});
        let e = rec(kind).unwrap_err();
        assert!(e.detail.contains("\"bot\""), "{e:?}");
        let back = json!({"version": "0.1.0", "id": "x", "timestamp": "t",
            "files": [{"path": "a", "conversations": [{"ranges": [{"start_line": 5, "end_line": 3}]}]}]});
        assert!(rec(back).unwrap_err().detail.contains("ends before"));
    }

    #[test]
    fn trace_files() {
        assert!(is_trace_file(".agent-trace/traces.jsonl"));
        assert!(is_trace_file("packages/.agent-trace/traces.jsonl"));
        assert!(!is_trace_file(".agent-trace/sub/traces.jsonl"));
        assert!(!is_trace_file("agent-trace/traces.jsonl"));
        assert!(!is_trace_file(".agent-trace/traces.json"));
    }

    /// The README's schema (tests/fixtures/dialects/agent-trace/trace-record.schema.json),
    /// formats checked.
    fn validator() -> jsonschema::Validator {
        let text =
            include_str!("../../../tests/fixtures/dialects/agent-trace/trace-record.schema.json");
        let schema: Value = serde_json::from_str(text).unwrap();
        jsonschema::draft202012::options()
            .offline()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap()
    }

    fn sample<'a>(sage: Value, ranges: &'a [Lines]) -> Write<'a> {
        Write {
            path: "media/fetcher.py",
            ranges,
            revision: "3f2a9c1d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
            tool_version: "0.1.0",
            author: Some(Author::Agent),
            model_id: Some("anthropic/claude-opus-4-8"),
            url: Some("https://claude.ai/code/session_01AhM1tKX7JLESsABc45RCbB"),
            timestamp: "2026-08-18T17:57:34Z",
            sage,
        }
    }

    #[test]
    fn written_records_conform_to_the_schema() {
        let v = validator();
        let ranges = [Lines { start: 12, end: 19 }, Lines { start: 40, end: 40 }];
        let full = record(&sample(
            json!({"finding": "sage.finding/1", "origin_turn": 4}),
            &ranges,
        ));
        let errors: Vec<String> = v.iter_errors(&full).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}\n{full:#}");
        assert_eq!(full["version"], "0.1.0");
        assert_eq!(full["tool"]["name"], "git-sage");
        assert_eq!(full["metadata"]["dev.git-sage"]["origin_turn"], 4);
        // bare: nothing known but the lines
        let mut w = sample(Value::Null, &ranges);
        w.author = None;
        w.model_id = None;
        w.url = None;
        let bare = record(&w);
        assert!(v.is_valid(&bare), "{bare:#}");
        assert!(bare.get("metadata").is_none());
        assert_eq!(
            bare["files"][0]["conversations"][0]["contributor"]["type"],
            "unknown"
        );
        // and git sage reads back what it writes
        let back = parse(&full).unwrap();
        assert_eq!(back.conversations[0].2.len(), 2);
        // but never as evidence: they are its own conclusions
        assert!(
            usable(&full)
                .unwrap_err()
                .reason
                .contains("written by git sage")
        );
        assert_eq!(back.revision.as_deref(), Some(w.revision));
    }

    #[test]
    fn ids_are_uuids_fixed_by_the_inputs() {
        let ranges = [Lines { start: 1, end: 2 }];
        let a = record(&sample(json!({"n": 1}), &ranges));
        let b = record(&sample(json!({"n": 1}), &ranges));
        let c = record(&sample(json!({"n": 2}), &ranges));
        assert_eq!(a["id"], b["id"]);
        assert_ne!(a["id"], c["id"]);
        let id = a["id"].as_str().unwrap();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "8", "version 8");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "RFC variant");
    }

    #[test]
    fn the_schema_rejects_what_it_should() {
        let v = validator();
        let ok = json!({"version": "0.1.0", "id": "550e8400-e29b-41d4-a716-446655440000",
            "timestamp": "2026-01-25T10:00:00Z", "files": []});
        assert!(v.is_valid(&ok));
        let mut bad = ok.clone();
        bad["id"] = json!("not-a-uuid");
        assert!(!v.is_valid(&bad), "formats are checked");
        let mut bad = ok;
        bad["version"] = json!("1.0");
        assert!(!v.is_valid(&bad));
    }
}
