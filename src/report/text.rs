//! Plain-text rendering for people: aligned, short, and the same bytes for the same input.

use super::clip;
use crate::anchor::AnchorKind;
use crate::history::ProvenanceStatus;
use crate::history::attribution::MappedBy;
use crate::i18n::Tr;
use crate::report::json::{ProvenanceDoc, WriteJson};
use crate::term::{Mark, Styled};

/// Which session was chosen and why, and the others found (when there were others).
fn session_choice(s: &crate::report::json::SessionJson) -> String {
    session_choice_at(Tr::english(), s, "            ")
}

fn session_choice_at(tr: &Tr, s: &crate::report::json::SessionJson, indent: &str) -> String {
    if s.considered.is_empty() {
        return String::new();
    }
    let why = s
        .chosen_because
        .as_ref()
        .map_or_else(|| tr.t("text.chosen_first"), |b| b.shown(tr));
    let mut out = format!("{indent}{}\n", tr.tf("text.chosen", &[("why", &why)]));
    let shown: Vec<String> = s.considered.iter().take(4).map(|o| o.shown(tr)).collect();
    let list = format!(
        "{}{}",
        shown.join("; "),
        match s.considered.len() {
            n if n > 4 => tr.tf("text.and_more", &[("n", &(n - 4))]),
            _ => String::new(),
        }
    );
    out.push_str(&format!(
        "{indent}{}\n",
        tr.tf("text.also_found", &[("list", &list)])
    ));
    out
}

/// The width of the report's section labels in the run's language (at least 12 columns).
fn label_width(tr: &Tr) -> usize {
    [
        "label.failed",
        "label.provenance",
        "label.origin",
        "label.missed",
    ]
    .iter()
    .map(|k| crate::i18n::width(&tr.t(k)))
    .max()
    .unwrap_or(10)
    .max(10)
        + 2
}

/// A section label written marked (the padding is not), padded to `w` columns.
fn heading(tr: &Tr, out: &mut Styled, key: &str, w: usize, mark: Mark) {
    let word = tr.t(key);
    out.mark(mark, &word);
    out.push_str(&" ".repeat(w.saturating_sub(crate::i18n::width(&word))));
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(7)]
}

/// The largest number of writes listed one by one; the rest are summarised.
const MAX_ROWS: usize = 40;

