//! Every `sage.*` setting in one place: its key, type, default and parse, loaded once from git
//! config. A value that does not parse is bad input naming the key, in every command and hook.

use std::path::{Path, PathBuf};

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

/// Every setting git sage reads, in the order `git sage config` prints them.
pub(crate) const KEYS: &[Key] = &[
    Key {
        key: "sage.base",
        default: "merge-base with origin/HEAD, main or master",
        what: "the branch the agent's work started from",
    },
    Key {
        key: "sage.agentPattern",
        default: "every commit",
        what: "regex over author, committer, Co-authored-by naming agent commits",
    },
    Key {
        key: "sage.judge",
        default: "offline",
        what: "offline | openai:MODEL | anthropic:MODEL | command:CMD | replay:FILE | manual:DIR",
    },
    Key {
        key: "sage.jobs",
        default: "8",
        what: "judge calls at once",
    },
    Key {
        key: "sage.rpm",
        default: "no cap",
        what: "judge requests per minute",
    },
    Key {
        key: "sage.maxCost",
        default: "no limit",
        what: "USD the judge calls of one run may spend (docs/judge.md#cost)",
    },
    Key {
        key: "sage.task",
        default: "the user message that opened the task",
        what: "the task text given to the judge",
    },
    Key {
        key: "sage.judgeLang",
        default: "the log's language, detected",
        what: "en | ru | zh: the language of the judge's prompts",
    },
    Key {
        key: "sage.templates",
        default: "embedded",
        what: "directory overriding templates/judge, lexicons, recommendations",
    },
    Key {
        key: "sage.cacheDir",
        default: "$XDG_CACHE_HOME/git-sage",
        what: "judge answer cache",
    },
    Key {
        key: "sage.allowPartial",
        default: "false",
        what: "turns the judge could not score are a warning, not exit 3",
    },
    Key {
        key: "sage.scoreAll",
        default: "false",
        what: "ask a model judge about every turn, also those whose scores cannot change the result",
    },
    Key {
        key: "sage.vrMax",
        default: "1",
        what: "missed opportunity when VR is at most this",
    },
    Key {
        key: "sage.saMax",
        default: "1",
        what: "missed opportunity when SA is at most this",
    },
    Key {
        key: "sage.findings",
        default: DEFAULT_FINDINGS,
        what: "findings the hooks analyse (multi-valued)",
    },
    Key {
        key: "sage.scanner",
        default: "none",
        what: "bandit | semgrep | screen: the hooks' anchor when there are no findings",
    },
    Key {
        key: "sage.block",
        default: "false",
        what: "hooks refuse a merge/push while a confirmed finding is present",
    },
    Key {
        key: "sage.strict",
        default: "false",
        what: "an internal error in a hook stops git",
    },
    Key {
        key: "sage.lang",
        default: "the locale",
        what: "en | ru | zh: the language of reports, recommendations and hook messages",
    },
    Key {
        key: "sage.guard",
        default: "auto",
        what: "auto | always | off: when the agent-side guard asks for the security plan",
    },
    Key {
        key: "sage.guardJudge",
        default: "offline",
        what: "the judge the guard asks whether a turn holds the plan (answers cached)",
    },
    Key {
        key: "sage.guardStrict",
        default: "false",
        what: "an internal error in the guard denies the agent's write",
    },
    Key {
        key: "sage.notes",
        default: "true",
        what: "hooks write origin notes",
    },
    Key {
        key: "sage.agentTrace",
        default: "false",
        what: "blame-origin writes Agent Trace records: true (.agent-trace/git-sage.jsonl) or a file",
    },
    Key {
        key: "sage.allWrites",
        default: "false",
        what: "JSON writes[] lists every write of the range, not only those that touched the anchored file",
    },
    Key {
        key: "sage.recordMaxSize",
        default: "20",
        what: "largest session `git sage record` copies, in MB",
    },
];

