//! git-sage: SAGE (Security Awareness Gap Evaluation) as a git subcommand.
//!
//! Stages, one module each: `finding` (confirmed defects → anchors), `history` (provenance
//! from git), `transcript` (sessions → turns), `judge` (scores), `origin` (the rule),
//! `report` (every format), `notes` (git notes), `batch`/`agree`/`stats` (corpora),
//! `screen` (silent-failure candidates), `scanners` (Bandit and Semgrep run over a range),
//! `git` (the only git2 user), `cli` (subcommands).

pub mod agree;
pub mod anchor;
pub mod batch;
pub mod cli;
pub mod error;
pub mod files;
pub mod finding;
pub mod git;
pub mod history;
pub mod judge;
pub mod notes;
pub mod origin;
pub mod pipeline;
pub mod redact;
pub mod report;
pub mod scanners;
pub mod screen;
pub mod settings;
pub mod stats;
pub mod term;
pub mod timing;
pub mod transcript;

pub use error::{Error, ErrorKind, Result};