/// `git sage provenance` as text.
pub(crate) fn provenance(doc: &ProvenanceDoc) -> String {
    let f = &doc.finding;
    let p = &doc.provenance;
    let mut out = String::new();
    let mut head = vec![f.id.clone()];
    if let Some(c) = f.cwe_label() {
        head.push(c);
    }
    if let Some(c) = f.class {
        head.push(c.as_str().to_string());
    }
    out.push_str(&format!("finding     {}\n", head.join(" · ")));
    let what = if let Some(pat) = &f.pattern {
        format!("pattern /{pat}/")
    } else {
        let frags: Vec<String> = f
            .fragments
            .iter()
            .map(|s| format!("'{}'", clip(s, 60)))
            .collect();
        format!("fragment {}", frags.join(" + "))
    };
    let kind = match f.kind {
        AnchorKind::Present => "",
        AnchorKind::Absent => " (a defence that must be absent)",
    };
    out.push_str(&format!("            {}: {what}{kind}\n", f.file));
    let r = &doc.range;
    out.push_str(&format!(
        "range       {}..{} {}({} commit{}, first-parent; base: {})\n",
        short(&r.base),
        short(&r.tip),
        r.tip_name
            .as_deref()
            .map(|n| format!("{n} "))
            .unwrap_or_default(),
        r.commits,
        if r.commits == 1 { "" } else { "s" },
        r.base_source.as_deref().unwrap_or("given")
    ));
    if let Some(sess) = &doc.session {
        out.push_str(&format!(
            "session     {} ({}, {} turns; {}; scope turns {}-{})\n",
            sess.source, sess.format, sess.turns, sess.found_by, sess.scope.first, sess.scope.last
        ));
        out.push_str(&session_choice(sess));
    }
    out.push('\n');

    let verdict = match (p.status, &p.introducing_write) {
        (ProvenanceStatus::Inherited, _) => {
            "INHERITED: the defect was already at the baseline and stayed to the tip".to_string()
        }
        (ProvenanceStatus::Introduced, Some(w)) => format!(
            "INTRODUCED by agent write {} ({} {:?})",
            w.write,
            short(&w.commit),
            clip(summary_of(p.write_at(w.write)), 50)
        ),
        (ProvenanceStatus::IntroducedByOther, Some(w)) => format!(
            "INTRODUCED BY OTHER: write {} ({} {:?}) is not the agent's",
            w.write,
            short(&w.commit),
            clip(summary_of(p.write_at(w.write)), 50)
        ),
        (ProvenanceStatus::NoCodeLocation, _) => "NO CODE LOCATION".to_string(),
        (s, None) => s.as_str().to_uppercase(),
    };
    out.push_str(&format!("provenance  {verdict}\n"));
    if let Some(reason) = &p.reason {
        out.push_str(&format!("            {}\n", reason.english()));
    }
    if let Some(w) = &p.introducing_write {
        if let Some(m) = &w.via_merge {
            out.push_str(&format!("            brought in by merge {}\n", short(m)));
        }
        match (w.turn, &w.unmapped_reason) {
            (Some(t), _) => out.push_str(&format!(
                "            made at turn {t} (mapped by {})\n",
                w.mapped_by.map_or("?", MappedBy::as_str)
            )),
            (None, Some(r)) => out.push_str(&format!(
                "            not mapped to a turn: {}\n",
                r.english()
            )),
            (None, None) => {}
        }
    }
    // A document may list only some writes: the total is the range's, and the writes left
    // out left the file as it was, so every write that changed it is listed.
    let total = p.total_writes();
    let touched = p.writes.iter().filter(|w| w.changed).count();
    out.push_str(&format!(
        "            reconstruction {} ({} of {} write{} changed {})\n\n",
        reconstruction_str(p),
        touched,
        total,
        if total == 1 { "" } else { "s" },
        f.file
    ));

    out.push_str(&writes_table(p));
    // Padding leaves trailing blanks on short rows; drop them.
    let mut out: String = out.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    if !p.notes.is_empty() {
        out.push('\n');
        for n in &p.notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out
}

/// The table of writes: the baseline, then the writes `listed_writes` picks among those the
/// document lists, gaps marked.
fn writes_table(p: &crate::report::json::ProvenanceJson) -> String {
    let mut out = String::new();
    let total = p.total_writes();
    // The table: the baseline, then the writes `listed_writes` picks among those listed.
    let intro = p.introducing_write.as_ref().map(|w| w.write);
    let mut changed = vec![false; total];
    for w in &p.writes {
        if let Some(c) = w.write.checked_sub(1).and_then(|i| changed.get_mut(i)) {
            *c = w.changed;
        }
    }
    let rows: Vec<&WriteJson> = listed_writes(&changed, intro.map(|w| w - 1))
        .into_iter()
        .filter_map(|i| p.write_at(i + 1))
        .collect();
    let who_w = 5;
    let path_w = rows
        .iter()
        .filter_map(|w| w.path.as_deref())
        .chain(p.baseline.as_ref().map(|b| b.path.as_str()))
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let turns = p.writes.iter().any(|w| w.turn.is_some());
    let turn_col = |w: Option<&WriteJson>| -> String {
        if !turns {
            return String::new();
        }
        match w {
            None => format!("{:>5}  ", "turn"),
            Some(w) => format!(
                "{:>5}  ",
                w.turn.map(|t| t.to_string()).unwrap_or_else(|| "-".into())
            ),
        }
    };
    out.push_str(&format!(
        "  {:>5}  {:<7}  {}{:<who_w$}  {:<path_w$}  {:<8}  {:<7}  summary\n",
        "write",
        "commit",
        turn_col(None),
        "by",
        "file",
        "change",
        "defect"
    ));
    if let Some(b) = &p.baseline {
        out.push_str(&format!(
            "  {:>5}  {:<7}  {}{:<who_w$}  {:<path_w$}  {:<8}  {:<7}\n",
            "base",
            short(&b.commit),
            if turns { "       " } else { "" },
            "",
            if b.blob.is_some() {
                b.path.as_str()
            } else {
                "-"
            },
            "",
            if b.present { "present" } else { "absent" }
        ));
    }
    let gap_row = |from: usize, to: usize| {
        let changing = p
            .writes
            .iter()
            .filter(|w| w.write > from && w.write < to && w.changed)
            .count();
        format!("  {:>5}  ({})\n", "…", gap_words(to - from - 1, changing))
    };
    let mut prev_listed = 0usize;
    // The file before a write: after the listed write before it (those in between did not
    // change it), else the baseline's.
    let mut before = p
        .baseline
        .as_ref()
        .map(|b| (b.blob.as_deref(), b.path.as_str()));
    let mut listed = p.writes.iter().peekable();
    for w in rows {
        let gap = w.write - prev_listed - 1;
        // A short range lists every write, so a gap there is writes the document left out.
        if gap > 0 {
            out.push_str(&gap_row(prev_listed, w.write));
        }
        prev_listed = w.write;
        while let Some(x) = listed.next_if(|x| x.write < w.write) {
            before = Some((x.blob.as_deref(), x.path.as_deref().unwrap_or("")));
        }
        let by = if w.merge {
            "merge"
        } else if w.agent {
            "agent"
        } else {
            "other"
        };
        let change = change_word(w, before);
        let mark = if Some(w.write) == intro {
            "  ← introducing write"
        } else {
            ""
        };
        let commit = match w.edit {
            Some(k) => format!("{}·{k}", &short(&w.commit)[..5]),
            None => short(&w.commit).to_string(),
        };
        out.push_str(&format!(
            "  {:>5}  {:<7}  {}{:<who_w$}  {:<path_w$}  {:<8}  {:<7}  {}{mark}\n",
            w.write,
            commit,
            turn_col(Some(w)),
            by,
            if w.blob.is_some() {
                w.path.as_deref().unwrap_or("-")
            } else {
                "-"
            },
            change,
            if w.present_after { "present" } else { "absent" },
            clip(w.summary.as_deref().unwrap_or(""), 40),
        ));
    }
    if prev_listed < total {
        out.push_str(&gap_row(prev_listed, total + 1));
    }
    out
}

/// What a write did to the file, given the file before it (blob, path).
fn change_word(w: &WriteJson, before: Option<(Option<&str>, &str)>) -> &'static str {
    if !w.changed {
        return "";
    }
    let (old_blob, old_path) = before.unwrap_or((None, ""));
    match (old_blob, w.blob.as_deref()) {
        (_, None) => "deleted",
        (None, Some(_)) => "created",
        (Some(a), Some(b)) if a == b && w.path.as_deref() != Some(old_path) => "renamed",
        _ => "modified",
    }
}

