//! The judge: scores each turn on TR/DI/VR/SA from the prefix only, with verified quotes.

pub(crate) mod answer;
pub(crate) mod backends;
pub(crate) mod batch_api;
pub(crate) mod cache;
pub(crate) mod cost;
pub(crate) mod endpoint;
pub(crate) mod failed;
mod jobs;
mod lexicon;
pub(crate) mod manual;
pub(crate) mod offline;
pub(crate) mod options;
mod outcome;
pub(crate) mod prompt;
pub(crate) mod run;
pub(crate) mod schedule;
pub(crate) mod scores;
pub(crate) mod spec;
pub(crate) mod tokens;
pub(crate) mod usage;
pub(crate) mod verify;
mod words;

/// How many threads to split `n` turns over: one per core, at most 4, and none for a short log
/// (a thread costs more than scoring a few dozen turns).
pub(crate) fn parallel_parts(n: usize) -> usize {
    if n < 64 {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |c| c.get())
        .min(4)
        .min(n / 32)
}
