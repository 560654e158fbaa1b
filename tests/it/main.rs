//! Integration tests: the real `git-sage` binary against temporary repositories built with git.

mod batch;
mod blame;
mod common;
mod conformance;
mod faults;
mod findings;
mod gitfmt;
mod gitint;
mod help;
mod judge;
mod layers;
mod provenance;
mod screen;
mod secrets;
mod sessions;
mod turns;
