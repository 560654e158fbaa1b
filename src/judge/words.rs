//! Words as the offline judge's phrase lists see them, in English, Russian and Chinese: which
//! characters make up a word (Chinese has no spaces, so a Han character never does), case
//! folding that keeps every byte offset, sentences (after `. ` and after `。`), and an entry
//! compiled into what the automaton looks for.

use std::borrow::Cow;

use crate::lang::is_han;

/// A character that continues a word: a letter, a digit or `_` of a script that puts spaces
/// between words. A Han or kana character is a word of its own, so a Chinese phrase matches
/// wherever its characters stand.
pub(super) fn is_word_char(c: char) -> bool {
    c == '_' || (c.is_alphanumeric() && !spaceless(c))
}

/// Scripts written without spaces between words: Han, and the Japanese kana beside it.
fn spaceless(c: char) -> bool {
    is_han(c) || matches!(c, '\u{3040}'..='\u{30FF}')
}

/// An ASCII byte that continues a word (identifiers and file names are ASCII).
pub(super) fn ascii_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether the character that ends at byte `i` continues a word.
pub(super) fn word_before(text: &str, i: usize) -> bool {
    let b = text.as_bytes();
    match i.checked_sub(1).map(|j| b[j]) {
        None => false,
        Some(c) if c.is_ascii() => ascii_word(c),
        Some(_) => text[..i].chars().next_back().is_some_and(is_word_char),
    }
}

/// Whether the character that starts at byte `i` continues a word.
pub(super) fn word_at(text: &str, i: usize) -> bool {
    match text.as_bytes().get(i) {
        None => false,
        Some(c) if c.is_ascii() => ascii_word(*c),
        Some(_) => text[i..].chars().next().is_some_and(is_word_char),
    }
}

/// Where the word that runs on at byte `i` ends (`i` itself when none does).
pub(super) fn word_end(text: &str, mut i: usize) -> usize {
    while i < text.len() && word_at(text, i) {
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    i
}

/// The text in lower case where that keeps each character's length in bytes (Cyrillic does;
/// the automaton folds ASCII itself), with `ё` as `е`, which Russian writes either way: every
/// offset in the folded text is the same offset in the original, so a match's place is the
/// quote's. ASCII text is returned as it is.
pub(super) fn fold(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let mut lower = c.to_lowercase();
        let l = match (lower.next(), lower.next()) {
            (Some(l), None) if l.len_utf8() == c.len_utf8() => l,
            _ => c,
        };
        out.push(if l == 'ё' { 'е' } else { l });
    }
    Cow::Owned(out)
}

/// Sentences of a line: split after `.`, `!`, `?` (or `;`) followed by a space, and after
/// Chinese full stops and marks (`。`, `！`, `？`, `；`), which no space follows.
pub(super) fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = line.as_bytes();
    for (i, c) in line.char_indices() {
        let end = match c {
            '.' | '!' | '?' | ';' if b.get(i + 1) == Some(&b' ') => i + 1,
            '。' | '！' | '？' | '；' => i + c.len_utf8(),
            _ => continue,
        };
        out.push(&line[start..end]);
        start = end;
    }
    if start < line.len() || out.is_empty() {
        out.push(&line[start..]);
    }
    out
}

/// One word after the first of an entry whose words are stems (`внутренн* сет*`): checked
/// after the automaton found the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tail {
    word: String,
    stem: bool,
}

/// An entry as the automaton looks for it: the text (folded), whether its start and its end
/// must fall on a word boundary, and the words after a stem that the automaton cannot follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pattern {
    pub text: String,
    pub start: bool,
    pub end: bool,
    pub tail: Vec<Tail>,
}

/// A word, and whether it is a stem: a `*` after a letter or digit (`validat*`, `провер*`);
/// after punctuation the `*` is text (`***`, a masked value).
fn stem_of(word: &str) -> (&str, bool) {
    match word.strip_suffix('*') {
        Some(w) if w.chars().next_back().is_some_and(char::is_alphanumeric) => (w, true),
        _ => (word, false),
    }
}

