//! Plain Markdown logs with one heading per turn — "Turn N", "Ход N", "轮次 N" (hand-written
//! or pasted logs) — optionally naming the agent and the kind: `## Turn 3 (review) — reviewer`.
//! Text before the first turn heading is context (the task); ```diff blocks are file changes.

use std::sync::OnceLock;

use regex::Regex;

use super::turn::{Edit, FileChange, SourceRef, TurnKind};
use super::{Builder, Format, Transcript};
use crate::error::Result;

fn heading_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(?:#{1,6}\s*|\*\*)?(?:turn|ход|шаг|轮次|第)\s*(\d+)\s*(?:轮)?(?:\*\*)?\s*(.*)$",
        )
        .expect("valid regex")
    })
}

fn user_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^\s*(?:#{1,6}\s*|\*\*)?(user|пользователь|用户|task|задача|任务)\s*(?:\*\*)?\s*[:：]?\s*(?:\*\*)?\s*(.*)$")
            .expect("valid regex")
    })
}

/// Whether a text looks like this format (a turn heading numbered 1 near the top).
pub(super) fn looks_like(text: &str) -> bool {
    text.lines()
        .take(400)
        .filter_map(|l| heading_re().captures(l))
        .any(|c| &c[1] == "1")
}

fn kind_of(words: &str) -> Option<TurnKind> {
    let w = words.to_lowercase();
    let has = |keys: &[&str]| keys.iter().any(|k| w.contains(k));
    if has(&["plan", "план", "计划", "规划"]) {
        Some(TurnKind::Planning)
    } else if has(&["review", "ревью", "обзор", "审查", "评审"]) {
        Some(TurnKind::Review)
    } else if has(&["verif", "test", "провер", "тест", "验证", "测试"]) {
        Some(TurnKind::Verification)
    } else if has(&[
        "implement",
        "patch",
        "fix",
        "реализ",
        "исправ",
        "патч",
        "实现",
        "修复",
    ]) {
        Some(TurnKind::Implementation)
    } else if has(&["admin", "setup", "настрой", "管理", "配置"]) {
        Some(TurnKind::Administrative)
    } else {
        None
    }
}

