//! Judge backends: OpenAI-compatible chat completions, Anthropic Messages, a command that reads
//! the prompt on stdin, and recorded answers. Each call is one HTTP request (or process);
//! retries, caching and pacing are the orchestrator's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::endpoint::endpoint;
use super::prompt::Prompt;
pub(crate) use super::spec::Spec;
use super::usage::Usage;
use crate::error::{Error, Result};

/// The model family of a model name, for "the judge is the agent's own family" warnings.
pub(crate) fn family(model: &str) -> Option<&'static str> {
    let m = model.to_lowercase();
    let families: &[(&str, &[&str])] = &[
        (
            "anthropic",
            &["claude", "anthropic", "opus", "sonnet", "haiku"],
        ),
        (
            "openai",
            &["gpt", "o1", "o3", "o4", "openai", "codex", "chatgpt"],
        ),
        ("google", &["gemini", "gemma", "google"]),
        ("deepseek", &["deepseek"]),
        ("qwen", &["qwen"]),
        ("meta", &["llama"]),
        ("mistral", &["mistral", "mixtral", "codestral", "devstral"]),
        ("xai", &["grok"]),
    ];
    families
        .iter()
        .find(|(_, keys)| keys.iter().any(|k| m.contains(k)))
        .map(|(f, _)| *f)
}

/// A failed call, and whether trying again may help.
#[derive(Debug, Clone)]
pub(crate) enum CallError {
    Retry {
        message: String,
        after: Option<Duration>,
    },
    /// The server refused the credentials (401, 403): every other request would be refused
    /// too, so the run stops asking this judge.
    Refused(String),
    Fatal(String),
}

/// One request to a backend.
pub(crate) struct Request<'a> {
    pub prompt: &'a Prompt,
    /// Earlier invalid answers and why, for the repair turn of the conversation.
    pub repairs: &'a [(String, String)],
    /// The JSON schema the answer must follow.
    pub schema: &'a Value,
    pub single: bool,
    pub key: &'a str,
}

pub(crate) struct Reply {
    pub text: String,
    pub usage: Usage,
}

/// A live backend with its HTTP client and settings.
pub(crate) struct Backend {
    pub spec: Spec,
    client: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    timeout: Duration,
    /// Cleared when an OpenAI-compatible server refuses `response_format` json_schema.
    schema_ok: AtomicBool,
    replay: HashMap<String, (String, Usage)>,
}

const REPAIR: &str = "Your previous answer could not be used: {error}. Answer again with only the JSON object, following the schema exactly.";

fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return Some(Duration::from_secs_f64(secs.clamp(0.0, 600.0)));
    }
    None
}

fn transport(e: reqwest::Error) -> CallError {
    CallError::Retry {
        message: if e.is_timeout() {
            "the request timed out".into()
        } else {
            format!("request failed: {e}")
        },
        after: None,
    }
}

