//! Aider's `.aider.chat.history.md`, and the conversation old Aider versions wrote into the
//! commit body (`# Aider chat conversation:` with `USER:` / `ASSISTANT:` messages).
//!
//! History lines by prefix: `# aider chat started at` a new chat, `#### ` the user, `> ` Aider's
//! own output, anything else the model. Every model response is a turn: a response ends at
//! Aider's output, so a reflection after "The LLM did not conform to the edit format" is a
//! turn of its own. Aider writes a multi-line message of its own with `> ` on the first line
//! only and Markdown's two trailing spaces on the last (a failed SEARCH block echoed back, a
//! test run's output); such a message is Aider's, not the model's. `> Applied edit to PATH`
//! confirms which files a response wrote, in any edit format (transcript::edits);
//! `> Commit <sha>` lines name the commit it made. In architect mode the editor's "user"
//! message is the architect's answer handed over; it is not the user's.

use std::sync::OnceLock;

use regex::Regex;

use super::edits;
use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult};
use super::{Builder, Format, Transcript};
use crate::error::Result;

fn commit_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^Commit ([0-9a-f]{7,40}) (.+?)\s*$").expect("valid regex"))
}

fn model_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^(?:Main model|Model|Models): (\S+)(?: (?:with|using) (\S+) edit format)?")
            .expect("valid regex")
    })
}

/// The model's response being read, and what Aider said about it.
#[derive(Default)]
struct Reply {
    text: String,
    line: u64,
    /// Aider's output has begun: more model text is a new response.
    closed: bool,
    applied: Vec<String>,
    commits: Vec<(String, String)>,
    /// `> Running CMD` (auto-lint, auto-test) and what it printed.
    runs: Vec<(String, String)>,
    failed_format: bool,
    /// The closer of the code fence the response is inside, if any: a `> ` line there is
    /// file content (a Markdown quote in a README), not Aider.
    fence: Option<String>,
}

impl Reply {
    fn push_line(&mut self, raw: &str) {
        self.fence = match self.fence.take() {
            Some(c) if edits::closes_fence(raw, &c) => None,
            Some(c) => Some(c),
            None => edits::opens_fence(raw),
        };
        self.text.push_str(raw);
        self.text.push('\n');
    }
}

