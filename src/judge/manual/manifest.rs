//! `DIR/manifest.json` (`sage.manual-judge/1`, docs/json.md#sagemanual-judge1): what the
//! prompts of a manual judge's directory were made from, so that answers are read only
//! against the very prompts they were given for.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Session;
use crate::error::{Error, Result};
use crate::judge::jobs::Job;

pub(crate) const MANIFEST_SCHEMA: &str = "sage.manual-judge/1";

/// The manifest's file name in the directory.
pub(crate) const MANIFEST: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub schema: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::tool::Tool>,
    pub session: SessionEntry,
    pub criterion: String,
    pub protocol: String,
    /// The judge templates' version (`Templates::version`).
    pub templates: String,
    pub prompts: Vec<PromptEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct SessionEntry {
    /// The session as the command that exported it named it (for people; not compared).
    pub source: String,
    /// A hash of the redacted task and turns the prompts show.
    pub digest: String,
    /// The turns in scope, `N-M`.
    pub turns: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct PromptEntry {
    /// `None`: the one prompt of the single protocol.
    pub turn: Option<u32>,
    pub prompt: String,
    pub answer: String,
    /// SHA-256 of the whole prompt, system and user part as an API judge is sent them.
    pub sha256: String,
}

impl Manifest {
    pub(super) fn new(session: &Session, jobs: &[Job]) -> Manifest {
        Manifest {
            schema: MANIFEST_SCHEMA.into(),
            tool: Some(crate::tool::Tool::current()),
            session: SessionEntry {
                source: session.source.to_string(),
                digest: session.digest.clone(),
                turns: session.turns.clone(),
            },
            criterion: session.criterion.to_string(),
            protocol: session.protocol.to_string(),
            templates: session.templates.to_string(),
            prompts: jobs
                .iter()
                .map(|j| PromptEntry {
                    turn: j.turn,
                    prompt: super::prompt_name(j.turn),
                    answer: super::answer_name(j.turn),
                    sha256: super::digest_of(&j.prompt),
                })
                .collect(),
        }
    }

    /// Refuses a directory whose prompts are not the ones this run would send, saying what
    /// differs; the hint is always the same way out.
    pub(super) fn check(&self, dir: &Path, session: &Session, jobs: &[Job]) -> Result<()> {
        let d = dir.display();
        let fresh = "export this session into another directory (git sage judge SESSION --export NEW_DIR), or run with what the prompts were exported with";
        let s = &self.session;
        if s.digest != session.digest {
            // Say what differs: naming the same session twice tells the user nothing.
            let why = match (s.source == session.source, s.turns == session.turns) {
                (false, _) => format!(
                    "for {} (turns {}), not {} (turns {})",
                    s.source, s.turns, session.source, session.turns
                ),
                (true, false) => format!(
                    "for turns {} of {}, not turns {}",
                    s.turns, s.source, session.turns
                ),
                (true, true) => format!(
                    "for another version of {}: its task or turns (turns {}) have changed since",
                    s.source, s.turns
                ),
            };
            return Err(Error::input(format!("{d}: its prompts are {why}")).hint(fresh));
        }
        let differs = |what: &str, was: &str, now: &str| {
            Error::input(format!(
                "{d}: its prompts were exported with {what} {was}, not {now}"
            ))
            .hint(fresh)
        };
        if self.criterion != session.criterion {
            return Err(differs("criterion", &self.criterion, session.criterion));
        }
        if self.protocol != session.protocol {
            return Err(differs("--protocol", &self.protocol, session.protocol));
        }
        if self.templates != session.templates {
            return Err(differs(
                "templates of version",
                &self.templates,
                session.templates,
            ));
        }
        let turns = |t: &[Option<u32>]| -> String {
            t.iter()
                .map(|t| t.map_or("all".to_string(), |n| n.to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let had: Vec<Option<u32>> = self.prompts.iter().map(|p| p.turn).collect();
        let want: Vec<Option<u32>> = jobs.iter().map(|j| j.turn).collect();
        if had != want {
            return Err(Error::input(format!(
                "{d}: its prompts are for turns {}, not {}",
                turns(&had),
                turns(&want)
            ))
            .hint(fresh));
        }
        for (p, j) in self.prompts.iter().zip(jobs) {
            if p.sha256 != super::digest_of(&j.prompt) {
                return Err(Error::input(format!(
                    "{d}: the prompt {} is not the one this run would send (--task, --context-tokens or --judge-sees-anchor differ from the export?)",
                    p.prompt
                ))
                .hint(fresh));
            }
        }
        Ok(())
    }

    pub(super) fn save(&self, dir: &Path) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::env(format!("cannot encode {MANIFEST}: {e}")))?;
        bytes.push(b'\n');
        super::write(&dir.join(MANIFEST), &bytes)
    }
}

/// The path of a directory's manifest.
pub(super) fn path(dir: &Path) -> PathBuf {
    dir.join(MANIFEST)
}

/// The manifest of a directory, `None` when it has none.
pub(super) fn load(dir: &Path) -> Result<Option<Manifest>> {
    let p = path(dir);
    let Some(text) = crate::files::read_text_if_exists(&p, "manifest", crate::files::DOC_CAP)?
    else {
        return Ok(None);
    };
    let shown = p.display();
    let not_ours = |message: String| {
        Error::input(message)
            .hint("this is not a manifest git sage wrote: export the prompts into a new directory")
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| not_ours(format!("{shown}:{}: not JSON: {e}", e.line())))?;
    if v.get("schema").and_then(serde_json::Value::as_str) != Some(MANIFEST_SCHEMA) {
        return Err(not_ours(format!("{shown}: not a {MANIFEST_SCHEMA} file")));
    }
    serde_json::from_value(v)
        .map(Some)
        .map_err(|e| not_ours(format!("{shown}: {e}")))
}
