//! `git sage origin --scores S --provenance P`: the origin rule again on saved results, with
//! other levers, and no judge calls.

use clap::Args;
use serde::Serialize;

use super::Context;
use super::output::{DATA, OutputArgs, emit};
use crate::error::{Error, Result};
use crate::origin::{self, Input, Missed, Origin, TurnFacts};
use crate::report::json::ProvenanceDoc;

/// Re-apply the origin rule to saved scores and provenance (no judge calls)
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
git sage provenance --out prov.json\n  \
git sage judge HEAD:.sage/sessions/fix.yaml --out scores.json\n  \
git sage origin --scores scores.json --provenance prov.json \\\n      \
--vr-max 2 --two-types")]
#[command(mut_arg("format", |a| super::output::only(a, &DATA)))]
pub(crate) struct OriginArgs {
    /// A sage.scores/1 file (git sage judge --out)
    #[arg(long, value_name = "FILE")]
    pub scores: std::path::PathBuf,

    /// A sage.provenance/1 file (git sage provenance --format json)
    #[arg(long, value_name = "FILE")]
    pub provenance: std::path::PathBuf,

    #[command(flatten)]
    pub levers: super::args::LeverArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Turns the scores file says could not be scored are a warning, not exit 3
    /// [default: sage.allowPartial, else off]
    #[arg(long)]
    pub allow_partial: bool,
}

/// What `origin --format json` writes (docs/json.md).
const ORIGIN_SCHEMA: &str = "sage.origin/1";

#[derive(Serialize)]
struct Out {
    schema: &'static str,
    tool: crate::tool::Tool,
    origin: Origin,
    missed_opportunities: Vec<Missed>,
    recommendation: String,
}

pub(crate) fn run(ctx: &Context, args: &OriginArgs) -> Result<i32> {
    let targets = args.output.targets("origin", &DATA)?;
    let scores = crate::judge::run::read_scores(&args.scores)?;
    let text = crate::files::read_text(&args.provenance, "provenance", crate::files::DOC_CAP)?;
    let prov: ProvenanceDoc = serde_json::from_str(&text).map_err(|e| {
        Error::input(format!(
            "{}:{}: not a sage.provenance/1 file: {e}",
            args.provenance.display(),
            e.line()
        ))
        .hint("write one with git sage provenance --format json")
    })?;
    let p = &prov.provenance;
    let introducing_turn = p
        .introducing_write
        .as_ref()
        .filter(|w| w.agent)
        .and_then(|w| w.turn);
    let delivered_turn = p
        .writes
        .iter()
        .filter(|w| w.agent)
        .filter_map(|w| w.turn)
        .max();
    let last_turn = prov
        .session
        .as_ref()
        .map(|s| s.scope.last)
        .or(scores.scope.as_ref().map(|s| s.last))
        .or(scores.turns.last().map(|t| t.turn))
        .unwrap_or(0);
    let input = Input {
        status: p.status,
        introducing_turn,
        delivered_turn,
        last_turn,
        turns: scores
            .turns
            .iter()
            // A scores file does not hold the turns' edits.
            .map(|t| TurnFacts::of(t, false))
            .collect(),
        no_session: false,
    };
    let levers = super::util::levers(ctx.settings()?, &args.levers)?;
    let (origin, missed) = origin::locate(&input, &levers);
    // The document's recommendation in English (JSON is language-neutral); the text's in the
    // run's language.
    let rec = |lang| {
        crate::report::recommend::recommendation(&origin, &missed, prov.finding.cwe, None, lang)
    };
    let recommendation = rec(crate::i18n::Lang::En)?;
    let shown = rec(ctx.tr.lang())?;
    let out = Out {
        schema: ORIGIN_SCHEMA,
        tool: crate::tool::Tool::current(),
        origin,
        missed_opportunities: missed,
        recommendation,
    };
    emit(ctx, &targets, &out, |_| {
        let o = &out.origin;
        let tr = &ctx.tr;
        let mut s = match (o.turn, o.kind) {
            (Some(turn), Some(k)) => format!(
                "{}: {}{}\n",
                tr.t("html.origin").to_lowercase(),
                tr.tf(
                    "origin.at",
                    &[("turn", &turn), ("type", &k.words_shown(tr))]
                ),
                o.quote
                    .as_deref()
                    .map(|q| format!(": \"{q}\""))
                    .unwrap_or_default()
            ),
            _ => format!(
                "{}: {} — {}\n",
                tr.t("html.origin").to_lowercase(),
                tr.t("origin.undetermined"),
                o.detail.as_deref().unwrap_or("")
            ),
        };
        let missed: Vec<String> = out
            .missed_opportunities
            .iter()
            .map(|m| {
                tr.tf(
                    "missed.item",
                    &[
                        ("turn", &m.turn),
                        ("kind", &m.kind.shown(tr)),
                        ("vr", &m.vr),
                        ("sa", &m.sa),
                        ("touch", &""),
                    ],
                )
            })
            .collect();
        s.push_str(&format!(
            "{} {}\n\n{}\n",
            tr.t("origin.missed_label"),
            if missed.is_empty() {
                tr.t("missed.none")
            } else {
                missed.join("; ")
            },
            crate::report::mdlite::to_text(&shown)
        ));
        Ok(s)
    })?;
    super::util::check_scoring(
        &scores.failed_turns,
        args.allow_partial || ctx.settings()?.allow_partial,
    )?;
    Ok(0)
}
