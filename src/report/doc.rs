//! `sage.report/1`: everything `blame-origin` found, the one document every report renders.

use serde::{Deserialize, Serialize};

use super::json::{FindingJson, ProvenanceJson, RangeJson, SessionJson};
use crate::judge::scores::{FailedTurn, JudgeInfo, TurnScore};
use crate::origin::{Missed, Origin};

pub(crate) const REPORT_SCHEMA: &str = "sage.report/1";

/// One judged turn in a report: the scores plus a short, redacted excerpt of what was said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReportTurn {
    #[serde(flatten)]
    pub score: TurnScore,
    #[serde(default)]
    pub agent: String,
    #[serde(default)]
    pub excerpt: String,
}

/// The origin another judge or repeat found, for consistency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AltOrigin {
    pub judge: String,
    #[serde(default)]
    pub repeat: Option<u32>,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReportDoc {
    pub schema: String,
    /// The program that wrote the document; absent in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::tool::Tool>,
    /// The repository's name: its `origin` remote's last path part, else its directory's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    pub finding: FindingJson,
    /// The finding came from `--find-anchor` and no person confirmed it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfirmed: bool,
    pub range: RangeJson,
    pub provenance: ProvenanceJson,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionJson>,
    pub turns: Vec<ReportTurn>,
    pub origin: Origin,
    pub missed_opportunities: Vec<Missed>,
    /// In English: the JSON report is language-neutral.
    pub recommendation: String,
    /// The recommendation in the run's language, for the reports people read (`--lang`);
    /// absent in English.
    #[serde(skip)]
    pub recommendation_shown: Option<String>,
    pub judge: JudgeInfo,
    /// Origins under the other judges and repeats; `manual_review` when their types disagree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_origins: Vec<AltOrigin>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub manual_review: bool,
    /// In English in the document; shown in the report's language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::warning::Warning>,
    /// Turns of any judge or repeat whose scoring failed; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_turns: Vec<FailedTurn>,
    /// What `--confirm-with` did about a close call; absent without it, or when the verdict
    /// was firm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
}

/// A close call re-scored by a confirming judge (`--confirm-with`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Confirmation {
    /// The confirming judge, its calls and cost.
    pub judge: JudgeInfo,
    /// The turns it re-scored; their scores in `turns[]` are its own.
    pub turns: Vec<u32>,
    /// Turns it could not score (their first scores stand).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<u32>,
    /// The verdict before.
    pub before_turn: Option<u32>,
    pub before_type: Option<crate::origin::OriginType>,
    /// Whether the re-scored turns moved it.
    pub changed: bool,
}

impl ReportDoc {
    /// The recommendation as the text, Markdown and HTML reports show it.
    pub(crate) fn shown_recommendation(&self) -> &str {
        self.recommendation_shown
            .as_deref()
            .unwrap_or(&self.recommendation)
    }
}