impl Backend {
    pub(crate) fn new(spec: Spec, timeout: Duration) -> Result<Backend> {
        let (base_url, api_key) = endpoint(&spec)?;
        let replay = match &spec {
            Spec::Replay { file } => load_replay(file)?,
            _ => HashMap::new(),
        };
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| Error::env(format!("cannot build the HTTP client: {e}")))?;
        Ok(Backend {
            spec,
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            timeout,
            schema_ok: AtomicBool::new(true),
            replay,
        })
    }

    /// What identifies this backend's answers in the cache.
    pub(crate) fn identity(&self) -> String {
        format!("{}|{}", self.spec.name(), self.base_url)
    }

    pub(crate) async fn call(&self, req: &Request<'_>) -> Result<Reply, CallError> {
        match &self.spec {
            Spec::Offline => Err(CallError::Fatal(
                "the offline judge takes no requests".into(),
            )),
            // Its answers are read from its directory, never asked for (`judge::manual`).
            Spec::Manual { .. } => Err(CallError::Fatal(
                "the manual judge takes no requests".into(),
            )),
            Spec::OpenAi { model } => self.openai(model, req).await,
            Spec::Anthropic { model } => self.anthropic(model, req).await,
            Spec::Command { cmd } => self.command(cmd, req).await,
            Spec::Replay { file } => match self.replay.get(req.key) {
                Some((text, usage)) => Ok(Reply {
                    text: text.clone(),
                    usage: *usage,
                }),
                None => Err(CallError::Fatal(format!(
                    "{} has no recorded answer for this request (key {})",
                    file.display(),
                    &req.key[..12]
                ))),
            },
        }
    }

    /// The body of a request as the provider's batch interface takes it; `None` for judges
    /// that have none (commands, replays).
    pub(crate) fn batch_body(&self, req: &Request<'_>) -> Option<Value> {
        match &self.spec {
            Spec::OpenAi { model } => Some(self.openai_body(model, req)),
            Spec::Anthropic { model } => Some(self.anthropic_body(model, req)),
            _ => None,
        }
    }

    /// The chat-completions body of a request (also a line of an OpenAI batch).
    pub(crate) fn openai_body(&self, model: &str, req: &Request<'_>) -> Value {
        let mut messages = vec![
            json!({"role": "system", "content": req.prompt.system}),
            json!({"role": "user", "content": req.prompt.user()}),
        ];
        for (answer, error) in req.repairs {
            messages.push(json!({"role": "assistant", "content": answer}));
            messages.push(json!({"role": "user", "content": REPAIR.replace("{error}", error)}));
        }
        let mut body = json!({"model": model, "temperature": 0, "messages": messages});
        if self.schema_ok.load(Ordering::Relaxed) {
            let schema = if req.single {
                json!({"type": "object", "additionalProperties": false, "required": ["turns"], "properties": {"turns": {"type": "array", "items": req.schema}}})
            } else {
                req.schema.clone()
            };
            body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": "turn_scores", "strict": true, "schema": schema}});
        }
        body
    }

    async fn openai(&self, model: &str, req: &Request<'_>) -> Result<Reply, CallError> {
        let use_schema = self.schema_ok.load(Ordering::Relaxed);
        let body = self.openai_body(model, req);
        let mut r = self
            .client
            .post(format!("{}/chat/completions", self.base_url))
            .json(&body);
        if let Some(k) = &self.api_key {
            r = r.bearer_auth(k);
        }
        let resp = r.send().await.map_err(transport)?;
        let status = resp.status();
        let after = retry_after(resp.headers());
        let text = resp.text().await.map_err(transport)?;
        if status.as_u16() == 400
            && use_schema
            && (text.contains("response_format") || text.contains("json_schema"))
        {
            // A server without structured outputs: ask again without them, and stop asking.
            self.schema_ok.store(false, Ordering::Relaxed);
            return Err(CallError::Retry {
                message: "the server does not support json_schema; retrying without it".into(),
                after: Some(Duration::ZERO),
            });
        }
        check_status(status, after, &text)?;
        let v: Value = serde_json::from_str(&text).map_err(|e| CallError::Retry {
            message: format!("the server sent malformed JSON: {e}"),
            after: None,
        })?;
        openai_reply(&v)
    }

    /// The Messages body of a request (also the params of an Anthropic batch request).
    pub(crate) fn anthropic_body(&self, model: &str, req: &Request<'_>) -> Value {
        // One block per turn, the cache breakpoint on the last: the next turn's request finds
        // this prefix in the provider's cache.
        let mut blocks: Vec<Value> = req
            .prompt
            .blocks
            .iter()
            .map(|b| json!({"type": "text", "text": b}))
            .collect();
        if let Some(last) = blocks.last_mut() {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
        blocks.push(json!({"type": "text", "text": req.prompt.instruction}));
        let mut messages = vec![json!({"role": "user", "content": blocks})];
        for (answer, error) in req.repairs {
            messages.push(json!({"role": "assistant", "content": answer}));
            messages.push(json!({"role": "user", "content": REPAIR.replace("{error}", error)}));
        }
        let input_schema = if req.single {
            json!({"type": "object", "required": ["turns"], "properties": {"turns": {"type": "array", "items": req.schema}}})
        } else {
            req.schema.clone()
        };
        json!({
            "model": model,
            "max_tokens": if req.single { 8192 } else { 1024 },
            "temperature": 0,
            "system": [{"type": "text", "text": req.prompt.system, "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
            "tools": [{"name": "record_scores", "description": "Record the scores of the turn(s).", "input_schema": input_schema}],
            "tool_choice": {"type": "tool", "name": "record_scores"}
        })
    }

    async fn anthropic(&self, model: &str, req: &Request<'_>) -> Result<Reply, CallError> {
        let body = self.anthropic_body(model, req);
        let resp = self
            .client
            .post(format!("{}/v1/messages", self.base_url))
            .header("x-api-key", self.api_key.as_deref().unwrap_or(""))
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
            .await
            .map_err(transport)?;
        let status = resp.status();
        let after = retry_after(resp.headers());
        let text = resp.text().await.map_err(transport)?;
        check_status(status, after, &text)?;
        let v: Value = serde_json::from_str(&text).map_err(|e| CallError::Retry {
            message: format!("the server sent malformed JSON: {e}"),
            after: None,
        })?;
        Ok(anthropic_reply(&v))
    }

    async fn command(&self, cmd: &str, req: &Request<'_>) -> Result<Reply, CallError> {
        use tokio::io::AsyncWriteExt;
        let mut prompt = req.prompt.text();
        for (answer, error) in req.repairs {
            prompt.push_str(&format!(
                "\n\nYOUR PREVIOUS ANSWER:\n{answer}\n\n{}",
                REPAIR.replace("{error}", error)
            ));
        }
        // The command line is shown in messages: a key given inline (`KEY=… ./judge`) is not.
        let shown = crate::redact::redact(cmd).0;
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| CallError::Fatal(format!("cannot run `{shown}`: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let write = async move {
            let _ = stdin.write_all(prompt.as_bytes()).await;
            drop(stdin);
        };
        let run = async {
            write.await;
            child.wait_with_output().await
        };
        let out = match tokio::time::timeout(self.timeout, run).await {
            Err(_) => {
                return Err(CallError::Retry {
                    message: format!(
                        "`{shown}` did not answer within {}s",
                        self.timeout.as_secs()
                    ),
                    after: None,
                });
            }
            Ok(Err(e)) => {
                return Err(CallError::Retry {
                    message: format!("`{shown}` failed: {e}"),
                    after: None,
                });
            }
            Ok(Ok(o)) => o,
        };
        if !out.status.success() {
            // The judge's stderr ends up on ours and in the scores (`turns[].error`): redacted
            // whole first, so a secret split over its last lines is still found.
            let (err, _) = crate::redact::redact(&String::from_utf8_lossy(&out.stderr));
            let last = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(CallError::Retry {
                message: format!("`{shown}` exited with {}: {}", out.status, last.trim()),
                after: None,
            });
        }
        Ok(Reply {
            text: String::from_utf8_lossy(&out.stdout).into_owned(),
            usage: Usage::default(),
        })
    }
}

fn check_status(
    status: reqwest::StatusCode,
    after: Option<Duration>,
    body: &str,
) -> Result<(), CallError> {
    if status.is_success() {
        return Ok(());
    }
    let said = server_message(body);
    let message = match (said.is_empty(), status.canonical_reason()) {
        (false, _) => format!("HTTP {}: {said}", status.as_u16()),
        (true, Some(reason)) => format!("HTTP {} {reason}", status.as_u16()),
        (true, None) => format!("HTTP {}", status.as_u16()),
    };
    match status.as_u16() {
        401 | 403 => Err(CallError::Refused(message)),
        408 | 429 | 529 => Err(CallError::Retry { message, after }),
        _ if status.is_server_error() => Err(CallError::Retry { message, after }),
        _ => Err(CallError::Fatal(message)),
    }
}

/// The longest server message kept: one line, enough for "Incorrect API key provided: …".
const MESSAGE_CHARS: usize = 200;

/// What an error response says, as one short line with secrets masked: the message of the
/// usual JSON error shapes (OpenAI and Anthropic `error.message`, `message`, FastAPI-style
/// `detail`, a bare `error` string), else the body itself. Servers echo keys back in their
/// errors (a partly masked one, or a whole one in a proxy's page), and this line is printed.
pub(crate) fn server_message(body: &str) -> String {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let said = json
        .as_ref()
        .and_then(|v| {
            ["/error/message", "/message", "/detail", "/error"]
                .iter()
                .find_map(|p| v.pointer(p).and_then(Value::as_str))
        })
        .unwrap_or(body);
    // One line first (secrets split over lines are still whole), then masked, then cut.
    let head: String = said.chars().take(64 * 1024).collect();
    let line = head.split_whitespace().collect::<Vec<_>>().join(" ");
    let (masked, _) = crate::redact::redact(&line);
    if masked.chars().count() <= MESSAGE_CHARS {
        masked
    } else {
        let mut cut: String = masked.chars().take(MESSAGE_CHARS - 1).collect();
        cut.push('…');
        cut
    }
}

/// A replay file: JSONL records `{"key", "answer", "usage"?}` as `--record` writes them.
fn load_replay(file: &std::path::Path) -> Result<HashMap<String, (String, Usage)>> {
    let text = crate::files::read_text(file, "replay file", crate::files::SESSION_CAP)?;
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            Error::input(format!(
                "{}:{}: not a replay record: {e}",
                file.display(),
                i + 1
            ))
        })?;
        let (Some(key), Some(answer)) = (v["key"].as_str(), v["answer"].as_str()) else {
            return Err(Error::input(format!(
                "{}:{}: a replay record needs key and answer",
                file.display(),
                i + 1
            )));
        };
        let usage = serde_json::from_value(v["usage"].clone()).unwrap_or_default();
        out.insert(key.to_string(), (answer.to_string(), usage));
    }
    Ok(out)
}

