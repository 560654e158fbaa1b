//! What provenance concludes about an anchor over a range: its status, and how much of the
//! history between writes could be seen.

use serde::{Deserialize, Serialize};

use crate::i18n::Tr;

/// Provenance status (docs/method.md#provenance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProvenanceStatus {
    Inherited,
    Introduced,
    IntroducedByOther,
    NoCodeLocation,
}

impl ProvenanceStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Inherited => "inherited",
            Self::Introduced => "introduced",
            Self::IntroducedByOther => "introduced_by_other",
            Self::NoCodeLocation => "no_code_location",
        }
    }
}

/// How much intermediate state was available (docs/method.md#reconstruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Reconstruction {
    #[serde(rename = "single-write")]
    SingleWrite,
    #[serde(rename = "per-write")]
    PerWrite,
    #[serde(rename = "final-only")]
    FinalOnly,
}

impl Reconstruction {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::SingleWrite => "single-write",
            Self::PerWrite => "per-write",
            Self::FinalOnly => "final-only",
        }
    }
}

/// Why the anchored code has no location (`no_code_location`): a typed reason, worded when
/// shown — in the report's language for people, in English in JSON (`reason` stays a string).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Unlocated {
    /// The file is gone at the tip; `by`: the write (1-based) and commit that deleted it.
    Deleted {
        file: String,
        by: Option<(usize, String)>,
    },
    /// The anchor matches no snapshot of the file, baseline included.
    Never { file: String },
    /// The anchor was present after a write (1-based, with its commit) but not at the tip.
    Gone { write: usize, commit: String },
    /// The anchor was present at the baseline but not at the tip.
    GoneFromBase,
    /// A reason read back from a document, shown as written.
    Said(String),
}

impl Unlocated {
    /// In `tr`'s language.
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        match self {
            Unlocated::Deleted {
                file,
                by: Some((write, commit)),
            } => tr.tf(
                "unlocated.deleted_by",
                &[("file", file), ("write", write), ("commit", commit)],
            ),
            Unlocated::Deleted { file, by: None } => tr.tf("unlocated.deleted", &[("file", file)]),
            Unlocated::Never { file } => tr.tf("unlocated.never", &[("file", file)]),
            Unlocated::Gone { write, commit } => {
                tr.tf("unlocated.gone", &[("write", write), ("commit", commit)])
            }
            Unlocated::GoneFromBase => tr.t("unlocated.gone_from_base"),
            Unlocated::Said(s) => s.clone(),
        }
    }

    /// In English, as documents keep it.
    pub(crate) fn english(&self) -> String {
        self.shown(Tr::english())
    }
}

crate::english_in_json!(Unlocated, Unlocated::Said);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

    #[test]
    fn unlocated_reasons_are_worded_when_shown() {
        let gone = Unlocated::Gone {
            write: 2,
            commit: "abc1234".into(),
        };
        assert!(
            gone.english()
                .starts_with("the anchor was present after write 2 (abc1234) but not"),
            "{}",
            gone.english()
        );
        let deleted = Unlocated::Deleted {
            file: "app.py".into(),
            by: Some((3, "def5678".into())),
        };
        assert_eq!(
            deleted.english(),
            "app.py does not exist at the tip: write 3 (def5678) deleted it"
        );
        let ru = Tr::load(Lang::Ru, None).unwrap();
        assert_eq!(
            deleted.shown(&ru),
            "app.py нет на вершине: его удалила запись 3 (def5678)"
        );
        let json = serde_json::to_string(&Unlocated::GoneFromBase).unwrap();
        let back: Unlocated = serde_json::from_str(&json).unwrap();
        assert_eq!(back.english(), Unlocated::GoneFromBase.english());
    }
}
