//! Agreement statistics for judges and runs: Cohen's κ, Krippendorff's α, Gwet's AC1/AC2,
//! Fleiss' κ, Brennan–Prediger, origin-turn agreement, and task-disjoint resampling.
//!
//! Everything here is pure and written here: no maintained Rust crate computes these chance-
//! corrected coefficients over an explicit category domain with irrCAC's weights, and the
//! test vectors pin them to the reference implementations. Ratings are indices into an explicit category
//! domain so that unused categories still count (a 0–3 rubric where nobody scored 2 is still a
//! four-category rubric, and several coefficients change if the domain is inferred instead).
//! Definitions follow scikit-learn (`cohen_kappa_score`), the `krippendorff` package and irrCAC
//! (`raw.py`, `weights.py`); see `fixtures/stats/VECTORS.md` for the test vectors.

use std::fmt;

use serde::Serialize;

/// Why a coefficient is undefined (e.g. every rating in one category, fewer than two pairable values).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Undefined(pub String);

impl fmt::Display for Undefined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "undefined: {}", self.0)
    }
}

impl std::error::Error for Undefined {}

fn undefined(why: impl Into<String>) -> Undefined {
    Undefined(why.into())
}

/// A chance-corrected coefficient with its observed and expected agreement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Coefficient {
    pub value: f64,
    pub pa: f64,
    pub pe: f64,
}

/// Krippendorff metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    Nominal,
    Ordinal,
    Interval,
    // The other published metrics and weights are checked against irrCAC's vectors, and only
    // those tests use them.
    #[cfg(test)]
    Ratio,
}

/// Weights (irrCAC names). Identity gives AC1 / plain κ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Weights {
    Identity,
    Linear,
    Quadratic,
    Ordinal,
    #[cfg(test)]
    Radical,
    #[cfg(test)]
    Ratio,
    #[cfg(test)]
    Circular,
    #[cfg(test)]
    Bipolar,
}

/// Below this, 1 − pₑ is treated as zero: chance already explains all agreement, and dividing
/// by rounding noise would report a meaningless huge or NaN coefficient.
const NO_ROOM_FOR_AGREEMENT: f64 = 1e-12;

fn chance_corrected(pa: f64, pe: f64) -> Result<Coefficient, Undefined> {
    let room = 1.0 - pe;
    if !pa.is_finite() || !pe.is_finite() || room.abs() < NO_ROOM_FOR_AGREEMENT {
        return Err(undefined(
            "expected agreement is 1 (all ratings in one category)",
        ));
    }
    Ok(Coefficient {
        value: (pa - pe) / room,
        pa,
        pe,
    })
}

/// The irrCAC agreement-weight matrix (1 on the diagonal, 0..1 off it) for a category domain.
///
/// `domain` holds the categories' numeric values in ascending order. Linear, quadratic, radical,
/// ratio, circular and bipolar weights use those values; ordinal weights use only the positions,
/// as irrCAC does. Ratio weights are undefined when 0 is a category, and every non-identity
/// scheme needs at least two distinct values.
pub(crate) fn weight_matrix(domain: &[f64], weights: Weights) -> Result<Vec<Vec<f64>>, Undefined> {
    let q = domain.len();
    if q == 0 {
        return Err(undefined("the category domain is empty"));
    }
    if domain.iter().any(|x| !x.is_finite()) {
        return Err(undefined("the category domain has a non-finite value"));
    }
    let min = domain.iter().copied().fold(f64::INFINITY, f64::min);
    let max = domain.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = max - min;
    let square = |f: &dyn Fn(usize, usize) -> f64| -> Vec<Vec<f64>> {
        (0..q).map(|k| (0..q).map(|l| f(k, l)).collect()).collect()
    };
    // Schemes defined as a distance scaled by its largest value.
    let normalised = |distance: Vec<Vec<f64>>| -> Result<Vec<Vec<f64>>, Undefined> {
        let largest = distance.iter().flatten().copied().fold(0.0, f64::max);
        if largest <= 0.0 {
            return Err(undefined("weights need at least two distinct categories"));
        }
        Ok(distance
            .into_iter()
            .map(|row| row.into_iter().map(|d| 1.0 - d / largest).collect())
            .collect())
    };
    if weights != Weights::Identity && weights != Weights::Ordinal && span <= 0.0 {
        return Err(undefined("weights need at least two distinct categories"));
    }
    let matrix = match weights {
        Weights::Identity => square(&|k, l| if k == l { 1.0 } else { 0.0 }),
        Weights::Linear => square(&|k, l| 1.0 - (domain[k] - domain[l]).abs() / span),
        Weights::Quadratic => square(&|k, l| 1.0 - ((domain[k] - domain[l]) / span).powi(2)),
        #[cfg(test)]
        Weights::Radical => {
            square(&|k, l| 1.0 - (domain[k] - domain[l]).abs().sqrt() / span.sqrt())
        }
        #[cfg(test)]
        Weights::Ratio => {
            if domain.contains(&0.0) {
                return Err(undefined(
                    "ratio weights are undefined when 0 is a category",
                ));
            }
            let widest = (span / (max + min)).powi(2);
            square(&|k, l| {
                let (x, y) = (domain[k], domain[l]);
                1.0 - ((x - y) / (x + y)).powi(2) / widest
            })
        }
        Weights::Ordinal => {
            // Number of category pairs spanned between positions k and l.
            normalised(square(&|k, l| {
                let steps = k.abs_diff(l) as f64;
                (steps + 1.0) * steps / 2.0
            }))?
        }
        #[cfg(test)]
        Weights::Circular => {
            let period = span + 1.0;
            normalised(square(&|k, l| {
                (std::f64::consts::PI * (domain[k] - domain[l]) / period)
                    .sin()
                    .powi(2)
            }))?
        }
        #[cfg(test)]
        Weights::Bipolar => normalised(square(&|k, l| {
            if k == l {
                return 0.0;
            }
            let (x, y) = (domain[k], domain[l]);
            (x - y).powi(2) / ((x + y - 2.0 * min) * (2.0 * max - x - y))
        }))?,
    };
    if matrix.iter().flatten().any(|w| !w.is_finite()) {
        return Err(undefined(format!(
            "{weights:?} weights are undefined for this domain"
        )));
    }
    Ok(matrix)
}

