//! `batch --batch-api`: a first pass over the cases collects every judge request the cache
//! cannot answer, submits them through the provider's batch interface, waits (or stops and
//! resumes on the next run: the batch ids are kept next to the results file), and puts the
//! answers into the cache — after which the normal run finds every answer there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Case;
use super::run::{self, RunOptions};
use crate::error::{Error, Result};
use crate::files::write_atomic;
use crate::judge::backends::Spec;
use crate::judge::batch_api::{Provider, Status};
use crate::judge::cache::Entry;
use crate::judge::run::Deferred;

const STATE_SCHEMA: &str = "sage.judge-batches/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Submitted {
    judge: String,
    base_url: String,
    id: String,
    /// custom id → cache key
    requests: BTreeMap<String, String>,
    collected: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outcome: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    schema: String,
    /// The program that last wrote the file; absent in files written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<crate::tool::Tool>,
    batches: Vec<Submitted>,
}

pub(crate) fn state_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".judge-batches.json");
    PathBuf::from(s)
}

fn load(path: &Path) -> Result<State> {
    match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| {
            Error::input(format!("{}: {e}", path.display()))
                .hint("delete the file to start the judge batch afresh")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State {
            schema: STATE_SCHEMA.into(),
            tool: None,
            batches: Vec::new(),
        }),
        Err(e) => Err(Error::env(format!("cannot read {}: {e}", path.display()))),
    }
}

fn save(path: &Path, s: &State) -> Result<()> {
    // Each save rewrites the whole file, so it names this build whoever wrote it before.
    let s = State {
        tool: Some(crate::tool::Tool::current()),
        ..s.clone()
    };
    let bytes = serde_json::to_vec_pretty(&s)
        .map_err(|e| Error::env(format!("cannot encode {}: {e}", path.display())))?;
    write_atomic(path, &bytes)
        .map_err(|e| Error::env(format!("cannot write {}: {e}", path.display())))
}

/// A custom id the providers accept (`[A-Za-z0-9_-]{1,64}`), unique per request.
fn custom_id(cache_key: &str) -> String {
    format!("sage-{}", &cache_key[..cache_key.len().min(48)])
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::env(format!("cannot start the async runtime: {e}")))
}

/// Whether the run can use the batch interface at all.
pub(crate) fn check(opts: &RunOptions) -> Result<()> {
    if !opts.judge.cache.enabled() {
        return Err(Error::input(
            "--batch-api needs the answer cache: drop --no-cache",
        ));
    }
    for spec in &opts.judge.judges {
        if !matches!(spec, Spec::OpenAi { .. } | Spec::Anthropic { .. }) {
            return Err(Error::input(format!(
                "--batch-api works with openai:MODEL and anthropic:MODEL judges, not {}",
                spec.name()
            )));
        }
    }
    Ok(())
}

