//! The code forge (GitHub): one pull-request comment per category, created once and then
//! updated, and the job summary when no comment can be written.
//!
//! Never a duplicate comment: a comment is created only after the listing said there is none,
//! and a creation that failed in a way that may have reached GitHub is looked for before it is
//! tried again.

use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{Error, Result};

/// GitHub refuses comments longer than this many characters.
const COMMENT_MAX: usize = 65_536;

/// Where and as whom to write.
#[derive(Debug, Clone)]
pub(crate) struct Forge {
    /// `https://api.github.com`, or a GitHub Enterprise Server's `/api/v3`.
    pub api: String,
    /// `owner/name`.
    pub repo: String,
    pub token: String,
    pub timeout: Duration,
    /// Tries of a request that failed in a way that may pass (5xx, 429, a timeout).
    pub tries: u32,
    /// The first wait between tries; each next one doubles.
    pub backoff: Duration,
}

/// What happened to the comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Created { url: String },
    Updated { url: String },
}

/// Why no comment was written, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub String);

/// The hidden line that marks our comment of `category` (a run's `--category`).
pub(crate) fn marker(category: &str) -> String {
    let clean: String = category
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        .collect();
    format!("<!-- git-sage:pr-comment {clean} -->")
}

/// The comment's body: the marker, then the report, cut at a line when GitHub would refuse
/// its length (the job summary keeps the whole report).
pub(crate) fn body(marker: &str, report: &str) -> String {
    let note = "\n\n… (cut here: GitHub takes comments of 65,536 characters at most; the whole report is in the job summary)\n";
    let room = COMMENT_MAX - marker.chars().count() - note.chars().count() - 1;
    if report.chars().count() <= room {
        return format!("{marker}\n{report}");
    }
    let mut cut = String::new();
    for line in report.split_inclusive('\n') {
        if cut.chars().count() + line.chars().count() > room {
            break;
        }
        cut.push_str(line);
    }
    format!("{marker}\n{}{note}", cut.trim_end())
}

/// One request's failure: whether trying again may help.
enum Failure {
    Transient(String),
    Final(String),
}