/// The row standing for writes a long range does not list: how many, and how many of those
/// changed the file anyway.
fn gap_words(n: usize, changing: usize) -> String {
    let s = if n == 1 { "" } else { "s" };
    match changing {
        0 => format!("{n} write{s} not touching the file"),
        c if c == n => format!("{n} write{s} not listed, each changing the file"),
        c => format!("{n} write{s} not listed, {c} of them changing the file"),
    }
}

/// Which writes (0-based) a text report lists: all of a short range; of a long one, the
/// first and last writes that changed the file, those around the introducing write, and the
/// tip. The rest are counted, not listed.
pub(crate) fn listed_writes(changed: &[bool], intro: Option<usize>) -> Vec<usize> {
    let n = changed.len();
    if n <= MAX_ROWS {
        return (0..n).collect();
    }
    let touching: Vec<usize> = (0..n).filter(|&i| changed[i]).collect();
    let mut keep: Vec<usize> = Vec::new();
    keep.extend(touching.first());
    keep.extend(touching.last());
    if let Some(i) = intro {
        keep.push(i);
        let at = touching.partition_point(|&t| t < i);
        keep.extend(&touching[at.saturating_sub(CONTEXT)..(at + CONTEXT + 1).min(touching.len())]);
    } else {
        keep.extend(touching.iter().rev().take(CONTEXT));
    }
    keep.push(n - 1);
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// Writes that changed the file, listed on each side of the introducing write.
const CONTEXT: usize = 3;

fn summary_of(w: Option<&WriteJson>) -> &str {
    w.and_then(|w| w.summary.as_deref()).unwrap_or("")
}

fn reconstruction_str(p: &crate::report::json::ProvenanceJson) -> &'static str {
    p.reconstruction.as_str()
}

