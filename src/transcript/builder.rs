//! The builder every parser feeds: turns, tool calls and their results, file changes, context
//! messages, skipped lines and counts, in the order the log gives them.

use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::error::Result;

/// At most this many skipped lines are listed one by one; the rest are counted.
const MAX_SKIPPED_LISTED: usize = 200;

/// Accumulates turns as a parser reads records in order.
pub(crate) struct Builder {
    agent: String,
    turns: Vec<Turn>,
    explicit: Vec<Option<TurnKind>>,
    context: Vec<ContextMessage>,
    skipped: Vec<Skipped>,
    skipped_more: u64,
    skipped_records: BTreeMap<String, u64>,
    compactions: Vec<u32>,
    warnings: Vec<String>,
    open: bool,
    calls: HashMap<String, (usize, usize)>,
    commits: Vec<LoggedCommit>,
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// Whether `agent` is known, not a stand-in: a sage-format session that names no agent,
    /// or a "Turn N" log, calls its turns' speaker "agent" and says nothing of who it was.
    pub agent_known: bool,
}

impl Builder {
    pub(crate) fn new(agent: impl Into<String>) -> Builder {
        Builder {
            agent: agent.into(),
            turns: Vec::new(),
            explicit: Vec::new(),
            context: Vec::new(),
            skipped: Vec::new(),
            skipped_more: 0,
            skipped_records: BTreeMap::new(),
            compactions: Vec::new(),
            warnings: Vec::new(),
            open: false,
            calls: HashMap::new(),
            commits: Vec::new(),
            session_id: None,
            model: None,
            agent_known: true,
        }
    }

    /// A user or system message: context, and the end of the open turn.
    pub(crate) fn message(
        &mut self,
        role: &str,
        text: String,
        timestamp: Option<String>,
        source: SourceRef,
    ) {
        self.close();
        if text.trim().is_empty() {
            return;
        }
        self.context.push(ContextMessage {
            before_turn: self.turns.len() as u32 + 1,
            role: role.to_string(),
            text,
            timestamp,
            source,
        });
    }

    /// The open turn, or a new one.
    pub(crate) fn turn(&mut self, timestamp: Option<String>, source: SourceRef) -> &mut Turn {
        if !self.open {
            return self.new_turn(timestamp, source);
        }
        self.turns.last_mut().expect("an open turn exists")
    }

    /// Always a new turn.
    pub(crate) fn new_turn(&mut self, timestamp: Option<String>, source: SourceRef) -> &mut Turn {
        self.close();
        self.turns.push(Turn {
            turn: 0,
            agent: self.agent.clone(),
            kind: TurnKind::Planning,
            text: String::new(),
            reasoning: None,
            reasoning_available: false,
            reasoning_redacted: false,
            tool_calls: Vec::new(),
            file_changes: Vec::new(),
            timestamp,
            source,
        });
        self.explicit.push(None);
        self.open = true;
        self.turns.last_mut().expect("just pushed")
    }

    /// The turn at an index (for logs whose messages interleave, like Claude Code's).
    pub(crate) fn turn_at(&mut self, index: usize) -> &mut Turn {
        &mut self.turns[index]
    }

    /// Adds a tool call to the turn at an index.
    pub(crate) fn call_at(&mut self, index: usize, call: ToolCall) -> usize {
        let id = call.id.clone();
        let t = &mut self.turns[index];
        t.tool_calls.push(call);
        let ci = t.tool_calls.len() - 1;
        if let Some(id) = id {
            self.calls.insert(id, (index, ci));
        }
        ci
    }

    /// A context message placed before the turn at `before` (0-based), found after the fact.
    pub(crate) fn insert_message(
        &mut self,
        before: usize,
        role: &str,
        text: String,
        timestamp: Option<String>,
        source: SourceRef,
    ) {
        if text.trim().is_empty() {
            return;
        }
        let msg = ContextMessage {
            before_turn: before as u32 + 1,
            role: role.to_string(),
            text,
            timestamp,
            source,
        };
        let at = self
            .context
            .partition_point(|m| m.before_turn <= msg.before_turn);
        self.context.insert(at, msg);
    }

    /// Links a call id to a call of the last turn, for parsers that build turns directly.
    pub(crate) fn register_call(&mut self, id: String, call: usize) {
        if let Some(ti) = self.turns.len().checked_sub(1) {
            self.calls.insert(id, (ti, call));
        }
    }

