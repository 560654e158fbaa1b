//! The finding files a repository keeps (`sage.findings`, default `.sage/findings/*.{sarif,json,yaml,yml}`):
//! the hooks analyse all of them, `blame-origin` without `--finding` takes the only one.

use std::path::{Path, PathBuf};

/// Globs (`*`, `?`, `[…]`, `{a,b}`) in the last path component, relative to `root`. A
/// pattern that is not a glob names the file itself.
pub(crate) fn glob(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let (dir, file) = match pattern.rsplit_once('/') {
        Some((d, f)) => (root.join(d), f.to_string()),
        None => (root.to_path_buf(), pattern.to_string()),
    };
    let matcher = globset::Glob::new(&file).map(|g| g.compile_matcher());
    let matches = |name: &str| match &matcher {
        Ok(m) => m.is_match(name),
        Err(_) => name == file,
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(matches))
        .collect();
    out.sort();
    out
}

/// Every file the patterns name under `root`, in order, without repeats.
pub(crate) fn all(root: &Path, patterns: &[String]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for pat in patterns {
        for f in glob(root, pat) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}
