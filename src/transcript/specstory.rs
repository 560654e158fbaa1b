//! SpecStory Markdown exports (Cursor, Claude Code and VS Code Copilot chats), every version:
//! `_**User (2025-09-05 15:45Z)**_` / `_**Agent (model m, mode Agent)**_` (or `_**Assistant**_`)
//! headers, parts separated by `---` lines outside code fences. A prose part starts a turn
//! (one model response); the tool parts after it belong to that turn: `Tool use: **name**`
//! lines, `<tool-use data-tool-name="…">` envelopes (v2.1, HTML-escaped inside), `<details>`
//! blocks whose `<summary>` says `Edit file: PATH`, rendered diffs (`+ `, `- `, `  ` before each
//! line, with or without `@@` headers), `bash` blocks of terminal commands and their output.
//! `<think>` blocks are reasoning. A file with no speaker headers (a hand-written summary kept
//! in the same folder) is rejected, not turned into turns.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::turn::{Edit, FileChange, SourceRef, ToolCall, ToolResult};
use super::{Builder, Format, Transcript};
use crate::error::{Error, Result};

fn header_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^_\*\*(User|Assistant|Agent)(?:\s*\(([^)]*)\))?\*\*_\s*$")
            .expect("valid regex")
    })
}

fn tool_name_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"Tool use: \*\*([^*]+)\*\*|data-tool-name="([^"]+)""#).expect("valid regex")
    })
}

fn edit_file_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"Edit file: ([^<\n]+?)\s*(?:</summary>|$)").expect("valid regex"))
}

fn named_path_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Copilot's `- filePath: `x``, Claude Code's `file_path`, "Read file: x" (a result's "The
    // file x has been updated" is `result_path_re`).
    RE.get_or_init(|| {
        Regex::new(r#"(?m)(?:relativeWorkspacePath|targetFile|target_file|filePath|file_path|path)["`]?\s*[:=]\s*["`]([^"`\n]+)["`]|(?:^|• )Read file: ([^<\n]+?)\s*(?:</summary>|$)"#)
            .expect("valid regex")
    })
}

/// The file a tool's result says it wrote.
fn result_path_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"The file (\S+) has been (?:updated|created)|File created successfully at: (\S+)",
        )
        .expect("valid regex")
    })
}

fn prose_path_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // A back-quoted file name, or a bare one with a directory, named in prose. A back-quoted
    // name without a directory needs an extension of a source, config or document file:
    // `response.token` or `user.role` is an expression, not a file.
    RE.get_or_init(|| {
        Regex::new(r"`((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]+|[\w.-]+\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|rb|java|kt|kts|scala|c|cc|cpp|h|hpp|cs|php|swift|m|sh|bash|zsh|ps1|sql|html|htm|css|scss|vue|svelte|json|yaml|yml|toml|ini|cfg|conf|env|xml|md|txt|properties|gradle|tf|lock|prisma|graphql|proto|dockerfile))`|(?:^|\s)((?:\.?[\w-]+/)+[\w.-]+\.[A-Za-z0-9]+)\b")
            .expect("valid regex")
    })
}

/// One piece of the export: a speaker header, or a part between `---` lines.
enum Piece {
    Header {
        line: u64,
        who: String,
        detail: Option<String>,
    },
    Part {
        line: u64,
        body: String,
    },
}

fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    // (fence, its indentation): a closer indented more than its opener is content — a
    // rendered diff's context line `  ```` inside a ```diff block does not close it.
    let mut fence: Option<(String, usize)> = None;
    let mut thinking = false;
    let mut cur = String::new();
    let mut cur_line = 1u64;
    let flush = |out: &mut Vec<Piece>, cur: &mut String, line: u64| {
        if !cur.trim().is_empty() {
            out.push(Piece::Part {
                line,
                body: std::mem::take(cur),
            });
        }
        cur.clear();
    };
    for (i, line) in text.lines().enumerate() {
        let n = i as u64 + 1;
        let line = line.trim_end_matches('\r');
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if indent <= 3 && (t.starts_with("```") || t.starts_with("~~~")) {
            let ticks: String = t.chars().take_while(|c| *c == '`' || *c == '~').collect();
            match &fence {
                None => fence = Some((ticks, indent)),
                Some((open, at))
                    if t.trim_end() == ticks
                        && indent <= *at
                        && ticks.len() >= open.len()
                        && ticks.starts_with(&open[..1]) =>
                {
                    fence = None
                }
                _ => {}
            }
        }
        // A thought block is one piece, whatever rules (`---`) it holds.
        if fence.is_none() {
            let opens = line.rfind("<think>");
            let closes = line.rfind("</think>");
            match (opens, closes) {
                (Some(o), c) if c.is_none_or(|c| c < o) => thinking = true,
                (_, Some(_)) => thinking = false,
                _ => {}
            }
        }
        if fence.is_none() && !(thinking && line.trim_end() == "---") {
            if let Some(c) = header_re().captures(line.trim_end()) {
                flush(&mut out, &mut cur, cur_line);
                out.push(Piece::Header {
                    line: n,
                    who: c[1].to_string(),
                    detail: c.get(2).map(|m| m.as_str().trim().to_string()),
                });
                cur_line = n + 1;
                continue;
            }
            if line.trim_end() == "---" {
                flush(&mut out, &mut cur, cur_line);
                cur_line = n + 1;
                continue;
            }
        }
        if cur.is_empty() {
            cur_line = n;
        }
        cur.push_str(line);
        cur.push('\n');
    }
    flush(&mut out, &mut cur, cur_line);
    out
}

