//! The agent-side guard (docs/guard.md): before a file-writing tool call, ask for the security
//! plan in a task that bears on security. `hook` reads and answers each agent's hook, `policy`
//! is the rule, `install` writes the agents' configuration.

pub(crate) mod hook;
pub(crate) mod install;
pub(crate) mod policy;
pub(crate) mod session;
pub(crate) mod splice;

use crate::i18n::Tr;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::settings::{GuardMode, Settings};
use hook::Call;
use policy::{Facts, Verdict};

/// One decision, as `.sage/guard.log` keeps it (a JSON line each).
#[derive(Debug, Serialize)]
pub(crate) struct LogLine<'a> {
    pub schema: &'static str,
    pub tool: crate::tool::Tool,
    pub time: String,
    pub agent: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<&'a str>,
    /// The agent's tool (`tool` names the program that wrote the line, as in every document).
    pub tool_name: &'a str,
    pub paths: &'a [String],
    pub decision: &'static str,
    pub why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<&'a Facts>,
    pub ms: u64,
}

pub(crate) const LOG_SCHEMA: &str = "sage.guard-log/1";

/// What the guard answers one call, with the facts behind it.
pub(crate) struct Outcome {
    pub deny: Option<String>,
    pub why: String,
    pub facts: Option<Facts>,
}

/// The reason a denied write gives the model: what the plan lacks, then the checkpoint text
/// of the task's CWE (the same as `git sage checkpoint`).
fn reason(tr: &Tr, facts: &Facts, missing: &[&str], templates: Option<&Path>) -> Result<String> {
    let mut out = tr.t("guard.head");
    if !missing.is_empty() {
        let words: Vec<String> = missing.iter().map(|k| tr.t(k)).collect();
        out.push_str(&tr.tf("guard.missing", &[("list", &words.join("; "))]));
    }
    out.push_str(&tr.t("guard.then"));
    out.push_str("\n\n");
    out.push_str(&crate::report::recommend::checkpoint(
        tr, facts.cwe, templates,
    )?);
    Ok(out)
}

/// The guard's decision for one call. `state` is where the records of sessions are kept
/// between checks (`.git/sage/guard/sessions`), `None` outside a repository.
pub(crate) fn decide(
    call: &Call,
    settings: &Settings,
    tr: &Tr,
    mode: GuardMode,
    finding: Option<Option<u32>>,
    state: Option<&Path>,
) -> Result<Outcome> {
    if !call.writes {
        return Ok(Outcome {
            deny: None,
            why: format!("{} writes no file", call.tool),
            facts: None,
        });
    }
    let judge = settings
        .guard_judge
        .as_deref()
        .map(crate::judge::backends::Spec::parse_setting)
        .transpose()?;
    if let Some(crate::judge::backends::Spec::Manual { .. }) = judge {
        return Err(Error::input(
            "git config sage.guardJudge: a manual judge cannot answer inside an agent's hook",
        )
        .hint("use offline or a model judge for the guard"));
    }
    // A model judge sees each turn's whole prefix: its session is read whole each time.
    let whole = judge.is_some();
    let judge_name = settings.guard_judge.as_deref().unwrap_or("offline");
    let stage = crate::timing::stage("guard: read the session");
    let window = match call.transcript.as_deref().map(Path::new) {
        Some(p) if p.is_file() => Some(session::read(state, p, judge_name, whole)?),
        _ => None,
    };
    drop(stage);
    let _stage = crate::timing::stage("guard: judge the new turns");
    let (facts, prior) = policy::gather(policy::Given {
        transcript: window.as_ref().map(|w| &w.transcript),
        base: window.as_ref().map_or(0, |w| w.cut.turns),
        prior: window.as_ref().map(|w| w.prior.clone()).unwrap_or_default(),
        task: settings.task.as_deref(),
        mode,
        finding,
        templates: settings.templates.as_deref(),
        judge,
        cache_dir: settings.cache_dir.as_deref(),
        judge_lang: settings.judge_lang,
    })?;
    if let Some(w) = &window {
        w.save(prior, judge_name, whole);
    }
    Ok(match policy::decide(&facts) {
        Verdict::Allow { why } => Outcome {
            deny: None,
            why,
            facts: Some(facts),
        },
        Verdict::Deny { missing } => Outcome {
            deny: Some(reason(tr, &facts, &missing, settings.templates.as_deref())?),
            why: format!("no security plan yet ({} turns judged)", facts.turns_judged),
            facts: Some(facts),
        },
    })
}

/// Appends the decision to `.sage/guard.log` under the repository root.
pub(crate) fn log(root: &Path, line: &LogLine) -> Result<()> {
    use std::io::Write;
    let dir = root.join(".sage");
    let path = dir.join("guard.log");
    crate::files::refuse_link_out(root, &path, "guard log")?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::env(format!("cannot create {}: {e}", dir.display())))?;
    // Redacted as values, before encoding: a secret in a path or a session id right after an
    // escape would pass a redaction of the encoded line.
    let value = serde_json::to_value(line).unwrap_or_default();
    let mut text = crate::redact::redact_value(&value).0.to_string();
    text.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::env(format!("cannot append to {}: {e}", path.display())))
}

/// Milliseconds since `t`.
pub(crate) fn ms(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

/// Now, in UTC, as RFC 3339 (`2026-12-02T01:40:00Z`).
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc(secs)
}

/// Seconds since 1970 as an RFC 3339 UTC time.
fn utc(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|ts| ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| format!("{secs} s"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_times() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::utc(1_796_175_600), "2026-12-02T01:40:00Z");
    }
}
