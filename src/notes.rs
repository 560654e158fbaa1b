//! Origin notes under refs/notes/sage: one section per finding on the introducing-write commit
//! and on the branch tip; the first line of each section is for people, the next for tools.
//! Re-analysing a finding replaces its section and keeps the others.

use serde_json::{Value, json};

use crate::error::Result;
use crate::git::{NOTES_REF, Oid, Repo};
use crate::origin::Status;
use crate::report::doc::ReportDoc;

const DATA: &str = "sage-data: ";
const SUMMARY: &str = "sage: ";

/// One finding's part of a note.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Section {
    pub id: String,
    pub summary: String,
    pub data: Value,
}

impl Section {
    fn render(&self) -> String {
        format!(
            "{SUMMARY}{}\n{DATA}{}\n",
            self.summary,
            serde_json::to_string(&self.data).unwrap_or_default()
        )
    }
}

/// The sections of a note, and any lines that are not ours (kept as they are).
pub(crate) fn parse(text: &str) -> (Vec<Section>, Vec<String>) {
    let mut sections = Vec::new();
    let mut other = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let (Some(summary), Some(next)) = (
            l.strip_prefix(SUMMARY),
            lines.get(i + 1).and_then(|n| n.strip_prefix(DATA)),
        ) && let Ok(data) = serde_json::from_str::<Value>(next)
            && let Some(id) = data.get("finding").and_then(Value::as_str)
        {
            sections.push(Section {
                id: id.to_string(),
                summary: summary.to_string(),
                data: data.clone(),
            });
            i += 2;
            continue;
        }
        if !l.trim().is_empty() {
            other.push(l.to_string());
        }
        i += 1;
    }
    (sections, other)
}

fn render(mut sections: Vec<Section>, other: &[String]) -> String {
    sections.sort_by(|a, b| a.id.cmp(&b.id));
    let mut parts: Vec<String> = sections.iter().map(Section::render).collect();
    if !other.is_empty() {
        parts.push(other.join("\n") + "\n");
    }
    parts.join("\n")
}

/// `old` with `section` put in (replacing the same finding's section).
pub(crate) fn upsert(old: Option<&str>, section: &Section) -> String {
    let (mut sections, other) = parse(old.unwrap_or(""));
    sections.retain(|s| s.id != section.id);
    sections.push(section.clone());
    render(sections, &other)
}

/// Two notes merged: every section of both, `new` winning for the same finding.
pub(crate) fn merge_text(old: &str, new: &str) -> String {
    let (mut sections, mut other) = parse(old);
    let (fresh, more) = parse(new);
    for s in fresh {
        sections.retain(|x| x.id != s.id);
        sections.push(s);
    }
    for l in more {
        if !other.contains(&l) {
            other.push(l);
        }
    }
    render(sections, &other)
}

/// `git notes copy` for refs/notes/sage (post-rewrite without notes.rewriteRef): the note on
/// `from` merged into the one on `to`, `from`'s sections winning.
pub(crate) fn copy_note(repo: &Repo, from: Oid, to: Oid) -> Result<()> {
    let Some(text) = repo.read_note(from)? else {
        return Ok(());
    };
    repo.update_note(to, &|old| match old {
        None => text.clone(),
        Some(o) => merge_text(o, &text),
    })
}

