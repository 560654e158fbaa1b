//! Every `sage.*` setting in one place: its key, type, default and parse, loaded once from git
//! config. A value that does not parse is bad input naming the key, in every command and hook.

use std::path::{Path, PathBuf};

use crate::env::Env;
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::lang::Lang;

/// The findings the hooks analyse when `sage.findings` is unset.
pub(crate) const DEFAULT_FINDINGS: &str = ".sage/findings/*.{sarif,json,yaml,yml}";

/// The judge calls made at once when neither `--jobs` nor `sage.jobs` says.
pub(crate) const DEFAULT_JOBS: usize = 8;

/// The largest session `git sage record` copies, in MB, unless `sage.recordMaxSize` says.
pub(crate) const DEFAULT_RECORD_MAX_MB: u64 = 20;

/// A scanner git sage runs for an anchor when there is no confirmed finding (`--find-anchor`,
/// `sage.scanner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scanner {
    Bandit,
    Semgrep,
    // git sage's own screening: its top candidate.
    Screen,
}

impl Scanner {
    pub(crate) fn parse(v: &str) -> Option<Scanner> {
        <Scanner as clap::ValueEnum>::from_str(v, true).ok()
    }

    /// The name `sage.scanner` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scanner::Bandit => "bandit",
            Scanner::Semgrep => "semgrep",
            Scanner::Screen => "screen",
        }
    }
}

/// One setting as `git sage config` lists it.
pub(crate) struct Key {
    pub key: &'static str,
    pub default: &'static str,
    pub what: &'static str,
}

/// When the agent-side guard asks for the security plan (`sage.guard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum GuardMode {
    /// When the task or the session bears on security.
    #[default]
    Auto,
    /// Before every first write.
    Always,
    /// Never: every write is allowed.
    Off,
}

/// What a row's parser sees: the key, its values in git's order (the last wins for a
/// single-valued key) and where relative paths start.
pub(crate) struct Raw<'a> {
    key: &'static str,
    all: Vec<String>,
    top: Option<&'a Path>,
}

impl Raw<'_> {
    /// The value in force: git's last, trimmed of nothing (messages quote it as written).
    fn last(&self) -> &str {
        self.all.last().map_or("", String::as_str)
    }

    /// A single-valued key counts as set when its last value holds more than blanks.
    fn set(&self, many: bool) -> bool {
        match many {
            true => !self.all.is_empty(),
            false => !self.last().trim().is_empty(),
        }
    }
}

/// The one table of settings: each row gives the field, its type and default, the key,
/// the default as `git sage config` shows it, what it does, and the parser of its value. The
/// struct, its `Default`, `KEYS` and the loader are all generated from it, so a key cannot be
/// read without being listed.
macro_rules! settings {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal, $shown:expr, $what:literal, $many:literal => $parse:expr;
    )*) => {
        /// The effective `sage.*` settings: git config, else the defaults. Flags override
        /// them where the commands take flags.
        #[derive(Debug, Clone, PartialEq)]
        pub(crate) struct Settings {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl Default for Settings {
            fn default() -> Settings {
                Settings { $( $field: $default, )* }
            }
        }

        /// Every setting git sage reads, in the order `git sage config` prints them.
        pub(crate) const KEYS: &[Key] = &[ $( Key { key: $key, default: $shown, what: $what }, )* ];

        impl Settings {
            /// Each row's value from `section` (the `sage` section as git reads it, keys in
            /// lower case), parsed by its row.
            fn read(&mut self, section: &[(String, String)], top: Option<&Path>) -> Result<()> {
                $(
                    let raw = Raw { key: $key, all: values(section, $key), top };
                    if raw.set($many) {
                        self.$field = ($parse)(&raw)?;
                    }
                )*
                Ok(())
            }
        }
    };
}

