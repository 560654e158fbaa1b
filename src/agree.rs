//! Consistency between runs or judges (docs/method.md#agreement): origin-type agreement (percent,
//! Cohen's κ per pair, Krippendorff's α, Gwet's AC1, Fleiss' κ), exact and ±1 origin-turn agreement
//! over the cases every run localised, per-dimension agreement of the TR/DI/VR/SA scores, and
//! task-disjoint resampling and leave-one-task-out ranges. Full category domains always.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::batch::CaseResult;
use crate::batch::summary::origin_label;
use crate::judge::scores::Scores;
use crate::origin::{OriginType, Status};
use crate::stats::{self, Coefficient, Metric, Spread, TurnAgreement, Weights};

pub(crate) const AGREEMENT_SCHEMA: &str = "sage.agreement/1";
const SCORE_DOMAIN: [f64; 4] = [0.0, 1.0, 2.0, 3.0];

/// What one rater (a run, or a judge/repeat inside one run) said about one case.
#[derive(Debug, Clone)]
pub(crate) struct Rating {
    pub origin: &'static str,
    pub turn: Option<u32>,
    /// Per-turn scores, when the run kept them (scored turns only).
    pub scores: BTreeMap<u32, Scores>,
}

/// Ratings: `raters[r]` maps a case id to that rater's rating.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ratings {
    pub raters: Vec<String>,
    pub by_rater: Vec<BTreeMap<String, Rating>>,
    /// case → task (for resampling)
    pub tasks: BTreeMap<String, String>,
    pub two_types: bool,
}

fn rating(d: &crate::report::doc::ReportDoc) -> Rating {
    Rating {
        origin: origin_label(d),
        turn: d
            .origin
            .turn
            .filter(|_| d.origin.status == Status::Localized),
        scores: d
            .turns
            .iter()
            .filter(|t| t.score.applicable)
            .filter_map(|t| t.score.scores.map(|s| (t.score.turn, s)))
            .collect(),
    }
}

fn note_task(tasks: &mut BTreeMap<String, String>, r: &CaseResult) {
    if let Some(t) = &r.labels.task {
        tasks.entry(r.case.clone()).or_insert_with(|| t.clone());
    }
}

fn is_two(d: &crate::report::doc::ReportDoc) -> bool {
    matches!(
        d.origin.kind,
        Some(OriginType::NotNoticed | OriginType::NoticedChosePoorly)
    )
}

/// Each results file is a rater.
pub(crate) fn from_runs(runs: &[(String, Vec<CaseResult>)]) -> Ratings {
    let mut out = Ratings::default();
    for (name, results) in runs {
        let mut m = BTreeMap::new();
        for r in results {
            note_task(&mut out.tasks, r);
            if let Some(d) = &r.report {
                out.two_types |= is_two(d);
                m.insert(r.case.clone(), rating(d));
            }
        }
        out.raters.push(name.clone());
        out.by_rater.push(m);
    }
    out
}

