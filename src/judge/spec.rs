//! Which judge, as `--judge` or `sage.judge` names it.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// Which judge, as `--judge` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Spec {
    Offline,
    OpenAi {
        model: String,
    },
    Anthropic {
        model: String,
    },
    Command {
        cmd: String,
    },
    Replay {
        file: PathBuf,
    },
    /// Prompts exported to a directory for a person to paste into a chat; the answers read
    /// back from it (`judge::manual`).
    Manual {
        dir: PathBuf,
    },
}

impl Spec {
    /// A judge named on the command line (`--judge`).
    pub(crate) fn parse(s: &str) -> Result<Spec> {
        Spec::parse_shown(s, &format!("--judge {s}"))
    }

    /// A judge named by `git config sage.judge`: errors name the setting, not a flag the user
    /// never typed.
    pub(crate) fn parse_setting(s: &str) -> Result<Spec> {
        Spec::parse_shown(s, &format!("git config sage.judge = {s}"))
    }

    fn parse_shown(s: &str, shown: &str) -> Result<Spec> {
        let bad = || {
            Error::input(format!("{shown}: unknown judge"))
                .hint("use offline, openai:MODEL, anthropic:MODEL, command:CMD, replay:FILE or manual:DIR")
        };
        if s == "offline" {
            return Ok(Spec::Offline);
        }
        let (kind, rest) = s.split_once(':').ok_or_else(bad)?;
        if rest.trim().is_empty() {
            return Err(bad());
        }
        Ok(match kind {
            "openai" => Spec::OpenAi {
                model: rest.to_string(),
            },
            "anthropic" => Spec::Anthropic {
                model: rest.to_string(),
            },
            "command" => Spec::Command {
                cmd: rest.to_string(),
            },
            "replay" => Spec::Replay {
                file: PathBuf::from(rest),
            },
            "manual" => Spec::Manual {
                dir: PathBuf::from(rest),
            },
            _ => return Err(bad()),
        })
    }

    pub(crate) fn name(&self) -> String {
        match self {
            Spec::Offline => "offline".into(),
            Spec::OpenAi { model } => format!("openai:{model}"),
            Spec::Anthropic { model } => format!("anthropic:{model}"),
            Spec::Command { cmd } => format!("command:{cmd}"),
            Spec::Replay { file } => format!("replay:{}", file.display()),
            Spec::Manual { dir } => format!("manual:{}", dir.display()),
        }
    }

    /// The model the judge runs, for the same-family warning.
    pub(crate) fn model(&self) -> Option<&str> {
        match self {
            Spec::OpenAi { model } | Spec::Anthropic { model } => Some(model),
            Spec::Command { cmd } => Some(cmd),
            _ => None,
        }
    }
}
