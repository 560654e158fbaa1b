//! Integration tests: the real `git-sage` binary against temporary repositories built with git.

// A test that cannot unwrap should fail loudly: that is what unwrap does.
#![allow(clippy::unwrap_used)]
// The test crate is its own program: its helpers are shared between files, not published.
#![allow(unreachable_pub)]

mod action;
mod agent_trace;
mod batch;
mod blame;
mod browser;
mod common;
mod conformance;
mod conventions;
mod dataset;
mod dialects;
mod estimate;
mod failclosed;
mod faults;
mod findings;
mod firsthour;
mod gitfmt;
mod gitint;
mod guard;
mod help;
mod install;
mod judge;
mod lang;
mod layers;
mod manual;
mod pr_comment;
mod precommit;
mod provenance;
mod sarif;
mod schedule;
mod schemas;
mod screen;
mod secrets;
mod sessions;
mod shipped_refs;
mod tour;
mod trust;
mod turns;
mod verdict_input;
mod writes;
