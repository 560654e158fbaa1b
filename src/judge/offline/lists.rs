//! The phrase lists of a run compiled for matching: one automaton over every list, so a
//! sentence is read once, and where each list first matches in it (`Hits`).

use crate::judge::lexicon::Entry;
use crate::judge::scores::Dim;
use crate::judge::words::{self, Pattern};

/// A phrase list compiled for one pass over a text (case-insensitive, word-bounded).
pub(super) struct Phrases {
    ac: Option<aho_corasick::AhoCorasick>,
    /// Per pattern: its boundaries and the stems' words after the first.
    pats: Vec<Pattern>,
    /// Per pattern: the entry it spells (a Chinese entry may be spelt with and without spaces).
    entries: Vec<usize>,
}

/// The patterns of an entry (`words::compile`).
pub(super) fn patterns(e: &Entry) -> Vec<Pattern> {
    words::compile(&e.phrase())
}

/// One case-insensitive automaton over `patterns`, none when there are none.
fn automaton(patterns: &[&str]) -> Option<aho_corasick::AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(patterns)
        .ok()
}

/// Where a match of `p` that the automaton found at `a..z` in `folded` ends, when it stands
/// on word boundaries where it must (its stems' later words followed); `text` is the original,
/// whose offsets are the folded text's.
fn whole(text: &str, folded: &str, p: &Pattern, a: usize, z: usize) -> Option<usize> {
    let z = if p.tail.is_empty() {
        z
    } else {
        words::extent(folded, z, &p.tail)?
    };
    ((!p.start || !words::word_before(text, a)) && (!p.end || !words::word_at(text, z)))
        .then_some(z)
}

impl Phrases {
    pub(super) fn new<'a>(list: impl IntoIterator<Item = &'a Entry>) -> Phrases {
        let mut pats: Vec<Pattern> = Vec::new();
        let mut entries = Vec::new();
        for (i, e) in list.into_iter().enumerate() {
            for p in patterns(e) {
                pats.push(p);
                entries.push(i);
            }
        }
        let texts: Vec<&str> = pats.iter().map(|p| p.text.as_str()).collect();
        Phrases {
            ac: automaton(&texts),
            pats,
            entries,
        }
    }

    /// Calls `f` with the entry and the start of each whole-word match, in the automaton's
    /// order, until it returns false.
    pub(super) fn each(&self, text: &str, mut f: impl FnMut(usize, usize) -> bool) {
        let Some(ac) = self.ac.as_ref() else {
            return;
        };
        let folded = words::fold(text);
        for m in ac.find_overlapping_iter(folded.as_ref()) {
            let i = m.pattern().as_usize();
            if whole(text, &folded, &self.pats[i], m.start(), m.end()).is_some()
                && !f(self.entries[i], m.start())
            {
                return;
            }
        }
    }

    /// Where the first whole-word match starts.
    pub(super) fn find(&self, text: &str) -> Option<usize> {
        let mut first = None;
        self.each(text, |_, at| {
            first = Some(at);
            false
        });
        first
    }

    pub(super) fn any(&self, text: &str) -> bool {
        self.find(text).is_some()
    }

    /// How many different entries match, for "several attacks tried".
    pub(super) fn distinct(&self, text: &str) -> usize {
        let mut seen = std::collections::BTreeSet::new();
        self.each(text, |e, _| {
            seen.insert(e);
            true
        });
        seen.len()
    }
}

/// A phrase list of a run (templates/lexicons/): per dimension its generic, task-specific,
/// code and weak phrases, then the lists that shape a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    /// The criterion's phrases of a dimension, whatever the weakness.
    Generic(Dim),
    /// The CWE lists' phrases that count in prose.
    Specific(Dim),
    /// The CWE lists' phrases that count in code: added lines and commands.
    Code(Dim),
    /// The CWE lists' phrases that count only in a turn that names a threat ("https").
    Weak(Dim),
    /// Phrases that cancel a match in the same sentence or line.
    Not,
    /// Words of completeness or condition ("every", "all routes").
    Complete,
    /// Words of testing or checking.
    Verify,
    /// Before a match, these say the opposite ("no need to").
    Negation,
    /// Code that refuses a request or an input (`raise`, `abort(`).
    Rejects,
    /// Names that hold a generic word without being about it ("Spring Security").
    Names,
    /// Before a defence, these say it is already there ("already uses").
    Observed,
    /// What a check reports when the defence holds ("both tokens are rejected").
    Refused,
    /// Words of looking further than the place at hand ("let me also check").
    Further,
    /// Scanned as a word list; after a scan, set only when every threat term of the sentence
    /// is the name of a defence ("CSRF protection").
    Artifact,
    /// Right before a match (no space between in Chinese, one in Russian), these cancel it:
    /// «не проверяем», «без проверки», 不校验.
    Particle,
    /// Right before a threat term, these make it the name of a defence as `Artifact` words do
    /// after one («исправление SSRF»).
    ArtifactBefore,
}

