//! The finding files a repository keeps (`sage.findings`, default `.sage/findings/*.{sarif,json,yaml,yml}`):
//! the hooks analyse all of them, `blame-origin` without `--finding` takes the only one.

use std::path::{Path, PathBuf};

/// `*` and `{a,b}` in the last path component, relative to `root`.
pub(crate) fn glob(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let (dir, file) = match pattern.rsplit_once('/') {
        Some((d, f)) => (root.join(d), f.to_string()),
        None => (root.to_path_buf(), pattern.to_string()),
    };
    let alternatives: Vec<String> = match (file.find('{'), file.find('}')) {
        (Some(a), Some(z)) if a < z => file[a + 1..z]
            .split(',')
            .map(|alt| format!("{}{alt}{}", &file[..a], &file[z + 1..]))
            .collect(),
        _ => vec![file.clone()],
    };
    let matches = |name: &str, pat: &str| -> bool {
        let parts: Vec<&str> = pat.split('*').collect();
        if parts.len() == 1 {
            return name == pat;
        }
        let mut rest = name;
        if !rest.starts_with(parts[0]) {
            return false;
        }
        rest = &rest[parts[0].len()..];
        for (i, p) in parts[1..].iter().enumerate() {
            if i == parts.len() - 2 {
                return rest.ends_with(p);
            }
            match rest.find(p) {
                Some(at) => rest = &rest[at + p.len()..],
                None => return false,
            }
        }
        true
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| alternatives.iter().any(|a| matches(n, a)))
        })
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
