//! The corpus tables: provenance statuses, origin types, origin before the introducing
//! write and missed opportunities — overall and by framework, model and reconstruction
//! condition — and agreement with human labels where the manifest has them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{CaseResult, CaseStatus, OriginLabel};
use crate::history::ProvenanceStatus;
use crate::origin::{OriginType, Status};
use crate::report::doc::ReportDoc;
use crate::stats::{self, TurnAgreement, Weights};

pub(crate) const SUMMARY_SCHEMA: &str = "sage.batch-summary/1";

pub(crate) const PROVENANCE_DOMAIN: [&str; 4] = [
    "inherited",
    "introduced",
    "introduced_by_other",
    "no_code_location",
];
const THREE_TYPES: [&str; 4] = [
    "inadequate_defence",
    "unaddressed_requirement",
    "defect_in_change",
    "undetermined",
];
const TWO_TYPES: [&str; 3] = ["not_noticed", "noticed_chose_poorly", "undetermined"];

/// `k` of `n`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub(crate) struct Count {
    pub k: usize,
    pub n: usize,
}

/// The tables' figures for one group of cases.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Group {
    pub n: usize,
    /// Every status of the domain, zero counts included.
    pub provenance: BTreeMap<String, usize>,
    pub origin_types: BTreeMap<String, usize>,
    /// Among cases the agent introduced, with a localised origin and a known introducing turn:
    /// how many origins come before that turn.
    pub origin_before_write: Count,
    pub with_missed_opportunities: Count,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct LabelAgreement {
    pub n: usize,
    pub agree: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa: Option<f64>,
}

/// Agreement of the tool with the manifest's human labels.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct HumanAgreement {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<LabelAgreement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub introducing_commit: Option<LabelAgreement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_type: Option<LabelAgreement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_turn: Option<TurnAgreement>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Failure {
    pub case: String,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub schema: String,
    /// The program that wrote the document.
    pub tool: crate::tool::Tool,
    pub cases: usize,
    pub ok: usize,
    pub failed: usize,
    pub provenance_domain: Vec<String>,
    pub origin_domain: Vec<String>,
    pub overall: Group,
    /// `framework`, `model`, `reconstruction` → label → figures.
    pub by: BTreeMap<String, BTreeMap<String, Group>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human: Option<HumanAgreement>,
    pub failures: Vec<Failure>,
}

pub(crate) fn origin_label(doc: &ReportDoc) -> &'static str {
    match (doc.origin.status, doc.origin.kind) {
        (Status::Localized, Some(k)) => k.as_str(),
        _ => "undetermined",
    }
}

fn origin_domain(docs: &[&ReportDoc]) -> Vec<&'static str> {
    let two = docs.iter().any(|d| {
        matches!(
            d.origin.kind,
            Some(OriginType::NotNoticed | OriginType::NoticedChosePoorly)
        )
    });
    if two {
        TWO_TYPES.to_vec()
    } else {
        THREE_TYPES.to_vec()
    }
}

fn group(docs: &[&ReportDoc], domain: &[&str]) -> Group {
    let mut g = Group {
        n: docs.len(),
        ..Group::default()
    };
    for s in PROVENANCE_DOMAIN {
        g.provenance.insert(s.into(), 0);
    }
    for s in domain {
        g.origin_types.insert((*s).into(), 0);
    }
    for d in docs {
        *g.provenance
            .entry(d.provenance.status.as_str().into())
            .or_default() += 1;
        *g.origin_types.entry(origin_label(d).into()).or_default() += 1;
        let write_turn = d
            .provenance
            .introducing_write
            .as_ref()
            .filter(|w| w.agent)
            .and_then(|w| w.turn);
        if d.provenance.status == ProvenanceStatus::Introduced
            && let (Some(o), Some(w)) = (
                d.origin
                    .turn
                    .filter(|_| d.origin.status == Status::Localized),
                write_turn,
            )
        {
            g.origin_before_write.n += 1;
            if o < w {
                g.origin_before_write.k += 1;
            }
        }
        g.with_missed_opportunities.n += 1;
        if !d.missed_opportunities.is_empty() {
            g.with_missed_opportunities.k += 1;
        }
    }
    g
}

