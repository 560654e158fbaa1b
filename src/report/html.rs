//! `blame-origin --format html`: one self-contained page for a security engineer — a header
//! naming the finding and where it was looked for, the verdict (provenance with the
//! introducing write's diff, origin with its quote, type and remedy), the timeline of scores
//! and marks (report/chart.rs), the recommendation and the turns. No script, font or image is
//! fetched: the style is inline and the chart is inline SVG. Every string from the
//! transcript or the repository is escaped.

use std::fmt::Write;

use crate::history::ProvenanceStatus;
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

/// The page's style: light and dark schemes, a layout that reflows down to 400 px (the turns
/// table becomes cards), print rules. No size below 12 px anywhere.
const STYLE: &str = include_str!("report.css");

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(7)]
}

/// One `<dt>`/`<dd>` pair of the header; `value` is HTML already.
fn meta(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "<div><dt>{name}</dt><dd>{value}</dd></div>");
}

fn header(doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let mut out = String::from(
        "<header class=\"top\">\n<p class=\"kicker\">git sage · where the security repair first went wrong</p>\n",
    );
    let cwe = f
        .cwe_label()
        .map(|c| match &f.cwe_name {
            Some(n) => format!("{} · {}", esc(&c), esc(n)),
            None => esc(&c),
        })
        .map(|c| format!("<span class=\"cwe\">{c}</span>"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<h1><span class=\"id\">{}</span>{cwe}</h1>",
        esc(&f.id)
    );
    if let Some(d) = f.description.as_deref().filter(|d| !d.trim().is_empty()) {
        let _ = writeln!(out, "<p class=\"desc\">{}</p>", esc(d.trim()));
    }
    if doc.unconfirmed {
        out.push_str("<p class=\"banner\"><strong>Unconfirmed finding</strong> (from <code>--find-anchor</code>): confirm it before acting on this report.</p>\n");
    }
    let mut dl = String::new();
    let anchored: Vec<u32> = f
        .tip_lines
        .iter()
        .filter(|l| l.anchored)
        .map(|l| l.line)
        .collect();
    let lines = match (anchored.first().copied(), anchored.last().copied(), f.line) {
        (Some(a), Some(b), _) if a != b => format!(", lines {a}–{b}"),
        (Some(a), _, _) | (None, _, Some(a)) => format!(", line {a}"),
        _ => String::new(),
    };
    meta(
        &mut dl,
        "File",
        &format!("<code>{}</code>{lines}", esc(&f.file)),
    );
    if let Some(r) = &doc.repository {
        meta(&mut dl, "Repository", &esc(r));
    }
    let r = &doc.range;
    if let Some(b) = &r.branch {
        meta(&mut dl, "Branch", &format!("<code>{}</code>", esc(b)));
    }
    meta(
        &mut dl,
        "Range",
        &format!(
            "<code>{}..{}</code> · {} commit{} · base: {}",
            esc(short(&r.base)),
            esc(short(&r.tip)),
            r.commits,
            if r.commits == 1 { "" } else { "s" },
            esc(r.base_source.as_deref().unwrap_or("given"))
        ),
    );
    if let Some(d) = &r.tip_date {
        meta(
            &mut dl,
            "Tip date",
            &esc(&d.replace('T', " ").replace('Z', " UTC")),
        );
    }
    match &doc.session {
        Some(s) => {
            let agent = match &s.agent {
                Some(a) => format!("agent {}", esc(a)),
                None => "agent not named".to_string(),
            };
            let model = s
                .model
                .as_deref()
                .map(|m| format!(" · model {}", esc(m)))
                .unwrap_or_default();
            meta(
                &mut dl,
                "Session",
                &format!(
                    "<code>{}</code> · {} format · {agent}{model} · turns {}–{} of {}",
                    esc(&s.source),
                    esc(&s.format),
                    s.scope.first,
                    s.scope.last,
                    s.turns
                ),
            );
        }
        None => meta(&mut dl, "Session", "none found"),
    }
    meta(
        &mut dl,
        "Judge",
        &format!("{} ({})", esc(&doc.judge.name), esc(&doc.judge.protocol)),
    );
    meta(
        &mut dl,
        "Tool",
        &format!("git sage {}", env!("CARGO_PKG_VERSION")),
    );
    let _ = writeln!(out, "<dl class=\"meta\">{dl}</dl>");
    if !f.tip_lines.is_empty() {
        let _ = write!(
            out,
            "<figure class=\"code\"><figcaption>The vulnerable code at the tip — <code>{}</code></figcaption><pre>",
            esc(&f.file)
        );
        for l in &f.tip_lines {
            let _ = write!(
                out,
                "<span class=\"ln{}\"><span class=\"no\">{}</span>{}</span>",
                if l.anchored { " hit" } else { "" },
                l.line,
                esc(&l.text)
            );
        }
        out.push_str("</pre></figure>\n");
    }
    out.push_str("</header>\n");
    out
}

/// The provenance status as the verdict's badge.
fn status_words(s: ProvenanceStatus) -> (&'static str, &'static str) {
    match s {
        ProvenanceStatus::Introduced => ("introduced", "introduced by the agent"),
        ProvenanceStatus::IntroducedByOther => ("other", "introduced by someone else"),
        ProvenanceStatus::Inherited => ("inherited", "inherited from the base"),
        ProvenanceStatus::NoCodeLocation => ("none", "no code location"),
    }
}

fn provenance_card(doc: &ReportDoc) -> String {
    let p = &doc.provenance;
    let (class, words) = status_words(p.status);
    let mut out = format!(
        "<article class=\"card prov\"><h3>{h}</h3><p class=\"badge {class}\">{words}</p>",
        h = esc(&crate::i18n::t("html.provenance"))
    );
    let mut facts = Vec::new();
    match &p.introducing_write {
        Some(w) => {
            let mut s = format!("Write {} (<code>{}</code>", w.write, esc(short(&w.commit)));
            if let Some(sum) = &w.summary {
                let _ = write!(s, " “{}”", esc(sum));
            }
            s.push(')');
            match (w.turn, &w.unmapped_reason) {
                (Some(t), _) => {
                    let by = w
                        .mapped_by
                        .map(|m| format!(", mapped by {}", m.as_str()))
                        .unwrap_or_default();
                    let _ = write!(s, " made it at turn {t}{by}.");
                }
                (None, Some(r)) => {
                    let _ = write!(s, " made it; no turn: {}.", esc(r));
                }
                (None, None) => s.push_str(" made it."),
            }
            facts.push(s);
            if let Some(m) = &w.via_merge {
                facts.push(format!(
                    "Brought in by merge <code>{}</code>.",
                    esc(short(m))
                ));
            }
        }
        None if p.status == ProvenanceStatus::Inherited => facts.push(format!(
            "The code was already at the base <code>{}</code> and stayed to the tip.",
            esc(short(&doc.range.base))
        )),
        None => {}
    }
    if let Some(r) = &p.reason {
        facts.push(esc(r));
    }
    facts.push(format!(
        "Reconstruction <code>{}</code>.",
        esc(p.reconstruction.as_str())
    ));
    for f in facts {
        let _ = write!(out, "<p>{f}</p>");
    }
    if let Some((w, d)) = p
        .introducing_write
        .as_ref()
        .and_then(|w| w.diff.as_ref().map(|d| (w, d)))
    {
        let _ = write!(
            out,
            "<figure class=\"diff\"><figcaption>What write {} changed in <code>{}</code></figcaption><pre>",
            w.write,
            esc(&doc.finding.file)
        );
        for line in d.lines() {
            let class = match line.chars().next() {
                Some('+') => "add",
                Some('-') => "del",
                Some('@') => "hunk",
                Some('…') => "more",
                _ => "ctx",
            };
            let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(line));
        }
        out.push_str("</pre></figure>");
    }
    out.push_str("</article>\n");
    out
}

