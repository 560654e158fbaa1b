//! What an agent's pre-tool hook sends on stdin and what it reads back: Claude Code and Codex
//! (`PreToolUse`), Gemini CLI (`BeforeTool`), Cursor (`preToolUse`), as their documentation
//! gives them (docs/guard.md#agents).

use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The agents `git sage guard` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Agent {
    #[value(name = "claude-code")]
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
}

impl Agent {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
        }
    }
}

/// One pre-tool call, as the hook described it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub agent: Agent,
    pub session_id: Option<String>,
    pub transcript: Option<String>,
    pub cwd: Option<String>,
    pub tool: String,
    /// The files the call writes (absolute or relative to `cwd`, as the agent gave them).
    pub paths: Vec<String>,
    /// Whether the tool writes files: the guard has nothing to say about other calls.
    pub writes: bool,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The files a Codex `apply_patch` touches: its `*** Add File:`, `*** Update File:`,
/// `*** Delete File:` and `*** Move to:` headers.
fn patch_paths(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|h| l.strip_prefix(h))
        })
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Reads a hook's stdin. The agent is the one named (the configuration installed for it), or
/// else the one the payload's shape says: Cursor can run Claude Code's hooks with its own
/// payload, so the payload decides.
pub(crate) fn parse(stdin: &str, named: Option<Agent>) -> Result<Call> {
    let v: Value = serde_json::from_str(stdin.trim_start_matches('\u{feff}')).map_err(|e| {
        Error::input(format!("hook input: not JSON: {e}"))
            .hint("git sage guard check reads the agent's hook JSON on stdin")
    })?;
    if !v.is_object() {
        return Err(Error::input("hook input: not a JSON object"));
    }
    let event = text(&v, "hook_event_name").unwrap_or_default();
    let agent = if v.get("conversation_id").is_some() || event == "preToolUse" {
        Agent::Cursor
    } else if event == "BeforeTool" {
        Agent::Gemini
    } else if v.get("turn_id").is_some() || text(&v, "tool_name").as_deref() == Some("apply_patch")
    {
        Agent::Codex
    } else {
        named.unwrap_or(Agent::ClaudeCode)
    };
    let tool = text(&v, "tool_name").unwrap_or_default();
    let input = v.get("tool_input").cloned().unwrap_or(Value::Null);
    let file = ["file_path", "path", "target_file"]
        .iter()
        .find_map(|k| text(&input, k));
    let (writes, paths) = match (agent, tool.as_str()) {
        (Agent::ClaudeCode, "Write" | "Edit" | "MultiEdit") => (true, file.into_iter().collect()),
        (Agent::ClaudeCode, "NotebookEdit") => (
            true,
            text(&input, "notebook_path").or(file).into_iter().collect(),
        ),
        (Agent::Codex, "apply_patch") => (
            true,
            patch_paths(
                &text(&input, "command")
                    .or_else(|| text(&input, "patch"))
                    .unwrap_or_default(),
            ),
        ),
        (Agent::Gemini, "write_file" | "replace") => (true, file.into_iter().collect()),
        (Agent::Cursor, "Write" | "Edit" | "Delete" | "MultiEdit" | "StrReplace") => {
            (true, file.into_iter().collect())
        }
        _ => (false, Vec::new()),
    };
    let cwd = text(&v, "cwd").or_else(|| {
        v.get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Ok(Call {
        agent,
        session_id: text(&v, "session_id").or_else(|| text(&v, "conversation_id")),
        transcript: text(&v, "transcript_path"),
        cwd,
        tool,
        paths,
        writes,
    })
}

/// The answer to the agent: what to print on stdout and the exit code. Allowing says nothing
/// (Claude Code would skip its own permission prompt on an explicit allow); denying uses the
/// agent's documented JSON, so the reason reaches the model.
pub(crate) fn answer(agent: Agent, deny: Option<&str>) -> (String, i32) {
    let Some(reason) = deny else {
        return match agent {
            // Cursor documents an explicit allow; empty output is undocumented there.
            Agent::Cursor => (json!({"permission": "allow"}).to_string(), 0),
            _ => (String::new(), 0),
        };
    };
    let v = match agent {
        Agent::ClaudeCode | Agent::Codex => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        Agent::Gemini => json!({"decision": "deny", "reason": reason}),
        Agent::Cursor => json!({
            "permission": "deny",
            "agent_message": reason,
            "user_message": "git sage guard: write the security plan before the first edit",
        }),
    };
    (v.to_string(), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agents_write_call_is_read() {
        let claude = r#"{"session_id":"s1","transcript_path":"/p/t.jsonl","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/app.py","content":"x"},"tool_use_id":"t"}"#;
        let c = parse(claude, None).unwrap();
        assert_eq!(
            (c.agent, c.writes, c.paths.clone()),
            (Agent::ClaudeCode, true, vec!["/p/app.py".to_string()])
        );
        assert_eq!(c.transcript.as_deref(), Some("/p/t.jsonl"));

        let codex = r#"{"session_id":"s2","turn_id":"u","transcript_path":null,"cwd":"/p","hook_event_name":"PreToolUse","model":"m","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch\n"}}"#;
        let c = parse(codex, None).unwrap();
        assert_eq!(c.agent, Agent::Codex);
        assert_eq!(c.paths, ["src/a.py", "old.txt"]);
        assert_eq!(c.transcript, None);

        let gemini = r#"{"session_id":"s3","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-08-21T10:00:00Z","tool_name":"replace","tool_input":{"file_path":"app.py","old_string":"a","new_string":"b"}}"#;
        let c = parse(gemini, None).unwrap();
        assert_eq!((c.agent, c.writes), (Agent::Gemini, true));

        let cursor = "\u{feff}{\"conversation_id\":\"c\",\"generation_id\":\"g\",\"hook_event_name\":\"preToolUse\",\"workspace_roots\":[\"/p\"],\"transcript_path\":null,\"tool_name\":\"Write\",\"tool_input\":{}}";
        let c = parse(cursor, Some(Agent::ClaudeCode)).unwrap();
        assert_eq!((c.agent, c.writes), (Agent::Cursor, true));
        assert_eq!(c.cwd.as_deref(), Some("/p"));
        assert_eq!(c.session_id.as_deref(), Some("c"));

        let bash = r#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        assert!(!parse(bash, None).unwrap().writes);
        assert!(parse("not json", None).is_err());
        assert!(parse("[1]", None).is_err());
    }

    #[test]
    fn answers_follow_each_agents_documented_shape() {
        assert_eq!(answer(Agent::ClaudeCode, None), (String::new(), 0));
        assert_eq!(answer(Agent::Cursor, None).0, r#"{"permission":"allow"}"#);
        let (out, code) = answer(Agent::ClaudeCode, Some("plan first"));
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(code, 0);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecisionReason"],
            "plan first"
        );
        let v: Value = serde_json::from_str(&answer(Agent::Gemini, Some("r")).0).unwrap();
        assert_eq!(
            (v["decision"].as_str(), v["reason"].as_str()),
            (Some("deny"), Some("r"))
        );
        let v: Value = serde_json::from_str(&answer(Agent::Cursor, Some("r")).0).unwrap();
        assert_eq!(v["permission"], "deny");
        assert_eq!(v["agent_message"], "r");
    }
}
