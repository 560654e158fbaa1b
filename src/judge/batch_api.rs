//! The providers' batch interfaces: OpenAI Batch (upload a JSONL file, create a batch, poll,
//! download the output file) and Anthropic Message Batches (create, poll, read the results
//! URL). Requests are the same bodies the live backends send; answers come back as `Reply`s.

use std::time::Duration;

use serde_json::{Value, json};

use super::backends::{Reply, Spec, anthropic_reply, openai_reply};
use super::endpoint::endpoint;
use crate::error::{Error, Result};

/// Where a batch stands at the provider.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Status {
    Running {
        detail: String,
    },
    /// Finished; `output` is the OpenAI output file id or the Anthropic results URL.
    Ended {
        output: Option<String>,
        errors: Option<String>,
        detail: String,
    },
    /// Failed, expired or cancelled as a whole.
    Failed {
        reason: String,
    },
}

/// One provider endpoint able to run batches.
pub(crate) struct Provider {
    spec: Spec,
    base_url: String,
    api_key: Option<String>,
    client: reqwest::Client,
}

fn env_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::env(format!("batch interface: {what}: {e}"))
}

impl Provider {
    pub(crate) fn new(spec: &Spec) -> Result<Provider> {
        if !matches!(spec, Spec::OpenAi { .. } | Spec::Anthropic { .. }) {
            return Err(Error::input(format!(
                "--batch-api works with openai:MODEL and anthropic:MODEL judges, not {}",
                spec.name()
            )));
        }
        let (base_url, api_key) = endpoint(spec)?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(|e| env_err("cannot build the HTTP client", e))?;
        Ok(Provider {
            spec: spec.clone(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            client,
        })
    }

    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let r = self.client.request(method, url);
        match self.spec {
            Spec::Anthropic { .. } => r
                .header("x-api-key", self.api_key.as_deref().unwrap_or(""))
                .header("anthropic-version", "2023-06-01"),
            _ => match &self.api_key {
                Some(k) => r.bearer_auth(k),
                None => r,
            },
        }
    }

