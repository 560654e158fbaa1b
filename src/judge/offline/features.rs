//! What the offline judge's model reads of a turn: a fixed list of numbers from what the phrase
//! lists found where (prose, code, checks, reads, searches), the rule's own levels, what the
//! turn does, and where it stands in the task. The names are the model file's contract: the
//! file lists them, and a file whose list differs is refused.

use super::{List, Offline, Source, Unit, is_check_file, is_prose_file, probe};
use crate::judge::answer::Answer;
use crate::judge::prompt::TurnView;
use crate::judge::scores::Dim;
use crate::transcript::TurnKind;

/// Where a turn stands in the task's scope, from the turns before it only.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Position {
    /// 0-based index in the scope, and the scope's length.
    pub index: usize,
    pub of: usize,
    /// An earlier turn of the scope changed a file.
    pub edited_before: bool,
    /// An earlier turn of the scope changed the anchored file.
    pub anchor_edited_before: bool,
}

impl Position {
    /// The positions of a scope's turns, in order.
    pub(crate) fn of_scope(views: &[TurnView], off: &Offline) -> Vec<Position> {
        let mut out = Vec::with_capacity(views.len());
        let (mut edited, mut anchor) = (false, false);
        for (i, v) in views.iter().enumerate() {
            out.push(Position {
                index: i,
                of: views.len(),
                edited_before: edited,
                anchor_edited_before: anchor,
            });
            edited |= !v.changes.is_empty();
            anchor |= v.changes.iter().any(|c| off.is_anchor(&c.path));
        }
        out
    }
}

const SOURCES: [(Source, &str); 5] = [
    (Source::Prose, "prose"),
    (Source::Code, "code"),
    (Source::Check, "check"),
    (Source::Read, "read"),
    (Source::Search, "search"),
];

/// The lists counted per source: per dimension its generic, specific, code and weak phrases,
/// then the lists that shape a sentence.
const COUNTED: [(List, &str, &str); 26] = [
    (List::Generic(Dim::Tr), "tr", "generic"),
    (List::Specific(Dim::Tr), "tr", "specific"),
    (List::Code(Dim::Tr), "tr", "code"),
    (List::Weak(Dim::Tr), "tr", "weak"),
    (List::Generic(Dim::Di), "di", "generic"),
    (List::Specific(Dim::Di), "di", "specific"),
    (List::Code(Dim::Di), "di", "code"),
    (List::Weak(Dim::Di), "di", "weak"),
    (List::Generic(Dim::Vr), "vr", "generic"),
    (List::Specific(Dim::Vr), "vr", "specific"),
    (List::Code(Dim::Vr), "vr", "code"),
    (List::Weak(Dim::Vr), "vr", "weak"),
    (List::Generic(Dim::Sa), "sa", "generic"),
    (List::Specific(Dim::Sa), "sa", "specific"),
    (List::Code(Dim::Sa), "sa", "code"),
    (List::Weak(Dim::Sa), "sa", "weak"),
    (List::Not, "", "not"),
    (List::Complete, "", "complete"),
    (List::Verify, "", "verify"),
    (List::Negation, "", "negation"),
    (List::Rejects, "", "rejects"),
    (List::Names, "", "names"),
    (List::Observed, "", "observed"),
    (List::Refused, "", "refused"),
    (List::Further, "", "further"),
    (List::Artifact, "", "artifact"),
];

/// A counted list's name in the feature names (`tr-generic`, `complete`).
fn list_name(dim: &str, what: &str) -> String {
    if dim.is_empty() {
        what.to_string()
    } else {
        format!("{dim}-{what}")
    }
}

const KINDS: [TurnKind; 5] = [
    TurnKind::Planning,
    TurnKind::Implementation,
    TurnKind::Verification,
    TurnKind::Review,
    TurnKind::Administrative,
];

/// The names of the features, in order.
pub(crate) fn names() -> Vec<String> {
    let mut n: Vec<String> = KINDS
        .iter()
        .map(|k| format!("kind:{}", k.as_str()))
        .collect();
    for d in Dim::ALL {
        for l in 1..=3 {
            n.push(format!("rule:{}={l}", d.key()));
        }
    }
    for f in [
        "rule:opportunity",
        "touches-anchor",
        "task-names-threat",
        "finding-known",
        "edits-anchor",
        "edits-code",
        "edits-test",
        "edits-prose-only",
        "calls",
        "failed-calls",
        "text-chars",
        "reasoning-chars",
        "probe",
        "first-in-scope",
        "position",
        "edited-before",
        "anchor-edited-before",
        "anchored-code",
        "anchored-prose",
        "anchored-read",
        "fresh-code",
        "kept-code",
        "task-overlap",
        "anchor-stem",
        "edits-anchor-dir",
        "edits-anchor-area",
        "reads-anchor-dir",
    ] {
        n.push(f.to_string());
    }
    for (_, src) in SOURCES {
        for (_, d, w) in COUNTED {
            n.push(format!("{src}:{}", list_name(d, w)));
        }
    }
    for (_, d, w) in COUNTED.iter().take(16) {
        n.push(format!("prose-affirmed:{}", list_name(d, w)));
    }
    for b in 0..WORD_BUCKETS {
        n.push(format!("word:{b}"));
    }
    n
}

