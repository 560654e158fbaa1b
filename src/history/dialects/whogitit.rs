//! whogitit's per-line attribution (`AIAttribution`, versions 2 and 3), one JSON note per
//! commit in `refs/notes/whogitit`, and under its earlier name `refs/notes/ai-blame`
//! (docs/dialects.md#whogitit).
//!
//! A note lists every line of each file the session touched, each with its source:
//! `Original` (there before the session: no claim, the note says nothing of who wrote it),
//! `AI` (the agent's), `AIModified` (the agent's, then changed by a person), `Human` (a person
//! wrote it after the agent's edits) and `Unknown` (whogitit could not tell). Runs of lines
//! with the same source and edit become one claim's ranges. The note also stores every line's
//! content and every prompt's full text; neither is read into a claim.

use serde::Deserialize;

use super::noted::{self, NOTE_CAP, Note, NoteClaims, NoteReader};
use super::{Author, Claim, Dialect, Evidence, Lines};
use crate::error::Result;
use crate::git::{Oid, Repo};

/// whogitit's notes ref.
pub(crate) const REF: &str = "refs/notes/whogitit";
/// The name the same notes had before (whogitit's own repository has both, on different
/// commits); read for the commits the first has no note on.
pub(crate) const OLD_REF: &str = "refs/notes/ai-blame";
/// The `version`s this reader knows.
const VERSIONS: [u64; 2] = [2, 3];

/// How whogitit's notes are read: `refs/notes/whogitit` first, then `refs/notes/ai-blame`
/// for commits the first has no note on.
pub(super) const NOTES: NoteReader = NoteReader {
    dialect: Dialect::Whogitit,
    refs: |_| Ok(vec![REF.to_string(), OLD_REF.to_string()]),
    parse: read_note,
};

/// Reads the whogitit notes on `commits`.
pub(crate) fn read(repo: &Repo, commits: &[Oid], ev: &mut Evidence) -> Result<()> {
    noted::each_note(repo, commits, &NOTES, NOTE_CAP, ev)
}

fn read_note(note: &Note) -> std::result::Result<NoteClaims, String> {
    let parsed = parse(&note.bytes)?;
    let partly = (parsed.unreadable > 0).then(|| {
        format!(
            "{} of an unknown source not read",
            noted::count(parsed.unreadable, "line")
        )
    });
    let claims = parsed
        .runs
        .into_iter()
        .map(|run| Claim {
            model: parsed.model.clone(),
            session: parsed.session.clone(),
            trace: run.edit,
            ..note.claim(Dialect::Whogitit, run.path, run.lines, run.author)
        })
        .collect();
    Ok(NoteClaims {
        claims,
        partly,
        covered: parsed.original,
    })
}

/// Lines of one file with one source and edit.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    path: String,
    author: Author,
    edit: Option<String>,
    lines: Vec<Lines>,
}

/// A version of 2 or 3, on a note with `files`; else why the note is skipped.
fn check_version(
    version: Option<&serde_json::Value>,
    files: bool,
) -> std::result::Result<(), String> {
    let (Some(version), true) = (version, files) else {
        return Err("not a whogitit note (no `version` and `files`)".into());
    };
    match version.as_u64() {
        Some(v) if VERSIONS.contains(&v) => Ok(()),
        Some(v) if v > VERSIONS[VERSIONS.len() - 1] => Err(format!(
            "version {v} is newer than this reader (it reads versions 2 and 3)"
        )),
        _ => Err(format!(
            "unknown version {version} (this reader reads 2 and 3)"
        )),
    }
}

#[derive(Debug, Default)]
struct Parsed {
    session: Option<String>,
    model: Option<String>,
    runs: Vec<Run>,
    /// Per file, the `Original` lines: the note covers them and says they predate the
    /// session, without saying who wrote them.
    original: Vec<(String, Vec<Lines>)>,
    /// Lines whose `source.type` is none of the five.
    unreadable: usize,
}

#[derive(Deserialize)]
struct Probe {
    version: Option<serde_json::Value>,
    files: Option<serde::de::IgnoredAny>,
}