    /// Sends with a few retries on rate limits, server errors and transport failures.
    async fn send(&self, what: &str, make: impl Fn() -> reqwest::RequestBuilder) -> Result<String> {
        let mut delay = Duration::from_millis(500);
        let mut last = String::new();
        for attempt in 0..5 {
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(30));
            }
            match make().send().await {
                Err(e) => last = e.to_string(),
                Ok(resp) => {
                    let status = resp.status();
                    let text = resp.text().await.unwrap_or_default();
                    if status.is_success() {
                        return Ok(text);
                    }
                    last = format!(
                        "HTTP {}: {}",
                        status.as_u16(),
                        text.chars().take(200).collect::<String>().trim()
                    );
                    if !(status.as_u16() == 429
                        || status.as_u16() == 529
                        || status.is_server_error())
                    {
                        break;
                    }
                }
            }
        }
        Err(env_err(what, last))
    }

    fn json(what: &str, text: &str) -> Result<Value> {
        serde_json::from_str(text).map_err(|e| env_err(what, format!("malformed JSON: {e}")))
    }

    /// Submits `(custom_id, body)` requests; returns the batch id.
    pub(crate) async fn submit(&self, requests: &[(String, Value)]) -> Result<String> {
        match self.spec {
            Spec::Anthropic { .. } => {
                let body = json!({"requests": requests.iter().map(|(id, b)| json!({"custom_id": id, "params": b})).collect::<Vec<_>>()});
                let url = format!("{}/v1/messages/batches", self.base_url);
                let text = self
                    .send("creating the message batch", || {
                        self.request(reqwest::Method::POST, &url).json(&body)
                    })
                    .await?;
                id_of(&Self::json("creating the message batch", &text)?)
            }
            _ => {
                let mut jsonl = String::new();
                for (id, b) in requests {
                    jsonl.push_str(&json!({"custom_id": id, "method": "POST", "url": "/v1/chat/completions", "body": b}).to_string());
                    jsonl.push('\n');
                }
                // multipart/form-data by hand: two fields, a boundary that is not in the data
                let boundary = format!("sage-{}", &super::cache::key(&[&jsonl])[..24]);
                let form = format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"git-sage-batch.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n{jsonl}\r\n--{boundary}--\r\n"
                );
                let url = format!("{}/files", self.base_url);
                let text = self
                    .send("uploading the batch file", || {
                        self.request(reqwest::Method::POST, &url)
                            .header(
                                reqwest::header::CONTENT_TYPE,
                                format!("multipart/form-data; boundary={boundary}"),
                            )
                            .body(form.clone())
                    })
                    .await?;
                let file_id = id_of(&Self::json("uploading the batch file", &text)?)?;
                let body = json!({"input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h", "metadata": {"tool": "git-sage"}});
                let url = format!("{}/batches", self.base_url);
                let text = self
                    .send("creating the batch", || {
                        self.request(reqwest::Method::POST, &url).json(&body)
                    })
                    .await?;
                id_of(&Self::json("creating the batch", &text)?)
            }
        }
    }

    pub(crate) async fn status(&self, id: &str) -> Result<Status> {
        match self.spec {
            Spec::Anthropic { .. } => {
                let url = format!("{}/v1/messages/batches/{id}", self.base_url);
                let v = Self::json(
                    "checking the message batch",
                    &self
                        .send("checking the message batch", || {
                            self.request(reqwest::Method::GET, &url)
                        })
                        .await?,
                )?;
                let c = &v["request_counts"];
                let detail = format!(
                    "{} processing, {} succeeded, {} errored, {} expired",
                    c["processing"].as_u64().unwrap_or(0),
                    c["succeeded"].as_u64().unwrap_or(0),
                    c["errored"].as_u64().unwrap_or(0),
                    c["expired"].as_u64().unwrap_or(0)
                );
                Ok(match v["processing_status"].as_str().unwrap_or("") {
                    "ended" => Status::Ended {
                        output: v["results_url"].as_str().map(str::to_string),
                        errors: None,
                        detail,
                    },
                    _ => Status::Running { detail },
                })
            }
            _ => {
                let url = format!("{}/batches/{id}", self.base_url);
                let v = Self::json(
                    "checking the batch",
                    &self
                        .send("checking the batch", || {
                            self.request(reqwest::Method::GET, &url)
                        })
                        .await?,
                )?;
                let c = &v["request_counts"];
                let detail = format!(
                    "{} of {} done, {} failed",
                    c["completed"].as_u64().unwrap_or(0),
                    c["total"].as_u64().unwrap_or(0),
                    c["failed"].as_u64().unwrap_or(0)
                );
                let status = v["status"].as_str().unwrap_or("");
                Ok(match status {
                    "completed" => Status::Ended {
                        output: v["output_file_id"].as_str().map(str::to_string),
                        errors: v["error_file_id"].as_str().map(str::to_string),
                        detail,
                    },
                    "failed" | "expired" | "cancelled" | "cancelling" => {
                        let why = v
                            .pointer("/errors/data/0/message")
                            .and_then(Value::as_str)
                            .unwrap_or(status);
                        Status::Failed {
                            reason: format!("{status}: {why}"),
                        }
                    }
                    _ => Status::Running {
                        detail: format!("{status}, {detail}"),
                    },
                })
            }
        }
    }

    /// The answers of an ended batch, by custom id; a request that failed gives its reason.
    pub(crate) async fn results(
        &self,
        output: Option<&str>,
        errors: Option<&str>,
    ) -> Result<Vec<(String, std::result::Result<Reply, String>)>> {
        let mut out = Vec::new();
        match self.spec {
            Spec::Anthropic { .. } => {
                let Some(url) = output else { return Ok(out) };
                let text = self
                    .send("reading the batch results", || {
                        self.request(reqwest::Method::GET, url)
                    })
                    .await?;
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    let v = Self::json("reading the batch results", line)?;
                    let id = v["custom_id"].as_str().unwrap_or_default().to_string();
                    let r = match v.pointer("/result/type").and_then(Value::as_str) {
                        Some("succeeded") => Ok(anthropic_reply(&v["result"]["message"])),
                        Some(t) => Err(format!(
                            "{t}: {}",
                            v.pointer("/result/error/error/message")
                                .or(v.pointer("/result/error/message"))
                                .and_then(Value::as_str)
                                .unwrap_or("")
                        )),
                        None => Err("no result".into()),
                    };
                    out.push((id, r));
                }
            }
            _ => {
                for file in [output, errors].into_iter().flatten() {
                    let url = format!("{}/files/{file}/content", self.base_url);
                    let text = self
                        .send("reading the batch output", || {
                            self.request(reqwest::Method::GET, &url)
                        })
                        .await?;
                    for line in text.lines().filter(|l| !l.trim().is_empty()) {
                        let v = Self::json("reading the batch output", line)?;
                        let id = v["custom_id"].as_str().unwrap_or_default().to_string();
                        let code = v
                            .pointer("/response/status_code")
                            .and_then(Value::as_u64)
                            .unwrap_or(0);
                        let r = if code == 200 {
                            openai_reply(&v["response"]["body"]).map_err(|e| format!("{e:?}"))
                        } else {
                            let why = v
                                .pointer("/error/message")
                                .or(v.pointer("/response/body/error/message"))
                                .and_then(Value::as_str)
                                .unwrap_or("failed");
                            Err(format!("HTTP {code}: {why}"))
                        };
                        out.push((id, r));
                    }
                }
            }
        }
        Ok(out)
    }
}

fn id_of(v: &Value) -> Result<String> {
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| env_err("the provider's answer", "it has no id"))
}
