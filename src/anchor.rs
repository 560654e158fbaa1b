//! Failure anchors: a confirmed finding as the stages see it (file, fragments or pattern,
//! defect class, where it came from).

use serde::{Deserialize, Serialize};

/// The defect class of a failure anchor (SPEC §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefectClass {
    MissingDefence,
    InsufficientDefence,
    IntroducedVulnerability,
}

impl DefectClass {
    pub const ALL: [&'static str; 3] = [
        "missing_defence",
        "insufficient_defence",
        "introduced_vulnerability",
    ];

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "missing_defence" => Some(Self::MissingDefence),
            "insufficient_defence" => Some(Self::InsufficientDefence),
            "introduced_vulnerability" => Some(Self::IntroducedVulnerability),
            _ => None,
        }
    }

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
    Present,
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
        start: u32,
        end: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
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
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The finding file as the user named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based position of the result in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

/// A confirmed defect: the failure anchor of SPEC §2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Anchor {
    pub id: String,
    pub cwe: Option<u32>,
    pub class: Option<DefectClass>,
    /// Repository-relative path with `/` separators, as of the branch tip.
    pub file: String,
    pub locator: Locator,
    pub kind: AnchorKind,
    pub description: Option<String>,
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
