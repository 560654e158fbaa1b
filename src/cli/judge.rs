//! `git sage judge SESSION`: turn scores only (`sage.scores/1`), for `git sage origin`.

use std::time::Duration;

use clap::Args;

use super::Context;
use super::args::{DataFormat, JudgeArgs};
use crate::error::{Error, Result};
use crate::judge::backends::Spec;
use crate::judge::cache::{self, Cache};
use crate::judge::model::{Dim, ScoresDoc};
use crate::judge::run::{self, Options};
use crate::report::clip;
use crate::transcript::mapping::{self, Mapping};
use crate::transcript::{self, Format};

/// Score the turns of a session on TR/DI/VR/SA (SPEC §5)
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  git sage judge .sage/sessions/fix.jsonl --out scores.json\n  git sage judge HEAD:.aider.chat.history.md --judge openai:gpt-4.1 --jobs 4 --rpm 60\n  git sage judge s.jsonl --judge anthropic:claude-sonnet-4-5 --judge openai:gpt-4.1 --repeat 3"
)]
pub struct JudgeCmd {
    /// The transcript: a path, or REV:path in the repository
    #[arg(value_name = "SESSION")]
    pub session: String,

    /// Force the transcript format instead of detecting it
    #[arg(long = "from", value_enum, value_name = "FORMAT")]
    pub from: Option<Format>,

    /// Judge only these turns (N or N-M) [default: all]
    #[arg(long, value_name = "N-M")]
    pub turns: Option<String>,

    /// A CWE number whose phrase list the offline judge uses when the task names none
    #[arg(long, value_name = "N")]
    pub cwe: Option<u32>,

    #[command(flatten)]
    pub judge: JudgeArgs,

    /// Write the scores (JSON) to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,

    /// Output format on stdout
    #[arg(long, value_enum, default_value_t = DataFormat::Text)]
    pub format: DataFormat,
}

/// Judge options from flags, then `git config sage.*`, then defaults.
pub fn options(ctx: &Context, a: &JudgeArgs) -> Result<Options> {
    let repo = ctx.repo().ok();
    let cfg = |k: &str| {
        repo.as_ref()
            .and_then(|r| r.config_string(k).ok().flatten())
    };
    let judges: Vec<String> = if a.judges.is_empty() {
        vec![cfg("sage.judge").unwrap_or_else(|| "offline".into())]
    } else {
        a.judges.clone()
    };
    let judges = judges
        .iter()
        .map(|j| Spec::parse(j))
        .collect::<Result<Vec<_>>>()?;
    let parse_num = |k: &str| -> Result<Option<u64>> {
        match cfg(k) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| Error::input(format!("git config {k} = {v:?} is not a number"))),
        }
    };
    if a.repeat == 0 {
        return Err(Error::input("--repeat must be at least 1"));
    }
    let cache = if a.no_cache {
        Cache::disabled()
    } else {
        Cache::new(cache::default_dir(cfg("sage.cacheDir").as_deref()))
    };
    Ok(Options {
        judges,
        protocol: a.protocol,
        repeat: a.repeat,
        jobs: a
            .jobs
            .or(parse_num("sage.jobs")?.map(|n| n as usize))
            .unwrap_or(8)
            .max(1),
        rpm: a.rpm.or(parse_num("sage.rpm")?.map(|n| n as u32)),
        context_tokens: a.context_tokens,
        quotes_required: !a.no_quotes,
        anchor_for_judge: None,
        criterion: a.criterion.clone(),
        task: a.task.clone().or_else(|| cfg("sage.task")),
        cwe_hint: None,
        templates_dir: a
            .templates
            .clone()
            .or_else(|| cfg("sage.templates").map(Into::into)),
        cache,
        record: a.record.clone(),
        timeout: Duration::from_secs(a.judge_timeout.max(1)),
        tries: 5,
        answer_tries: 3,
        progress: !a.quiet,
        defer: None,
    })
}