/// Markers of the chat being read.
struct State {
    b: Builder,
    user: Vec<String>,
    user_line: u64,
    reply: Option<Reply>,
    last_reply_text: String,
    last_user_text: String,
    /// Aider's multi-line message continues (until a line with two trailing spaces).
    in_tool_message: bool,
    /// The previous line was Aider's (an unprefixed line right after continues it).
    last_was_tool: bool,
    dirty_commit: bool,
    /// A user command (`/run`, `/test`) owns the output that follows, not the model.
    user_command: bool,
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains("# aider chat started at")
        && let Some(at) = text.find("# Aider chat conversation:")
    {
        let line = text[..at].lines().count() as u64;
        return parse_commit_body(&text[at..], line, name);
    }
    // Aider ends each of its own lines with Markdown's two trailing spaces; a file whose
    // trailing spaces were trimmed by an editor cannot tell multi-line messages apart.
    let (spaced, tool_lines) = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| l.starts_with("> "))
        .fold((0usize, 0usize), |(s, n), l| {
            (s + l.ends_with("  ") as usize, n + 1)
        });
    let trailing_spaces = tool_lines > 0 && spaced * 2 >= tool_lines;
    let mut st = State {
        b: Builder::new("aider"),
        user: Vec::new(),
        user_line: 0,
        reply: None,
        last_reply_text: String::new(),
        last_user_text: String::new(),
        in_tool_message: false,
        last_was_tool: false,
        dirty_commit: false,
        user_command: false,
    };
    let mut chats = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i as u64 + 1;
        let raw = raw.trim_end_matches('\r');
        let line = raw.trim_end_matches(' ');
        let new_section = line.starts_with("# aider chat started at ")
            || line.starts_with("####")
            || line == ">"
            || line.starts_with("> ");
        if st.in_tool_message && !new_section {
            tool_output(&mut st, line);
            st.in_tool_message = !raw.ends_with("  ");
            continue;
        }
        st.in_tool_message = false;
        if line.starts_with("# aider chat started at ") {
            flush_user(&mut st);
            flush_reply(&mut st);
            chats += 1;
            st.b.count("chat start");
            st.last_was_tool = false;
            st.user_command = false;
            continue;
        }
        if let Some(u) = line.strip_prefix("####") {
            flush_reply(&mut st);
            if st.user.is_empty() {
                st.user_line = n;
            }
            let u = u.strip_prefix(' ').unwrap_or(u);
            st.user_command =
                u.trim_start().starts_with("/run") || u.trim_start().starts_with("/test");
            st.user.push(u.to_string());
            st.last_was_tool = false;
            continue;
        }
        // Inside a code fence of the response, a `> ` line is content unless it carries
        // Aider's own marks (its trailing spaces, or a line only Aider writes): a response
        // whose fence never closed must not swallow what Aider said after it.
        let aiders = (trailing_spaces && raw.ends_with("  "))
            || ["> Tokens: ", "> Applied edit to ", "> Commit ", "> Cost: "]
                .iter()
                .any(|p| line.starts_with(p));
        if !aiders
            && st
                .reply
                .as_ref()
                .is_some_and(|r| !r.closed && r.fence.is_some())
        {
            st.reply.as_mut().expect("checked").push_line(raw);
            continue;
        }
        if line == ">" || line.starts_with("> ") {
            flush_user(&mut st);
            let t = line.strip_prefix('>').unwrap_or("").trim();
            aider_line(&mut st, t);
            st.b.count("tool line");
            st.last_was_tool = true;
            // A question Aider asked and the user answered ("Add … to the chat? n") is one line.
            let answered = ["? n", "? y", "? N", "? Y"].iter().any(|a| t.ends_with(a));
            st.in_tool_message =
                trailing_spaces && !t.is_empty() && !raw.ends_with("  ") && !answered;
            continue;
        }
        if line.is_empty() {
            st.last_was_tool = false;
            if let Some(r) = st.reply.as_mut()
                && !r.closed
            {
                r.text.push('\n');
            }
            continue;
        }
        if st.last_was_tool {
            // A multi-line message of Aider's continues without the prefix.
            tool_output(&mut st, line);
            continue;
        }
        flush_user(&mut st);
        if st.reply.as_ref().is_some_and(|r| r.closed) {
            flush_reply(&mut st);
        }
        let r = st.reply.get_or_insert_with(|| Reply {
            line: n,
            ..Reply::default()
        });
        r.push_line(raw);
    }
    flush_user(&mut st);
    flush_reply(&mut st);
    if chats > 1 {
        st.b.warn(format!(
            "{chats} chats in one history file; the turns of all of them are listed"
        ));
    }
    st.b.finish(Format::Aider, name)
}

/// One line of Aider's own output (without `> `).
fn aider_line(st: &mut State, t: &str) {
    if let Some(r) = st.reply.as_mut() {
        r.closed = true;
    }
    if t.starts_with("Committing ") && t.ends_with("before applying edits.") {
        st.dirty_commit = true;
    } else if let Some(c) = commit_re().captures(t) {
        if st.dirty_commit {
            st.b.count("commit of the user's own changes");
            st.dirty_commit = false;
        } else if let Some(r) = st.reply.as_mut() {
            r.commits.push((c[1].to_string(), c[2].to_string()));
        }
    } else if let Some(p) = t.strip_prefix("Applied edit to ") {
        if let Some(r) = st.reply.as_mut() {
            r.applied.push(edits::clean_path(p));
        }
    } else if t.starts_with("The LLM did not conform to the edit format")
        || t.starts_with("Malformed response")
        || t.contains("SEARCH/REPLACE block failed to match")
        || t.contains("SEARCH/REPLACE blocks failed to match")
    {
        if let Some(r) = st.reply.as_mut() {
            r.failed_format = true;
        }
    } else if let Some(cmd) = t.strip_prefix("Running ") {
        if !st.user_command
            && let Some(r) = st.reply.as_mut()
        {
            r.runs.push((cmd.trim().to_string(), String::new()));
        }
    } else if let Some(m) = model_re().captures(t) {
        if !t.starts_with("Editor model") {
            st.b.model = Some(m[1].to_string());
        }
    } else {
        tool_output(st, t);
    }
}

/// Output that belongs to the last command Aider ran for the model, if any.
fn tool_output(st: &mut State, line: &str) {
    if let Some(r) = st.reply.as_mut()
        && let Some((_, out)) = r.runs.last_mut()
        && out.len() < 64 << 10
    {
        out.push_str(line);
        out.push('\n');
    }
    st.b.count("tool line");
}

