//! The one part of Python screening that runs a program: asking the machine's `python3` where
//! its packages live, so that L1 can tell an installed package from an import that resolves
//! nowhere. Everything else about Python (`python.rs`) is pure and reads only the source.

use std::collections::HashSet;
use std::process::Command;

/// Top-level names importable from the interpreter's path, listed from the directories
/// themselves; `None` when `python3` does not run here.
///
/// `-I` keeps the repository off the path and ignores the user's environment variables, and
/// only `sys.path` is printed: nothing of the repository, nor any package, is imported.
pub(crate) fn installed_modules() -> Option<HashSet<String>> {
    let out = Command::new("python3")
        .args(["-I", "-c", "import sys, json; print(json.dumps(sys.path))"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let dirs: Vec<String> = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let mut names = HashSet::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // A distribution's metadata names its import packages, which may differ from it.
            if name.ends_with(".dist-info") || name.ends_with(".egg-info") {
                if let Ok(t) = std::fs::read_to_string(e.path().join("top_level.txt")) {
                    names.extend(
                        t.lines()
                            .map(|l| l.trim().to_string())
                            .filter(|l| !l.is_empty()),
                    );
                }
                continue;
            }
            let stem = name.split('.').next().unwrap_or("").to_string();
            if !stem.is_empty() {
                names.insert(stem);
            }
        }
    }
    Some(names)
}
