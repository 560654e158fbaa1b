//! Failure anchors: a confirmed finding as the stages see it (file, fragments or pattern,
//! defect class, where it came from).

use serde::{Deserialize, Serialize};

/// The defect class of a failure anchor (docs/method.md#failure-anchor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefectClass {
    /// A defence the task needed is not there.
    MissingDefence,
    /// A defence is there but does not hold.
    InsufficientDefence,
    /// The change itself brought the vulnerability in.
    IntroducedVulnerability,
}

impl DefectClass {
    /// Every class, as anchors spell it.
    pub const ALL: [&'static str; 3] = [
        "missing_defence",
        "insufficient_defence",
        "introduced_vulnerability",
    ];

    /// Reads a class as anchors spell it.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "missing_defence" => Some(Self::MissingDefence),
            "insufficient_defence" => Some(Self::InsufficientDefence),
            "introduced_vulnerability" => Some(Self::IntroducedVulnerability),
            _ => None,
        }
    }

    /// The class as anchors spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MissingDefence => "missing_defence",
            Self::InsufficientDefence => "insufficient_defence",
            Self::IntroducedVulnerability => "introduced_vulnerability",
        }
    }
}

/// Whether the located code *is* the defect, or is the defence whose absence is the defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorKind {
    #[default]
    /// The located code is the defect (it should not be there).
    Present,
    /// The located code is the missing defence (it should be there).
    Absent,
}

/// How the defect is found in a snapshot of the anchored file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Locator {
    /// Code fragments, all of which must be present (whitespace-insensitive).
    Fragments(Vec<String>),
    /// A line range of the final snapshot (1-based, inclusive); becomes a fragment once read.
    /// `snippet` is the scanner's own copy of the text, used when the tip lacks the file.
    Lines {
        /// First line, 1-based.
        start: u32,
        /// Last line, inclusive.
        end: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        /// The lines' text, when a scanner gave it.
        snippet: Option<String>,
    },
    /// A regular expression over the whole file.
    Pattern(String),
}

/// Where an anchor came from, for reports and for `--select` messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnchorSource {
    /// `anchor-yaml`, `sarif`, `bandit-json`, `semgrep-json`, `screen` or `inline`.
    pub format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The scanner, when the finding came from one.
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The scanner's rule id.
    pub rule: Option<String>,
    /// The finding file as the user named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based position of the result in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// What the finding file said where the user's `--cwe`, `--class`, `--id` or
    /// `--description` replaced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<Said>,
    /// The scanner's `security-severity` of the result or its rule (0.0–10.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security_severity: Option<String>,
}

/// The finding's own values that the user's word replaced (only those that differed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Said {
    /// The finding's CWE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwe: Option<u32>,
    /// The finding's defect class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<DefectClass>,
    /// The finding's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The finding's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A confirmed defect: the failure anchor of docs/method.md#failure-anchor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Anchor {
    /// A name for the finding, unique in its file.
    pub id: String,
    /// Its CWE number, when known.
    pub cwe: Option<u32>,
    /// Its defect class, when given.
    pub class: Option<DefectClass>,
    /// Repository-relative path with `/` separators, as of the branch tip.
    pub file: String,
    /// Where the code is in the anchored file.
    pub locator: Locator,
    /// Whether that code is the defect or the missing defence.
    pub kind: AnchorKind,
    /// What is wrong, in words.
    pub description: Option<String>,
    /// Where the anchor was read from.
    pub source: AnchorSource,
    /// Not confirmed by a person (a scanner's or `screen`'s candidate).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unconfirmed: bool,
}

/// `12`, `"12"` or `"12-14"` → an inclusive 1-based range.
pub fn parse_lines(s: &str) -> Option<(u32, u32)> {
    let s = s.trim();
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
        None => {
            let n = s.parse().ok()?;
            (n, n)
        }
    };
    (a >= 1 && b >= a).then_some((a, b))
}
