//! JSON documents of docs/json.md: `sage.provenance/1` (and the pieces `sage.report/1` reuses).

use serde::{Deserialize, Serialize};

use crate::anchor::{Anchor, AnchorKind, AnchorSource, DefectClass, Said};
use crate::history::attribution::MappedBy;
use crate::history::provenance::{Provenance, Snapshot};
use crate::history::range::Range;
use crate::history::{ProvenanceStatus, Reconstruction};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct FindingJson {
    pub id: String,
    pub file: String,
    pub cwe: Option<u32>,
    pub class: Option<DefectClass>,
    pub kind: AnchorKind,
    #[serde(default)]
    pub description: Option<String>,
    /// The text matched in each snapshot (scanner line ranges already read from the tip).
    #[serde(default)]
    pub fragments: Vec<String>,
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub source: Option<SourceJson>,
    /// Where the located code starts in the tip's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The CWE's name (`server-side request forgery (SSRF)`), where git sage knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwe_name: Option<String>,
    /// The located code as the tip's file has it, with a little context (reports only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tip_lines: Vec<TipLine>,
}

/// One line of the tip's anchored file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct TipLine {
    /// 1-based.
    pub line: u32,
    pub text: String,
    /// A line of the located code, not context.
    pub anchored: bool,
}

impl FindingJson {
    /// `CWE-918`, or `CWE-918 (given; bandit said CWE-22)` when the user's `--cwe` replaced
    /// the finding's.
    pub(crate) fn cwe_label(&self) -> Option<String> {
        let cwe = self.cwe?;
        let said = self.source.as_ref().and_then(|s| {
            let old = s.said.as_ref()?.cwe?;
            let who = s.tool.clone().unwrap_or_else(|| "the finding".into());
            Some(format!(" (given; {who} said CWE-{old})"))
        });
        Some(format!("CWE-{cwe}{}", said.unwrap_or_default()))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct SourceJson {
    pub format: String,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub rule: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub index: Option<usize>,
    /// What the finding said where the user's flags replaced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<Said>,
    /// The scanner's `security-severity` (0.0–10.0), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_severity: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct RangeJson {
    pub base: String,
    pub tip: String,
    #[serde(default)]
    pub tip_name: Option<String>,
    #[serde(default)]
    pub base_source: Option<String>,
    #[serde(default)]
    pub commits: usize,
    /// The branch analysed: the tip as named, or the branch `HEAD` is on (reports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The tip commit's committer date, RFC 3339 UTC (reports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tip_date: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct IntroducingWrite {
    /// 1-based position among the writes.
    pub write: usize,
    pub commit: String,
    pub turn: Option<u32>,
    pub mapped_by: Option<MappedBy>,
    /// Why no turn was given, when a session was read (docs/json.md).
    #[serde(default)]
    pub unmapped_reason: Option<crate::history::attribution::Unmapped>,
    pub agent: bool,
    #[serde(default)]
    pub summary: Option<String>,
    /// The first-parent merge that brought this commit in from a merged branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via_merge: Option<String>,
    /// What the write changed in the anchored file: the unified diff hunks around the
    /// anchored code (reports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct BaselineJson {
    pub commit: String,
    pub path: String,
    pub blob: Option<String>,
    pub present: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct WriteJson {
    pub write: usize,
    pub commit: String,
    pub turn: Option<u32>,
    #[serde(default)]
    pub mapped_by: Option<MappedBy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmapped_reason: Option<crate::history::attribution::Unmapped>,
    pub agent: bool,
    pub present_after: bool,
    #[serde(default)]
    pub changed: bool,
    #[serde(default)]
    pub merge: bool,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub blob: Option<String>,
    /// For writes rebuilt inside a commit by replaying the transcript: which edit (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via_merge: Option<String>,
    /// For text reports only: machines that want them ask git (`git show -s`).
    #[serde(skip)]
    pub author: Option<String>,
    #[serde(skip)]
    pub summary: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ProvenanceJson {
    pub status: ProvenanceStatus,
    pub introducing_write: Option<IntroducingWrite>,
    #[serde(default)]
    pub reason: Option<crate::history::status::Unlocated>,
    pub reconstruction: Reconstruction,
    #[serde(default)]
    pub baseline: Option<BaselineJson>,
    /// The writes that touched the anchored file and those the verdict names, unless every
    /// write was asked for (`--all-writes`, `sage.allWrites`): `write` stays each one's
    /// position among all the writes of the range.
    pub writes: Vec<WriteJson>,
    /// All the writes of the range, listed or not; absent in documents written before the
    /// list was pruned, whose `writes` hold them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_total: Option<usize>,
    /// How many of them `writes` leaves out: each one left the anchored file as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_omitted: Option<usize>,
    #[serde(default)]
    pub blobs_read: usize,
    #[serde(default)]
    pub notes: Vec<String>,
    /// What other attribution tools recorded about the writes that changed the file, and
    /// what it decided (docs/dialects.md); absent when they recorded nothing.
    #[serde(
        default,
        skip_deserializing,
        skip_serializing_if = "EvidenceJson::is_empty"
    )]
    pub evidence: EvidenceJson,
}

/// The dialects' claims about the anchored file's writes, the decisions they made, and the
/// records that could not be read.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub(crate) struct EvidenceJson {
    pub claims: Vec<crate::history::dialects::Claim>,
    pub decisions: Vec<crate::history::dialects::weigh::Decision>,
    pub skipped: Vec<crate::history::dialects::Skipped>,
}

impl EvidenceJson {
    fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.decisions.is_empty() && self.skipped.is_empty()
    }
}