/// What other attribution tools recorded, and what it decided: a section only when they
/// recorded something.
fn evidence_lines(tr: &Tr, e: &crate::report::json::EvidenceJson, w: usize) -> Styled {
    if e.claims.is_empty() && e.skipped.is_empty() {
        return Styled::new();
    }
    let ind = " ".repeat(w);
    let mut lines = Vec::new();
    for d in &e.decisions {
        let changed = if d.changed {
            tr.t("evidence.changed")
        } else {
            String::new()
        };
        lines.push(tr.tf(
            "evidence.decision",
            &[
                ("write", &d.write),
                ("why", &d.why.shown(tr)),
                ("changed", &changed),
            ],
        ));
    }
    if !e.claims.is_empty() {
        let mut names: Vec<&str> = e.claims.iter().map(|c| c.dialect.name()).collect();
        names.dedup();
        names.sort_unstable();
        names.dedup();
        lines.push(tr.tf(
            "evidence.claims",
            &[("n", &e.claims.len()), ("dialects", &names.join(", "))],
        ));
    }
    if let Some(first) = e.skipped.first() {
        lines.push(tr.tf(
            "evidence.skipped",
            &[
                ("n", &e.skipped.len()),
                (
                    "first",
                    &format!("{}: {} ({})", first.dialect.name(), first.why, first.at),
                ),
            ],
        ));
    }
    let mut out = Styled::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            heading(tr, &mut out, "label.evidence", w, Mark::Heading);
        } else {
            out.push_str(&ind);
        }
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// One line per turn: scores, kind, and the quote of the strongest score (or an excerpt).
fn turn_rows(tr: &Tr, doc: &crate::report::doc::ReportDoc, width: usize) -> Vec<Styled> {
    use crate::judge::scores::Dim;
    let origin = doc.origin.turn;
    let intro = doc
        .provenance
        .introducing_write
        .as_ref()
        .and_then(|w| w.turn);
    let missed: Vec<u32> = doc.missed_opportunities.iter().map(|m| m.turn).collect();
    doc.turns
        .iter()
        .map(|t| {
            let s = &t.score;
            // The markers of the turn, each marked for its colour as it is written.
            let mut marks = Styled::new();
            if Some(s.turn) == origin {
                marks.mark(Mark::Origin, &tr.t("text.mark.origin"));
                marks.push(' ');
            }
            if Some(s.turn) == intro {
                marks.push_str(&tr.t("text.mark.write"));
                marks.push(' ');
            }
            if missed.contains(&s.turn) {
                marks.mark(Mark::Missed, &tr.t("text.mark.missed"));
                marks.push(' ');
            }
            let scores = match (&s.scores, s.applicable) {
                (None, _) if s.skipped.is_some() => {
                    format!(" {}", crate::i18n::pad(&tr.t("text.not_asked"), 10))
                }
                (None, _) => " failed    ".to_string(),
                (Some(_), false) => " —  —  —  —".to_string(),
                (Some(x), true) => format!("{:>2} {:>2} {:>2} {:>2}", x.tr, x.di, x.vr, x.sa),
            };
            let best = s.scores.and_then(|x| {
                Dim::ALL
                    .iter()
                    .filter(|d| x.get(**d) > 0)
                    .max_by_key(|d| x.get(**d))
                    .copied()
            });
            let said = match best.and_then(|d| s.quotes.get(d).map(|q| (d, q))) {
                Some((d, q)) => format!("{}: \"{}\"", d.key().to_uppercase(), clip(q, width)),
                None => clip(&t.excerpt, width),
            };
            let mut row = Styled::from(format!(
                "{:>4}  {} {}  ",
                s.turn,
                crate::i18n::pad(&s.kind.shown(tr), 14),
                scores,
            ));
            row.append(marks);
            row.push_str(&said);
            row.trim_end();
            row
        })
        .collect()
}