settings! {
    base: Option<String> = None;
        "sage.base", "merge-base with origin/HEAD, main or master",
        "the branch the agent's work started from", false => text;
    agent_pattern: Option<String> = None;
        "sage.agentPattern", "every commit",
        "regex over author, committer, Co-authored-by naming agent commits", false => text;
    /// A judge spec (`offline`, `openai:MODEL`, …), parsed where the judge is built.
    judge: String = "offline".into();
        "sage.judge", "offline",
        "offline | openai:MODEL | anthropic:MODEL | command:CMD | replay:FILE | manual:DIR",
        false => |r: &Raw| Ok::<_, Error>(r.last().to_string());
    jobs: usize = DEFAULT_JOBS;
        "sage.jobs", "8", "judge calls at once", false => number(1, 1024);
    rpm: Option<u32> = None;
        "sage.rpm", "no cap", "judge requests per minute", false => some(number(1, 1_000_000));
    /// `sage.maxCost`: USD one run's judge calls may spend.
    max_cost: Option<f64> = None;
        "sage.maxCost", "no limit", "USD the judge calls of one run may spend (docs/judge.md#cost)",
        false => some(number(0.0, 1e9));
    task: Option<String> = None;
        "sage.task", "the user message that opened the task", "the task text given to the judge",
        false => text;
    /// The language of the judge's prompts (`sage.judgeLang`); `None`: the log's, detected.
    judge_lang: Option<Lang> = None;
        "sage.judgeLang", "the log's language, detected",
        "en | ru | zh: the language of the judge's prompts", false => judge_lang;
    /// A folder overriding the embedded templates, relative to the working tree's top.
    templates: Option<PathBuf> = None;
        "sage.templates", "embedded",
        "directory overriding templates/judge, lexicons, recommendations", false => templates;
    /// The judge answer cache: `sage.cacheDir`, else the environment's cache folder
    /// (`None`: no cache).
    cache_dir: Option<PathBuf> = None;
        "sage.cacheDir", "$XDG_CACHE_HOME/git-sage", "judge answer cache",
        false => |r: &Raw| Ok::<_, Error>(Some(PathBuf::from(r.last())));
    allow_partial: bool = false;
        "sage.allowPartial", "false",
        "turns the judge could not score are a warning, not exit 3", false => boolean;
    /// `sage.scoreAll`: ask a model judge about every turn, not only those that can change
    /// the result.
    score_all: bool = false;
        "sage.scoreAll", "false",
        "ask a model judge about every turn, also those whose scores cannot change the result",
        false => boolean;
    vr_max: u8 = 1;
        "sage.vrMax", "1", "missed opportunity when VR is at most this", false => number(0, 3);
    sa_max: u8 = 1;
        "sage.saMax", "1", "missed opportunity when SA is at most this", false => number(0, 3);
    /// Every value of the multi-valued key, in git's order.
    findings: Vec<String> = vec![DEFAULT_FINDINGS.into()];
        "sage.findings", DEFAULT_FINDINGS, "findings the hooks analyse (multi-valued)",
        true => |r: &Raw| Ok::<_, Error>(r.all.clone());
    scanner: Option<Scanner> = None;
        "sage.scanner", "none",
        "bandit | semgrep | screen: the hooks' anchor when there are no findings", false => scanner;
    block: bool = false;
        "sage.block", "false",
        "hooks refuse a merge/push while a confirmed finding is present", false => boolean;
    strict: bool = false;
        "sage.strict", "false", "an internal error in a hook stops git", false => boolean;
    /// `sage.lang`: the language of what people read.
    lang: Option<Lang> = None;
        "sage.lang", "the locale",
        "en | ru | zh: the language of reports, recommendations and hook messages",
        false => lang;
    guard: GuardMode = GuardMode::Auto;
        "sage.guard", "auto",
        "auto | always | off: when the agent-side guard asks for the security plan",
        false => guard;
    /// The judge the guard asks (`sage.guardJudge`), by default the offline one.
    guard_judge: Option<String> = None;
        "sage.guardJudge", "offline",
        "the judge the guard asks whether a turn holds the plan (answers cached)", false => text;
    guard_strict: bool = false;
        "sage.guardStrict", "false",
        "an internal error in the guard denies the agent's write", false => boolean;
    notes: bool = true;
        "sage.notes", "true", "hooks write origin notes", false => boolean;
    /// `sage.agentTrace`: off (`None`), the default file (`Some(None)`), or a file relative to
    /// the working tree's top.
    agent_trace: Option<Option<PathBuf>> = None;
        "sage.agentTrace", "false",
        "blame-origin writes Agent Trace records: true (.agent-trace/git-sage.jsonl) or a file",
        false => agent_trace;
    /// `sage.allWrites`: JSON documents list every write of the range in `writes[]`.
    all_writes: bool = false;
        "sage.allWrites", "false",
        "JSON writes[] lists every write of the range, not only those that touched the anchored file",
        false => boolean;
    record_max_mb: u64 = DEFAULT_RECORD_MAX_MB;
        "sage.recordMaxSize", "20", "largest session `git sage record` copies, in MB",
        false => number(1, 4096);
}

