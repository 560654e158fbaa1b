//! Which transcript format a file is, from its first bytes (never from its name alone).

use serde_json::Value;

use super::Format;

pub(crate) const NAMES: [&str; 11] = [
    "claude-code",
    "codex",
    "gemini-cli",
    "cursor",
    "aider",
    "openhands",
    "swe-agent",
    "mini-swe-agent",
    "specstory",
    "markdown",
    "sage",
];

/// RFC 3339 UTC text for milliseconds since the epoch.
pub(crate) fn iso_from_millis(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(ts) => format!(
            "{}.{:03}Z",
            ts.strftime("%Y-%m-%dT%H:%M:%S"),
            ms.rem_euclid(1000)
        ),
        // Beyond the years 9999 either way: no real log says so; shown as the number.
        Err(_) => format!("{ms} ms"),
    }
}

fn first_json_line(head: &str) -> Option<Value> {
    let line = head.lines().find(|l| !l.trim().is_empty())?;
    if let Ok(v) = serde_json::from_str(line.trim()) {
        return Some(v);
    }
    // A first line longer than the peek: keep the string keys and short values it shows,
    // which is all detection looks at.
    if !head.contains('\n') {
        let mut map = serde_json::Map::new();
        let re = regex::Regex::new(
            r#""([A-Za-z_$][\w$]*)"\s*:\s*("(?:[^"\\]|\\.){0,64}"|\{|\[|[-\w.]+)"#,
        )
        .expect("valid regex");
        for c in re.captures_iter(line) {
            let v = serde_json::from_str(&c[2]).unwrap_or(Value::Bool(true));
            map.entry(c[1].to_string()).or_insert(v);
        }
        return (!map.is_empty()).then_some(Value::Object(map));
    }
    None
}

fn jsonl_format(v: &Value) -> Option<Format> {
    if super::openhands_v1::is_event(v) {
        return Some(Format::Openhands);
    }
    let o = v.as_object()?;
    let ty = o.get("type").and_then(Value::as_str);
    if o.get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("sage.session"))
    {
        return Some(Format::Sage);
    }
    if o.contains_key("payload")
        && matches!(
            ty,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
    {
        return Some(Format::Codex);
    }
    if o.contains_key("$set")
        || o.contains_key("$rewindTo")
        || (o.contains_key("sessionId") && o.contains_key("projectHash"))
    {
        return Some(Format::GeminiCli);
    }
    if o.contains_key("session_id")
        && matches!(
            ty,
            Some("system" | "user" | "assistant" | "tool_call" | "result" | "thinking")
        )
    {
        return Some(Format::Cursor);
    }
    if ty.is_some()
        && (o.contains_key("sessionId")
            || o.contains_key("uuid")
            || o.contains_key("leafUuid")
            || o.contains_key("messageId"))
    {
        return Some(Format::ClaudeCode);
    }
    if ty.is_none()
        && o.contains_key("role")
        && o.get("message").is_some_and(|m| m.get("content").is_some())
    {
        return Some(Format::Cursor);
    }
    if ty == Some("turn_ended") {
        return Some(Format::Cursor);
    }
    if o.contains_key("text") || o.contains_key("tool_calls") || o.contains_key("file_changes") {
        return Some(Format::Sage);
    }
    None
}

