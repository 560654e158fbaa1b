//! Arguments shared by several subcommands: the finding, the range, the output format.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::finding::{Given, Inline, Request};

/// How the finding (the confirmed defect) is given.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Finding")]
pub(crate) struct FindingArgs {
    /// The confirmed finding: SARIF 2.1.0, Bandit JSON, Semgrep JSON or an anchor YAML
    #[arg(long, short = 'f', value_name = "FILE")]
    pub finding: Option<PathBuf>,

    /// Which result of a file with several: its 1-based index, its rule id, or its finding id
    #[arg(long, value_name = "RULE|INDEX|ID", requires = "finding")]
    pub select: Option<String>,

    /// Inline anchor: the affected file (repository-relative)
    #[arg(long, value_name = "PATH", conflicts_with = "finding")]
    pub anchor_file: Option<String>,

    /// Inline anchor: a code fragment of the defect (repeat for several; all must be present)
    #[arg(long, value_name = "TEXT", requires = "anchor_file")]
    pub anchor_snippet: Vec<String>,

    /// Inline anchor: a line range N or N-M of the file at the tip
    #[arg(long, value_name = "N-M", requires = "anchor_file")]
    pub anchor_lines: Option<String>,

    /// Inline anchor: a regular expression over the file
    #[arg(long, value_name = "REGEX", requires = "anchor_file")]
    pub anchor_pattern: Option<String>,

    /// Inline anchor: the fragment is a defence whose absence is the defect
    #[arg(long, requires = "anchor_file")]
    pub absent: bool,

    /// The CWE (918 or CWE-918); replaces the finding's own
    #[arg(long, value_name = "N")]
    pub cwe: Option<String>,

    /// missing_defence, insufficient_defence or introduced_vulnerability; replaces the finding's
    #[arg(long = "class", value_name = "CLASS")]
    pub class: Option<String>,

    /// A stable id for notes and reports; replaces the finding's
    #[arg(long = "id", value_name = "ID")]
    pub id: Option<String>,

    /// What is wrong, in words; replaces the finding's
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,
}

impl FindingArgs {
    pub(crate) fn request(&self) -> Request {
        Request {
            finding: self.finding.clone(),
            select: self.select.clone(),
            inline: self.anchor_file.as_ref().map(|file| Inline {
                file: file.clone(),
                snippets: self.anchor_snippet.clone(),
                lines: self.anchor_lines.clone(),
                pattern: self.anchor_pattern.clone(),
                absent: self.absent,
            }),
            given: self.given(),
        }
    }

    /// The user's word on the finding, whatever its source.
    pub(crate) fn given(&self) -> Given {
        Given {
            cwe: self.cwe.clone(),
            class: self.class.clone(),
            id: self.id.clone(),
            description: self.description.clone(),
        }
    }
}

/// The range of agent work: `BASE..BRANCH`, first-parent.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Range")]
pub(crate) struct RangeArgs {
    /// The branch (or any revision) whose agent commits are studied [default: HEAD]
    #[arg(value_name = "BRANCH")]
    pub branch: Option<String>,

    /// The commit before the agent's first write [default: sage.base, else the merge-base
    /// with origin/HEAD, main or master]
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// Regex over author, committer and Co-authored-by naming the agent's commits
    /// [default: sage.agentPattern, else every commit]
    #[arg(long, value_name = "REGEX")]
    pub agent: Option<String>,
}

/// Output formats of data commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum DataFormat {
    #[default]
    Text,
    Json,
}

/// How turns are judged (shared by `judge` and `blame-origin`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Judge")]
pub(crate) struct JudgeArgs {
    /// offline | openai:MODEL | anthropic:MODEL | command:CMD | replay:FILE | manual:DIR
    /// (prompts to paste into a chat, the replies read back); repeat for cross-judge results
    /// [default: git config sage.judge, else offline]
    #[arg(long = "judge", value_name = "JUDGE")]
    pub judges: Vec<String>,