/// The session a range was mapped to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct SessionJson {
    pub source: String,
    pub found_by: String,
    pub format: String,
    pub turns: usize,
    /// The turns of the range's task (docs/method.md#task-scope), and why.
    pub scope: crate::transcript::mapping::Scope,
    /// Lines of the session that could not be read and were left out (the first 200).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_lines: Vec<crate::transcript::Skipped>,
    /// Why this session was chosen among those found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_because: Option<crate::transcript::choose::Because>,
    /// The other sessions found, with what they hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub considered: Vec<crate::transcript::choose::Other>,
    /// The agent behind the session (its format's, or the one a sage-format session names);
    /// absent when the session does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's model, when the session names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// `git sage provenance --format json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ProvenanceDoc {
    pub schema: String,
    /// The program that wrote the document; absent in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::tool::Tool>,
    pub finding: FindingJson,
    pub range: RangeJson,
    pub provenance: ProvenanceJson,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionJson>,
}

pub(crate) const PROVENANCE_SCHEMA: &str = "sage.provenance/1";

fn source_json(s: &AnchorSource) -> SourceJson {
    SourceJson {
        format: s.format.to_string(),
        tool: s.tool.clone(),
        rule: s.rule.clone(),
        path: s.path.clone(),
        index: s.index,
        said: s.said.clone(),
        security_severity: s.security_severity.clone(),
    }
}

pub(crate) fn finding(anchor: &Anchor, prov: &Provenance) -> FindingJson {
    FindingJson {
        id: anchor.id.clone(),
        file: prov.file.clone(),
        cwe: anchor.cwe,
        class: anchor.class,
        kind: anchor.kind,
        description: anchor.description.clone(),
        fragments: prov.fragments.clone(),
        pattern: prov.pattern.clone(),
        source: Some(source_json(&anchor.source)),
        line: prov.tip_line,
        cwe_name: None,
        tip_lines: Vec::new(),
    }
}

pub(crate) fn range(r: &Range) -> RangeJson {
    RangeJson {
        base: r.base.to_string(),
        tip: r.tip.to_string(),
        tip_name: Some(r.tip_name.clone()),
        base_source: Some(r.base_source.describe()),
        commits: r.commits.len(),
        branch: None,
        tip_date: None,
    }
}

fn snapshot_blob(s: &Snapshot) -> Option<String> {
    s.blob.map(|b| b.hex())
}

impl ProvenanceJson {
    /// Every write of the range, listed or not.
    pub(crate) fn total_writes(&self) -> usize {
        self.writes_total.unwrap_or(self.writes.len())
    }

    /// The listed write at a position among all the writes (1-based).
    pub(crate) fn write_at(&self, write: usize) -> Option<&WriteJson> {
        self.writes
            .binary_search_by_key(&write, |w| w.write)
            .ok()
            .map(|i| &self.writes[i])
    }
}

/// `all_writes`: list every write of the range, not only those that touched the anchored file
/// (and those the verdict names, `Provenance::touched_or_named`).
pub(crate) fn provenance(r: &Range, p: &Provenance, all_writes: bool) -> ProvenanceJson {
    let listed = p.touched_or_named();
    let keep = |i: usize| all_writes || listed[i];
    let writes: Vec<WriteJson> = p
        .writes
        .iter()
        .enumerate()
        .filter(|&(i, _)| keep(i))
        .map(|(i, w)| WriteJson {
            write: i + 1,
            commit: w.commit.hex(),
            turn: w.turn,
            mapped_by: w.mapped_by,
            unmapped_reason: w.unmapped_reason.clone(),
            agent: w.agent,
            present_after: w.snapshot.present,
            changed: w.changed,
            merge: w.merge,
            path: Some(w.snapshot.path.clone()),
            blob: snapshot_blob(&w.snapshot),
            edit: w.edit,
            via_merge: w.via_merge.map(|m| m.hex()),
            author: w.author.clone(),
            summary: w.summary.clone(),
        })
        .collect();
    let omitted = p.writes.len() - writes.len();
    ProvenanceJson {
        status: p.status,
        introducing_write: p.introducing.map(|i| {
            let w = &p.writes[i];
            IntroducingWrite {
                write: i + 1,
                commit: w.commit.hex(),
                turn: w.turn,
                mapped_by: w.mapped_by,
                unmapped_reason: w.unmapped_reason.clone(),
                agent: w.agent,
                summary: w.summary.clone(),
                via_merge: w.via_merge.map(|m| m.hex()),
                diff: None,
            }
        }),
        reason: p.reason.clone(),
        reconstruction: p.reconstruction,
        baseline: Some(BaselineJson {
            commit: r.base.to_string(),
            path: p.base.path.clone(),
            blob: snapshot_blob(&p.base),
            present: p.base.present,
        }),
        writes_total: Some(p.writes.len()),
        writes_omitted: Some(omitted),
        writes,
        blobs_read: p.blobs_read,
        notes: p.notes.clone(),
        evidence: EvidenceJson {
            // The claims about the anchored file (at each write's path) and the commit-level
            // ones; another file's lines say nothing here.
            claims: p
                .evidence
                .claims
                .iter()
                .filter(|c| {
                    c.path.is_none()
                        || p.writes.iter().any(|w| {
                            w.commit == c.commit && c.path.as_deref() == Some(&w.snapshot.path)
                        })
                })
                .cloned()
                .collect(),
            decisions: p.decisions.clone(),
            skipped: p.evidence.skipped.clone(),
        },
    }
}

pub(crate) fn provenance_doc(
    anchor: &Anchor,
    r: &Range,
    p: &Provenance,
    session: Option<SessionJson>,
    all_writes: bool,
) -> ProvenanceDoc {
    ProvenanceDoc {
        schema: PROVENANCE_SCHEMA.to_string(),
        tool: Some(crate::tool::Tool::current()),
        finding: finding(anchor, p),
        range: range(r),
        provenance: provenance(r, p, all_writes),
        session,
    }
}