impl List {
    pub(super) const COUNT: usize = 28;

    /// Every list in the order of `index`, which is the order of the automaton's patterns:
    /// the scan reads matches that end together in that order, so it is kept as it was.
    pub(super) const ALL: [List; List::COUNT] = [
        List::Generic(Dim::Tr),
        List::Generic(Dim::Di),
        List::Generic(Dim::Vr),
        List::Generic(Dim::Sa),
        List::Specific(Dim::Tr),
        List::Specific(Dim::Di),
        List::Specific(Dim::Vr),
        List::Specific(Dim::Sa),
        List::Code(Dim::Tr),
        List::Code(Dim::Di),
        List::Code(Dim::Vr),
        List::Code(Dim::Sa),
        List::Not,
        List::Complete,
        List::Verify,
        List::Negation,
        List::Weak(Dim::Tr),
        List::Weak(Dim::Di),
        List::Weak(Dim::Vr),
        List::Weak(Dim::Sa),
        List::Rejects,
        List::Names,
        List::Observed,
        List::Refused,
        List::Further,
        List::Artifact,
        List::Particle,
        List::ArtifactBefore,
    ];

    /// Where the list stands in `ALL`.
    const fn index(self) -> usize {
        match self {
            List::Generic(d) => d as usize,
            List::Specific(d) => 4 + d as usize,
            List::Code(d) => 8 + d as usize,
            List::Not => 12,
            List::Complete => 13,
            List::Verify => 14,
            List::Negation => 15,
            List::Weak(d) => 16 + d as usize,
            List::Rejects => 20,
            List::Names => 21,
            List::Observed => 22,
            List::Refused => 23,
            List::Further => 24,
            List::Artifact => 25,
            List::Particle => 26,
            List::ArtifactBefore => 27,
        }
    }

    /// Whether a particle right before a match cancels it: the words of threats, defences,
    /// checks and scope, not the lists that shape a sentence (negations, names, artifacts).
    fn negatable(self) -> bool {
        matches!(
            self,
            List::Generic(_)
                | List::Specific(_)
                | List::Code(_)
                | List::Complete
                | List::Verify
                | List::Weak(_)
                | List::Refused
                | List::Further
        )
    }
}

/// One value per list, addressed by list.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PerList<T>([T; List::COUNT]);

impl<T> std::ops::Index<List> for PerList<T> {
    type Output = T;

    fn index(&self, list: List) -> &T {
        &self.0[list.index()]
    }
}

impl<T> std::ops::IndexMut<List> for PerList<T> {
    fn index_mut(&mut self, list: List) -> &mut T {
        &mut self.0[list.index()]
    }
}

/// Where each list first matches in a piece of text (whole words), from one pass.
pub(super) type Hits = PerList<Option<usize>>;

impl Hits {
    pub(super) fn any(&self, list: List) -> bool {
        self[list].is_some()
    }

    /// A match no negation before it turns around ("no need to escape").
    pub(super) fn affirmed(&self, list: List) -> bool {
        match self[list] {
            None => false,
            Some(at) => self[List::Negation].is_none_or(|n| n >= at),
        }
    }

    /// A match that the sentence says is already in place ("already uses `\Z`").
    pub(super) fn observed(&self, list: List) -> bool {
        match (self[list], self[List::Observed]) {
            (Some(at), Some(o)) => o < at,
            _ => false,
        }
    }

    /// A threat affirmed in the words of threats, generic or of the task's weakness: a
    /// security sentence.
    pub(super) fn names_threat(&self) -> bool {
        self.affirmed(List::Generic(Dim::Tr)) || self.affirmed(List::Specific(Dim::Tr))
    }
}

/// Every list of a run in one automaton, so a sentence is read once, not once per list.
pub(super) struct Lists {
    ac: Option<aho_corasick::AhoCorasick>,
    /// Per pattern: its list, its boundaries and the stems' words after the first.
    pats: Vec<(List, Pattern)>,
}

/// Whether what stands between two matches lets the second name the first (or be named by
/// it): nothing (Chinese, `SSRF防护`), one or two spaces, or a hyphen before a word that is
/// not ASCII (`SSRF-защита`; `CSRF-token` stays the identifier it looks like).
fn adjoins(text: &str, from: usize, to: usize) -> bool {
    let gap = &text[from..to];
    let han = text[..from]
        .chars()
        .next_back()
        .is_some_and(crate::lang::is_han)
        || text[to..].chars().next().is_some_and(crate::lang::is_han);
    (gap.is_empty() && han)
        || (!gap.is_empty() && gap.len() <= 2 && gap.bytes().all(|c| c == b' '))
        || (gap == "-" && text[to..].chars().next().is_some_and(|c| !c.is_ascii()))
}