/// Every value of `key` in the section, in git's order.
fn values(section: &[(String, String)], key: &str) -> Vec<String> {
    let key = key.to_ascii_lowercase();
    section
        .iter()
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
        .collect()
}

impl Settings {
    /// Reads every key once; outside a repository, the defaults. Where a default comes from
    /// the environment (the cache folder), `env` gives it.
    pub(crate) fn load(repo: Option<&Repo>, env: &Env) -> Result<Settings> {
        let mut s = Settings::default();
        if let Some(repo) = repo {
            // One read of the config files for every key; git's last value wins.
            let section = repo.config_section("sage")?;
            s.read(&section, repo.workdir().as_deref())?;
        }
        if s.cache_dir.is_none() {
            s.cache_dir = env.cache_home.clone();
        }
        Ok(s)
    }

    /// Whether a hook's internal error should stop git. Read on its own and leniently: it is
    /// asked when loading the other settings may just have failed.
    pub(crate) fn strict_of(repo: Option<&Repo>) -> bool {
        repo.and_then(|r| r.config_string("sage.strict").ok().flatten())
            .and_then(|v| parse_bool(&v))
            .unwrap_or(false)
    }
}

/// A templates folder (`--templates DIR`, `sage.templates`; `named` says which, as written):
/// one that is missing or is a file would leave the embedded templates in force without a
/// word, so it is bad input.
pub(crate) fn check_templates(dir: &Path, named: &str) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let what = match dir.exists() {
        true => "is not a folder",
        false => "there is no such folder",
    };
    Err(Error::input(format!("{named}: {what}")).hint(
        "name a folder whose files override the embedded templates (docs/judge.md#templates)",
    ))
}

/// git's booleans, as git reads them (true/yes/on, false/no/off in any case, and integers).
pub(crate) fn parse_bool(v: &str) -> Option<bool> {
    crate::git::parse_bool(v.trim())
}

fn text(r: &Raw) -> Result<Option<String>> {
    Ok(Some(r.last().to_string()))
}

fn boolean(r: &Raw) -> Result<bool> {
    let v = r.last();
    parse_bool(v).ok_or_else(|| {
        Error::input(format!("git config {}: {v:?} is not a boolean", r.key))
            .hint(format!("git config {} true (or false)", r.key))
    })
}

/// A number from `min` to `max`.
fn number<T>(min: T, max: T) -> impl Fn(&Raw) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    move |r| {
        let (v, key) = (r.last(), r.key);
        match v.trim().parse::<T>() {
            Ok(n) if n >= min && n <= max => Ok(n),
            _ => Err(Error::input(format!(
                "git config {key}: {v:?} is not a number from {min} to {max}"
            ))
            .hint(format!(
                "git config {key} <number>, or --unset it for the default"
            ))),
        }
    }
}

/// A parser whose value is optional in the struct.
fn some<T>(parse: impl Fn(&Raw) -> Result<T>) -> impl Fn(&Raw) -> Result<Option<T>> {
    move |r| parse(r).map(Some)
}

fn templates(r: &Raw) -> Result<Option<PathBuf>> {
    let v = r.last().trim();
    // Relative to the working tree's top, as the hooks see it, wherever a command runs.
    let dir = match r.top {
        Some(top) => top.join(v),
        None => PathBuf::from(v),
    };
    check_templates(&dir, &format!("git config sage.templates = {v}"))?;
    Ok(Some(dir))
}

fn judge_lang(r: &Raw) -> Result<Option<Lang>> {
    let v = r.last();
    // "auto", as the default is, means the log's language.
    if v.trim().eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    Lang::parse(v).map(Some).ok_or_else(|| {
        Error::input(format!(
            "git config sage.judgeLang: {v:?} is not a language the judge's prompts are written in"
        ))
        .hint("use en, ru, zh or auto")
    })
}

fn lang(r: &Raw) -> Result<Option<Lang>> {
    let v = r.last();
    Lang::parse(v)
        .map(Some)
        .ok_or_else(|| Error::input(format!("git config sage.lang: {v:?} is not en, ru or zh")))
}

fn scanner(r: &Raw) -> Result<Option<Scanner>> {
    let v = r.last();
    // "none", as `git sage config` shows the default, means none.
    if v.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    Scanner::parse(v).map(Some).ok_or_else(|| {
        Error::input(format!(
            "git config sage.scanner: {v:?} is not a scanner git sage runs"
        ))
        .hint("use bandit, semgrep, screen or none")
    })
}

