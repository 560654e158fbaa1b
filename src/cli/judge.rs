//! `git sage judge SESSION`: turn scores only (`sage.scores/1`), for `git sage origin`.

use std::path::PathBuf;

use clap::Args;

use super::Context;
use super::args::JudgeArgs;
use super::output::{DATA, OutputArgs, emit, warn_all};
use crate::error::{Error, Result};
use crate::judge::backends::Spec;
use crate::judge::run::{self};
use crate::judge::scores::{Dim, ScoresDoc};
use crate::report::clip;
use crate::transcript::mapping::{self, Mapping};
use crate::transcript::{self, Format};

/// Score the turns of a session on TR/DI/VR/SA (docs/method.md#rubric)
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
git sage judge .sage/sessions/fix.jsonl --out scores.json\n  \
git sage judge HEAD:.aider.chat.history.md --judge openai:gpt-4.1 \\\n      \
--jobs 4 --rpm 60\n  \
git sage judge s.jsonl --judge anthropic:claude-sonnet-4-5 \\\n      \
--judge openai:gpt-4.1 --repeat 3\n  \
git sage judge s.jsonl --export review/   # prompts to paste into a chat\n  \
git sage judge s.jsonl --import review/ --out scores.json   # the replies")]
#[command(mut_arg("format", |a| super::output::only(a, &DATA)))]
pub(crate) struct JudgeCmd {
    /// The transcript: a path, or REV:path in the repository
    #[arg(value_name = "SESSION")]
    pub session: String,

    /// Force the transcript format instead of detecting it
    #[arg(long = "from", value_enum, value_name = "FORMAT")]
    pub from: Option<Format>,

    /// Judge only these turns (N or N-M) [default: all]
    #[arg(long, value_name = "N-M")]
    pub turns: Option<String>,

    /// The finding's CWE: the offline judge uses its phrase lists
    #[arg(long, value_name = "N")]
    pub cwe: Option<u32>,

    /// The finding's file: the offline judge counts naming or editing it as scope, and a turn
    /// that touches it as an opportunity
    #[arg(long, value_name = "PATH")]
    pub anchor_file: Option<String>,

    /// Write the prompts for a judge run by hand to DIR: one Markdown file per turn to paste
    /// into a chat, a README saying what to do, and a manifest; no judge is called
    /// (docs/judge.md#manual-judge)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["import", "judges", "out", "format", "estimate"], help_heading = "Judge")]
    pub export: Option<PathBuf>,

    /// Score the turns from the chat replies saved in DIR (turn-NNN.answer.md) after
    /// --export DIR; turns without a reply yet are listed as pending (exit 3), and a later
    /// run picks up the replies saved since
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["judges", "estimate"],
        help_heading = "Judge"
    )]
    pub import: Option<PathBuf>,

    /// Write what the offline judge's model reads of each turn to FILE, and answer with its
    /// phrase rules alone (for bench/train_offline.py)
    #[arg(long, value_name = "FILE", hide = true)]
    pub features_out: Option<PathBuf>,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub(crate) fn run(ctx: &Context, args: &JudgeCmd) -> Result<i32> {
    let targets = args.output.targets("judge", &DATA)?;
    let stage = crate::timing::stage("read the session");
    let input = super::util::open_session(ctx, &args.session)?;
    let t = transcript::parse(input, args.from)?;
    drop(stage);
    let mut scope = mapping::scope(&t, &Mapping::default(), None);
    if let Some(r) = &args.turns {
        let (a, b) = crate::anchor::parse_lines(r)
            .ok_or_else(|| Error::input(format!("--turns {r}: expected N or N-M")))?;
        scope.first = a;
        scope.last = b.min(t.turns.len() as u32);
        scope.reason = format!("turns {a}-{} (--turns)", scope.last);
    }
    let manual = args.export.as_ref().or(args.import.as_ref());
    let mut judge_args = args.judge.clone();
    if manual.is_some() {
        // Not the configured judge (`sage.judge`): its key is not needed to judge by hand.
        judge_args.judges = vec!["offline".into()];
    }
    let mut opts = super::util::judge_options(ctx.settings()?, &judge_args)?;
    if let Some(dir) = manual {
        opts.judges = vec![Spec::Manual { dir: dir.clone() }];
    }
    if let Some(task) = opts.task.as_deref() {
        scope.task = Some(crate::redact::redact(task).0);
    }
    opts.cwe_hint = args.cwe;
    opts.anchor_file = args.anchor_file.clone();
    opts.features_out = args.features_out.clone();
    if let Some(dir) = &args.export {
        let exported = run::export(&t, &scope, &opts, dir)?;
        ctx.print(&exported.render(&args.session))?;
        return Ok(0);
    }
    if args.judge.estimate {
        let doc = run::estimate(&t, &scope, &opts)?;
        emit(ctx, &targets, &doc, |_| Ok(doc.render()))?;
        return Ok(0);
    }
    if let Some(dir) = &args.import {
        crate::judge::manual::check_exported(dir)?;
    }
    let doc = run::judge(&t, &scope, &opts)?;
    let stage = crate::timing::stage("write the scores");
    emit(ctx, &targets, &doc, |_| Ok(render(&doc)))?;
    drop(stage);
    warn_all(&ctx.tr, &doc.judge.warnings);
    super::util::say_spend(&opts);
    super::util::check_scoring(
        &doc.failed_turns,
        super::util::allow_partial(ctx.settings()?, &args.judge),
    )?;
    Ok(0)
}

/// Turn scores as a table, with the strongest quote of each turn.
pub(crate) fn render(doc: &ScoresDoc) -> String {
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
    if let Some(line) = crate::judge::failed::summary(&doc.failed_turns) {
        out.push_str(&format!("failed: {line}\n"));
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
