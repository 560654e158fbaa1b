//! `git sage screen`: which green agent patches deserve a security look (docs/method.md#screening,
//! L0–L3).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::Context;
use super::args::RangeArgs;
use super::output::{Format, OutputArgs, emit};
use crate::error::{Error, Result};
use crate::history::range;
use crate::screen::{self, Options, report};

/// What `screen` writes.
const FORMATS: [Format; 3] = [Format::Text, Format::Json, Format::Sarif];

/// What `--fail-on` gates on (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailOn {
    /// At least one file is a candidate.
    Candidates,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Severity {
    Low,
    Medium,
    High,
}

/// Find silent-failure candidates among the Python files a range changed (L0–L3)
#[derive(Debug, Args)]
#[command(
    after_help = "Layers: L0 the file parses (tree-sitter); L1 the base's functions and classes are kept and \
imports resolve (repository, standard library, declared or installed packages — looked up, never imported; \
modules a repository file makes at run time, such as six.moves, are listed as dynamic, not checked), and \
the tests pass when --run-tests is given; L2 Bandit (high-severity findings, when installed); L3 the rule score R \
(templates/screen/python/*.yaml). A candidate passes L0 and L1 and is flagged by L2 or L3; confirm it before \
using it as a failure anchor.\n\nRepository code is never run unless you pass --run-tests.\n\n\
Examples:\n  git sage screen agent/fix --base main\n  \
git sage screen --cwe 918 --out screen.sarif --fail-on candidates\n  \
git sage screen --emit-anchors .sage/candidates\n  \
git sage blame-origin --finding .sage/candidates/FILE.yaml\n  \
git sage screen --run-tests 'python -m pytest -q'"
)]
#[command(mut_arg("format", |a| super::output::only(a, &FORMATS)))]
pub(crate) struct ScreenArgs {
    #[command(flatten)]
    pub range: RangeArgs,

    /// The task's CWE (×1.3 for sinks of that CWE, +10 when its weakness pattern remains)
    #[arg(long, value_name = "N", help_heading = "Rules")]
    pub cwe: Option<String>,

    /// Flag a file when R reaches this
    #[arg(long, value_name = "R", default_value_t = crate::screen::DEFAULT_THRESHOLD, help_heading = "Rules")]
    pub threshold: f64,

    /// Bandit findings at or above this severity flag a file (L2)
    #[arg(long, value_enum, default_value_t = Severity::High, help_heading = "Rules")]
    pub l2_severity: Severity,

    /// Do not run Bandit (L2)
    #[arg(long, help_heading = "Rules")]
    pub no_bandit: bool,

    /// Run the repository's tests with this command, in a scratch checkout of the tip (this
    /// runs repository code: only for repositories you trust)
    #[arg(long, value_name = "CMD", help_heading = "Rules")]
    pub run_tests: Option<String>,

    /// Give up on the tests after this many seconds
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = crate::screen::DEFAULT_TESTS_TIMEOUT,
        requires = "run_tests",
        help_heading = "Rules"
    )]
    pub tests_timeout: u64,

    /// Directory overriding the tables (DIR/screen/python/*.yaml) [default: sage.templates]
    #[arg(long, value_name = "DIR", help_heading = "Rules")]
    pub templates: Option<PathBuf>,

    /// Check the tables instead of screening: run each entry's examples (every `hit` must
    /// show the entry, every `miss` must not); exit 1 when one does not hold
    #[arg(long, help_heading = "Rules")]
    pub check_tables: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Write an anchor YAML (marked unconfirmed) per candidate into DIR, for blame-origin
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub emit_anchors: Option<PathBuf>,

    /// Exit 1 when there are candidates
    #[arg(long, value_enum, value_name = "WHAT", help_heading = "Output")]
    pub fail_on: Option<FailOn>,

    /// The old spelling of --fail-on candidates
    #[arg(long, hide = true, conflicts_with = "fail_on")]
    pub fail_on_candidates: bool,

    /// Only these paths (after `--`; directories, or globs with * and ?)
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<String>,
}

pub(crate) fn run(ctx: &Context, args: &ScreenArgs) -> Result<i32> {
    let templates_dir = super::util::templates_dir(args.templates.as_deref(), ctx.settings()?)?;
    if args.check_tables {
        return check_tables(ctx, templates_dir.as_deref());
    }
    let targets = args.output.targets("screen", &FORMATS)?;
    let repo = ctx.repo()?;
    let range = range::resolve(
        &repo,
        args.range.branch.as_deref(),
        args.range.base.as_deref(),
        ctx.settings()?.base.as_deref(),
    )?;
    let task_cwe = match &args.cwe {
        None => None,
        Some(c) => Some(crate::finding::parse_cwe(c).ok_or_else(|| {
            Error::input(format!(
                "--cwe {c}: expected a CWE number such as 918 or CWE-918"
            ))
        })?),
    };
    if !args.threshold.is_finite() || args.threshold < 0.0 {
        return Err(Error::input("--threshold takes a number from 0 to 100"));
    }
    let opts = Options {
        task_cwe,
        threshold: args.threshold,
        l2_severity: match args.l2_severity {
            Severity::Low => 1,
            Severity::Medium => 2,
            Severity::High => 3,
        },
        bandit: !args.no_bandit,
        run_tests: args.run_tests.clone(),
        tests_timeout: std::time::Duration::from_secs(args.tests_timeout.max(1)),
        paths: args.paths.clone(),
        templates_dir,
    };
    let doc = screen::screen(&repo, &range, &opts)?;
    if let Some(dir) = &args.emit_anchors {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::env(format!("cannot create {}: {e}", dir.display())))?;
        let anchors = report::anchors(&doc);
        for (name, text) in &anchors {
            let p = dir.join(name);
            crate::files::write_output(&p, text.as_bytes())
                .map_err(|e| Error::env(format!("cannot write {}: {e}", p.display())))?;
        }
        crate::say!(
            "git-sage: wrote {} anchor(s) into {} (unconfirmed: confirm before acting on them)",
            anchors.len(),
            dir.display()
        );
    }
    emit(ctx, &targets, &doc, |f| match f {
        Format::Sarif => {
            let mut s = serde_json::to_string_pretty(&report::sarif(&doc))
                .map_err(|e| Error::env(format!("cannot encode SARIF: {e}")))?;
            s.push('\n');
            Ok(s)
        }
        _ => Ok(report::text(&doc)),
    })?;
    let gate = args.fail_on == Some(FailOn::Candidates) || args.fail_on_candidates;
    Ok(if gate && !doc.candidates.is_empty() {
        1
    } else {
        0
    })
}

/// `--check-tables`: the tables' examples, run; what did not hold on stdout, exit 1 if any.
fn check_tables(ctx: &Context, dir: Option<&std::path::Path>) -> Result<i32> {
    let c = screen::check_tables(dir)?;
    let mut out = String::new();
    for f in &c.failures {
        out.push_str(&format!("FAILED  {f}\n"));
    }
    for e in &c.without_examples {
        out.push_str(&format!("no examples  {e}\n"));
    }
    out.push_str(&format!(
        "{} entries, {} examples: {} did not hold{}\n",
        c.entries,
        c.examples,
        c.failures.len(),
        if c.without_examples.is_empty() {
            String::new()
        } else {
            format!("; {} entries have none", c.without_examples.len())
        }
    ));
    ctx.print(&out)?;
    Ok(i32::from(!c.failures.is_empty()))
}
