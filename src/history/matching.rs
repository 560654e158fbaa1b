//! Fragment matching over file snapshots: whitespace-insensitive fragments, regex patterns.

use memchr::memmem;
use regex::bytes::Regex;

use crate::anchor::AnchorKind;
use crate::error::{Error, Result};

/// Decides whether the defect is present in one snapshot of the anchored file.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    kind: AnchorKind,
    how: How,
}

#[derive(Debug, Clone)]
enum How {
    /// Normalised fragments; all must occur.
    Fragments(Vec<Fragment>),
    Pattern(Regex),
}

/// One normalised fragment, and how to find it fast.
#[derive(Debug, Clone)]
struct Fragment {
    finder: memmem::Finder<'static>,
    /// The fragment's longest identifier and where it starts in the normalised fragment.
    /// Whitespace never splits an identifier, so every match contains it verbatim: search
    /// for it, then compare the rest around each hit without normalising the file.
    token: Option<(memmem::Finder<'static>, usize)>,
    normalised: Vec<u8>,
}

/// The longest run of word characters in a normalised fragment.
fn longest_word(normalised: &[u8]) -> &[u8] {
    normalised
        .split(|&b| !is_word(b))
        .max_by_key(|w| w.len())
        .unwrap_or(&[])
}

impl Matcher {
    /// Builds a matcher from fragments; `what` names the anchor for error messages.
    pub(crate) fn fragments(fragments: &[String], kind: AnchorKind, what: &str) -> Result<Matcher> {
        if fragments.is_empty() {
            return Err(Error::input(format!("{what}: no fragments to look for"))
                .hint("give at least one fragment, a lines: range or a pattern:"));
        }
        let mut normalised = Vec::with_capacity(fragments.len());
        for (i, f) in fragments.iter().enumerate() {
            let n = normalize(f.as_bytes());
            if n.is_empty() {
                return Err(Error::input(format!(
                    "{what}: fragment {} is empty or only whitespace",
                    i + 1
                )));
            }
            normalised.push(n);
        }
        let frags = normalised
            .into_iter()
            .map(|n| {
                let word = longest_word(&n);
                let token = (word.len() >= 3).then(|| {
                    let at = word.as_ptr() as usize - n.as_ptr() as usize;
                    (memmem::Finder::new(word).into_owned(), at)
                });
                Fragment {
                    finder: memmem::Finder::new(&n).into_owned(),
                    token,
                    normalised: n,
                }
            })
            .collect();
        Ok(Matcher {
            kind,
            how: How::Fragments(frags),
        })
    }

    /// Builds a matcher from a regular expression over the whole file.
    pub(crate) fn pattern(pattern: &str, kind: AnchorKind, what: &str) -> Result<Matcher> {
        let re = Regex::new(pattern).map_err(|e| {
            let first = e.to_string();
            let first = first.lines().last().unwrap_or("invalid").trim().to_string();
            Error::input(format!(
                "{what}: pattern {pattern:?} is not a valid regex: {first}"
            ))
        })?;
        Ok(Matcher {
            kind,
            how: How::Pattern(re),
        })
    }

    /// Whether the located code is found in `content`, before `kind` is applied.
    #[cfg(test)]
    pub(crate) fn located(&self, content: &[u8]) -> bool {
        self.located_with(content, &mut Vec::new())
    }

    /// As `located`, normalising into a buffer the caller reuses across files.
    pub(crate) fn located_with(&self, content: &[u8], scratch: &mut Vec<u8>) -> bool {
        match &self.how {
            How::Fragments(frags) => {
                let mut normalised = false;
                frags.iter().all(|f| match &f.token {
                    Some((token, at)) => {
                        // Overlapping hits count: in `ababab`, `abab` starts at 0 and at 2.
                        let len = token.needle().len();
                        let mut from = 0;
                        while let Some(hit) = token.find(&content[from..]) {
                            if matches_around(content, from + hit, &f.normalised, *at, len) {
                                return true;
                            }
                            from += hit + 1;
                        }
                        false
                    }
                    None => {
                        if !normalised {
                            normalize_into(content, scratch);
                            normalised = true;
                        }
                        f.finder.find(scratch).is_some()
                    }
                })
            }
            How::Pattern(re) => re.is_match(content),
        }
    }

