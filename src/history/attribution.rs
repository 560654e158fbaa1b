//! How the range's writes are tied to a session's turns: plain data the transcript stage
//! produces and provenance applies (it lives here so that history points at nothing above it).

use serde::{Deserialize, Serialize};

use crate::i18n::Tr;

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
    pub unmapped: Option<Unmapped>,
}

/// Why a write was tied to no turn: a typed reason, worded when shown — in the report's
/// language for people, in English in JSON (`unmapped_reason` stays a string there).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Unmapped {
    /// The session holds no file edits.
    NoEdits,
    /// No edit of the session touches the files the commit changed.
    NoEditHere,
    /// The commit is older than the session, by this many seconds.
    BeforeSession { secs: f64 },
    /// The commit is after the session's last turn, by this many seconds.
    AfterSession { secs: f64 },
    /// The session never edited the anchored file.
    NeverEdited { path: String },
    /// The session's edits of the anchored file wrote other lines of it.
    OtherLines { path: String },
    /// The session's edits do not reproduce the commit, and none holds the anchored code.
    NotReproduced,
    /// A reason read back from a document, shown as written.
    Said(String),
}

impl Unmapped {
    /// In `tr`'s language.
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        // Days when a day or more, else minutes (at least one).
        let age = |secs: f64| {
            let d = secs / 86_400.0;
            if d >= 1.0 {
                tr.tf("unmapped.days", &[("n", &format!("{d:.0}"))])
            } else {
                let m = format!("{:.0}", (d * 1440.0).max(1.0));
                tr.tf("unmapped.minutes", &[("n", &m)])
            }
        };
        match self {
            Unmapped::NoEdits => tr.t("unmapped.no_edits"),
            Unmapped::NoEditHere => tr.t("unmapped.no_edit_here"),
            Unmapped::BeforeSession { secs } => {
                tr.tf("unmapped.before_session", &[("age", &age(*secs))])
            }
            Unmapped::AfterSession { secs } => {
                tr.tf("unmapped.after_session", &[("age", &age(*secs))])
            }
            Unmapped::NeverEdited { path } => tr.tf("unmapped.never_edited", &[("path", path)]),
            Unmapped::OtherLines { path } => tr.tf("unmapped.other_lines", &[("path", path)]),
            Unmapped::NotReproduced => tr.t("unmapped.not_reproduced"),
            Unmapped::Said(s) => s.clone(),
        }
    }

    /// In English, as documents keep it.
    pub(crate) fn english(&self) -> String {
        self.shown(Tr::english())
    }
}

crate::english_in_json!(Unmapped, Unmapped::Said);

impl std::fmt::Display for MappedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

    /// A reason is English in documents as it always was, and worded in each language when
    /// shown; one read back from a document is shown as written.
    #[test]
    fn reasons_are_values_worded_when_shown() {
        let old = Unmapped::BeforeSession {
            secs: 3.0 * 86_400.0,
        };
        assert_eq!(
            old.english(),
            "the commit is 3 day(s) older than the session"
        );
        let soon = Unmapped::AfterSession { secs: 20.0 };
        assert_eq!(
            soon.english(),
            "the commit is 1 minute(s) after the session's last turn"
        );
        let ru = Tr::load(Lang::Ru, None).unwrap();
        assert_eq!(old.shown(&ru), "коммит на 3 дн. старше сессии");
        let zh = Tr::load(Lang::Zh, None).unwrap();
        let never = Unmapped::NeverEdited {
            path: "app.py".into(),
        };
        assert_eq!(never.shown(&zh), "会话从未编辑过 app.py");
        let json = serde_json::to_string(&never).unwrap();
        assert_eq!(json, "\"the session never edited app.py\"");
        let back: Unmapped = serde_json::from_str(&json).unwrap();
        assert_eq!(back.shown(&ru), "the session never edited app.py");
    }
}
