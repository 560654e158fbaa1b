//! AgentBlame's notes, one JSON object per commit in `refs/notes/agentblame`
//! (docs/dialects.md#agentblame).
//!
//! Three versions are in use. v1 and v2 list `attributions`, one range of agent-written lines
//! each (`path`, `start_line`/`startLine`, `end_line`/`endLine`, `provider`, `model`,
//! `content_hash`/`contentHash`…): v1 in snake_case, v2 in camelCase. v3 names the agent's
//! sessions (`sessions{id: {agent, model, prompts}}`) and gives each file's lines per session
//! as a range string (`files{path: [{session, lines: "123-157,212-221", prompt}]}`). Lines no
//! record names are a person's by the format's own rule, but that is an absence, not a
//! record: they get no claim. v3's prompts carry their full text; it is never read into a
//! claim. `refs/notes/agentblame-analytics` holds repository statistics, not attribution, and
//! is not read.

use std::collections::HashMap;

use serde::Deserialize;

use super::noted::{self, NOTE_CAP, Note, NoteClaims, NoteReader};
use super::{Author, Claim, Dialect, Evidence, Lines, parse_ranges};
use crate::error::Result;
use crate::git::{Oid, Repo};

/// AgentBlame's notes ref.
pub(crate) const REF: &str = "refs/notes/agentblame";
/// The one category the format has: the lines are the agent's.
const AI_GENERATED: &str = "ai_generated";

/// How AgentBlame's notes are read: its one ref.
pub(super) const NOTES: NoteReader = NoteReader {
    dialect: Dialect::AgentBlame,
    refs: |_| Ok(vec![REF.to_string()]),
    parse: read_note,
};

/// Reads the AgentBlame notes on `commits`.
pub(crate) fn read(repo: &Repo, commits: &[Oid], ev: &mut Evidence) -> Result<()> {
    noted::each_note(repo, commits, &NOTES, NOTE_CAP, ev)
}

fn read_note(note: &Note) -> std::result::Result<NoteClaims, String> {
    let parsed = parse(&note.bytes)?;
    let partly = (parsed.unreadable > 0).then(|| {
        format!(
            "{} not read ({})",
            noted::count(parsed.unreadable, "record"),
            parsed.first_why
        )
    });
    let claims = parsed
        .ranges
        .into_iter()
        .map(|r| Claim {
            agent: r.agent,
            model: r.model,
            session: r.session,
            content_hash: r.content_hash,
            ..note.claim(Dialect::AgentBlame, r.path, r.lines, Author::Agent)
        })
        .collect();
    Ok(NoteClaims {
        claims,
        partly,
        covered: Vec::new(),
    })
}

/// The agent's lines of one file, as one record gives them.
#[derive(Debug, Clone, PartialEq)]
struct Range {
    path: String,
    lines: Vec<Lines>,
    agent: Option<String>,
    model: Option<String>,
    session: Option<String>,
    content_hash: Option<String>,
}

#[derive(Debug, Default)]
struct Parsed {
    ranges: Vec<Range>,
    unreadable: usize,
    first_why: String,
}

impl Parsed {
    fn unreadable(&mut self, why: impl Into<String>) {
        if self.unreadable == 0 {
            self.first_why = why.into();
        }
        self.unreadable += 1;
    }
}

#[derive(Deserialize)]
struct Probe {
    version: Option<serde_json::Value>,
}

/// v1 and v2: the same record, snake_case or camelCase (either is read in either version).
#[derive(Deserialize)]
struct Attributed {
    attributions: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Attribution {
    path: String,
    #[serde(rename = "startLine", alias = "start_line")]
    start_line: u32,
    #[serde(rename = "endLine", alias = "end_line")]
    end_line: u32,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, rename = "contentHash", alias = "content_hash")]
    content_hash: Option<String>,
}

/// v3, without the prompts' text (serde steps over what is not named here).
#[derive(Deserialize)]
struct V3 {
    #[serde(default)]
    sessions: HashMap<String, V3Session>,
    files: HashMap<String, Vec<V3Entry>>,
}

