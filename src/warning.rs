//! What a run warns of, as typed values: made where the cause is known, kept in the documents,
//! and written in words only when shown — in the report's language for people, in English in
//! JSON (the documents' `warnings` stay arrays of strings). The words are in
//! templates/i18n/<lang>.yaml under `warn.*`.

use crate::i18n::Tr;

/// One warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Warning {
    /// `--judge-sees-anchor`: the scores are not prefix-blind.
    JudgeSeesAnchor,
    /// Lines of the session that could not be read: how many, the first few (line, why).
    SkippedLines {
        session: String,
        count: usize,
        shown: Vec<(u64, String)>,
    },
    /// What a session's reader said of it.
    Session { session: String, said: String },
    /// The scanner's CWE differs from the task's; the task's is used.
    CweOverruled { scanner: u32, task: u32 },
    /// No write maps to a turn of the session.
    NoWriteMapped { session: String },
    /// No session was found for the range.
    NoSession,
    /// The finding is a scanner result or a screening candidate.
    Unconfirmed,
    /// Judges or repeats disagree on the origin's type.
    ManualReview,
    /// The offline judge's scores are a draft.
    OfflineDraft,
    /// The offline judge's lexicons.
    OfflineLexicons { selected: String },
    /// Context was elided to fit `--context-tokens`.
    Elided,
    /// The judge and the agent are of one model family.
    SameFamily { judge: String, agent: String },
    /// The single-call protocol shows the judge every turn at once.
    SingleCall,
    /// The largest prompt exceeds the model's context window.
    ContextExceeded {
        tokens: u64,
        model: String,
        context: u64,
    },
    /// No price for a judge in the price table.
    NoPrice { judge: String, source: String },
    /// Tokens counted with an approximate tokenizer.
    ApproxTokens,
    /// A warning read back from a document, shown as it was written.
    Said(String),
}

impl Warning {
    /// The key of its words and their values.
    fn words(&self, tr: &Tr) -> (&'static str, Vec<(&'static str, String)>) {
        use Warning::*;
        match self {
            JudgeSeesAnchor => ("warn.judge_sees_anchor", vec![]),
            SkippedLines {
                session,
                count,
                shown,
            } => {
                let mut lines: Vec<String> = shown
                    .iter()
                    .map(|(line, why)| {
                        let why = crate::term::clip(why, 80);
                        tr.tf("warn.skipped_line", &[("line", line), ("why", &why)])
                    })
                    .collect();
                if *count > shown.len() {
                    lines.push("…".into());
                }
                (
                    "warn.skipped_lines",
                    vec![
                        ("count", count.to_string()),
                        ("session", session.clone()),
                        ("lines", lines.join("; ")),
                    ],
                )
            }
            Session { session, said } => (
                "warn.session",
                vec![("session", session.clone()), ("said", said.clone())],
            ),
            CweOverruled { scanner, task } => (
                "warn.cwe_overruled",
                vec![("scanner", scanner.to_string()), ("task", task.to_string())],
            ),
            NoWriteMapped { session } => {
                ("warn.no_write_mapped", vec![("session", session.clone())])
            }
            NoSession => ("warn.no_session", vec![]),
            Unconfirmed => ("warn.unconfirmed", vec![]),
            ManualReview => ("warn.manual_review", vec![]),
            OfflineDraft => ("warn.offline_draft", vec![]),
            OfflineLexicons { selected } => (
                "warn.offline_lexicons",
                vec![("selected", selected.clone())],
            ),
            Elided => ("warn.elided", vec![]),
            SameFamily { judge, agent } => (
                "warn.same_family",
                vec![("judge", judge.clone()), ("agent", agent.clone())],
            ),
            SingleCall => ("warn.single_call", vec![]),
            ContextExceeded {
                tokens,
                model,
                context,
            } => (
                "warn.context_exceeded",
                vec![
                    ("tokens", tokens.to_string()),
                    ("model", model.clone()),
                    ("context", context.to_string()),
                ],
            ),
            NoPrice { judge, source } => (
                "warn.no_price",
                vec![("judge", judge.clone()), ("source", source.clone())],
            ),
            ApproxTokens => ("warn.approx_tokens", vec![]),
            Said(text) => ("warn.said", vec![("text", text.clone())]),
        }
    }

    /// In `tr`'s language.
    pub(crate) fn shown(&self, tr: &Tr) -> String {
        let (key, args) = self.words(tr);
        let args: Vec<(&str, &dyn std::fmt::Display)> = args
            .iter()
            .map(|(k, v)| (*k, v as &dyn std::fmt::Display))
            .collect();
        tr.tf(key, &args)
    }

    /// In English, as documents keep it.
    pub(crate) fn english(&self) -> String {
        self.shown(Tr::english())
    }
}

impl std::fmt::Display for Warning {
    /// English: what logs and documents hold.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.english())
    }
}

crate::english_in_json!(Warning, Warning::Said);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

    /// Every warning has words in every language, English as documents have always held it.
    #[test]
    fn every_warning_is_worded_in_every_language() {
        use Warning::*;
        let all = [
            JudgeSeesAnchor,
            SkippedLines {
                session: "s.jsonl".into(),
                count: 4,
                shown: vec![(3, "not JSON".into())],
            },
            Session {
                session: "s.md".into(),
                said: "x".into(),
            },
            CweOverruled {
                scanner: 78,
                task: 89,
            },
            NoWriteMapped {
                session: "s".into(),
            },
            NoSession,
            Unconfirmed,
            ManualReview,
            OfflineDraft,
            OfflineLexicons {
                selected: "CWE-89".into(),
            },
            Elided,
            SameFamily {
                judge: "claude-opus-4".into(),
                agent: "claude-sonnet-4".into(),
            },
            SingleCall,
            ContextExceeded {
                tokens: 9,
                model: "m".into(),
                context: 8,
            },
            NoPrice {
                judge: "openai:x".into(),
                source: "embedded".into(),
            },
            ApproxTokens,
            Said("as written".into()),
        ];
        for lang in Lang::ALL {
            let tr = Tr::load(lang, None).unwrap();
            for w in &all {
                let s = w.shown(&tr);
                assert!(!s.starts_with("warn.") && !s.contains('{'), "{lang:?}: {s}");
            }
        }
        assert_eq!(
            all[1].english(),
            "4 line(s) of the session s.jsonl could not be read and were left out, so turns may be missing (line 3: not JSON; …); `git sage turns s.jsonl` lists them"
        );
        assert_eq!(
            all[11].english(),
            "the judge (claude-opus-4) is of the same model family as the agent (claude-sonnet-4); prefer a judge from another family"
        );
        let json = serde_json::to_string(&all[5]).unwrap();
        let back: Warning = serde_json::from_str(&json).unwrap();
        assert_eq!(back.english(), all[5].english());
    }
}