/// `2025-09-05 15:45Z`, `2025-10-16 12:28:28Z`, `2025-10-01 07:22+0200` as RFC 3339.
fn timestamp(s: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^(\d{4}-\d{2}-\d{2})[ T_](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})$")
            .expect("valid regex")
    });
    let c = re.captures(s.trim())?;
    let zone = match &c[5] {
        "Z" => "Z".to_string(),
        z if z.contains(':') => z.to_string(),
        z => format!("{}:{}", &z[..3], &z[3..]),
    };
    Some(format!(
        "{}T{}:{}:{}{zone}",
        &c[1],
        &c[2],
        &c[3],
        c.get(4).map_or("00", |m| m.as_str())
    ))
}

/// The tool an old export's unnamed `<details>` block stands for, from its summary
/// ("Searched codebase …", "Grep search for …", "Listed directory …").
fn summary_tool(part: &str) -> Option<&'static str> {
    let summary = part
        .split("<summary>")
        .nth(1)?
        .split("</summary>")
        .next()?
        .trim();
    [
        ("Searched codebase", "codebase_search"),
        ("Grep search for", "grep_search"),
        ("Searched files", "file_search"),
        ("Listed directory", "list_dir"),
        ("Listed current directory", "list_dir"),
        ("Read file", "read_file"),
        ("Searched web", "web_search"),
    ]
    .iter()
    .find(|(said, _)| summary.starts_with(said))
    .map(|(_, tool)| *tool)
}

/// A part that opens with a shell code block.
fn is_shell_fence(part: &str) -> bool {
    let first = part.lines().next().unwrap_or("").trim();
    [
        "```bash",
        "```sh",
        "```shell",
        "```zsh",
        "```powershell",
        "```console",
        "```cmd",
    ]
    .iter()
    .any(|f| first.eq_ignore_ascii_case(f))
}

/// The few HTML entities v2.1 exports write inside tool envelopes.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#96;", "`")
        .replace("&amp;", "&")
}

/// What kind of part a `---` piece of an agent's message is.
fn is_tool_part(body: &str) -> bool {
    let first = body.trim_start();
    [
        "Tool use:",
        "<tool-use",
        "<details",
        "```",
        "Read file:",
        "Could not find file",
        "Tool call timed out",
        "Cancelled",
        "<think>",
    ]
    .iter()
    .any(|p| first.starts_with(p))
}

pub(super) fn parse(bytes: &[u8], name: &str) -> Result<Transcript> {
    let text = String::from_utf8_lossy(bytes);
    let parts = pieces(&text);
    if !parts.iter().any(|p| matches!(p, Piece::Header { .. })) {
        return Err(Error::input(format!(
            "{name}: not a SpecStory export: no _**User**_ / _**Assistant**_ speaker markers (a hand-written summary?)"
        ))
        .hint("only exported chats can be scored; keep summaries out of the session, or convert them to the sage session format"));
    }
    let head: String = text.lines().take(5).collect::<Vec<_>>().join("\n");
    let agent = if head.contains("Claude Code Session") {
        "claude-code"
    } else if head.contains("Copilot") {
        "copilot"
    } else {
        "cursor"
    };
    let mut b = Builder::new(agent);
    if !text.starts_with("<!-- Generated by SpecStory") {
        b.warn("no `<!-- Generated by SpecStory -->` header: an edited or renamed export");
    }
    let mut st = Reader {
        b,
        speaker: String::new(),
        user_text: String::new(),
        user_line: 0,
        user_time: None,
        prose_before: String::new(),
        pending_reasoning: String::new(),
        continues: agent == "copilot",
        last_prose: false,
    };
    for piece in parts {
        match piece {
            Piece::Header { line, who, detail } => st.header(line, &who, detail),
            Piece::Part { line, body } => st.part(line, &body),
        }
    }
    st.flush_user();
    st.b.finish(Format::Specstory, name)
}

struct Reader {
    b: Builder,
    speaker: String,
    user_text: String,
    user_line: u64,
    user_time: Option<String>,
    /// Prose of the agent's current response: where an old export's bare diff learns its file.
    prose_before: String,
    pending_reasoning: String,
    /// Copilot's exports: prose parts between two headers are one answer (its rules are
    /// content), where a Cursor export's `---` divides messages.
    continues: bool,
    /// Whether the last piece was prose of the agent's (no header or tool since).
    last_prose: bool,
}

impl Reader {
    fn flush_user(&mut self) {
        if !self.user_text.is_empty() {
            let text = std::mem::take(&mut self.user_text).trim().to_string();
            self.b.message(
                "user",
                text,
                self.user_time.clone(),
                SourceRef::line(self.user_line),
            );
        }
    }

    fn header(&mut self, line: u64, who: &str, detail: Option<String>) {
        self.flush_user();
        self.last_prose = false;
        // Newer exports put a header before every block of one agent message; only a change
        // of speaker ends the agent's turn (prose opens the next one).
        if who == "User" || self.speaker == "User" {
            self.b.close();
        }
        self.speaker = who.to_string();
        if who == "User" {
            self.prose_before.clear();
            self.user_line = line;
            self.user_time = detail.as_deref().and_then(timestamp);
        } else if let Some(d) = detail {
            // `model m, mode Agent`, or just the model; `default` names none.
            let model = d
                .split(',')
                .map(str::trim)
                .find_map(|p| p.strip_prefix("model ").map(str::to_string))
                .or_else(|| (!d.contains(' ') && d != "default").then(|| d.clone()));
            if let Some(m) = model {
                self.b.model = Some(m);
            }
        }
    }

