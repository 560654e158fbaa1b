//! Corpora: the batch manifest (`sage.manifest/1`), the per-case results (`sage.batch/1`
//! JSONL), the runner, and the summary tables (docs/batch.md).

pub(crate) mod deferred;
pub(crate) mod run;
pub(crate) mod summary;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::history::ProvenanceStatus;
use crate::origin::OriginType;
use crate::report::doc::ReportDoc;

pub(crate) const MANIFEST_SCHEMA: &str = "sage.manifest/1";
pub(crate) const RESULT_SCHEMA: &str = "sage.batch/1";

/// What a case is known to be: grouping labels, and optional human labels to agree with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Labels {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The task the agent worked on: resampling draws tasks, never single traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Human label: inherited | introduced | introduced_by_other | no_code_location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ProvenanceStatus>,
    /// Human label: the commit that introduced the defect (a prefix will do), or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introducing_commit: Option<String>,
    /// Human label: the origin type (`inadequate_defence`, …, or `undetermined`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_type: Option<OriginLabel>,
    /// Human label: the origin turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_turn: Option<u32>,
    /// Any other labels, kept as given.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A person's origin-type label: one of the rule's types, or `undetermined`. A misspelt
/// label is an error naming the allowed ones, not a label that silently never agrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OriginLabel {
    Type(OriginType),
    Undetermined,
}

impl OriginLabel {
    const ALL: [OriginLabel; 6] = [
        OriginLabel::Type(OriginType::InadequateDefence),
        OriginLabel::Type(OriginType::UnaddressedRequirement),
        OriginLabel::Type(OriginType::DefectInChange),
        OriginLabel::Type(OriginType::NotNoticed),
        OriginLabel::Type(OriginType::NoticedChosePoorly),
        OriginLabel::Undetermined,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OriginLabel::Type(t) => t.as_str(),
            OriginLabel::Undetermined => "undetermined",
        }
    }
}

impl Serialize for OriginLabel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for OriginLabel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = String::deserialize(d)?;
        OriginLabel::ALL
            .into_iter()
            .find(|l| l.as_str() == v.trim())
            .ok_or_else(|| {
                let all: Vec<&str> = OriginLabel::ALL.iter().map(|l| l.as_str()).collect();
                serde::de::Error::custom(format!("origin_type {v:?} is none of {}", all.join(", ")))
            })
    }
}

/// Settings shared by every case unless the case says otherwise.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Defaults {
    pub repo: Option<String>,
    pub base: Option<String>,
    pub tip: Option<String>,
    pub agent: Option<String>,
    pub criterion: Option<String>,
    pub task: Option<String>,
    #[serde(default)]
    pub labels: Labels,
}

/// One case as written in the manifest.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaseSpec {
    pub id: Option<String>,
    pub repo: Option<String>,
    pub base: Option<String>,
    pub tip: Option<String>,
    pub finding: Option<String>,
    pub select: Option<String>,
    pub session: Option<String>,
    pub task: Option<String>,
    pub criterion: Option<String>,
    pub agent: Option<String>,
    #[serde(default)]
    pub labels: Labels,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    schema: Option<String>,
    #[serde(default)]
    defaults: Defaults,
    cases: Vec<CaseSpec>,
}

/// A case with defaults applied and paths made absolute.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub id: String,
    pub repo: PathBuf,
    pub base: Option<String>,
    pub tip: Option<String>,
    pub finding: PathBuf,
    pub select: Option<String>,
    /// A path, or REV:path inside the repository.
    pub session: Option<String>,
    pub task: Option<String>,
    pub criterion: Option<String>,
    pub agent: Option<String>,
    pub labels: Labels,
}

/// A loaded manifest.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    pub cases: Vec<Case>,
}

fn merge_labels(defaults: &Labels, own: &Labels) -> Labels {
    let mut extra = defaults.extra.clone();
    extra.extend(own.extra.clone());
    Labels {
        framework: own.framework.clone().or_else(|| defaults.framework.clone()),
        model: own.model.clone().or_else(|| defaults.model.clone()),
        task: own.task.clone().or_else(|| defaults.task.clone()),
        provenance: own.provenance.or(defaults.provenance),
        introducing_commit: own
            .introducing_commit
            .clone()
            .or_else(|| defaults.introducing_commit.clone()),
        origin_type: own.origin_type.or(defaults.origin_type),
        origin_turn: own.origin_turn.or(defaults.origin_turn),
        extra,
    }
}

