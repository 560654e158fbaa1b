//! What several subcommands share, so that no subcommand calls another: report formats and
//! their output, origin-rule levers and judge options from flags over settings, sessions named
//! on the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Context;
use super::args::{FindingArgs, JudgeArgs, LeverArgs};
use super::output::Format;
use crate::error::{Error, Result};
use crate::finding::Request;
use crate::i18n::Tr;
use crate::judge::backends::Spec;
use crate::judge::cache::Cache;
use crate::judge::endpoint::check_credentials;
use crate::judge::run::Options;
use crate::judge::scores::FailedTurn;
use crate::origin::Levers;
use crate::report::doc::ReportDoc;
use crate::settings::Settings;
use crate::term::Styled;
use crate::transcript::lines::Input;

/// Renders a report in a format (JSON is streamed by `output::emit` instead); text keeps its
/// marks for a terminal's colours.
pub(crate) fn render(doc: &ReportDoc, format: Format, tr: &Tr) -> Result<Styled> {
    Ok(match format {
        Format::Text => return Ok(crate::report::text::report(tr, doc)),
        Format::Md => crate::report::markdown::report(tr, doc),
        Format::Html => crate::report::html::report(tr, doc),
        Format::Json => crate::report::jsonfmt::to_string(doc)
            .map_err(|e| Error::env(format!("cannot encode JSON: {e}")))?,
        Format::Sarif => {
            let mut s = serde_json::to_string_pretty(&crate::report::sarif::report(doc))
                .map_err(|e| Error::env(format!("cannot encode SARIF: {e}")))?;
            s.push('\n');
            s
        }
    }
    .into())
}

/// The templates folder of a command: `--templates DIR`, which must be a folder, else
/// `sage.templates` (checked when the settings were read).
pub(crate) fn templates_dir(flag: Option<&Path>, settings: &Settings) -> Result<Option<PathBuf>> {
    match flag {
        Some(dir) => {
            crate::settings::check_templates(dir, &format!("--templates {}", dir.display()))?;
            Ok(Some(dir.to_path_buf()))
        }
        None => Ok(settings.templates.clone()),
    }
}

/// Origin-rule levers: flags, then settings.
pub(crate) fn levers(settings: &Settings, a: &LeverArgs) -> Result<Levers> {
    let l = Levers {
        vr_max: a.vr_max.unwrap_or(settings.vr_max),
        sa_max: a.sa_max.unwrap_or(settings.sa_max),
        two_types: a.two_types,
    };
    if l.vr_max > 3 || l.sa_max > 3 {
        return Err(Error::input("--vr-max and --sa-max take 0 to 3"));
    }
    Ok(l)
}

/// Judge options: flags, then settings, then defaults.
pub(crate) fn judge_options(settings: &Settings, a: &JudgeArgs) -> Result<Options> {
    let judges = if a.judges.is_empty() {
        vec![Spec::parse_setting(&settings.judge)?]
    } else {
        a.judges
            .iter()
            .map(|j| Spec::parse(j))
            .collect::<Result<Vec<_>>>()?
    };
    if a.repeat == 0 {
        return Err(Error::input("--repeat must be at least 1"));
    }
    // A missing key stops the command here, before the history walk and any request; an
    // estimate makes no request, so it needs none.
    if !a.estimate {
        check_credentials(&judges)?;
    }
    let cache = if a.no_cache {
        Cache::disabled()
    } else {
        Cache::new(settings.cache_dir.clone())
    };
    Ok(Options {
        judges,
        protocol: a.protocol,
        repeat: a.repeat,
        jobs: a.jobs.unwrap_or(settings.jobs).max(1),
        rpm: a.rpm.or(settings.rpm),
        spend: match a.max_cost.or(settings.max_cost) {
            Some(usd) if !(usd >= 0.0 && usd.is_finite()) => {
                return Err(Error::input(format!(
                    "--max-cost {usd}: expected an amount in USD, 0 or more"
                )));
            }
            Some(usd) => Some(std::sync::Arc::new(crate::judge::cost::Spend::new(usd))),
            None => None,
        },
        context_tokens: a.context_tokens,
        quotes_required: !a.no_quotes,
        anchor_for_judge: None,
        criterion: a.criterion.clone(),
        task: a.task.clone().or_else(|| settings.task.clone()),
        cwe_hint: None,
        anchor_file: None,
        templates_dir: templates_dir(a.templates.as_deref(), settings)?,
        judge_lang: a.judge_lang.or(settings.judge_lang),
        cache,
        record: a.record.clone(),
        timeout: Duration::from_secs(a.judge_timeout.max(1)),
        tries: 5,
        answer_tries: 3,
        progress: !crate::term::quiet(),
        defer: None,
        score_all: a.score_all || settings.score_all,
        features_out: None,
        offline_model: true,
        schedule: None,
    })
}