fn flush_user(st: &mut State) {
    if st.user.is_empty() {
        return;
    }
    // Slash commands (`/code`, `/model …`) are not the task; multiline mode logs the
    // message twice.
    let lines: Vec<String> = std::mem::take(&mut st.user)
        .into_iter()
        .filter(|l| !l.trim_start().starts_with('/'))
        .collect();
    let text = lines.join("\n").trim().to_string();
    if text.is_empty() || text == st.last_user_text {
        st.b.count("repeated or command-only user input");
        return;
    }
    // Architect mode hands the architect's answer to the editor as a "user" message.
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if !st.last_reply_text.is_empty() && squash(&text) == squash(&st.last_reply_text) {
        st.b.count("architect answer handed to the editor");
        st.b.close();
        return;
    }
    st.last_user_text = text.clone();
    st.b.message("user", text, None, SourceRef::line(st.user_line));
}

fn flush_reply(st: &mut State) {
    let Some(r) = st.reply.take() else { return };
    if r.text.trim().is_empty() {
        return;
    }
    st.last_reply_text = r.text.trim().to_string();
    let (said, thought) = split_thinking(&r.text);
    let t = st.b.new_turn(None, SourceRef::line(r.line));
    Builder::push_text(t, said.trim());
    if !thought.trim().is_empty() {
        Builder::push_reasoning(t, Some(thought.trim()));
    }
    // Each file Aider says it wrote, with the edits the response spelled out for it; a file
    // written in a way the text does not show (a failed block retried by Aider) is opaque.
    let mut applied: Vec<String> = Vec::new();
    for p in &r.applied {
        if !applied.iter().any(|a| edits::same_path(a, p)) {
            applied.push(p.clone());
        }
    }
    for path in applied {
        let found = edits::edits_for(&r.text, &path);
        if found.is_empty() {
            t.file_changes.push(change(&path, Edit::Opaque));
        }
        for e in found {
            t.file_changes.push(change(&path, e));
        }
    }
    for (cmd, out) in r.runs {
        t.tool_calls.push(ToolCall {
            id: None,
            name: "shell".into(),
            arguments: serde_json::json!({ "command": cmd }),
            result: Some(ToolResult {
                text: out,
                is_error: false,
            }),
        });
    }
    if r.failed_format && t.file_changes.is_empty() {
        st.b.count("response in the wrong edit format");
    }
    for (sha, msg) in r.commits {
        st.b.commit(&sha, &msg);
    }
    st.b.close();
}

/// A reasoning model's thinking that Aider writes into the reply (`<think>…</think>`,
/// `<thinking-content-…>…</thinking-content-…>`), apart from what it said.
fn split_thinking(text: &str) -> (String, String) {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?s)<(think|thinking-content-[0-9a-f]*)>(.*?)</(?:think|thinking-content-[0-9a-f]*)>",
        )
        .expect("valid regex")
    });
    let mut thought = String::new();
    let said = re.replace_all(text, |c: &regex::Captures| {
        thought.push_str(c[2].trim());
        thought.push('\n');
        String::new()
    });
    (said.into_owned(), thought)
}

fn change(path: &str, edit: Edit) -> FileChange {
    FileChange::new(path.to_string(), edit)
}

