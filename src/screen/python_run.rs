//! The parts of Python screening that run a program: asking the machine's `python3` where
//! its packages live, so that L1 can tell an installed package from an import that resolves
//! nowhere, and having it compile the changed files (L0 as CPython sees it, nothing run).
//! Everything else about Python (`python.rs`) is pure and reads only the source.

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

/// L0 as CPython sees it: each file compiled by the machine's `python3`, never run.
///
/// `compile()` builds the code object without executing a line of it, and `-I` keeps the
/// repository and the user's environment off the interpreter's path, so nothing of the
/// repository is imported either. The full compile (not only the parser) also rejects what
/// the compiler does: `return` outside a function, `nonlocal` at module level.
const COMPILE_CHECK: &str = r#"
import json, os, sys, warnings
warnings.simplefilter("ignore")
root = sys.argv[1]
print(json.dumps({"version": sys.version.split()[0]}), flush=True)
for raw in sys.stdin.buffer.read().split(b"\0"):
    if not raw:
        continue
    name = os.fsdecode(raw)
    try:
        with open(os.path.join(root, name), "rb") as f:
            src = f.read()
        compile(src, name, "exec", dont_inherit=True)
        err = None
    except SyntaxError as e:
        err = [e.lineno or 1, "%s: %s" % (type(e).__name__, e.msg)]
    except (ValueError, UnicodeError) as e:
        err = [1, "%s: %s" % (type(e).__name__, e)]
    except (RecursionError, MemoryError):
        err = [1, "too deeply nested for CPython's compiler"]
    print(json.dumps([name, err]))
"#;

/// The compile check started in the background.
pub(crate) struct Compiling {
    child: std::process::Child,
    feeder: std::thread::JoinHandle<()>,
}

/// What CPython said of each file: `None` compiles, else the first error (line, message).
#[derive(Debug, Default)]
pub(crate) struct Compiled {
    /// `python3`'s version (`3.11.7`).
    pub version: String,
    pub errors: std::collections::HashMap<String, Option<(u32, String)>>,
}

/// Starts compiling `paths` (relative to `root`); `None` when `python3` does not start.
pub(crate) fn start_compile(root: &std::path::Path, paths: Vec<String>) -> Option<Compiling> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("python3")
        .args(["-I", "-c", COMPILE_CHECK])
        .arg(root)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    // written from a thread: the child answers while it reads, and a full pipe either way
    // would stall both
    let feeder = std::thread::spawn(move || {
        for p in paths {
            if stdin.write_all(p.as_bytes()).is_err() || stdin.write_all(b"\0").is_err() {
                return;
            }
        }
    });
    Some(Compiling { child, feeder })
}

impl Compiling {
    /// Waits for the verdicts; `Err` says in words why there are none.
    pub(crate) fn finish(self) -> Result<Compiled, String> {
        let out = self
            .child
            .wait_with_output()
            .map_err(|e| format!("python3 did not finish: {e}"))?;
        let _ = self.feeder.join();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().last().unwrap_or("no output").trim().to_string();
            return Err(format!("python3 failed: {last}"));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let head: serde_json::Value = lines
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or("python3 gave no version")?;
        let mut c = Compiled {
            version: head["version"].as_str().unwrap_or("?").to_string(),
            ..Compiled::default()
        };
        for l in lines {
            let (name, err): (String, Option<(u32, String)>) =
                serde_json::from_str(l).map_err(|e| format!("python3's answer unreadable: {e}"))?;
            c.errors.insert(name, err);
        }
        Ok(c)
    }
}