/// `blame-origin` as text, in the order the method reads (docs/method.md): turns → provenance →
/// origin → missed opportunities → recommendation. Labels in the run's language.
/// `blame-origin` as text, in the order the method reads (docs/method.md): turns → provenance →
/// origin → missed opportunities → recommendation. Labels in the run's language.
/// Headings and markers are marked as they are written, for a terminal's colours.
pub(crate) fn report(tr: &Tr, doc: &crate::report::doc::ReportDoc) -> Styled {
    let w = label_width(tr);
    let ind = " ".repeat(w);
    let mut out = Styled::from(header(tr, doc, &ind));
    out.append(turns_section(tr, doc));
    if let Some(line) = crate::judge::failed::summary(&doc.failed_turns) {
        // Right under the turns: the origin below was found without them.
        heading(tr, &mut out, "label.failed", w, Mark::Heading);
        out.push_str(&format!("{line}\n\n"));
    }
    out.append(provenance_section(tr, doc, w, &ind));
    out.append(evidence_lines(tr, &doc.provenance.evidence, w));
    out.append(origin_section(tr, doc, w, &ind));
    out.append(missed_section(tr, doc, w));
    out.mark(Mark::Heading, &tr.t("label.recommendation"));
    out.push('\n');
    // Markdown in the document; its emphasis marks would show on a terminal.
    for line in super::mdlite::to_text(doc.shown_recommendation()).lines() {
        out.push_str(format!("  {line}").trim_end());
        out.push('\n');
    }
    // Warnings are not part of the text: the commands print them on stderr.
    out
}

/// The first lines: finding, session and judge, and where the session came from.
fn header(tr: &Tr, doc: &crate::report::doc::ReportDoc, ind: &str) -> String {
    let f = &doc.finding;
    let mut out = String::new();
    let mut head = vec![f.id.clone()];
    if let Some(c) = f.cwe_label() {
        head.push(c);
    }
    head.push(f.file.clone());
    if doc.unconfirmed {
        head.push(tr.t("text.unconfirmed"));
    }
    out.push_str(&format!("git sage blame-origin · {}\n", head.join(" · ")));
    match &doc.session {
        Some(s) => {
            out.push_str(&tr.tf(
                "text.session",
                &[
                    ("source", &s.source),
                    ("format", &s.format),
                    ("first", &s.scope.first),
                    ("last", &s.scope.last),
                    ("turns", &s.turns),
                    ("judge", &doc.judge.name),
                    ("protocol", &doc.judge.protocol),
                ],
            ));
            out.push('\n');
            // What a model judge's calls took (the offline judge makes none).
            if let Some(cost) = super::judge_cost(tr, &doc.judge) {
                out.push_str(&format!("  {cost}\n"));
            }
            out.push('\n');
        }
        None => {
            out.push_str(&tr.t("text.no_session"));
            out.push_str("\n\n");
        }
    }
    if let Some(s) = &doc.session
        && !s.considered.is_empty()
    {
        // Before the blank line that ends the header: where the session came from.
        out.pop();
        out.push_str(&session_choice_at(tr, s, ind));
        out.push('\n');
    }
    out
}