fn guard(r: &Raw) -> Result<GuardMode> {
    let v = r.last().trim().to_ascii_lowercase();
    <GuardMode as clap::ValueEnum>::from_str(&v, true).map_err(|_| {
        Error::input(format!(
            "git config sage.guard: {v:?} is not auto, always or off"
        ))
    })
}

fn agent_trace(r: &Raw) -> Result<Option<Option<PathBuf>>> {
    let v = r.last();
    Ok(match parse_bool(v) {
        Some(true) => Some(None),
        Some(false) => None,
        None => Some(Some(PathBuf::from(v.trim()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(key: &'static str, v: &str) -> Raw<'static> {
        Raw {
            key,
            all: vec![v.to_string()],
            top: None,
        }
    }

    #[test]
    fn values() {
        assert_eq!(parse_bool("Yes"), Some(true));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
        let jobs = number::<usize>(1, 1024);
        assert_eq!(jobs(&raw("sage.jobs", "4")).unwrap(), 4);
        let e = jobs(&raw("sage.jobs", "many")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("git config sage.jobs"), "{e}");
        assert!(jobs(&raw("sage.jobs", "0")).is_err());
        assert!(boolean(&raw("sage.block", "sometimes")).is_err());
        assert_eq!(
            guard(&raw("sage.guard", " Always")).unwrap(),
            GuardMode::Always
        );
        assert!(guard(&raw("sage.guard", "never")).is_err());
        assert_eq!(lang(&raw("sage.lang", "ru")).unwrap(), Some(Lang::Ru));
        assert_eq!(judge_lang(&raw("sage.judgeLang", "AUTO")).unwrap(), None);
        assert_eq!(scanner(&raw("sage.scanner", "none")).unwrap(), None);
        assert_eq!(
            agent_trace(&raw("sage.agentTrace", "yes")).unwrap(),
            Some(None)
        );
        // A blank single value is unset; any value of a multi-valued key is set.
        assert!(!raw("sage.base", "  ").set(false));
        assert!(raw("sage.findings", "").set(true));
    }

    /// The table's rows are read from git config: a row's value replaces its default, the
    /// last of several wins, every value of the multi-valued key is kept.
    #[test]
    fn rows_read_their_keys() {
        let section: Vec<(String, String)> = [
            ("sage.jobs", "2"),
            ("sage.jobs", "3"),
            ("sage.guard", "off"),
            ("sage.findings", "a.sarif"),
            ("sage.findings", "b.sarif"),
            ("sage.notes", "false"),
            ("sage.base", ""),
        ]
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
        let mut s = Settings::default();
        s.read(&section, None).unwrap();
        assert_eq!(s.jobs, 3);
        assert_eq!(s.guard, GuardMode::Off);
        assert_eq!(s.findings, ["a.sarif", "b.sarif"]);
        assert!(!s.notes);
        assert_eq!(s.base, None);
        let bad = vec![("sage.vrMax".to_ascii_lowercase(), "7".to_string())];
        let e = Settings::default().read(&bad, None).unwrap_err();
        assert!(e.to_string().contains("git config sage.vrMax"), "{e}");
    }

    /// Every `sage.<key>` named anywhere in src/ (read, checked, or told in a message or
    /// help) is one `git sage config` lists: a key read on its own elsewhere fails here.
    #[test]
    fn every_key_named_in_the_source_is_listed() {
        let re = regex::Regex::new(r"(^|[^A-Za-z0-9_\-./])(sage\.[a-z][A-Za-z]+)([^A-Za-z/\-]|$)")
            .unwrap();
        // Names that are files or schema prefixes, not settings.
        let not_keys = ["sage.sarif", "sage.session"];
        let listed: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        let mut unlisted = Vec::new();
        let mut seen = 0;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                for c in re.captures_iter(&text) {
                    let key = c.get(2).unwrap().as_str();
                    seen += 1;
                    if !listed.contains(&key) && !not_keys.contains(&key) {
                        unlisted.push(format!("{}: {key}", p.display()));
                    }
                }
            }
        }
        assert!(seen > 50, "{seen}");
        assert!(unlisted.is_empty(), "named but not in KEYS: {unlisted:?}");
    }

    #[test]
    fn every_key_is_listed_once() {
        let mut keys: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), KEYS.len());
    }
}