    fn part(&mut self, line: u64, body: &str) {
        if self.speaker.is_empty() {
            self.b.count("export header");
            return;
        }
        if self.speaker == "User" {
            if !self.user_text.is_empty() {
                self.user_text.push_str("\n\n");
            }
            self.user_text.push_str(body.trim());
            return;
        }
        let trimmed = body.trim();
        if let Some(thought) = trimmed
            .strip_prefix("<think>")
            .map(|r| r.trim_end().trim_end_matches("</think>"))
        {
            // Reasoning opens the next response.
            let inner = thought
                .replace("<details><summary>Thought Process</summary>", "")
                .replace("</details>", "");
            self.pending_reasoning.push_str(inner.trim());
            self.pending_reasoning.push('\n');
            self.b.close();
            return;
        }
        if !is_tool_part(trimmed) {
            // Copilot's exports put a header before each response: a rule (`---`) inside one
            // is part of its answer, so prose right after prose continues the same turn.
            if self.continues && self.last_prose && self.b.is_open() {
                let t = self.b.turn(None, SourceRef::line(line));
                Builder::push_text(t, trimmed);
                self.prose_before.push('\n');
                self.prose_before.push_str(trimmed);
                return;
            }
            self.last_prose = true;
            let t = self
                .b
                .new_turn(self.user_time.clone(), SourceRef::line(line));
            Builder::push_text(t, trimmed);
            if !self.pending_reasoning.is_empty() {
                Builder::push_reasoning(t, Some(self.pending_reasoning.trim()));
                self.pending_reasoning.clear();
            }
            // Only this response's prose names the file of its bare diff: a name from an
            // earlier response is another edit's.
            self.prose_before = trimmed.to_string();
            return;
        }
        self.last_prose = false;
        self.tool(line, trimmed);
    }

    /// A tool part: a call (named, with what it was given) and, for edits, the file change.
    fn tool(&mut self, line: u64, part: &str) {
        let part = ToolPart::read(part);
        let path = part.path(&self.prose_before);
        let command = part.command();
        let result = command
            .as_ref()
            .and_then(|(_, out)| out.clone())
            .map(|text| ToolResult {
                text,
                is_error: false,
            });
        let arguments = Value::Object(part.arguments(path.as_deref(), command.as_ref()));
        let t = self.b.turn(self.user_time.clone(), SourceRef::line(line));
        if !self.pending_reasoning.is_empty() {
            Builder::push_reasoning(t, Some(self.pending_reasoning.trim()));
            self.pending_reasoning.clear();
        }
        let ci = t.tool_calls.len();
        // v2.1 envelopes say what the tool does (`data-tool-type="write"`), whatever its name.
        let typed_write = part.enveloped && part.text.contains("data-tool-type=\"write\"");
        let edits = super::classify::is_edit_call(&part.name, &arguments)
            || !part.diffs.is_empty()
            || typed_write;
        t.tool_calls.push(ToolCall {
            id: None,
            name: part.name.clone(),
            arguments,
            result,
        });
        if !edits {
            return;
        }
        let changes = match part.changes() {
            Changes::PerFile(per_file) => {
                let t = self.b.turn(None, SourceRef::line(line));
                for (p, edit) in per_file {
                    t.file_changes.push(FileChange {
                        tool_call: Some(ci),
                        ..FileChange::new(p.replace('\\', "/"), edit)
                    });
                }
                return;
            }
            Changes::OneFile(changes) => changes,
        };
        let path = match path {
            Some(p) => p,
            // What it wrote is known though where is not (Copilot's replaceString, an old
            // export's bare diff whose response names no file): kept with no path, for the
            // fragment evidence.
            None if !matches!(changes.first(), Some(Edit::Opaque) | None) => String::new(),
            None => {
                self.b.count("edit without a file name");
                return;
            }
        };
        let t = self.b.turn(None, SourceRef::line(line));
        for edit in changes {
            t.file_changes.push(FileChange {
                tool_call: Some(ci),
                ..FileChange::new(path.clone(), edit)
            });
        }
    }
}

/// What a tool part says, read once: the tool's name, its diffs, and the inputs and result
/// its blocks give.
struct ToolPart {
    /// The part, unescaped when it came in a v2.1 envelope.
    text: String,
    enveloped: bool,
    /// The name the part gives, if it gives one.
    named: Option<String>,
    /// The name given, else one guessed from the part's shape.
    name: String,
    /// The file of an `Edit file:` summary.
    edit_path: Option<String>,
    diffs: Vec<String>,
    /// Copilot's newer exports: the `**Input:**` list.
    listed: Option<Value>,
    /// The call's inputs: the `Parameters:` JSON, else the listed input.
    params: Option<Value>,
    /// The text the edit wrote, when the result says (Copilot's `textEditContent`).
    written: Option<String>,
}

/// What an edit call changed.
enum Changes {
    /// Copilot's several replacements in one call: each with its own file.
    PerFile(Vec<(String, Edit)>),
    /// The changes to the one file the call names (or to an unknown one).
    OneFile(Vec<Edit>),
}