/// The answer and usage of a chat-completions response.
pub(crate) fn openai_reply(v: &Value) -> Result<Reply, CallError> {
    let content = v
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| CallError::Retry {
            message: "the response has no choices[0].message.content".into(),
            after: None,
        })?;
    let u = &v["usage"];
    let usage = Usage {
        input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        cached_input_tokens: u
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cost_usd: u["cost"].as_f64(),
    };
    Ok(Reply {
        text: content.to_string(),
        usage,
    })
}

/// The answer (the tool input, else the text) and usage of a Messages response.
pub(crate) fn anthropic_reply(v: &Value) -> Reply {
    let mut answer = String::new();
    for block in v["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("tool_use") => {
                answer = block["input"].to_string();
                break;
            }
            Some("text") => answer.push_str(block["text"].as_str().unwrap_or("")),
            _ => {}
        }
    }
    let u = &v["usage"];
    let cached = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
    let usage = Usage {
        input_tokens: u["input_tokens"].as_u64().unwrap_or(0)
            + cached
            + u["cache_creation_input_tokens"].as_u64().unwrap_or(0),
        output_tokens: u["output_tokens"].as_u64().unwrap_or(0),
        cached_input_tokens: cached,
        cost_usd: None,
    };
    Reply {
        text: answer,
        usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn specs_and_families() {
        assert_eq!(Spec::parse("offline").unwrap(), Spec::Offline);
        assert_eq!(
            Spec::parse("openai:gpt-4.1").unwrap(),
            Spec::OpenAi {
                model: "gpt-4.1".into()
            }
        );
        assert_eq!(
            Spec::parse("command:claude -p").unwrap(),
            Spec::Command {
                cmd: "claude -p".into()
            }
        );
        assert_eq!(
            Spec::parse("manual:review/ssrf").unwrap(),
            Spec::Manual {
                dir: PathBuf::from("review/ssrf")
            }
        );
        assert_eq!(Spec::parse("manual:d").unwrap().name(), "manual:d");
        assert!(Spec::parse("manual:").is_err());
        assert!(Spec::parse("openai:").is_err());
        assert!(Spec::parse("llama").is_err());
        assert_eq!(family("claude-opus-4-7"), Some("anthropic"));
        assert_eq!(family("gpt-5.4"), Some("openai"));
        assert_eq!(family("gemini-2.5-flash"), Some("google"));
        assert_eq!(family("deepseek-chat"), Some("deepseek"));
        assert_eq!(family("something-else"), None);
    }

    #[test]
    fn server_messages_are_one_short_line_without_secrets() {
        let openai = r#"{"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123.\nYou can find your API key at https://platform.openai.com.", "type": "invalid_request_error", "code": "invalid_api_key"}}"#;
        assert_eq!(
            server_message(openai),
            "Incorrect API key provided: [REDACTED:openai-key]. You can find your API key at https://platform.openai.com."
        );
        let anthropic = r#"{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}"#;
        assert_eq!(server_message(anthropic), "invalid x-api-key");
        assert_eq!(
            server_message(r#"{"detail": "Not authenticated"}"#),
            "Not authenticated"
        );
        assert_eq!(server_message(r#"{"error": "forbidden"}"#), "forbidden");
        assert_eq!(
            server_message("  <html>\n<b>401</b>\n</html> "),
            "<html> <b>401</b> </html>"
        );
        let long = "x ".repeat(500);
        let m = server_message(&long);
        assert_eq!(m.chars().count(), MESSAGE_CHARS);
        assert!(m.ends_with('…'));
    }

    #[test]
    fn refused_credentials_stop_at_once_and_other_statuses_keep_their_rules() {
        use reqwest::StatusCode as S;
        let check = |code: u16, body: &str| {
            check_status(S::from_u16(code).unwrap(), None, body).map_err(|e| match e {
                CallError::Refused(m) => format!("refused {m}"),
                CallError::Fatal(m) => format!("fatal {m}"),
                CallError::Retry { message, .. } => format!("retry {message}"),
            })
        };
        assert_eq!(check(200, "{}"), Ok(()));
        assert_eq!(
            check(401, r#"{"error": {"message": "bad key"}}"#),
            Err("refused HTTP 401: bad key".into())
        );
        assert_eq!(check(403, ""), Err("refused HTTP 403 Forbidden".into()));
        assert_eq!(
            check(404, "no such model"),
            Err("fatal HTTP 404: no such model".into())
        );
        for code in [408, 429, 500, 503, 529] {
            assert!(
                check(code, "busy").unwrap_err().starts_with("retry"),
                "{code}"
            );
        }
    }
}
