//! Splits per-commit and per-blob work over threads, each with its own repository handle.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::git::Repo;

/// Below this many items per thread, spawning costs more than it saves.
const MIN_PER_THREAD: usize = 256;
const MAX_THREADS: usize = 8;

/// The threads the environment allows (`SAGE_THREADS`), set once by the command line.
static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Caps history work at `n` threads (1 = all on the calling thread, for measurements). The
/// command line calls it once with `SAGE_THREADS`; later calls change nothing.
pub(crate) fn set_threads(n: Option<usize>) {
    if let Some(n) = n.filter(|&n| n > 0) {
        let _ = THREADS.set(n);
    }
}

/// Threads history work may use, the calling one included: the cores, capped by
/// `set_threads` and by eight.
pub(crate) fn workers() -> usize {
    THREADS
        .get()
        .copied()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
        .min(MAX_THREADS)
}

fn threads_for(n: usize) -> usize {
    workers().min(n / MIN_PER_THREAD).max(1)
}

/// Runs `f` over chunks of `0..n` and returns the results in order. Threads take small
/// chunks from a shared counter, so one that starts late (or is scheduled away) does not
/// hold the others up. The calling thread works too, with `repo`; the others open their own.
pub(crate) fn map_chunks<T, F>(repo: &Repo, n: usize, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&Repo, Range<usize>) -> Result<Vec<T>> + Sync,
{
    map_chunks_beside(repo, n, f, || ()).1
}

/// [`map_chunks`] while the calling thread first does `first`, then joins in: work whose
/// input is known early (a range's commits) overlaps work that comes before its use (the
/// history walk). On one core `first` runs, then all of `f`.
pub(crate) fn map_chunks_beside<T, F, R>(
    repo: &Repo,
    n: usize,
    f: F,
    first: impl FnOnce() -> R,
) -> (R, Result<Vec<T>>)
where
    T: Send,
    F: Fn(&Repo, Range<usize>) -> Result<Vec<T>> + Sync,
{
    let threads = threads_for(n);
    if threads <= 1 {
        let r = first();
        return (r, f(repo, 0..n));
    }
    let chunk = (n / (threads * 8)).max(32);
    let next = AtomicUsize::new(0);
    let work = |repo: &Repo| -> Result<Vec<(usize, Vec<T>)>> {
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(chunk, Ordering::Relaxed);
            if start >= n {
                return Ok(done);
            }
            let r = start..(start + chunk).min(n);
            done.push((start, f(repo, r)?));
            // A pass over scattered objects keeps every pack page it touched mapped, and the
            // kernel's neighbours of each: let them go between chunks (they stay cached).
            repo.release_pack_pages();
        }
    };
    let (r, parts) = std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                let seed = repo.worker_seed();
                s.spawn(move || work(&Repo::from_seed(seed)?))
            })
            .collect();
        let r = first();
        let parts = (|| {
            let mut parts = work(repo)?;
            for h in handles {
                let more = h
                    .join()
                    .map_err(|_| Error::env("a history worker thread panicked"))??;
                parts.extend(more);
            }
            Ok::<_, Error>(parts)
        })();
        (r, parts)
    });
    let parts = parts.map(|mut parts| {
        parts.sort_unstable_by_key(|(start, _)| *start);
        parts.into_iter().flat_map(|(_, v)| v).collect()
    });
    (r, parts)
}