fn index_of(domain: &[&str], v: &str) -> Option<usize> {
    domain.iter().position(|d| *d == v)
}

fn human(results: &[&CaseResult], origin_dom: &[&str]) -> Option<HumanAgreement> {
    let mut h = HumanAgreement::default();
    let ok: Vec<(&CaseResult, &ReportDoc)> = results
        .iter()
        .filter_map(|r| r.report.as_ref().map(|d| (*r, d)))
        .collect();
    // provenance status, κ over the full domain
    let pairs: Vec<(usize, usize)> = ok
        .iter()
        .filter_map(|(r, d)| {
            let l = r.labels.provenance?;
            Some((
                index_of(&PROVENANCE_DOMAIN, l.as_str())?,
                index_of(&PROVENANCE_DOMAIN, d.provenance.status.as_str())?,
            ))
        })
        .collect();
    if !pairs.is_empty() {
        let (a, b): (Vec<usize>, Vec<usize>) = pairs.iter().copied().unzip();
        h.provenance = Some(LabelAgreement {
            n: pairs.len(),
            agree: pairs.iter().filter(|(x, y)| x == y).count(),
            kappa: stats::cohen_kappa(&a, &b, PROVENANCE_DOMAIN.len(), Weights::Identity)
                .ok()
                .map(|c| c.value),
        });
    }
    let commits: Vec<bool> = ok
        .iter()
        .filter_map(|(r, d)| {
            let l = r
                .labels
                .introducing_commit
                .as_deref()?
                .trim()
                .to_ascii_lowercase();
            let tool = d
                .provenance
                .introducing_write
                .as_ref()
                .map(|w| w.commit.to_ascii_lowercase());
            Some(match tool {
                None => l == "none",
                Some(c) => l.len() >= 4 && c.starts_with(&l),
            })
        })
        .collect();
    if !commits.is_empty() {
        h.introducing_commit = Some(LabelAgreement {
            n: commits.len(),
            agree: commits.iter().filter(|x| **x).count(),
            kappa: None,
        });
    }
    let types: Vec<(usize, usize)> = ok
        .iter()
        .filter_map(|(r, d)| {
            let l = r.labels.origin_type?.as_str();
            Some((
                index_of(origin_dom, l)?,
                index_of(origin_dom, origin_label(d))?,
            ))
        })
        .collect();
    if !types.is_empty() {
        let (a, b): (Vec<usize>, Vec<usize>) = types.iter().copied().unzip();
        h.origin_type = Some(LabelAgreement {
            n: types.len(),
            agree: types.iter().filter(|(x, y)| x == y).count(),
            kappa: stats::cohen_kappa(&a, &b, origin_dom.len(), Weights::Identity)
                .ok()
                .map(|c| c.value),
        });
    }
    let turns: Vec<(Option<u32>, Option<u32>)> = ok
        .iter()
        .filter(|(r, _)| {
            r.labels.origin_turn.is_some()
                || r.labels.origin_type == Some(OriginLabel::Undetermined)
        })
        .map(|(r, d)| {
            (
                r.labels.origin_turn,
                d.origin
                    .turn
                    .filter(|_| d.origin.status == Status::Localized),
            )
        })
        .collect();
    if !turns.is_empty() {
        let (a, b): (Vec<Option<u32>>, Vec<Option<u32>>) = turns.into_iter().unzip();
        h.origin_turn = Some(stats::turn_agreement(&a, &b));
    }
    (h != HumanAgreement::default()).then_some(h)
}

/// A grouping's label for a result.
type KeyFn = fn(&CaseResult) -> String;

