//! `-v` (or `SAGE_TIMING=1`) prints how long each stage took to stderr, for performance work.

use std::sync::OnceLock;
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        crate::term::verbose()
            || std::env::var_os("SAGE_TIMING").is_some_and(|v| !v.is_empty() && v != "0")
    })
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
