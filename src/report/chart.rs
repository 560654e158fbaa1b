//! The timeline of the HTML report: lanes over the turns — the origin, the writes of the
//! anchored file, the four scores (TR, DI, VR, SA) and the missed opportunities — each an
//! inline SVG strip that stretches to the page's width (viewBox, no fixed size), with every
//! piece of text in HTML beside or over it, so text keeps its size at any width. A handful of
//! turns shows the scores as digits in their cells; hundreds become a heat strip with the
//! turn axis thinned to what fits.

use crate::i18n::Tr;
use std::collections::HashMap;
use std::fmt::Write;

use super::escape::esc;
use crate::judge::scores::Dim;
use crate::origin::Status;
use crate::report::doc::ReportDoc;

/// Up to this many turns, cells are drawn apart (a gap between them); more would be all gap.
const SEPARATE_MAX: usize = 60;
/// Up to this many turns, each cell shows its score as a digit (a cell is then at least
/// 19 px wide on a 400 px screen).
const DIGITS_MAX: usize = 16;
/// The narrowest plot the labels are laid out for, in CSS pixels (a 400 px screen less the
/// page's margins and the lane titles).
const NARROW_PLOT_PX: usize = 300;
/// Width of one digit of a 12 px label, and the gap kept between labels, in CSS pixels.
const DIGIT_PX: usize = 7;
const LABEL_GAP_PX: usize = 6;
/// Steps of the turn axis.
const NICE_STEPS: [usize; 12] = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000];
/// Ticks the axis holds at most: on a narrow plot, and on a wide one (the container query in
/// the page's style shows the extra ticks from 760 px of chart width on).
const MAJOR_TICKS: usize = 5;
const MINOR_TICKS: usize = 12;

/// Where a label stands along the plot: `left` at the cell's centre, and shifted by as much
/// of its own width as it is far along, so that it never leaves the plot at either end.
fn at(p: f64) -> String {
    format!(
        "left:{:.3}%;transform:translateX(-{:.3}%)",
        p * 100.0,
        p * 100.0
    )
}

/// The centre of cell `i` of `n`, from 0 to 1.
fn centre(i: usize, n: usize) -> f64 {
    (i as f64 + 0.5) / n as f64
}

/// The SVG strip of one lane: `n` cells wide, one high, stretched to the lane.
fn strip(n: usize, body: &str) -> String {
    format!(
        "<svg class=\"strip\" viewBox=\"0 0 {n} 1\" preserveAspectRatio=\"none\" aria-hidden=\"true\" focusable=\"false\">{body}</svg>"
    )
}

/// A thin mark at cell `i` that keeps its width however the strip is stretched.
fn line_at(i: usize, class: &str, title: &str) -> String {
    format!(
        "<line class=\"{class}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"0\" y2=\"1\" vector-effect=\"non-scaling-stroke\"><title>{}</title></line>",
        esc(title),
        x = i as f64 + 0.5
    )
}

fn lane(class: &str, title_short: &str, title_long: &str, plot: &str) -> String {
    format!(
        "<div class=\"lane {class}\"><div class=\"ll\"><span class=\"short\">{}</span><span class=\"long\">{}</span></div><div class=\"plot\">{plot}</div></div>\n",
        esc(title_short),
        esc(title_long)
    )
}

/// The turn axis: every turn when all fit on a narrow plot; else the first turn and nice
/// multiples — few on a narrow plot (`major`), more on a wide one (`minor`).
fn axis(turns: &[u32]) -> String {
    let n = turns.len();
    let digits = turns.iter().map(|t| t.to_string().len()).max().unwrap_or(1);
    let mut out = String::new();
    if n * (digits * DIGIT_PX + LABEL_GAP_PX) <= NARROW_PLOT_PX {
        for (i, t) in turns.iter().enumerate() {
            let _ = write!(
                out,
                "<span class=\"tick c\" style=\"left:{:.3}%\">{t}</span>",
                centre(i, n) * 100.0
            );
        }
        return out;
    }
    let step = |most: usize| {
        NICE_STEPS
            .iter()
            .copied()
            .find(|s| n.div_ceil(*s) <= most)
            .unwrap_or(n)
    };
    let major = step(MAJOR_TICKS);
    let minor = NICE_STEPS
        .iter()
        .copied()
        .find(|s| n.div_ceil(*s) <= MINOR_TICKS && major.is_multiple_of(*s))
        .unwrap_or(major);
    // (index, major?) of every tick, the first turn always a major one; a multiple too close
    // to a tick already kept (within 0.6 of its step) is left out so labels keep apart.
    let mut ticks: Vec<(usize, bool)> = vec![(0, true)];
    for (i, t) in turns.iter().enumerate().skip(1) {
        let t = *t as usize;
        let is_major = t.is_multiple_of(major);
        if !is_major && !t.is_multiple_of(minor) {
            continue;
        }
        let room = if is_major { major } else { minor } as f64 * 0.6;
        let clear = ticks
            .iter()
            .filter(|(_, m)| *m || !is_major)
            .all(|(j, _)| (i - j) as f64 >= room);
        if clear {
            ticks.push((i, is_major));
        }
    }
    for (i, is_major) in ticks {
        let _ = write!(
            out,
            "<span class=\"tick{}\" style=\"{}\">{}</span>",
            if is_major { "" } else { " minor" },
            at(centre(i, n)),
            turns[i]
        );
    }
    out
}