#[derive(Deserialize)]
struct V3Session {
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct V3Entry {
    #[serde(default)]
    session: Option<String>,
    lines: String,
}

fn parse(bytes: &[u8]) -> std::result::Result<Parsed, String> {
    let probe: Probe = serde_json::from_slice(bytes).map_err(|e| format!("malformed JSON: {e}"))?;
    let Some(version) = probe.version else {
        return Err("not an AgentBlame note (no `version`)".into());
    };
    let mut out = Parsed::default();
    match version.as_u64() {
        Some(1 | 2) => {
            let note: Attributed =
                serde_json::from_slice(bytes).map_err(|e| format!("malformed note: {e}"))?;
            for value in note.attributions {
                let a: Attribution = match serde_json::from_value(value) {
                    Ok(a) => a,
                    Err(e) => {
                        out.unreadable(format!("an attribution: {e}"));
                        continue;
                    }
                };
                if let Some(c) = a.category.as_deref().filter(|c| *c != AI_GENERATED) {
                    out.unreadable(format!("category {c}"));
                    continue;
                }
                if a.start_line == 0 || a.end_line < a.start_line {
                    out.unreadable(format!("lines {}-{}", a.start_line, a.end_line));
                    continue;
                }
                out.ranges.push(Range {
                    path: a.path,
                    lines: vec![Lines {
                        start: a.start_line,
                        end: a.end_line,
                    }],
                    agent: a.provider.filter(|s| !s.is_empty()),
                    model: a.model.filter(|s| !s.is_empty()),
                    session: None,
                    content_hash: a.content_hash.filter(|s| !s.is_empty()),
                });
            }
        }
        Some(3) => {
            let note: V3 =
                serde_json::from_slice(bytes).map_err(|e| format!("malformed note: {e}"))?;
            let mut paths: Vec<_> = note.files.into_iter().collect();
            // JSON objects have no order worth keeping; the claims come by path.
            paths.sort_by(|a, b| a.0.cmp(&b.0));
            for (path, entries) in paths {
                for e in entries {
                    let Some(lines) = parse_ranges(&e.lines).filter(|l| !l.is_empty()) else {
                        out.unreadable(format!("lines {:?}", e.lines));
                        continue;
                    };
                    let session = e.session.filter(|s| !s.is_empty());
                    let known = session.as_ref().and_then(|s| note.sessions.get(s));
                    out.ranges.push(Range {
                        path: path.clone(),
                        lines: noted::normalise(lines),
                        agent: known
                            .and_then(|s| s.agent.clone())
                            .filter(|s| !s.is_empty()),
                        model: known
                            .and_then(|s| s.model.clone())
                            .filter(|s| !s.is_empty()),
                        session,
                        content_hash: None,
                    });
                }
            }
        }
        Some(v) if v > 3 => {
            return Err(format!(
                "version {v} is newer than this reader (it reads versions 1 to 3)"
            ));
        }
        _ => {
            return Err(format!(
                "unknown version {version} (this reader reads 1 to 3)"
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(start: u32, end: u32) -> Lines {
        Lines { start, end }
    }

    #[test]
    fn v1_snake_case() {
        let n = r#"{"version":1,"timestamp":"2026-01-14T19:07:42.773Z","attributions":[
          {"path":"src/a.ts","start_line":394,"end_line":394,"category":"ai_generated","provider":"claude_code","model":"claude","confidence":1,"match_type":"exact_hash","content_hash":"sha256:bc0f"},
          {"path":"src/a.ts","start_line":448,"end_line":454,"category":"ai_generated","provider":"claude_code","model":null,"confidence":0.9,"match_type":"line_in_ai_content","content_hash":"sha256:62d8"}]}"#;
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!(p.unreadable, 0);
        assert_eq!(
            p.ranges[0],
            Range {
                path: "src/a.ts".into(),
                lines: vec![l(394, 394)],
                agent: Some("claude_code".into()),
                model: Some("claude".into()),
                session: None,
                content_hash: Some("sha256:bc0f".into()),
            }
        );
        assert_eq!(p.ranges[1].lines, [l(448, 454)]);
        assert_eq!(p.ranges[1].model, None);
    }

    #[test]
    fn v2_camel_case_and_bad_records() {
        let n = r#"{"version":2,"timestamp":"t","attributions":[
          {"path":"package.json","startLine":5,"endLine":6,"category":"ai_generated","provider":"claudeCode","model":"claude","confidence":0.95,"matchType":"normalized_hash","contentHash":"sha256:238b"},
          {"path":"x","startLine":9,"endLine":3,"category":"ai_generated","provider":"cursor","model":null,"confidence":1,"matchType":"exact_hash","contentHash":"h"},
          {"path":"x","startLine":1,"endLine":1,"category":"human_written"},
          {"path":"x"}]}"#;
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!(p.ranges.len(), 1);
        assert_eq!(p.ranges[0].agent.as_deref(), Some("claudeCode"));
        assert_eq!(p.ranges[0].content_hash.as_deref(), Some("sha256:238b"));
        assert_eq!(p.unreadable, 3);
        assert_eq!(p.first_why, "lines 9-3");
    }

    #[test]
    fn v3_sessions_and_range_strings() {
        let n = r#"{"version":3,"timestamp":"2026-02-09T19:30:46.246Z",
          "sessions":{"16408bad7abecf14":{"agent":"claude","model":"claude-opus-4-6","startedAt":"t",
            "prompts":[{"id":10,"timestamp":"t","content":"a secret prompt","tools":{"read":10,"edit":2},"duration":43}]}},
          "files":{"README.md":[{"session":"16408bad7abecf14","lines":"123-157,212-221","prompt":10}],
                   "a.py":[{"session":"16408bad7abecf14","lines":"39,6,52,54-63,53,65,70,52,83"},
                           {"session":"ffffffffffffffff","lines":"1"},
                           {"session":"16408bad7abecf14","lines":"3-x"}]}}"#;
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!(p.ranges.len(), 3);
        assert_eq!(p.ranges[0].path, "README.md");
        assert_eq!(p.ranges[0].lines, [l(123, 157), l(212, 221)]);
        assert_eq!(p.ranges[0].agent.as_deref(), Some("claude"));
        assert_eq!(p.ranges[0].model.as_deref(), Some("claude-opus-4-6"));
        assert_eq!(p.ranges[0].session.as_deref(), Some("16408bad7abecf14"));
        // Unsorted, repeated lines as AgentBlame writes them: sorted and joined.
        assert_eq!(
            p.ranges[1].lines,
            [
                l(6, 6),
                l(39, 39),
                l(52, 63),
                l(65, 65),
                l(70, 70),
                l(83, 83)
            ]
        );
        // A session the note does not describe: the lines are still the agent's.
        assert_eq!(p.ranges[2].agent, None);
        assert_eq!(p.ranges[2].session.as_deref(), Some("ffffffffffffffff"));
        assert_eq!(p.unreadable, 1);
        assert!(!format!("{:?}", p.ranges).contains("secret"));
    }

    #[test]
    fn skipped_notes_say_why() {
        let why = |s: &str| parse(s.as_bytes()).unwrap_err();
        assert!(why("{\"version\":2,").starts_with("malformed JSON"));
        assert!(why("{\"files\":{}}").starts_with("not an AgentBlame note"));
        assert_eq!(
            why("{\"version\":4,\"files\":{}}"),
            "version 4 is newer than this reader (it reads versions 1 to 3)"
        );
        assert!(why("{\"version\":0}").starts_with("unknown version 0"));
        assert!(why("{\"v\":3,\"summary\":{}}").starts_with("not an AgentBlame note"));
        assert!(why("{\"version\":3,\"files\":[]}").starts_with("malformed note"));
        assert!(why("{\"version\":2,\"attributions\":{}}").starts_with("malformed note"));
    }
}
