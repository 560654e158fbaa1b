//! How the range's writes are tied to a session's turns: plain data the transcript stage
//! produces and provenance applies (it lives here so that history points at nothing above it).

use serde::{Deserialize, Serialize};

/// How a write was tied to a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MappedBy {
    Trailer,
    AiderCommit,
    Replay,
    Fragment,
    CommitCommand,
    Timestamp,
}

impl MappedBy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MappedBy::Trailer => "trailer",
            MappedBy::AiderCommit => "aider-commit",
            MappedBy::Replay => "replay",
            MappedBy::Fragment => "fragment",
            MappedBy::CommitCommand => "commit-command",
            MappedBy::Timestamp => "timestamp",
        }
    }
}

/// A snapshot of the anchored file inside a commit, rebuilt by replay.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SubWrite {
    pub turn: u32,
    /// The file after this edit (`None`: deleted).
    pub content: Option<String>,
}

/// The mapping of one range to one transcript.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mapping {
    /// One record per write of the range, in order.
    pub writes: Vec<WriteMapping>,
    pub notes: Vec<String>,
}

/// What the session says of one write.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WriteMapping {
    /// The turn and how it was found.
    pub turn: Option<(u32, MappedBy)>,
    /// The anchored file after each transcript edit inside that commit, when replay
    /// reproduced the commit's file (the last is the commit's). The introducing write is then
    /// decided edit by edit.
    pub sub_writes: Vec<SubWrite>,
    /// The transcript edited the anchored file several times in this commit but replay could
    /// not reproduce it, so only the committed state is known.
    pub final_only: bool,
    /// Why no turn could be given.
    pub unmapped: Option<String>,
}

impl std::fmt::Display for MappedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