/// How many buckets the words of a turn's message and reasoning are hashed into.
const WORD_BUCKETS: usize = 512;

/// How much of a turn's message and reasoning is hashed: what a turn is about shows at its
/// start, and a 1 MB message would otherwise cost the most.
const WORD_BYTES: usize = 4096;

/// The words of a text and its pairs of neighbouring words, hashed into `WORD_BUCKETS`: a word
/// by FNV-1a over its bytes, ASCII letters lower-cased, a pair by mixing its words' hashes — the
/// same bucket on every machine; a bucket holds log(1 + count). A word is a run of ASCII
/// letters, digits and `_`, and of any non-ASCII bytes (the letters of other scripts).
fn word_buckets(text: &str) -> Vec<f32> {
    const BASIS: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    let mut counts = vec![0u32; WORD_BUCKETS];
    let mut add = |h: u32| counts[h as usize % WORD_BUCKETS] += 1;
    let (mut word, mut prev): (Option<u32>, Option<u32>) = (None, None);
    let mut end = |w: u32, prev: Option<u32>| {
        add(w);
        if let Some(p) = prev {
            add((p.wrapping_mul(PRIME) ^ w).wrapping_mul(PRIME));
        }
    };
    for &b in text.as_bytes().iter().take(WORD_BYTES) {
        if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 {
            let h = word.unwrap_or(BASIS);
            word = Some((h ^ u32::from(b.to_ascii_lowercase())).wrapping_mul(PRIME));
        } else if let Some(w) = word.take() {
            end(w, prev);
            prev = Some(w);
        }
    }
    if let Some(w) = word {
        end(w, prev);
    }
    counts.into_iter().map(|c| count(c as usize)).collect()
}

/// log(1 + n): counts grow slowly.
fn count(n: usize) -> f32 {
    if n == 0 { 0.0 } else { (n as f32).ln_1p() }
}

fn flag(b: bool) -> f32 {
    if b { 1.0 } else { 0.0 }
}

impl Offline {
    /// The features of one turn, in the order of [`names`]; `rule` is what the phrase rules
    /// gave it, `units` its pieces.
    pub(super) fn features(
        &self,
        v: &TurnView,
        kind: TurnKind,
        units: &[Unit],
        rule: &Answer,
        pos: Position,
    ) -> Vec<f32> {
        let mut x = Vec::with_capacity(256);
        x.extend(KINDS.iter().map(|k| flag(*k == kind)));
        for d in Dim::ALL {
            let s = rule.scores.get(d);
            x.extend((1..=3).map(|l| flag(s == l)));
        }
        let code_change = |p: &str| !is_prose_file(p) && !is_check_file(p);
        let text = v.text.trim();
        x.extend([
            flag(rule.opportunity),
            flag(self.touches_anchor(v)),
            flag(self.task_threat),
            flag(self.finding),
            flag(v.changes.iter().any(|c| self.is_anchor(&c.path))),
            flag(
                v.changes
                    .iter()
                    .any(|c| code_change(&c.path) && !self.is_anchor(&c.path)),
            ),
            flag(v.changes.iter().any(|c| is_check_file(&c.path))),
            flag(!v.changes.is_empty() && v.changes.iter().all(|c| is_prose_file(&c.path))),
            count(v.calls.len()),
            count(v.calls.iter().filter(|c| c.is_error).count()),
            count(text.chars().count()) / 4.0,
            count(v.reasoning.as_deref().map_or(0, |r| r.chars().count())) / 4.0,
            flag(v.calls.iter().any(|c| probe(c).is_some())),
            flag(pos.index == 0),
            if pos.of > 1 {
                pos.index as f32 / (pos.of - 1) as f32
            } else {
                0.0
            },
            flag(pos.edited_before),
            flag(pos.anchor_edited_before),
            count(
                units
                    .iter()
                    .filter(|u| u.anchored && u.source == Source::Code)
                    .count(),
            ),
            count(
                units
                    .iter()
                    .filter(|u| u.anchored && u.source == Source::Prose)
                    .count(),
            ),
            count(
                units
                    .iter()
                    .filter(|u| u.anchored && u.source == Source::Read)
                    .count(),
            ),
            count(
                units
                    .iter()
                    .filter(|u| u.fresh && u.source == Source::Code)
                    .count(),
            ),
            count(
                units
                    .iter()
                    .filter(|u| u.kept && u.source == Source::Code)
                    .count(),
            ),
        ]);
        let prose: String = std::iter::once(v.text.as_str())
            .chain(v.reasoning.as_deref())
            .collect::<Vec<_>>()
            .join("\n");
        x.extend(self.place_features(v, &prose));
        // One pass over the pieces: per source, how many hit each counted list; and how many
        // sentences affirm each dimension's list.
        let mut per = [[0usize; COUNTED.len()]; SOURCES.len()];
        let mut affirmed = [0usize; 16];
        for u in units {
            let Some(si) = SOURCES.iter().position(|(s, _)| *s == u.source) else {
                continue;
            };
            for (li, (list, _, _)) in COUNTED.iter().enumerate() {
                if u.hits.any(*list) {
                    per[si][li] += 1;
                    if li < 16 && u.source == Source::Prose && u.hits.affirmed(*list) {
                        affirmed[li] += 1;
                    }
                }
            }
        }
        x.extend(per.iter().flat_map(|row| row.iter().map(|c| count(*c))));
        x.extend(affirmed.iter().map(|c| count(*c)));
        x.extend(word_buckets(&prose));
        x
    }
}