    /// prefix: one call per turn seeing turns 1..t; single: one call for all turns
    #[arg(long, value_enum, default_value_t = crate::judge::run::Protocol::Prefix)]
    pub protocol: crate::judge::run::Protocol,

    /// Score each turn K times (consistency statistics)
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub repeat: u32,

    /// Turns judged at once [default: sage.jobs, else 8]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// At most N requests per minute [default: sage.rpm, else no cap]
    #[arg(long, value_name = "N")]
    pub rpm: Option<u32>,

    /// Context budget in tokens: old tool outputs, then old tool arguments, then old
    /// reasoning are elided to fit; 0 for none [default: the model's in templates/prices.yaml,
    /// else 32000]
    #[arg(long, value_name = "N")]
    pub context_tokens: Option<usize>,

    /// Stop before the judge call that would take the run's spend past USD (at the prices of
    /// templates/prices.yaml); what was judged is kept, the run exits 3 [default: git config
    /// sage.maxCost, else no limit]
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,

    /// Print what the judge calls would cost — calls, tokens, the share a provider's prompt
    /// cache should serve, USD from templates/prices.yaml — and make none (docs/judge.md#cost)
    #[arg(long)]
    pub estimate: bool,

    /// Ask a model judge about every turn, also those whose scores cannot change the origin
    /// or the missed opportunities (blame-origin and batch skip them; docs/judge.md#scheduling)
    /// [default: sage.scoreAll, else off]
    #[arg(long)]
    pub score_all: bool,

    /// Keep scores without verifiable quotes (a fast, less reliable draft)
    #[arg(long)]
    pub no_quotes: bool,

    /// security | privacy | compliance | a criterion YAML file
    #[arg(long, value_name = "CRITERION", default_value = "security")]
    pub criterion: String,

    /// The task the agent was given [default: sage.task, else the user message that opened it]
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,

    /// A directory whose judge/ and lexicons/ files override the embedded templates
    /// [default: git config sage.templates]
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,

    /// The language of the judge's prompts (rubric, instructions); quotes stay as the log
    /// wrote them [default: git config sage.judgeLang, else the log's, detected]
    #[arg(long, value_enum, value_name = "LANG")]
    pub judge_lang: Option<crate::lang::Lang>,

    /// Do not read or write the answer cache
    #[arg(long)]
    pub no_cache: bool,

    /// Append every answer to FILE, for replay:FILE later
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Seconds one judge call may take
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub judge_timeout: u64,

    /// Turns the judge could not score are a warning, not exit 3; the exit is decided by the
    /// rest [default: sage.allowPartial, else off]
    #[arg(long)]
    pub allow_partial: bool,
}

/// The origin rule's levers (docs/method.md#missed-opportunities), shared by the commands that
/// apply it.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Origin rule")]
pub(crate) struct LeverArgs {
    /// Missed opportunity when a later turn's VR is at most N [default: sage.vrMax, else 1]
    #[arg(long, value_name = "N")]
    pub vr_max: Option<u8>,

    /// Missed opportunity when a later turn's SA is at most N [default: sage.saMax, else 1]
    #[arg(long, value_name = "N")]
    pub sa_max: Option<u8>,

    /// Report not_noticed / noticed_chose_poorly instead of the three origin types
    #[arg(long)]
    pub two_types: bool,
}

/// Formats of the corpus summaries (`batch --summarize`, `agree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SummaryFormat {
    Text,
    Md,
    Json,
}

/// Which writes the JSON documents list in `provenance.writes[]` (docs/json.md#provenance).
#[derive(Debug, Clone, Args)]
pub(crate) struct WritesArgs {
    /// List every write of the range in the JSON's provenance.writes[], not only those that
    /// touched the anchored file and those the verdict names [default: sage.allWrites, else
    /// off]
    #[arg(long, help_heading = "Output")]
    pub all_writes: bool,
}

impl WritesArgs {
    /// The flag, else the setting.
    pub(crate) fn all(&self, settings: &crate::settings::Settings) -> bool {
        self.all_writes || settings.all_writes
    }
}