impl Lists {
    pub(super) fn new(lists: &PerList<Vec<Entry>>) -> Lists {
        let mut pats = Vec::new();
        for list in List::ALL {
            for p in lists[list].iter().flat_map(patterns) {
                pats.push((list, p));
            }
        }
        let texts: Vec<&str> = pats.iter().map(|(_, p)| p.text.as_str()).collect();
        Lists {
            ac: automaton(&texts),
            pats,
        }
    }

    /// Where each list first matches in `text`, in one pass; `prose` for what the agent said,
    /// where names, quotes and file names hide the words they hold (`Scan`).
    pub(super) fn scan(&self, text: &str, prose: bool) -> Hits {
        let Some(ac) = &self.ac else {
            return Hits::default();
        };
        let folded = words::fold(text);
        let mut scan = Scan::new(text, prose);
        for m in ac.find_overlapping_iter(folded.as_ref()) {
            let (list, p) = &self.pats[m.pattern().as_usize()];
            let Some(z) = (if p.tail.is_empty() {
                Some(m.end())
            } else {
                words::extent(&folded, m.end(), &p.tail)
            }) else {
                continue;
            };
            let a = m.start();
            if scan.stands(*list, p, a, z) {
                scan.take(*list, a, z);
            }
        }
        scan.finish()
    }
}

/// Identifiers and file names are ASCII: a joiner between ASCII words joins them, and one
/// before a Russian word (`SSRF-атака`) does not.
fn joiner(c: u8) -> bool {
    matches!(c, b'.' | b'/' | b'-' | b'\\')
}

/// Quotation marks of the languages the lists are in.
fn is_quote(c: Option<char>) -> bool {
    matches!(
        c,
        Some(
            '"' | '\''
                | '`'
                | '“'
                | '”'
                | '‘'
                | '’'
                | '«'
                | '»'
                | '„'
                | '「'
                | '」'
                | '『'
                | '』'
                | '《'
                | '》'
        )
    )
}

/// One pass of `Lists::scan` over a text: whether a match stands as the word it spells, and
/// what the matches leave to be settled at the end. The automaton reports matches by where
/// they end.
struct Scan<'t> {
    text: &'t str,
    prose: bool,
    hits: Hits,
    /// Generic matches wait for the names, since a generic word inside one ("the security
    /// workflow") is not the word.
    names: Vec<(usize, usize)>,
    /// Completeness words wait for the weakness's terms too: "redirect" inside "open
    /// redirect" names the weakness, it says nothing of its routes.
    terms: Vec<(usize, usize)>,
    /// The generic and completeness matches that wait.
    generic: Vec<(List, usize, usize)>,
    /// Threat terms of prose, and where artifact words start (or, before a term, end):
    /// "CSRF protection", «исправление SSRF» name the defence.
    threats: Vec<(usize, usize)>,
    artifact_starts: Vec<usize>,
    artifact_ends: Vec<usize>,
    /// Where particles end: a match right after one is cancelled. A particle ends before
    /// what it stands in front of, so it is reported first.
    particles: Vec<usize>,
}

