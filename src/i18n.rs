//! The language of what people read (`--lang`, `sage.lang`, the locale): English, Russian or
//! Chinese. Strings live in templates/i18n/<lang>.yaml (embedded; `sage.templates` may hold
//! its own); JSON, notes and SARIF stay in codes and English whatever the language. The
//! strings of a run are a value (`Tr`), loaded where the command line starts and passed to
//! what writes for people: no global language.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use crate::error::Result;

pub(crate) use crate::lang::Lang;

const EMBEDDED: [(Lang, &str); 3] = [
    (Lang::En, include_str!("../templates/i18n/en.yaml")),
    (Lang::Ru, include_str!("../templates/i18n/ru.yaml")),
    (Lang::Zh, include_str!("../templates/i18n/zh.yaml")),
];

/// The strings of one language, English behind them: made once where the command line starts
/// (`Tr::load`) and handed to what writes for people.
#[derive(Debug, Clone)]
pub(crate) struct Tr {
    lang: Lang,
    own: HashMap<String, String>,
}

fn parse(text: &str, name: &str) -> Result<HashMap<String, String>> {
    crate::files::parse_yaml(text, name)
}

fn embedded(lang: Lang) -> HashMap<String, String> {
    let text = EMBEDDED
        .iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, t)| *t)
        .unwrap_or_default();
    parse(text, "i18n").expect("the embedded strings parse (a test checks them)")
}

/// The embedded English strings, behind every language.
fn english_strings() -> &'static HashMap<String, String> {
    static EN: OnceLock<HashMap<String, String>> = OnceLock::new();
    EN.get_or_init(|| embedded(Lang::En))
}

impl Tr {
    /// The strings of `lang`, with those of `templates` when it holds `i18n/<lang>.yaml`.
    pub(crate) fn load(lang: Lang, templates: Option<&Path>) -> Result<Tr> {
        // English lies behind every language (`t`): a language keeps only its own strings, and
        // English none but a folder's overrides, so the embedded English is parsed once.
        let mut own = match lang {
            Lang::En => HashMap::new(),
            _ => embedded(lang),
        };
        if let Some(p) = templates.map(|d| d.join("i18n").join(format!("{}.yaml", lang.code())))
            && p.is_file()
        {
            let text = crate::files::read_text(&p, "strings", crate::files::DOC_CAP)?;
            own.extend(parse(&text, &p.display().to_string())?);
        }
        Ok(Tr { lang, own })
    }

    /// The embedded English strings: what documents and logs hold.
    pub(crate) fn english() -> &'static Tr {
        static EN: OnceLock<Tr> = OnceLock::new();
        EN.get_or_init(|| Tr {
            lang: Lang::En,
            own: HashMap::new(),
        })
    }

    pub(crate) fn lang(&self) -> Lang {
        self.lang
    }

    /// The string `key` (English when the language lacks it, the key itself when no language
    /// has it: a test keeps that from shipping).
    pub(crate) fn t(&self, key: &str) -> String {
        self.own
            .get(key)
            .or_else(|| english_strings().get(key))
            .cloned()
            .unwrap_or_else(|| key.to_string())
    }

    /// `t(key)` with `{name}` replaced by each value.
    pub(crate) fn tf(&self, key: &str, args: &[(&str, &dyn std::fmt::Display)]) -> String {
        let mut s = self.t(key);
        for (name, value) in args {
            s = s.replace(&format!("{{{name}}}"), &value.to_string());
        }
        s
    }
}

/// For a typed value worded when shown (a warning, a reason): in JSON it is its English words,
/// and read back from a document it is those words as written (`$said`). The type has
/// `english(&self) -> String` and a variant `$said(String)`.
#[macro_export]
macro_rules! english_in_json {
    ($ty:ty, $said:path) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.english())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                <String as serde::Deserialize>::deserialize(d).map($said)
            }
        }
    };
}

/// Width of `s` on a terminal in columns (unicode-width): a CJK character takes two.
pub(crate) fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` padded with spaces to `cols` terminal columns.
pub(crate) fn pad(s: &str, cols: usize) -> String {
    let mut out = s.to_string();
    for _ in width(s)..cols {
        out.push(' ');
    }
    out
}

/// The file for a language of a template: `checkpoint.md` → `checkpoint.ru.md`; English is
/// the name itself.
pub(crate) fn localized(rel: &str, lang: Lang) -> String {
    if lang == Lang::En {
        return rel.to_string();
    }
    match rel.split_once('.') {
        Some((stem, ext)) => format!("{stem}.{}.{ext}", lang.code()),
        None => format!("{rel}.{}", lang.code()),
    }
}

/// The language named on the command line, else `sage.lang` (checked when read), else the
/// locale's.
pub(crate) fn choose(flag: Option<Lang>, setting: Option<Lang>, locale: Lang) -> Lang {
    flag.or(setting).unwrap_or(locale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_in_every_language() {
        let en = embedded(Lang::En);
        for lang in Lang::ALL {
            let other = embedded(lang);
            let mut missing: Vec<&String> = en.keys().filter(|k| !other.contains_key(*k)).collect();
            missing.sort();
            assert!(missing.is_empty(), "{}: missing {missing:?}", lang.code());
            let mut extra: Vec<&String> = other.keys().filter(|k| !en.contains_key(*k)).collect();
            extra.sort();
            assert!(extra.is_empty(), "{}: unknown keys {extra:?}", lang.code());
            // The same placeholders in every language.
            for (k, v) in &en {
                let names = |s: &str| {
                    let mut n: Vec<String> = s
                        .split('{')
                        .skip(1)
                        .filter_map(|p| p.split_once('}').map(|(a, _)| a.to_string()))
                        .collect();
                    n.sort();
                    n
                };
                assert_eq!(names(v), names(&other[k]), "{}: {k}", lang.code());
            }
        }
    }

    #[test]
    fn languages_come_from_codes_flags_and_settings() {
        assert_eq!(Lang::parse("ru_RU.UTF-8"), Some(Lang::Ru));
        assert_eq!(Lang::parse("zh-CN"), Some(Lang::Zh));
        assert_eq!(Lang::parse("C.UTF-8"), None);
        assert_eq!(choose(None, Some(Lang::Ru), Lang::Zh), Lang::Ru);
        assert_eq!(choose(Some(Lang::En), Some(Lang::Ru), Lang::Zh), Lang::En);
        assert_eq!(choose(None, None, Lang::Zh), Lang::Zh);
        assert_eq!(localized("checkpoint.md", Lang::Ru), "checkpoint.ru.md");
        assert_eq!(localized("checklists.yaml", Lang::En), "checklists.yaml");
        assert_eq!(width("ПРОИСХОЖДЕНИЕ"), 13);
        assert_eq!(width("起源"), 4);
    }
}
