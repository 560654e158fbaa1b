//! Reports: the same results rendered as JSON (the contract) or text for people.

use crate::i18n::Tr;

pub(crate) mod agent_trace;
pub(crate) mod chart;
pub(crate) mod doc;
pub(crate) mod escape;
pub(crate) mod html;
pub(crate) mod hunks;
pub(crate) mod json;
pub(crate) mod jsonfmt;
pub(crate) mod markdown;
pub(crate) mod mdlite;
pub(crate) mod recommend;
pub(crate) mod sarif;
pub(crate) mod text;

pub(crate) use crate::term::clip;

/// What a model judge's calls took, in the run's language: calls, answers from the cache,
/// tokens cached and not, cost; `None` for the offline judge and a run that made no call.
/// What `--confirm-with` did, in a line, in the run's language.
pub(crate) fn confirmation_words(tr: &Tr, c: &doc::Confirmation) -> String {
    let list = |t: &[u32]| t.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut line = match (c.changed, c.before_turn, c.before_type) {
        (true, Some(turn), Some(k)) => tr.tf(
            "confirm.changed",
            &[
                ("judge", &c.judge.name),
                ("turns", &list(&c.turns)),
                ("turn", &turn),
                ("type", &k.words_shown(tr)),
            ],
        ),
        (true, _, _) => tr.tf(
            "confirm.changed_undetermined",
            &[("judge", &c.judge.name), ("turns", &list(&c.turns))],
        ),
        (false, _, _) => tr.tf(
            "confirm.holds",
            &[("judge", &c.judge.name), ("turns", &list(&c.turns))],
        ),
    };
    if !c.failed.is_empty() {
        line.push_str(&tr.tf("confirm.failed", &[("turns", &list(&c.failed))]));
    }
    line
}

pub(crate) fn judge_cost(tr: &Tr, j: &crate::judge::scores::JudgeInfo) -> Option<String> {
    if j.name == "offline" || j.calls + j.cached == 0 {
        return None;
    }
    let cost = j
        .cost_usd
        .map_or_else(|| tr.t("text.no_cost"), |c| format!("${c:.4}"));
    let skipped = (j.skipped > 0)
        .then(|| format!(" · {}", tr.tf("text.judge_skipped", &[("n", &j.skipped)])));
    Some(
        tr.tf(
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

/// The provenance in words, in the run's language: who wrote the anchored code, in which
/// write and commit (shown through `commit`: plain, or as code), at which turn; the reasons
/// git history gave are shown through `reason` (plain, or escaped for Markdown).
pub(crate) fn provenance_words(
    tr: &Tr,
    p: &json::ProvenanceJson,
    commit: impl Fn(&str) -> String,
    reason: impl Fn(&str) -> String,
) -> String {
    use crate::history::ProvenanceStatus as S;
    let short = |c: &str| commit(&c[..c.len().min(7)]);
    let merge = |w: &json::IntroducingWrite| {
        w.via_merge
            .as_deref()
            .map(|m| tr.tf("prov.merged_by", &[("commit", &short(m))]))
            .unwrap_or_default()
    };
    match (&p.status, &p.introducing_write) {
        (S::Inherited, _) => tr.t("prov.inherited"),
        (S::Introduced, Some(w)) => {
            let at = match (w.turn, &w.unmapped_reason) {
                (Some(turn), _) => tr.tf(
                    "prov.at_turn",
                    &[
                        ("turn", &turn),
                        ("by", &w.mapped_by.map_or("?", |m| m.as_str())),
                    ],
                ),
                (None, Some(r)) => tr.tf("prov.unmapped_why", &[("why", &reason(&r.shown(tr)))]),
                (None, None) => tr.t("prov.unmapped"),
            };
            let wrote = tr.tf(
                "prov.introduced",
                &[
                    ("write", &w.write),
                    ("commit", &short(&w.commit)),
                    ("merge", &merge(w)),
                ],
            );
            format!("{wrote}{at}")
        }
        (S::IntroducedByOther, Some(w)) => tr.tf(
            "prov.by_other",
            &[
                ("write", &w.write),
                ("commit", &short(&w.commit)),
                ("merge", &merge(w)),
            ],
        ),
        (s, _) => format!(
            "{}{}",
            s.as_str(),
            p.reason
                .as_ref()
                .map(|r| format!(": {}", reason(&r.shown(tr))))
                .unwrap_or_default()
        ),
    }
}

/// What set the origin's bound (`bound_by`, English in JSON) in the run's language; one this
/// version does not know (a document written by another) as it is.
pub(crate) fn bound_words(tr: &Tr, by: &str) -> String {
    let key = match by {
        crate::origin::BOUND_BY_WRITE => "bound.write",
        crate::origin::BOUND_BY_LAST_UNMAPPED => "bound.last_unmapped",
        crate::origin::BOUND_BY_DELIVERED => "bound.delivered",
        crate::origin::BOUND_BY_LAST_NONE => "bound.last_none",
        other => return other.to_string(),
    };
    tr.t(key)
}
