//! Test helpers: temporary repositories built with the real `git`, and the real binary,
//! both under a pinned environment (no user config, fixed dates and identities).

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin;
use tempfile::TempDir;

pub const AGENT: (&str, &str) = ("Claude Agent", "agent@anthropic.example");
pub const HUMAN: (&str, &str) = ("Dana Dev", "dana@example.com");

/// A temporary git repository on `main`.
pub struct Repo {
    pub dir: TempDir,
    home: TempDir,
    tick: std::cell::Cell<u32>,
}

impl Repo {
    pub fn new() -> Repo {
        let r = Repo {
            dir: tempfile::tempdir().expect("tempdir"),
            home: tempfile::tempdir().expect("home"),
            tick: std::cell::Cell::new(0),
        };
        r.git(&["init", "-q", "-b", "main", "."]);
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The fake home directory every command of this repository runs with.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    fn env(&self, cmd: &mut Command) {
        // git-sage itself on PATH, so that `git sage` and the hooks find it.
        let bin = cargo_bin("git-sage");
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.path().join(".gitconfig"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC");
    }

    /// `program` (git, pre-commit, bash) in `dir` under the pinned environment, git-sage on
    /// PATH: what a hook or a CI step runs.
    pub fn command(&self, program: &str, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.env(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    /// `command` as the person who merges (`Merger`), for commits a hook sees being made.
    pub fn command_as_merger(&self, program: &str, dir: &Path) -> Command {
        let mut cmd = self.command(program, dir);
        cmd.env("GIT_AUTHOR_NAME", "Merger")
            .env("GIT_AUTHOR_EMAIL", "merger@example.com")
            .env("GIT_COMMITTER_NAME", "Merger")
            .env("GIT_COMMITTER_EMAIL", "merger@example.com");
        cmd
    }

    /// Runs git in the repository; panics with its stderr when it fails.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_as(HUMAN, args)
    }

    pub fn git_as(&self, who: (&str, &str), args: &[&str]) -> String {
        let t = self.tick.get() + 1;
        self.tick.set(t);
        let date = format!("2026-01-01T00:{:02}:{:02}Z", t / 60, t % 60);
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        cmd.current_dir(self.path())
            .args(args)
            .env("GIT_AUTHOR_NAME", who.0)
            .env("GIT_AUTHOR_EMAIL", who.1)
            .env("GIT_COMMITTER_NAME", who.0)
            .env("GIT_COMMITTER_EMAIL", who.1)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date);
        let out = cmd.output().expect("run git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn write(&self, path: &str, content: &str) {
        self.write_bytes(path, content.as_bytes());
    }

    pub fn write_bytes(&self, path: &str, content: &[u8]) {
        let p = self.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// Writes a finding file outside the work tree; returns its absolute path.
    pub fn finding(&self, name: &str, content: &str) -> String {
        let p = self.home.path().join("findings").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p.to_string_lossy().into_owned()
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.path().join(path)).unwrap();
    }

    /// Stages everything and commits as `who`; returns the full sha.
    pub fn commit_as(&self, who: (&str, &str), msg: &str) -> String {
        self.git_as(who, &["add", "-A"]);
        self.git_as(who, &["commit", "-q", "--allow-empty", "-m", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    pub fn commit(&self, msg: &str) -> String {
        self.commit_as(AGENT, msg)
    }

    /// The real binary, run in the repository under the pinned environment.
    pub fn sage(&self, args: &[&str]) -> Run {
        self.sage_in(self.path(), args)
    }

    pub fn sage_in(&self, dir: &Path, args: &[&str]) -> Run {
        self.sage_env(dir, args, &[])
    }

    /// The binary as a command to wire up (stdin, a pipe), in `dir` under the pinned
    /// environment.
    pub fn sage_command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(cargo_bin("git-sage"));
        self.env(&mut cmd);
        cmd.current_dir(dir).args(args);
        cmd
    }

    /// The binary with extra environment (judge endpoints and keys).
    pub fn sage_env(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.sage_command(dir, args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().expect("run git-sage"))
    }
}

/// The finding `git sage demo` commits.
pub const DEMO_FINDING: &str = ".sage/findings/ssrf-preview.yaml";

impl Repo {
    /// The demo repository kept under this one (agent/fix-ssrf checked out, the finding in
    /// .sage/findings/, no hooks).
    pub fn demo(&self) -> PathBuf {
        let dir = self.path().join("demo");
        self.sage(&["demo", "--keep", dir.to_str().unwrap(), "--format", "json"])
            .ok();
        dir
    }

    /// `blame-origin` on the demo repository `dir` with its finding, plus `extra`.
    pub fn blame_demo(&self, dir: &Path, extra: &[&str]) -> Run {
        let mut args = vec![
            "-C",
            dir.to_str().unwrap(),
            "blame-origin",
            "--finding",
            DEMO_FINDING,
        ];
        args.extend_from_slice(extra);
        self.sage(&args)
    }
}

/// Cuts a file to half its length, as a crash or a full disk leaves it (read-only git
/// objects included).
pub fn cut_in_half(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let len = std::fs::metadata(p).unwrap().len();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
}

/// Runs `cmd` with `input` on its standard input (written from a thread, so a large input
/// cannot deadlock against a full output pipe) and its output captured.
pub fn feed(mut cmd: Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // A program that does not read its input may have gone already.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    out
}

/// What a run of the binary produced.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Run {
    fn from(o: std::process::Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "expected success, got {self:#?}");
        self
    }

    /// stdout as JSON; one of our documents (or a list of them) must match its schema.
    pub fn json(&self) -> serde_json::Value {
        let v = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", self.stdout));
        crate::schemas::check_output(&v);
        v
    }

    /// Bad input: exit 2 and exactly one line on stderr that mentions `needle`.
    pub fn bad_input(self, needle: &str) -> Run {
        assert_eq!(self.code, 2, "expected exit 2, got {self:#?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected one line on stderr: {:?}",
            self.stderr
        );
        assert!(
            lines[0].contains(needle),
            "stderr {:?} lacks {needle:?}",
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        self
    }
}

/// A test that cannot run here for want of a tool or fixture: "skipped" on a developer's
/// machine, a failure under CI (`CI=true`), where everything must be present.
///
/// libtest has no "skipped": such a test passes, is listed as `ok`, and what it printed is
/// shown only for failures. So each skip is kept, and when the test program exits — after
/// libtest's summary, whether the run passed or failed — they are listed on stderr, one
/// `test NAME ... skipped: WHY` line each (the name is the test thread's, as libtest names it).
pub fn skip(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why} (CI=true: a missing tool or fixture fails the run)"
    );
    eprintln!("skipped: {why}");
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed)")
        .to_string();
    SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(format!("test {test} ... skipped: {why}"));
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: atexit(3) only records the function; `list_skips` takes no arguments,
        // returns nothing and never unwinds.
        unsafe {
            atexit(list_skips);
        }
    });
}

/// The skips of this run, in the order they happened.
static SKIPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> std::os::raw::c_int;
}

/// Lists the skips after libtest's own summary: written to stderr directly, as libtest's
/// capture of a test's output has ended by then. Nothing here may panic (it would abort).
extern "C" fn list_skips() {
    use std::io::Write;
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} test(s) skipped: they passed without running (CI=true makes them fail):",
        skipped.len()
    );
    for line in skipped.iter() {
        let _ = writeln!(err, "{line}");
    }
    let _ = writeln!(err);
}

/// The shared real third-party fixtures, when this checkout has them.
pub fn real_fixtures(sub: &str) -> Option<PathBuf> {
    // SAGE_REAL_FIXTURES points elsewhere when the checkout is not beside shared/.
    let root = std::env::var_os("SAGE_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/real"));
    let p = root.join(sub);
    if p.is_dir() {
        Some(p)
    } else {
        skip(&format!(
            "{} is absent (conformance runs where ../shared/fixtures/real exists)",
            p.display()
        ));
        None
    }
}
