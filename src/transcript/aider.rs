//! Aider's `.aider.chat.history.md`: lines classified by prefix (`#### ` user, `> ` tool
//! output, `# aider chat started at` a new chat, anything else the assistant). Edits are the
//! SEARCH/REPLACE blocks of a reply whose files Aider reports as applied; `> Commit <sha>`
//! lines name the commit each reply made.

use std::sync::OnceLock;

use regex::Regex;

use super::model::{Edit, FileChange, SourceRef};
use super::{Builder, Format, Transcript};
use crate::error::Result;

fn commit_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^Commit ([0-9a-f]{7,40}) (.+?)\s*$").expect("valid regex"))
}

fn model_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^Main model: (\S+)").expect("valid regex"))
}

struct Reply {
    text: String,
    line: u64,
    applied: Vec<String>,
    commits: Vec<(String, String)>,
}

pub fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let text = String::from_utf8_lossy(bytes);
    let mut b = Builder::new("aider");
    let mut user: Vec<String> = Vec::new();
    let mut user_line = 0u64;
    let mut reply: Option<Reply> = None;
    let mut last_was_tool = false;
    let mut dirty_commit = false;
    let mut last_user_text = String::new();
    let mut chats = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i as u64 + 1;
        let line = raw.trim_end_matches([' ', '\r']);
        if line.starts_with("# aider chat started at ") {
            flush_user(&mut b, &mut user, user_line, &mut last_user_text);
            flush_reply(&mut b, reply.take());
            chats += 1;
            b.count("chat start");
            last_was_tool = false;
            continue;
        }
        if let Some(u) = line.strip_prefix("####") {
            flush_reply(&mut b, reply.take());
            if user.is_empty() {
                user_line = n;
            }
            user.push(u.strip_prefix(' ').unwrap_or(u).to_string());
            last_was_tool = false;
            continue;
        }
        if line == ">" || line.starts_with("> ") {
            flush_user(&mut b, &mut user, user_line, &mut last_user_text);
            let t = line.strip_prefix('>').unwrap_or("").trim();
            if t.starts_with("Committing ") && t.ends_with("before applying edits.") {
                dirty_commit = true;
            } else if let Some(c) = commit_re().captures(t) {
                if dirty_commit {
                    b.count("commit of the user's own changes");
                    dirty_commit = false;
                } else if let Some(r) = reply.as_mut() {
                    r.commits.push((c[1].to_string(), c[2].to_string()));
                }
            } else if let Some(p) = t.strip_prefix("Applied edit to ") {
                if let Some(r) = reply.as_mut() {
                    r.applied.push(p.trim().to_string());
                }
            } else if let Some(m) = model_re().captures(t) {
                b.model = Some(m[1].to_string());
            }
            b.count("tool line");
            last_was_tool = true;
            continue;
        }
        if line.is_empty() {
            last_was_tool = false;
            if let Some(r) = reply.as_mut() {
                r.text.push('\n');
            }
            continue;
        }
        if last_was_tool {
            // A multi-line tool message continues without the prefix.
            b.count("tool line");
            continue;
        }
        flush_user(&mut b, &mut user, user_line, &mut last_user_text);
        let r = reply.get_or_insert_with(|| Reply {
            text: String::new(),
            line: n,
            applied: Vec::new(),
            commits: Vec::new(),
        });
        r.text.push_str(raw.trim_end_matches('\r'));
        r.text.push('\n');
    }
    flush_user(&mut b, &mut user, user_line, &mut last_user_text);
    flush_reply(&mut b, reply.take());
    if chats > 1 {
        b.warn(format!(
            "{chats} chats in one history file; the turns of all of them are listed"
        ));
    }
    b.finish(Format::Aider, name)
}

