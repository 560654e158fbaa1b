//! Artifact history: snapshots of the anchored file along the range, and provenance from them.

pub(crate) mod attribution;
pub(crate) mod dialects;
pub(crate) mod matching;
pub(crate) mod parallel;
pub(crate) mod provenance;
pub(crate) mod range;
pub(crate) mod rule;
pub(crate) mod status;

pub(crate) use status::{ProvenanceStatus, Reconstruction};