/// Per-unit category counts for units with at least one rating; unrated units carry no
/// information and irrCAC drops them before counting n.
fn category_counts(units: &[Vec<Option<usize>>], q: usize) -> Result<Vec<Vec<f64>>, Undefined> {
    let mut rows = Vec::with_capacity(units.len());
    for unit in units {
        let mut counts = vec![0.0; q];
        let mut rated = false;
        for &index in unit.iter().flatten() {
            if index >= q {
                return Err(undefined(format!(
                    "rating index {index} is outside the domain of {q} categories"
                )));
            }
            counts[index] += 1.0;
            rated = true;
        }
        if rated {
            rows.push(counts);
        }
    }
    Ok(rows)
}

/// What Gwet, Fleiss and Brennan–Prediger share: weighted observed agreement pₐ over units with
/// at least two ratings, category prevalences πₖ over all rated units, and the weight matrix.
struct Multirater {
    pa: f64,
    pi: Vec<f64>,
    weights: Vec<Vec<f64>>,
}

fn multirater(
    units: &[Vec<Option<usize>>],
    domain: &[f64],
    weights: Weights,
) -> Result<Multirater, Undefined> {
    let weights = weight_matrix(domain, weights)?;
    let q = domain.len();
    let counts = category_counts(units, q)?;
    if counts.is_empty() {
        return Err(undefined("no unit has a rating"));
    }
    let mut agreement = 0.0;
    let mut pairable = 0usize;
    let mut pi = vec![0.0; q];
    for row in &counts {
        let raters: f64 = row.iter().sum();
        for (p, r) in pi.iter_mut().zip(row) {
            *p += r / raters;
        }
        if raters < 2.0 {
            continue;
        }
        pairable += 1;
        let unit_agreement: f64 = (0..q)
            .map(|k| {
                let weighted: f64 = (0..q).map(|l| weights[k][l] * row[l]).sum();
                row[k] * (weighted - 1.0)
            })
            .sum();
        agreement += unit_agreement / (raters * (raters - 1.0));
    }
    if pairable == 0 {
        return Err(undefined("no unit has two or more ratings"));
    }
    let rated = counts.len() as f64;
    pi.iter_mut().for_each(|p| *p /= rated);
    Ok(Multirater {
        pa: agreement / pairable as f64,
        pi,
        weights,
    })
}

/// Ratings: one row per unit, one column per rater/coder; `None` = missing. Values are
/// INDICES into `domain` (the full category domain, always passed explicitly so unused
/// categories count); `domain[i]` is category i's numeric value (used by interval/ratio/
/// weighted metrics; for nominal data pass 0.0, 1.0, ...).
///
/// Krippendorff's α from the coincidence matrix; only units with two or more ratings count.
/// Undefined when fewer than two values are pairable or when the data hold a single value
/// (no expected disagreement), matching the `krippendorff` package's error.
pub(crate) fn krippendorff_alpha(
    units: &[Vec<Option<usize>>],
    domain: &[f64],
    metric: Metric,
) -> Result<f64, Undefined> {
    let q = domain.len();
    if q == 0 {
        return Err(undefined("the category domain is empty"));
    }
    let counts = category_counts(units, q)?;
    let mut coincidence = vec![vec![0.0; q]; q];
    for row in &counts {
        let values: f64 = row.iter().sum();
        if values < 2.0 {
            continue;
        }
        for c in 0..q {
            if row[c] == 0.0 {
                continue;
            }
            for k in 0..q {
                let partners = if c == k { row[k] - 1.0 } else { row[k] };
                coincidence[c][k] += row[c] * partners / (values - 1.0);
            }
        }
    }
    let marginals: Vec<f64> = coincidence.iter().map(|row| row.iter().sum()).collect();
    let total: f64 = marginals.iter().sum();
    if total < 2.0 {
        return Err(undefined("fewer than two pairable values"));
    }
    let delta = |c: usize, k: usize| -> f64 {
        match metric {
            Metric::Nominal => f64::from(u8::from(c != k)),
            Metric::Ordinal => {
                let (low, high) = (c.min(k), c.max(k));
                let between: f64 = marginals[low..=high].iter().sum();
                (between - (marginals[c] + marginals[k]) / 2.0).powi(2)
            }
            Metric::Interval => (domain[c] - domain[k]).powi(2),
            #[cfg(test)]
            Metric::Ratio => {
                let (x, y) = (domain[c], domain[k]);
                if x == y {
                    0.0
                } else {
                    ((x - y) / (x + y)).powi(2)
                }
            }
        }
    };
    let mut observed = 0.0;
    let mut expected = 0.0;
    for c in 0..q {
        for k in 0..q {
            let d = delta(c, k);
            observed += coincidence[c][k] * d;
            expected += marginals[c] * marginals[k] * d;
        }
    }
    if !observed.is_finite() || !expected.is_finite() {
        return Err(undefined(format!(
            "{metric:?} distances are undefined for this domain"
        )));
    }
    if expected <= 0.0 {
        return Err(undefined(
            "there has to be more than one value in the domain",
        ));
    }
    Ok(1.0 - (total - 1.0) * observed / expected)
}

/// Gwet's AC1 (identity weights) or AC2 (any other weights), as irrCAC `raw.py::gwet`.
///
/// Units with a single rating count towards the prevalences πₖ but not towards pₐ; q is the
/// full domain size, so perfect agreement on one category is 1.0 rather than undefined.
pub(crate) fn gwet(
    units: &[Vec<Option<usize>>],
    domain: &[f64],
    weights: Weights,
) -> Result<Coefficient, Undefined> {
    let q = domain.len();
    if q < 2 {
        return Err(undefined("Gwet's AC needs at least two categories"));
    }
    let m = multirater(units, domain, weights)?;
    let total_weight: f64 = m.weights.iter().flatten().sum();
    let spread: f64 = m.pi.iter().map(|p| p * (1.0 - p)).sum();
    let pe = total_weight * spread / (q * (q - 1)) as f64;
    chance_corrected(m.pa, pe)
}

/// Fleiss' κ generalised to missing ratings and weights, as irrCAC `raw.py::fleiss`
/// (pₑ = Σₖₗ wₖₗ πₖ πₗ).
pub(crate) fn fleiss_kappa(
    units: &[Vec<Option<usize>>],
    domain: &[f64],
    weights: Weights,
) -> Result<Coefficient, Undefined> {
    let m = multirater(units, domain, weights)?;
    let pe: f64 = m
        .weights
        .iter()
        .zip(&m.pi)
        .map(|(row, pk)| {
            row.iter()
                .zip(&m.pi)
                .map(|(w, pl)| w * pk * pl)
                .sum::<f64>()
        })
        .sum();
    chance_corrected(m.pa, pe)
}

