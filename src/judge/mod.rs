//! The judge: scores each turn on TR/DI/VR/SA from the prefix only, with verified quotes.

pub(crate) mod answer;
pub(crate) mod backends;
pub(crate) mod batch_api;
pub(crate) mod cache;
pub(crate) mod endpoint;
pub(crate) mod failed;
mod jobs;
pub(crate) mod offline;
pub(crate) mod prompt;
pub(crate) mod run;
pub(crate) mod scores;
pub(crate) mod verify;
