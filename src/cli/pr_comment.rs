//! `git sage pr-comment`: a Markdown report as one pull-request comment per category, created
//! once and updated by every later run; the job summary when no comment can be written.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::Context;
use crate::error::{Error, Result};
use crate::forge::{Forge, Outcome};

/// Post a Markdown report as the pull request's one git sage comment (GitHub Actions)
#[derive(Debug, Args)]
#[command(after_help = "\
In a GitHub Actions job on a pull request:
  git sage blame-origin --all --finding scanner.sarif --out sage.sarif --out origin.md
  git sage pr-comment --body-file origin.md

Reads GITHUB_TOKEN (or GH_TOKEN), GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_EVENT_PATH (the
pull request's number) and GITHUB_STEP_SUMMARY, as GitHub Actions sets them. Without a token
that may comment (a pull request from a fork), or when GitHub refuses or does not answer, the
report goes to the job summary instead and the command exits 0 (3 with --strict). A comment
is created only when the pull request has none of this category: never two. See docs/ci.md.")]
pub(crate) struct PrCommentArgs {
    /// The Markdown report to post (`blame-origin --out origin.md`)
    #[arg(long, value_name = "FILE")]
    pub body_file: PathBuf,

    /// Which of git sage's comments this is: one comment per category and pull request
    #[arg(long, value_name = "NAME", default_value = "git-sage")]
    pub category: String,

    /// The pull request's number [default: from $GITHUB_EVENT_PATH]
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,

    /// The repository, owner/name [default: $GITHUB_REPOSITORY]
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,

    /// Exit 3 when the comment cannot be written (by default: a warning, the report in the
    /// job summary, exit 0)
    #[arg(long)]
    pub strict: bool,

    /// Seconds to wait for each request to GitHub
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
}

pub(crate) fn run(_ctx: &Context, args: &PrCommentArgs) -> Result<i32> {
    if !(args.timeout > 0.0 && args.timeout <= 600.0) {
        return Err(Error::input(format!(
            "--timeout {}: expected seconds, more than 0 and at most 600",
            args.timeout
        )));
    }
    let report =
        crate::files::read_text_if_exists(&args.body_file, "report", crate::files::DOC_CAP)?
            .ok_or_else(|| {
                Error::input(format!(
                    "cannot read {}: no such file",
                    args.body_file.display()
                ))
                .hint("write the report first: git sage blame-origin … --out origin.md")
            })?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let summary = env("GITHUB_STEP_SUMMARY").map(PathBuf::from);
    let marker = crate::forge::marker(&args.category);
    let body = crate::forge::body(&marker, &report);
    let cut = body != format!("{marker}\n{report}");

    let repo = args.repo.clone().or_else(|| env("GITHUB_REPOSITORY"));
    if let Some(r) = &repo
        && !r
            .split_once('/')
            .is_some_and(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
    {
        return Err(Error::input(format!("--repo {r}: expected owner/name")));
    }
    let pr = match args.pr {
        Some(n) => Some(n),
        None => pr_of_event(env("GITHUB_EVENT_PATH").map(PathBuf::from))?,
    };
    let token = env("GITHUB_TOKEN").or_else(|| env("GH_TOKEN"));
    let outcome = match (repo, pr, token) {
        (None, _, _) => Err("no repository: set GITHUB_REPOSITORY or give --repo".to_string()),
        (_, None, _) => {
            Err("not a pull request: no --pr and no pull request in $GITHUB_EVENT_PATH".to_string())
        }
        (_, _, None) => Err(
            "no GITHUB_TOKEN: a pull request from a fork gets no token that may comment"
                .to_string(),
        ),
        (Some(repo), Some(pr), Some(token)) => {
            let forge = Forge {
                api: env("GITHUB_API_URL")
                    .unwrap_or_else(|| "https://api.github.com".into())
                    .trim_end_matches('/')
                    .to_string(),
                repo,
                token,
                timeout: Duration::from_secs_f64(args.timeout),
                tries: 3,
                backoff: Duration::from_millis(500),
            };
            forge.upsert(pr, &marker, &body).map_err(|r| r.0)
        }
    };
    match outcome {
        Ok(o) => {
            let (what, url) = match &o {
                Outcome::Created { url } => ("created", url),
                Outcome::Updated { url } => ("updated", url),
            };
            crate::say!("git-sage: pull-request comment {what}: {url}");
            if cut && let Some(s) = &summary {
                crate::forge::append_summary(s, &report)?;
            }
            Ok(0)
        }
        Err(why) => {
            let place = match &summary {
                Some(s) => {
                    crate::forge::append_summary(s, &report)?;
                    "the report is in the job summary"
                }
                None => "no job summary either (GITHUB_STEP_SUMMARY is not set)",
            };
            let line = format!("no pull-request comment: {why}; {place}");
            // GitHub Actions shows this as an annotation on the run.
            if env("GITHUB_ACTIONS").as_deref() == Some("true") {
                println!("::warning title=git-sage::{}", line.replace('\n', " "));
            }
            match args.strict {
                true => {
                    crate::term::error_line(&format!("git-sage: error: {line}"));
                    Ok(3)
                }
                false => {
                    crate::say!("git-sage: warning: {line}");
                    Ok(0)
                }
            }
        }
    }
}

/// The pull request's number in the event GitHub Actions wrote (`pull_request`,
/// `pull_request_target`, or a comment on a pull request).
fn pr_of_event(path: Option<PathBuf>) -> Result<Option<u64>> {
    let Some(path) = path else { return Ok(None) };
    let Some(text) = crate::files::read_text_if_exists(&path, "event", crate::files::DOC_CAP)?
    else {
        return Ok(None);
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::input(format!("{}: not JSON: {e}", path.display())))?;
    Ok(v["pull_request"]["number"].as_u64().or_else(|| {
        v["issue"]["pull_request"]
            .is_object()
            .then(|| v["issue"]["number"].as_u64())
            .flatten()
    }))
}