    /// How many times the located code occurs in `content` (the fewest over the fragments).
    pub(crate) fn occurrences(&self, content: &[u8]) -> usize {
        match &self.how {
            How::Fragments(frags) => {
                let mut scratch = Vec::new();
                normalize_into(content, &mut scratch);
                frags
                    .iter()
                    .map(|f| f.finder.find_iter(&scratch).count())
                    .min()
                    .unwrap_or(0)
            }
            How::Pattern(re) => re.find_iter(content).count(),
        }
    }

    pub(crate) fn is_present_kind(&self) -> bool {
        self.kind == AnchorKind::Present
    }

    /// Whether the defect is present in a snapshot; `None` means the file does not exist there.
    pub(crate) fn defect_present(&self, content: Option<&[u8]>) -> bool {
        self.defect_present_with(content, &mut Vec::new())
    }

    /// As `defect_present`, with a reusable normalisation buffer.
    pub(crate) fn defect_present_with(
        &self,
        content: Option<&[u8]>,
        scratch: &mut Vec<u8>,
    ) -> bool {
        match content {
            // An anchor cannot be located in a file that is not there, whatever its kind.
            None => false,
            Some(c) => match self.kind {
                AnchorKind::Present => self.located_with(c, scratch),
                AnchorKind::Absent => !self.located_with(c, scratch),
            },
        }
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Whether `frag` (normalised) matches the normalised `raw` with its byte `at` placed on raw
/// byte `p`, where `raw[p..p + len]` is the identifier `frag[at..at + len]`. Compares outward
/// from the identifier, applying the normalisation rule on the fly.
fn matches_around(raw: &[u8], p: usize, frag: &[u8], at: usize, len: usize) -> bool {
    forward(raw, p + len, &frag[at + len..]) && backward(raw, p, &frag[..at])
}

fn forward(raw: &[u8], mut i: usize, rest: &[u8]) -> bool {
    // `prev` is the last raw byte matched; the identifier guarantees there is one.
    let mut prev = raw[i - 1];
    let mut after_space = false;
    for &f in rest {
        if f == b' ' {
            // Normalised text has a space only where blanks separated two word characters.
            if i >= raw.len() || !is_blank(raw[i]) {
                return false;
            }
            while i < raw.len() && is_blank(raw[i]) {
                i += 1;
            }
            after_space = true;
            continue;
        }
        let start = i;
        while i < raw.len() && is_blank(raw[i]) {
            i += 1;
        }
        if i >= raw.len() || raw[i] != f {
            return false;
        }
        if i > start && !after_space && is_word(prev) && is_word(f) {
            return false;
        }
        prev = f;
        after_space = false;
        i += 1;
    }
    true
}

fn backward(raw: &[u8], mut i: usize, rest: &[u8]) -> bool {
    let mut next = raw[i];
    let mut before_space = false;
    for &f in rest.iter().rev() {
        if f == b' ' {
            if i == 0 || !is_blank(raw[i - 1]) {
                return false;
            }
            while i > 0 && is_blank(raw[i - 1]) {
                i -= 1;
            }
            before_space = true;
            continue;
        }
        let start = i;
        while i > 0 && is_blank(raw[i - 1]) {
            i -= 1;
        }
        if i == 0 || raw[i - 1] != f {
            return false;
        }
        if i < start && !before_space && is_word(next) && is_word(f) {
            return false;
        }
        next = f;
        before_space = false;
        i -= 1;
    }
    true
}

/// Collapses every run of whitespace, and drops it entirely unless it separates two word
/// characters: `x = f( a )` and `x=f(a)` normalise alike, while `if not` keeps its space.
pub(crate) fn normalize(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    normalize_into(input, &mut out);
    out
}

/// `normalize` into a caller's buffer (cleared first).
pub(crate) fn normalize_into(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(input.len());
    let n = input.len();
    let mut i = 0;
    while i < n {
        // Copy a whole run of non-blank bytes at once, then skip the blanks after it.
        let start = i;
        while i < n && !is_blank(input[i]) {
            i += 1;
        }
        if start < i {
            if start > 0
                && out.last().is_some_and(|&l| is_word(l))
                && is_word(input[start])
                && is_blank(input[start - 1])
            {
                out.push(b' ');
            }
            out.extend_from_slice(&input[start..i]);
        }
        while i < n && is_blank(input[i]) {
            i += 1;
        }
    }
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Lines `start..=end` (1-based) of a text, or `None` when the range is outside it.
pub(crate) fn lines_of(content: &[u8], start: u32, end: u32) -> Option<String> {
    if start == 0 || end < start {
        return None;
    }
    let text = String::from_utf8_lossy(content);
    let lines: Vec<&str> = text.lines().collect();
    if end as usize > lines.len() {
        return None;
    }
    Some(lines[start as usize - 1..end as usize].join("\n"))
}

/// Whether content looks binary (a NUL byte in the first 8,000 bytes, as git decides).
pub(crate) fn is_binary(content: &[u8]) -> bool {
    content[..content.len().min(8000)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(frags: &[&str]) -> Matcher {
        let v: Vec<String> = frags.iter().map(|s| s.to_string()).collect();
        Matcher::fragments(&v, AnchorKind::Present, "t").unwrap()
    }

    #[test]
    fn normalize_keeps_word_separators_only() {
        assert_eq!(
            normalize(b"  if  not\n\turl.startswith( 'x' ):"),
            b"if not url.startswith('x'):"
        );
        assert_eq!(normalize(b"x = f(a,\n      b)"), b"x=f(a,b)");
        assert_eq!(normalize(b""), b"");
        assert_eq!(normalize(b" \n\t "), b"");
    }

    #[test]
    fn fragments_ignore_indentation_and_line_breaks() {
        let file =
            b"def f(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError\n";
        assert!(m(&["if not url.startswith(\"https://\"):"]).located(file));
        assert!(m(&["if not url.startswith( \"https://\" ):\n raise ValueError"]).located(file));
        assert!(!m(&["if not url.startswith(\"http://\"):"]).located(file));
        // all fragments must be present
        assert!(!m(&["def f(url):", "import os"]).located(file));
        // words do not fuse: `ifnot` is not `if not`
        assert!(!m(&["ifnot url"]).located(file));
        // the identifier prefilter never rejects a real match split over lines
        let split = b"if not url.\n   startswith(\n  'https://'):";
        assert!(m(&["url.startswith('https://')"]).located(split));
        assert_eq!(
            longest_word(b"if not url.startswith('https://'):"),
            b"startswith"
        );
    }

    #[test]
    fn absent_kind_inverts_and_missing_file_is_never_present() {
        let frags = vec!["check_host(url)".to_string()];
        let absent = Matcher::fragments(&frags, AnchorKind::Absent, "t").unwrap();
        assert!(!absent.defect_present(Some(b"check_host(url)\nfetch(url)")));
        assert!(absent.defect_present(Some(b"fetch(url)")));
        assert!(!absent.defect_present(None));
        assert!(!m(&["x"]).defect_present(None));
    }

    #[test]
    fn pattern_and_errors() {
        let p = Matcher::pattern(r#"startswith\(["']https://"#, AnchorKind::Present, "t").unwrap();
        assert!(p.located(b"if url.startswith('https://'):"));
        assert!(Matcher::pattern("(", AnchorKind::Present, "a.yaml").is_err());
        assert!(Matcher::fragments(&["  ".into()], AnchorKind::Present, "a").is_err());
        assert!(Matcher::fragments(&[], AnchorKind::Present, "a").is_err());
    }

    use proptest::prelude::*;

    fn reference(content: &[u8], frag: &[u8]) -> bool {
        let f = normalize(frag);
        memmem::find(&normalize(content), &f).is_some()
    }

    fn text() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop::sample::select(vec![
                b'a', b'b', b'c', b'_', b' ', b'\n', b'\t', b'(', b')', b'.', b'"',
            ]),
            0..60,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn fast_match_equals_normalise_then_search(content in text(), frag in text(), cut in any::<(usize, usize)>()) {
            // random fragments, and fragments cut from the content (so matches happen)
            let n = content.len();
            let (a, b) = (cut.0 % (n + 1), cut.1 % (n + 1));
            let inner = content[a.min(b)..a.max(b)].to_vec();
            for f in [frag, inner] {
                if normalize(&f).is_empty() {
                    continue;
                }
                let m = Matcher::fragments(&[String::from_utf8(f.clone()).unwrap()], AnchorKind::Present, "t").unwrap();
                prop_assert_eq!(m.located(&content), reference(&content, &f), "content {:?} frag {:?}", String::from_utf8_lossy(&content), String::from_utf8_lossy(&f));
            }
        }
    }

    #[test]
    fn lines_are_one_based_inclusive() {
        let c = b"a\nb\nc\n";
        assert_eq!(lines_of(c, 2, 3).as_deref(), Some("b\nc"));
        assert_eq!(lines_of(c, 3, 4), None);
        assert_eq!(lines_of(c, 0, 1), None);
        assert!(is_binary(b"ab\0c"));
        assert!(!is_binary(b"abc"));
    }
}
