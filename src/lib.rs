//! git-sage: SAGE (Security Awareness Gap Evaluation) as a git subcommand.
//!
//! Stages, one module each: `finding` (confirmed defects → anchors), `history` (provenance
//! from git), `transcript` (sessions → turns), `judge` (scores), `origin` (the rule),
//! `report` (every format), `notes` (git notes), `batch`/`agree`/`stats` (corpora),
//! `screen` (silent-failure candidates), `scanners` (Bandit and Semgrep run over a range),
//! `git` (the only git2 user), `cli` (subcommands).
//!
//! The library is the binary's: its public surface is what the binary and the integration
//! tests use (`cli::main`, the finding readers, the git layer); everything else is
//! crate-private, so the compiler reports what nothing uses.

pub(crate) mod agree;
pub mod anchor;
pub(crate) mod batch;
pub mod cli;
pub(crate) mod env;
pub mod error;
pub(crate) mod files;
pub mod finding;
pub(crate) mod forge;
pub mod git;
pub(crate) mod guard;
pub(crate) mod history;
pub(crate) mod i18n;
pub(crate) mod judge;
pub(crate) mod lang;
pub(crate) mod notes;
pub(crate) mod origin;
pub(crate) mod pipeline;
pub(crate) mod redact;
pub(crate) mod report;
pub(crate) mod scanners;
pub(crate) mod screen;
pub(crate) mod settings;
pub(crate) mod stats;
pub(crate) mod term;
pub(crate) mod timing;
pub(crate) mod tool;
pub(crate) mod trace;
pub(crate) mod transcript;
pub(crate) mod warning;

pub use error::{Error, ErrorKind, Result};
