//! `blame-origin --format md`: a report ready for a pull-request comment; long turn tables
//! fold into `<details>`. Transcript text goes in code spans so a log cannot inject Markdown or
//! HTML, links or mentions.

use super::clip;
use crate::i18n::Tr;
use crate::judge::scores::Dim;
use crate::origin::Status;
use crate::report::doc::ReportDoc;

/// Text safe inside a Markdown table cell or paragraph.
pub(crate) fn escape(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one.len());
    for c in one.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' | '*' | '_' | '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Transcript text as a Markdown code span: nothing in it is read as Markdown or HTML, and
/// GitHub makes no links (`http://169.254.169.254`) or mentions (`@team`) of it. The fence is
/// one backtick longer than the longest run inside; in a table cell `|` is escaped, which
/// GitHub honours inside code spans too.
pub(crate) fn code_span(s: &str, in_table: bool) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.is_empty() {
        return String::new();
    }
    let one = if in_table {
        one.replace('|', "\\|")
    } else {
        one
    };
    let mut longest = 0;
    let mut run = 0;
    for c in one.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick needs a space inside its fence.
    let pad = if one.starts_with('`') || one.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one}{pad}{fence}")
}

/// Turn tables longer than this fold into `<details>`.
const FOLD_AFTER: usize = 12;

pub(crate) fn report(tr: &Tr, doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let mut out = String::new();
    out.push_str(&tr.tf(
        "md.title",
        &[
            ("id", &format!("`{}`", f.id.replace('`', "'"))),
            (
                "cwe",
                &f.cwe_label().map(|c| format!(" ({c})")).unwrap_or_default(),
            ),
            ("file", &format!("`{}`", f.file.replace('`', "'"))),
        ],
    ));
    out.push_str("\n\n");
    if doc.unconfirmed {
        out.push_str(&tr.t("md.unconfirmed"));
        out.push_str("\n\n");
    }
    let o = &doc.origin;
    let origin = match o.status {
        Status::Localized => tr.tf(
            "origin.at",
            &[
                ("turn", &o.turn.unwrap_or(0)),
                (
                    "type",
                    &o.kind
                        .map(|k| k.words_shown(tr))
                        .unwrap_or_else(|| "?".into()),
                ),
            ],
        ),
        Status::Undetermined => format!(
            "{} — {}",
            tr.t("origin.undetermined"),
            escape(o.detail.as_deref().unwrap_or(""))
        ),
    };
    let origin = match &o.margin {
        Some(m) => format!("{origin} · {}", escape(&m.shown(tr))),
        None => origin,
    };
    let origin = match &doc.confirmation {
        Some(c) => format!("{origin} · {}", escape(&super::confirmation_words(tr, c))),
        None => origin,
    };
    let p = &doc.provenance;
    let prov = super::provenance_words(tr, p, |c| format!("`{c}`"), escape);
    out.push_str(&format!(
        "{} {origin}  \n{} {prov} · {}  \n",
        tr.t("md.origin"),
        tr.t("md.provenance"),
        tr.tf(
            "prov.reconstruction",
            &[("how", &format!("`{}`", p.reconstruction.as_str()))]
        )
    ));
    let missed: Vec<String> = doc
        .missed_opportunities
        .iter()
        .map(|m| m.turn.to_string())
        .collect();
    out.push_str(&format!(
        "{} {}  \n{} {} ({})\n\n",
        tr.t("md.missed"),
        if missed.is_empty() {
            tr.t("missed.none")
        } else {
            tr.tf("missed.turns", &[("list", &missed.join(", "))])
        },
        tr.t("md.judge"),
        escape(&doc.judge.name),
        match super::judge_cost(tr, &doc.judge) {
            Some(cost) => format!("{} · {}", doc.judge.protocol, escape(&cost)),
            None => doc.judge.protocol.clone(),
        }
    ));
    if let Some(q) = &o.quote {
        out.push_str(&format!("> {}\n\n", code_span(&clip(q, 300), false)));
    }
    out.push_str(&tr.t("md.recommendation"));
    out.push_str("\n\n");
    out.push_str(doc.shown_recommendation());
    out.push_str("\n\n");
    if !doc.turns.is_empty() {
        let fold = doc.turns.len() > FOLD_AFTER;
        if fold {
            out.push_str(&format!(
                "<details><summary>{}</summary>\n\n",
                tr.tf("md.turn_scores_n", &[("n", &doc.turns.len())])
            ));
        } else {
            out.push_str(&format!("#### {}\n\n", tr.t("md.turn_scores")));
        }
        out.push_str(&tr.t("md.cols"));
        out.push_str("\n|---:|---|---:|---:|---:|---:|---|\n");
        for t in &doc.turns {
            let s = &t.score;
            let mark = if Some(s.turn) == o.turn {
                format!(" **{}**", tr.t("text.mark.origin"))
            } else if doc.missed_opportunities.iter().any(|m| m.turn == s.turn) {
                format!(" {}", tr.t("text.mark.missed"))
            } else {
                String::new()
            };
            let (cells, text) = match (&s.scores, s.applicable) {
                (None, _) if s.skipped.is_some() => {
                    ("— | — | — | —".to_string(), tr.t("md.not_asked"))
                }
                (None, _) => (
                    "— | — | — | —".to_string(),
                    tr.tf(
                        "md.scoring_failed",
                        &[("why", &s.error.as_deref().unwrap_or(""))],
                    ),
                ),
                (Some(_), false) => ("— | — | — | —".to_string(), t.excerpt.clone()),
                (Some(x), true) => {
                    let best = Dim::ALL
                        .iter()
                        .filter(|d| x.get(**d) > 0)
                        .max_by_key(|d| x.get(**d));
                    let text = best
                        .and_then(|d| s.quotes.get(*d))
                        .map(str::to_string)
                        .unwrap_or_else(|| t.excerpt.clone());
                    (format!("{} | {} | {} | {}", x.tr, x.di, x.vr, x.sa), text)
                }
            };
            out.push_str(&format!(
                "| {}{mark} | {} | {cells} | {} |\n",
                s.turn,
                s.kind.shown(tr),
                code_span(&clip(&text, 140), true)
            ));
        }
        if fold {
            out.push_str("\n</details>\n");
        }
        out.push('\n');
    }
    for w in &doc.warnings {
        out.push_str(&format!("- ⚠️ {}\n", escape(&w.shown(tr))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::code_span;

    #[test]
    fn transcript_text_is_a_code_span_that_nothing_escapes() {
        assert_eq!(
            code_span("fetch http://169.254.169.254 now", false),
            "`fetch http://169.254.169.254 now`"
        );
        assert_eq!(code_span("use `a` | `b`", true), "`` use `a` \\| `b` ``");
        assert_eq!(code_span("`x`", false), "`` `x` ``");
        assert_eq!(code_span("a ``` b", false), "````a ``` b````");
        assert_eq!(code_span("  two\n lines ", false), "`two lines`");
        assert_eq!(code_span("", true), "");
    }
}