/// The patterns of an entry: none for an empty one; several for a phrase that mixes Han with
/// Latin letters, which Chinese writes with or without a space between them (`任意 URL`,
/// `任意URL`).
pub(super) fn compile(phrase: &str) -> Vec<Pattern> {
    if phrase.trim().is_empty() {
        return Vec::new();
    }
    let words: Vec<&str> = phrase.split(' ').collect();
    // Each word may be a stem; the automaton takes the words up to the first inner stem, and
    // the rest are followed by hand.
    let inner = words[..words.len() - 1]
        .iter()
        .position(|w| stem_of(w).1 && !w.is_empty());
    let (head, tail, stem) = match inner {
        Some(k) => {
            let mut head: Vec<&str> = words[..k].to_vec();
            head.push(stem_of(words[k]).0);
            let tail: Vec<Tail> = words[k + 1..]
                .iter()
                .filter(|w| !w.is_empty())
                .map(|w| {
                    let (w, stem) = stem_of(w);
                    Tail {
                        word: fold(w).into_owned(),
                        stem,
                    }
                })
                .collect();
            let last_stem = tail.last().is_none_or(|t| t.stem);
            (head.join(" "), tail, last_stem)
        }
        None => {
            let (p, stem) = stem_of(phrase);
            (p.to_string(), Vec::new(), stem)
        }
    };
    let last = match tail.last() {
        Some(t) => t.word.chars().next_back(),
        None => head.chars().next_back(),
    };
    let start = head.chars().next().is_some_and(is_word_char);
    let end = !stem && last.is_some_and(is_word_char);
    let folded = fold(&head).into_owned();
    let texts = if tail.is_empty() {
        spacings(&folded)
    } else {
        vec![folded]
    };
    texts
        .into_iter()
        .map(|text| Pattern {
            text,
            start,
            end,
            tail: tail.clone(),
        })
        .collect()
}

/// A phrase with and without a space where Han meets a Latin letter or digit, for at most two
/// such places (four spellings); a longer mix is matched as written.
fn spacings(p: &str) -> Vec<String> {
    let chars: Vec<char> = p.chars().collect();
    // Where a space may be put or taken away: (index of the char after the place, spaced).
    let mut places: Vec<(usize, bool)> = Vec::new();
    let meets = |a: char, b: char| {
        (is_han(a) && b.is_ascii_alphanumeric()) || (a.is_ascii_alphanumeric() && is_han(b))
    };
    for i in 1..chars.len() {
        if meets(chars[i - 1], chars[i]) {
            places.push((i, false));
        } else if chars[i] == ' ' && i + 1 < chars.len() && meets(chars[i - 1], chars[i + 1]) {
            places.push((i, true));
        }
    }
    if places.is_empty() || places.len() > 2 {
        return vec![p.to_string()];
    }
    (0..1u8 << places.len())
        .map(|mask| {
            let mut out = String::new();
            for (i, c) in chars.iter().enumerate() {
                let place = places.iter().position(|(at, _)| *at == i);
                match place {
                    Some(k) => {
                        let spaced = mask & (1 << k) != 0;
                        let (_, was) = places[k];
                        if spaced && !was {
                            out.push(' ');
                            out.push(*c);
                        } else if spaced || !was {
                            out.push(*c);
                        }
                        // not spaced, was a space: the space is dropped
                    }
                    None => out.push(*c),
                }
            }
            out
        })
        .collect()
}