/// The timeline section's chart and legend.
pub(crate) fn timeline(tr: &Tr, doc: &ReportDoc) -> String {
    let turns: Vec<u32> = doc.turns.iter().map(|t| t.score.turn).collect();
    let n = turns.len();
    if n == 0 {
        return format!("<p class=\"muted\">{}</p>", esc(&tr.t("chart.none_scored")));
    }
    let index: HashMap<u32, usize> = turns.iter().enumerate().map(|(i, t)| (*t, i)).collect();
    let intro = doc.provenance.introducing_write.as_ref();
    let f = Frame {
        doc,
        origin_at: doc.origin.turn.and_then(|t| index.get(&t).copied()),
        intro_at: intro
            .and_then(|w| w.turn)
            .and_then(|t| index.get(&t).copied()),
        intro,
        n,
        index,
        turns,
    };
    let mut summary = tr.tf(
        "chart.summary",
        &[("first", &f.turns[0]), ("last", &f.turns[n - 1])],
    );
    let mut out = origin_lane(tr, &f, &mut summary);
    out.push_str(&writes_lane(tr, &f, &mut summary));
    for d in Dim::ALL {
        out.push_str(&dim_lane(tr, &f, d));
    }
    out.push_str(&missed_lane(tr, &f, &mut summary));
    let turn = tr.t("chart.turn");
    out.push_str(&lane("axis", &turn, &turn, &axis(&f.turns)));
    format!(
        "<div class=\"chart{}\" role=\"group\" aria-label=\"{}\">\n{out}</div>\n{}",
        if n <= SEPARATE_MAX { " few" } else { "" },
        esc(&summary),
        legend(tr)
    )
}

/// What every lane of the chart reads: the turns shown, where each sits, and the marks.
struct Frame<'a> {
    doc: &'a ReportDoc,
    turns: Vec<u32>,
    n: usize,
    /// A turn's position in the chart.
    index: HashMap<u32, usize>,
    origin_at: Option<usize>,
    intro: Option<&'a crate::report::json::IntroducingWrite>,
    intro_at: Option<usize>,
}

/// The origin's lane: its turn flagged, or "undetermined".
fn origin_lane(tr: &Tr, f: &Frame, summary: &mut String) -> String {
    let (n, turns, o) = (f.n, &f.turns, &f.doc.origin);
    let mut plot = String::new();
    match (o.status, f.origin_at) {
        (Status::Localized, Some(i)) => {
            let words = o
                .kind
                .map(|k| k.words_shown(tr))
                .unwrap_or_else(|| "?".into());
            plot.push_str(&strip(
                n,
                &line_at(i, "om", &tr.tf("chart.origin_line", &[("turn", &turns[i])])),
            ));
            let _ = write!(
                plot,
                "<span class=\"flag origin\" style=\"{}\">{}</span>",
                at(centre(i, n)),
                esc(&tr.tf(
                    "chart.origin_flag",
                    &[("turn", &turns[i]), ("type", &words)]
                ))
            );
            summary.push_str(&tr.tf(
                "chart.origin_summary",
                &[("turn", &turns[i]), ("type", &words)],
            ));
        }
        _ => {
            let _ = write!(
                plot,
                "<span class=\"flag none\" style=\"left:0\">{}</span>",
                esc(&tr.t("chart.undetermined"))
            );
        }
    }
    let origin = tr.t("chart.origin");
    lane("marks origin", &origin, &origin, &plot)
}

