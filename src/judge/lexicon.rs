//! The offline judge's phrase lists (templates/lexicons/): what a list holds, the embedded
//! lists in English and the Russian and Chinese words added to them, and how a templates
//! directory overrides any of them.

use std::path::Path;

use serde::Deserialize;

use super::scores::Dim;
use crate::error::{Error, Result};
use crate::lang::Lang;

pub(super) const CRITERIA: &[(&str, &str)] = &[
    (
        "security",
        include_str!("../../templates/lexicons/security.yaml"),
    ),
    (
        "privacy",
        include_str!("../../templates/lexicons/privacy.yaml"),
    ),
    (
        "compliance",
        include_str!("../../templates/lexicons/compliance.yaml"),
    ),
];

pub(super) const CWES: &[(u32, &str)] = &[
    (918, include_str!("../../templates/lexicons/cwe-918.yaml")),
    (22, include_str!("../../templates/lexicons/cwe-22.yaml")),
    (78, include_str!("../../templates/lexicons/cwe-78.yaml")),
    (89, include_str!("../../templates/lexicons/cwe-89.yaml")),
    (79, include_str!("../../templates/lexicons/cwe-79.yaml")),
    (94, include_str!("../../templates/lexicons/cwe-94.yaml")),
    (502, include_str!("../../templates/lexicons/cwe-502.yaml")),
    (611, include_str!("../../templates/lexicons/cwe-611.yaml")),
    (327, include_str!("../../templates/lexicons/cwe-327.yaml")),
    (798, include_str!("../../templates/lexicons/cwe-798.yaml")),
    (200, include_str!("../../templates/lexicons/cwe-200.yaml")),
    (287, include_str!("../../templates/lexicons/cwe-287.yaml")),
    (306, include_str!("../../templates/lexicons/cwe-306.yaml")),
    (352, include_str!("../../templates/lexicons/cwe-352.yaml")),
    (601, include_str!("../../templates/lexicons/cwe-601.yaml")),
    (276, include_str!("../../templates/lexicons/cwe-276.yaml")),
    (829, include_str!("../../templates/lexicons/cwe-829.yaml")),
    (20, include_str!("../../templates/lexicons/cwe-20.yaml")),
    (522, include_str!("../../templates/lexicons/cwe-522.yaml")),
    (862, include_str!("../../templates/lexicons/cwe-862.yaml")),
    (770, include_str!("../../templates/lexicons/cwe-770.yaml")),
    (532, include_str!("../../templates/lexicons/cwe-532.yaml")),
    (942, include_str!("../../templates/lexicons/cwe-942.yaml")),
    (1395, include_str!("../../templates/lexicons/cwe-1395.yaml")),
    (226, include_str!("../../templates/lexicons/cwe-226.yaml")),
    (614, include_str!("../../templates/lexicons/cwe-614.yaml")),
];