/// The table of turns, with the count of quotes the judge could not back.
fn turns_section(tr: &Tr, doc: &crate::report::doc::ReportDoc) -> Styled {
    let mut out = Styled::new();
    if !doc.turns.is_empty() {
        // The heading's first words are the heading; the key to the columns follows.
        let head = tr.t("text.turns_head");
        let (word, rest) = head.split_at(head.find("  ").unwrap_or(head.len()));
        out.mark(Mark::Heading, word);
        out.push_str(rest);
        out.push('\n');
        out.push_str(&tr.t("text.turns_cols"));
        out.push('\n');
        for row in turn_rows(tr, doc, 70) {
            out.append(row);
            out.push('\n');
        }
        let rejected: usize = doc
            .turns
            .iter()
            .map(|t| t.score.rejected_quotes.len())
            .sum();
        if rejected > 0 {
            out.push_str(&tr.tf("text.rejected", &[("n", &rejected)]));
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// What git history says of the anchored code: who wrote it, in which write, at which turn.
fn provenance_section(tr: &Tr, doc: &crate::report::doc::ReportDoc, w: usize, ind: &str) -> Styled {
    let mut out = Styled::new();
    let p = &doc.provenance;
    let prov = super::provenance_words(tr, p, str::to_string, str::to_string);
    heading(tr, &mut out, "label.provenance", w, Mark::Heading);
    out.push_str(&format!(
        "{prov}\n{ind}{}\n\n",
        tr.tf(
            "prov.reconstruction",
            &[("how", &p.reconstruction.as_str())]
        )
    ));
    out
}

/// The origin: its turn and type or why it is undetermined, its quote, how firm it is, and
/// what other judges or repeats made of it.
fn origin_section(tr: &Tr, doc: &crate::report::doc::ReportDoc, w: usize, ind: &str) -> Styled {
    use crate::origin::Status;
    let mut out = Styled::new();
    heading(tr, &mut out, "label.origin", w, Mark::Origin);
    let o = &doc.origin;
    let words = |k: crate::origin::OriginType| k.words_shown(tr);
    match o.status {
        Status::Localized => {
            out.push_str(&format!(
                "{}{}\n",
                tr.tf(
                    "origin.at",
                    &[
                        ("turn", &o.turn.unwrap_or(0)),
                        ("type", &o.kind.map(words).unwrap_or_else(|| "?".into())),
                    ],
                ),
                o.bound
                    .map(|b| tr.tf(
                        "origin.bound",
                        &[
                            ("bound", &b),
                            (
                                "why",
                                &super::bound_words(tr, o.bound_by.as_deref().unwrap_or(""))
                            )
                        ],
                    ))
                    .unwrap_or_default()
            ));
            if let Some(q) = &o.quote {
                out.push_str(&format!("{ind}\"{}\"\n", clip(q, 100)));
            }
        }
        Status::Undetermined => out.push_str(&format!(
            "{} ({}){}\n",
            tr.t("origin.undetermined"),
            o.reason
                .map(|r| serde_json::to_value(r)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default())
                .unwrap_or_default(),
            o.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )),
    }
    // How firm the verdict is, and what a model judge made of it.
    if let Some(m) = &o.margin {
        out.push_str(&format!("{ind}{}\n", m.shown(tr)));
    }
    if let Some(c) = &doc.confirmation {
        out.push_str(&format!("{ind}{}\n", super::confirmation_words(tr, c)));
    }
    for a in &doc.other_origins {
        out.push_str(&format!(
            "{ind}{}{}: {}\n",
            a.judge,
            a.repeat.map(|r| format!(" repeat {r}")).unwrap_or_default(),
            match (a.origin.turn, a.origin.kind) {
                (Some(turn), Some(k)) =>
                    tr.tf("origin.other", &[("turn", &turn), ("type", &words(k))]),
                _ => tr.t("origin.undetermined"),
            }
        ));
    }
    out.push('\n');
    out
}

/// The missed opportunities, those that touched the anchored code first.
fn missed_section(tr: &Tr, doc: &crate::report::doc::ReportDoc, w: usize) -> Styled {
    let mut out = Styled::new();
    heading(tr, &mut out, "label.missed", w, Mark::Missed);
    if doc.missed_opportunities.is_empty() {
        out.push_str(&format!("{}\n\n", tr.t("missed.none")));
    } else {
        // The turns that touched the anchored file (or code using it) first; a long list is
        // cut, with the count of the rest (the JSON report keeps them all).
        const SHOWN: usize = 6;
        let mut ordered: Vec<&crate::origin::Missed> = doc.missed_opportunities.iter().collect();
        ordered.sort_by_key(|m| (!m.touches_anchor, m.turn));
        let list: Vec<String> = ordered
            .iter()
            .take(SHOWN)
            .map(|m| {
                let touch = if m.touches_anchor {
                    tr.t("missed.touch")
                } else {
                    String::new()
                };
                tr.tf(
                    "missed.item",
                    &[
                        ("turn", &m.turn),
                        ("kind", &m.kind.shown(tr)),
                        ("vr", &m.vr),
                        ("sa", &m.sa),
                        ("touch", &touch),
                    ],
                )
            })
            .collect();
        let rest = ordered.len().saturating_sub(SHOWN);
        let more = match rest {
            0 => String::new(),
            n => tr.tf("missed.more", &[("n", &n)]),
        };
        out.push_str(&format!("{}{more}\n\n", list.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    /// A provenance document over `n` writes: write 2 brings the code in (`B` at `old.py`),
    /// write 4 renames the file to `new.py`; the others change other files.
    fn doc(n: usize) -> Value {
        let writes: Vec<Value> = (1..=n)
            .map(|i| {
                let (blob, path) = if i < 2 {
                    (A, "old.py")
                } else if i < 4 {
                    (B, "old.py")
                } else {
                    (B, "new.py")
                };
                json!({"write": i, "commit": format!("{i:040}"), "turn": null, "mapped_by": null,
                    "agent": true, "present_after": i >= 2, "changed": i == 2 || i == 4,
                    "merge": false, "path": path, "blob": blob})
            })
            .collect();
        json!({
            "schema": "sage.provenance/1",
            "finding": {"id": "f", "file": "new.py", "cwe": null, "class": null,
                "kind": "present", "fragments": ["x"]},
            "range": {"base": "c".repeat(40), "tip": format!("{n:040}"), "commits": n},
            "provenance": {"status": "introduced",
                "introducing_write": {"write": 2, "commit": format!("{:040}", 2), "turn": null,
                    "mapped_by": null, "agent": true},
                "reconstruction": "per-write",
                "baseline": {"commit": "c".repeat(40), "path": "old.py", "blob": A,
                    "present": false},
                "writes": writes, "blobs_read": 2, "notes": []}
        })
    }

    /// The document as written without `--all-writes`: the two writes that changed the file.
    fn pruned(full: &Value) -> Value {
        let mut v = full.clone();
        let all = v["provenance"]["writes"].as_array().unwrap().clone();
        let kept: Vec<Value> = all
            .iter()
            .filter(|w| w["changed"] == true)
            .cloned()
            .collect();
        v["provenance"]["writes_total"] = json!(all.len());
        v["provenance"]["writes_omitted"] = json!(all.len() - kept.len());
        v["provenance"]["writes"] = json!(kept);
        v
    }

    fn render(v: &Value) -> String {
        provenance(&serde_json::from_value(v.clone()).unwrap())
    }

    /// The table's row of one write.
    fn row(text: &str, write: usize) -> &str {
        let lead = format!("{write:>5}  ");
        text.lines()
            .find(|l| l.strip_prefix("  ").is_some_and(|l| l.starts_with(&lead)))
            .unwrap_or_else(|| panic!("no row for write {write}:\n{text}"))
    }

    #[test]
    fn a_pruned_list_is_counted_from_the_totals() {
        for n in [5, 60] {
            let full = doc(n);
            let (all, some) = (render(&full), render(&pruned(&full)));
            let counts = format!("(2 of {n} writes changed new.py)");
            assert!(all.contains(&counts), "{all}");
            assert!(some.contains(&counts), "{some}");
            // The writes listed say the same: the rename is a rename, not a creation.
            for w in [2, 4] {
                assert_eq!(row(&all, w), row(&some, w), "{n} writes");
            }
            assert!(row(&some, 4).contains("renamed"), "{some}");
            // What is not listed is counted, up to the tip.
            let counted: usize = some
                .lines()
                .filter_map(|l| {
                    let l = l.trim_start().strip_prefix('…')?.trim_start();
                    l.strip_prefix('(')?.split_once(' ')
                })
                .map(|(k, _)| k.parse::<usize>().unwrap())
                .sum();
            assert_eq!(counted, n - 2, "{some}");
            assert!(some.contains("not touching the file"), "{some}");
        }
    }

    #[test]
    fn a_full_list_of_a_short_range_has_no_gap_rows() {
        let all = render(&doc(5));
        assert!(!all.contains('…'), "{all}");
        for w in 1..=5 {
            row(&all, w);
        }
    }
}
