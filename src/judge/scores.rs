//! Scores: what the judge says of each turn (`sage.scores/1`).

use serde::{Deserialize, Serialize};

use crate::transcript::TurnKind;

/// The four rubric dimensions, in their fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Dim {
    Tr,
    Di,
    Vr,
    Sa,
}

impl Dim {
    pub(crate) const ALL: [Dim; 4] = [Dim::Tr, Dim::Di, Dim::Vr, Dim::Sa];

    pub(crate) fn key(self) -> &'static str {
        match self {
            Dim::Tr => "tr",
            Dim::Di => "di",
            Dim::Vr => "vr",
            Dim::Sa => "sa",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Dim::Tr => "Threat Recognition",
            Dim::Di => "Defensive Intent",
            Dim::Vr => "Verification Rigour",
            Dim::Sa => "Scope Awareness",
        }
    }
}

/// TR/DI/VR/SA on the 0–3 scale.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Scores {
    pub tr: u8,
    pub di: u8,
    pub vr: u8,
    pub sa: u8,
}

impl Scores {
    pub(crate) fn get(&self, d: Dim) -> u8 {
        match d {
            Dim::Tr => self.tr,
            Dim::Di => self.di,
            Dim::Vr => self.vr,
            Dim::Sa => self.sa,
        }
    }

    pub(crate) fn set(&mut self, d: Dim, v: u8) {
        match d {
            Dim::Tr => self.tr = v,
            Dim::Di => self.di = v,
            Dim::Vr => self.vr = v,
            Dim::Sa => self.sa = v,
        }
    }
}

/// The verbatim quote anchoring each non-zero score.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Quotes {
    pub tr: Option<String>,
    pub di: Option<String>,
    pub vr: Option<String>,
    pub sa: Option<String>,
}

impl Quotes {
    pub(crate) fn get(&self, d: Dim) -> Option<&str> {
        match d {
            Dim::Tr => self.tr.as_deref(),
            Dim::Di => self.di.as_deref(),
            Dim::Vr => self.vr.as_deref(),
            Dim::Sa => self.sa.as_deref(),
        }
    }

    pub(crate) fn set(&mut self, d: Dim, v: Option<String>) {
        match d {
            Dim::Tr => self.tr = v,
            Dim::Di => self.di = v,
            Dim::Vr => self.vr = v,
            Dim::Sa => self.sa = v,
        }
    }
}

/// What the judge was unsure of on one turn: the one-step changes of its answer it finds
/// plausible (docs/method.md#margin). A judge that gives no confidence leaves it out, and then
/// every one-step change of a score or of the opportunity counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Doubt {
    /// Other scores it finds plausible, each one step from the score it gave.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<DimScore>,
    /// Whether the opportunity flag could as well be the other way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opportunity: bool,
}

/// A score of one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DimScore {
    pub dim: Dim,
    pub score: u8,
}

/// A score the judge gave that its quote did not support.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rejected {
    pub dim: Dim,
    pub score: u8,
    pub quote: Option<String>,
    pub reason: String,
}

/// One turn as judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnScore {
    pub turn: u32,
    pub kind: TurnKind,
    pub applicable: bool,
    pub opportunity: bool,
    /// `None` when scoring failed (never read as zeros).
    pub scores: Option<Scores>,
    #[serde(default)]
    pub quotes: Quotes,
    #[serde(default)]
    pub rejected_quotes: Vec<Rejected>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The kind the judge's answer gave, when it differs from `kind` (what the turn does, as
    /// the transcript shows it, which the origin rule uses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_kind: Option<TurnKind>,
    /// Not put to the judge: its scores could not change the origin or the missed
    /// opportunities (rule-aware scheduling). `scores` is then null, and no error is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Skip>,
    /// What the judge was unsure of; absent when it gives no confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<Doubt>,
}

/// Why a turn was not put to the judge: its scores could not change the origin or the missed
/// opportunities, whatever they were (docs/judge.md#scheduling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Skip {
    /// After the origin, and not an implementation or review turn: never a missed opportunity.
    AfterOrigin,
    /// After the bound, with no origin up to it: the result is undetermined whatever follows.
    PastBound,
    /// After a turn whose scoring failed before any candidate: the result is
    /// `scoring_failed` whatever follows, until a rerun scores that turn.
    AfterFailure,
    /// A confirming judge (`--confirm-with`) asks only the turns a close call depends on;
    /// the first judge's answer stands for the others.
    Settled,
}

/// Who judged, how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct JudgeInfo {
    pub name: String,
    pub protocol: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub cached: u64,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Turns not asked, since their answers could not change the result (rule-aware
    /// scheduling); absent when none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub redactions: u64,
    /// The language of the prompts the judge was sent (`--judge-lang`, else the log's); absent
    /// for the offline judge, which sends none, and in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<crate::lang::Lang>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::warning::Warning>,
}

/// One judge's scores for one run over a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScoreSet {
    pub judge: JudgeInfo,
    pub turns: Vec<TurnScore>,
}

/// `sage.scores/1`: the first set at the top (docs/judge.md); repeats and other judges in `sets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScoresDoc {
    pub schema: String,
    /// The program that wrote the document; absent in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::tool::Tool>,
    pub judge: JudgeInfo,
    pub turns: Vec<TurnScore>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<ScoreSet>,
    /// The turns judged (the task's scope) and the task text given to the judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<crate::transcript::mapping::Scope>,
    /// Every turn of every set whose scoring failed; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_turns: Vec<FailedTurn>,
}

/// A turn the judge could not score, as data a script can act on (the turn's own `error`
/// says the same in words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FailedTurn {
    pub turn: u32,
    pub judge: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    pub cause: FailureCause,
    pub error: String,
}

/// Why scoring failed, by what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FailureCause {
    /// The server refused the credentials (HTTP 401 or 403): fix the key, not a rerun.
    Refused,
    /// The judge refused the request in a way no retry fixes (another 4xx, a command that
    /// cannot start, no recorded answer).
    Fatal,
    /// The judge answered, never in a usable form.
    InvalidAnswer,
    /// Every try failed in a way that might pass (timeouts, 5xx, 429, a failing command):
    /// a rerun asks only for these.
    Unreachable,
    /// Set aside for the provider's batch interface; its answer is not in yet.
    Deferred,
    /// Not sent: it would have taken the run's spend past `--max-cost`.
    OverBudget,
}

pub(crate) const SCORES_SCHEMA: &str = "sage.scores/1";

fn is_zero(n: &u64) -> bool {
    *n == 0
}