/// The writes' lane: every write of the anchored file tied to a turn; the introducing one
/// named.
fn writes_lane(tr: &Tr, f: &Frame, summary: &mut String) -> String {
    let (n, turns, intro) = (f.n, &f.turns, f.intro);
    let mut marks = String::new();
    let mut any = false;
    for w in &f.doc.provenance.writes {
        let Some(i) = w.turn.and_then(|t| f.index.get(&t).copied()) else {
            continue;
        };
        if !w.changed {
            continue;
        }
        any = true;
        let is_intro = intro.is_some_and(|iw| iw.write == w.write);
        let short = &w.commit[..w.commit.len().min(7)];
        marks.push_str(&line_at(
            i,
            if is_intro { "wm intro" } else { "wm" },
            &tr.tf(
                "chart.write_line",
                &[("write", &w.write), ("commit", &short), ("turn", &turns[i])],
            ),
        ));
    }
    let mut plot = strip(n, &marks);
    match (intro, f.intro_at) {
        (Some(w), Some(i)) => {
            let _ = write!(
                plot,
                "<span class=\"flag write\" style=\"{}\">{}</span>",
                at(centre(i, n)),
                esc(&tr.tf(
                    "chart.write_flag",
                    &[("write", &w.write), ("turn", &turns[i])]
                ))
            );
            summary.push_str(&tr.tf("chart.write_summary", &[("turn", &turns[i])]));
        }
        _ if !any => {
            let _ = write!(
                plot,
                "<span class=\"flag none\" style=\"left:0\">{}</span>",
                esc(&tr.t("chart.no_write"))
            );
        }
        _ => {}
    }
    let writes = tr.t("chart.writes");
    lane("marks writes", &writes, &writes, &plot)
}

/// One dimension's lane: a cell per turn, its score (or why none) as a digit when there is room.
fn dim_lane(tr: &Tr, f: &Frame, d: Dim) -> String {
    let (n, doc) = (f.n, f.doc);
    let key = d.key();
    let mut cells = String::new();
    let mut digits = String::new();
    for (i, turn) in doc.turns.iter().enumerate() {
        let s = &turn.score;
        let (class, digit, what) = match (&s.scores, s.applicable) {
            (None, _) if s.skipped.is_some() => {
                ("na".to_string(), "·".to_string(), tr.t("html.not_asked"))
            }
            (None, _) => (
                "fail".to_string(),
                "×".to_string(),
                tr.t("html.scoring_failed"),
            ),
            (Some(_), false) => (
                "na".to_string(),
                "–".to_string(),
                tr.t("html.not_applicable"),
            ),
            (Some(x), true) => {
                let v = x.get(d);
                (
                    format!("s{v}"),
                    v.to_string(),
                    format!("{} {v}", key.to_uppercase()),
                )
            }
        };
        let _ = write!(
            cells,
            "<rect class=\"c {class}\" x=\"{i}\" y=\"0\" width=\"1\" height=\"1\"><title>{}</title></rect>",
            esc(&tr.tf("chart.cell", &[("turn", &s.turn), ("what", &what)]))
        );
        if n <= DIGITS_MAX {
            let _ = write!(
                digits,
                "<span class=\"d {class}\" style=\"left:{:.3}%\">{digit}</span>",
                centre(i, n) * 100.0
            );
        }
    }
    // The origin's and the introducing write's cells outlined, so digits stay readable.
    for (at, class) in [(f.intro_at, "wc"), (f.origin_at, "oc")] {
        if let Some(i) = at {
            let _ = write!(
                cells,
                "<rect class=\"{class}\" x=\"{i}\" y=\"0\" width=\"1\" height=\"1\"/>"
            );
        }
    }
    lane(
        &format!("dim {key}"),
        &key.to_uppercase(),
        &format!("{} {}", key.to_uppercase(), short_name(tr, d)),
        &format!("{}{digits}", strip(n, &cells)),
    )
}