/// The effective `sage.*` settings: git config, else the defaults. Flags override them where
/// the commands take flags.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub base: Option<String>,
    pub agent_pattern: Option<String>,
    pub judge: String,
    pub jobs: usize,
    pub rpm: Option<u32>,
    /// `sage.maxCost`: USD one run's judge calls may spend.
    pub max_cost: Option<f64>,
    pub task: Option<String>,
    pub templates: Option<PathBuf>,
    /// The language of the judge's prompts (`sage.judgeLang`); `None`: the log's, detected.
    pub judge_lang: Option<Lang>,
    pub cache_dir: Option<String>,
    pub allow_partial: bool,
    /// `sage.scoreAll`: ask a model judge about every turn, not only those that can change
    /// the result.
    pub score_all: bool,
    pub vr_max: u8,
    pub sa_max: u8,
    pub findings: Vec<String>,
    pub scanner: Option<Scanner>,
    pub block: bool,
    pub strict: bool,
    pub notes: bool,
    /// `sage.agentTrace`: off (`None`), the default file (`Some(None)`), or a file relative to
    /// the working tree's top.
    pub agent_trace: Option<Option<PathBuf>>,
    pub record_max_mb: u64,
    /// `sage.allWrites`: JSON documents list every write of the range in `writes[]`.
    pub all_writes: bool,
    /// `auto`, `always` or `off`.
    pub guard: String,
    /// The judge the guard asks (`sage.guardJudge`), by default the offline one.
    pub guard_judge: Option<String>,
    pub guard_strict: bool,
    /// `sage.lang`: the language of what people read (checked when read).
    pub lang: Option<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            base: None,
            agent_pattern: None,
            judge: "offline".into(),
            jobs: DEFAULT_JOBS,
            rpm: None,
            max_cost: None,
            task: None,
            templates: None,
            judge_lang: None,
            cache_dir: None,
            allow_partial: false,
            score_all: false,
            vr_max: 1,
            sa_max: 1,
            findings: vec![DEFAULT_FINDINGS.into()],
            scanner: None,
            block: false,
            strict: false,
            notes: true,
            agent_trace: None,
            record_max_mb: DEFAULT_RECORD_MAX_MB,
            all_writes: false,
            guard: "auto".into(),
            guard_judge: None,
            guard_strict: false,
            lang: None,
        }
    }
}