/// The change the origin type asks for, from the recommendation's first bold phrase (the
/// templates name it there: "a **bypass check**").
fn remedy(doc: &ReportDoc) -> Option<String> {
    let r = doc.shown_recommendation();
    let start = r.find("**")? + 2;
    let len = r[start..].find("**")?;
    Some(r[start..start + len].to_string())
}

fn origin_card(doc: &ReportDoc) -> String {
    let o = &doc.origin;
    let mut out = format!(
        "<article class=\"card origin\"><h3>{}</h3>",
        esc(&crate::i18n::t("html.origin"))
    );
    match o.status {
        Status::Localized => {
            let _ = write!(
                out,
                "<p class=\"badge origin\">{}</p>",
                esc(&crate::i18n::tf(
                    "html.badge",
                    &[
                        ("turn", &o.turn.unwrap_or(0)),
                        (
                            "type",
                            &o.kind
                                .map(|k| k.words_shown())
                                .unwrap_or_else(|| "?".into())
                        ),
                    ],
                ))
            );
            if let Some(q) = &o.quote {
                let _ = write!(out, "<blockquote>{}</blockquote>", esc(q));
            }
            if let Some(k) = o.kind {
                let _ = write!(out, "<p>{}</p>", esc(&k.explained()));
            }
            if let Some(b) = o.bound {
                let _ = write!(
                    out,
                    "<p class=\"muted\">Candidates were the turns up to {b} ({}).</p>",
                    esc(o.bound_by.as_deref().unwrap_or(""))
                );
            }
        }
        Status::Undetermined => {
            out.push_str("<p class=\"badge none\">undetermined</p>");
            if let Some(d) = &o.detail {
                let _ = write!(out, "<p>{}</p>", esc(d));
            }
        }
    }
    match remedy(doc) {
        Some(r) => {
            let _ = write!(
                out,
                "<p class=\"remedy\"><strong>Remedy:</strong> a {} — see <a href=\"#recommendation\">the recommendation</a>.</p>",
                esc(&r)
            );
        }
        None => out.push_str(
            "<p class=\"remedy\">See <a href=\"#recommendation\">the recommendation</a>.</p>",
        ),
    }
    if !doc.other_origins.is_empty() {
        out.push_str("<p class=\"muted\">Other judges and repeats:</p><ul class=\"others\">");
        for a in &doc.other_origins {
            let what = match (a.origin.status, a.origin.turn, a.origin.kind) {
                (Status::Localized, Some(t), Some(k)) => format!("turn {t} · {}", k.words()),
                _ => "undetermined".into(),
            };
            let _ = write!(
                out,
                "<li>{}{}: {}</li>",
                esc(&a.judge),
                a.repeat
                    .map(|r| format!(" (repeat {r})"))
                    .unwrap_or_default(),
                esc(&what)
            );
        }
        out.push_str("</ul>");
    }
    if doc.manual_review {
        out.push_str("<p class=\"banner\">Judges or repeats disagree on the origin type: review this case by hand.</p>");
    }
    out.push_str("</article>\n");
    out
}

