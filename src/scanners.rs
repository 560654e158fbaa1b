//! External scanners (Bandit, Semgrep) over the files a range changed: whether one is
//! installed and which version, the scratch tree it reads, running it, and reading its JSON
//! report. Reports are read by the finding-file parsers, so a scanner's output means the same
//! whether the user saved it as `--finding` or git-sage ran the scanner itself. Scanners
//! parse the files; they never run them.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::error::{Error, Result};
use crate::finding::{self, ScanResult, bandit};
use crate::git::{Oid, Repo};

/// How a scanner is run and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bandit,
    Semgrep,
}

impl Kind {
    /// Its executable's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Bandit => "bandit",
            Kind::Semgrep => "semgrep",
        }
    }

    /// The `source.format` of anchors taken from its report.
    pub(crate) fn format(self) -> &'static str {
        match self {
            Kind::Bandit => "bandit-json",
            Kind::Semgrep => "semgrep-json",
        }
    }
}

/// The tip's versions of changed files, in a temporary directory that goes with it.
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
    files: usize,
}

impl Scratch {
    pub(crate) fn new() -> Result<Scratch> {
        let dir = tempfile::tempdir()
            .map_err(|e| Error::env(format!("cannot make a scratch directory: {e}")))?;
        Ok(Scratch { dir, files: 0 })
    }

    /// The tip's version of every file changed between two trees; a deleted file has none.
    pub(crate) fn of_changes(repo: &Repo, base_tree: Oid, tip_tree: Oid) -> Result<Scratch> {
        let mut s = Scratch::new()?;
        for p in repo.changed_paths(base_tree, tip_tree)? {
            if let Some(bytes) = repo.file_in_tree(tip_tree, &p)? {
                s.add(&p, &bytes)?;
            }
        }
        Ok(s)
    }

    /// Writes one file at its repository path.
    pub(crate) fn add(&mut self, path: &str, bytes: &[u8]) -> Result<()> {
        let dest = self.dir.path().join(path);
        std::fs::create_dir_all(dest.parent().expect("a file has a parent"))
            .map_err(|e| Error::env(format!("cannot write {}: {e}", dest.display())))?;
        std::fs::write(&dest, bytes)
            .map_err(|e| Error::env(format!("cannot write {}: {e}", dest.display())))?;
        self.files += 1;
        Ok(())
    }

    /// How many files were written.
    pub(crate) fn files(&self) -> usize {
        self.files
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A path as the scanner reported it (under the scratch root), back to repository-relative.
    pub(crate) fn relative(&self, file: &str) -> String {
        let f = file.replace('\\', "/");
        let d = self.root().to_string_lossy().replace('\\', "/");
        f.strip_prefix(&format!("{}/", d.trim_end_matches('/')))
            .unwrap_or(&f)
            .trim_start_matches("./")
            .to_string()
    }
}

/// A scanner that runs here.
pub(crate) struct Installed {
    /// As the user named it; reports and messages use this name.
    pub name: String,
    pub kind: Kind,
    cmd: Vec<String>,
    /// The first line `--version` printed (empty when none).
    pub version: String,
}

/// The rules Semgrep runs (`SAGE_SEMGREP_CONFIG`), set once by the command line; its own
/// `auto` when unset.
static SEMGREP_CONFIG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets the rules Semgrep runs for this process.
pub(crate) fn set_semgrep_config(config: Option<String>) {
    if let Some(c) = config {
        let _ = SEMGREP_CONFIG.set(c);
    }
}

/// Whether the scanner runs here: its own executable, else (Bandit) the Python module.
pub(crate) fn probe(kind: Kind) -> Option<Installed> {
    let name = kind.name();
    let version = |cmd: &[String]| {
        Command::new(&cmd[0])
            .args(&cmd[1..])
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
    };
    let mut tries = vec![vec![name.to_string()]];
    if kind == Kind::Bandit {
        tries.push(vec!["python3".into(), "-m".into(), "bandit".into()]);
    }
    tries.into_iter().find_map(|cmd| {
        version(&cmd).map(|version| Installed {
            name: name.to_string(),
            kind,
            cmd,
            version,
        })
    })
}

/// A scanner started in the background.
pub(crate) struct Running {
    child: Child,
}

impl Installed {
    /// Starts the scanner on the scratch tree, its JSON report on stdout.
    pub(crate) fn start(&self, tree: &Scratch) -> std::io::Result<Running> {
        let mut c = Command::new(&self.cmd[0]);
        c.args(&self.cmd[1..]);
        match self.kind {
            Kind::Bandit => c.args(["-f", "json", "-q", "-r"]),
            Kind::Semgrep => c.args([
                "scan",
                "--json",
                "--quiet",
                "--config",
                SEMGREP_CONFIG.get().map_or("auto", String::as_str),
            ]),
        };
        c.arg(tree.root())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map(|child| Running { child })
    }

    /// The results of its report, with repository-relative paths.
    pub(crate) fn results(&self, out: &Output, tree: &Scratch) -> Result<Vec<ScanResult>> {
        let text = String::from_utf8_lossy(&out.stdout);
        let mut results = match self.kind {
            Kind::Bandit => finding::bandit::parse(&text, &self.name)?,
            Kind::Semgrep => finding::semgrep::parse(&text, &self.name)?,
        };
        for r in &mut results {
            r.file = r.file.as_deref().map(|f| tree.relative(f));
        }
        Ok(results)
    }
}

impl Running {
    /// Waits for the scanner; its stdout is the report, its stderr says why there is none.
    pub(crate) fn finish(self) -> std::io::Result<Output> {
        self.child.wait_with_output()
    }
}

/// The whole of a Bandit report (with the files it could not scan), repository-relative.
pub(crate) fn bandit_report(out: &Output, tree: &Scratch) -> Result<bandit::Report> {
    let mut report = bandit::report(&String::from_utf8_lossy(&out.stdout), "bandit")?;
    for i in &mut report.issues {
        i.file = i.file.as_deref().map(|f| tree.relative(f));
    }
    for (file, _) in &mut report.errors {
        *file = tree.relative(file);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_paths_come_back_repository_relative() {
        let mut s = Scratch::new().unwrap();
        s.add("pkg/a.py", b"x = 1\n").unwrap();
        assert_eq!(s.files(), 1);
        assert!(s.root().join("pkg/a.py").is_file());
        let root = s.root().display().to_string();
        assert_eq!(s.relative(&format!("{root}/./pkg/a.py")), "pkg/a.py");
        assert_eq!(s.relative("./other/b.py"), "other/b.py");
    }

    #[test]
    fn kinds() {
        assert_eq!(Kind::Bandit.name(), "bandit");
        assert_eq!(Kind::Semgrep.format(), "semgrep-json");
    }
}