/// Brennan–Prediger coefficient: Gwet's pₐ with a uniform chance model, pₑ = Σₖₗ wₖₗ / q².
/// Only the published-vector tests use it, to check the shared multi-rater core.
#[cfg(test)]
fn brennan_prediger(
    units: &[Vec<Option<usize>>],
    domain: &[f64],
    weights: Weights,
) -> Result<Coefficient, Undefined> {
    let m = multirater(units, domain, weights)?;
    let q = domain.len() as f64;
    let total_weight: f64 = m.weights.iter().flatten().sum();
    chance_corrected(m.pa, total_weight / (q * q))
}

/// Two raters, every unit rated by both; q = domain.len(). Linear/Quadratic weights as sklearn
/// (|i-j|, (i-j)^2 over indices); Identity = plain κ.
///
/// Internally κ = (pₐ − pₑ)/(1 − pₑ) with irrCAC agreement weights built on the category
/// positions 1..=q (irrCAC's convention for labels), which equals sklearn's
/// 1 − Σ vO / Σ vE for linear and quadratic weights. The other schemes (ordinal, radical,
/// ratio, circular, bipolar) are therefore irrCAC-style over equally spaced positions.
/// Undefined when the inputs differ in length, are empty, hold an index ≥ q, or when the
/// expected agreement is 1 (sklearn returns NaN there).
pub(crate) fn cohen_kappa(
    a: &[usize],
    b: &[usize],
    q: usize,
    weights: Weights,
) -> Result<Coefficient, Undefined> {
    if a.len() != b.len() {
        return Err(undefined(format!(
            "raters rated different numbers of units ({} and {})",
            a.len(),
            b.len()
        )));
    }
    if a.is_empty() {
        return Err(undefined("no units"));
    }
    if let Some(&index) = a.iter().chain(b).find(|&&i| i >= q) {
        return Err(undefined(format!(
            "rating index {index} is outside the domain of {q} categories"
        )));
    }
    let positions: Vec<f64> = (1..=q).map(|i| i as f64).collect();
    let w = weight_matrix(&positions, weights)?;
    let n = a.len() as f64;
    let mut joint = vec![vec![0.0; q]; q];
    let mut rows = vec![0.0; q];
    let mut columns = vec![0.0; q];
    for (&i, &j) in a.iter().zip(b) {
        joint[i][j] += 1.0 / n;
        rows[i] += 1.0 / n;
        columns[j] += 1.0 / n;
    }
    let mut pa = 0.0;
    let mut pe = 0.0;
    for i in 0..q {
        for j in 0..q {
            pa += w[i][j] * joint[i][j];
            pe += w[i][j] * rows[i] * columns[j];
        }
    }
    chance_corrected(pa, pe)
}

/// Share of units on which the two raters give the same index; 0.0 when there are no units.
///
/// # Panics
/// If the two slices differ in length: the pairing would be meaningless.
#[cfg(test)]
fn percent_agreement(a: &[usize], b: &[usize]) -> f64 {
    assert_eq!(a.len(), b.len(), "percent_agreement needs paired ratings");
    if a.is_empty() {
        return 0.0;
    }
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    same as f64 / a.len() as f64
}

/// Origin-turn agreement for two runs over the same cases; None = "no origin" (its own outcome: both None agree, one None disagrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct TurnAgreement {
    pub n: usize,
    pub exact: usize,
    pub within_one: usize,
}

/// Exact and ±1 origin-turn agreement (Who&When's "step-level accuracy with tolerance").
///
/// # Panics
/// If the two slices differ in length: they must describe the same cases in the same order.
pub(crate) fn turn_agreement(a: &[Option<u32>], b: &[Option<u32>]) -> TurnAgreement {
    assert_eq!(a.len(), b.len(), "turn_agreement needs the same cases");
    let mut result = TurnAgreement {
        n: a.len(),
        exact: 0,
        within_one: 0,
    };
    for (x, y) in a.iter().zip(b) {
        let (exact, near) = match (x, y) {
            (None, None) => (true, true),
            (Some(x), Some(y)) => (x == y, x.abs_diff(*y) <= 1),
            _ => (false, false),
        };
        result.exact += usize::from(exact);
        result.within_one += usize::from(near);
    }
    result
}

/// Median and central 95% (2.5th and 97.5th percentiles, linear interpolation like numpy's default) of values; None when empty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Spread {
    pub n: usize,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The spread of the finite values (NaN and infinities are skipped, so `n` counts only the
/// values used); None when no finite value remains.
pub(crate) fn spread(values: &[f64]) -> Option<Spread> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    Some(Spread {
        n: sorted.len(),
        median: percentile(&sorted, 0.5),
        lo: percentile(&sorted, 0.025),
        hi: percentile(&sorted, 0.975),
    })
}

/// numpy's default ("linear") percentile of an ascending, non-empty slice; `p` in 0..=1.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let position = (sorted.len() - 1) as f64 * p;
    let below = position.floor() as usize;
    let fraction = position - below as f64;
    match sorted.get(below + 1) {
        Some(&next) if fraction > 0.0 => sorted[below] + fraction * (next - sorted[below]),
        _ => sorted[below],
    }
}

/// Deterministic seeded PRNG (splitmix64), no external crate. Good enough for resampling;
/// not for anything security-related.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`, without modulo bias (Lemire's multiply-and-reject).
    ///
    /// # Panics
    /// If `n` is 0: there is no value to return.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "Rng::below needs a non-empty range");
        let n = n as u64;
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if product as u64 >= threshold {
                return (product >> 64) as usize;
            }
        }
    }

    /// Fisher–Yates shuffle.
    pub(crate) fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// Distinct task ids in sorted order (so results do not depend on case order) and, for each
/// case, the position of its task in that list.
fn task_index(tasks: &[String]) -> (Vec<&str>, Vec<usize>) {
    let mut distinct: Vec<&str> = tasks.iter().map(String::as_str).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let of_case = tasks
        .iter()
        .map(|t| {
            distinct
                .binary_search(&t.as_str())
                .expect("every task is in the distinct list")
        })
        .collect();
    (distinct, of_case)
}

