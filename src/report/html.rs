//! `blame-origin --format html`: one self-contained page — a timeline of the four scores per
//! turn as inline SVG with marks for the origin, the introducing write and missed
//! opportunities, then the turns, provenance and recommendation. Every string from the
//! transcript or the repository is escaped.

use crate::judge::scores::Dim;
use crate::origin::Status;
use crate::report::doc::ReportDoc;

/// HTML text and attribute escaping.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const COLORS: [(&str, &str); 4] = [
    ("TR", "#c0392b"),
    ("DI", "#2471a3"),
    ("VR", "#229954"),
    ("SA", "#b9770e"),
];

fn chart(doc: &ReportDoc) -> String {
    let n = doc.turns.len().max(1);
    let step = 28.0_f64;
    let (left, top, h) = (36.0, 16.0, 120.0);
    let width = left + step * n as f64 + 20.0;
    let height = top + h + 46.0;
    let x = |i: usize| left + step * (i as f64 + 0.5);
    let y = |v: u8| top + h - (v as f64) * (h / 3.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" role=\"img\" aria-label=\"scores per turn\" font-family=\"sans-serif\" font-size=\"10\">"
    );
    for v in 0..=3u8 {
        svg.push_str(&format!("<line x1=\"{left}\" x2=\"{:.0}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" fill=\"#666\">{v}</text>", width - 10.0, y(v), y(v), left - 14.0, y(v) + 3.0));
    }
    let origin = doc.origin.turn;
    let intro = doc
        .provenance
        .introducing_write
        .as_ref()
        .and_then(|w| w.turn);
    for (i, t) in doc.turns.iter().enumerate() {
        let turn = t.score.turn;
        if Some(turn) == origin {
            svg.push_str(&format!("<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{1:.1}\" stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/><text x=\"{0:.1}\" y=\"{2}\" text-anchor=\"middle\" fill=\"#c0392b\">origin</text>", x(i), top + h, top - 4.0));
        }
        if Some(turn) == intro {
            svg.push_str(&format!("<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{1:.1}\" stroke=\"#555\" stroke-width=\"2\"/><text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\" fill=\"#555\">write</text>", x(i), top + h, top + h + 34.0));
        }
        if doc.missed_opportunities.iter().any(|m| m.turn == turn) {
            svg.push_str(&format!("<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"none\" stroke=\"#e67e22\" stroke-width=\"2\"><title>missed opportunity</title></circle>", x(i), top + h + 24.0));
        }
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">{turn}</text>",
            x(i),
            top + h + 12.0
        ));
    }
    for (k, d) in Dim::ALL.iter().enumerate() {
        let pts: Vec<String> = doc
            .turns
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                t.score
                    .scores
                    .filter(|_| t.score.applicable)
                    .map(|s| format!("{:.1},{:.1}", x(i), y(s.get(*d)) - k as f64 * 1.5))
            })
            .collect();
        svg.push_str(&format!("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>", COLORS[k].1, pts.join(" "), d.name()));
    }
    svg.push_str("</svg>");
    svg
}

pub(crate) fn report(doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let o = &doc.origin;
    let origin = match o.status {
        Status::Localized => format!(
            "turn {} — {}",
            o.turn.unwrap_or(0),
            o.kind.map(|k| k.words()).unwrap_or("?")
        ),
        Status::Undetermined => format!("undetermined — {}", o.detail.as_deref().unwrap_or("")),
    };
    let p = &doc.provenance;
    let prov = super::provenance_words(p, str::to_string);
    let legend: String = COLORS
        .iter()
        .zip(Dim::ALL)
        .map(|((k, c), d)| format!("<span style=\"color:{c}\">■ {k} {}</span> ", esc(d.name())))
        .collect();
    let mut rows = String::new();
    for t in &doc.turns {
        let s = &t.score;
        let cls = if Some(s.turn) == o.turn {
            " class=\"origin\""
        } else if doc.missed_opportunities.iter().any(|m| m.turn == s.turn) {
            " class=\"missed\""
        } else {
            ""
        };
        let cells = match (&s.scores, s.applicable) {
            (None, _) => "<td colspan=\"4\">scoring failed</td>".to_string(),
            (Some(_), false) => "<td colspan=\"4\">not applicable</td>".to_string(),
            (Some(x), true) => format!(
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                x.tr, x.di, x.vr, x.sa
            ),
        };
        let quotes: String = Dim::ALL
            .iter()
            .filter_map(|d| {
                s.quotes
                    .get(*d)
                    .map(|q| format!("<div><b>{}</b> “{}”</div>", d.key().to_uppercase(), esc(q)))
            })
            .collect();
        rows.push_str(&format!(
            "<tr{cls}><td>{}</td><td>{}</td><td>{}</td>{cells}<td>{}{}</td></tr>\n",
            s.turn,
            esc(&t.agent),
            esc(s.kind.as_str()),
            esc(&t.excerpt),
            quotes
        ));
    }
    let warnings: String = doc
        .warnings
        .iter()
        .map(|w| format!("<li>{}</li>", esc(w)))
        .collect();
    let missed: Vec<String> = doc
        .missed_opportunities
        .iter()
        .map(|m| m.turn.to_string())
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>git sage — {id}</title><style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}\
table{{border-collapse:collapse;width:100%}}td,th{{border-bottom:1px solid #eee;padding:4px 6px;vertical-align:top;text-align:left;font-size:14px}}\
tr.origin{{background:#fdecea}}tr.missed{{background:#fef5e7}}.box{{background:#f7f7f7;padding:8px 12px;border-radius:6px;white-space:pre-wrap}}\
.warn{{color:#9a5b00}}.chart{{overflow-x:auto}}</style></head><body>\n\
<h1>Where the repair first went wrong</h1>\n\
<p><b>Finding</b> {id}{cwe} in <code>{file}</code>{unconfirmed}</p>\n\
<p><b>Origin</b>: {origin}<br><b>Provenance</b>: {prov} · reconstruction {recon}<br><b>Missed opportunities</b>: {missed}<br><b>Judge</b>: {judge} ({protocol})</p>\n\
{quote}<div class=\"chart\">{chart}</div><p>{legend}</p>\n\
<h2>Recommendation</h2><div class=\"box\">{rec}</div>\n\
<h2>Turns</h2><table><tr><th>turn</th><th>agent</th><th>kind</th><th>TR</th><th>DI</th><th>VR</th><th>SA</th><th>what was said</th></tr>\n{rows}</table>\n\
<ul class=\"warn\">{warnings}</ul>\n</body></html>\n",
        id = esc(&f.id),
        cwe = f
            .cwe_label()
            .map(|c| format!(" ({})", esc(&c)))
            .unwrap_or_default(),
        file = esc(&f.file),
        unconfirmed = if doc.unconfirmed {
            " — <b>unconfirmed</b> (from --find-anchor)"
        } else {
            ""
        },
        origin = esc(&origin),
        prov = esc(&prov),
        recon = esc(p.reconstruction.as_str()),
        missed = if missed.is_empty() {
            "none".to_string()
        } else {
            esc(&missed.join(", "))
        },
        judge = esc(&doc.judge.name),
        protocol = esc(&doc.judge.protocol),
        quote = o
            .quote
            .as_deref()
            .map(|q| format!("<blockquote>“{}”</blockquote>", esc(q)))
            .unwrap_or_default(),
        chart = chart(doc),
        rec = esc(&doc.recommendation),
    )
}