/// Makes sure every judge answer the cases need is in the cache, through the batch interface.
/// Returns false when a batch is still running and `wait` is off.
pub(crate) fn prepare(
    cases: &[&Case],
    opts: &RunOptions,
    out: &Path,
    poll: Duration,
    wait: bool,
    quiet: bool,
) -> Result<bool> {
    check(opts)?;
    let path = state_path(out);
    let mut state = load(&path)?;
    if state.batches.iter().all(|b| b.collected) {
        // First pass: what would the run ask?
        let deferred: Arc<Mutex<Vec<Deferred>>> = Arc::default();
        let mut o = opts.clone();
        o.judge.defer = Some(deferred.clone());
        run::run_all(cases, &o, |_| Ok(()))?;
        let mut list = std::mem::take(&mut *deferred.lock().expect("deferred"));
        list.sort_by(|a, b| a.cache_key.cmp(&b.cache_key));
        list.dedup_by(|a, b| a.cache_key == b.cache_key);
        if list.is_empty() {
            return Ok(true);
        }
        let mut by_judge: BTreeMap<String, Vec<Deferred>> = BTreeMap::new();
        for d in list {
            by_judge.entry(d.judge.name()).or_default().push(d);
        }
        let rt = runtime()?;
        for (name, reqs) in by_judge {
            let provider = Provider::new(&reqs[0].judge)?;
            let lines: Vec<(String, serde_json::Value)> = reqs
                .iter()
                .map(|d| (custom_id(&d.cache_key), d.body.clone()))
                .collect();
            let id = rt.block_on(provider.submit(&lines))?;
            if !quiet {
                crate::say!(
                    "git-sage: submitted {} judge request(s) to {name} as batch {id} (ids kept in {})",
                    lines.len(),
                    path.display()
                );
            }
            state.batches.push(Submitted {
                judge: name,
                base_url: provider.base_url().to_string(),
                id,
                requests: reqs
                    .iter()
                    .map(|d| (custom_id(&d.cache_key), d.cache_key.clone()))
                    .collect(),
                collected: false,
                outcome: None,
            });
            // Saved after every submission: an interruption never loses a batch id.
            save(&path, &state)?;
        }
    }
    let rt = runtime()?;
    loop {
        let mut running = 0;
        for b in state.batches.iter_mut().filter(|b| !b.collected) {
            let spec = Spec::parse(&b.judge)?;
            let provider = Provider::new(&spec)?;
            if provider.base_url() != b.base_url {
                return Err(Error::input(format!(
                    "batch {} was submitted to {}, but the judge now points at {}",
                    b.id,
                    b.base_url,
                    provider.base_url()
                ))
                .hint(format!(
                    "restore the base URL, or delete {} to submit afresh",
                    path.display()
                )));
            }
            match rt.block_on(provider.status(&b.id))? {
                Status::Running { detail } => {
                    running += 1;
                    if !quiet {
                        crate::say!("git-sage: batch {} ({}): {detail}", b.id, b.judge);
                    }
                }
                Status::Failed { reason } => {
                    crate::say!(
                        "git-sage: warning: batch {} failed ({reason}); its requests will be made one by one",
                        b.id
                    );
                    b.collected = true;
                    b.outcome = Some(reason);
                }
                Status::Ended {
                    output,
                    errors,
                    detail,
                } => {
                    let answers =
                        rt.block_on(provider.results(output.as_deref(), errors.as_deref()))?;
                    let (mut stored, mut failed) = (0, 0);
                    for (id, r) in answers {
                        match (b.requests.get(&id), r) {
                            (Some(key), Ok(reply)) => {
                                // The answer is paid for: losing it silently would mean paying again.
                                opts.judge
                                    .cache
                                    .try_put(
                                        key,
                                        &Entry {
                                            answer: reply.text,
                                            usage: reply.usage,
                                        },
                                    )
                                    .map_err(|e| {
                                        Error::env(format!(
                                            "cannot store a batch answer in the judge cache: {e}"
                                        ))
                                    })?;
                                stored += 1;
                            }
                            (Some(_), Err(_)) => failed += 1,
                            (None, _) => {}
                        }
                    }
                    if !quiet {
                        crate::say!(
                            "git-sage: batch {} ended ({detail}): {stored} answer(s) stored{}",
                            b.id,
                            if failed > 0 {
                                format!(", {failed} left to ask one by one")
                            } else {
                                String::new()
                            }
                        );
                    }
                    b.collected = true;
                    b.outcome = Some(detail);
                }
            }
        }
        save(&path, &state)?;
        if running == 0 {
            return Ok(true);
        }
        if !wait {
            return Ok(false);
        }
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_file_of_an_earlier_build_is_read_and_saved_naming_this_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl.judge-batches.json");
        std::fs::write(&p, r#"{"schema":"sage.judge-batches/1","batches":[]}"#).unwrap();
        let s = load(&p).unwrap();
        assert!(s.tool.is_none());
        save(&p, &s).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["tool"], crate::tool::Tool::json());
        assert!(text.find("\"tool\"") < text.find("\"batches\""), "{text}");
    }
}
