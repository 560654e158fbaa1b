//! The process environment git sage reads, read once at the command line's edge
//! (`Env::from_process`) and passed down as values: nothing below `cli` reads a variable on
//! its own (a test in tests/it/layers.rs keeps it so). The HTTP judges' keys and base URLs are
//! the exception, read in `judge/endpoint.rs` alone, where they are checked before a request.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::lang::Lang;
use crate::term::TermEnv;

/// What the environment says, once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Env {
    /// The locale's language: `LC_ALL`, then `LC_MESSAGES`, then `LANG`, as POSIX reads them;
    /// one we have no strings for means English.
    pub locale: Lang,
    /// The judge answer cache when `sage.cacheDir` is unset: `$XDG_CACHE_HOME/git-sage`, else
    /// `$HOME/.cache/git-sage`.
    pub cache_home: Option<PathBuf>,
    /// `SAGE_THREADS`: the threads history work may use (1 = all on the calling thread).
    pub threads: Option<usize>,
    /// `SAGE_SEMGREP_CONFIG`: the rules Semgrep runs (its own `auto` when unset).
    pub semgrep_config: Option<String>,
    /// `SAGE_TIMING`: each stage's time on stderr.
    pub timing: bool,
    /// `SAGE_OFFLINE_TRACE=1`: each offline score's rule on stderr.
    pub offline_trace: bool,
    /// `NO_COLOR`, `CLICOLOR_FORCE`, `TERM`, `COLUMNS`.
    pub term: TermEnv,
}

impl Env {
    /// This process's environment.
    pub(crate) fn from_process() -> Env {
        Env::read(|k| std::env::var_os(k))
    }

    /// The environment `get` gives (a variable set to nothing counts as unset where git sage
    /// reads a path or a number).
    pub(crate) fn read(get: impl Fn(&str) -> Option<OsString>) -> Env {
        let text = |k: &str| get(k).and_then(|v| v.into_string().ok());
        let set = |k: &str| get(k).filter(|v| !v.is_empty());
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|k| text(k).filter(|v| !v.is_empty()))
            .and_then(|v| Lang::parse(&v))
            .unwrap_or(Lang::En);
        let cache_home = match set("XDG_CACHE_HOME") {
            Some(x) => Some(PathBuf::from(x).join("git-sage")),
            None => get("HOME").map(|h| PathBuf::from(h).join(".cache").join("git-sage")),
        };
        Env {
            locale,
            cache_home,
            threads: text("SAGE_THREADS")
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&v| v > 0),
            semgrep_config: text("SAGE_SEMGREP_CONFIG"),
            timing: set("SAGE_TIMING").is_some_and(|v| v != "0"),
            offline_trace: get("SAGE_OFFLINE_TRACE").is_some_and(|v| v == "1"),
            term: TermEnv {
                no_color: set("NO_COLOR").is_some(),
                force_color: set("CLICOLOR_FORCE").is_some_and(|v| v != "0"),
                dumb: get("TERM").is_some_and(|t| t == "dumb"),
                columns: text("COLUMNS").and_then(|c| c.parse().ok()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> Env {
        Env::read(|k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn variables_are_read_as_documented() {
        assert_eq!(env(&[("LANG", "ru_RU.UTF-8")]).locale, Lang::Ru);
        assert_eq!(
            env(&[("LC_ALL", "zh_CN.UTF-8"), ("LANG", "ru_RU")]).locale,
            Lang::Zh
        );
        assert_eq!(env(&[("LC_ALL", "C")]).locale, Lang::En);
        assert_eq!(
            env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]).cache_home,
            Some(PathBuf::from("/x/git-sage"))
        );
        assert_eq!(
            env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]).cache_home,
            Some(PathBuf::from("/h/.cache/git-sage"))
        );
        assert_eq!(env(&[]).cache_home, None);
        assert_eq!(env(&[("SAGE_THREADS", "0")]).threads, None);
        assert_eq!(env(&[("SAGE_THREADS", "3")]).threads, Some(3));
        assert!(!env(&[("SAGE_TIMING", "0")]).timing);
        assert!(env(&[("SAGE_TIMING", "yes")]).timing);
        assert!(!env(&[("SAGE_OFFLINE_TRACE", "2")]).offline_trace);
        let t = env(&[("NO_COLOR", ""), ("CLICOLOR_FORCE", "0"), ("COLUMNS", "x")]).term;
        assert_eq!(t, TermEnv::default());
        let t = env(&[("NO_COLOR", "1"), ("TERM", "dumb"), ("COLUMNS", "72")]).term;
        assert!(t.no_color && t.dumb && t.columns == Some(72));
    }
}
