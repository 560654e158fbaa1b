//! `blame-origin --format html`: one self-contained page for a security engineer — a header
//! naming the finding and where it was looked for, the verdict (provenance with the
//! introducing write's diff, origin with its quote, type and remedy), the timeline of scores
//! and marks (report/chart.rs), the recommendation and the turns. No script, font or image is
//! fetched: the style is inline and the chart is inline SVG. Every string from the
//! transcript or the repository is escaped.

use crate::i18n::Tr;
use std::fmt::Write;

use crate::history::ProvenanceStatus;
use crate::judge::scores::Dim;
use crate::origin::Status;
use crate::report::doc::ReportDoc;
use crate::report::escape::esc;
use crate::report::json::{FindingJson, RangeJson, SessionJson};

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

/// The page's header: the finding, where it was looked for and with what, and the code it
/// points at.
fn header(tr: &Tr, doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let mut out = format!(
        "<header class=\"top\">\n<p class=\"kicker\">{}</p>\n",
        esc(&tr.t("html.kicker"))
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
        let _ = writeln!(out, "<p class=\"banner\">{}</p>", tr.t("html.unconfirmed"));
    }
    let _ = writeln!(out, "<dl class=\"meta\">{}</dl>", header_meta(tr, doc));
    if !f.tip_lines.is_empty() {
        out.push_str(&tip_code(tr, f));
    }
    out.push_str("</header>\n");
    out
}

/// The header's facts, each a `<dt>`/`<dd>` pair: file, repository, branch, range, session,
/// judge and tool.
fn header_meta(tr: &Tr, doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let mut dl = String::new();
    let anchored: Vec<u32> = f
        .tip_lines
        .iter()
        .filter(|l| l.anchored)
        .map(|l| l.line)
        .collect();
    let lines = match (anchored.first().copied(), anchored.last().copied(), f.line) {
        (Some(a), Some(b), _) if a != b => tr.tf("html.lines", &[("first", &a), ("last", &b)]),
        (Some(a), _, _) | (None, _, Some(a)) => tr.tf("html.line", &[("line", &a)]),
        _ => String::new(),
    };
    meta(
        &mut dl,
        &tr.t("html.file"),
        &format!("<code>{}</code>{}", esc(&f.file), esc(&lines)),
    );
    if let Some(r) = &doc.repository {
        meta(&mut dl, &tr.t("html.repository"), &esc(r));
    }
    let r = &doc.range;
    if let Some(b) = &r.branch {
        meta(
            &mut dl,
            &tr.t("html.branch"),
            &format!("<code>{}</code>", esc(b)),
        );
    }
    meta(&mut dl, &tr.t("html.range"), &range_value(tr, r));
    if let Some(d) = &r.tip_date {
        meta(
            &mut dl,
            &tr.t("html.tip_date"),
            &esc(&d.replace('T', " ").replace('Z', " UTC")),
        );
    }
    let session = match &doc.session {
        Some(s) => session_value(tr, s),
        None => esc(&tr.t("html.session_none")),
    };
    meta(&mut dl, &tr.t("html.session"), &session);
    meta(
        &mut dl,
        &tr.t("html.judge"),
        &match super::judge_cost(tr, &doc.judge) {
            Some(cost) => format!(
                "{} ({}) · {}",
                esc(&doc.judge.name),
                esc(&doc.judge.protocol),
                esc(&cost)
            ),
            None => format!("{} ({})", esc(&doc.judge.name), esc(&doc.judge.protocol)),
        },
    );
    meta(
        &mut dl,
        &tr.t("html.tool"),
        &format!("git sage {}", env!("CARGO_PKG_VERSION")),
    );
    dl
}

/// The range studied: base..tip, how many commits, and where the base came from.
fn range_value(tr: &Tr, r: &RangeJson) -> String {
    tr.tf(
        if r.commits == 1 {
            "html.range_one"
        } else {
            "html.range_many"
        },
        &[
            (
                "range",
                &format!(
                    "<code>{}..{}</code>",
                    esc(short(&r.base)),
                    esc(short(&r.tip))
                ),
            ),
            ("n", &r.commits),
            ("source", &esc(r.base_source.as_deref().unwrap_or("given"))),
        ],
    )
}

