//! Session transcripts → canonical turns: one parser per agent's log format, auto-detected.

mod builder;
pub(crate) mod choose;
pub(crate) mod classify;
pub(crate) mod detect;
pub(crate) mod discover;
pub(crate) mod edits;
pub(crate) mod lines;
pub(crate) mod mapping;
pub(crate) mod replay;
pub(crate) mod turn;

mod aider;
mod claude;
mod codex;
mod cursor;
mod cursor_txt;
mod gemini;
mod markdown;
mod mini_swe;
mod openhands;
pub(crate) mod openhands_v1;
mod sage_format;
mod specstory;
mod swe_agent;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub(crate) use builder::Builder;
use builder::push_para;
pub(crate) use lines::Input;
pub(crate) use turn::*;

/// The transcript formats we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub(crate) enum Format {
    ClaudeCode,
    Codex,
    GeminiCli,
    Cursor,
    Aider,
    Openhands,
    SweAgent,
    MiniSweAgent,
    Specstory,
    /// A plain Markdown log with "Turn N" / "Ход N" / "轮次 N" headings (hand-written or pasted
    /// logs).
    Markdown,
    /// Our own YAML / JSONL session format (docs/session-format.md).
    Sage,
}

impl Format {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::GeminiCli => "gemini-cli",
            Format::Cursor => "cursor",
            Format::Aider => "aider",
            Format::Openhands => "openhands",
            Format::SweAgent => "swe-agent",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::Specstory => "specstory",
            Format::Markdown => "markdown",
            Format::Sage => "sage",
        }
    }
}

/// A parsed session: its turns, the messages around them, and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Transcript {
    pub schema: String,
    /// The program that wrote the document; absent in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::tool::Tool>,
    pub format: Format,
    /// The file as the user named it.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_id: Option<String>,
    /// The agent's model, when the log names it (for the judge-family warning).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// The agent behind the log: the one its format belongs to, or the one a sage-format
    /// session names; `None` when the log does not tell (a sage session without `agent:`).
    /// Reports show it; `sage.turns/1` keeps each turn's own `agent`.
    #[serde(skip)]
    pub agent: Option<String>,
    pub turns: Vec<Turn>,
    /// User and system messages, placed before the turn they precede.
    pub context: Vec<ContextMessage>,
    /// Lines or records that could not be used, with their line numbers.
    pub skipped: Vec<Skipped>,
    /// Records left out on purpose, by kind (progress, snapshots, token counts, ...).
    pub skipped_records: BTreeMap<String, u64>,
    /// Turn numbers after which the agent's context was compacted (summarised).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compactions: Vec<u32>,
    /// Degradations the reader should know about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Commits the log itself names, with the turn that made them (Aider).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<LoggedCommit>,
}

/// A commit a log names (`> Commit 1a2b3c4 fix: ...`), made by a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LoggedCommit {
    pub turn: u32,
    pub sha: String,
    pub message: String,
}

pub(crate) const TURNS_SCHEMA: &str = "sage.turns/1";

/// Parses a transcript, detecting its format unless `forced`.
pub(crate) fn parse(input: Input, forced: Option<Format>) -> Result<Transcript> {
    let name = input.name.clone();
    let format = match forced {
        Some(f) => f,
        None => detect::detect(input.head(), &name).ok_or_else(|| {
            Error::input(format!("{name}: not a transcript format git sage knows"))
                .hint(format!(
                    "force one with --from ({}); or convert it to the sage session format (docs/session-format.md)",
                    detect::NAMES.join(", ")
                ))
        })?,
    };
    let read_err = |e: std::io::Error| Error::input(format!("{name}: cannot read: {e}"));
    match format {
        Format::ClaudeCode => claude::parse(input.lines(), &name),
        Format::Codex => codex::parse(input.lines(), &name),
        Format::Cursor if !input.head().trim_ascii_start().starts_with(b"{") => {
            cursor_txt::parse(&input.read_all().map_err(read_err)?, &name)
        }
        Format::Cursor => cursor::parse(input.lines(), &name),
        Format::GeminiCli => gemini::parse(&input.read_all().map_err(read_err)?, &name),
        Format::Aider => aider::parse(&input.read_all().map_err(read_err)?, &name),
        Format::Openhands => openhands::parse(&input.read_all().map_err(read_err)?, &name),
        Format::SweAgent => swe_agent::parse(&input.read_all().map_err(read_err)?, &name),
        Format::MiniSweAgent => mini_swe::parse(&input.read_all().map_err(read_err)?, &name),
        Format::Specstory => specstory::parse(&input.read_all().map_err(read_err)?, &name),
        Format::Markdown => markdown::parse(&input.read_all().map_err(read_err)?, &name),
        Format::Sage => sage_format::parse(input, &name),
    }
}

