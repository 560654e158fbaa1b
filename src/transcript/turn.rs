//! The canonical turn model (`sage.turns/1`): what every transcript format becomes.

use crate::i18n::Tr;
use serde::{Deserialize, Serialize};

/// What a turn does, for the judge's rubric and the missed-opportunity rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TurnKind {
    Planning,
    Implementation,
    Review,
    Verification,
    Administrative,
}

impl TurnKind {
    pub(crate) const ALL: [&'static str; 5] = [
        "planning",
        "implementation",
        "review",
        "verification",
        "administrative",
    ];

    pub(crate) fn parse(s: &str) -> Option<TurnKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "planning" | "plan" => Some(TurnKind::Planning),
            "implementation" | "implement" => Some(TurnKind::Implementation),
            "review" => Some(TurnKind::Review),
            "verification" | "verify" | "test" | "testing" => Some(TurnKind::Verification),
            "administrative" | "admin" => Some(TurnKind::Administrative),
            _ => None,
        }
    }

    /// The kind in words, in the run's language (reports people read).
    pub(crate) fn shown(self, tr: &Tr) -> String {
        tr.t(&format!("kind.{}", self.as_str()))
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TurnKind::Planning => "planning",
            TurnKind::Implementation => "implementation",
            TurnKind::Review => "review",
            TurnKind::Verification => "verification",
            TurnKind::Administrative => "administrative",
        }
    }
}

/// Where a turn or message came from in the raw file: a 1-based line, or an event id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SourceRef {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub event: Option<String>,
}

impl SourceRef {
    pub(crate) fn line(n: u64) -> Self {
        SourceRef {
            line: Some(n),
            event: None,
        }
    }

    pub(crate) fn event(id: impl Into<String>) -> Self {
        SourceRef {
            line: None,
            event: Some(id.into()),
        }
    }
}

/// A tool's answer to a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolResult {
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// One tool call of a turn, with its arguments as the log gave them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolCall {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub arguments: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<ToolResult>,
}

/// How a file change can be replayed onto the previous content of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Edit {
    /// Replace `old` by `new` (the first occurrence, or all with `all`); `old` empty
    /// means "insert into an empty or new file".
    Replace {
        old: String,
        new: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        all: bool,
    },
    /// Write the whole file.
    Write { content: String },
    /// Delete the file.
    Delete,
    /// Replace lines `start..=end` (1-based; `end = start - 1` inserts before `start`).
    Lines {
        start: usize,
        end: usize,
        text: String,
    },
    /// A patch: a unified diff, or a Codex `apply_patch` hunk list (context matched).
    Patch { patch: String },
    /// The log shows text the edit put into the file, but not where (a Copilot
    /// `replaceString` whose parameters were hidden; a shell command such as `echo … >>`):
    /// not replayable, but it can show which edit wrote a fragment.
    Fragment { text: String },
    /// The log shows a change but not enough to replay it.
    Opaque,
}

/// One change of one file made by a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileChange {
    pub path: String,
    #[serde(flatten)]
    pub edit: Edit,
    /// The whole file before and after, when the log carries them (Claude Code's
    /// `originalFile`, Gemini's `originalContent`/`newContent`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub after: Option<String>,
    /// Index of the tool call (in the turn) that made it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_call: Option<usize>,
}

impl FileChange {
    /// A change as most logs give it: the file and the edit, nothing more.
    pub(crate) fn new(path: impl Into<String>, edit: Edit) -> FileChange {
        FileChange {
            path: path.into(),
            edit,
            before: None,
            after: None,
            tool_call: None,
        }
    }
}

/// One agent turn: a message, its tool calls and results, and the file changes they made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Turn {
    pub turn: u32,
    pub agent: String,
    pub kind: TurnKind,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reasoning: Option<String>,
    /// Whether reasoning text is there for the judge to read.
    pub reasoning_available: bool,
    /// The log shows the agent reasoned but withheld the text (Claude Code's empty signed
    /// `thinking`, Codex's `encrypted_content`, Cursor's `[REDACTED]`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_redacted: bool,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub file_changes: Vec<FileChange>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timestamp: Option<String>,
    pub source: SourceRef,
}

/// A user or system message: context for the judge, not a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ContextMessage {
    /// The number of the first turn after this message (turns.len() + 1 at the end).
    pub before_turn: u32,
    pub role: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timestamp: Option<String>,
    pub source: SourceRef,
}

/// A line or record the parser could not use, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Skipped {
    pub line: u64,
    pub reason: String,
}