/// One results file whose reports hold several judges or repeats: each is a rater (origins
/// only; the other sets' per-turn scores are not in the report).
pub(crate) fn from_sets(results: &[CaseResult]) -> Ratings {
    let mut out = Ratings::default();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for r in results {
        note_task(&mut out.tasks, r);
        let Some(d) = &r.report else { continue };
        out.two_types |= is_two(d);
        let primary = format!(
            "{}{}",
            d.judge.name,
            d.judge.repeat.map(|k| format!(" #{k}")).unwrap_or_default()
        );
        let mut put = |name: String, rt: Rating| {
            let i = *index.entry(name.clone()).or_insert_with(|| {
                out.raters.push(name);
                out.by_rater.push(BTreeMap::new());
                out.raters.len() - 1
            });
            out.by_rater[i].insert(r.case.clone(), rt);
        };
        put(primary, rating(d));
        for alt in &d.other_origins {
            let name = format!(
                "{}{}",
                alt.judge,
                alt.repeat.map(|k| format!(" #{k}")).unwrap_or_default()
            );
            put(
                name,
                Rating {
                    origin: match (alt.origin.status, alt.origin.kind) {
                        (Status::Localized, Some(k)) => k.as_str(),
                        _ => "undetermined",
                    },
                    turn: alt
                        .origin
                        .turn
                        .filter(|_| alt.origin.status == Status::Localized),
                    scores: BTreeMap::new(),
                },
            );
        }
    }
    out
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct PairKappa {
    pub a: String,
    pub b: String,
    pub n: usize,
    pub agree: usize,
    pub kappa: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa_linear: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa_quadratic: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Resampled {
    /// Median and central 95% over task-disjoint halves.
    pub task_halves: Option<Spread>,
    /// Lowest and highest value leaving one task out, and how many tasks.
    pub leave_one_task_out: Option<(f64, f64, usize)>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct TypeAgreement {
    pub domain: Vec<String>,
    /// Cases rated by at least two raters.
    pub n: usize,
    /// Cases rated by every rater, and on how many they all agree.
    pub n_all: usize,
    pub all_agree: usize,
    pub percent_agreement: Option<f64>,
    pub alpha_nominal: Option<f64>,
    pub ac1: Option<Coefficient>,
    pub fleiss_kappa: Option<Coefficient>,
    pub pairs: Vec<PairKappa>,
    pub resampled: Resampled,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct TurnPair {
    pub a: String,
    pub b: String,
    /// Over the cases both rated; "no origin" is its own outcome.
    pub with_none: TurnAgreement,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct TurnAgreementAll {
    /// Cases every rater localised, and how many share the exact turn / lie within one turn.
    pub localised_by_all: usize,
    pub exact: usize,
    pub within_one: usize,
    pub pairs: Vec<TurnPair>,
    /// Share of exact agreement, resampled.
    pub resampled: Resampled,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct DimensionAgreement {
    /// tr, di, vr or sa.
    pub dimension: String,
    /// (case, turn) units with at least two scores.
    pub units: usize,
    pub alpha_ordinal: Option<f64>,
    pub alpha_interval: Option<f64>,
    pub ac2_quadratic: Option<Coefficient>,
    pub pairs: Vec<PairKappa>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Agreement {
    pub schema: String,
    /// The program that wrote the document.
    pub tool: crate::tool::Tool,
    pub raters: Vec<String>,
    pub cases: usize,
    pub origin_type: TypeAgreement,
    pub origin_turn: TurnAgreementAll,
    /// tr, di, vr, sa in that order — when the raters kept per-turn scores.
    pub dimensions: Vec<DimensionAgreement>,
    /// Cases whose origin types differ between raters: review them by hand.
    pub disagreements: Vec<String>,
    pub splits: usize,
    pub seed: u64,
    pub notes: Vec<String>,
}

fn ok<T>(r: Result<T, stats::Undefined>) -> Option<T> {
    r.ok()
}

/// The origin types a case can get: the two of a missed weakness, or the four of a flaw, and
/// "undetermined" last — the full domain, whether or not every type occurs.
fn type_domain(two_types: bool) -> Vec<&'static str> {
    if two_types {
        vec!["not_noticed", "noticed_chose_poorly", "undetermined"]
    } else {
        vec![
            "inadequate_defence",
            "unaddressed_requirement",
            "defect_in_change",
            "undetermined",
        ]
    }
}

/// The cases the statistics run over, in id order, with each one's task for resampling.
struct Frame<'a> {
    cases: Vec<&'a String>,
    tasks: Vec<String>,
    splits: usize,
    seed: u64,
}

impl Frame<'_> {
    /// Every case any rater rated; a case without a task label is its own task (said in
    /// `notes`).
    fn new<'a>(r: &'a Ratings, splits: usize, seed: u64, notes: &mut Vec<String>) -> Frame<'a> {
        let mut cases: Vec<&String> = r.by_rater.iter().flat_map(|m| m.keys()).collect();
        cases.sort();
        cases.dedup();
        let tasks: Vec<String> = cases
            .iter()
            .map(|c| r.tasks.get(*c).cloned().unwrap_or_else(|| (*c).clone()))
            .collect();
        if cases.iter().any(|c| !r.tasks.contains_key(*c)) {
            notes.push("some cases have no task label: they are resampled as their own task, which overstates precision when tasks repeat".into());
        }
        Frame {
            cases,
            tasks,
            splits,
            seed,
        }
    }

    /// A statistic over a selection of cases, over task-disjoint halves and with each task
    /// left out.
    fn resample(&self, metric: &dyn Fn(&[usize]) -> Option<f64>) -> Resampled {
        Resampled {
            task_halves: stats::task_halves(&self.tasks, self.splits, self.seed, metric),
            leave_one_task_out: stats::leave_one_task_out(&self.tasks, metric),
        }
    }
}

/// The statistics over ratings; `splits` task-disjoint halves from `seed`.
pub(crate) fn agreement(r: &Ratings, splits: usize, seed: u64) -> Agreement {
    let mut notes = Vec::new();
    let frame = Frame::new(r, splits, seed, &mut notes);
    let domain = type_domain(r.two_types);
    let idx = |v: &str| domain.iter().position(|d| *d == v);
    // units × raters of origin-type indices
    let type_units: Vec<Vec<Option<usize>>> = frame
        .cases
        .iter()
        .map(|c| {
            r.by_rater
                .iter()
                .map(|m| m.get(*c).and_then(|x| idx(x.origin)))
                .collect()
        })
        .collect();
    let origin_type = type_agreement(r, &frame, &domain, &type_units);
    let origin_turn = turn_agreement(r, &frame);

    let mut dimensions = Vec::new();
    let has_scores = r
        .by_rater
        .iter()
        .filter(|m| m.values().any(|x| !x.scores.is_empty()))
        .count()
        >= 2;
    if has_scores {
        for (name, get) in [
            ("tr", (|s: &Scores| s.tr) as fn(&Scores) -> u8),
            ("di", |s| s.di),
            ("vr", |s| s.vr),
            ("sa", |s| s.sa),
        ] {
            dimensions.push(dimension_agreement(r, &frame.cases, name, get));
        }
    } else {
        notes.push("per-dimension agreement needs per-turn scores from two or more runs".into());
    }
    let disagreements = (0..frame.cases.len())
        .filter(|&i| {
            let v: Vec<usize> = type_units[i].iter().flatten().copied().collect();
            v.windows(2).any(|w| w[0] != w[1])
        })
        .map(|i| frame.cases[i].clone())
        .collect();
    Agreement {
        schema: AGREEMENT_SCHEMA.into(),
        tool: crate::tool::Tool::current(),
        raters: r.raters.clone(),
        cases: frame.cases.len(),
        origin_type,
        origin_turn,
        dimensions,
        disagreements,
        splits,
        seed,
        notes,
    }
}

/// Cohen's κ for each pair of raters over the units both rated; on ordinal scores the
/// linearly and quadratically weighted κ too.
fn pair_kappas(
    raters: &[String],
    units: &[Vec<Option<usize>>],
    categories: usize,
    ordinal: bool,
) -> Vec<PairKappa> {
    let k = raters.len();
    let mut pairs = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            let both: Vec<(usize, usize)> =
                units.iter().filter_map(|u| Some((u[a]?, u[b]?))).collect();
            let (x, y): (Vec<usize>, Vec<usize>) = both.iter().copied().unzip();
            let kap = |w| ok(stats::cohen_kappa(&x, &y, categories, w)).map(|c| c.value);
            pairs.push(PairKappa {
                a: raters[a].clone(),
                b: raters[b].clone(),
                n: both.len(),
                agree: both.iter().filter(|(p, q)| p == q).count(),
                kappa: kap(Weights::Identity),
                kappa_linear: if ordinal { kap(Weights::Linear) } else { None },
                kappa_quadratic: if ordinal {
                    kap(Weights::Quadratic)
                } else {
                    None
                },
            });
        }
    }
    pairs
}

