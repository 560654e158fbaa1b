//! `blame-origin --format md`: a report ready for a pull-request comment; long turn tables
//! fold into `<details>`. Transcript text is escaped so a log cannot inject Markdown or HTML.

use super::clip;
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

/// Turn tables longer than this fold into `<details>`.
const FOLD_AFTER: usize = 12;

pub(crate) fn report(doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let mut out = String::new();
    out.push_str(&format!(
        "### git sage: where the repair first went wrong — `{}`{} in `{}`\n\n",
        f.id.replace('`', "'"),
        f.cwe_label().map(|c| format!(" ({c})")).unwrap_or_default(),
        f.file.replace('`', "'")
    ));
    if doc.unconfirmed {
        out.push_str("> **Unconfirmed finding** (from `--find-anchor`): confirm it before acting on this.\n\n");
    }
    let o = &doc.origin;
    let origin = match o.status {
        Status::Localized => format!(
            "turn {} — {}",
            o.turn.unwrap_or(0),
            o.kind.map(|k| k.words()).unwrap_or("?")
        ),
        Status::Undetermined => format!(
            "undetermined — {}",
            escape(o.detail.as_deref().unwrap_or(""))
        ),
    };
    let p = &doc.provenance;
    let prov = super::provenance_words(p, |c| format!("`{c}`"));
    out.push_str(&format!(
        "**Origin:** {origin}  \n**Provenance:** {prov} · reconstruction `{}`  \n",
        p.reconstruction.as_str()
    ));
    let missed: Vec<String> = doc
        .missed_opportunities
        .iter()
        .map(|m| m.turn.to_string())
        .collect();
    out.push_str(&format!(
        "**Missed opportunities:** {}  \n**Judge:** {} ({})\n\n",
        if missed.is_empty() {
            "none".into()
        } else {
            format!("turns {}", missed.join(", "))
        },
        escape(&doc.judge.name),
        doc.judge.protocol
    ));
    if let Some(q) = &o.quote {
        out.push_str(&format!("> {}\n\n", escape(&clip(q, 300))));
    }
    out.push_str("#### Recommendation\n\n");
    out.push_str(&doc.recommendation);
    out.push_str("\n\n");
    if !doc.turns.is_empty() {
        let fold = doc.turns.len() > FOLD_AFTER;
        if fold {
            out.push_str(&format!(
                "<details><summary>Turn scores ({} turns)</summary>\n\n",
                doc.turns.len()
            ));
        } else {
            out.push_str("#### Turn scores\n\n");
        }
        out.push_str("| turn | kind | TR | DI | VR | SA | quote or excerpt |\n|---:|---|---:|---:|---:|---:|---|\n");
        for t in &doc.turns {
            let s = &t.score;
            let mark = if Some(s.turn) == o.turn {
                " **◆ origin**"
            } else if doc.missed_opportunities.iter().any(|m| m.turn == s.turn) {
                " ○ missed"
            } else {
                ""
            };
            let (cells, text) = match (&s.scores, s.applicable) {
                (None, _) => (
                    "— | — | — | —".to_string(),
                    format!("scoring failed: {}", s.error.as_deref().unwrap_or("")),
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
                s.kind.as_str(),
                escape(&clip(&text, 140))
            ));
        }
        if fold {
            out.push_str("\n</details>\n");
        }
        out.push('\n');
    }
    for w in &doc.warnings {
        out.push_str(&format!("- ⚠️ {}\n", escape(w)));
    }
    out
}