fn origin_words(doc: &ReportDoc) -> String {
    let o = &doc.origin;
    match (o.status, o.turn, o.kind) {
        (Status::Localized, Some(t), Some(k)) => format!("origin turn {t} ({})", k.words()),
        _ => format!(
            "origin undetermined ({})",
            o.reason
                .and_then(|r| serde_json::to_value(r).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
    }
}

/// The notes a report leaves: (commit, section) for the introducing write and the tip.
pub(crate) fn sections(doc: &ReportDoc) -> Vec<(String, Section)> {
    let f = &doc.finding;
    let what = format!(
        "{}{}",
        f.id,
        f.cwe.map(|c| format!(" (CWE-{c})")).unwrap_or_default()
    );
    let p = &doc.provenance;
    let intro = p.introducing_write.as_ref();
    let data = |role: &str| {
        json!({
            "schema": "sage.note/1",
            "tool": crate::tool::Tool::json(),
            "finding": f.id,
            "cwe": f.cwe,
            "file": f.file,
            "role": role,
            "unconfirmed": doc.unconfirmed,
            "provenance": {"status": p.status, "introducing_commit": intro.map(|w| w.commit.clone()), "introducing_turn": intro.and_then(|w| w.turn), "reconstruction": p.reconstruction},
            "origin": doc.origin,
            "missed_opportunities": doc.missed_opportunities.iter().map(|m| m.turn).collect::<Vec<_>>(),
            "judge": doc.judge.name,
            "tip": doc.range.tip,
        })
    };
    let intro_words = |w: &crate::report::json::IntroducingWrite| {
        format!(
            "write {}{}",
            w.write,
            w.turn.map(|t| format!(", turn {t}")).unwrap_or_default()
        )
    };
    let mut out = Vec::new();
    match intro {
        Some(w) => {
            out.push((
                w.commit.clone(),
                Section {
                    id: f.id.clone(),
                    summary: format!(
                        "{} for {what}; introduced here ({})",
                        origin_words(doc),
                        intro_words(w)
                    ),
                    data: data("introducing-write"),
                },
            ));
            if w.commit != doc.range.tip {
                out.push((
                    doc.range.tip.clone(),
                    Section {
                        id: f.id.clone(),
                        summary: format!(
                            "{} for {what}; introduced at {} ({})",
                            origin_words(doc),
                            &w.commit[..w.commit.len().min(7)],
                            intro_words(w)
                        ),
                        data: data("tip"),
                    },
                ));
            }
        }
        None => out.push((
            doc.range.tip.clone(),
            Section {
                id: f.id.clone(),
                summary: format!(
                    "{} for {what}; {}",
                    origin_words(doc),
                    p.status.as_str().replace('_', " ")
                ),
                data: data("tip"),
            },
        )),
    }
    out
}

/// Writes a report's notes (introducing write and tip).
pub(crate) fn write(repo: &Repo, doc: &ReportDoc) -> Result<usize> {
    let secs = sections(doc);
    let mut todo = Vec::new();
    for (commit, section) in &secs {
        let id = repo.resolve_commit(commit)?;
        repo.update_note(id, &|old| upsert(old, section))?;
        todo.push((id, section));
    }
    // Our writes compare-and-swap, but `git notes` moves the ref without checking what it
    // replaces: a `git notes append` that read the ref before our write and lands after it
    // drops our section. When nobody wrote after us, one look settles it; while others keep
    // writing, watch until the ref has been quiet for a while and write back what went missing.
    let start = std::time::Instant::now();
    let mut ours = repo.notes_tip();
    let mut seen = ours;
    let mut quiet = std::time::Instant::now();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(40));
        let tip = repo.notes_tip();
        if tip != seen {
            seen = tip;
            quiet = std::time::Instant::now();
        }
        let mut missing = Vec::new();
        for (id, section) in &todo {
            let note = repo.read_note(*id)?;
            if note.as_deref() != Some(upsert(note.as_deref(), section).as_str()) {
                missing.push((*id, *section));
            }
        }
        if !missing.is_empty() {
            for (id, section) in &missing {
                repo.update_note(*id, &|old| upsert(old, section))?;
            }
            ours = repo.notes_tip();
            seen = ours;
            quiet = std::time::Instant::now();
        } else if (tip == ours && start.elapsed() >= std::time::Duration::from_millis(100))
            || quiet.elapsed() >= std::time::Duration::from_millis(250)
        {
            break;
        }
        if start.elapsed() >= std::time::Duration::from_secs(5) {
            crate::say!(
                "git-sage: warning: {NOTES_REF} kept changing under other writers; check the notes with git sage notes show"
            );
            break;
        }
    }
    Ok(secs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: &str, summary: &str) -> Section {
        Section {
            id: id.into(),
            summary: summary.into(),
            data: json!({"schema": "sage.note/1", "finding": id}),
        }
    }

    #[test]
    fn replace_keep_and_merge() {
        let one = upsert(None, &s("b", "origin turn 2 for b"));
        assert!(one.starts_with("sage: origin turn 2 for b\nsage-data: {"));
        let two = upsert(Some(&one), &s("a", "origin turn 1 for a"));
        assert_eq!(parse(&two).0.len(), 2);
        let again = upsert(Some(&two), &s("b", "origin turn 5 for b"));
        let (secs, _) = parse(&again);
        assert_eq!(secs.len(), 2);
        assert_eq!(
            secs.iter().find(|x| x.id == "b").unwrap().summary,
            "origin turn 5 for b"
        );
        // lines that are not ours survive
        let foreign = format!("{again}\nreviewed by Dana\n");
        let kept = upsert(Some(&foreign), &s("c", "x"));
        assert!(kept.contains("reviewed by Dana"));
        assert_eq!(parse(&merge_text(&one, &two)).0.len(), 2);
    }
}