impl Settings {
    /// Reads every key once; outside a repository, the defaults.
    pub(crate) fn load(repo: Option<&Repo>) -> Result<Settings> {
        let mut s = Settings::default();
        let Some(repo) = repo else {
            return Ok(s);
        };
        // One read of the config files for every key; git's last value wins.
        let all = repo.config_section("sage")?;
        let values = |key: &str| {
            let key = key.to_ascii_lowercase();
            all.iter()
                .filter(move |(k, _)| *k == key)
                .map(|(_, v)| v.clone())
        };
        let get = |key: &str| -> Result<Option<String>> {
            Ok(values(key).next_back().filter(|v| !v.trim().is_empty()))
        };
        s.base = get("sage.base")?;
        s.agent_pattern = get("sage.agentPattern")?;
        if let Some(v) = get("sage.judge")? {
            s.judge = v;
        }
        if let Some(v) = get("sage.jobs")? {
            s.jobs = number(&v, "sage.jobs", 1, 1024)?;
        }
        if let Some(v) = get("sage.maxCost")? {
            s.max_cost = Some(number(&v, "sage.maxCost", 0.0, 1e9)?);
        }
        if let Some(v) = get("sage.rpm")? {
            s.rpm = Some(number(&v, "sage.rpm", 1, 1_000_000)?);
        }
        s.task = get("sage.task")?;
        if let Some(v) = get("sage.templates")? {
            // Relative to the working tree's top, as the hooks see it, wherever a command runs.
            let dir = match repo.workdir() {
                Some(top) => top.join(v.trim()),
                None => PathBuf::from(v.trim()),
            };
            check_templates(&dir, &format!("git config sage.templates = {}", v.trim()))?;
            s.templates = Some(dir);
        }
        // "auto", as the default is, means the log's language.
        if let Some(v) = get("sage.judgeLang")?.filter(|v| !v.trim().eq_ignore_ascii_case("auto")) {
            s.judge_lang = Some(Lang::parse(&v).ok_or_else(|| {
                Error::input(format!(
                    "git config sage.judgeLang: {v:?} is not a language the judge's prompts are written in"
                ))
                .hint("use en, ru, zh or auto")
            })?);
        }
        s.cache_dir = get("sage.cacheDir")?;
        s.allow_partial = flag(get("sage.allowPartial")?, "sage.allowPartial", false)?;
        s.score_all = flag(get("sage.scoreAll")?, "sage.scoreAll", false)?;
        if let Some(v) = get("sage.vrMax")? {
            s.vr_max = number(&v, "sage.vrMax", 0, 3)?;
        }
        if let Some(v) = get("sage.saMax")? {
            s.sa_max = number(&v, "sage.saMax", 0, 3)?;
        }
        let findings: Vec<String> = values("sage.findings").collect();
        if !findings.is_empty() {
            s.findings = findings;
        }
        // "none", as `git sage config` shows the default, means none.
        if let Some(v) = get("sage.scanner")?.filter(|v| !v.trim().eq_ignore_ascii_case("none")) {
            s.scanner = Some(Scanner::parse(&v).ok_or_else(|| {
                Error::input(format!(
                    "git config sage.scanner: {v:?} is not a scanner git sage runs"
                ))
                .hint("use bandit, semgrep, screen or none")
            })?);
        }
        s.block = flag(get("sage.block")?, "sage.block", false)?;
        s.strict = flag(get("sage.strict")?, "sage.strict", false)?;
        s.notes = flag(get("sage.notes")?, "sage.notes", true)?;
        s.agent_trace = get("sage.agentTrace")?.and_then(|v| match parse_bool(&v) {
            Some(true) => Some(None),
            Some(false) => None,
            None => Some(Some(PathBuf::from(v.trim()))),
        });
        if let Some(v) = get("sage.guard")? {
            let v = v.trim().to_ascii_lowercase();
            if !["auto", "always", "off"].contains(&v.as_str()) {
                return Err(Error::input(format!(
                    "git config sage.guard: {v:?} is not auto, always or off"
                )));
            }
            s.guard = v;
        }
        s.guard_strict = flag(get("sage.guardStrict")?, "sage.guardStrict", false)?;
        s.guard_judge = get("sage.guardJudge")?;
        if let Some(v) = get("sage.lang")? {
            if crate::i18n::Lang::parse(&v).is_none() {
                return Err(Error::input(format!(
                    "git config sage.lang: {v:?} is not en, ru or zh"
                )));
            }
            s.lang = Some(v);
        }
        s.all_writes = flag(get("sage.allWrites")?, "sage.allWrites", false)?;
        if let Some(v) = get("sage.recordMaxSize")? {
            s.record_max_mb = number(&v, "sage.recordMaxSize", 1, 4096)?;
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

fn flag(v: Option<String>, key: &str, default: bool) -> Result<bool> {
    match v {
        None => Ok(default),
        Some(v) => parse_bool(&v).ok_or_else(|| {
            Error::input(format!("git config {key}: {v:?} is not a boolean"))
                .hint(format!("git config {key} true (or false)"))
        }),
    }
}

fn number<T>(v: &str, key: &str, min: T, max: T) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(parse_bool("Yes"), Some(true));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
        assert_eq!(number::<usize>("4", "sage.jobs", 1, 1024).unwrap(), 4);
        let e = number::<usize>("many", "sage.jobs", 1, 1024).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("git config sage.jobs"), "{e}");
        assert!(number::<usize>("0", "sage.jobs", 1, 1024).is_err());
        assert!(flag(Some("sometimes".into()), "sage.block", false).is_err());
        assert!(flag(None, "sage.notes", true).unwrap());
    }

    /// Every key `load` reads is one `git sage config` lists (and documents): read from this
    /// file's own text, so a key added to `load` alone fails here.
    #[test]
    fn every_key_read_is_listed() {
        let text = include_str!("settings.rs");
        let body = &text[text.find("pub(crate) fn load(").unwrap()..];
        let body = &body[..body.find("\n    }\n").unwrap()];
        let mut read: Vec<&str> = Vec::new();
        for call in ["get(\"", "values(\""] {
            for (i, _) in body.match_indices(call) {
                let rest = &body[i + call.len()..];
                let key = &rest[..rest.find('"').unwrap()];
                if key.starts_with("sage.") {
                    read.push(key);
                }
            }
        }
        read.sort();
        read.dedup();
        assert!(read.len() >= 20, "{read:?}");
        let listed: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        let missing: Vec<&&str> = read.iter().filter(|k| !listed.contains(k)).collect();
        assert!(missing.is_empty(), "read but not in KEYS: {missing:?}");
    }

    #[test]
    fn every_key_is_listed_once() {
        let mut keys: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), KEYS.len());
    }
}