impl ToolPart {
    /// Reads a part: unescaped, its name given or guessed from its shape, its blocks parsed.
    fn read(part: &str) -> ToolPart {
        let enveloped = part.starts_with("<tool-use");
        let text = if enveloped {
            unescape(part)
        } else {
            part.to_string()
        };
        let named = tool_name_re()
            .captures(&text)
            .and_then(|c| c.get(1).or_else(|| c.get(2)))
            .map(|m| m.as_str().trim().to_string());
        let edit_path = edit_file_re()
            .captures(&text)
            .map(|c| c[1].trim().replace('\\', "/"));
        let diffs = diff_blocks(&text);
        // Copilot's blocks: `Parameters:` and `Result:` as JSON (the result holds the text the
        // edit wrote, `textEditContent`).
        // Copilot's newer exports: an `**Input:**` list of `- key: \`value\`` lines (or a
        // fenced block under `- key:`), then the result under `**Result:**`.
        let listed = input_list(&text);
        let params = json_after(&text, "Parameters:").or_else(|| listed.clone());
        let written = json_after(&text, "Result:")
            .as_ref()
            .and_then(|r| r.get("textEditContent"))
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let name = named.clone().unwrap_or_else(|| {
            if edit_path.is_some() || !diffs.is_empty() {
                "edit_file".into()
            } else if text.starts_with("Read file:") {
                "read_file".into()
            } else if let Some(tool) = summary_tool(&text) {
                tool.into()
            } else if is_shell_fence(&text) {
                // An old export's terminal command: a shell block, then its output.
                "run_terminal_cmd".into()
            } else {
                "status".into()
            }
        });
        ToolPart {
            text,
            enveloped,
            named,
            name,
            edit_path,
            diffs,
            listed,
            params,
            written,
        }
    }

    /// The first of these inputs the call was given as a string.
    fn param(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| {
            self.params
                .as_ref()
                .and_then(|p| p.get(*k))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
    }

    /// The file the call is on: from its summary, its inputs, what the part says outside its
    /// blocks, or (a bare diff) the prose of the response before it.
    fn path(&self, prose_before: &str) -> Option<String> {
        let path = self
            .edit_path
            .clone()
            .or_else(|| {
                self.param(&["file_path", "filePath", "path"])
                    .map(|p| p.replace('\\', "/"))
            })
            .or_else(|| {
                // A listed input names its own file or none: a path in the result (a search's
                // matches) is not the tool's.
                if self.listed.is_some() {
                    return None;
                }
                // Not inside the diff or output it shows (a route's `path: "/"` is code), but a
                // result that says which file the tool wrote may be fenced.
                let outside = outside_fences(&self.text);
                named_path_re()
                    .captures(&outside)
                    .and_then(|c| c.get(1).or_else(|| c.get(2)))
                    .or_else(|| {
                        result_path_re()
                            .captures(&self.text)
                            .and_then(|c| c.get(1).or_else(|| c.get(2)))
                    })
                    .map(|m| m.as_str().trim().replace('\\', "/"))
            });
        path.or_else(|| {
            // An old export's bare diff: the file the prose before it named last.
            (self.named.is_none() && !self.diffs.is_empty())
                .then(|| {
                    prose_path_re()
                        .captures_iter(prose_before)
                        .last()
                        .and_then(|c| c.get(1).or_else(|| c.get(2)))
                        .map(|m| m.as_str().trim_start_matches('/').to_string())
                })
                .flatten()
        })
    }

    /// A terminal call's command and, when shown, its output.
    fn command(&self) -> Option<(String, Option<String>)> {
        let name = &self.name;
        let shell = name.contains("terminal") || name.contains("shell") || name == "Bash";
        match (shell, self.param(&["command"])) {
            (true, Some(cmd)) => Some((cmd, result_block(&self.text))),
            (true, None) => {
                let mut it = code_blocks(&self.text).into_iter();
                it.next().map(|cmd| (cmd, it.next()))
            }
            _ => None,
        }
    }

    /// The call's arguments: the file, the command and what else a listed input says; else a
    /// summary of the part.
    fn arguments(
        &self,
        path: Option<&str>,
        command: Option<&(String, Option<String>)>,
    ) -> serde_json::Map<String, Value> {
        let mut args = serde_json::Map::new();
        // What a listed input says besides the file, the command and the edit's text (a
        // search's query, a command's purpose).
        if let Some(Value::Object(m)) = &self.listed {
            for (k, v) in m {
                if ![
                    "filePath",
                    "file_path",
                    "path",
                    "command",
                    "newString",
                    "oldString",
                    "replacements",
                    "content",
                ]
                .contains(&k.as_str())
                {
                    args.insert(k.clone(), v.clone());
                }
            }
        }
        if let Some(p) = path {
            args.insert("path".into(), Value::String(p.to_string()));
        }
        if let Some((cmd, _)) = command {
            args.insert("command".into(), Value::String(cmd.trim().to_string()));
        }
        if args.is_empty() {
            // What the envelope's summary says after the tool's name ("• Searched for x"),
            // else the first line that is not markup.
            let said = self
                .text
                .split("<summary>")
                .nth(1)
                .and_then(|r| r.split("</summary>").next())
                .map(|s| match s.split_once('•') {
                    Some((head, rest)) if head.contains("Tool use:") => rest.trim().to_string(),
                    _ => s.trim().to_string(),
                })
                .filter(|s| !s.is_empty() && !s.starts_with("Tool use:"));
            let first = self
                .text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('<'))
                .unwrap_or("");
            let summary = said.unwrap_or_else(|| first.to_string());
            args.insert("summary".into(), Value::String(summary));
        }
        args
    }