impl Forge {
    /// Creates or updates the one comment holding `marker` on pull request `pr`.
    pub(crate) fn upsert(&self, pr: u64, marker: &str, body: &str) -> Result<Outcome, Refused> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Refused(format!("cannot start the HTTP runtime: {e}")))?;
        rt.block_on(self.upsert_async(pr, marker, body))
    }

    async fn upsert_async(&self, pr: u64, marker: &str, body: &str) -> Result<Outcome, Refused> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(self.timeout)
            .user_agent(concat!("git-sage/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Refused(format!("cannot build the HTTP client: {e}")))?;
        if let Some((id, _)) = self.find(&client, pr, marker).await? {
            let url = format!("{}/repos/{}/issues/comments/{id}", self.api, self.repo);
            let v = self
                .send(
                    &client,
                    reqwest::Method::PATCH,
                    &url,
                    body,
                    "update the comment",
                )
                .await
                .map_err(|f| Refused(reason(f)))?;
            return Ok(Outcome::Updated { url: html_url(&v) });
        }
        let url = format!("{}/repos/{}/issues/{pr}/comments", self.api, self.repo);
        let mut wait = self.backoff;
        for attempt in 1..=self.tries {
            match self
                .send_once(&client, reqwest::Method::POST, &url, body)
                .await
            {
                Ok(v) => return Ok(Outcome::Created { url: html_url(&v) }),
                Err(Failure::Final(m)) => {
                    return Err(Refused(format!("cannot create the comment: {m}")));
                }
                Err(Failure::Transient(m)) => {
                    if attempt == self.tries {
                        return Err(Refused(format!("cannot create the comment: {m}")));
                    }
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                    // The failed request may have reached GitHub: look before trying again.
                    if let Some((_, url)) = self.find(&client, pr, marker).await? {
                        return Ok(Outcome::Created { url });
                    }
                }
            }
        }
        unreachable!("the loop returns on its last try")
    }

    /// Our comment on the pull request (the oldest, when earlier tools left several): its id
    /// and address.
    async fn find(
        &self,
        client: &reqwest::Client,
        pr: u64,
        marker: &str,
    ) -> Result<Option<(u64, String)>, Refused> {
        for page in 1..=100 {
            let url = format!(
                "{}/repos/{}/issues/{pr}/comments?per_page=100&page={page}",
                self.api, self.repo
            );
            let v = self
                .send(client, reqwest::Method::GET, &url, "", "list the comments")
                .await
                .map_err(|f| Refused(reason(f)))?;
            let Some(items) = v.as_array() else {
                return Err(Refused(
                    "cannot list the comments: GitHub's answer is not a list".into(),
                ));
            };
            let ours = items.iter().find(|c| {
                c["body"]
                    .as_str()
                    .is_some_and(|b| b.lines().next() == Some(marker))
            });
            if let Some(c) = ours {
                let id = c["id"].as_u64().ok_or_else(|| {
                    Refused("cannot list the comments: a comment without an id".into())
                })?;
                return Ok(Some((id, html_url(c))));
            }
            if items.len() < 100 {
                return Ok(None);
            }
        }
        Ok(None)
    }

    /// A request, tried again while it fails in a way that may pass.
    async fn send(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        url: &str,
        body: &str,
        what: &str,
    ) -> Result<Value, Failure> {
        let mut wait = self.backoff;
        for attempt in 1..=self.tries {
            match self.send_once(client, method.clone(), url, body).await {
                Err(Failure::Transient(_)) if attempt < self.tries => {
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(Failure::Transient(m) | Failure::Final(m)) => {
                    return Err(Failure::Final(format!("cannot {what}: {m}")));
                }
                Ok(v) => return Ok(v),
            }
        }
        Err(Failure::Final(format!("cannot {what}")))
    }

    async fn send_once(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        url: &str,
        body: &str,
    ) -> Result<Value, Failure> {
        let mut req = client
            .request(method.clone(), url)
            .bearer_auth(&self.token)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28");
        if method != reqwest::Method::GET {
            req = req.json(&json!({ "body": body }));
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Err(Failure::Transient(format!(
                    "no answer within {} s",
                    self.timeout.as_secs_f64()
                )));
            }
            Err(e) => return Err(Failure::Transient(without_url(&e))),
        };
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        if status.is_success() {
            return serde_json::from_str(&text)
                .map_err(|e| Failure::Final(format!("GitHub's answer is not JSON: {e}")));
        }
        let said = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_default();
        let said = crate::redact::redact(&said).0;
        let m = match said.is_empty() {
            true => format!("HTTP {}", status.as_u16()),
            false => format!("HTTP {}: {said}", status.as_u16()),
        };
        match status.as_u16() {
            429 => Err(Failure::Transient(m)),
            _ if status.is_server_error() => Err(Failure::Transient(m)),
            _ => Err(Failure::Final(m)),
        }
    }
}

fn reason(f: Failure) -> String {
    match f {
        Failure::Transient(m) | Failure::Final(m) => m,
    }
}

fn html_url(v: &Value) -> String {
    v["html_url"].as_str().unwrap_or_default().to_string()
}

/// A transport error without the address (it is in the line already) or the token.
fn without_url(e: &reqwest::Error) -> String {
    let s = e.to_string();
    match s.find(" for url (") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Appends `text` to the job summary file (`$GITHUB_STEP_SUMMARY`).
pub(crate) fn append_summary(path: &std::path::Path, text: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            Error::env(format!(
                "cannot write the job summary {}: {e}",
                path.display()
            ))
        })?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.write_all(b"\n"))
        .map_err(|e| {
            Error::env(format!(
                "cannot write the job summary {}: {e}",
                path.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_report_is_cut_at_a_line_within_githubs_limit() {
        let m = marker("git-sage");
        let line = "x".repeat(99) + "\n";
        let report = line.repeat(1_000);
        let b = body(&m, &report);
        assert!(b.chars().count() <= COMMENT_MAX, "{}", b.len());
        assert!(b.starts_with(&format!("{m}\n")));
        assert!(b.contains("the whole report is in the job summary"));
        assert!(
            b.lines()
                .filter(|l| l.starts_with('x'))
                .all(|l| l.len() == 99)
        );
        assert_eq!(body(&m, "short"), format!("{m}\nshort"));
    }

    #[test]
    fn the_marker_keeps_only_plain_characters() {
        assert_eq!(
            marker("sage --> <b>"),
            "<!-- git-sage:pr-comment sage--b -->"
        );
    }
}
