//! The hooks' check: analyse a branch (merged or pushed) against the confirmed findings in
//! `sage.findings` (default `.sage/findings/*.{sarif,json,yaml,yml}`) or a `sage.scanner` run,
//! print a short summary, write notes, and refuse only with `sage.block=true`.

use super::Context;
use crate::anchor::Anchor;
use crate::error::Result;
use crate::git::Repo;
use crate::history::ProvenanceStatus;
use crate::judge::backends::Spec;
use crate::judge::cache::Cache;
use crate::judge::run::Options;
use crate::pipeline::{self, BlameRequest};
use crate::settings::Settings;

/// The hooks' judge: the settings, no flags, no progress bar.
fn hook_options(settings: &Settings) -> Result<Options> {
    Ok(Options {
        judges: vec![Spec::parse_setting(&settings.judge)?],
        jobs: settings.jobs,
        rpm: settings.rpm,
        task: settings.task.clone(),
        templates_dir: settings.templates.clone(),
        judge_lang: settings.judge_lang,
        cache: Cache::new(settings.cache_dir.clone()),
        progress: false,
        ..Options::default()
    })
}

/// Analyses `base..tip` for the hook `hook` (`what` it checks: a merge, a push); returns the
/// exit code for the hook (1 only when blocking).
pub(crate) fn check(
    ctx: &Context,
    repo: &Repo,
    range: (&str, &str),
    what: &str,
    hook: &str,
) -> Result<i32> {
    let (base, tip) = range;
    let settings = ctx.settings()?;
    let mut anchors = kept_findings(repo, settings);
    let range = crate::history::range::resolve(repo, Some(tip), Some(base), None)?;
    if anchors.is_empty() {
        match scanner_finding(ctx, repo, &range, settings, hook)? {
            Some(a) => anchors.push((a, true)),
            None => return Ok(0),
        }
    }
    let agents = crate::history::range::AgentMatcher::from_settings(
        None,
        settings.agent_pattern.as_deref(),
    )?;
    let levers = super::util::levers(
        settings,
        &super::args::LeverArgs {
            vr_max: None,
            sa_max: None,
            two_types: false,
        },
    )?;
    let write_notes = settings.notes;
    let mut present = 0;
    let mut candidates = 0;
    let mut scoring: Option<crate::error::Error> = None;
    crate::say!(
        "{}",
        ctx.tr.tf(
            "hook.head",
            &[
                ("what", &what),
                ("tip", &&tip[..7.min(tip.len())]),
                ("n", &range.commits.len()),
                ("findings", &anchors.len()),
            ],
        )
    );
    for (anchor, unconfirmed) in &anchors {
        let req = BlameRequest {
            anchor,
            session: None,
            judge: hook_options(settings)?,
            levers,
            judge_sees_anchor: false,
            unconfirmed: *unconfirmed,
            templates_dir: None,
            all_writes: settings.all_writes,
            confirm_with: None,
            cwe_given: false,
            lang: ctx.tr.lang(),
        };
        let (doc, _) = match pipeline::blame(repo, &range, &agents, req) {
            Ok(x) => x,
            Err(e) if e.exit_code() == 2 => {
                crate::say!("  {}: skipped ({e})", anchor.id);
                continue;
            }
            Err(e) => return Err(e),
        };
        // Only what a person confirmed blocks: a scanner's claim is reported, never enforced.
        if doc.provenance.status != ProvenanceStatus::NoCodeLocation {
            match unconfirmed {
                false => present += 1,
                true => candidates += 1,
            }
        }
        // Turns nobody judged: no origin is claimed and no note is shared; the hook runner
        // decides (a warning, or a stop under sage.strict).
        if let Err(e) = super::util::check_scoring(&doc.failed_turns, settings.allow_partial) {
            crate::say!(
                "  {}: {}, origin not judged ({})",
                anchor.id,
                doc.provenance.status.as_str().replace('_', " "),
                e.message()
            );
            scoring.get_or_insert(e);
            continue;
        }
        let origin = match (doc.origin.turn, doc.origin.kind) {
            (Some(t), Some(k)) => ctx.tr.tf(
                "hook.origin",
                &[("turn", &t), ("type", &k.words_shown(&ctx.tr))],
            ),
            _ => ctx.tr.t("hook.undetermined"),
        };
        let missed = if doc.missed_opportunities.is_empty() {
            String::new()
        } else {
            let n = doc.missed_opportunities.len();
            let key = if n == 1 {
                "hook.missed_one"
            } else {
                "hook.missed_many"
            };
            ctx.tr.tf(key, &[("n", &n)])
        };
        crate::say!(
            "  {}: {}, {origin}{missed}",
            anchor.id,
            doc.provenance.status.as_str().replace('_', " ")
        );
        if write_notes {
            crate::notes::write(repo, &doc)?;
        }
    }
    if write_notes {
        crate::say!(
            "{}",
            ctx.tr.tf(
                "hook.notes",
                &[
                    ("tip", &&tip[..7.min(tip.len())]),
                    ("base", &&base[..7.min(base.len())]),
                ],
            )
        );
    }
    if settings.block && candidates > 0 && present == 0 {
        crate::say!("{}", ctx.tr.tf("hook.not_blocking", &[("n", &candidates)]));
    }
    if settings.block && present > 0 {
        crate::say!(
            "{}",
            ctx.tr
                .tf("hook.refused", &[("what", &what), ("n", &present)])
        );
        return Ok(1);
    }
    match scoring {
        Some(e) => Err(e),
        None => Ok(0),
    }
}

/// The findings the repository keeps (`sage.findings`), each with whether it is unconfirmed;
/// a file that cannot be read is skipped with a warning.
fn kept_findings(repo: &Repo, settings: &crate::settings::Settings) -> Vec<(Anchor, bool)> {
    let root = repo.workdir().unwrap_or_else(|| repo.git_dir());
    let mut anchors = Vec::new();
    for pat in &settings.findings {
        for file in crate::finding::discover::glob(&root, pat) {
            match crate::finding::load_all(&file) {
                Ok(all) => anchors.extend(all.into_iter().map(|mut a| {
                    crate::finding::confirm_kept(&mut a);
                    let u = a.unconfirmed;
                    (a, u)
                })),
                Err(e) => crate::say!("git-sage: warning: skipping {}: {e}", file.display()),
            }
        }
    }
    anchors
}

/// Without kept findings, the strongest candidate of `sage.scanner` (unconfirmed), or `None`
/// after saying there is nothing to check: a user must be able to tell that the hooks ran.
fn scanner_finding(
    ctx: &Context,
    repo: &Repo,
    range: &crate::history::range::Range,
    settings: &crate::settings::Settings,
    hook: &str,
) -> Result<Option<Anchor>> {
    let Some(scanner) = settings.scanner else {
        crate::say!("{}", ctx.tr.tf("hook.nothing", &[("hook", &hook)]));
        return Ok(None);
    };
    use crate::screen::anchorless::{Scan, scan};
    match scan(repo, range, scanner, settings.templates.clone(), None)? {
        Scan::Found(a) => Ok(Some(*a)),
        Scan::Nothing(_) => {
            crate::say!(
                "{}",
                ctx.tr.tf(
                    "hook.scanner_nothing",
                    &[("scanner", &scanner.name()), ("hook", &hook)]
                )
            );
            Ok(None)
        }
    }
}
