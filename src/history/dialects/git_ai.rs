//! git-ai's authorship logs ("Git AI Standard" v3.0.0), one note per commit in
//! `refs/notes/ai` (docs/dialects.md#git-ai).
//!
//! A log is an attestation section — a file path on a line of its own, then two-space-indented
//! `<key> <ranges>` entries — a line that is exactly `---`, and a JSON object of metadata.
//! Keys route by form: `s_<hex>::t_<hex>` to `sessions` (the `t_` part is the trace of one
//! checkpoint), `h_<hex>` to `humans`, a bare 16- or 7-hex or UUID key to the legacy
//! `prompts`, and the bare words `human` / `ai_agent` of early versions. Lines under no key
//! are "untracked": no claim. Transcripts inlined in old notes (`messages`) are counted past,
//! never kept; only a `messages_url` link is.

use std::collections::HashMap;

use serde::Deserialize;

use super::noted::{self, NOTE_CAP, Note, NoteClaims, NoteReader};
use super::{Author, Claim, Dialect, Evidence, Lines, Transcript, parse_ranges};
use crate::error::Result;
use crate::git::{Oid, Repo};

/// git-ai's notes ref.
pub(crate) const REF: &str = "refs/notes/ai";
/// The remote-tracking copies git-ai keeps of other clones' notes, read when the local ref has
/// no note on a commit.
const REMOTE_REFS: &str = "refs/notes/ai-remote/*";
/// The major version of `authorship/<major>.<minor>.<patch>` this reader knows.
const MAJOR: &str = "3";

/// How git-ai's notes are read: `refs/notes/ai` first, then `refs/notes/ai-remote/*` for
/// commits the local ref has no note on (the claim's source names that ref).
pub(super) const NOTES: NoteReader = NoteReader {
    dialect: Dialect::GitAi,
    refs,
    parse: read_note,
};

/// Reads the git-ai notes on `commits`.
pub(crate) fn read(repo: &Repo, commits: &[Oid], ev: &mut Evidence) -> Result<()> {
    read_capped(repo, commits, ev, NOTE_CAP)
}

pub(super) fn read_capped(repo: &Repo, commits: &[Oid], ev: &mut Evidence, cap: u64) -> Result<()> {
    noted::each_note(repo, commits, &NOTES, cap, ev)
}

fn refs(repo: &Repo) -> Result<Vec<String>> {
    let mut refs = vec![REF.to_string()];
    refs.extend(
        repo.refs_matching(REMOTE_REFS)?
            .into_iter()
            .map(|(name, _)| name),
    );
    Ok(refs)
}

fn read_note(note: &Note) -> std::result::Result<NoteClaims, String> {
    let log = parse(&note.bytes)?;
    let partly = (log.unreadable > 0).then(|| {
        format!(
            "{} not read (first: line {})",
            noted::count(log.unreadable, "attestation line"),
            log.first_unreadable
        )
    });
    let claims = log
        .entries
        .into_iter()
        .map(|e| Claim {
            agent: e.agent,
            model: e.model,
            session: e.session,
            transcript: e.transcript,
            trace: e.trace,
            ..note.claim(Dialect::GitAi, e.path, e.lines, e.author)
        })
        .collect();
    Ok(NoteClaims {
        claims,
        partly,
        covered: Vec::new(),
    })
}

/// One attestation entry, resolved against the metadata.
#[derive(Debug, Clone, Default, PartialEq)]
struct Entry {
    path: String,
    lines: Vec<Lines>,
    author: Author,
    agent: Option<String>,
    model: Option<String>,
    session: Option<String>,
    transcript: Option<Transcript>,
    trace: Option<String>,
}

/// A note read: its entries, and how many attestation lines could not be read.
#[derive(Debug, Default)]
struct Log {
    entries: Vec<Entry>,
    unreadable: usize,
    /// The note's line number of the first unreadable line (1-based).
    first_unreadable: usize,
}

/// Just enough of the metadata to tell a git-ai log from another tool's note.
#[derive(Deserialize)]
struct Probe {
    schema_version: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
    #[serde(default)]
    prompts: Option<HashMap<String, Record>>,
    #[serde(default)]
    sessions: Option<HashMap<String, Record>>,
}

/// A session or legacy prompt record. Real notes put `messages_url` in session records too,
/// which the spec forbids; it is read wherever it is. An inlined transcript (`messages`,
/// removed in git-ai 1.3.4) is not a field here: the parser steps over it without keeping it.
#[derive(Deserialize)]
struct Record {
    #[serde(default)]
    agent_id: Option<AgentId>,
    #[serde(default)]
    messages_url: Option<String>,
}

