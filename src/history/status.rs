//! What provenance concludes about an anchor over a range: its status, and how much of the
//! history between writes could be seen.

use serde::{Deserialize, Serialize};

/// Provenance status (docs/method.md#provenance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProvenanceStatus {
    Inherited,
    Introduced,
    IntroducedByOther,
    NoCodeLocation,
}

impl ProvenanceStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Inherited => "inherited",
            Self::Introduced => "introduced",
            Self::IntroducedByOther => "introduced_by_other",
            Self::NoCodeLocation => "no_code_location",
        }
    }
}

/// How much intermediate state was available (docs/method.md#reconstruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Reconstruction {
    #[serde(rename = "single-write")]
    SingleWrite,
    #[serde(rename = "per-write")]
    PerWrite,
    #[serde(rename = "final-only")]
    FinalOnly,
}

impl Reconstruction {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::SingleWrite => "single-write",
            Self::PerWrite => "per-write",
            Self::FinalOnly => "final-only",
        }
    }
}