/// Under `--max-cost`, one line on stderr with what the run's judge calls spent.
pub(crate) fn say_spend(opts: &Options) {
    if let Some(s) = &opts.spend {
        crate::say!("git-sage: {}", s.said());
    }
}

/// Whether turns the judge could not score may pass: `--allow-partial`, then settings.
pub(crate) fn allow_partial(settings: &Settings, a: &JudgeArgs) -> bool {
    a.allow_partial || settings.allow_partial
}

/// Fails closed: turns the judge could not score end the command with exit 3 (called after
/// its output is written), unless they are allowed, when they are a warning.
pub(crate) fn check_scoring(failed: &[FailedTurn], allowed: bool) -> Result<()> {
    match crate::judge::failed::error(failed) {
        None => Ok(()),
        Some(e) if allowed => {
            crate::say!(
                "git-sage: warning: {} (--allow-partial: the exit is decided without them)",
                e.message()
            );
            Ok(())
        }
        Some(e) => Err(e),
    }
}

/// Opens a session argument: a file, a conversation folder, `REV:path` or `REV^{commit}`.
pub(crate) fn open_session(ctx: &Context, session: &str) -> Result<Input> {
    crate::transcript::discover::open(session, &|| ctx.repo())
}

/// The finding a command analyses: the flags' when they name one, else the only finding file
/// the repository keeps under `sage.findings` (as the hooks do). Several: the user picks one.
/// Whether `path` is one of the finding files the repository keeps (`sage.findings`): a
/// person put it there, so its scanner results are confirmed.
pub(crate) fn is_kept(ctx: &Context, settings: &Settings, path: &Path) -> bool {
    let Ok(repo) = ctx.repo() else {
        return false;
    };
    let root = repo.workdir().unwrap_or_else(|| ctx.cwd.clone());
    let Ok(me) = ctx.cwd.join(path).canonicalize() else {
        return false;
    };
    crate::finding::discover::all(&root, &settings.findings)
        .iter()
        .any(|f| f.canonicalize().is_ok_and(|f| f == me))
}

pub(crate) fn finding_request(
    ctx: &Context,
    settings: &Settings,
    args: &FindingArgs,
) -> Result<Request> {
    let mut req = args.request();
    if req.finding.is_some() || req.inline.is_some() {
        return Ok(req);
    }
    let root = ctx.repo()?.workdir().unwrap_or_else(|| ctx.cwd.clone());
    let files = crate::finding::discover::all(&root, &settings.findings);
    let shown = |p: &Path| {
        p.strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    match files.as_slice() {
        [] => Err(
            Error::input("no finding given, and none kept in the repository").hint(format!(
                "pass --finding FILE (SARIF, Bandit JSON, Semgrep JSON, anchor YAML), an inline \
                 anchor (--anchor-file PATH --anchor-snippet TEXT), or keep one at {}",
                settings.findings.join(", ")
            )),
        ),
        [one] => {
            crate::say!("git-sage: finding: {} (the only one kept)", shown(one));
            req.finding = Some(one.clone());
            Ok(req)
        }
        several => Err(Error::input(format!(
            "no finding given, and the repository keeps {}: {}",
            several.len(),
            several
                .iter()
                .map(|p| shown(p))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .hint("pick one with --finding FILE")),
    }
}