    /// What an edit call changed: its rendered diffs, Copilot's replacements, else the old
    /// and new strings or the text it wrote.
    fn changes(&self) -> Changes {
        let changes: Vec<Edit> = self.diffs.iter().map(|d| rendered_diff(d)).collect();
        if !changes.is_empty() {
            return Changes::OneFile(changes);
        }
        // Copilot's several replacements in one call, printed as Go maps
        // (`[map[filePath:/p/a.hpp newString:… oldString:…] …]`): one change per file, with
        // the text each wrote.
        let per_file: Vec<(String, Edit)> = self
            .param(&["replacements"])
            .map(|r| go_map_replacements(&r))
            .unwrap_or_default();
        if !per_file.is_empty() {
            return Changes::PerFile(per_file);
        }
        let lower = self.name.to_ascii_lowercase();
        Changes::OneFile(vec![match (
            self.param(&["oldString", "old_string"]),
            self.param(&["newString", "new_string"]),
            self.written.clone(),
        ) {
            (Some(old), Some(new), _) => Edit::Replace {
                old,
                new,
                all: false,
            },
            (_, _, Some(text)) if lower.contains("create") || lower.contains("write") => {
                Edit::Write { content: text }
            }
            (_, _, Some(text)) => Edit::Fragment { text },
            _ => Edit::Opaque,
        }])
    }
}

/// The `**Input:**` list of a Copilot tool block: `- key: \`value\`` lines, or `- key:` and
/// a fenced block under it, up to `**Result:**`.
fn input_list(part: &str) -> Option<Value> {
    let at = part.find("**Input:**")?;
    let rest = &part[at + "**Input:**".len()..];
    let body = &rest[..rest.find("**Result:**").unwrap_or(rest.len())];
    let mut map = serde_json::Map::new();
    let mut lines = body.lines();
    while let Some(l) = lines.next() {
        let Some((key, val)) = l.strip_prefix("- ").and_then(|i| i.split_once(':')) else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            continue;
        }
        let val = val.trim();
        if !val.is_empty() {
            let v = val
                .strip_prefix('`')
                .and_then(|v| v.strip_suffix('`'))
                .unwrap_or(val);
            map.insert(key.to_string(), Value::String(v.to_string()));
            continue;
        }
        // The value is the fenced block that follows.
        let Some(open) = lines.by_ref().map(str::trim).find(|l| !l.is_empty()) else {
            break;
        };
        let ticks: String = open.chars().take_while(|c| *c == '`').collect();
        if ticks.len() < 3 {
            continue;
        }
        let mut text = String::new();
        for l in lines.by_ref() {
            if l.trim_end() == ticks {
                break;
            }
            text.push_str(l);
            text.push('\n');
        }
        map.insert(key.to_string(), Value::String(text));
    }
    (!map.is_empty()).then_some(Value::Object(map))
}

/// A part without its fenced blocks: what the export says about the call, not what the call
/// wrote or printed.
fn outside_fences(part: &str) -> String {
    split_fences(part).0
}

/// The body of the fenced block after `**Result:**`.
fn result_block(part: &str) -> Option<String> {
    let at = part.find("**Result:**")?;
    code_blocks(&part[at..]).into_iter().next()
}

/// Copilot's `multi_replace_string_in_file` replacements as Go prints them: per `filePath:`,
/// the text after its `newString:` (up to `oldString:`) as what the edit wrote there.
fn go_map_replacements(r: &str) -> Vec<(String, Edit)> {
    let mut out = Vec::new();
    for chunk in r.split("map[filePath:").skip(1) {
        let path = chunk
            .split(char::is_whitespace)
            .next()
            .unwrap_or("")
            .trim_end_matches(']')
            .to_string();
        if path.is_empty() {
            continue;
        }
        let new = chunk
            .split_once(" newString:")
            .map(|(_, n)| n.split(" oldString:").next().unwrap_or(n).to_string());
        out.push((
            path,
            match new.filter(|n| !n.trim().is_empty()) {
                Some(text) => Edit::Fragment { text },
                None => Edit::Opaque,
            },
        ));
    }
    out
}

/// The JSON of the ```json block right after a `label` line (`Parameters:`, `Result:`).
fn json_after(part: &str, label: &str) -> Option<Value> {
    let at = part.find(&format!("\n{label}"))?;
    let rest = &part[at + label.len() + 1..];
    let open = rest.find("```json")?;
    let body = &rest[open + "```json".len()..];
    let close = body.find("\n```")?;
    serde_json::from_str(body[..close].trim()).ok()
}

/// The bodies of every fenced block of a part, in order.
fn code_blocks(part: &str) -> Vec<String> {
    split_fences(part).1
}