/// Guesses the format from the first bytes of a file.
pub(crate) fn detect(head: &[u8], name: &str) -> Option<Format> {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') {
        if let Some(v) = first_json_line(t)
            && let Some(f) = jsonl_format(&v)
        {
            return Some(f);
        }
        // A torn or garbled first line (an interrupted write, a stray byte) must not hide
        // the format of the lines after it.
        if let Some(f) = t
            .lines()
            .skip(1)
            .take(20)
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .find_map(|v| jsonl_format(&v))
        {
            return Some(f);
        }
        // One (pretty-printed) JSON document: look at its keys near the top.
        let has = |k: &str| t.contains(&format!("\"{k}\""));
        if has("trajectory")
            && (has("thought") || has("observation") || has("action"))
            && !has("source")
        {
            return Some(Format::SweAgent);
        }
        if has("trajectory") && has("source") {
            return Some(Format::Openhands);
        }
        if has("messages")
            && (has("mini_version") || has("trajectory_format") || has("instance_id"))
        {
            return Some(Format::MiniSweAgent);
        }
        if has("sessionId") && has("messages") {
            return Some(Format::GeminiCli);
        }
        // Gemini's message list without the session's header (Antigravity writes one): the
        // model's messages are of type "gemini", which no other format uses.
        if has("messages")
            && (t.contains("\"type\": \"gemini\"") || t.contains("\"type\":\"gemini\""))
        {
            return Some(Format::GeminiCli);
        }
        // OpenCode's session export (`info` and `messages` whose entries hold `parts`) is
        // no chat-message list: better "not a format we know" than a wrong parse.
        if has("info") && has("parts") {
            return None;
        }
        if has("messages") && has("role") {
            return Some(Format::MiniSweAgent);
        }
        return None;
    }
    if t.starts_with('[') {
        if t.contains("\"observation\"") || (t.contains("\"action\"") && t.contains("\"source\"")) {
            return Some(Format::Openhands);
        }
        if t.contains("\"role\"") {
            return Some(Format::MiniSweAgent);
        }
        return None;
    }
    let aider_line = |l: &str| {
        l.starts_with("# aider chat started at")
            || l.starts_with("> Aider v")
            || l.starts_with("> Applied edit to ")
            || l.starts_with("> Tokens: ")
    };
    if t.starts_with("# aider chat started at")
        || name.ends_with(".aider.chat.history.md")
        || t.lines()
            .take(40)
            .any(|l| l.trim_end() == "# Aider chat conversation:")
        || (t.lines().take(2000).any(aider_line) && t.lines().any(|l| l.starts_with("#### ")))
    {
        return Some(Format::Aider);
    }
    if t.starts_with("<!-- Generated by SpecStory")
        || t.lines()
            .take(200)
            .any(|l| l.trim() == "_**User**_" || l.trim() == "_**Assistant**_")
    {
        return Some(Format::Specstory);
    }
    if t.lines()
        .take(20)
        .any(|l| l.trim_start().starts_with("schema: sage.session"))
    {
        return Some(Format::Sage);
    }
    if super::cursor_txt::looks_like(t) {
        return Some(Format::Cursor);
    }
    if super::markdown::looks_like(t) {
        return Some(Format::Markdown);
    }
    // A SpecStory folder's file without markers still goes to the SpecStory reader, which
    // says clearly why it cannot use it.
    if name.contains(".specstory/") || t.starts_with("# SpecStory") {
        return Some(Format::Specstory);
    }
    if t.starts_with("turns:") || t.lines().take(20).any(|l| l.starts_with("turns:")) {
        return Some(Format::Sage);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_to_iso() {
        assert_eq!(iso_from_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_from_millis(1_774_272_397_614),
            "2026-03-23T13:26:37.614Z"
        );
        assert_eq!(iso_from_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn gemini_messages_without_a_session_header() {
        let doc = "{\n  \"messages\": [\n    {\n      \"type\": \"user\",\n      \"content\": \"hi\"\n    },\n    {\n      \"type\": \"gemini\",\n      \"content\": \"ok\"\n    }\n  ]\n}";
        assert_eq!(
            detect(doc.as_bytes(), "full.jsonl"),
            Some(Format::GeminiCli)
        );
        let compact =
            r#"{"messages":[{"type":"user","content":"hi"},{"type":"gemini","content":"ok"}]}"#;
        assert_eq!(
            detect(compact.as_bytes(), "full.jsonl"),
            Some(Format::GeminiCli)
        );
    }

    #[test]
    fn detects() {
        let d = |s: &str| detect(s.as_bytes(), "x");
        assert_eq!(
            d("{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{}}\n"),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            d("{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n"),
            Some(Format::Codex)
        );
        assert_eq!(
            d("{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"p\",\n  \"messages\": []\n}"),
            Some(Format::GeminiCli)
        );
        assert_eq!(
            d("{\"sessionId\":\"s\",\"projectHash\":\"p\"}\n{\"$set\":{}}\n"),
            Some(Format::GeminiCli)
        );
        assert_eq!(
            d("{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n"),
            Some(Format::Cursor)
        );
        assert_eq!(
            d("{\"role\":\"user\",\"message\":{\"content\":[]}}\n"),
            Some(Format::Cursor)
        );
        assert_eq!(
            d("[\n {\"id\": 0, \"source\": \"user\", \"action\": \"message\"}]"),
            Some(Format::Openhands)
        );
        assert_eq!(
            d("[{\"role\": \"system\", \"content\": \"x\"}]"),
            Some(Format::MiniSweAgent)
        );
        assert_eq!(
            d(
                "{\n \"environment\": \"main\",\n \"trajectory\": [{\"thought\": \"\", \"action\": \"ls\"}]}"
            ),
            Some(Format::SweAgent)
        );
        assert_eq!(
            d("{\"info\": {\"mini_version\": \"2\"}, \"messages\": []}"),
            Some(Format::MiniSweAgent)
        );
        // OpenCode's export is not mini-swe-agent's, though both have `info` and `messages`
        assert_eq!(
            d(
                "{\"info\": {\"id\": \"ses_1\"}, \"messages\": [{\"info\": {\"role\": \"user\"}, \"parts\": []}]}"
            ),
            None
        );
        assert_eq!(
            d("\n# aider chat started at 2026-01-01 10:00:00\n"),
            Some(Format::Aider)
        );
        assert_eq!(
            d("<!-- Generated by SpecStory -->\n\n_**User**_\n"),
            Some(Format::Specstory)
        );
        assert_eq!(d("schema: sage.session/1\nturns: []\n"), Some(Format::Sage));
        assert_eq!(d("{\"schema\":\"sage.session/1\"}\n"), Some(Format::Sage));
        assert_eq!(d("Задача: x\n\n## Ход 1\nплан\n"), Some(Format::Markdown));
        assert_eq!(
            d("{\"type\":\"user\", torn\n{\"type\":\"user\",\"sessionId\":\"s\"}\n"),
            Some(Format::ClaudeCode),
            "a garbled first line"
        );
        assert_eq!(
            d("-*- mode: fundamental -*-\n>  \n\n#### hi  \n\nhello\n\n> Tokens: 1k sent.  \n"),
            Some(Format::Aider),
            "a history whose first lines are not Aider's"
        );
        assert_eq!(d("just some notes\n"), None);
        assert_eq!(d("{\"hello\": 1}"), None);
    }
}