/// The conversation in a commit body: `USER:` and `ASSISTANT:` open messages (the text may
/// start on the same line); every edit of an assistant message is in the commit.
fn parse_commit_body(text: &str, first_line: u64, name: &str) -> Result<Transcript> {
    let mut b = Builder::new("aider");
    let mut role: Option<&str> = None;
    let mut buf = String::new();
    let mut at = first_line;
    let flush = |b: &mut Builder, role: Option<&str>, buf: &mut String, at: u64| {
        let body = std::mem::take(buf);
        let body = body.trim();
        match role {
            Some("user") if !body.is_empty() => {
                b.message("user", body.to_string(), None, SourceRef::line(at))
            }
            Some("assistant") if !body.is_empty() => {
                let t = b.new_turn(None, SourceRef::line(at));
                Builder::push_text(t, body);
                for (path, e) in edits::all_edits(body) {
                    t.file_changes.push(change(&path, e));
                }
                b.close();
            }
            _ => {}
        }
    };
    for (i, line) in text.lines().enumerate().skip(1) {
        let n = first_line + i as u64;
        let line = line.trim_end_matches('\r');
        let (next, rest) = if let Some(r) = line.strip_prefix("USER:") {
            (Some("user"), r)
        } else if let Some(r) = line.strip_prefix("ASSISTANT:") {
            (Some("assistant"), r)
        } else {
            (None, line)
        };
        if next.is_some() {
            flush(&mut b, role, &mut buf, at);
            role = next;
            at = n;
            let rest = rest.strip_prefix(' ').unwrap_or(rest);
            if !rest.is_empty() {
                buf.push_str(rest);
                buf.push('\n');
            }
            continue;
        }
        if role.is_some() {
            buf.push_str(rest);
            buf.push('\n');
        }
    }
    flush(&mut b, role, &mut buf, at);
    b.finish(Format::Aider, name)
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

    #[test]
    fn a_response_after_an_answered_question_is_a_turn() {
        // Aider writes the user's answer to its last question without the trailing spaces;
        // the model's response after it must not be taken for the rest of Aider's message.
        let h = "# aider chat started at 2026-01-01 10:00:00\n\n#### it fails: POST https://x.example/a  \n\n> Add https://x.example/a to the chat? n  \n> Add https://y.example/b to the chat? n\n\nLet us look at the files first.\n\nPlease add app/auth.tsx.\n\n> Tokens: 1k sent.  \n\n#### here it is  \n\nThanks.\n";
        let t = parse(h.as_bytes(), "h.md").unwrap();
        assert_eq!(t.turns.len(), 2, "{:?}", t.turns);
        assert!(
            t.turns[0].text.starts_with("Let us look"),
            "{:?}",
            t.turns[0].text
        );
    }

    #[test]
    fn reflections_are_turns_and_echoed_blocks_are_aider_s() {
        let h = "# aider chat started at 2026-01-01 10:00:00\n\n#### mark the task done  \n\nTODO.md\n```\n<<<<<<< SEARCH\n- [ ] a\n=======\n- [x] a\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent.  \n> The LLM did not conform to the edit format.  \n> # 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in TODO.md\n<<<<<<< SEARCH\n- [ ] a\n=======\n- [x] a\n>>>>>>> REPLACE\n\nJust reply with fixed versions of the block above that failed to match.  \n\nSorry, here is the right block:\n\nTODO.md\n```\n<<<<<<< SEARCH\n- [ ]  a\n=======\n- [x] a\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent.  \n> Applied edit to TODO.md  \n> Running pytest -q  \n> 1 passed  \n";
        let t = parse(h.as_bytes(), "h.md").unwrap();
        assert_eq!(t.turns.len(), 2, "{:#?}", t.turns);
        assert!(t.turns[0].file_changes.is_empty());
        assert!(t.turns[1].text.starts_with("Sorry"));
        assert_eq!(t.turns[1].file_changes.len(), 1);
        assert_eq!(t.turns[1].tool_calls[0].arguments["command"], "pytest -q");
    }

    #[test]
    fn whole_udiff_and_architect_hand_off() {
        let h = "# aider chat started at 2026-01-01 10:00:00\n\n> Model: m with architect edit format  \n> Editor model: m with editor-whole edit format  \n\n#### guard the endpoint with an API key  \n\nAdd a check of x-api-key in app.py.  \n\n> Tokens: 1k sent.  \n\n#### Add a check of x-api-key in app.py.  \n\napp.py\n<source>\nif key != KEY: abort(401)\n</source>\n\n> Tokens: 1k sent.  \n> Applied edit to app.py  \n> Applied edit to notes  \n";
        let t = parse(h.as_bytes(), "h.md").unwrap();
        assert_eq!(t.context.len(), 1, "the editor's hand-off is not the user");
        assert_eq!(t.turns.len(), 2);
        let c = &t.turns[1].file_changes;
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].edit,
            Edit::Write {
                content: "if key != KEY: abort(401)\n".into()
            }
        );
        assert_eq!(
            c[1].edit,
            Edit::Opaque,
            "applied, but the text does not show how"
        );
    }

    #[test]
    fn commit_body() {
        let body = "aider: fix\n\n# Aider chat conversation:\n\nUSER: use the env key\n\nASSISTANT: Here is the diff:\n\n```diff\n--- app.py\n+++ app.py\n@@ -1 +1 @@\n-KEY = 'x'\n+KEY = os.environ['KEY']\n```\n\nUSER:\n# Fix any errors below\n\nNameError: os\n\nASSISTANT: app.py\n```\n<<<<<<< SEARCH\nKEY\n=======\nimport os\nKEY\n>>>>>>> REPLACE\n```\n";
        let t = parse(body.as_bytes(), "c.md").unwrap();
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.context.len(), 2);
        assert!(t.context[1].text.starts_with("# Fix any errors"));
        assert!(matches!(
            t.turns[0].file_changes[0].edit,
            Edit::Patch { .. }
        ));
        assert_eq!(t.turns[1].file_changes[0].path, "app.py");
    }
}