pub fn run(ctx: &Context, args: &JudgeCmd) -> Result<i32> {
    let input = super::turns::open_session(ctx, &args.session)?;
    let t = transcript::parse(input, args.from)?;
    let mut scope = mapping::scope(&t, &Mapping::default(), None);
    if let Some(r) = &args.turns {
        let (a, b) = crate::finding::anchor_yaml::parse_lines(r)
            .ok_or_else(|| Error::input(format!("--turns {r}: expected N or N-M")))?;
        scope.first = a;
        scope.last = b.min(t.turns.len() as u32);
        scope.reason = format!("turns {a}-{} (--turns)", scope.last);
    }
    let mut opts = options(ctx, &args.judge)?;
    opts.cwe_hint = args.cwe;
    let outcome = run::judge(&t, &scope, &opts)?;
    for w in &outcome.doc.judge.warnings {
        crate::say!("git-sage: warning: {w}");
    }
    if let Some(out) = &args.out {
        let text = crate::report::jsonfmt::to_string(&outcome.doc)
            .map_err(|e| Error::env(format!("cannot encode JSON: {e}")))?;
        crate::files::write_output(out, text.as_bytes())
            .map_err(|e| Error::env(format!("cannot write {}: {e}", out.display())))?;
    }
    match args.format {
        DataFormat::Json if args.out.is_none() => ctx.print_json(&outcome.doc)?,
        DataFormat::Json => {}
        DataFormat::Text => ctx.print_text(&render(&outcome.doc))?,
    }
    if outcome.unreachable > 0 {
        return Err(Error::env(format!(
            "{} turn(s) could not be scored: the judge was unreachable after retries",
            outcome.unreachable
        ))
        .hint("run the same command again: finished calls are cached and are not repeated"));
    }
    Ok(0)
}

/// Turn scores as a table, with the strongest quote of each turn.
pub fn render(doc: &ScoresDoc) -> String {
    let j = &doc.judge;
    let mut out = format!(
        "judge {} ({}) · {} turns · {} calls, {} cached · {} input / {} output tokens{}\n",
        j.name,
        j.protocol,
        doc.turns.len(),
        j.calls,
        j.cached,
        j.input_tokens,
        j.output_tokens,
        if j.redactions > 0 {
            format!(" · {} secrets redacted", j.redactions)
        } else {
            String::new()
        }
    );
    out.push_str("turn  kind            TR DI VR SA  quote\n");
    for t in &doc.turns {
        let head = format!("{:>4}  {:<14}", t.turn, t.kind.as_str());
        match (&t.scores, t.applicable) {
            (None, _) => out.push_str(&format!(
                "{head}  scoring failed: {}\n",
                t.error.as_deref().unwrap_or("?")
            )),
            (Some(_), false) => out.push_str(&format!("{head}   —  —  —  —  (not applicable)\n")),
            (Some(s), true) => {
                let best = Dim::ALL
                    .iter()
                    .filter(|d| s.get(**d) > 0)
                    .max_by_key(|d| s.get(**d));
                let quote = best
                    .and_then(|d| {
                        t.quotes
                            .get(*d)
                            .map(|q| format!("{} \"{}\"", d.key().to_uppercase(), clip(q, 60)))
                    })
                    .unwrap_or_default();
                out.push_str(&format!(
                    "{head}  {:>2} {:>2} {:>2} {:>2}  {}{}\n",
                    s.tr,
                    s.di,
                    s.vr,
                    s.sa,
                    if t.opportunity {
                        ""
                    } else {
                        "(no opportunity) "
                    },
                    quote
                ));
            }
        }
    }
    let rejected: Vec<String> = doc
        .turns
        .iter()
        .flat_map(|t| {
            t.rejected_quotes.iter().map(move |r| {
                format!(
                    "turn {} {} {}: {}",
                    t.turn,
                    r.dim.key().to_uppercase(),
                    r.score,
                    r.reason
                )
            })
        })
        .collect();
    if !rejected.is_empty() {
        out.push_str(&format!("rejected (set to 0): {}\n", rejected.join("; ")));
    }
    for s in &doc.sets {
        out.push_str(&format!(
            "also: {} repeat {} ({} calls)\n",
            s.judge.name,
            s.judge.repeat.unwrap_or(1),
            s.judge.calls
        ));
    }
    out
}