/// The missed opportunities' lane.
fn missed_lane(tr: &Tr, f: &Frame, summary: &mut String) -> String {
    let (n, doc) = (f.n, f.doc);
    let mut marks = String::new();
    for m in &doc.missed_opportunities {
        if let Some(&i) = f.index.get(&m.turn) {
            let _ = write!(
                marks,
                "<rect class=\"mc\" x=\"{i}\" y=\"0.2\" width=\"1\" height=\"0.6\"/>"
            );
            marks.push_str(&line_at(
                i,
                "mm",
                &tr.tf(
                    "chart.missed_line",
                    &[("turn", &m.turn), ("kind", &m.kind.shown(tr))],
                ),
            ));
        }
    }
    let mut plot = strip(n, &marks);
    if doc.missed_opportunities.is_empty() {
        let _ = write!(
            plot,
            "<span class=\"flag none\" style=\"left:0\">{}</span>",
            esc(&tr.t("chart.none"))
        );
    }
    let missed = doc.missed_opportunities.len();
    summary.push_str(&tr.tf("chart.missed_summary", &[("n", &missed)]));
    lane(
        "marks missed",
        &tr.t("chart.missed"),
        &tr.tf("chart.missed_n", &[("n", &missed)]),
        &plot,
    )
}

/// The dimension's name, short enough for a lane title.
fn short_name(tr: &Tr, d: Dim) -> String {
    tr.t(&format!("dim.{}.short", d.key()))
}

fn legend(tr: &Tr) -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for d in Dim::ALL {
        let _ = write!(
            out,
            "<li><i class=\"sw {}\"></i>{} {}</li>",
            d.key(),
            d.key().to_uppercase(),
            esc(&tr.t(&format!("dim.{}.name", d.key())))
        );
    }
    let _ = write!(
        out,
        "<li><i class=\"sw s0\"></i><i class=\"sw s1\"></i><i class=\"sw s2\"></i><i class=\"sw s3\"></i>{}</li>",
        esc(&tr.t("chart.legend_scale"))
    );
    let _ = write!(
        out,
        "<li><i class=\"sw na\"></i>{}</li><li><i class=\"sw fail\"></i>{}</li>",
        esc(&tr.t("html.not_applicable")),
        esc(&tr.t("html.scoring_failed"))
    );
    let _ = write!(
        out,
        "<li><i class=\"mk origin\"></i>{}</li><li><i class=\"mk write\"></i>{}</li><li><i class=\"mk missed\"></i>{}</li>",
        esc(&tr.t("chart.legend_origin")),
        esc(&tr.t("chart.legend_write")),
        esc(&tr.t("chart.legend_missed"))
    );
    out.push_str("</ul>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels of the ticks `axis` draws, and which of them are minor.
    fn ticks(turns: &[u32]) -> Vec<(String, bool)> {
        let html = axis(turns);
        html.split("<span class=\"tick")
            .skip(1)
            .map(|s| {
                let minor = s.starts_with(" minor");
                let label = s
                    .split('>')
                    .nth(1)
                    .unwrap_or("")
                    .split('<')
                    .next()
                    .unwrap_or("");
                (label.to_string(), minor)
            })
            .collect()
    }

    #[test]
    fn a_short_session_labels_every_turn() {
        let t: Vec<u32> = (1..=6).collect();
        let labels: Vec<String> = ticks(&t).into_iter().map(|(l, _)| l).collect();
        assert_eq!(labels, ["1", "2", "3", "4", "5", "6"]);
    }

    #[test]
    fn a_long_session_thins_the_axis() {
        let t: Vec<u32> = (1..=300).collect();
        let all = ticks(&t);
        let major: Vec<&str> = all
            .iter()
            .filter(|(_, m)| !m)
            .map(|(l, _)| l.as_str())
            .collect();
        assert_eq!(major, ["1", "100", "200", "300"]);
        assert!(all.len() <= MINOR_TICKS + 1, "{all:?}");
        assert!(all.iter().any(|(l, m)| *m && l == "50"), "{all:?}");
        // A scope that starts just before a multiple does not crowd the first label.
        let t: Vec<u32> = (99..=400).collect();
        let major: Vec<String> = ticks(&t)
            .into_iter()
            .filter(|(_, m)| !m)
            .map(|(l, _)| l)
            .collect();
        assert_eq!(major, ["99", "200", "300", "400"]);
        for n in [3usize, 17, 40, 99, 101, 250, 500] {
            let t: Vec<u32> = (1..=n as u32).collect();
            let k = ticks(&t);
            assert!(
                k.iter().filter(|(_, m)| !m).count() <= MAJOR_TICKS + 1,
                "{n}: {k:?}"
            );
            assert!(k.len() <= MINOR_TICKS + 2 || n <= 23, "{n}: {k:?}");
        }
    }
}
