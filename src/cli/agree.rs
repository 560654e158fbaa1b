//! `git sage agree`: consistency statistics between runs (results files) or between the
//! judges and repeats inside one run.

use std::path::PathBuf;

use clap::Args;

use super::Context;
use super::output::{Format, OutputArgs, SUMMARY, emit};
use crate::agree;
use crate::batch::read_results;
use crate::error::{Error, Result};

/// Agreement between runs or judges: origin types, origin turns, TR/DI/VR/SA scores
#[derive(Debug, Args)]
#[command(
    after_help = "Each RUN.jsonl (from git sage batch) is one rater. With a single file, the judges and \
repeats inside its reports (--judge A --judge B, --repeat K) are the raters.\n\n\
Examples:\n  git sage agree run-gpt.jsonl run-claude.jsonl\n  git sage agree repeats.jsonl --format json\n  \
git sage agree a.jsonl b.jsonl --splits 1000 --seed 7 --out agreement.md"
)]
#[command(mut_arg("format", |a| super::output::only(a, &SUMMARY)))]
pub(crate) struct AgreeArgs {
    /// Results files of git sage batch
    #[arg(value_name = "RUN.jsonl", required = true)]
    pub runs: Vec<PathBuf>,

    /// Task-disjoint resampling: how many random halves of the tasks
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub splits: usize,

    /// Seed of the resampling (same seed, same figures)
    #[arg(long, value_name = "N", default_value_t = 20260301)]
    pub seed: u64,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub(crate) fn run(ctx: &Context, args: &AgreeArgs) -> Result<i32> {
    let targets = args.output.targets("agree", &SUMMARY)?;
    let mut runs = Vec::new();
    for p in &args.runs {
        if !p.exists() {
            return Err(Error::input(format!(
                "cannot read {}: no such file",
                p.display()
            )));
        }
        let (results, _) = read_results(p)?;
        if results.is_empty() {
            return Err(Error::input(format!("{}: no results", p.display())));
        }
        runs.push((p.display().to_string(), results));
    }
    let ratings = if runs.len() == 1 {
        let r = agree::from_sets(&runs[0].1);
        if r.raters.len() < 2 {
            return Err(Error::input(format!(
                "{}: one run with one judge has nothing to agree with",
                runs[0].0
            ))
            .hint("give two or more RUN.jsonl, or run batch with --repeat K or several --judge"));
        }
        r
    } else {
        agree::from_runs(&runs)
    };
    let a = agree::agreement(&ratings, args.splits, args.seed);
    emit(ctx, &targets, &a, |f| {
        Ok(agree::render(&a, f == Format::Md))
    })?;
    Ok(0)
}