/// Agreement on the origin type: over the cases two or more raters rated, and over those all
/// rated.
fn type_agreement(
    r: &Ratings,
    frame: &Frame,
    domain: &[&str],
    type_units: &[Vec<Option<usize>>],
) -> TypeAgreement {
    let dom_values: Vec<f64> = (0..domain.len()).map(|i| i as f64).collect();
    let type_stats = |sel: &[usize]| -> Option<f64> {
        let units: Vec<Vec<Option<usize>>> = sel.iter().map(|&i| type_units[i].clone()).collect();
        stats::krippendorff_alpha(&units, &dom_values, Metric::Nominal).ok()
    };
    let rated2: Vec<usize> = (0..frame.cases.len())
        .filter(|&i| type_units[i].iter().flatten().count() >= 2)
        .collect();
    let all: Vec<usize> = (0..frame.cases.len())
        .filter(|&i| type_units[i].iter().all(Option::is_some))
        .collect();
    let all_agree = all
        .iter()
        .filter(|&&i| type_units[i].windows(2).all(|w| w[0] == w[1]))
        .count();
    let units2: Vec<Vec<Option<usize>>> = rated2.iter().map(|&i| type_units[i].clone()).collect();
    TypeAgreement {
        domain: domain.iter().map(|s| s.to_string()).collect(),
        n: rated2.len(),
        n_all: all.len(),
        all_agree,
        percent_agreement: (!all.is_empty()).then(|| all_agree as f64 / all.len() as f64),
        alpha_nominal: ok(stats::krippendorff_alpha(
            &units2,
            &dom_values,
            Metric::Nominal,
        )),
        ac1: ok(stats::gwet(&units2, &dom_values, Weights::Identity)),
        fleiss_kappa: ok(stats::fleiss_kappa(&units2, &dom_values, Weights::Identity)),
        pairs: pair_kappas(&r.raters, type_units, domain.len(), false),
        resampled: frame.resample(&type_stats),
    }
}