/// A path relative to the manifest's directory.
fn beside(dir: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

impl Manifest {
    /// Reads and checks a manifest; every problem is one line naming the file and the case.
    pub(crate) fn load(path: &Path) -> Result<Manifest> {
        let name = path.display().to_string();
        let text = crate::files::read_text(path, "manifest", crate::files::DOC_CAP)?;
        let file: ManifestFile = crate::files::parse_yaml(&text, &name)
            .map_err(|e| e.hint("see docs/batch.md for the manifest format"))?;
        if let Some(s) = &file.schema
            && s != MANIFEST_SCHEMA
        {
            return Err(Error::input(format!(
                "{name}: schema {s:?} is not {MANIFEST_SCHEMA}"
            )));
        }
        if file.cases.is_empty() {
            return Err(Error::input(format!("{name}: no cases")));
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let d = &file.defaults;
        let mut seen = HashSet::new();
        let mut cases = Vec::new();
        for (i, c) in file.cases.iter().enumerate() {
            let which = match &c.id {
                Some(id) => format!("case {} ({id})", i + 1),
                None => format!("case {}", i + 1),
            };
            let repo = c
                .repo
                .as_ref()
                .or(d.repo.as_ref())
                .ok_or_else(|| Error::input(format!("{name}: {which} has no repo")))?;
            let repo = beside(&dir, repo);
            if !repo.exists() {
                return Err(Error::input(format!(
                    "{name}: {which}: repository {} does not exist",
                    repo.display()
                )));
            }
            let finding = c
                .finding
                .as_ref()
                .ok_or_else(|| Error::input(format!("{name}: {which} has no finding")))?;
            // A finding path is the manifest's first, then the repository's. One that is in
            // neither place fails its case when the case runs, not the whole corpus.
            let finding = match beside(&dir, finding) {
                p if p.exists() => p,
                _ if repo.join(finding).exists() => repo.join(finding),
                p => p,
            };
            let session = c.session.as_ref().map(|s| {
                let p = beside(&dir, s);
                if p.exists() {
                    p.display().to_string()
                } else if repo.join(s).exists() {
                    repo.join(s).display().to_string()
                } else {
                    s.clone() // REV:path
                }
            });
            let tip = c.tip.clone().or_else(|| d.tip.clone());
            let id = c.id.clone().unwrap_or_else(|| {
                let r = repo
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "repo".into());
                let f = finding
                    .file_stem()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!(
                    "{r}@{}:{f}{}",
                    tip.as_deref().unwrap_or("HEAD"),
                    c.select
                        .as_ref()
                        .map(|s| format!("#{s}"))
                        .unwrap_or_default()
                )
            });
            if !seen.insert(id.clone()) {
                return Err(
                    Error::input(format!("{name}: {which}: case id {id:?} is used twice"))
                        .hint("give each case a unique `id:`"),
                );
            }
            cases.push(Case {
                id,
                repo,
                base: c.base.clone().or_else(|| d.base.clone()),
                tip,
                finding,
                select: c.select.clone(),
                session,
                task: c.task.clone().or_else(|| d.task.clone()),
                criterion: c.criterion.clone().or_else(|| d.criterion.clone()),
                agent: c.agent.clone().or_else(|| d.agent.clone()),
                labels: merge_labels(&d.labels, &c.labels),
            });
        }
        Ok(Manifest { cases })
    }
}

/// `I/N`: this process runs the cases whose 0-based index i has `i % N == I - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let (i, n) = s.split_once('/').ok_or("expected I/N, e.g. 2/4")?;
        let (i, n): (usize, usize) = (
            i.trim().parse().map_err(|_| "I is not a number")?,
            n.trim().parse().map_err(|_| "N is not a number")?,
        );
        if n == 0 || i == 0 || i > n {
            return Err(format!("{s}: I must be from 1 to N"));
        }
        Ok(Shard { index: i, count: n })
    }
}