/// Where a match whose first part ends at `at` (in folded text) ends once the words of `tail`
/// follow it, each after the rest of the stem before it and one or more spaces; `None` when
/// they do not follow.
pub(super) fn extent(text: &str, mut at: usize, tail: &[Tail]) -> Option<usize> {
    for w in tail {
        // The part before is a stem: the rest of its word.
        at = word_end(text, at);
        let spaces = text[at..].bytes().take_while(|b| *b == b' ').count();
        if spaces == 0 {
            return None;
        }
        at += spaces;
        let end = at + w.word.len();
        if !text
            .get(at..end)
            .is_some_and(|s| s.eq_ignore_ascii_case(&w.word))
        {
            return None;
        }
        at = end;
        if !w.stem && word_at(text, at) {
            return None;
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn han_never_continues_a_word_and_cyrillic_does() {
        assert!(is_word_char('ж') && is_word_char('Ё') && is_word_char('é'));
        assert!(!is_word_char('安') && !is_word_char('。') && !is_word_char('，'));
        let t = "的SSRF漏洞";
        assert!(!word_before(t, "的".len()));
        assert!(!word_at(t, "的SSRF".len()));
        let r = "невалидный";
        assert!(word_before(r, "не".len()));
    }

    #[test]
    fn folding_keeps_offsets() {
        for s in [
            "Проверим СХЕМУ",
            "Зелёные ТЕСТЫ",
            "İstanbul ß",
            "修复 SSRF",
            "ASCII",
        ] {
            let f = fold(s);
            assert_eq!(f.len(), s.len(), "{s}");
            for (i, _) in s.char_indices() {
                assert!(f.is_char_boundary(i), "{s} at {i}");
            }
        }
        assert_eq!(fold("Проверим СХЕМУ, ЗЕЛЁНЫЕ"), "проверим схему, зеленые");
    }

    #[test]
    fn chinese_sentences_end_at_full_width_marks() {
        assert_eq!(
            split_sentences("预览下载器会抓取任意 URL。计划：先检查协议！再测试？好；完"),
            [
                "预览下载器会抓取任意 URL。",
                "计划：先检查协议！",
                "再测试？",
                "好；",
                "完"
            ]
        );
        assert_eq!(
            split_sentences("Тесты зелёные. Готово; всё. a.b"),
            ["Тесты зелёные.", " Готово;", " всё.", " a.b"]
        );
        assert_eq!(split_sentences("结束。"), ["结束。"]);
        assert_eq!(split_sentences(""), [""]);
    }

    #[test]
    fn entries_compile_with_stems_tails_and_spacings() {
        let p = compile("валид*");
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].text.as_str(), p[0].start, p[0].end),
            ("валид", true, false)
        );
        assert!(p[0].tail.is_empty());
        let p = compile("Внутренн* сет*");
        assert_eq!(p[0].text, "внутренн");
        assert_eq!(p[0].tail.len(), 1);
        assert!(!p[0].end);
        let p = compile("белый спис* хостов");
        assert_eq!(p[0].text, "белый спис");
        assert!(p[0].end, "the last word is whole");
        let texts = |p: &str| -> Vec<String> { compile(p).into_iter().map(|x| x.text).collect() };
        assert_eq!(texts("任意url"), ["任意url", "任意 url"]);
        assert_eq!(
            texts("任意 url 地址"),
            [
                "任意url地址",
                "任意 url地址",
                "任意url 地址",
                "任意 url 地址"
            ]
        );
        assert_eq!(texts("注入"), ["注入"]);
        let p = compile("注入");
        assert!(!p[0].start && !p[0].end, "Han has no word boundaries");
        assert_eq!(compile("***")[0].text, "***");
        assert!(compile("  ").is_empty());
    }

    #[test]
    fn a_tail_follows_the_rest_of_the_stem() {
        let p = &compile("внутренн* сет*")[0];
        let text = fold("ходит во внутреннюю  сеть");
        let at = text.find("внутренн").unwrap() + "внутренн".len();
        // The match ends where the last stem does, as a stem's match always has.
        assert_eq!(extent(&text, at, &p.tail), Some(text.len() - "ь".len()));
        let text = fold("внутренний сервис");
        assert_eq!(extent(&text, "внутренн".len(), &p.tail), None);
        // A whole last word must end there.
        let p = &compile("спис* хостов")[0];
        let text = fold("списка хостовой");
        assert_eq!(extent(&text, "спис".len(), &p.tail), None);
        let text = fold("Списка ХОСТОВ.");
        assert_eq!(
            extent(&text, "спис".len(), &p.tail),
            Some("списка хостов".len())
        );
    }
}