/// The Russian and Chinese words (templates/lexicons/ru/, zh/), by language and file name:
/// added to the English list of the same name, never instead of it, since Russian and Chinese
/// logs write code, file names and many terms (SSRF, https, allowlist) in English.
pub(super) const OVERLAYS: &[(Lang, &str, &str)] = &[
    (
        Lang::Ru,
        "security.yaml",
        include_str!("../../templates/lexicons/ru/security.yaml"),
    ),
    (
        Lang::Ru,
        "privacy.yaml",
        include_str!("../../templates/lexicons/ru/privacy.yaml"),
    ),
    (
        Lang::Ru,
        "compliance.yaml",
        include_str!("../../templates/lexicons/ru/compliance.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-918.yaml",
        include_str!("../../templates/lexicons/ru/cwe-918.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-22.yaml",
        include_str!("../../templates/lexicons/ru/cwe-22.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-78.yaml",
        include_str!("../../templates/lexicons/ru/cwe-78.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-79.yaml",
        include_str!("../../templates/lexicons/ru/cwe-79.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-89.yaml",
        include_str!("../../templates/lexicons/ru/cwe-89.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-352.yaml",
        include_str!("../../templates/lexicons/ru/cwe-352.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-502.yaml",
        include_str!("../../templates/lexicons/ru/cwe-502.yaml"),
    ),
    (
        Lang::Ru,
        "cwe-798.yaml",
        include_str!("../../templates/lexicons/ru/cwe-798.yaml"),
    ),
    (
        Lang::Zh,
        "security.yaml",
        include_str!("../../templates/lexicons/zh/security.yaml"),
    ),
    (
        Lang::Zh,
        "privacy.yaml",
        include_str!("../../templates/lexicons/zh/privacy.yaml"),
    ),
    (
        Lang::Zh,
        "compliance.yaml",
        include_str!("../../templates/lexicons/zh/compliance.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-918.yaml",
        include_str!("../../templates/lexicons/zh/cwe-918.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-22.yaml",
        include_str!("../../templates/lexicons/zh/cwe-22.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-78.yaml",
        include_str!("../../templates/lexicons/zh/cwe-78.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-79.yaml",
        include_str!("../../templates/lexicons/zh/cwe-79.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-89.yaml",
        include_str!("../../templates/lexicons/zh/cwe-89.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-352.yaml",
        include_str!("../../templates/lexicons/zh/cwe-352.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-502.yaml",
        include_str!("../../templates/lexicons/zh/cwe-502.yaml"),
    ),
    (
        Lang::Zh,
        "cwe-798.yaml",
        include_str!("../../templates/lexicons/zh/cwe-798.yaml"),
    ),
];

/// The name of a CWE that has its own embedded list (`server-side request forgery (SSRF)`),
/// for reports; a list that only serves a CWE (`related`) does not name it.
pub(crate) fn cwe_name(cwe: u32) -> Option<String> {
    /// Only the name: reading the whole list for it would parse every phrase.
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    let (_, text) = CWES.iter().find(|(n, _)| *n == cwe)?;
    serde_yaml::from_str::<Named>(text).ok().map(|l| l.name)
}

/// One entry of a list: a phrase, or a phrase with the reason it is there. A phrase ending in
/// a word and `*` is a stem (`validat*`: validate, validation); otherwise it matches whole
/// words only, so
/// `sqli` is not found inside `sqlite3`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum Entry {
    Plain(String),
    /// A bare number in YAML (`403`) is the phrase "403".
    Number(i64),
    Why {
        p: String,
        #[allow(dead_code)]
        why: String,
    },
}

impl Entry {
    pub(super) fn phrase(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Entry::Plain(p) | Entry::Why { p, .. } => std::borrow::Cow::Borrowed(p),
            Entry::Number(n) => std::borrow::Cow::Owned(n.to_string()),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PerDim {
    #[serde(default)]
    pub(super) tr: Vec<Entry>,
    #[serde(default)]
    pub(super) di: Vec<Entry>,
    #[serde(default)]
    pub(super) vr: Vec<Entry>,
    #[serde(default)]
    pub(super) sa: Vec<Entry>,
}

impl PerDim {
    pub(super) fn get(&self, d: Dim) -> &[Entry] {
        match d {
            Dim::Tr => &self.tr,
            Dim::Di => &self.di,
            Dim::Vr => &self.vr,
            Dim::Sa => &self.sa,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CriterionLexicon {
    #[allow(dead_code)]
    pub(super) criterion: String,
    #[serde(default)]
    pub(super) generic: PerDim,
    #[serde(default)]
    pub(super) completeness: Vec<Entry>,
    #[serde(default)]
    pub(super) verification: Vec<Entry>,
    /// Phrases that, before a match in the same sentence, say the opposite ("no need to").
    #[serde(default)]
    pub(super) negation: Vec<Entry>,
    /// Code that refuses a request or an input (`raise`, `abort(`, `status(403`): a guard.
    #[serde(default)]
    pub(super) rejects: Vec<Entry>,
    /// Names that hold a generic word without being about it: "the security workflow",
    /// "Spring Security". A generic word inside one of them is not the word.
    #[serde(default)]
    pub(super) names: Vec<Entry>,
    /// Before a defence in the same sentence, these say it is already there ("already uses
    /// `\Z`"): what the agent sees, not what it means to do.
    #[serde(default)]
    pub(super) observed: Vec<Entry>,
    /// What a check reports when the defence holds ("both tokens are rejected", "gets 403").
    #[serde(default)]
    pub(super) refused: Vec<Entry>,
    /// Words of looking further than the place at hand ("let me also check", "the remaining
    /// clients"): in a security case, where the defence may be needed too.
    #[serde(default)]
    pub(super) further: Vec<Entry>,
    /// Words that, right after a term of the weakness, make it the name of a defence or of
    /// code built against it ("CSRF protection", "XSS filter"): the sentence names the
    /// defence, not the threat. A criterion without its own list uses security's: the threat
    /// terms come from the CWE lists, which every criterion shares.
    #[serde(default)]
    pub(super) artifacts: Option<Vec<Entry>>,
    /// Words that, right before a term of the weakness, make it the name of a defence, where a
    /// language puts them first («исправление SSRF»: the SSRF fix).
    #[serde(default)]
    pub(super) artifacts_before: Vec<Entry>,
    /// Words that, right before a match (one space between, or none in Chinese), cancel it:
    /// «не проверяем», «без проверки», 不校验.
    #[serde(default)]
    pub(super) particles: Vec<Entry>,
}

impl PerDim {
    pub(super) fn extend(&mut self, o: PerDim) {
        self.tr.extend(o.tr);
        self.di.extend(o.di);
        self.vr.extend(o.vr);
        self.sa.extend(o.sa);
    }
}

impl CriterionLexicon {
    /// Adds another language's words to every list.
    pub(super) fn extend(&mut self, o: CriterionLexicon) {
        self.generic.extend(o.generic);
        self.completeness.extend(o.completeness);
        self.verification.extend(o.verification);
        self.negation.extend(o.negation);
        self.rejects.extend(o.rejects);
        self.names.extend(o.names);
        self.observed.extend(o.observed);
        self.refused.extend(o.refused);
        self.further.extend(o.further);
        if let Some(a) = o.artifacts {
            self.artifacts.get_or_insert_with(Vec::new).extend(a);
        }
        self.artifacts_before.extend(o.artifacts_before);
        self.particles.extend(o.particles);
    }
}

/// Another language's words for a CWE's list (templates/lexicons/<lang>/cwe-<N>.yaml): the
/// weakness itself — its name, the CWEs it serves, its code — is the English list's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CweWords {
    pub(super) cwe: u32,
    /// The weakness's name in this language: its words in a session are the weakness named,
    /// not a phrase taken from it (the lists' test exempts them).
    #[serde(default)]
    #[allow(dead_code)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) keywords: Vec<String>,
    #[serde(default)]
    pub(super) specific: PerDim,
    #[serde(default)]
    pub(super) weak: PerDim,
    #[serde(default)]
    pub(super) not: Vec<Entry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CweLexicon {
    pub(super) cwe: u32,
    pub(super) name: String,
    /// Names of the weakness that select this list from the task text; one word never does,
    /// unless it is the weakness's own acronym.
    pub(super) keywords: Vec<String>,
    /// Other CWEs this list serves when they have none of their own (CWE-285 improper
    /// authorization is judged with the missing-authorization list).
    #[serde(default)]
    pub(super) related: Vec<u32>,
    /// Phrases that count in prose (messages, reasoning).
    pub(super) specific: PerDim,
    /// Phrases that count in code: the added lines of the turn's edits and its commands.
    #[serde(default)]
    pub(super) code: PerDim,
    /// Phrases that count (as `specific` or `code` ones do) only in a turn that names a threat:
    /// "absolute path", `resolve()`, "https" say something about security only there.
    #[serde(default)]
    pub(super) weak: PerDim,
    /// Phrases that cancel a match in the same sentence or line, with why.
    #[serde(default)]
    pub(super) not: Vec<Entry>,
}

impl CweLexicon {
    /// Adds another language's words for the weakness.
    pub(super) fn extend(&mut self, o: CweWords) {
        self.keywords.extend(o.keywords);
        self.specific.extend(o.specific);
        self.weak.extend(o.weak);
        self.not.extend(o.not);
    }
}

pub(super) fn load_yaml<T: for<'de> Deserialize<'de>>(
    name: &str,
    embedded: &str,
    dir: Option<&Path>,
) -> Result<T> {
    let (text, origin) = match dir
        .map(|d| d.join("lexicons").join(name))
        .filter(|p| p.exists())
    {
        Some(p) => (
            crate::files::read_text(&p, "lexicon", crate::files::DOC_CAP)?,
            p.display().to_string(),
        ),
        None => (embedded.to_string(), format!("lexicons/{name}")),
    };
    crate::files::parse_yaml(&text, &origin)
}

/// Another language's words for the list `name` (`security.yaml`, `cwe-918.yaml`): the
/// templates directory's `lexicons/<lang>/<name>`, else the embedded file, else none.
fn overlay<T: for<'de> Deserialize<'de>>(
    lang: Lang,
    name: &str,
    dir: Option<&Path>,
) -> Result<Option<(T, String)>> {
    let own = dir
        .map(|d| d.join("lexicons").join(lang.code()).join(name))
        .filter(|p| p.exists());
    let (text, origin) = match own {
        Some(p) => (
            crate::files::read_text(&p, "lexicon", crate::files::DOC_CAP)?,
            p.display().to_string(),
        ),
        None => match OVERLAYS.iter().find(|(l, n, _)| *l == lang && *n == name) {
            Some((_, _, text)) => (text.to_string(), format!("lexicons/{}/{name}", lang.code())),
            None => return Ok(None),
        },
    };
    Ok(Some((crate::files::parse_yaml(&text, &origin)?, origin)))
}

/// A criterion's lists (`security` for a name without lists of its own), with the words of
/// `langs` added.
pub(super) fn criterion(
    name: &str,
    dir: Option<&Path>,
    langs: &[Lang],
) -> Result<CriterionLexicon> {
    let (cname, ctext) = CRITERIA
        .iter()
        .find(|(n, _)| *n == name)
        .copied()
        .unwrap_or(CRITERIA[0]);
    let file = format!("{cname}.yaml");
    let mut c: CriterionLexicon = load_yaml(&file, ctext, dir)?;
    for &lang in langs.iter().filter(|l| **l != Lang::En) {
        if let Some((o, origin)) = overlay::<CriterionLexicon>(lang, &file, dir)? {
            if o.criterion != cname {
                return Err(Error::input(format!(
                    "{origin}: criterion {:?}, but the file is {file}",
                    o.criterion
                )));
            }
            c.extend(o);
        }
    }
    Ok(c)
}

/// Every CWE list, with the words of `langs` added.
pub(super) fn cwes(dir: Option<&Path>, langs: &[Lang]) -> Result<Vec<CweLexicon>> {
    CWES.iter()
        .map(|(n, text)| {
            let file = format!("cwe-{n}.yaml");
            let mut l: CweLexicon = load_yaml(&file, text, dir)?;
            for &lang in langs.iter().filter(|l| **l != Lang::En) {
                if let Some((o, origin)) = overlay::<CweWords>(lang, &file, dir)? {
                    if o.cwe != *n {
                        return Err(Error::input(format!(
                            "{origin}: cwe {}, but the file is {file}",
                            o.cwe
                        )));
                    }
                    l.extend(o);
                }
            }
            Ok(l)
        })
        .collect()
}
