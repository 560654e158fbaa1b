//! The offline judge's model: one multinomial logistic regression per dimension (TR, DI, VR,
//! SA on 0–3) and one for the opportunity flag, over the features of `features.rs`. Trained by
//! bench/train_offline.py from the verdict benchmark's development labels only, shipped as
//! templates/offline-model.json, deterministic (the same arithmetic in the same order).

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::judge::scores::{Dim, DimScore, Doubt};

/// The model file shipped with the binary.
const EMBEDDED: &str = include_str!("../../../templates/offline-model.json");

pub(crate) const MODEL_SCHEMA: &str = "sage.offline-model/1";

#[derive(Debug, Deserialize)]
struct File {
    schema: String,
    features: Vec<String>,
    mean: Vec<f32>,
    scale: Vec<f32>,
    heads: Heads,
    /// Per head, how likely a level above 0 (an opportunity) must be to be given: set on the
    /// development cases for the verdict's agreement with the labellers.
    thresholds: Thresholds,
    /// How close to a decision counts as doubt: a level above 0 is doubted when its
    /// probability lies between `threshold × doubt` and `threshold / doubt`; between two levels
    /// above 0, the other is plausible when its probability is at least `doubt` times the
    /// chosen one's.
    doubt: f32,
}

#[derive(Debug, Deserialize)]
struct Thresholds {
    tr: f32,
    di: f32,
    vr: f32,
    sa: f32,
    opportunity: f32,
}

#[derive(Debug, Deserialize)]
struct Heads {
    tr: Head,
    di: Head,
    vr: Head,
    sa: Head,
    opportunity: Head,
}

/// One regression: per class a weight per feature and an intercept.
#[derive(Debug, Deserialize)]
struct Head {
    coef: Vec<Vec<f32>>,
    intercept: Vec<f32>,
}

/// Every head folded with the standardisation into one table, so that a feature at 0 costs
/// nothing and a feature's weights for all classes of all heads sit together: per class
/// `bias = b - Σ w·mean/scale`, and per feature the weights `w/scale` of each class. The same
/// function as the file's.
#[derive(Debug)]
struct Folded {
    /// Where each head's classes start in a row, and how many it has.
    spans: Vec<(usize, usize)>,
    bias: Vec<f32>,
    /// Per feature, its weight in every class of every head.
    weights: Vec<Vec<f32>>,
}

impl Folded {
    fn new(heads: &[&Head], mean: &[f32], scale: &[f32]) -> Folded {
        let mut spans = Vec::new();
        let mut bias = Vec::new();
        let mut weights = vec![Vec::new(); mean.len()];
        for h in heads {
            spans.push((bias.len(), h.coef.len()));
            for (w, b) in h.coef.iter().zip(&h.intercept) {
                bias.push(
                    b - w
                        .iter()
                        .zip(mean.iter().zip(scale))
                        .map(|(w, (m, s))| w * m / s)
                        .sum::<f32>(),
                );
                for (j, row) in weights.iter_mut().enumerate() {
                    row.push(w[j] / scale[j]);
                }
            }
        }
        Folded {
            spans,
            bias,
            weights,
        }
    }

    /// Class probabilities of every head for raw features `x`.
    fn probs(&self, x: &[f32]) -> Vec<Vec<f32>> {
        let mut logits = self.bias.clone();
        for (j, v) in x.iter().enumerate() {
            if *v != 0.0 {
                for (l, w) in logits.iter_mut().zip(&self.weights[j]) {
                    *l += w * v;
                }
            }
        }
        self.spans
            .iter()
            .map(|&(at, n)| {
                let l = &logits[at..at + n];
                let top = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = l.iter().map(|v| (v - top).exp()).collect();
                let sum: f32 = e.iter().sum();
                e.iter().map(|v| v / sum).collect()
            })
            .collect()
    }
}

/// The model, checked against the features this build computes.
#[derive(Debug)]
pub(crate) struct Model {
    file: File,
    /// TR, DI, VR, SA, opportunity.
    folded: Folded,
}

/// What the model says of one turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Said {
    /// Per dimension (TR, DI, VR, SA) the likeliest level.
    pub levels: [u8; 4],
    pub opportunity: bool,
    /// The one-step alternatives it finds plausible.
    pub doubt: Doubt,
}

fn argmax(p: &[f32]) -> usize {
    let mut best = 0;
    for (i, v) in p.iter().enumerate() {
        if *v > p[best] {
            best = i;
        }
    }
    best
}

impl Model {
    /// The embedded model.
    pub(crate) fn embedded() -> Result<Model> {
        Model::parse(EMBEDDED, "the embedded offline model")
    }

    /// Reads a model file and checks that its features are the ones this build computes.
    pub(crate) fn parse(text: &str, name: &str) -> Result<Model> {
        let file: File = serde_json::from_str(text)
            .map_err(|e| Error::input(format!("{name}: not an offline model: {e}")))?;
        if file.schema != MODEL_SCHEMA {
            return Err(Error::input(format!(
                "{name}: schema {} (expected {MODEL_SCHEMA})",
                file.schema
            )));
        }
        let want = super::features::names();
        let n = want.len();
        let heads = [
            &file.heads.tr,
            &file.heads.di,
            &file.heads.vr,
            &file.heads.sa,
            &file.heads.opportunity,
        ];
        if file.features != want
            || file.mean.len() != n
            || file.scale.len() != n
            || heads
                .iter()
                .any(|h| h.coef.len() != h.intercept.len() || h.coef.iter().any(|w| w.len() != n))
        {
            return Err(Error::input(format!(
                "{name}: its features are not the ones this build computes"
            ))
            .hint("retrain it with bench/train_offline.py"));
        }
        let folded = Folded::new(
            &[
                &file.heads.tr,
                &file.heads.di,
                &file.heads.vr,
                &file.heads.sa,
                &file.heads.opportunity,
            ],
            &file.mean,
            &file.scale,
        );
        Ok(Model { file, folded })
    }

    /// The model's answer for features `x` (in the order of `features::names`).
    pub(crate) fn say(&self, x: &[f32]) -> Said {
        let f = &self.file;
        let t = &f.thresholds;
        let mut levels = [0u8; 4];
        let mut doubt = Doubt::default();
        let near = |p: f32, threshold: f32| p >= threshold * f.doubt && p < threshold / f.doubt;
        let all = self.folded.probs(x);
        for (i, (d, threshold)) in Dim::ALL.iter().zip([t.tr, t.di, t.vr, t.sa]).enumerate() {
            let p = &all[i];
            let above: f32 = p[1..].iter().sum();
            let k = if above < threshold {
                0
            } else {
                1 + argmax(&p[1..])
            };
            levels[i] = k as u8;
            let mut plausible = |score: usize| {
                doubt.scores.push(DimScore {
                    dim: *d,
                    score: score as u8,
                })
            };
            if near(above, threshold) {
                plausible(if k == 0 { 1 } else { 0 });
            }
            if k >= 1 {
                for alt in [k - 1, k + 1] {
                    if alt >= 1 && p.get(alt).is_some_and(|q| *q >= f.doubt * p[k]) {
                        plausible(alt);
                    }
                }
            }
        }
        doubt.scores.sort_by_key(|s| (s.dim, s.score));
        doubt.scores.dedup();
        let p = all[4][1];
        doubt.opportunity = near(p, t.opportunity);
        Said {
            levels,
            opportunity: p >= t.opportunity,
            doubt,
        }
    }
}