/// The note, without `prompts` (full prompt texts) or the lines' `content`: serde steps over
/// fields not named here without keeping them.
#[derive(Deserialize)]
struct AiAttribution {
    #[serde(default)]
    version: Option<serde_json::Value>,
    #[serde(default)]
    session: Option<Session>,
    #[serde(default)]
    files: Option<Vec<File>>,
}

#[derive(Deserialize)]
struct Session {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    model: Option<Model>,
}

#[derive(Deserialize)]
struct Model {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
struct File {
    path: String,
    lines: Vec<Line>,
}

#[derive(Deserialize)]
struct Line {
    line_number: u32,
    source: Source,
    #[serde(default)]
    edit_id: Option<String>,
}

#[derive(Deserialize)]
struct Source {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    edit_id: Option<String>,
}

fn parse(bytes: &[u8]) -> std::result::Result<Parsed, String> {
    // One pass over the note (notes run to megabytes); only when it fails is it read again,
    // to say why.
    let note = match serde_json::from_slice::<AiAttribution>(bytes) {
        Ok(note) => note,
        Err(e) => {
            let probe: Probe =
                serde_json::from_slice(bytes).map_err(|e| format!("malformed JSON: {e}"))?;
            check_version(probe.version.as_ref(), probe.files.is_some())?;
            return Err(format!("malformed note: {e}"));
        }
    };
    check_version(note.version.as_ref(), note.files.is_some())?;
    let files = note.files.unwrap_or_default();
    let mut out = Parsed::default();
    if let Some(s) = note.session {
        out.session = s.session_id.filter(|s| !s.is_empty());
        out.model = s.model.and_then(|m| m.id).filter(|m| !m.is_empty());
    }
    for file in files {
        let mut lines = file.lines;
        lines.sort_by_key(|l| l.line_number);
        // Runs in the order they first appear in the file.
        let mut runs: Vec<Run> = Vec::new();
        let mut original: Vec<Lines> = Vec::new();
        for line in lines {
            let author = match line.source.kind.as_str() {
                // There before the session: no claim, the note says nothing of who wrote it;
                // but it does say the commit's session did not.
                "Original" => {
                    let n = line.line_number;
                    match original.last_mut() {
                        _ if n == 0 => {}
                        Some(last) if n <= last.end.saturating_add(1) => last.end = last.end.max(n),
                        _ => original.push(Lines { start: n, end: n }),
                    }
                    continue;
                }
                "AI" => Author::Agent,
                "AIModified" => Author::AgentModified,
                "Human" => Author::Human,
                "Unknown" => Author::Unknown,
                _ => {
                    out.unreadable += 1;
                    continue;
                }
            };
            if line.line_number == 0 {
                out.unreadable += 1;
                continue;
            }
            let edit = match author {
                Author::Agent | Author::AgentModified => line.source.edit_id.or(line.edit_id),
                _ => None,
            };
            let n = line.line_number;
            let run = match runs
                .iter_mut()
                .find(|r| r.author == author && r.edit == edit)
            {
                Some(r) => r,
                None => {
                    runs.push(Run {
                        path: file.path.clone(),
                        author,
                        edit,
                        lines: Vec::new(),
                    });
                    runs.last_mut().expect("just pushed")
                }
            };
            match run.lines.last_mut() {
                Some(last) if n <= last.end.saturating_add(1) => last.end = last.end.max(n),
                _ => run.lines.push(Lines { start: n, end: n }),
            }
        }
        out.runs.extend(runs);
        if !original.is_empty() {
            out.original.push((file.path.clone(), original));
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

    fn line(n: u32, source: &str) -> String {
        let (src, edit) = match source {
            "AI" | "AIModified" => {
                let extra = if source == "AIModified" {
                    ",\"similarity\":0.8"
                } else {
                    ""
                };
                (
                    format!("{{\"type\":\"{source}\",\"edit_id\":\"e1\"{extra}}}"),
                    "\"e1\"",
                )
            }
            "AI2" => ("{\"type\":\"AI\",\"edit_id\":\"e2\"}".to_string(), "\"e2\""),
            _ => (format!("{{\"type\":\"{source}\"}}"), "null"),
        };
        format!(
            "{{\"line_number\":{n},\"content\":\"secret line {n}\",\"source\":{src},\"edit_id\":{edit},\"prompt_index\":0,\"confidence\":1.0}}"
        )
    }

    fn note(version: u32, lines: &[(u32, &str)]) -> String {
        let lines: Vec<String> = lines.iter().map(|(n, s)| line(*n, s)).collect();
        format!(
            r#"{{"version":{version},"session":{{"session_id":"7f3a4b2c","model":{{"id":"claude-opus-4-5-20251101","provider":"anthropic"}},"started_at":"2026-01-30T14:23:17Z","prompt_count":1,"used_plan_mode":false,"subagent_count":0}},"prompts":[{{"index":0,"text":"a secret prompt","timestamp":"2026-01-30T14:23:45Z","affected_files":["src/auth.rs"]}}],"files":[{{"path":"src/auth.rs","lines":[{}],"summary":{{"total_lines":9}}}}]}}"#,
            lines.join(",")
        )
    }

    #[test]
    fn runs_by_source_and_edit() {
        let n = note(
            3,
            &[
                (1, "Original"),
                (2, "AI"),
                (3, "AI"),
                (4, "AIModified"),
                (5, "AI"),
                (6, "Human"),
                (7, "AI2"),
                (8, "Original"),
                (9, "AI"),
                (10, "Unknown"),
            ],
        );
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!(p.session.as_deref(), Some("7f3a4b2c"));
        assert_eq!(p.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(p.unreadable, 0);
        let got: Vec<_> = p
            .runs
            .iter()
            .map(|r| (r.author, r.edit.as_deref(), r.lines.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (Author::Agent, Some("e1"), vec![l(2, 3), l(5, 5), l(9, 9)]),
                (Author::AgentModified, Some("e1"), vec![l(4, 4)]),
                (Author::Human, None, vec![l(6, 6)]),
                (Author::Agent, Some("e2"), vec![l(7, 7)]),
                (Author::Unknown, None, vec![l(10, 10)]),
            ]
        );
        assert!(p.runs.iter().all(|r| r.path == "src/auth.rs"));
        assert!(!format!("{:?}", p.runs).contains("secret"));
    }

    #[test]
    fn version_2_and_lines_out_of_order() {
        let n = note(2, &[(3, "AI"), (1, "AI"), (2, "AI"), (4, "Original")]);
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!(p.runs.len(), 1);
        assert_eq!(p.runs[0].lines, [l(1, 3)]);
    }

    #[test]
    fn an_only_original_file_claims_nothing_but_is_covered() {
        let n = note(
            2,
            &[(1, "Original"), (2, "Original"), (4, "Original"), (3, "AI")],
        );
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!(p.runs.len(), 1);
        // The note speaks of the Original lines: its commit's session did not write them.
        assert_eq!(
            p.original,
            [("src/auth.rs".to_string(), vec![l(1, 2), l(4, 4)])]
        );
        let n = note(2, &[(1, "Original"), (2, "Original")]);
        assert!(parse(n.as_bytes()).unwrap().runs.is_empty());
    }

    #[test]
    fn unknown_sources_are_counted() {
        let n = note(3, &[(1, "AI"), (2, "Robot")]);
        let p = parse(n.as_bytes()).unwrap();
        assert_eq!((p.runs.len(), p.unreadable), (1, 1));
    }

    #[test]
    fn skipped_notes_say_why() {
        let why = |s: &str| parse(s.as_bytes()).unwrap_err();
        assert!(why("{\"version\":3,\"files\":[").starts_with("malformed JSON"));
        assert!(why("not json").starts_with("malformed JSON"));
        assert!(why("{\"attributions\":[]}").starts_with("not a whogitit note"));
        assert_eq!(
            why("{\"version\":4,\"files\":[]}"),
            "version 4 is newer than this reader (it reads versions 2 and 3)"
        );
        assert!(why("{\"version\":1,\"files\":[]}").starts_with("unknown version 1"));
        assert!(why("{\"version\":\"3\",\"files\":[]}").starts_with("unknown version"));
        assert!(
            why("{\"version\":3,\"files\":[{\"path\":\"a\",\"lines\":[{\"line_number\":\"x\"}]}]}")
                .starts_with("malformed note")
        );
    }
}