impl<'t> Scan<'t> {
    fn new(text: &'t str, prose: bool) -> Scan<'t> {
        Scan {
            text,
            prose,
            hits: Hits::default(),
            names: Vec::new(),
            terms: Vec::new(),
            generic: Vec::new(),
            threats: Vec::new(),
            artifact_starts: Vec::new(),
            artifact_ends: Vec::new(),
            particles: Vec::new(),
        }
    }

    /// No word runs on into the match at `i`. In prose, a word that is part of a file name
    /// or a dotted or slashed identifier (`security.py`, `redact/`) is not the word:
    /// "security" in `app/utils/security.py` says nothing about security.
    fn free_before(&self, i: usize) -> bool {
        let b = self.text.as_bytes();
        !(words::word_before(self.text, i)
            || (self.prose
                && i >= 2
                && joiner(b[i - 1])
                && words::ascii_word(b[i - 2])
                && b.get(i).is_some_and(u8::is_ascii)))
    }

    /// No word runs on from the match ending at `i` (as `free_before`).
    fn free_after(&self, i: usize) -> bool {
        let b = self.text.as_bytes();
        !(words::word_at(self.text, i)
            || (self.prose
                && i < b.len()
                && joiner(b[i])
                && b.get(i + 1).is_some_and(|c| words::ascii_word(*c))
                && i >= 1
                && b[i - 1].is_ascii()))
    }

    /// In prose, a common word in quotes is a name ("the “security” workflow", «безопасность»,
    /// 「安全」), not the word; a term of the weakness in backticks (`403`, `compare_digest`)
    /// is still the term. A stem's word ends where its letters do («безопасность» for
    /// безопасност*).
    fn quoted(&self, a: usize, z: usize) -> bool {
        let text = self.text;
        self.prose
            && is_quote(text[..a].chars().next_back())
            && is_quote(text[words::word_end(text, z)..].chars().next())
    }

    /// In prose, a stem that runs on into an identifier (`RedactBytes`, `redact_test.go`) is
    /// part of a name, as a word inside a file name is.
    fn runs_into_identifier(&self, z: usize) -> bool {
        let b = self.text.as_bytes();
        let mut k = z;
        while k < b.len() && b[k].is_ascii_lowercase() {
            k += 1;
        }
        self.prose
            && k > 0
            && k < b.len()
            && (b[k] == b'_' || (b[k].is_ascii_uppercase() && b[k - 1].is_ascii_lowercase()))
    }

    /// Whether a match of `p` (of `list`) at `a..z` stands as the word it spells.
    fn stands(&self, list: List, p: &Pattern, a: usize, z: usize) -> bool {
        (!p.start || self.free_before(a))
            && (if p.end {
                self.free_after(z)
            } else {
                !self.runs_into_identifier(z)
            })
            && !(matches!(list, List::Generic(_)) && self.quoted(a, z))
    }

    /// Takes a match that stands: a hit, or a span for `finish` to settle.
    fn take(&mut self, list: List, a: usize, z: usize) {
        let text = self.text;
        if list == List::Particle {
            self.particles.push(z);
            return;
        }
        if list == List::ArtifactBefore {
            // A stem's word ends where its letters do (исправлени* → исправление).
            self.artifact_ends.push(words::word_end(text, z));
            return;
        }
        if self.prose
            && list.negatable()
            && self
                .particles
                .iter()
                .any(|&e| e <= a && (e == a || text[e..a] == *" "))
        {
            return;
        }
        let term = matches!(list, List::Specific(_) | List::Code(_));
        if !term && self.hits[list].is_some_and(|at| at <= a) {
            return;
        }
        if list == List::Names {
            self.names.push((a, z));
        }
        if list == List::Artifact {
            self.artifact_starts.push(a);
            return;
        }
        if self.prose && list == List::Specific(Dim::Tr) {
            self.threats.push((a, z));
        }
        if term {
            self.terms.push((a, z));
            if self.hits[list].is_none() {
                self.hits[list] = Some(a);
            }
        } else if matches!(list, List::Generic(_) | List::Complete) {
            self.generic.push((list, a, z));
        } else {
            self.hits[list] = Some(a);
        }
    }

    /// The hits, with the generic and completeness words no name or term holds, and
    /// `Artifact` set when every threat term of prose names a defence.
    fn finish(mut self) -> Hits {
        for &(list, a, z) in &self.generic {
            let within =
                |spans: &[(usize, usize)]| spans.iter().any(|&(na, nz)| na <= a && z <= nz);
            let hidden = if list == List::Complete {
                within(&self.terms)
            } else {
                within(&self.names)
            };
            if !hidden && self.hits[list].is_none_or(|at| at > a) {
                self.hits[list] = Some(a);
            }
        }
        let text = self.text;
        let names_defence = |(a, z): (usize, usize)| {
            self.artifact_starts
                .iter()
                .any(|&s| s >= z && adjoins(text, z, s))
                || self
                    .artifact_ends
                    .iter()
                    .any(|&e| e <= a && adjoins(text, e, a))
        };
        if !self.threats.is_empty() && self.threats.iter().all(|&t| names_defence(t)) {
            self.hits[List::Artifact] = self.hits[List::Specific(Dim::Tr)];
        }
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_list_has_its_own_place_in_the_order_of_all() {
        for (i, list) in List::ALL.iter().enumerate() {
            assert_eq!(list.index(), i, "{list:?}");
        }
    }

    #[test]
    fn hits_are_read_by_list() {
        let mut h = Hits::default();
        h[List::Specific(Dim::Di)] = Some(10);
        assert!(h.any(List::Specific(Dim::Di)));
        assert!(!h.any(List::Specific(Dim::Tr)) && !h.any(List::Code(Dim::Di)));
        assert!(h.affirmed(List::Specific(Dim::Di)));
        // A negation before the match turns it around; one after it does not.
        h[List::Negation] = Some(3);
        assert!(!h.affirmed(List::Specific(Dim::Di)));
        h[List::Negation] = Some(12);
        assert!(h.affirmed(List::Specific(Dim::Di)));
        // Observed: said to be in place before the match.
        assert!(!h.observed(List::Specific(Dim::Di)));
        h[List::Observed] = Some(0);
        assert!(h.observed(List::Specific(Dim::Di)));
        assert!(!h.names_threat());
        h[List::Generic(Dim::Tr)] = Some(20);
        assert!(!h.names_threat(), "negated at 12");
        h[List::Negation] = None;
        assert!(h.names_threat());
    }
}
