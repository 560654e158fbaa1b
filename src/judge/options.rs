//! What a judge run is told: the user's settings (`Options`), how turns are put to the judge
//! (`Protocol`), requests set aside for a batch interface (`Deferred`), and the schedule that
//! may spare turns (`Schedule`, kept here because `Options` holds one and the scheduler's
//! implementations sit above the jobs that read `Options`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::cache::Cache;
use super::scores::{Skip, TurnScore};
use super::spec::Spec;
use crate::lang::Lang;
use crate::transcript::TurnKind;

/// Which turns still to be judged need no answer, given the turns judged so far (their
/// scores as the report will hold them; a failed turn has none) and the kinds of those
/// pending. An implementation must give the result judging every turn would.
pub(crate) trait Schedule: Send + Sync + std::fmt::Debug {
    fn unneeded(&self, known: &[TurnScore], pending: &[(u32, TurnKind)]) -> Vec<(u32, Skip)>;
}

/// How turns are put to the judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Protocol {
    /// One call per turn, turns 1..t only (the default).
    Prefix,
    /// One call for all turns (cheaper; the judge sees later turns).
    Single,
}

/// Everything `git sage judge` and `blame-origin` let the user set.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub judges: Vec<Spec>,
    pub protocol: Protocol,
    pub repeat: u32,
    pub jobs: usize,
    pub rpm: Option<u32>,
    /// `--max-cost`: what every judge call of the run (all judges, repeats and cases) may
    /// spend together.
    pub spend: Option<Arc<super::cost::Spend>>,
    pub context_tokens: Option<usize>,
    pub quotes_required: bool,
    /// The confirmed defect, shown to the judge only on request.
    pub anchor_for_judge: Option<String>,
    pub criterion: String,
    pub task: Option<String>,
    pub cwe_hint: Option<u32>,
    /// The finding's file, for the offline judge's scope and opportunity evidence.
    pub anchor_file: Option<String>,
    pub templates_dir: Option<PathBuf>,
    /// The language of the prompts (`--judge-lang`, `sage.judgeLang`); `None`: the log's own,
    /// detected from the turns in scope.
    pub judge_lang: Option<Lang>,
    pub cache: Cache,
    pub record: Option<PathBuf>,
    pub timeout: Duration,
    pub tries: u32,
    pub answer_tries: u32,
    pub progress: bool,
    /// Collect the uncached requests of HTTP judges here instead of making them (the first
    /// pass of `batch --batch-api`); their turns come back as failed.
    pub defer: Option<Arc<Mutex<Vec<Deferred>>>>,
    /// The origin rule's frame (its turns empty) for rule-aware scheduling: a model judge is
    /// not asked about turns whose answers could not change the origin or the missed
    /// opportunities. `None` (`judge`, `--score-all`): every turn is asked.
    pub schedule: Option<Arc<dyn Schedule>>,
    /// `--score-all`: no schedule is set, every turn is asked.
    pub score_all: bool,
    /// Write what the offline judge's model reads of each turn here (JSON lines), with the
    /// phrase rules' answers instead of the model's: what bench/train_offline.py learns from.
    pub features_out: Option<PathBuf>,
    /// The offline judge answers with its model (the default); without it, with its phrase
    /// rules alone — what the agent-side guard asks: whether a plan spells out each part.
    pub offline_model: bool,
}

/// A request set aside for a provider's batch interface.
#[derive(Debug, Clone)]
pub(crate) struct Deferred {
    pub judge: Spec,
    /// Where the answer goes in the cache.
    pub cache_key: String,
    /// The provider's request body (chat completions or messages).
    pub body: Value,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            judges: vec![Spec::Offline],
            protocol: Protocol::Prefix,
            repeat: 1,
            jobs: crate::settings::DEFAULT_JOBS,
            rpm: None,
            spend: None,
            context_tokens: None,
            quotes_required: true,
            anchor_for_judge: None,
            criterion: "security".into(),
            task: None,
            cwe_hint: None,
            anchor_file: None,
            templates_dir: None,
            judge_lang: None,
            cache: Cache::disabled(),
            record: None,
            timeout: Duration::from_secs(120),
            tries: 5,
            answer_tries: 3,
            progress: true,
            defer: None,
            schedule: None,
            score_all: false,
            features_out: None,
            offline_model: true,
        }
    }
}
