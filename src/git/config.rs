//! git config: reads (with where a value came from) and writes to the repository's own file.

use super::{Repo, git_err};
use crate::error::{Error, Result};

/// A git boolean as git itself reads it (libgit2's parser: true/yes/on, false/no/off in any
/// case, and integers, 0 being false).
pub fn parse_bool(v: &str) -> Option<bool> {
    git2::Config::parse_bool(v).ok()
}

impl Repo {
    /// A `git config` value (repository, then global and system), if set.
    pub fn config_string(&self, key: &str) -> Result<Option<String>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        match config.get_string(key) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(Error::input(format!(
                "git config {key} cannot be read: {}",
                e.message()
            ))),
        }
    }

    /// Every value under `section.` (keys in lower case, the last value of a multi-valued key
    /// last), read in one pass over one snapshot of the config files.
    pub fn config_section(&self, section: &str) -> Result<Vec<(String, String)>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        let mut out = Vec::new();
        let glob = format!("^{}\\.", regex_escape(section));
        if let Ok(mut entries) = config.entries(Some(&glob)) {
            while let Some(Ok(e)) = entries.next() {
                if let Ok(name) = e.name() {
                    out.push((
                        name.to_ascii_lowercase(),
                        String::from_utf8_lossy(e.value_bytes()).into_owned(),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// A config value with where it came from (`local`, `global`, `system`, …).
    pub fn config_entry(&self, key: &str) -> Result<Option<(String, String)>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        let entries = match config.entries(Some(&regex_escape(key))) {
            Ok(e) => e,
            Err(_) => return Ok(None),
        };
        let mut last = None;
        let mut entries = entries;
        while let Some(Ok(e)) = entries.next() {
            if e.name().is_ok_and(|n| n.eq_ignore_ascii_case(key)) {
                let level = match e.level() {
                    git2::ConfigLevel::System => "system",
                    git2::ConfigLevel::XDG | git2::ConfigLevel::Global => "global",
                    git2::ConfigLevel::Local => "local",
                    git2::ConfigLevel::Worktree => "worktree",
                    _ => "other",
                };
                last = Some((
                    String::from_utf8_lossy(e.value_bytes()).into_owned(),
                    level.to_string(),
                ));
            }
        }
        Ok(last)
    }

    /// Every value of a multi-valued config key.
    pub fn config_all(&self, key: &str) -> Result<Vec<String>> {
        let config = self
            .inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?;
        let mut out = Vec::new();
        if let Ok(mut entries) = config.multivar(key, None) {
            while let Some(Ok(e)) = entries.next() {
                out.push(String::from_utf8_lossy(e.value_bytes()).into_owned());
            }
        }
        Ok(out)
    }

    /// Adds a value to a multi-valued key of the repository's config.
    pub fn config_add(&self, key: &str, value: &str) -> Result<()> {
        self.local_config()?
            .set_multivar(key, "^$", value)
            .map_err(|e| git_err(format_args!("cannot set {key}"), e))
    }

    /// The repository's own config file (`.git/config`), for writing.
    fn local_config(&self) -> Result<git2::Config> {
        self.inner
            .config()
            .map_err(|e| git_err("cannot read git config", e))?
            .open_level(git2::ConfigLevel::Local)
            .map_err(|e| git_err("cannot open the repository config", e))
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