/// Text of a JSON value that may be a string, a list of `{type:"text", text}` blocks, or
/// something else (then its compact JSON).
pub(crate) fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => {
            let mut out = String::new();
            for it in items {
                let piece = match it {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Object(o) => match o.get("text").and_then(|t| t.as_str()) {
                        Some(t) => t.to_string(),
                        None => match o.get("content") {
                            Some(c) => value_text(c),
                            None => continue,
                        },
                    },
                    other => other.to_string(),
                };
                push_para(&mut out, &piece);
            }
            out
        }
        serde_json::Value::Object(o) => match o.get("text").and_then(|t| t.as_str()) {
            Some(t) => t.to_string(),
            None => v.to_string(),
        },
        other => other.to_string(),
    }
}

/// A path as the agent wrote it, made relative to its working directory when inside it.
pub(crate) fn relative_path(path: &str, cwd: Option<&str>) -> String {
    let p = path.replace('\\', "/");
    if let Some(cwd) = cwd {
        let cwd = cwd.replace('\\', "/");
        let cwd = cwd.trim_end_matches('/');
        if !cwd.is_empty()
            && let Some(rest) = p.strip_prefix(cwd).and_then(|r| r.strip_prefix('/'))
        {
            return rest.to_string();
        }
    }
    p.trim_start_matches("./").to_string()
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use clap::ValueEnum;
    use proptest::prelude::*;

    /// Bytes that look a little like logs: JSON punctuation, keys the parsers look for,
    /// Markdown markers, and noise.
    fn loggy() -> impl Strategy<Value = Vec<u8>> {
        let pieces = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"",
            "\n",
            " ",
            "\\",
            "\"type\"",
            "\"assistant\"",
            "\"user\"",
            "\"message\"",
            "\"content\"",
            "\"tool_use\"",
            "\"tool_result\"",
            "\"id\"",
            "\"payload\"",
            "\"response_item\"",
            "\"function_call\"",
            "\"messages\"",
            "\"trajectory\"",
            "\"action\"",
            "\"observation\"",
            "\"args\"",
            "\"sessionId\"",
            "\"$set\"",
            "\"$rewindTo\"",
            "\"role\"",
            "\"text\"",
            "1",
            "null",
            "true",
            "#### ",
            "> Commit abc1234 x",
            "<<<<<<< SEARCH",
            "=======",
            ">>>>>>> REPLACE",
            "_**User**_",
            "_**Assistant**_",
            "---",
            "```diff",
            "## Turn 1",
            "turns:",
            "schema: sage.session/1",
            "- text: x",
            "\u{ff}",
            "é",
        ]);
        prop::collection::vec(pieces, 0..80).prop_map(|v| v.concat().into_bytes())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn no_parser_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600), shaped in loggy()) {
            for input in [&bytes, &shaped] {
                let forced = Format::value_variants().iter().map(|f| Some(*f));
                for f in std::iter::once(None).chain(forced) {
                    if let Err(e) = parse(Input::from_bytes("fuzz", input.clone()), f) {
                        // bad input is exit 2 and one line, naming the file
                        prop_assert_eq!(e.exit_code(), 2);
                        prop_assert!(e.to_string().contains("fuzz"), "{}", e);
                    }
                }
            }
        }
    }
}
