//! `-v` (or `SAGE_TIMING=1`) prints how long each stage took to stderr, for performance work.

use std::sync::OnceLock;
use std::time::Instant;

static ON: OnceLock<bool> = OnceLock::new();

/// Turns the timings on or off for this run (`-v` or `SAGE_TIMING`); the command line calls
/// it once, before any stage.
pub(crate) fn enable(on: bool) {
    let _ = ON.set(on);
}

fn enabled() -> bool {
    ON.get().copied().unwrap_or(false)
}

/// Measures a stage from creation to drop.
pub(crate) struct Stage {
    name: &'static str,
    start: Option<Instant>,
}

pub(crate) fn stage(name: &'static str) -> Stage {
    Stage {
        name,
        start: enabled().then(Instant::now),
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(s) = self.start {
            eprintln!(
                "timing: {:<24} {:>8.2} ms",
                self.name,
                s.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}
