//! Reports: the same results rendered as JSON (the contract) or text for people.

pub(crate) mod agent_trace;
pub(crate) mod chart;
pub(crate) mod doc;
pub(crate) mod html;
pub(crate) mod hunks;
pub(crate) mod json;
pub(crate) mod jsonfmt;
pub(crate) mod markdown;
pub(crate) mod mdlite;
pub(crate) mod recommend;
pub(crate) mod sarif;
pub(crate) mod text;

/// `s` on one line (white space folded), cut to `max` characters with an ellipsis.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        one
    } else {
        let mut c: String = one.chars().take(max.saturating_sub(1)).collect();
        c.push('…');
        c
    }
}

/// What a model judge's calls took, in the run's language: calls, answers from the cache,
/// tokens cached and not, cost; `None` for the offline judge and a run that made no call.
/// What `--confirm-with` did, in a line, in the run's language.
pub(crate) fn confirmation_words(c: &doc::Confirmation) -> String {
    use crate::i18n::tf;
    let list = |t: &[u32]| t.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut line = match (c.changed, c.before_turn, c.before_type) {
        (true, Some(turn), Some(k)) => tf(
            "confirm.changed",
            &[
                ("judge", &c.judge.name),
                ("turns", &list(&c.turns)),
                ("turn", &turn),
                ("type", &k.words_shown()),
            ],
        ),
        (true, _, _) => tf(
            "confirm.changed_undetermined",
            &[("judge", &c.judge.name), ("turns", &list(&c.turns))],
        ),
        (false, _, _) => tf(
            "confirm.holds",
            &[("judge", &c.judge.name), ("turns", &list(&c.turns))],
        ),
    };
    if !c.failed.is_empty() {
        line.push_str(&tf("confirm.failed", &[("turns", &list(&c.failed))]));
    }
    line
}

pub(crate) fn judge_cost(j: &crate::judge::scores::JudgeInfo) -> Option<String> {
    if j.name == "offline" || j.calls + j.cached == 0 {
        return None;
    }
    let cost = j
        .cost_usd
        .map_or_else(|| crate::i18n::t("text.no_cost"), |c| format!("${c:.4}"));
    let skipped = (j.skipped > 0).then(|| {
        format!(
            " · {}",
            crate::i18n::tf("text.judge_skipped", &[("n", &j.skipped)])
        )
    });
    Some(
        crate::i18n::tf(
            "text.judge_cost",
            &[
                ("calls", &j.calls),
                ("cached", &j.cached),
                ("input", &j.input_tokens),
                ("cached_input", &j.cached_input_tokens),
                ("output", &j.output_tokens),
                ("cost", &cost),
            ],
        ) + skipped.as_deref().unwrap_or(""),
    )
}

/// The provenance in words, the commit shown through `commit` (plain, or as code).
pub(crate) fn provenance_words(
    p: &json::ProvenanceJson,
    commit: impl Fn(&str) -> String,
) -> String {
    let status = p.status.as_str().replace('_', " ");
    match &p.introducing_write {
        Some(w) => format!(
            "{status} by write {} ({}){}",
            w.write,
            commit(&w.commit[..w.commit.len().min(7)]),
            w.turn.map(|t| format!(" at turn {t}")).unwrap_or_default()
        ),
        None => status,
    }
}