    /// Rewrites the path of every file change (making them relative to a project root found
    /// after the fact).
    pub(crate) fn map_paths(&mut self, f: impl Fn(&str) -> String) {
        for t in &mut self.turns {
            for c in &mut t.file_changes {
                c.path = f(&c.path);
            }
        }
    }

    /// The last turn, open or not.
    pub(crate) fn last_turn_mut(&mut self) -> Option<&mut Turn> {
        self.turns.last_mut()
    }

    /// A commit the log says the last turn made (Aider's `> Commit <sha>` lines).
    pub(crate) fn commit(&mut self, sha: &str, message: &str) {
        if let Some(ti) = self.turns.len().checked_sub(1) {
            self.commits.push(LoggedCommit {
                turn: ti as u32,
                sha: sha.to_string(),
                message: message.to_string(),
            });
        }
    }

    /// Whether a turn is open to more content.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// Ends the open turn; the next content starts a new one.
    pub(crate) fn close(&mut self) {
        self.open = false;
    }

    /// Drops turns with nothing in them (say, only redacted thinking), renumbering what
    /// points at turns. Done at the end: parsers hold turn indexes while they read.
    fn drop_empty_turns(&mut self) {
        let keep: Vec<bool> = self
            .turns
            .iter()
            .map(|t| {
                !(t.text.trim().is_empty()
                    && t.tool_calls.is_empty()
                    && t.file_changes.is_empty()
                    && t.reasoning.as_deref().is_none_or(|r| r.trim().is_empty()))
            })
            .collect();
        let dropped = keep.iter().filter(|k| !**k).count();
        if dropped == 0 {
            return;
        }
        // kept_before[i]: how many kept turns precede old index i.
        let mut kept_before = Vec::with_capacity(keep.len() + 1);
        let mut k = 0u32;
        for &kp in &keep {
            kept_before.push(k);
            k += kp as u32;
        }
        kept_before.push(k);
        for m in &mut self.context {
            m.before_turn = kept_before[(m.before_turn as usize - 1).min(keep.len())] + 1;
        }
        for c in &mut self.compactions {
            *c = kept_before[(*c as usize).min(keep.len())];
        }
        // Commits point at 0-based indexes until `finish` numbers them.
        for c in &mut self.commits {
            c.turn = kept_before[(c.turn as usize).min(keep.len())]
                .saturating_sub((!keep.get(c.turn as usize).copied().unwrap_or(true)) as u32);
        }
        self.compactions.dedup();
        let mut i = 0;
        self.turns.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.explicit.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        *self
            .skipped_records
            .entry("empty agent message".into())
            .or_default() += dropped as u64;
    }

    /// Labels the open turn's kind as the log gives it.
    pub(crate) fn set_kind(&mut self, kind: TurnKind) {
        if self.open
            && let Some(k) = self.explicit.last_mut()
        {
            *k = Some(kind);
        }
    }

    /// Appends text to the open turn (paragraphs separated by a blank line).
    pub(crate) fn push_text(t: &mut Turn, text: &str) {
        push_para(&mut t.text, text);
    }