fn flush_user(b: &mut Builder, user: &mut Vec<String>, line: u64, last: &mut String) {
    if user.is_empty() {
        return;
    }
    // Slash commands (`/code`, `/model …`) are not the task; multiline mode logs the
    // message twice.
    let lines: Vec<String> = std::mem::take(user)
        .into_iter()
        .filter(|l| !l.trim_start().starts_with('/'))
        .collect();
    let text = lines.join("\n").trim().to_string();
    if text.is_empty() || text == *last {
        b.count("repeated or command-only user input");
        return;
    }
    *last = text.clone();
    b.message("user", text, None, SourceRef::line(line));
}

fn flush_reply(b: &mut Builder, reply: Option<Reply>) {
    let Some(r) = reply else { return };
    if r.text.trim().is_empty() {
        return;
    }
    let edits = search_replace_blocks(&r.text);
    let t = b.new_turn(None, SourceRef::line(r.line));
    Builder::push_text(t, r.text.trim());
    t.reasoning_available = false;
    for (path, search, replace) in edits {
        if !r.applied.iter().any(|a| a == &path) {
            continue;
        }
        t.file_changes.push(FileChange {
            path,
            edit: Edit::Replace {
                old: search,
                new: replace,
                all: false,
            },
            before: None,
            after: None,
            tool_call: None,
        });
    }
    for (sha, msg) in r.commits {
        b.commit(&sha, &msg);
    }
    b.close();
}

fn clean_filename(l: &str) -> String {
    l.trim()
        .trim_end_matches(':')
        .trim_start_matches('#')
        .trim()
        .trim_matches(['`', '*'])
        .replace("\\_", "_")
}

/// (file, search, replace) of every SEARCH/REPLACE block, in order.
pub fn search_replace_blocks(text: &str) -> Vec<(String, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut last_file = String::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "<<<<<<< SEARCH" {
            i += 1;
            continue;
        }
        // The file name: up to three lines back, skipping fences.
        let file = (i.saturating_sub(3)..i)
            .rev()
            .map(|k| lines[k])
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with("```"))
            .map(clean_filename)
            .filter(|f| !f.is_empty() && !f.contains(' '))
            .unwrap_or_else(|| last_file.clone());
        let mut search = String::new();
        let mut replace = String::new();
        let mut in_replace = false;
        let mut done = false;
        i += 1;
        while i < lines.len() {
            let t = lines[i].trim();
            if t == "=======" && !in_replace {
                in_replace = true;
            } else if t == ">>>>>>> REPLACE" {
                done = true;
                break;
            } else if in_replace {
                replace.push_str(lines[i]);
                replace.push('\n');
            } else {
                search.push_str(lines[i]);
                search.push('\n');
            }
            i += 1;
        }
        if done && !file.is_empty() {
            last_file = file.clone();
            out.push((file, search, replace));
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history() {
        let h = "\n# aider chat started at 2026-01-01 10:00:00\n\n> Main model: gpt-4o with diff edit format  \n\n#### fix the ssrf  \n\nI'll check the scheme.\n\nmedia/fetcher.py\n```python\n<<<<<<< SEARCH\ndef f(url):\n=======\ndef f(url):\n    check(url)\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent, 1k received.  \n> Applied edit to media/fetcher.py  \n> Commit abc1234 fix: check the scheme  \n\n#### /code  \n#### thanks  \n\n#### thanks  \n\nYou're welcome.\n";
        let t = parse(h.as_bytes(), "h.md").unwrap();
        assert_eq!(t.model.as_deref(), Some("gpt-4o"));
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.context.len(), 2, "{:?}", t.context);
        assert_eq!(t.turns[0].file_changes.len(), 1);
        assert_eq!(
            t.turns[0].file_changes[0].edit,
            Edit::Replace {
                old: "def f(url):\n".into(),
                new: "def f(url):\n    check(url)\n".into(),
                all: false
            }
        );
        assert_eq!(t.commits[0].sha, "abc1234");
        assert_eq!(t.commits[0].turn, 1);
    }
}