/// Task-disjoint resampling: `splits` times, shuffle the distinct task ids (seeded), take the first half of the tasks, and call `metric` with the indices of the cases whose task is in that half; collect the Some values. Returns the Spread of the collected values (None if none). Resample by task, never by case.
///
/// Traces of one task are correlated across frameworks and models, so a case-level resample
/// would overstate precision. "Half" is ⌊tasks/2⌋; with fewer than two distinct tasks there is
/// no split and the result is None. Case indices are passed in ascending order.
pub(crate) fn task_halves(
    tasks: &[String],
    splits: usize,
    seed: u64,
    mut metric: impl FnMut(&[usize]) -> Option<f64>,
) -> Option<Spread> {
    let (distinct, of_case) = task_index(tasks);
    if distinct.len() < 2 {
        return None;
    }
    let half = distinct.len() / 2;
    let mut rng = Rng::new(seed);
    let mut values = Vec::with_capacity(splits);
    for _ in 0..splits {
        let mut order: Vec<usize> = (0..distinct.len()).collect();
        rng.shuffle(&mut order);
        let mut chosen = vec![false; distinct.len()];
        for &task in &order[..half] {
            chosen[task] = true;
        }
        let cases: Vec<usize> = (0..tasks.len()).filter(|&i| chosen[of_case[i]]).collect();
        values.extend(metric(&cases));
    }
    spread(&values)
}

