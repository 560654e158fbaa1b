//! Splits per-commit and per-blob work over threads, each with its own repository handle.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::git::Repo;

/// Below this many items per thread, spawning costs more than it saves.
const MIN_PER_THREAD: usize = 256;
const MAX_THREADS: usize = 8;

fn threads_for(n: usize) -> usize {
    // SAGE_THREADS caps the workers (1 = all on the calling thread), for measurements.
    let cores = std::env::var("SAGE_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&v| v > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |c| c.get()));
    cores.min(MAX_THREADS).min(n / MIN_PER_THREAD).max(1)
}

/// Runs `f` over contiguous chunks of `0..n` and concatenates the results in order.
/// The calling thread takes the first chunk with `repo`; the others open their own.
pub fn map_chunks<T, F>(repo: &Repo, n: usize, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&Repo, Range<usize>) -> Result<Vec<T>> + Sync,
{
    let threads = threads_for(n);
    if threads <= 1 {
        return f(repo, 0..n);
    }
    let chunk = n.div_ceil(threads);
    let ranges: Vec<Range<usize>> = (0..threads)
        .map(|i| i * chunk..((i + 1) * chunk).min(n))
        .filter(|r| !r.is_empty())
        .collect();
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = ranges[1..]
            .iter()
            .cloned()
            .map(|r| {
                let seed = repo.worker_seed();
                s.spawn(move || {
                    let repo = Repo::from_seed(seed)?;
                    f(&repo, r)
                })
            })
            .collect();
        let mut out = f(repo, ranges[0].clone())?;
        for h in handles {
            let part = h
                .join()
                .map_err(|_| Error::env("a history worker thread panicked"))??;
            out.extend(part);
        }
        Ok(out)
    })
}