/// The missed opportunities as a sentence: the first few, then how many more.
fn missed_line(doc: &ReportDoc) -> String {
    const SHOWN: usize = 8;
    let m = &doc.missed_opportunities;
    if m.is_empty() {
        return "<p class=\"missed-line\"><strong>Missed opportunities:</strong> none.</p>\n"
            .into();
    }
    let list: Vec<String> = m
        .iter()
        .take(SHOWN)
        .map(|x| {
            format!(
                "turn {} ({}, VR {}, SA {}{})",
                x.turn,
                x.kind.as_str(),
                x.vr,
                x.sa,
                if x.touches_anchor {
                    ", touched the anchored code"
                } else {
                    ""
                }
            )
        })
        .collect();
    let more = if m.len() > SHOWN {
        format!("; and {} more, marked in the timeline", m.len() - SHOWN)
    } else {
        String::new()
    };
    format!(
        "<p class=\"missed-line\"><strong>Missed opportunities</strong> (later turns that could have caught it): {}{more}.</p>\n",
        esc(&list.join("; "))
    )
}

fn turns_table(doc: &ReportDoc) -> String {
    if doc.turns.is_empty() {
        return "<p class=\"muted\">No turns were scored.</p>\n".into();
    }
    // The agent column only says something when turns have different speakers (roles).
    let agents = doc
        .turns
        .iter()
        .map(|t| t.agent.as_str())
        .collect::<std::collections::BTreeSet<_>>();
    let show_agent = agents.len() > 1;
    let o = &doc.origin;
    let intro_turn = doc
        .provenance
        .introducing_write
        .as_ref()
        .and_then(|w| w.turn);
    let write_turns: std::collections::BTreeSet<u32> = doc
        .provenance
        .writes
        .iter()
        .filter(|w| w.changed)
        .filter_map(|w| w.turn)
        .collect();
    let mut out = String::from("<table class=\"turns\"><thead><tr><th scope=\"col\">turn</th>");
    if show_agent {
        out.push_str("<th scope=\"col\">agent</th>");
    }
    out.push_str("<th scope=\"col\">kind</th>");
    for d in Dim::ALL {
        let _ = write!(
            out,
            "<th scope=\"col\" class=\"sc\" title=\"{}\">{}</th>",
            esc(d.name()),
            d.key().to_uppercase()
        );
    }
    out.push_str("<th scope=\"col\">what was said</th></tr></thead>\n<tbody>\n");
    for t in &doc.turns {
        let s = &t.score;
        let is_origin = Some(s.turn) == o.turn && o.status == Status::Localized;
        let missed = doc.missed_opportunities.iter().any(|m| m.turn == s.turn);
        let class = if is_origin {
            " class=\"origin\""
        } else if missed {
            " class=\"missed\""
        } else {
            ""
        };
        let mut marks = String::new();
        if is_origin {
            marks.push_str("<span class=\"tag origin\">◆ origin</span>");
        }
        if Some(s.turn) == intro_turn {
            marks.push_str("<span class=\"tag write\">✎ introducing write</span>");
        } else if write_turns.contains(&s.turn) {
            marks.push_str("<span class=\"tag write\">✎ write</span>");
        }
        if missed {
            marks.push_str("<span class=\"tag missed\">○ missed</span>");
        }
        let _ = write!(
            out,
            "<tr{class} id=\"turn-{}\"><th scope=\"row\" data-label=\"turn\">{}{marks}</th>",
            s.turn, s.turn
        );
        if show_agent {
            let _ = write!(out, "<td data-label=\"agent\">{}</td>", esc(&t.agent));
        }
        let _ = write!(out, "<td data-label=\"kind\">{}</td>", esc(s.kind.as_str()));
        match (&s.scores, s.applicable) {
            (None, _) => out.push_str(
                "<td class=\"sc wide\" colspan=\"4\" data-label=\"scores\">scoring failed</td>",
            ),
            (Some(_), false) => out.push_str(
                "<td class=\"sc wide\" colspan=\"4\" data-label=\"scores\">not applicable</td>",
            ),
            (Some(x), true) => {
                for d in Dim::ALL {
                    let v = x.get(d);
                    let _ = write!(
                        out,
                        "<td class=\"sc v{v}\" data-label=\"{}\">{v}</td>",
                        d.key().to_uppercase()
                    );
                }
            }
        }
        let mut said = format!("<p class=\"ex\">{}</p>", esc(&t.excerpt));
        if let Some(e) = &s.error {
            let _ = write!(said, "<p class=\"err\">{}</p>", esc(e));
        }
        for d in Dim::ALL {
            if let Some(q) = s.quotes.get(d) {
                let _ = write!(
                    said,
                    "<p class=\"q\"><span class=\"qk {}\">{}</span> “{}”</p>",
                    d.key(),
                    d.key().to_uppercase(),
                    esc(q)
                );
            }
        }
        let _ = writeln!(
            out,
            "<td class=\"said\" data-label=\"said\">{said}</td></tr>"
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

pub(crate) fn report(doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let title = match (doc.origin.status, doc.origin.turn) {
        (Status::Localized, Some(t)) => {
            crate::i18n::tf("html.title_at", &[("id", &f.id), ("turn", &t)])
        }
        _ => crate::i18n::tf("html.title_undetermined", &[("id", &f.id)]),
    };
    let warnings: String = doc
        .warnings
        .iter()
        .map(|w| format!("<li>{}</li>", esc(w)))
        .collect();
    let warnings = if warnings.is_empty() {
        String::new()
    } else {
        format!(
            "<section class=\"notes\" aria-labelledby=\"h-notes\"><h2 id=\"h-notes\">{}</h2><ul class=\"warn\">{warnings}</ul></section>\n",
            esc(&crate::i18n::t("html.warnings"))
        )
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta name=\"color-scheme\" content=\"light dark\">\
<title>git sage — {title}</title><style>{STYLE}</style></head><body>\n\
{header}<main>\n\
<section class=\"verdict\" aria-labelledby=\"h-verdict\"><h2 id=\"h-verdict\">{h_verdict}</h2>\n<div class=\"cards\">\n{prov}{origin}</div>\n{missed}</section>\n\
<section class=\"timeline\" id=\"timeline\" aria-labelledby=\"h-timeline\"><h2 id=\"h-timeline\">{h_timeline}</h2>\n{chart}</section>\n\
<section class=\"rec\" id=\"recommendation\" aria-labelledby=\"h-rec\"><h2 id=\"h-rec\">{h_rec}</h2>\n{rec}</section>\n\
<section class=\"turns-s\" aria-labelledby=\"h-turns\"><h2 id=\"h-turns\">{h_turns}</h2>\n{turns}</section>\n\
{warnings}</main>\n\
<footer>git sage {version} · SAGE method: docs/method.md · this page is self-contained and loads nothing from the network</footer>\n\
</body></html>\n",
        title = esc(&title),
        header = header(doc),
        prov = provenance_card(doc),
        origin = origin_card(doc),
        missed = missed_line(doc),
        chart = super::chart::timeline(doc),
        rec = super::mdlite::to_html(doc.shown_recommendation()),
        lang = crate::i18n::lang().code(),
        h_verdict = esc(&crate::i18n::t("html.verdict")),
        h_timeline = esc(&crate::i18n::t("html.timeline")),
        h_rec = esc(&crate::i18n::t("html.recommendation")),
        h_turns = esc(&crate::i18n::t("html.turns")),
        turns = turns_table(doc),
        version = env!("CARGO_PKG_VERSION"),
    )
}