/// A table: header and rows of cells.
type Table = (Vec<String>, Vec<Vec<String>>);

/// The tables over a set of results.
pub(crate) fn summarise(results: &[CaseResult]) -> Summary {
    let ok: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok && r.report.is_some())
        .collect();
    let docs: Vec<&ReportDoc> = ok.iter().filter_map(|r| r.report.as_ref()).collect();
    let domain = origin_domain(&docs);
    let mut by: BTreeMap<String, BTreeMap<String, Group>> = BTreeMap::new();
    let keys: [(&str, KeyFn); 3] = [
        ("framework", |r| {
            r.labels
                .framework
                .clone()
                .unwrap_or_else(|| "(none)".into())
        }),
        ("model", |r| {
            r.labels.model.clone().unwrap_or_else(|| "(none)".into())
        }),
        ("reconstruction", |r| {
            r.report
                .as_ref()
                .map(|d| d.provenance.reconstruction.as_str().to_string())
                .unwrap_or_default()
        }),
    ];
    for (name, key) in keys {
        let mut parts: BTreeMap<String, Vec<&ReportDoc>> = BTreeMap::new();
        for r in &ok {
            parts
                .entry(key(r))
                .or_default()
                .push(r.report.as_ref().expect("ok results have reports"));
        }
        // A grouping where every case has no label says nothing.
        if parts.len() == 1 && parts.contains_key("(none)") {
            continue;
        }
        by.insert(
            name.into(),
            parts
                .into_iter()
                .map(|(k, v)| (k, group(&v, &domain)))
                .collect(),
        );
    }
    let all: Vec<&CaseResult> = results.iter().collect();
    Summary {
        schema: SUMMARY_SCHEMA.into(),
        tool: crate::tool::Tool::current(),
        cases: results.len(),
        ok: ok.len(),
        failed: results.len() - ok.len(),
        provenance_domain: PROVENANCE_DOMAIN.iter().map(|s| s.to_string()).collect(),
        origin_domain: domain.iter().map(|s| s.to_string()).collect(),
        overall: group(&docs, &domain),
        by,
        human: human(&all, &domain),
        failures: results
            .iter()
            .filter(|r| r.status == CaseStatus::Failed)
            .map(|r| Failure {
                case: r.case.clone(),
                error: r.error.clone().unwrap_or_default(),
            })
            .collect(),
    }
}

fn cell(k: usize, n: usize) -> String {
    if n == 0 {
        "–".into()
    } else {
        format!("{k} ({:.0}%)", 100.0 * k as f64 / n as f64)
    }
}

fn short(s: &str) -> String {
    match s {
        "introduced_by_other" => "by other".into(),
        "no_code_location" => "no location".into(),
        "inadequate_defence" => "defence".into(),
        "unaddressed_requirement" => "requirement".into(),
        "defect_in_change" => "change".into(),
        "noticed_chose_poorly" => "chose poorly".into(),
        other => other.replace('_', " "),
    }
}

/// Rows of (label, group) in table order: all, then each grouping.
fn rows(s: &Summary) -> Vec<(String, &Group)> {
    let mut out = vec![("all".to_string(), &s.overall)];
    for (name, groups) in &s.by {
        for (label, g) in groups {
            out.push((format!("{name} {label}"), g));
        }
    }
    out
}

