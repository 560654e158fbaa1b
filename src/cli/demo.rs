//! `git sage demo`: the worked example of docs/method.md#worked-example as a real repository — a
//! sellers' marketplace whose agent "fixed" an SSRF by checking only the URL scheme — analysed with
//! the offline judge. No network, no keys.

use std::path::PathBuf;

use clap::Args;

use super::Context;
use super::output::Format;
use super::output::{OutputArgs, emit, warn_all};
use super::util::render;
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::history::range::{self, AgentMatcher};
use crate::judge::run::Options;
use crate::origin::Levers;
use crate::pipeline::{self, BlameRequest};

const FETCHER_BASE: &str = include_str!("../../templates/demo/fetcher_base.py");
const FETCHER_FIXED: &str = include_str!("../../templates/demo/fetcher_fixed.py");
const TEST_FETCHER: &str = include_str!("../../templates/demo/test_fetcher.py");
const README_BASE: &str = include_str!("../../templates/demo/README_base.md");
const README_DOCS: &str = include_str!("../../templates/demo/README_docs.md");
const SESSION: &str = include_str!("../../templates/demo/session.yaml");
const FINDING: &str = include_str!("../../templates/demo/finding.yaml");
/// What Bandit 1.9 reports on the agent's fetcher (`bandit -f json media/fetcher.py`): B310,
/// which it labels CWE-22, on the urlopen line the agent kept.
const BANDIT: &str = include_str!("../../templates/demo/bandit.json");

const HUMAN: (&str, &str) = ("Dana Seller", "dana@example.com");
const AGENT: (&str, &str) = ("Cursor Agent", "agent@cursor.example");
/// 2026-03-02T09:00:00Z.
const T0: i64 = 1_772_442_000;

/// Build and analyse the worked example offline (docs/method.md#worked-example)
#[derive(Debug, Args)]
#[command(
    after_help = "The repository is built in a temporary directory and removed afterwards, unless --keep names\none; then try the other commands there (README.md has the tour), e.g.\n  git sage demo --keep /tmp/sage-demo\n  cd /tmp/sage-demo\n  git sage blame-origin --out report.html\n  git sage blame-origin --finding bandit.json --cwe 918"
)]
pub(crate) struct DemoArgs {
    /// Keep the example repository in DIR (which must not exist or be empty)
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub writes: super::args::WritesArgs,
}

/// Builds the example repository in `dir`: base on main, the agent's three commits on
/// agent/fix-ssrf (checked out), the session committed with the last one, the finding in
/// the work tree.
pub(crate) fn build(dir: &std::path::Path) -> Result<Repo> {
    let repo = Repo::init(dir, "main")?;
    let base = repo.commit_files(
        "main",
        None,
        &[
            ("media/fetcher.py", Some(FETCHER_BASE.as_bytes())),
            ("README.md", Some(README_BASE.as_bytes())),
        ],
        "product-media: download previews by URL\n",
        HUMAN,
        T0,
    )?;
    let b = "agent/fix-ssrf";
    let c1 = repo.commit_files(
        b,
        Some(base),
        &[("tests/test_fetcher.py", Some(TEST_FETCHER.as_bytes()))],
        "Add a test for URL validation in download_preview\n",
        AGENT,
        T0 + 25,
    )?;
    let c2 = repo.commit_files(
        b,
        Some(c1),
        &[("media/fetcher.py", Some(FETCHER_FIXED.as_bytes()))],
        "Fix SSRF: only allow https URLs in download_preview\n",
        AGENT,
        T0 + 35,
    )?;
    repo.commit_files(
        b,
        Some(c2),
        &[
            ("README.md", Some(README_DOCS.as_bytes())),
            (".sage/sessions/fix-ssrf.yaml", Some(SESSION.as_bytes())),
        ],
        "Document the https-only rule\n\nSage-Session: .sage/sessions/fix-ssrf.yaml\n",
        AGENT,
        T0 + 65,
    )?;
    repo.checkout_branch(b)?;
    let findings = dir.join(".sage/findings");
    std::fs::create_dir_all(&findings)
        .map_err(|e| Error::env(format!("cannot write {}: {e}", findings.display())))?;
    std::fs::write(findings.join("ssrf-preview.yaml"), FINDING)
        .map_err(|e| Error::env(format!("cannot write the finding: {e}")))?;
    // A scanner's output as a user would have saved it: not committed, not a kept finding.
    std::fs::write(dir.join("bandit.json"), BANDIT)
        .map_err(|e| Error::env(format!("cannot write bandit.json: {e}")))?;
    Ok(repo)
}

pub(crate) fn run(ctx: &Context, args: &DemoArgs) -> Result<i32> {
    let targets = args.output.targets("demo", &super::output::REPORT)?;
    let tmp;
    let dir = match &args.keep {
        Some(d) => {
            if d.exists()
                && std::fs::read_dir(d)
                    .map(|mut r| r.next().is_some())
                    .unwrap_or(true)
            {
                return Err(Error::input(format!(
                    "--keep {}: the directory exists and is not empty",
                    d.display()
                ))
                .hint("name a new directory"));
            }
            d.clone()
        }
        None => {
            tmp = tempfile::tempdir()
                .map_err(|e| Error::env(format!("cannot make a temporary directory: {e}")))?;
            tmp.path().to_path_buf()
        }
    };
    let repo = build(&dir)?;
    let range = range::resolve(&repo, None, None, None)?;
    let mut anchor = crate::finding::load(&crate::finding::Request {
        finding: Some(dir.join(".sage/findings/ssrf-preview.yaml")),
        select: None,
        inline: None,
        given: Default::default(),
    })?;
    // As a user in the repository would name it (and the same bytes wherever the demo runs).
    anchor.source.path = Some(".sage/findings/ssrf-preview.yaml".into());
    let opts = Options {
        progress: false,
        ..Options::default()
    };
    let req = BlameRequest {
        anchor: &anchor,
        session: None,
        judge: opts,
        levers: Levers::default(),
        judge_sees_anchor: false,
        unconfirmed: false,
        templates_dir: None,
        // The example's repository is not the one the command runs in: only the flag counts.
        all_writes: args.writes.all_writes,
        confirm_with: None,
        cwe_given: false,
        lang: ctx.tr.lang(),
    };
    let (mut doc, _) = pipeline::blame(&repo, &range, &AgentMatcher::everyone(), req)?;
    // The example's own name, not the temporary directory's: the same bytes wherever it runs.
    doc.repository = Some("product-media".into());
    let place = match &args.keep {
        Some(d) => ctx.tr.tf("demo.kept", &[("dir", &d.display())]),
        None => ctx.tr.t("demo.keep"),
    };
    emit(ctx, &targets, &doc, |f| {
        let text = render(&doc, f, &ctx.tr)?;
        Ok(match f {
            Format::Text => {
                let mut out = crate::term::Styled::from(format!("{}\n\n", ctx.tr.t("demo.intro")));
                out.append(text);
                out.push_str(&format!("\n{place}\n"));
                out
            }
            _ => text,
        })
    })?;
    warn_all(&ctx.tr, &doc.warnings);
    Ok(0)
}