/// The session read: its file and format, the agent and model, and the turns in scope.
fn session_value(tr: &Tr, s: &SessionJson) -> String {
    let agent = match &s.agent {
        Some(a) => tr.tf("html.agent", &[("name", &esc(a))]),
        None => esc(&tr.t("html.agent_none")),
    };
    let model = s
        .model
        .as_deref()
        .map(|m| tr.tf("html.model", &[("name", &esc(m))]))
        .unwrap_or_default();
    tr.tf(
        "html.session_value",
        &[
            ("source", &format!("<code>{}</code>", esc(&s.source))),
            ("format", &esc(&s.format)),
            ("agent", &agent),
            ("model", &model),
            ("first", &s.scope.first),
            ("last", &s.scope.last),
            ("turns", &s.turns),
        ],
    )
}

/// The finding's lines at the tip, the anchored ones marked.
fn tip_code(tr: &Tr, f: &FindingJson) -> String {
    let mut out = format!(
        "<figure class=\"code\"><figcaption>{}</figcaption><pre>",
        tr.tf(
            "html.code_caption",
            &[("file", &format!("<code>{}</code>", esc(&f.file)))]
        )
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
    out
}

/// The provenance status as the verdict's badge.
fn status_words(tr: &Tr, s: ProvenanceStatus) -> (&'static str, String) {
    let class = match s {
        ProvenanceStatus::Introduced => "introduced",
        ProvenanceStatus::IntroducedByOther => "other",
        ProvenanceStatus::Inherited => "inherited",
        ProvenanceStatus::NoCodeLocation => "none",
    };
    (class, esc(&tr.t(&format!("html.status.{class}"))))
}

fn provenance_card(tr: &Tr, doc: &ReportDoc) -> String {
    let p = &doc.provenance;
    let (class, words) = status_words(tr, p.status);
    let mut out = format!(
        "<article class=\"card prov\"><h3>{h}</h3><p class=\"badge {class}\">{words}</p>",
        h = esc(&tr.t("html.provenance"))
    );
    let mut facts = Vec::new();
    match &p.introducing_write {
        Some(w) => {
            let summary = w
                .summary
                .as_ref()
                .map(|sum| format!(" “{}”", esc(sum)))
                .unwrap_or_default();
            let mut s = tr.tf(
                "html.write",
                &[
                    ("write", &w.write),
                    ("commit", &format!("<code>{}</code>", esc(short(&w.commit)))),
                    ("summary", &summary),
                ],
            );
            match (w.turn, &w.unmapped_reason) {
                (Some(turn), _) => {
                    let by = w
                        .mapped_by
                        .map(|m| tr.tf("html.mapped_by", &[("by", &m.as_str())]))
                        .unwrap_or_default();
                    s.push_str(&tr.tf("html.made_at", &[("turn", &turn), ("by", &by)]));
                }
                (None, Some(r)) => {
                    s.push_str(&tr.tf("html.made_no_turn", &[("why", &esc(&r.shown(tr)))]))
                }
                (None, None) => s.push_str(&tr.t("html.made")),
            }
            facts.push(s);
            if let Some(m) = &w.via_merge {
                facts.push(tr.tf(
                    "html.merge",
                    &[("commit", &format!("<code>{}</code>", esc(short(m))))],
                ));
            }
        }
        None if p.status == ProvenanceStatus::Inherited => facts.push(tr.tf(
            "html.inherited_base",
            &[(
                "base",
                &format!("<code>{}</code>", esc(short(&doc.range.base))),
            )],
        )),
        None => {}
    }
    if let Some(r) = &p.reason {
        facts.push(esc(&r.shown(tr)));
    }
    facts.push(tr.tf(
        "html.reconstruction",
        &[(
            "how",
            &format!("<code>{}</code>", esc(p.reconstruction.as_str())),
        )],
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
            "<figure class=\"diff\"><figcaption>{}</figcaption><pre>",
            tr.tf(
                "html.diff_caption",
                &[
                    ("write", &w.write),
                    ("file", &format!("<code>{}</code>", esc(&doc.finding.file))),
                ],
            )
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

fn origin_card(tr: &Tr, doc: &ReportDoc) -> String {
    let o = &doc.origin;
    let mut out = format!(
        "<article class=\"card origin\"><h3>{}</h3>",
        esc(&tr.t("html.origin"))
    );
    match o.status {
        Status::Localized => {
            let _ = write!(
                out,
                "<p class=\"badge origin\">{}</p>",
                esc(&tr.tf(
                    "html.badge",
                    &[
                        ("turn", &o.turn.unwrap_or(0)),
                        (
                            "type",
                            &o.kind
                                .map(|k| k.words_shown(tr))
                                .unwrap_or_else(|| "?".into())
                        ),
                    ],
                ))
            );
            if let Some(q) = &o.quote {
                let _ = write!(out, "<blockquote>{}</blockquote>", esc(q));
            }
            if let Some(k) = o.kind {
                let _ = write!(out, "<p>{}</p>", esc(&k.explained(tr)));
            }
            if let Some(b) = o.bound {
                let _ = write!(
                    out,
                    "<p class=\"muted\">{}</p>",
                    tr.tf(
                        "html.bound",
                        &[
                            ("bound", &b),
                            (
                                "why",
                                &esc(&super::bound_words(tr, o.bound_by.as_deref().unwrap_or("")))
                            )
                        ],
                    )
                );
            }
        }
        Status::Undetermined => {
            let _ = write!(
                out,
                "<p class=\"badge none\">{}</p>",
                esc(&tr.t("html.undetermined"))
            );
            if let Some(d) = &o.detail {
                let _ = write!(out, "<p>{}</p>", esc(d));
            }
        }
    }
    if let Some(m) = &o.margin {
        let _ = write!(
            out,
            "<p class=\"margin {}\">{}</p>",
            if m.firm { "firm" } else { "close" },
            esc(&m.shown(tr))
        );
    }
    if let Some(c) = &doc.confirmation {
        let _ = write!(
            out,
            "<p class=\"margin confirmed\">{}</p>",
            esc(&super::confirmation_words(tr, c))
        );
    }
    match remedy(doc) {
        Some(r) => {
            let _ = write!(
                out,
                "<p class=\"remedy\">{}</p>",
                tr.tf("html.remedy", &[("remedy", &esc(&r))])
            );
        }
        None => {
            let _ = write!(out, "<p class=\"remedy\">{}</p>", tr.t("html.remedy_none"));
        }
    }
    if !doc.other_origins.is_empty() {
        let _ = write!(
            out,
            "<p class=\"muted\">{}</p><ul class=\"others\">",
            esc(&tr.t("html.others"))
        );
        for a in &doc.other_origins {
            let what = match (a.origin.status, a.origin.turn, a.origin.kind) {
                (Status::Localized, Some(turn), Some(k)) => tr.tf(
                    "html.badge",
                    &[("turn", &turn), ("type", &k.words_shown(tr))],
                ),
                _ => tr.t("html.undetermined"),
            };
            let _ = write!(
                out,
                "<li>{}{}: {}</li>",
                esc(&a.judge),
                a.repeat
                    .map(|r| tr.tf("html.repeat", &[("n", &r)]))
                    .unwrap_or_default(),
                esc(&what)
            );
        }
        out.push_str("</ul>");
    }
    if doc.manual_review {
        let _ = write!(
            out,
            "<p class=\"banner\">{}</p>",
            esc(&tr.t("html.manual_review"))
        );
    }
    out.push_str("</article>\n");
    out
}

/// The missed opportunities as a sentence: the first few, then how many more.
fn missed_line(tr: &Tr, doc: &ReportDoc) -> String {
    const SHOWN: usize = 8;
    let m = &doc.missed_opportunities;
    if m.is_empty() {
        return format!(
            "<p class=\"missed-line\">{}</p>\n",
            tr.t("html.missed_none")
        );
    }
    let list: Vec<String> = m
        .iter()
        .take(SHOWN)
        .map(|x| {
            let touch = if x.touches_anchor {
                tr.t("missed.touch")
            } else {
                String::new()
            };
            tr.tf(
                "missed.item",
                &[
                    ("turn", &x.turn),
                    ("kind", &x.kind.shown(tr)),
                    ("vr", &x.vr),
                    ("sa", &x.sa),
                    ("touch", &touch),
                ],
            )
        })
        .collect();
    let more = if m.len() > SHOWN {
        tr.tf("html.missed_more", &[("n", &(m.len() - SHOWN))])
    } else {
        String::new()
    };
    format!(
        "<p class=\"missed-line\">{}</p>\n",
        tr.tf(
            "html.missed",
            &[("list", &esc(&list.join("; "))), ("more", &esc(&more))]
        )
    )
}

fn turns_table(tr: &Tr, doc: &ReportDoc) -> String {
    if doc.turns.is_empty() {
        return format!("<p class=\"muted\">{}</p>\n", esc(&tr.t("html.no_turns")));
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
    let mut out = turns_head(tr, show_agent);
    for turn in &doc.turns {
        let s = &turn.score;
        let is_origin = Some(s.turn) == o.turn && o.status == Status::Localized;
        let missed = doc.missed_opportunities.iter().any(|m| m.turn == s.turn);
        let class = if is_origin {
            " class=\"origin\""
        } else if missed {
            " class=\"missed\""
        } else {
            ""
        };
        let write = match s.turn {
            t if Some(t) == intro_turn => Some("html.tag.intro"),
            t if write_turns.contains(&t) => Some("text.mark.write"),
            _ => None,
        };
        let marks = turn_tags(tr, is_origin, write, missed);
        let _ = write!(
            out,
            "<tr{class} id=\"turn-{}\"><th scope=\"row\" data-label=\"turn\">{}{marks}</th>",
            s.turn, s.turn
        );
        if show_agent {
            let _ = write!(out, "<td data-label=\"agent\">{}</td>", esc(&turn.agent));
        }
        let _ = write!(
            out,
            "<td data-label=\"kind\">{}</td>",
            esc(&s.kind.shown(tr))
        );
        out.push_str(&score_cells(tr, s));
        let _ = writeln!(
            out,
            "<td class=\"said\" data-label=\"said\">{}</td></tr>",
            said_cell(turn)
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

/// The table's head row: turn, agent (when there are several), kind, the four scores, said.
fn turns_head(tr: &Tr, show_agent: bool) -> String {
    let mut out = format!(
        "<table class=\"turns\"><thead><tr><th scope=\"col\">{}</th>",
        esc(&tr.t("html.col.turn"))
    );
    if show_agent {
        let _ = write!(
            out,
            "<th scope=\"col\">{}</th>",
            esc(&tr.t("html.col.agent"))
        );
    }
    let _ = write!(
        out,
        "<th scope=\"col\">{}</th>",
        esc(&tr.t("html.col.kind"))
    );
    for d in Dim::ALL {
        let _ = write!(
            out,
            "<th scope=\"col\" class=\"sc\" title=\"{}\">{}</th>",
            esc(d.name()),
            d.key().to_uppercase()
        );
    }
    let _ = write!(
        out,
        "<th scope=\"col\">{}</th></tr></thead>\n<tbody>\n",
        esc(&tr.t("html.col.said"))
    );
    out
}

/// A turn's tags: the origin, the write it made (`write`: the key of its words), a missed
/// opportunity.
fn turn_tags(tr: &Tr, origin: bool, write: Option<&str>, missed: bool) -> String {
    let mut marks = String::new();
    if origin {
        let _ = write!(
            marks,
            "<span class=\"tag origin\">{}</span>",
            esc(&tr.t("text.mark.origin"))
        );
    }
    if let Some(key) = write {
        let _ = write!(
            marks,
            "<span class=\"tag write\">{}</span>",
            esc(&tr.t(key))
        );
    }
    if missed {
        let _ = write!(
            marks,
            "<span class=\"tag missed\">{}</span>",
            esc(&tr.t("text.mark.missed"))
        );
    }
    marks
}

/// A turn's four score cells, or one cell saying why it has none.
fn score_cells(tr: &Tr, s: &crate::judge::scores::TurnScore) -> String {
    let wide = |key: &str| {
        format!(
            "<td class=\"sc wide\" colspan=\"4\" data-label=\"scores\">{}</td>",
            esc(&tr.t(key))
        )
    };
    match (&s.scores, s.applicable) {
        (None, _) => wide(match s.skipped {
            Some(_) => "html.not_asked",
            None => "html.scoring_failed",
        }),
        (Some(_), false) => wide("html.not_applicable"),
        (Some(x), true) => {
            let mut out = String::new();
            for d in Dim::ALL {
                let v = x.get(d);
                let _ = write!(
                    out,
                    "<td class=\"sc v{v}\" data-label=\"{}\">{v}</td>",
                    d.key().to_uppercase()
                );
            }
            out
        }
    }
}

/// What a turn said: its excerpt, its error, and each dimension's quote.
fn said_cell(turn: &crate::report::doc::ReportTurn) -> String {
    let s = &turn.score;
    let mut said = format!("<p class=\"ex\">{}</p>", esc(&turn.excerpt));
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
    said
}

/// Under the verdict's heading, when the offline judge scored the turns: the page must not
/// read as a model's verdict until someone scrolls to the warnings at its foot.
fn offline_notice(tr: &Tr, doc: &ReportDoc) -> String {
    match doc.judge.name == "offline" {
        true => format!(
            "<p class=\"banner\" role=\"note\">{}</p>\n",
            tr.t("html.offline_draft")
        ),
        false => String::new(),
    }
}

pub(crate) fn report(tr: &Tr, doc: &ReportDoc) -> String {
    let f = &doc.finding;
    let title = match (doc.origin.status, doc.origin.turn) {
        (Status::Localized, Some(t)) => tr.tf("html.title_at", &[("id", &f.id), ("turn", &t)]),
        _ => tr.tf("html.title_undetermined", &[("id", &f.id)]),
    };
    let warnings: String = doc
        .warnings
        .iter()
        .map(|w| format!("<li>{}</li>", esc(&w.shown(tr))))
        .collect();
    let warnings = if warnings.is_empty() {
        String::new()
    } else {
        format!(
            "<section class=\"notes\" aria-labelledby=\"h-notes\"><h2 id=\"h-notes\">{}</h2><ul class=\"warn\">{warnings}</ul></section>\n",
            esc(&tr.t("html.warnings"))
        )
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta name=\"color-scheme\" content=\"light dark\">\
<title>git sage — {title}</title><style>{STYLE}</style></head><body>\n\
{header}<main>\n\
<section class=\"verdict\" aria-labelledby=\"h-verdict\"><h2 id=\"h-verdict\">{h_verdict}</h2>\n{draft}<div class=\"cards\">\n{prov}{origin}</div>\n{missed}</section>\n\
<section class=\"timeline\" id=\"timeline\" aria-labelledby=\"h-timeline\"><h2 id=\"h-timeline\">{h_timeline}</h2>\n{chart}</section>\n\
<section class=\"rec\" id=\"recommendation\" aria-labelledby=\"h-rec\"><h2 id=\"h-rec\">{h_rec}</h2>\n{rec}</section>\n\
<section class=\"turns-s\" aria-labelledby=\"h-turns\"><h2 id=\"h-turns\">{h_turns}</h2>\n{turns}</section>\n\
{warnings}</main>\n\
<footer>git sage {version} · {footer}</footer>\n\
</body></html>\n",
        title = esc(&title),
        header = header(tr, doc),
        prov = provenance_card(tr, doc),
        origin = origin_card(tr, doc),
        missed = missed_line(tr, doc),
        draft = offline_notice(tr, doc),
        chart = super::chart::timeline(tr, doc),
        rec = super::mdlite::to_html(doc.shown_recommendation()),
        lang = tr.lang().code(),
        h_verdict = esc(&tr.t("html.verdict")),
        h_timeline = esc(&tr.t("html.timeline")),
        h_rec = esc(&tr.t("html.recommendation")),
        h_turns = esc(&tr.t("html.turns")),
        turns = turns_table(tr, doc),
        version = env!("CARGO_PKG_VERSION"),
        footer = esc(&tr.t("html.footer")),
    )
}