/// A part's lines outside fenced blocks, and the bodies of its fenced blocks in order.
fn split_fences(part: &str) -> (String, Vec<String>) {
    let mut outside = String::new();
    let mut blocks = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in part.lines() {
        let t = line.trim_start();
        match &mut cur {
            None if t.starts_with("```") => {
                let ticks: String = t.chars().take_while(|c| *c == '`').collect();
                cur = Some((ticks, String::new()));
            }
            Some((ticks, body)) => {
                if line.trim_end() == ticks.as_str() {
                    blocks.push(std::mem::take(body));
                    cur = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            None => {
                outside.push_str(line);
                outside.push('\n');
            }
        }
    }
    (outside, blocks)
}

/// The bodies of the part's ```diff blocks.
fn diff_blocks(part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in part.lines() {
        match &mut cur {
            None if line.trim() == "```diff" => cur = Some(String::new()),
            Some(body) if line.trim_end() == "```" => {
                out.push(std::mem::take(body));
                cur = None;
            }
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

/// A rendered diff (`+ `, `- `, `  ` before each line) as an edit: with `@@` headers a patch
/// the replay can place; without, the old and new text; a new file, its content.
fn rendered_diff(block: &str) -> Edit {
    let mut old = String::new();
    let mut new = String::new();
    let mut patch = String::new();
    let mut headers = false;
    for line in block.lines() {
        if line.starts_with("@@") {
            headers = true;
            patch.push_str(line);
            patch.push('\n');
            continue;
        }
        let (tag, rest) = match line.get(..2) {
            Some("+ ") => ('+', &line[2..]),
            Some("- ") => ('-', &line[2..]),
            Some("  ") => (' ', &line[2..]),
            _ if line == "+" => ('+', ""),
            _ if line == "-" => ('-', ""),
            _ => (' ', line),
        };
        patch.push(tag);
        patch.push_str(rest);
        patch.push('\n');
        if tag != '+' {
            old.push_str(rest);
            old.push('\n');
        }
        if tag != '-' {
            new.push_str(rest);
            new.push('\n');
        }
    }
    if old.trim().is_empty() {
        Edit::Write { content: new }
    } else if headers {
        Edit::Patch { patch }
    } else {
        Edit::Replace {
            old,
            new,
            all: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_and_summary() {
        let e = "<!-- Generated by SpecStory -->\n\n# Fix (2025-04-29 13:36:50)\n\n_**User**_\n\nfix the ssrf\n\n---\n\n_**Assistant**_\n\nI'll edit `media/fetcher.py` now.\n\n---\n\n```diff\n  def f(url):\n+     check(url)\n      return get(url)\n```\n\n---\n\nDone.\n\n---\n";
        let t = parse(e.as_bytes(), "e.md").unwrap();
        assert_eq!(t.context[0].text, "fix the ssrf");
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.turns[0].file_changes[0].path, "media/fetcher.py");
        assert_eq!(
            t.turns[0].file_changes[0].edit,
            Edit::Replace {
                old: "def f(url):\n    return get(url)\n".into(),
                new: "def f(url):\n    check(url)\n    return get(url)\n".into(),
                all: false
            }
        );
        let s =
            "# SpecStory: Improve MCP Error Handling\n\n## Conversation Summary\n\nThe user ...\n";
        let err = parse(s.as_bytes(), "s.md").unwrap_err();
        assert!(err.to_string().contains("hand-written summary"), "{err}");
    }

    #[test]
    fn current_exports_tool_use_blocks_and_envelopes() {
        let e = "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n<!-- cursor Session 1 (2025-12-29 16:28Z) -->\n\n# Fix (2025-12-29 16:28Z)\n\n_**User (2025-12-29 16:28Z)**_\n\nguard the endpoint\n\n---\n\n_**Agent (model claude-4.5-sonnet-thinking, mode Agent)**_\n\n<think><details><summary>Thought Process</summary>The key must be checked.</details></think>\n\n---\n\nAdding the check now.\n\n---\n\n<tool-use data-tool-type=\"write\" data-tool-name=\"search_replace\">\n\n<details><summary>Tool use: **search_replace** • Edit file: d:\\app\\api.ts</summary>\n\n**Chunk 1**\nLines added: 1, lines removed: 0\n\n```diff\n@@ -1,2 +1,3 @@\n  function f() {\n+   if (key !== KEY) throw new Error(&quot;401&quot;);\n  }\n```\n\n</details>\n\n</tool-use>\n\n---\n\nTool use: **run_terminal_cmd**\n\n```bash\nnpm test\n```\n\n```\n3 passed\n```\n\n---\n\nTool use: **write**\n\n---\n";
        let t = parse(e.as_bytes(), "e.md").unwrap();
        assert_eq!(t.model.as_deref(), Some("claude-4.5-sonnet-thinking"));
        assert_eq!(
            t.context[0].timestamp.as_deref(),
            Some("2025-12-29T16:28:00Z")
        );
        assert_eq!(t.turns.len(), 1, "{:#?}", t.turns);
        let turn = &t.turns[0];
        assert_eq!(turn.reasoning.as_deref(), Some("The key must be checked."));
        assert_eq!(turn.timestamp.as_deref(), Some("2025-12-29T16:28:00Z"));
        assert_eq!(turn.tool_calls.len(), 3);
        assert_eq!(turn.tool_calls[1].arguments["command"], "npm test");
        assert_eq!(
            turn.tool_calls[1].result.as_ref().unwrap().text,
            "3 passed\n"
        );
        assert_eq!(turn.file_changes.len(), 1);
        assert_eq!(turn.file_changes[0].path, "d:/app/api.ts");
        assert_eq!(
            turn.file_changes[0].edit,
            Edit::Patch {
                patch: "@@ -1,2 +1,3 @@\n function f() {\n+  if (key !== KEY) throw new Error(\"401\");\n }\n".into()
            }
        );
        assert_eq!(
            timestamp("2025-10-01 07:22+0200").as_deref(),
            Some("2025-10-01T07:22:00+02:00")
        );
    }

    /// Newer Cursor exports: a speaker header before every block and no `---`, versioned tool
    /// names, envelopes that carry no diff, and an empty twin after each envelope.
    #[test]
    fn copilot_input_lists_are_the_calls_arguments() {
        let e = "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n<!-- VS Code Copilot IDE Session 9 (2026-04-11 13:46:22Z) -->\n\n_**User (2026-04-11 13:46:22Z)**_\n\nreview the schema route\n\n---\n\n_**Agent (copilot/claude-sonnet-4.5)**_\n\n<tool-use data-tool-type=\"generic\" data-tool-name=\"run_in_terminal\"><details>\n<summary>Tool use: **run_in_terminal**</summary>\n\n**Input:**\n\n- command: `cd /w && ls schema | wc -l`\n- explanation: `Count the schemas`\n\n**Result:**\n\n```\n0\n```\n</details></tool-use>\n\n_**Agent (copilot/claude-sonnet-4.5)**_\n\n<tool-use data-tool-type=\"search\" data-tool-name=\"grep_search\"><details>\n<summary>Tool use: **grep_search**</summary>\n\n**Input:**\n\n- query: `BMCWEB_ROUTE.*schema`\n\n**Result:**\n\n```\n{\"match\":\"/w/lib/other.hpp\"}\n```\n</details></tool-use>\n\n_**Agent (copilot/claude-sonnet-4.5)**_\n\n<tool-use data-tool-type=\"generic\" data-tool-name=\"replace_string_in_file\"><details>\n<summary>Tool use: **replace_string_in_file**</summary>\n\n**Input:**\n\n- filePath: `/w/lib/metadata.hpp`\n- newString:\n\n```\nif (schema.find(\"..\") != npos) { return; }\nopen(schema);\n```\n\n- oldString:\n\n```\nopen(schema);\n```\n\n</details></tool-use>\n\n_**Agent (copilot/claude-sonnet-4.5)**_\n\n<tool-use data-tool-type=\"generic\" data-tool-name=\"multi_replace_string_in_file\"><details>\n<summary>Tool use: **multi_replace_string_in_file**</summary>\n\n**Input:**\n\n- replacements:\n\n```\n[map[filePath:/w/lib/a.hpp newString:check(a); oldString:a;] map[filePath:/w/lib/b.hpp newString:check(b); oldString:b;]]\n```\n\n</details></tool-use>\n";
        let t = parse(e.as_bytes(), "x.md").unwrap();
        let calls = &t.turns[0].tool_calls;
        assert_eq!(calls[0].arguments["command"], "cd /w && ls schema | wc -l");
        assert_eq!(calls[0].result.as_ref().unwrap().text, "0\n");
        assert_eq!(calls[1].arguments["query"], "BMCWEB_ROUTE.*schema");
        // A search's matches are not its path.
        assert!(calls[1].arguments.get("path").is_none(), "{:?}", calls[1]);
        let fc = &t.turns[0].file_changes;
        assert_eq!(fc[0].path, "/w/lib/metadata.hpp");
        assert_eq!(
            fc[0].edit,
            Edit::Replace {
                old: "open(schema);\n".into(),
                new: "if (schema.find(\"..\") != npos) { return; }\nopen(schema);\n".into(),
                all: false
            }
        );
        let multi: Vec<(&str, &Edit)> =
            fc[1..].iter().map(|c| (c.path.as_str(), &c.edit)).collect();
        assert_eq!(
            multi,
            [
                (
                    "/w/lib/a.hpp",
                    &Edit::Fragment {
                        text: "check(a);".into()
                    }
                ),
                (
                    "/w/lib/b.hpp",
                    &Edit::Fragment {
                        text: "check(b);".into()
                    }
                )
            ]
        );
    }

    #[test]
    fn rules_inside_a_thought_or_a_copilot_answer_do_not_split_it() {
        let copilot = "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n<!-- VS Code Copilot IDE Session 9 (2026-04-11 13:46:22Z) -->\n\n_**User (2026-04-11 13:46:22Z)**_\n\nreview it\n\n---\n\n_**Agent (copilot/claude-sonnet-4.5)**_\n\n<think><details><summary>Thought Process</summary>\nFirst point.\n\n---\n\nSecond point.\n</details></think>\n\n_**Agent (copilot/claude-sonnet-4.5)**_\n\n## Review\n\nThe traversal check is weak.\n\n---\n\n## Next steps\n\nAdd a test.\n\n---\n\n_**User (2026-04-11 13:50:00Z)**_\n\nthanks\n";
        let t = parse(copilot.as_bytes(), "x.md").unwrap();
        assert_eq!(t.turns.len(), 1, "{:?}", t.turns);
        assert!(
            t.turns[0].text.contains("The traversal check is weak.")
                && t.turns[0].text.contains("Add a test.")
        );
        let r = t.turns[0].reasoning.as_deref().unwrap();
        assert!(
            r.contains("First point.") && r.contains("Second point."),
            "{r}"
        );
        // In a Cursor export a rule still divides messages.
        let cursor = copilot.replace("VS Code Copilot IDE Session", "cursor Session");
        assert_eq!(parse(cursor.as_bytes(), "x.md").unwrap().turns.len(), 2);
    }

    #[test]
    fn code_inside_a_diff_names_no_file() {
        let e = "<!-- Generated by SpecStory -->\n\n_**User**_\n\nadd the csrf route\n\n---\n\n_**Assistant**_\n\nAdding it.\n\n---\n\n```diff\n+ export const route = { path: \"/\", handler };\n```\n\n---\n\n_**Assistant**_\n\n<tool-use data-tool-type=\"write\" data-tool-name=\"Edit\"><details>\n<summary>Tool use: **Edit**</summary>\n\n```\nThe file /p/docs/plan.md has been updated.\n```\n</details></tool-use>\n";
        let t = parse(e.as_bytes(), "x.md").unwrap();
        let paths: Vec<&str> = t
            .turns
            .iter()
            .flat_map(|t| t.file_changes.iter().map(|c| c.path.as_str()))
            .collect();
        assert_eq!(paths, ["", "/p/docs/plan.md"], "{:?}", t.turns);
    }

    #[test]
    fn versioned_cursor_tools_without_separators() {
        let e = "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n_**User**_\n\nfix the cookies\n\n---\n\n_**Agent (claude-sonnet-4)**_\n\nReading it first.\n\n_**Agent (claude-sonnet-4)**_\n\n<tool-use data-tool-type=\"read\" data-tool-name=\"read_file_v2\">\n<details><summary>Tool use: **read_file_v2** • Read file: /p/src/app/Bookings.tsx</summary>\n\n</details>\n</tool-use>\n\n<tool-use data-tool-type=\"read\" data-tool-name=\"read_file_v2\"><details>\n<summary>Tool use: **read_file_v2**</summary>\n\n</details></tool-use>\n\n_**Agent (claude-sonnet-4)**_\n\nNow the hook.\n\n_**Agent (claude-sonnet-4)**_\n\n<tool-use data-tool-type=\"write\" data-tool-name=\"edit_file_v2\">\n\n<details><summary>Tool use: **edit_file_v2** • Edit file: /p/src/hooks/useAuth.ts</summary>\n\n</details>\n\n</tool-use>\n\n<tool-use data-tool-type=\"write\" data-tool-name=\"edit_file_v2\"><details>\n<summary>Tool use: **edit_file_v2**</summary>\n\n</details></tool-use>\n\n_**Agent (claude-sonnet-4)**_\n\n<tool-use data-tool-type=\"shell\" data-tool-name=\"run_terminal_command_v2\">\n<details><summary>Tool use: **run_terminal_command_v2** • Run command: npm test</summary>\n\n```bash\nnpm test\n```\n\n```\n3 passed\n```\n</details>\n</tool-use>\n\n_**Agent (claude-sonnet-4)**_\n\n<tool-use data-tool-type=\"generic\" data-tool-name=\"todo_write\">\n<details><summary>Tool use: **todo_write** • Todo List</summary>\n</details>\n</tool-use>\n";
        let t = parse(e.as_bytes(), "e.md").unwrap();
        assert_eq!(t.turns.len(), 2, "{:#?}", t.turns);
        let read = &t.turns[0].tool_calls[0];
        assert_eq!(read.arguments["path"], "/p/src/app/Bookings.tsx");
        let edit = &t.turns[1];
        assert_eq!(edit.file_changes.len(), 1, "{edit:#?}");
        assert_eq!(edit.file_changes[0].path, "/p/src/hooks/useAuth.ts");
        assert_eq!(edit.tool_calls[1].arguments["command"], "npm test");
        assert_eq!(edit.tool_calls[2].arguments["summary"], "Todo List");
        assert!(super::super::classify::is_edit_call(
            "edit_file_v2",
            &serde_json::json!({})
        ));
        assert_eq!(
            super::super::classify::shell_command(
                "run_terminal_command_v2",
                &serde_json::json!({"command": "npm test"})
            )
            .as_deref(),
            Some("npm test")
        );
    }

    /// Old exports: unnamed `<details>` searches, shell blocks, and a bare diff that takes its
    /// file only from its own response's prose.
    #[test]
    fn old_exports_name_their_searches_and_place_bare_diffs_carefully() {
        let e = "<!-- Generated by SpecStory -->\n\n_**User**_\n\nadd the origins\n\n---\n\n_**Assistant**_\n\nLooking at `config/WebConfig.java` first.\n\n---\n\n<details>\n            <summary>Grep search for \"allowedOrigins\" • **2** files</summary>\n\n| File | Line |\n\n</details>\n\n---\n\n```bash\nchmod +x scripts/t.sh\n```\n\n---\n\nNow a test script, and `response.token` stays as is:\n\n---\n\n```diff\n- \n+ #!/bin/bash\n+ curl -s localhost\n```\n\n---\n";
        let t = parse(e.as_bytes(), "o.md").unwrap();
        let names: Vec<&str> = t
            .turns
            .iter()
            .flat_map(|t| t.tool_calls.iter().map(|c| c.name.as_str()))
            .collect();
        assert_eq!(names, ["grep_search", "run_terminal_cmd", "edit_file"]);
        assert_eq!(
            t.turns[0].tool_calls[0].arguments["summary"],
            "Grep search for \"allowedOrigins\" • **2** files"
        );
        // neither the earlier response's file nor an expression in backticks is the diff's file
        let last = t.turns.last().unwrap();
        assert_eq!(last.file_changes.len(), 1);
        assert_eq!(last.file_changes[0].path, "");
    }
}