#[derive(Deserialize)]
struct AgentId {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// Reads one note; `Err` says why the whole note is skipped.
fn parse(bytes: &[u8]) -> std::result::Result<Log, String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err("not a git-ai note (not UTF-8 text)".into());
    };
    // The divider is a line that is exactly `---` (a CR before the newline is tolerated).
    let mut offset = 0;
    let mut divider = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n').trim_end_matches('\r');
        if bare == "---" {
            divider = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((att_end, meta_start)) = divider else {
        return Err("not a git-ai note (no `---` line before the metadata)".into());
    };
    let meta_text = &text[meta_start..];
    if !meta_text.trim_start().starts_with('{') {
        return Err("not a git-ai note (no JSON metadata after `---`)".into());
    }
    // One pass over the metadata (notes run to megabytes); only when it fails is it read
    // again, to say why.
    let meta = match serde_json::from_str::<Meta>(meta_text) {
        Ok(meta) => {
            check_version(meta.schema_version.as_ref())?;
            meta
        }
        Err(e) => {
            let probe: Probe = serde_json::from_str(meta_text)
                .map_err(|e| format!("malformed metadata JSON: {e}"))?;
            check_version(probe.schema_version.as_ref())?;
            return Err(format!("malformed metadata: {e}"));
        }
    };
    let prompts = meta.prompts.unwrap_or_default();
    let sessions = meta.sessions.unwrap_or_default();

    let mut log = Log::default();
    fn unreadable(log: &mut Log, at: usize) {
        log.unreadable += 1;
        if log.first_unreadable == 0 {
            log.first_unreadable = at;
        }
    }
    let mut path: Option<String> = None;
    // A quoted path that runs over lines (it holds a newline): what was read so far.
    let mut open_quote: Option<String> = None;
    for (i, line) in text[..att_end].lines().enumerate() {
        let at = i + 1;
        if let Some(mut p) = open_quote.take() {
            p.push('\n');
            match line.strip_suffix('"') {
                Some(rest) => {
                    p.push_str(rest);
                    path = Some(p);
                }
                None => {
                    p.push_str(line);
                    open_quote = Some(p);
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let Some(entry) = line.strip_prefix("  ") else {
            if line.starts_with(' ') || line.starts_with('\t') {
                unreadable(&mut log, at);
                continue;
            }
            path = match line.strip_prefix('"') {
                Some(rest) => match rest.strip_suffix('"') {
                    Some(p) => Some(p.to_string()),
                    None => {
                        open_quote = Some(rest.to_string());
                        None
                    }
                },
                None => Some(line.to_string()),
            };
            continue;
        };
        let (Some(file), Some((key, ranges))) = (&path, entry.trim_end().split_once(' ')) else {
            unreadable(&mut log, at);
            continue;
        };
        let Some(lines) = parse_ranges(ranges).filter(|l| !l.is_empty()) else {
            unreadable(&mut log, at);
            continue;
        };
        let Some(e) = resolve(key, file, noted::normalise(lines), &prompts, &sessions) else {
            unreadable(&mut log, at);
            continue;
        };
        log.entries.push(e);
    }
    if open_quote.is_some() {
        unreadable(&mut log, text[..att_end].lines().count());
    }
    Ok(log)
}

/// `authorship/3.x.y` passes; another tool's note or another major version is why the note is
/// skipped.
fn check_version(v: Option<&serde_json::Value>) -> std::result::Result<(), String> {
    let version = match v {
        Some(serde_json::Value::String(v)) if v.starts_with("authorship/") => v,
        Some(_) => return Err("not a git-ai note (schema_version is not `authorship/…`)".into()),
        None => return Err("not a git-ai note (no schema_version)".into()),
    };
    let major = version["authorship/".len()..]
        .split('.')
        .next()
        .unwrap_or("");
    if major != MAJOR {
        return Err(format!(
            "schema_version {version}: this reader reads authorship/{MAJOR}.x only"
        ));
    }
    Ok(())
}

/// The claim an attestation key makes, by the key's form; `None` for a key of no known form.
fn resolve(
    key: &str,
    path: &str,
    lines: Vec<Lines>,
    prompts: &HashMap<String, Record>,
    sessions: &HashMap<String, Record>,
) -> Option<Entry> {
    let bare = |author| Entry {
        path: path.to_string(),
        lines: lines.clone(),
        author,
        ..Entry::default()
    };
    let from = |record: Option<&Record>, trace: Option<String>| {
        let mut e = bare(Author::Agent);
        e.trace = trace;
        if let Some(r) = record {
            if let Some(a) = &r.agent_id {
                e.agent = nonempty(&a.tool);
                e.model = nonempty(&a.model);
                e.session = nonempty(&a.id);
            }
            e.transcript = nonempty(&r.messages_url).map(Transcript::Url);
        }
        e
    };
    if key.starts_with("s_") {
        // `s_<session>::t_<trace>`; a few real notes carry the session part alone.
        let (session, trace) = match key.split_once("::") {
            Some((s, t)) => (s, Some(t.to_string())),
            None => (key, None),
        };
        if !is_id(session, "s_") || trace.as_deref().is_some_and(|t| !is_id(t, "t_")) {
            return None;
        }
        return Some(from(sessions.get(session), trace));
    }
    if let Some(hash) = key.strip_prefix("h_") {
        return is_hex(hash).then(|| bare(Author::Human));
    }
    match key {
        "human" => return Some(bare(Author::Human)),
        "ai_agent" => return Some(bare(Author::Agent)),
        _ => {}
    }
    let legacy = (is_hex(key) && (key.len() == 16 || key.len() == 7)) || is_uuid(key);
    if legacy || prompts.contains_key(key) {
        return Some(from(prompts.get(key), None));
    }
    None
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_ref().filter(|s| !s.trim().is_empty()).cloned()
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(is_hex)
}

/// `638f41ac-1dd9-49eb-b090-a4abfe235a97`
fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| is_hex(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(start: u32, end: u32) -> Lines {
        Lines { start, end }
    }

    const SESSIONS: &str = r#"src/main.rs
  s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-10,15-20
  s_c9883b05a2487d::t_a1b2c3d4e5f678 25,30-35
  h_31dce776f88375 42-50
"src/my file.rs"
  s_e7f2a90b31cc48::t_deadbeef012345 1-50
---
{
  "schema_version": "authorship/3.0.0",
  "git_ai_version": "1.4.5",
  "base_commit_sha": "7734793b756b3921c88db5375a8c156e9532447b",
  "prompts": {},
  "humans": {"h_31dce776f88375": {"author": "Developer <dev@example.com>"}},
  "sessions": {
    "s_c9883b05a2487d": {
      "agent_id": {"tool": "cursor", "id": "6ef2299e-a67f", "model": "claude-sonnet-4-5"},
      "human_author": "dev@example.com"
    },
    "s_e7f2a90b31cc48": {
      "agent_id": {"tool": "claude", "id": "conv_abc123", "model": "claude-sonnet-4-5"},
      "human_author": null,
      "custom_attributes": {"team": "backend"},
      "messages": [{"type": "user", "text": "a secret prompt"}],
      "messages_url": "https://usegitai.com/cas/716cc6"
    }
  }
}
"#;

    #[test]
    fn sessions_humans_and_quoted_paths() {
        let log = parse(SESSIONS.as_bytes()).unwrap();
        assert_eq!(log.unreadable, 0);
        assert_eq!(log.entries.len(), 4);
        let e = &log.entries[0];
        assert_eq!(e.path, "src/main.rs");
        assert_eq!(e.lines, [l(1, 10), l(15, 20)]);
        assert_eq!(e.author, Author::Agent);
        assert_eq!(e.agent.as_deref(), Some("cursor"));
        assert_eq!(e.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(e.session.as_deref(), Some("6ef2299e-a67f"));
        assert_eq!(e.trace.as_deref(), Some("t_9f8e7d6c5b4a32"));
        assert_eq!(e.transcript, None);
        assert_eq!(log.entries[1].trace.as_deref(), Some("t_a1b2c3d4e5f678"));
        assert_eq!(log.entries[1].lines, [l(25, 25), l(30, 35)]);
        let h = &log.entries[2];
        assert_eq!((h.author, h.agent.as_deref()), (Author::Human, None));
        assert_eq!(h.lines, [l(42, 50)]);
        let q = &log.entries[3];
        assert_eq!(q.path, "src/my file.rs");
        assert_eq!(
            q.transcript,
            Some(Transcript::Url("https://usegitai.com/cas/716cc6".into()))
        );
        // The inline transcript is nowhere in what was read.
        assert!(!format!("{:?}", log.entries).contains("secret"));
    }

    #[test]
    fn legacy_keys_and_bare_words() {
        let note = r#"tests/stats.rs
  e61c0a4 67,131-148
  human 68,151
  638f41ac-1dd9-49eb-b090-a4abfe235a97 314
  4a60f5ac951ddc7b 36
  ai_agent 3,9
  d9978a8723e02b52 1-4
---
{"schema_version":"authorship/3.0.0","base_commit_sha":"00309900","prompts":{
 "e61c0a4":{"agent_id":{"tool":"cursor","id":"d13537e7","model":"gpt-5.1"},
   "messages":[{"type":"user","text":"x"}],"total_additions":1,"total_deletions":0,
   "accepted_lines":1,"overriden_lines":0},
 "638f41ac-1dd9-49eb-b090-a4abfe235a97":{"agent_id":{"tool":"cursor","id":"638f41ac","model":"gpt-5-codex"}},
 "4a60f5ac951ddc7b":{"agent_id":{"tool":"claude","id":"9279810e","model":"claude-opus-4-5"},
   "messages":[],"messages_url":"http://localhost:4000/cas/c779"}}}
"#;
        let log = parse(note.as_bytes()).unwrap();
        assert_eq!(log.unreadable, 0);
        let got: Vec<_> = log
            .entries
            .iter()
            .map(|e| (e.author, e.agent.as_deref(), e.session.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Author::Agent, Some("cursor"), Some("d13537e7")),
                (Author::Human, None, None),
                (Author::Agent, Some("cursor"), Some("638f41ac")),
                (Author::Agent, Some("claude"), Some("9279810e")),
                (Author::Agent, None, None),
                // A legacy key the prompts map lacks (3,780 such entries in git-ai's own
                // notes): still the agent's lines, with nothing more known.
                (Author::Agent, None, None),
            ]
        );
        assert_eq!(
            log.entries[3].transcript,
            Some(Transcript::Url("http://localhost:4000/cas/c779".into()))
        );
        assert_eq!(log.entries[0].trace, None);
    }

    #[test]
    fn a_session_key_without_its_trace_and_an_unresolved_session() {
        let note = "a.rs\n  s_7dde216d12f721 5\n  s_0000000000000a::t_00000000000001 6\n---\n{\"schema_version\":\"authorship/3.0.0\",\"prompts\":{},\"sessions\":{\"s_7dde216d12f721\":{\"agent_id\":{\"tool\":\"claude\",\"id\":\"c1\",\"model\":\"m\"}}}}";
        let log = parse(note.as_bytes()).unwrap();
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.entries[0].session.as_deref(), Some("c1"));
        assert_eq!(log.entries[0].trace, None);
        assert_eq!(log.entries[1].session, None);
        assert_eq!(log.entries[1].trace.as_deref(), Some("t_00000000000001"));
    }

    #[test]
    fn unreadable_lines_are_counted_and_the_rest_kept() {
        let note = "  e61c0a4 1\na.rs\n  e61c0a4 5-3\n  zz!top 4\n   e61c0a4 2\n  e61c0a4 7\n  e61c0a4\n---\n{\"schema_version\":\"authorship/3.0.0\",\"prompts\":{}}";
        let log = parse(note.as_bytes()).unwrap();
        assert_eq!(log.entries.len(), 1);
        assert_eq!(log.entries[0].lines, [l(7, 7)]);
        // An entry before any path, a backwards range, an unknown key, a three-space indent,
        // an entry without ranges.
        assert_eq!((log.unreadable, log.first_unreadable), (5, 1));
    }

    #[test]
    fn a_path_quoted_over_two_lines() {
        let note = "\"odd\nname.rs\"\n  e61c0a4 1\n---\n{\"schema_version\":\"authorship/3.0.0\",\"prompts\":{}}";
        let log = parse(note.as_bytes()).unwrap();
        assert_eq!(log.entries[0].path, "odd\nname.rs");
    }

    #[test]
    fn notes_that_are_not_git_ai_or_cannot_be_read() {
        let why = |s: &str| parse(s.as_bytes()).unwrap_err();
        // Another tool's text in refs/notes/ai (seen in a real repository).
        assert!(
            why("Commit created with Cursor AI assistance\nTimestamp: 2025-12-07 08:42:18 UTC\n")
                .starts_with("not a git-ai note")
        );
        assert!(why("notes\n---\nmore prose\n").starts_with("not a git-ai note"));
        assert!(why("---\n{\"intent\":\"x\"}").starts_with("not a git-ai note"));
        assert!(why("---\n{\"schema_version\":\"whylog/1\"}").starts_with("not a git-ai note"));
        assert!(why("a.rs\n  e61c0a4 1\n---\n{\"schema_version\":").starts_with("malformed"));
        assert!(
            why("---\n{\"schema_version\":\"authorship/3.0.0\",\"prompts\":[1]}")
                .starts_with("malformed metadata")
        );
        assert_eq!(
            why("---\n{\"schema_version\":\"authorship/4.0.0\",\"prompts\":{}}"),
            "schema_version authorship/4.0.0: this reader reads authorship/3.x only"
        );
        assert!(why("---\n{\"schema_version\":\"authorship/0.0.1\"}").contains("3.x only"));
        assert!(parse(&[0xff, 0xfe]).unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn a_newer_minor_and_an_empty_log_are_read() {
        let log =
            parse(b"---\n{\"schema_version\":\"authorship/3.1.0\",\"prompts\":{},\"extra\":1}")
                .unwrap();
        assert!(log.entries.is_empty());
        assert_eq!(log.unreadable, 0);
        let log = parse(b"a.rs\r\n  e61c0a4 1\r\n---\r\n{\"schema_version\":\"authorship/3.0.0\",\"prompts\":{}}").unwrap();
        assert_eq!(log.entries.len(), 1);
    }
}