    /// Appends reasoning to a turn; `available: false` marks it redacted or encrypted.
    pub(crate) fn push_reasoning(t: &mut Turn, text: Option<&str>) {
        match text
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "[REDACTED]")
        {
            Some(r) => push_para(t.reasoning.get_or_insert_with(String::new), r),
            None => {
                if t.reasoning.is_none() {
                    t.reasoning_redacted = true;
                }
            }
        }
    }

    /// Adds a tool call to the open turn; its id (if any) links a later result.
    pub(crate) fn call(
        &mut self,
        call: ToolCall,
        timestamp: Option<String>,
        source: SourceRef,
    ) -> usize {
        let id = call.id.clone();
        let t = self.turn(timestamp, source);
        t.tool_calls.push(call);
        let ci = t.tool_calls.len() - 1;
        if let Some(id) = id {
            self.calls.insert(id, (self.turns.len() - 1, ci));
        }
        ci
    }

    /// Attaches a result to the call with this id; false when no such call was seen.
    pub(crate) fn result(&mut self, id: &str, text: String, is_error: bool) -> bool {
        match self.calls.get(id) {
            Some(&(ti, ci)) => {
                self.turns[ti].tool_calls[ci].result = Some(ToolResult { text, is_error });
                true
            }
            None => false,
        }
    }

    /// Records a file change on the turn that made the call with this id (else the open turn).
    pub(crate) fn change_for_call(
        &mut self,
        id: Option<&str>,
        mut change: FileChange,
        timestamp: Option<String>,
        source: SourceRef,
    ) {
        if let Some(&(ti, ci)) = id.and_then(|id| self.calls.get(id)) {
            change.tool_call = Some(ci);
            self.turns[ti].file_changes.push(change);
            return;
        }
        self.turn(timestamp, source).file_changes.push(change);
    }

    /// A line that could not be used.
    pub(crate) fn skip(&mut self, line: u64, reason: impl Into<String>) {
        if self.skipped.len() < MAX_SKIPPED_LISTED {
            self.skipped.push(Skipped {
                line,
                reason: reason.into(),
            });
        } else {
            self.skipped_more += 1;
        }
    }

    /// A record left out on purpose.
    pub(crate) fn count(&mut self, kind: &str) {
        *self.skipped_records.entry(kind.to_string()).or_default() += 1;
    }

    /// The agent's context was compacted after the turns so far.
    pub(crate) fn compaction(&mut self) {
        self.close();
        let n = self.turns.len() as u32;
        if self.compactions.last() != Some(&n) {
            self.compactions.push(n);
        }
    }

    pub(crate) fn warn(&mut self, w: impl Into<String>) {
        self.warnings.push(w.into());
    }

    pub(crate) fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// Numbers the turns, labels their kinds, and checks something usable is left.
    pub(crate) fn finish(mut self, format: Format, source: &str) -> Result<Transcript> {
        self.close();
        self.drop_empty_turns();
        if self.turns.is_empty() {
            let first = self
                .skipped
                .first()
                .map(|s| format!("; first problem at line {}: {}", s.line, s.reason))
                .unwrap_or_default();
            return Err(Error::input(format!(
                "{source}: no agent turns found in this {} transcript ({} line{} skipped{first})",
                format.name(),
                self.skipped.len() as u64 + self.skipped_more,
                if self.skipped.len() == 1 { "" } else { "s" }
            ))
            .hint("check the file, or force another format with --from"));
        }
        for (i, t) in self.turns.iter_mut().enumerate() {
            t.turn = i as u32 + 1;
            t.reasoning_available = t.reasoning.is_some();
            if t.reasoning_available {
                t.reasoning_redacted = false;
            }
        }
        for c in &mut self.commits {
            c.turn += 1;
        }
        // Files a shell command wrote (`>`, `>>`, `tee`) are changes the log shows no other way.
        for t in &mut self.turns {
            for (ci, c) in t.tool_calls.iter().enumerate() {
                let Some(cmd) = classify::shell_command(&c.name, &c.arguments) else {
                    continue;
                };
                let whole = classify::heredoc_writes(&cmd);
                for path in classify::shell_written_paths(&cmd) {
                    if !t.file_changes.iter().any(|f| f.path == path) {
                        let edit = match whole.iter().find(|(p, _)| *p == path) {
                            Some((_, content)) => Edit::Write {
                                content: content.clone(),
                            },
                            // The command's text holds what it wrote (`echo … >> f`).
                            None => Edit::Fragment {
                                text: cmd.replace("\\n", "\n"),
                            },
                        };
                        t.file_changes.push(FileChange {
                            tool_call: Some(ci),
                            ..FileChange::new(path, edit)
                        });
                    }
                }
            }
        }
        let task_starts: Vec<u32> = self
            .context
            .iter()
            .filter(|m| m.role == "user")
            .map(|m| m.before_turn)
            .collect();
        classify::classify(&mut self.turns, &self.explicit, &task_starts);
        if self.skipped_more > 0 {
            self.warnings.push(format!(
                "{} more skipped lines not listed",
                self.skipped_more
            ));
        }
        Ok(Transcript {
            schema: TURNS_SCHEMA.to_string(),
            tool: Some(crate::tool::Tool::current()),
            format,
            source: source.to_string(),
            session_id: self.session_id,
            model: self.model,
            agent: self.agent_known.then_some(self.agent),
            turns: self.turns,
            context: self.context,
            skipped: self.skipped,
            skipped_records: self.skipped_records,
            compactions: self.compactions,
            warnings: self.warnings,
            commits: self.commits,
        })
    }
}

pub(super) fn push_para(buf: &mut String, text: &str) {
    let text = text.trim_end();
    if text.trim().is_empty() {
        return;
    }
    if !buf.is_empty() {
        buf.push_str("\n\n");
    }
    buf.push_str(text);
}
