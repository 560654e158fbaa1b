//! The judge: scores each turn on TR/DI/VR/SA from the prefix only, with verified quotes.

pub mod answer;
pub mod backends;
pub mod batch_api;
pub mod cache;
mod jobs;
pub mod offline;
pub mod prompt;
pub mod run;
pub mod scores;
pub mod verify;

pub use scores::*;
