//! Artifact history: snapshots of the anchored file along the range, and provenance from them.

pub mod attribution;
pub mod matching;
pub mod parallel;
pub mod provenance;
pub mod range;
pub mod rule;
pub mod status;

pub use status::{ProvenanceStatus, Reconstruction};