impl Shard {
    pub(crate) fn takes(&self, i: usize) -> bool {
        i % self.count == self.index - 1
    }
}

/// One line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CaseResult {
    pub schema: String,
    /// The program that wrote the document; absent in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::tool::Tool>,
    pub case: String,
    #[serde(default)]
    pub labels: Labels,
    pub status: CaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<ReportDoc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CaseStatus {
    Ok,
    Failed,
}

/// Reads results files; a later line for a case replaces an earlier one (a retried case).
/// Lines that cannot be read (an interrupted write) are skipped and counted.
pub(crate) fn read_results(path: &Path) -> Result<(Vec<CaseResult>, usize)> {
    let Some(text) = crate::files::read_text_if_exists(path, "results", crate::files::SESSION_CAP)?
    else {
        return Ok((Vec::new(), 0));
    };
    let mut order: Vec<String> = Vec::new();
    let mut by_case: BTreeMap<String, CaseResult> = BTreeMap::new();
    let mut skipped = 0;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<CaseResult>(line) {
            Ok(r) if r.schema == RESULT_SCHEMA => {
                if !by_case.contains_key(&r.case) {
                    order.push(r.case.clone());
                }
                by_case.insert(r.case.clone(), r);
            }
            Ok(_) => {
                return Err(Error::input(format!(
                    "{}:{}: not a {RESULT_SCHEMA} line",
                    path.display(),
                    n + 1
                ))
                .hint("give the JSONL that git sage batch wrote"));
            }
            Err(_) if n + 1 == text.lines().count() && !text.ends_with('\n') => skipped += 1,
            Err(e) => {
                return Err(Error::input(format!("{}:{}: {e}", path.display(), n + 1))
                    .hint("delete that line (its case runs again), or give the JSONL that git sage batch wrote"));
            }
        }
    }
    Ok((
        order
            .into_iter()
            .filter_map(|c| by_case.remove(&c))
            .collect(),
        skipped,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cases() {
        let shards: Vec<Shard> = (1..=3).map(|i| format!("{i}/3").parse().unwrap()).collect();
        for i in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.takes(i)).count(), 1);
        }
        assert!(
            "0/3".parse::<Shard>().is_err()
                && "4/3".parse::<Shard>().is_err()
                && "x".parse::<Shard>().is_err()
        );
    }

    #[test]
    fn manifest_errors_name_the_file_and_case() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("m.yaml");
        std::fs::write(&m, "cases:\n  - repo: nowhere\n    finding: f.yaml\n").unwrap();
        let e = Manifest::load(&m).unwrap_err().to_string();
        assert!(
            e.contains("m.yaml: case 1: repository") && e.contains("does not exist"),
            "{e}"
        );
        std::fs::write(&m, "cases:\n  - repo: .\n    findng: f.yaml\n").unwrap();
        let e = Manifest::load(&m).unwrap_err().to_string();
        assert!(e.contains("m.yaml:3") && e.contains("findng"), "{e}");
        std::fs::write(dir.path().join("f.yaml"), "file: a.py\nfragment: x\n").unwrap();
        std::fs::write(&m, "defaults:\n  repo: .\n  labels: {framework: aider}\ncases:\n  - {id: a, finding: f.yaml, labels: {model: m1, task: t1, note: 3}}\n  - {id: a, finding: f.yaml}\n").unwrap();
        let e = Manifest::load(&m).unwrap_err().to_string();
        assert!(e.contains("case 2 (a): case id \"a\" is used twice"), "{e}");
        std::fs::write(&m, "defaults:\n  repo: .\n  labels: {framework: aider}\ncases:\n  - {id: a, finding: f.yaml, labels: {model: m1, task: t1, note: 3}}\n").unwrap();
        let ok = Manifest::load(&m).unwrap();
        let l = &ok.cases[0].labels;
        assert_eq!(
            (
                l.framework.as_deref(),
                l.model.as_deref(),
                l.task.as_deref()
            ),
            (Some("aider"), Some("m1"), Some("t1"))
        );
        assert_eq!(l.extra["note"], serde_json::json!(3));
    }
}