/// Leave-one-task-out: for each distinct task, metric over the cases of all other tasks; returns (min, max, count of Some) or None.
///
/// A task whose removal leaves no cases is skipped; non-finite values are ignored like None.
pub(crate) fn leave_one_task_out(
    tasks: &[String],
    mut metric: impl FnMut(&[usize]) -> Option<f64>,
) -> Option<(f64, f64, usize)> {
    let (distinct, of_case) = task_index(tasks);
    let mut range: Option<(f64, f64, usize)> = None;
    for left_out in 0..distinct.len() {
        let cases: Vec<usize> = (0..tasks.len())
            .filter(|&i| of_case[i] != left_out)
            .collect();
        if cases.is_empty() {
            continue;
        }
        let Some(value) = metric(&cases).filter(|v| v.is_finite()) else {
            continue;
        };
        range = Some(match range {
            None => (value, value, 1),
            Some((lo, hi, count)) => (lo.min(value), hi.max(value), count + 1),
        });
    }
    range
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Missing rating in the coder tables below.
    const NA: i64 = i64::MIN;

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() < tolerance,
            "got {actual}, expected {expected} ± {tolerance}"
        );
    }

    fn domain(values: &[i64]) -> Vec<f64> {
        values.iter().map(|&v| v as f64).collect()
    }

    /// Units (rows) from one value slice per coder, mapping values to domain indices.
    fn from_coders(coders: &[&[i64]], values: &[i64]) -> Vec<Vec<Option<usize>>> {
        let units = coders[0].len();
        assert!(coders.iter().all(|c| c.len() == units));
        (0..units)
            .map(|u| {
                coders
                    .iter()
                    .map(|c| {
                        (c[u] != NA).then(|| {
                            values
                                .iter()
                                .position(|&v| v == c[u])
                                .expect("value in domain")
                        })
                    })
                    .collect()
            })
            .collect()
    }

    fn pairs(a: &[usize], b: &[usize]) -> Vec<Vec<Option<usize>>> {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| vec![Some(x), Some(y)])
            .collect()
    }

    /// Two-rater units from a contingency table (rows: rater 1, columns: rater 2).
    fn from_table(table: &[&[usize]]) -> (Vec<usize>, Vec<usize>) {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (i, row) in table.iter().enumerate() {
            for (j, &count) in row.iter().enumerate() {
                a.extend(std::iter::repeat_n(i, count));
                b.extend(std::iter::repeat_n(j, count));
            }
        }
        (a, b)
    }

    // Krippendorff 2011 p. 8 reliability data, as in the `krippendorff` docstring and
    // irrCAC `raw_4raters` (T2/T4).
    const T2_A: [i64; 12] = [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA];
    const T2_B: [i64; 12] = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3];
    const T2_C: [i64; 12] = [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA];
    const T2_D: [i64; 12] = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA];
    const T2_VALUES: [i64; 5] = [1, 2, 3, 4, 5];

    fn t2() -> (Vec<Vec<Option<usize>>>, Vec<f64>) {
        (
            from_coders(&[&T2_A, &T2_B, &T2_C, &T2_D], &T2_VALUES),
            domain(&T2_VALUES),
        )
    }

    // irrCAC `raw_4raters`: raters in columns; unit 12 has only rater 3's rating.
    fn t4() -> (Vec<Vec<Option<usize>>>, Vec<f64>) {
        let r1 = [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA];
        let r2 = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, NA];
        let r3 = [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3];
        let r4 = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA];
        (
            from_coders(&[&r1, &r2, &r3, &r4], &T2_VALUES),
            domain(&T2_VALUES),
        )
    }

    const SAGE_J1: [usize; 12] = [0, 1, 2, 3, 3, 2, 1, 0, 2, 3, 1, 2];
    const SAGE_J2: [usize; 12] = [0, 1, 3, 3, 2, 2, 1, 1, 2, 3, 0, 2];
    const SCORES: [i64; 4] = [0, 1, 2, 3];

    // --- Cohen's κ ---

    #[test]
    fn t1_sklearn_docstring_kappa() {
        // scikit-learn cohen_kappa_score docstring; labels sorted: neg=0, neu=1, pos=2.
        let y1 = [0, 2, 0, 1, 2];
        let y2 = [0, 2, 0, 1, 0];
        let k = cohen_kappa(&y1, &y2, 3, Weights::Identity).unwrap();
        close(k.value, 0.6875, 5e-5);
    }

    #[test]
    fn cohen_two_by_two() {
        // Computed vector: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
        let (a, b) = from_table(&[&[20, 5], &[10, 15]]);
        let k = cohen_kappa(&a, &b, 2, Weights::Identity).unwrap();
        close(k.value, 0.4, 5e-6);
        close(k.pa, 0.7, 1e-12);
        close(k.pe, 0.5, 1e-12);
    }

    #[test]
    fn cohen_rejects_bad_input() {
        assert!(cohen_kappa(&[0, 1], &[0], 2, Weights::Identity).is_err());
        assert!(cohen_kappa(&[], &[], 2, Weights::Identity).is_err());
        assert!(cohen_kappa(&[0, 2], &[0, 1], 2, Weights::Identity).is_err());
    }

    #[test]
    fn cohen_other_weights_are_irrcac_style_over_positions() {
        // Ratio weights are defined because positions start at 1, and perfect agreement is 1.
        for weights in [
            Weights::Ordinal,
            Weights::Radical,
            Weights::Ratio,
            Weights::Circular,
            Weights::Bipolar,
        ] {
            let k = cohen_kappa(&SAGE_J1, &SAGE_J1, 4, weights).unwrap();
            close(k.value, 1.0, 1e-12);
        }
    }

    // --- Krippendorff's α ---

    #[test]
    fn t2_krippendorff_docstring() {
        // `krippendorff` package docstring (Krippendorff 2011, p. 8): 0.743 / 0.815 / 0.797,
        // plus computed 6-decimal values and interval 0.849107.
        let (units, values) = t2();
        let nominal = krippendorff_alpha(&units, &values, Metric::Nominal).unwrap();
        let ordinal = krippendorff_alpha(&units, &values, Metric::Ordinal).unwrap();
        let ratio = krippendorff_alpha(&units, &values, Metric::Ratio).unwrap();
        let interval = krippendorff_alpha(&units, &values, Metric::Interval).unwrap();
        close(nominal, 0.743, 5e-4);
        close(ordinal, 0.815, 5e-4);
        close(ratio, 0.797, 5e-4);
        close(nominal, 0.743421, 5e-6);
        close(ordinal, 0.815388, 5e-6);
        close(ratio, 0.797403, 5e-6);
        close(interval, 0.849107, 5e-6);
    }

    #[test]
    fn t3_krippendorff_docstring() {
        // `krippendorff` package docstring: nominal 0.691358, interval 0.810845;
        // ordinal 0.806721 computed.
        let c1 = [NA, NA, NA, NA, NA, 3, 4, 1, 2, 1, 1, 3, 3, NA, 3];
        let c2 = [1, NA, 2, 1, 3, 3, 4, 3, NA, NA, NA, NA, NA, NA, NA];
        let c3 = [NA, NA, 2, 1, 3, 4, 4, NA, 2, 1, 1, 3, 3, NA, 4];
        let values = [1, 2, 3, 4];
        let units = from_coders(&[&c1, &c2, &c3], &values);
        let d = domain(&values);
        close(
            krippendorff_alpha(&units, &d, Metric::Nominal).unwrap(),
            0.691358,
            5e-6,
        );
        close(
            krippendorff_alpha(&units, &d, Metric::Interval).unwrap(),
            0.810845,
            5e-6,
        );
        close(
            krippendorff_alpha(&units, &d, Metric::Ordinal).unwrap(),
            0.806721,
            5e-6,
        );
    }

    #[test]
    fn krippendorff_binary() {
        // Computed vector matching Krippendorff 2011's α = 0.095 worked example.
        let a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0];
        let b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0];
        let alpha = krippendorff_alpha(&pairs(&a, &b), &[0.0, 1.0], Metric::Nominal).unwrap();
        close(alpha, 0.095238, 5e-6);
    }

    #[test]
    fn krippendorff_nominal_a_to_e() {
        // Computed vector matching Krippendorff 2011's α = 0.692 worked example, and the
        // variant with obs2[8] = d that gives 0.579909.
        let letters = |s: &str| -> Vec<usize> {
            s.split(' ')
                .map(|c| usize::from(c.as_bytes()[0] - b'a'))
                .collect()
        };
        let d = domain(&[0, 1, 2, 3, 4]);
        let obs1 = letters("a a b b d c c c e d d a");
        let obs2 = letters("b a b b b c c c e d d d");
        let variant = letters("b a b b b c c c d d d d");
        close(
            krippendorff_alpha(&pairs(&obs1, &obs2), &d, Metric::Nominal).unwrap(),
            0.691964,
            5e-6,
        );
        close(
            krippendorff_alpha(&pairs(&obs1, &variant), &d, Metric::Nominal).unwrap(),
            0.579909,
            5e-6,
        );
    }

    #[test]
    fn krippendorff_single_value_is_undefined() {
        // `krippendorff.alpha` raises "There has to be more than one value in the domain."
        let units = vec![vec![Some(2), Some(2)], vec![Some(2), Some(2), None]];
        for metric in [
            Metric::Nominal,
            Metric::Ordinal,
            Metric::Interval,
            Metric::Ratio,
        ] {
            assert!(krippendorff_alpha(&units, &domain(&SCORES), metric).is_err());
        }
    }

    #[test]
    fn krippendorff_needs_pairable_values() {
        let units = vec![vec![Some(0), None], vec![None, Some(1)], vec![None, None]];
        let err = krippendorff_alpha(&units, &domain(&SCORES), Metric::Nominal).unwrap_err();
        assert!(err.to_string().contains("pairable"));
        assert!(krippendorff_alpha(&[], &domain(&SCORES), Metric::Nominal).is_err());
        assert!(krippendorff_alpha(&units, &[], Metric::Nominal).is_err());
    }

    #[test]
    fn krippendorff_rejects_index_outside_domain() {
        let units = vec![vec![Some(0), Some(4)]];
        assert!(krippendorff_alpha(&units, &domain(&SCORES), Metric::Nominal).is_err());
    }

    #[test]
    fn krippendorff_perfect_agreement_is_one() {
        let units = pairs(&SAGE_J1, &SAGE_J1);
        for metric in [Metric::Nominal, Metric::Ordinal, Metric::Interval] {
            close(
                krippendorff_alpha(&units, &domain(&SCORES), metric).unwrap(),
                1.0,
                1e-12,
            );
        }
    }

    // --- Gwet, Fleiss, Brennan–Prediger ---

    #[test]
    fn t4_irrcac_raw_4raters() {
        // irrCAC raw.py doctests: AC1 0.77544 (pa 0.81818, pe 0.19032); Fleiss 0.76117
        // (pe 0.23872); bipolar AC2 0.90037 (pa 0.96836, pe 0.68244).
        let (units, d) = t4();
        let ac1 = gwet(&units, &d, Weights::Identity).unwrap();
        close(ac1.value, 0.77544, 5e-5);
        close(ac1.pa, 0.81818, 5e-5);
        close(ac1.pe, 0.19032, 5e-5);
        let fleiss = fleiss_kappa(&units, &d, Weights::Identity).unwrap();
        close(fleiss.value, 0.76117, 5e-5);
        close(fleiss.pa, 0.81818, 5e-5);
        close(fleiss.pe, 0.23872, 5e-5);
        let bipolar = gwet(&units, &d, Weights::Bipolar).unwrap();
        close(bipolar.value, 0.90037, 5e-5);
        close(bipolar.pa, 0.96836, 5e-5);
        close(bipolar.pe, 0.68244, 5e-5);
    }

    #[test]
    fn t4_bipolar_weights_match_irrcac_doctest() {
        // irrCAC raw.py doctest prints this matrix for categories 1..5.
        let w = weight_matrix(&domain(&T2_VALUES), Weights::Bipolar).unwrap();
        let expected = [
            [1.0, 0.85714286, 0.66666667, 0.4, 0.0],
            [0.85714286, 1.0, 0.93333333, 0.75, 0.4],
            [0.66666667, 0.93333333, 1.0, 0.93333333, 0.66666667],
            [0.4, 0.75, 0.93333333, 1.0, 0.85714286],
            [0.0, 0.4, 0.66666667, 0.85714286, 1.0],
        ];
        for (row, want) in w.iter().zip(expected) {
            for (got, want) in row.iter().zip(want) {
                close(*got, want, 5e-8);
            }
        }
    }

    #[test]
    fn t2_extras_irrcac_weighted() {
        // Computed with irrCAC: Brennan–Prediger 0.77273; AC2 linear 0.85874,
        // quadratic 0.914, irrCAC-"ordinal" 0.89894.
        let (units, d) = t2();
        close(
            brennan_prediger(&units, &d, Weights::Identity)
                .unwrap()
                .value,
            0.77273,
            5e-5,
        );
        close(
            gwet(&units, &d, Weights::Identity).unwrap().value,
            0.77544,
            5e-5,
        );
        close(
            fleiss_kappa(&units, &d, Weights::Identity).unwrap().value,
            0.76117,
            5e-5,
        );
        close(
            gwet(&units, &d, Weights::Linear).unwrap().value,
            0.85874,
            5e-5,
        );
        close(
            gwet(&units, &d, Weights::Quadratic).unwrap().value,
            0.914,
            5e-5,
        );
        close(
            gwet(&units, &d, Weights::Ordinal).unwrap().value,
            0.89894,
            5e-5,
        );
    }

    #[test]
    fn t5_irrcac_table_3x3_abstractors() {
        // irrCAC table.py doctests, `table_cont3x3abstractors`: AC1 0.84933 (pa 0.89,
        // pe 0.26992); quadratic AC2 0.94024 (pa 0.9725, pe 0.53985).
        let (a, b) = from_table(&[&[13, 0, 0], &[0, 20, 7], &[0, 4, 56]]);
        let units = pairs(&a, &b);
        let d = domain(&[1, 2, 3]);
        let ac1 = gwet(&units, &d, Weights::Identity).unwrap();
        close(ac1.value, 0.84933, 5e-5);
        close(ac1.pa, 0.89, 5e-5);
        close(ac1.pe, 0.26992, 5e-5);
        let ac2 = gwet(&units, &d, Weights::Quadratic).unwrap();
        close(ac2.value, 0.94024, 5e-5);
        close(ac2.pa, 0.9725, 5e-5);
        close(ac2.pe, 0.53985, 5e-5);
    }

    #[test]
    fn irrcac_raw_5observers() {
        // irrCAC `raw_5observers` (Gwet 2014), 0–3 scale with missing ratings; computed values.
        let o1 = [1, 1, 2, NA, 0, 0, 1, 1, 2, 2, NA, 0, 1, 3, 1];
        let o2 = [1, 1, 3, 0, 0, 0, 0, NA, 2, 1, 1, 0, 2, 3, 1];
        let o3 = [2, 0, 3, 0, 0, 0, 2, 2, 2, 1, 0, 0, 2, 2, 1];
        let o4 = [NA, 1, 3, NA, NA, NA, NA, 0, NA, 1, 0, 0, 2, 2, NA];
        let o5 = [2, NA, NA, 0, 0, 0, 1, NA, 2, NA, NA, NA, NA, 3, 1];
        let units = from_coders(&[&o1, &o2, &o3, &o4, &o5], &SCORES);
        let d = domain(&SCORES);
        let cases = [
            (Weights::Identity, 0.49662, 0.45762),
            (Weights::Linear, 0.68964, 0.61185),
            (Weights::Quadratic, 0.83043, 0.75072),
            (Weights::Ordinal, 0.78534, 0.70122),
        ];
        for (weights, ac, fleiss) in cases {
            close(gwet(&units, &d, weights).unwrap().value, ac, 5e-5);
            close(
                fleiss_kappa(&units, &d, weights).unwrap().value,
                fleiss,
                5e-5,
            );
        }
        close(
            krippendorff_alpha(&units, &d, Metric::Nominal).unwrap(),
            0.48053,
            5e-5,
        );
        close(
            krippendorff_alpha(&units, &d, Metric::Ordinal).unwrap(),
            0.768685,
            5e-6,
        );
        close(
            krippendorff_alpha(&units, &d, Metric::Interval).unwrap(),
            0.771865,
            5e-6,
        );
    }

    #[test]
    fn gwet_perfect_constant_agreement_with_explicit_categories() {
        // irrCAC gives AC1 = 1.0 here because q counts all four categories, so pe < 1.
        let units = vec![vec![Some(3), Some(3)]; 10];
        let ac1 = gwet(&units, &domain(&SCORES), Weights::Identity).unwrap();
        assert_eq!(ac1.value, 1.0);
        assert_eq!(ac1.pa, 1.0);
        assert_eq!(ac1.pe, 0.0);
        // Fleiss' chance model puts all mass on the one category: undefined, not NaN.
        assert!(fleiss_kappa(&units, &domain(&SCORES), Weights::Identity).is_err());
    }

    #[test]
    fn gwet_needs_two_categories_and_pairable_units() {
        let one = vec![vec![Some(0), Some(0)]];
        assert!(gwet(&one, &[0.0], Weights::Identity).is_err());
        let singles = vec![vec![Some(0), None], vec![None, Some(1)]];
        assert!(gwet(&singles, &domain(&SCORES), Weights::Identity).is_err());
        assert!(gwet(&[], &domain(&SCORES), Weights::Identity).is_err());
        let outside = vec![vec![Some(0), Some(9)]];
        assert!(gwet(&outside, &domain(&SCORES), Weights::Identity).is_err());
    }

    #[test]
    fn ratio_weights_reject_zero_category() {
        let units = pairs(&SAGE_J1, &SAGE_J2);
        assert!(gwet(&units, &domain(&SCORES), Weights::Ratio).is_err());
        // Shifted to 1..4, ratio weights are defined and every weight lies in [0, 1].
        let w = weight_matrix(&domain(&[1, 2, 3, 4]), Weights::Ratio).unwrap();
        assert!(w.iter().flatten().all(|x| (0.0..=1.0).contains(x)));
        assert!(gwet(&units, &domain(&[1, 2, 3, 4]), Weights::Ratio).is_ok());
    }

    #[test]
    fn weight_matrices_are_symmetric_with_unit_diagonal() {
        let d = domain(&SCORES);
        for weights in [
            Weights::Identity,
            Weights::Linear,
            Weights::Quadratic,
            Weights::Ordinal,
            Weights::Radical,
            Weights::Circular,
            Weights::Bipolar,
        ] {
            let w = weight_matrix(&d, weights).unwrap();
            for (k, row) in w.iter().enumerate() {
                close(row[k], 1.0, 1e-12);
                for (l, &weight) in row.iter().enumerate() {
                    close(weight, w[l][k], 1e-12);
                    assert!((-1e-12..=1.0 + 1e-12).contains(&weight), "{weights:?}");
                }
            }
        }
        // Spot checks against irrCAC's formulas for 0..3.
        close(
            weight_matrix(&d, Weights::Linear).unwrap()[0][1],
            2.0 / 3.0,
            1e-12,
        );
        close(
            weight_matrix(&d, Weights::Quadratic).unwrap()[0][1],
            8.0 / 9.0,
            1e-12,
        );
        close(
            weight_matrix(&d, Weights::Ordinal).unwrap()[0][2],
            0.5,
            1e-12,
        );
        close(
            weight_matrix(&d, Weights::Radical).unwrap()[0][1],
            1.0 - 1.0 / 3f64.sqrt(),
            1e-12,
        );
        // Circular with period 4: distance 2 is the farthest, distance 3 wraps to 1.
        let circular = weight_matrix(&d, Weights::Circular).unwrap();
        close(circular[0][2], 0.0, 1e-12);
        close(circular[0][3], circular[0][1], 1e-12);
    }

    // --- SAGE-like 0–3 scores ---

    #[test]
    fn sage_like_scores() {
        // Computed vector (two reference implementations), labels/categories = [0, 1, 2, 3].
        let k = |w| cohen_kappa(&SAGE_J1, &SAGE_J2, 4, w).unwrap().value;
        close(k(Weights::Identity), 0.547170, 5e-6);
        close(k(Weights::Linear), 0.707317, 5e-6);
        close(k(Weights::Quadratic), 0.842105, 5e-6);

        let units = pairs(&SAGE_J1, &SAGE_J2);
        let d = domain(&SCORES);
        let alpha = |m| krippendorff_alpha(&units, &d, m).unwrap();
        close(alpha(Metric::Nominal), 0.566038, 5e-6);
        close(alpha(Metric::Ordinal), 0.867197, 5e-6);
        close(alpha(Metric::Interval), 0.848684, 5e-6);

        let ac1 = gwet(&units, &d, Weights::Identity).unwrap();
        close(ac1.value, 0.55828, 5e-5);
        close(ac1.pa, 0.66667, 5e-5);
        close(ac1.pe, 0.24537, 5e-5);
        let ac2 = |w| gwet(&units, &d, w).unwrap().value;
        close(ac2(Weights::Linear), 0.74007, 5e-5);
        close(ac2(Weights::Quadratic), 0.87279, 5e-5);
        close(ac2(Weights::Ordinal), 0.82918, 5e-5);

        close(percent_agreement(&SAGE_J1, &SAGE_J2), 8.0 / 12.0, 1e-12);
        let turns = |v: &[usize]| -> Vec<Option<u32>> {
            v.iter().map(|&t| Some(u32::try_from(t).unwrap())).collect()
        };
        let agreement = turn_agreement(&turns(&SAGE_J1), &turns(&SAGE_J2));
        assert_eq!(
            agreement,
            TurnAgreement {
                n: 12,
                exact: 8,
                within_one: 12
            }
        );
    }

    #[test]
    fn kappa_paradox() {
        // Computed vector: 90 (0,0), 5 (0,1), 5 (1,0). pₒ = 0.9 but κ and α go negative,
        // while AC1 stays high.
        let (a, b) = from_table(&[&[90, 5], &[5, 0]]);
        let k = cohen_kappa(&a, &b, 2, Weights::Identity).unwrap();
        close(k.pa, 0.9, 1e-12);
        close(k.value, -0.052632, 5e-6);
        let units = pairs(&a, &b);
        close(
            krippendorff_alpha(&units, &[0.0, 1.0], Metric::Nominal).unwrap(),
            -0.047368,
            5e-6,
        );
        close(
            gwet(&units, &[0.0, 1.0], Weights::Identity).unwrap().value,
            0.8895,
            5e-5,
        );
    }

    #[test]
    fn edge_case_cohen_one_identical_label() {
        // sklearn returns nan when both raters use one identical label.
        for weights in [Weights::Identity, Weights::Linear, Weights::Quadratic] {
            let err = cohen_kappa(&[2, 2, 2], &[2, 2, 2], 4, weights).unwrap_err();
            assert!(!err.0.is_empty());
        }
        assert!(cohen_kappa(&[0, 0], &[0, 0], 1, Weights::Identity).is_err());
    }

    #[test]
    fn category_set_pitfall() {
        // Computed vector: category 2 unused. Passing the full domain changes κ and AC1
        // but not Krippendorff's ordinal α (whose δ² depends only on used values' marginals).
        let k1 = [0, 1, 3, 3, 0, 1, 3, 0];
        let k2 = [0, 1, 3, 1, 0, 0, 3, 1];
        // Inferred labels [0, 1, 3]: score 3 becomes index 2.
        let inferred =
            |v: &[usize]| -> Vec<usize> { v.iter().map(|&s| if s == 3 { 2 } else { s }).collect() };
        let (i1, i2) = (inferred(&k1), inferred(&k2));

        close(
            cohen_kappa(&k1, &k2, 4, Weights::Linear).unwrap().value,
            0.627907,
            5e-6,
        );
        close(
            cohen_kappa(&i1, &i2, 3, Weights::Linear).unwrap().value,
            0.586207,
            5e-6,
        );

        let full = domain(&SCORES);
        let used = domain(&[0, 1, 3]);
        close(
            gwet(&pairs(&k1, &k2), &full, Weights::Identity)
                .unwrap()
                .value,
            0.51839,
            5e-5,
        );
        close(
            gwet(&pairs(&i1, &i2), &used, Weights::Identity)
                .unwrap()
                .value,
            0.4386,
            5e-5,
        );

        close(
            krippendorff_alpha(&pairs(&k1, &k2), &full, Metric::Ordinal).unwrap(),
            0.735021,
            5e-6,
        );
        close(
            krippendorff_alpha(&pairs(&i1, &i2), &used, Metric::Ordinal).unwrap(),
            0.735021,
            5e-6,
        );
    }

    #[test]
    fn undefined_displays_its_reason() {
        let err = Undefined("no units".into());
        assert_eq!(err.to_string(), "undefined: no units");
    }

    // --- agreement counts ---

    #[test]
    fn percent_agreement_counts_matches() {
        assert_eq!(percent_agreement(&[], &[]), 0.0);
        close(percent_agreement(&[0, 1, 2, 3], &[0, 1, 3, 3]), 0.75, 1e-12);
    }

    #[test]
    fn turn_agreement_treats_no_origin_as_an_outcome() {
        let a = [None, None, Some(4), Some(4), Some(7), Some(0)];
        let b = [None, Some(0), None, Some(5), Some(7), Some(2)];
        assert_eq!(
            turn_agreement(&a, &b),
            TurnAgreement {
                n: 6,
                exact: 2,
                within_one: 3
            }
        );
        assert_eq!(
            turn_agreement(&[], &[]),
            TurnAgreement {
                n: 0,
                exact: 0,
                within_one: 0
            }
        );
    }

    // --- spread and resampling ---

    #[test]
    fn spread_matches_numpy_linear_percentiles() {
        // np.percentile(range(1, 101), [50, 2.5, 97.5]) == [50.5, 3.475, 97.525]
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = spread(&values).unwrap();
        assert_eq!(s.n, 100);
        close(s.median, 50.5, 1e-12);
        close(s.lo, 3.475, 1e-12);
        close(s.hi, 97.525, 1e-12);

        // np.percentile([3, 1, 2], [50, 2.5, 97.5]) == [2, 1.05, 2.95]; order must not matter.
        let s = spread(&[3.0, 1.0, 2.0]).unwrap();
        close(s.median, 2.0, 1e-12);
        close(s.lo, 1.05, 1e-12);
        close(s.hi, 2.95, 1e-12);

        let s = spread(&[0.4]).unwrap();
        assert_eq!((s.n, s.median, s.lo, s.hi), (1, 0.4, 0.4, 0.4));
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[f64::NAN]), None);
        assert_eq!(spread(&[f64::NAN, 1.0, 3.0]).unwrap().median, 2.0);
    }

    #[test]
    fn rng_is_deterministic_splitmix64() {
        // Reference splitmix64 outputs for seed 0.
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);

        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..16).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(42), draw(42));
        assert_ne!(draw(42), draw(43));
    }

    #[test]
    fn rng_below_stays_in_range_and_covers_it() {
        let mut rng = Rng::new(7);
        let mut seen = [0usize; 6];
        for _ in 0..6000 {
            seen[rng.below(6)] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
        assert_eq!(rng.below(1), 0);
    }

    #[test]
    fn rng_shuffle_is_a_seeded_permutation() {
        let shuffled = |seed| {
            let mut v: Vec<u32> = (0..20).collect();
            Rng::new(seed).shuffle(&mut v);
            v
        };
        let v = shuffled(9);
        assert_eq!(v, shuffled(9));
        assert_ne!(v, (0..20).collect::<Vec<_>>());
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
        let mut empty: [u8; 0] = [];
        Rng::new(1).shuffle(&mut empty);
    }

    fn task_ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn task_halves_passes_whole_tasks_only() {
        let tasks = task_ids(&["a", "b", "a", "c", "d", "c", "b", "e", "a"]);
        let run = |seed| {
            let mut calls: Vec<Vec<usize>> = Vec::new();
            let result = task_halves(&tasks, 25, seed, |cases| {
                calls.push(cases.to_vec());
                Some(cases.len() as f64)
            });
            (result, calls)
        };
        let (result, calls) = run(11);
        assert_eq!(calls.len(), 25);
        for cases in &calls {
            assert!(cases.windows(2).all(|w| w[0] < w[1]));
            let mut chosen: Vec<&str> = cases.iter().map(|&i| tasks[i].as_str()).collect();
            chosen.sort_unstable();
            chosen.dedup();
            // ⌊5 / 2⌋ tasks, and every case of a chosen task is included.
            assert_eq!(chosen.len(), 2);
            let expected: Vec<usize> = (0..tasks.len())
                .filter(|&i| chosen.contains(&tasks[i].as_str()))
                .collect();
            assert_eq!(cases, &expected);
        }
        // Different splits actually happen.
        assert!(calls.iter().any(|c| c != &calls[0]));

        let (again, calls_again) = run(11);
        assert_eq!(result, again);
        assert_eq!(calls, calls_again);
        assert_eq!(result.unwrap().n, 25);
    }

    #[test]
    fn task_halves_collects_only_some_values() {
        let tasks = task_ids(&["x", "y", "z", "w"]);
        let mut call = 0;
        let result = task_halves(&tasks, 10, 3, |_| {
            call += 1;
            (call % 2 == 0).then_some(f64::from(call))
        })
        .unwrap();
        assert_eq!(result.n, 5);
        close(result.median, 6.0, 1e-12);
        assert_eq!(task_halves(&tasks, 10, 3, |_| None), None);
        assert_eq!(task_halves(&tasks, 0, 3, |_| Some(1.0)), None);
        // One task cannot be split into disjoint halves.
        assert_eq!(
            task_halves(&task_ids(&["x", "x"]), 5, 3, |_| Some(1.0)),
            None
        );
    }

    #[test]
    fn leave_one_task_out_reports_range() {
        let tasks = task_ids(&["a", "b", "a", "c"]);
        let values = [1.0, 4.0, 3.0, 8.0];
        let mean = |cases: &[usize]| {
            Some(cases.iter().map(|&i| values[i]).sum::<f64>() / cases.len() as f64)
        };
        // Without a: (4 + 8) / 2 = 6; without b: (1 + 3 + 8) / 3 = 4; without c: 8 / 3.
        let (lo, hi, count) = leave_one_task_out(&tasks, mean).unwrap();
        close(lo, 8.0 / 3.0, 1e-12);
        close(hi, 6.0, 1e-12);
        assert_eq!(count, 3);

        let mut seen = Vec::new();
        leave_one_task_out(&tasks, |cases| {
            seen.push(cases.to_vec());
            None
        });
        assert_eq!(seen, vec![vec![1, 3], vec![0, 2, 3], vec![0, 1, 2]]);

        assert_eq!(leave_one_task_out(&tasks, |_| None), None);
        assert_eq!(leave_one_task_out(&tasks, |_| Some(f64::NAN)), None);
        assert_eq!(
            leave_one_task_out(&task_ids(&["only"]), |_| Some(1.0)),
            None
        );
        assert_eq!(leave_one_task_out(&[], |_| Some(1.0)), None);
    }
}