/// Agreement on the origin turn: exact and within one over the cases every rater localised,
/// and per pair with "no origin" as an outcome of its own.
fn turn_agreement(r: &Ratings, frame: &Frame) -> TurnAgreementAll {
    let cases = &frame.cases;
    let k = r.raters.len();
    let turns_of = |i: usize| -> Vec<Option<Option<u32>>> {
        r.by_rater
            .iter()
            .map(|m| m.get(cases[i]).map(|x| x.turn))
            .collect()
    };
    let localised: Vec<(usize, Vec<u32>)> = (0..cases.len())
        .filter_map(|i| {
            let t = turns_of(i);
            let v: Option<Vec<u32>> = t.iter().map(|x| x.flatten()).collect();
            v.map(|v| (i, v))
        })
        .collect();
    let spread_ok = |v: &[u32]| v.iter().max().unwrap_or(&0) - v.iter().min().unwrap_or(&0);
    let exact = localised.iter().filter(|(_, v)| spread_ok(v) == 0).count();
    let within = localised.iter().filter(|(_, v)| spread_ok(v) <= 1).count();
    let mut tpairs = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            let both: Vec<(Option<u32>, Option<u32>)> = (0..cases.len())
                .filter_map(|i| {
                    let t = turns_of(i);
                    Some((t[a]?, t[b]?))
                })
                .collect();
            let (x, y): (Vec<Option<u32>>, Vec<Option<u32>>) = both.into_iter().unzip();
            tpairs.push(TurnPair {
                a: r.raters[a].clone(),
                b: r.raters[b].clone(),
                with_none: stats::turn_agreement(&x, &y),
            });
        }
    }
    let exact_share = |sel: &[usize]| -> Option<f64> {
        let set: std::collections::HashSet<usize> = sel.iter().copied().collect();
        let l: Vec<&(usize, Vec<u32>)> =
            localised.iter().filter(|(i, _)| set.contains(i)).collect();
        (!l.is_empty())
            .then(|| l.iter().filter(|(_, v)| spread_ok(v) == 0).count() as f64 / l.len() as f64)
    };
    TurnAgreementAll {
        localised_by_all: localised.len(),
        exact,
        within_one: within,
        pairs: tpairs,
        resampled: frame.resample(&exact_share),
    }
}

/// One score dimension's units × raters: a unit is a (case, turn) that two or more raters
/// scored.
fn score_units(r: &Ratings, cases: &[&String], get: fn(&Scores) -> u8) -> Vec<Vec<Option<usize>>> {
    let mut units: Vec<Vec<Option<usize>>> = Vec::new();
    for c in cases {
        let mut turns: Vec<u32> = r
            .by_rater
            .iter()
            .filter_map(|m| m.get(*c))
            .flat_map(|x| x.scores.keys().copied())
            .collect();
        turns.sort();
        turns.dedup();
        for t in turns {
            let row: Vec<Option<usize>> = r
                .by_rater
                .iter()
                .map(|m| {
                    m.get(*c)
                        .and_then(|x| x.scores.get(&t))
                        .map(|s| get(s).min(3) as usize)
                })
                .collect();
            if row.iter().flatten().count() >= 2 {
                units.push(row);
            }
        }
    }
    units
}

/// Agreement on one score dimension (tr, di, vr or sa), the scores as ordered categories.
fn dimension_agreement(
    r: &Ratings,
    cases: &[&String],
    name: &str,
    get: fn(&Scores) -> u8,
) -> DimensionAgreement {
    let units = score_units(r, cases, get);
    DimensionAgreement {
        dimension: name.to_string(),
        units: units.len(),
        alpha_ordinal: ok(stats::krippendorff_alpha(
            &units,
            &SCORE_DOMAIN,
            Metric::Ordinal,
        )),
        alpha_interval: ok(stats::krippendorff_alpha(
            &units,
            &SCORE_DOMAIN,
            Metric::Interval,
        )),
        ac2_quadratic: ok(stats::gwet(&units, &SCORE_DOMAIN, Weights::Quadratic)),
        pairs: pair_kappas(&r.raters, &units, 4, true),
    }
}