fn table_cells(s: &Summary) -> (Table, Table) {
    let mut ph = vec!["".to_string(), "n".into()];
    ph.extend(s.provenance_domain.iter().map(|d| short(d)));
    let mut oh = vec!["".to_string(), "n".into()];
    oh.extend(s.origin_domain.iter().map(|d| short(d)));
    oh.push("origin < write".into());
    oh.push("missed opp.".into());
    let mut prows = Vec::new();
    let mut orows = Vec::new();
    for (label, g) in rows(s) {
        let mut p = vec![label.clone(), g.n.to_string()];
        p.extend(
            s.provenance_domain
                .iter()
                .map(|d| cell(g.provenance.get(d).copied().unwrap_or(0), g.n)),
        );
        prows.push(p);
        let mut o = vec![label, g.n.to_string()];
        o.extend(
            s.origin_domain
                .iter()
                .map(|d| cell(g.origin_types.get(d).copied().unwrap_or(0), g.n)),
        );
        o.push(if g.origin_before_write.n == 0 {
            "–".into()
        } else {
            format!("{}/{}", g.origin_before_write.k, g.origin_before_write.n)
        });
        o.push(cell(
            g.with_missed_opportunities.k,
            g.with_missed_opportunities.n,
        ));
        orows.push(o);
    }
    ((ph, prows), (oh, orows))
}

fn aligned(header: &[String], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([header[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |r: &[String]| -> String {
        let mut s = String::new();
        for (i, c) in r.iter().enumerate() {
            let pad = widths[i] - c.chars().count();
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str("  ");
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

fn human_lines(h: &HumanAgreement) -> Vec<String> {
    let mut out = Vec::new();
    let k = |x: Option<f64>| x.map(|v| format!(", κ {v:.3}")).unwrap_or_default();
    if let Some(p) = &h.provenance {
        out.push(format!(
            "provenance status: {}/{} agree{}",
            p.agree,
            p.n,
            k(p.kappa)
        ));
    }
    if let Some(p) = &h.introducing_commit {
        out.push(format!("introducing write: {}/{} agree", p.agree, p.n));
    }
    if let Some(p) = &h.origin_type {
        out.push(format!(
            "origin type: {}/{} agree{}",
            p.agree,
            p.n,
            k(p.kappa)
        ));
    }
    if let Some(t) = &h.origin_turn {
        out.push(format!(
            "origin turn: exact {}/{}, within ±1 {}/{}",
            t.exact, t.n, t.within_one, t.n
        ));
    }
    out
}

pub(crate) fn text(s: &Summary) -> String {
    let ((ph, prows), (oh, orows)) = table_cells(s);
    let mut out = format!(
        "git sage batch · {} case(s): {} analysed, {} failed\n\nPROVENANCE\n",
        s.cases, s.ok, s.failed
    );
    out.push_str(&aligned(&ph, &prows));
    out.push_str("\nORIGIN  (origin < write: origins before the agent's introducing write, of those with both)\n");
    out.push_str(&aligned(&oh, &orows));
    if let Some(h) = &s.human {
        out.push_str("\nAGREEMENT WITH HUMAN LABELS\n");
        for l in human_lines(h) {
            out.push_str(&format!("  {l}\n"));
        }
    }
    if !s.failures.is_empty() {
        out.push_str("\nFAILED (rerun the same command to retry them)\n");
        for f in &s.failures {
            out.push_str(&format!("  {}: {}\n", f.case, f.error));
        }
    }
    out
}

fn md_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        header
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for r in rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter()
                .map(|c| c.replace('|', "\\|"))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

pub(crate) fn markdown(s: &Summary) -> String {
    let ((ph, prows), (oh, orows)) = table_cells(s);
    let mut out = format!(
        "## git sage batch\n\n{} case(s): {} analysed, {} failed.\n\n### Provenance\n\n",
        s.cases, s.ok, s.failed
    );
    out.push_str(&md_table(&ph, &prows));
    out.push_str("\n### Origin\n\n*origin < write*: origins before the agent's introducing write, of the cases with both.\n\n");
    out.push_str(&md_table(&oh, &orows));
    if let Some(h) = &s.human {
        out.push_str("\n### Agreement with human labels\n\n");
        for l in human_lines(h) {
            out.push_str(&format!("- {l}\n"));
        }
    }
    if !s.failures.is_empty() {
        out.push_str("\n### Failed cases\n\n");
        for f in &s.failures {
            out.push_str(&format!("- `{}`: {}\n", f.case, f.error));
        }
    }
    out
}
