//! The languages git sage speaks besides English — Russian and Chinese — and how a text's
//! language is told from its letters.

use serde::{Deserialize, Serialize};

/// A language of the judge's prompts and phrase lists (and, for whoever needs it, of reports).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Lang {
    En,
    Ru,
    Zh,
}

impl Lang {
    /// Every language, English first.
    pub(crate) const ALL: [Lang; 3] = [Lang::En, Lang::Ru, Lang::Zh];

    /// The ISO 639-1 code: `en`, `ru`, `zh`.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ru => "ru",
            Lang::Zh => "zh",
        }
    }

    /// A language from its code, in any case and with a region or encoding after it, as a
    /// setting or a locale writes it (`ru`, `RU`, `ru-RU`, `zh_CN.UTF-8`, `en_GB`); `None` for
    /// a language git sage does not speak.
    pub(crate) fn parse(v: &str) -> Option<Lang> {
        let code = v
            .trim()
            .split(['-', '_', '.', '@'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        Lang::ALL.into_iter().find(|l| l.code() == code)
    }
}

/// How much one letter says about the language. A Chinese character is a syllable and most
/// often a word, about what three Latin letters carry; counted as one, the identifiers and
/// English terms of Chinese prose ("检查 scheme 是否为 https") would outvote it.
const HAN_WEIGHT: usize = 3;

/// Latin, Cyrillic and Han letters, weighted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Letters {
    latin: usize,
    cyrillic: usize,
    han: usize,
}

impl Letters {
    /// Counts the letters of prose: code in fences (```) and in backticks is left out, since
    /// code is written in English whatever language its author speaks.
    fn add(&mut self, text: &str) {
        let mut fenced = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            for (i, span) in line.split('`').enumerate() {
                // Odd pieces are inside backticks.
                if i % 2 == 1 {
                    continue;
                }
                for c in span.chars() {
                    match script(c) {
                        Some(Lang::En) => self.latin += 1,
                        Some(Lang::Ru) => self.cyrillic += 1,
                        Some(Lang::Zh) => self.han += HAN_WEIGHT,
                        None => {}
                    }
                }
            }
        }
    }

    /// The language with the most (weighted) letters, a tie English; `None` without letters.
    fn language(&self) -> Option<Lang> {
        let (l, c, h) = (self.latin, self.cyrillic, self.han);
        Some(if l + c + h == 0 {
            return None;
        } else if c > l && c > h {
            Lang::Ru
        } else if h > l && h > c {
            Lang::Zh
        } else {
            Lang::En
        })
    }
}

/// The script of a letter: Latin (ASCII and the Latin supplements), Cyrillic, Han; `None`
/// for anything else (digits, punctuation, other scripts).
pub(crate) fn script(c: char) -> Option<Lang> {
    match c {
        'a'..='z' | 'A'..='Z' => Some(Lang::En),
        '\u{00C0}'..='\u{024F}' if c.is_alphabetic() => Some(Lang::En),
        '\u{0400}'..='\u{04FF}' | '\u{0500}'..='\u{052F}' => Some(Lang::Ru),
        _ if is_han(c) => Some(Lang::Zh),
        _ => None,
    }
}

/// A Han character (CJK unified ideographs, their extension A, compatibility ideographs).
pub(crate) fn is_han(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{F900}'..='\u{FAFF}')
}

/// The language of some texts by their letters, counted together: Cyrillic → ru, Han → zh,
/// Latin → en, whichever has the most (a Han character weighing three letters), a tie → en;
/// code in fences and backticks is not counted. `None` when the texts hold no letters, so a
/// caller can ask other texts (a session's task when its turns are only tool calls).
pub(crate) fn detect<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<Lang> {
    let mut n = Letters::default();
    for t in texts {
        n.add(t);
    }
    n.language()
}

/// The languages whose letters occur anywhere in the texts, code included: English always,
/// Russian with a Cyrillic letter, Chinese with a Han character.
pub(crate) fn written_in<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Lang> {
    let (mut ru, mut zh) = (false, false);
    for t in texts {
        if t.is_ascii() {
            continue;
        }
        for c in t.chars().filter(|c| !c.is_ascii()) {
            match script(c) {
                Some(Lang::Ru) => ru = true,
                Some(Lang::Zh) => zh = true,
                _ => {}
            }
        }
        if ru && zh {
            break;
        }
    }
    let mut out = vec![Lang::En];
    out.extend(ru.then_some(Lang::Ru));
    out.extend(zh.then_some(Lang::Zh));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_with_regions_and_encodings() {
        for (v, l) in [
            ("en", Lang::En),
            ("RU", Lang::Ru),
            ("ru-RU", Lang::Ru),
            ("zh_CN.UTF-8", Lang::Zh),
            (" zh ", Lang::Zh),
            ("en_GB@euro", Lang::En),
        ] {
            assert_eq!(Lang::parse(v), Some(l), "{v}");
        }
        for v in ["", "fr", "english", "r"] {
            assert_eq!(Lang::parse(v), None, "{v}");
        }
        for l in Lang::ALL {
            assert_eq!(Lang::parse(l.code()), Some(l));
        }
    }

    #[test]
    fn the_most_letters_win_and_ties_are_english() {
        assert_eq!(detect(["Fix the SSRF in the downloader."]), Some(Lang::En));
        assert_eq!(
            detect(["Проверим, что схема — https, и добавим тест."]),
            Some(Lang::Ru)
        );
        assert_eq!(detect(["下载前先检查协议是否为 https。"]), Some(Lang::Zh));
        // English words and identifiers inside Chinese prose: a character weighs three letters.
        assert_eq!(
            detect(["现在在 download_preview 中加入检查。"]),
            Some(Lang::Zh)
        );
        // Code is English whatever its author speaks: fences and backticks are not counted.
        assert_eq!(
            detect([
                "Правка:\n```python\nif not url.startswith(\"https://\"):\n    raise ValueError(\"only https\")\n```\nГотово, `download_preview` исправлен."
            ]),
            Some(Lang::Ru)
        );
        // A tie, and no letters at all.
        assert_eq!(detect(["abc где"]), Some(Lang::En));
        assert_eq!(detect(["ab 中"]), Some(Lang::Zh));
        assert_eq!(detect(["abc 中"]), Some(Lang::En));
        assert_eq!(detect(["123 … !!"]), None);
        assert_eq!(detect(std::iter::empty()), None);
        assert_eq!(detect(["```\nfn main() {}\n```", "`x`"]), None);
        // Many texts count together.
        assert_eq!(
            detect([
                "Running the tests.",
                "Тесты зелёные, линтер доволен, исправление готово."
            ]),
            Some(Lang::Ru)
        );
    }

    #[test]
    fn scripts_present_anywhere() {
        assert_eq!(written_in(["plain ascii"]), [Lang::En]);
        assert_eq!(written_in(["naïve café"]), [Lang::En]);
        assert_eq!(written_in(["a", "# не"]), [Lang::En, Lang::Ru]);
        assert_eq!(written_in(["修复", "и"]), [Lang::En, Lang::Ru, Lang::Zh]);
    }
}