fn f(x: Option<f64>) -> String {
    x.map_or("undefined".into(), |v| format!("{v:.3}"))
}

fn resampled(r: &Resampled) -> String {
    let mut s = String::new();
    if let Some(h) = &r.task_halves {
        s.push_str(&format!(
            "task-disjoint halves: median {:.3}, 95% {:.3}–{:.3} ({} splits)",
            h.median, h.lo, h.hi, h.n
        ));
    }
    if let Some((lo, hi, n)) = r.leave_one_task_out {
        if !s.is_empty() {
            s.push_str("; ");
        }
        s.push_str(&format!("leave-one-task-out {lo:.3}–{hi:.3} ({n} tasks)"));
    }
    s
}

fn pct(k: usize, n: usize) -> String {
    if n == 0 {
        format!("{k}/{n}")
    } else {
        format!("{k}/{n} ({:.1}%)", 100.0 * k as f64 / n as f64)
    }
}

/// Lines for people; `md` adds Markdown structure.
pub(crate) fn render(a: &Agreement, md: bool) -> String {
    let h = |t: &str| {
        if md {
            format!("\n### {t}\n\n")
        } else {
            format!("\n{}\n", t.to_uppercase())
        }
    };
    let li = if md { "- " } else { "  " };
    let mut out = if md {
        "## git sage agree\n\n".to_string()
    } else {
        String::new()
    };
    out.push_str(&format!(
        "{} rater(s): {}; {} case(s)\n",
        a.raters.len(),
        a.raters.join(", "),
        a.cases
    ));
    let t = &a.origin_type;
    out.push_str(&h("Origin type"));
    out.push_str(&format!("{li}domain: {}\n", t.domain.join(", ")));
    out.push_str(&format!(
        "{li}all raters agree: {}\n",
        pct(t.all_agree, t.n_all)
    ));
    out.push_str(&format!(
        "{li}Krippendorff α (nominal) {} · Gwet AC1 {} · Fleiss κ {} (n = {})\n",
        f(t.alpha_nominal),
        f(t.ac1.map(|c| c.value)),
        f(t.fleiss_kappa.map(|c| c.value)),
        t.n
    ));
    for p in &t.pairs {
        out.push_str(&format!(
            "{li}{} vs {}: {} agree, Cohen κ {}\n",
            p.a,
            p.b,
            pct(p.agree, p.n),
            f(p.kappa)
        ));
    }
    let rs = resampled(&t.resampled);
    if !rs.is_empty() {
        out.push_str(&format!("{li}α {rs}\n"));
    }
    let o = &a.origin_turn;
    out.push_str(&h("Origin turn"));
    out.push_str(&format!(
        "{li}over the {} case(s) every rater localised: exact {}, within ±1 {}\n",
        o.localised_by_all,
        pct(o.exact, o.localised_by_all),
        pct(o.within_one, o.localised_by_all)
    ));
    for p in &o.pairs {
        out.push_str(&format!(
            "{li}{} vs {} (no origin as an outcome): exact {}, within ±1 {}\n",
            p.a,
            p.b,
            pct(p.with_none.exact, p.with_none.n),
            pct(p.with_none.within_one, p.with_none.n)
        ));
    }
    let rs = resampled(&o.resampled);
    if !rs.is_empty() {
        out.push_str(&format!("{li}exact share {rs}\n"));
    }
    if !a.dimensions.is_empty() {
        out.push_str(&h("Scores per dimension (0–3)"));
        for d in &a.dimensions {
            let name = &d.dimension;
            out.push_str(&format!(
                "{li}{}: α ordinal {} · α interval {} · AC2 (quadratic) {} (units {})\n",
                name.to_uppercase(),
                f(d.alpha_ordinal),
                f(d.alpha_interval),
                f(d.ac2_quadratic.map(|c| c.value)),
                d.units
            ));
            for p in &d.pairs {
                out.push_str(&format!(
                    "{li}  {} vs {}: κ {} · linear {} · quadratic {} (n = {})\n",
                    p.a,
                    p.b,
                    f(p.kappa),
                    f(p.kappa_linear),
                    f(p.kappa_quadratic),
                    p.n
                ));
            }
        }
    }
    if !a.disagreements.is_empty() {
        out.push_str(&h("Review by hand (origin types differ)"));
        for c in &a.disagreements {
            out.push_str(&format!("{li}{c}\n"));
        }
    }
    for n in &a.notes {
        out.push_str(&format!("\nnote: {n}\n"));
    }
    out
}