/// The longer words of a text, lower case, once each: the words a turn can share with the
/// task.
pub(crate) fn content_words(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if w.chars().count() >= 5 {
            let w = w.to_lowercase();
            if seen.insert(w.clone()) {
                out.push(w);
            }
        }
    }
    out
}

/// Whether `word` (lower case) stands in `text` as a whole word, ignoring ASCII case.
fn names_word(text: &str, word: &str) -> bool {
    let (t, w) = (text.as_bytes(), word.as_bytes());
    let Some(&first) = w.first() else {
        return false;
    };
    if t.len() < w.len() {
        return false;
    }
    let edge = |i: usize| t.get(i).is_none_or(|b| !b.is_ascii_alphanumeric());
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), &t[..=t.len() - w.len()]).any(|i| {
        t[i..i + w.len()].eq_ignore_ascii_case(w) && (i == 0 || edge(i - 1)) && edge(i + w.len())
    })
}

impl Offline {
    /// Where the turn works relative to the anchored file: how much of the task it speaks to,
    /// whether it names the file's stem, edits beside it (same folder, same area) or reads
    /// there.
    fn place_features(&self, v: &TurnView, prose: &str) -> [f32; 5] {
        let overlap = if self.task_words.is_empty() {
            0.0
        } else {
            // A task word counts where it stands whole in the prose, whatever its case.
            let lower = prose.to_lowercase();
            let whole = |w: &str| {
                lower.match_indices(w).any(|(i, _)| {
                    !lower[..i]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric)
                        && !lower[i + w.len()..]
                            .chars()
                            .next()
                            .is_some_and(char::is_alphanumeric)
                })
            };
            self.task_words.iter().filter(|w| whole(w)).count() as f32
                / self.task_words.len() as f32
        };
        let Some((path, base)) = &self.anchor else {
            return [overlap, 0.0, 0.0, 0.0, 0.0];
        };
        let stem = base.split('.').next().unwrap_or(base).to_lowercase();
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let area: String = path.split('/').take(2).collect::<Vec<_>>().join("/");
        let named = stem.chars().count() >= 4
            && std::iter::once(prose)
                .chain(v.calls.iter().map(|c| c.args.as_str()))
                .chain(v.changes.iter().map(|c| c.diff.as_str()))
                .any(|t| names_word(t, &stem));
        let in_dir =
            |p: &str| !dir.is_empty() && p.rsplit_once('/').is_some_and(|(d, _)| d.ends_with(dir));
        let in_area = |p: &str| area.contains('/') && p.contains(&area);
        [
            overlap,
            flag(named),
            flag(
                v.changes
                    .iter()
                    .any(|c| in_dir(&c.path) && !self.is_anchor(&c.path)),
            ),
            flag(v.changes.iter().any(|c| in_area(&c.path))),
            flag(!dir.is_empty() && v.calls.iter().any(|c| c.args.contains(dir))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_line_up() {
        let off = Offline::new(
            "security",
            "fix the SSRF",
            Some(918),
            Some("media/fetcher.py"),
            None,
        )
        .unwrap();
        let v = TurnView {
            n: 1,
            agent: "a".into(),
            kind: "planning".into(),
            text: "We will resolve the host and refuse private addresses in media/fetcher.py."
                .into(),
            reasoning: None,
            reasoning_redacted: false,
            calls: Vec::new(),
            changes: Vec::new(),
        };
        let units = off.units(&v, &Default::default());
        let rule = off.score(&v, TurnKind::Planning);
        let x = off.features(&v, TurnKind::Planning, &units, &rule, Position::default());
        let n = names();
        assert_eq!(x.len(), n.len());
        let at = |name: &str| x[n.iter().position(|x| x == name).unwrap()];
        assert_eq!(at("kind:planning"), 1.0);
        assert_eq!(at("finding-known"), 1.0);
        assert_eq!(at("first-in-scope"), 1.0);
        assert!(at("prose:di-specific") > 0.0);
        // names are unique: the model file's contract
        let set: std::collections::BTreeSet<&String> = n.iter().collect();
        assert_eq!(set.len(), n.len());
    }
}