/// The agent named after a dash or colon in a heading: `Turn 2 — planner`, `Ход 2: ревьюер`.
fn agent_of(rest: &str) -> Option<String> {
    let rest = rest.trim();
    let after = rest
        .rsplit_once(['—', '–', ':', '：'])
        .map(|(_, a)| a)
        .or_else(|| rest.strip_prefix("- "))?;
    let a = after.trim().trim_matches(['*', '(', ')', '[', ']']).trim();
    (!a.is_empty() && a.chars().count() <= 40).then(|| a.to_string())
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let text = String::from_utf8_lossy(bytes);
    let mut b = Builder::new("agent");
    b.agent_known = false;
    let mut preamble = String::new();
    let mut body = String::new();
    let mut in_fence = false;
    let mut started = false;
    let mut turn_line = 0u64;
    for (i, line) in text.lines().enumerate() {
        let n = i as u64 + 1;
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let heading = (!in_fence).then(|| heading_re().captures(line)).flatten();
        if let Some(c) = heading {
            if started {
                finish_turn(&mut b, &body, turn_line);
            } else if !preamble.trim().is_empty() {
                b.message(
                    "user",
                    preamble.trim().to_string(),
                    None,
                    SourceRef::line(1),
                );
            }
            started = true;
            body.clear();
            turn_line = n;
            let rest = c.get(2).map_or("", |m| m.as_str());
            let t = b.new_turn(None, SourceRef::line(n));
            if let Some(agent) = agent_of(rest) {
                t.agent = agent;
            }
            if let Some(k) = kind_of(rest) {
                b.set_kind(k);
            }
            continue;
        }
        if !started {
            if let Some(c) = (!in_fence).then(|| user_re().captures(line)).flatten() {
                preamble.push_str(c.get(2).map_or("", |m| m.as_str()));
            } else {
                preamble.push_str(line);
            }
            preamble.push('\n');
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    if started {
        finish_turn(&mut b, &body, turn_line);
    }
    b.finish(Format::Markdown, name)
}

fn finish_turn(b: &mut Builder, body: &str, line: u64) {
    let changes = diff_blocks(body);
    let t = b.turn(None, SourceRef::line(line));
    Builder::push_text(t, body.trim());
    for c in changes {
        t.file_changes.push(c);
    }
    b.close();
}

/// File changes from ```diff fences holding unified diffs.
pub(super) fn diff_blocks(body: &str) -> Vec<FileChange> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in body.lines() {
        let t = line.trim_start();
        match &mut cur {
            None if t.starts_with("```diff") || t.starts_with("```patch") => {
                cur = Some(String::new())
            }
            Some(buf) if t.starts_with("```") => {
                out.extend(unified_diff_changes(buf));
                cur = None;
            }
            Some(buf) => {
                buf.push_str(line);
                buf.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Splits a unified diff by file; each file's part becomes a `Patch` change.
pub(super) fn unified_diff_changes(diff: &str) -> Vec<FileChange> {
    let mut out: Vec<FileChange> = Vec::new();
    let mut path: Option<String> = None;
    let mut part = String::new();
    let flush = |path: &mut Option<String>, part: &mut String, out: &mut Vec<FileChange>| {
        if let Some(p) = path.take()
            && part.contains("@@")
        {
            out.push(FileChange::new(
                p,
                Edit::Patch {
                    patch: std::mem::take(part),
                },
            ));
        }
        part.clear();
    };
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("+++ ") {
            let p = rest.trim().split('\t').next().unwrap_or("").trim();
            let p = p.strip_prefix("b/").unwrap_or(p);
            if p != "/dev/null" {
                if path.is_some() && part.contains("@@") {
                    // a new file starts without a `diff --git` line
                    let keep = std::mem::take(&mut part);
                    let mut prev = keep;
                    // the `---` line just added belongs to the new file
                    let minus = prev
                        .rfind("--- ")
                        .map(|i| prev.split_off(i))
                        .unwrap_or_default();
                    part = prev;
                    flush(&mut path, &mut part, &mut out);
                    part = minus;
                }
                path = Some(p.to_string());
            }
        } else if line.starts_with("diff --git ") {
            flush(&mut path, &mut part, &mut out);
        }
        part.push_str(line);
        part.push('\n');
    }
    flush(&mut path, &mut part, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "Задача: исправить SSRF в загрузке фото по ссылке\n\n## Ход 1 (план) — planner\nПроверим, что схема https.\n\n## Ход 2 — coder\nПатч:\n```diff\n--- a/media/fetcher.py\n+++ b/media/fetcher.py\n@@ -1,2 +1,3 @@\n def f(url):\n+    if not url.startswith(\"https://\"): raise ValueError\n     return get(url)\n```\n\n### Turn 3 (review)\nTests are green.\n\n轮次 4\n审查通过\n";

    #[test]
    fn turns_agents_kinds_and_diffs() {
        let t = parse(LOG.as_bytes(), "log.md").unwrap();
        assert_eq!(t.turns.len(), 4);
        assert_eq!(
            t.context[0].text,
            "исправить SSRF в загрузке фото по ссылке"
        );
        assert_eq!(t.turns[0].agent, "planner");
        assert_eq!(t.turns[0].kind, TurnKind::Planning);
        assert_eq!(t.turns[0].text, "Проверим, что схема https.");
        assert_eq!(t.turns[1].agent, "coder");
        assert_eq!(t.turns[1].kind, TurnKind::Implementation);
        assert_eq!(t.turns[1].file_changes[0].path, "media/fetcher.py");
        assert_eq!(t.turns[2].kind, TurnKind::Review);
        assert_eq!(t.turns[3].text, "审查通过");
        assert_eq!(t.turns[3].source.line, Some(20));
        assert!(looks_like(LOG));
        assert!(!looks_like("# Title\nno turns here\n"));
    }

    #[test]
    fn multi_file_diff() {
        let d = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-c\n+d\n";
        let c = unified_diff_changes(d);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].path, "x.py");
        assert_eq!(c[1].path, "y.py");
        let Edit::Patch { patch } = &c[1].edit else {
            panic!()
        };
        assert!(patch.starts_with("--- a/y.py"), "{patch}");
    }
}
