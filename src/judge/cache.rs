//! A content-addressed cache of judge answers on disk: the key covers the backend, model,
//! base URL, the full rendered prompt, the parameters and the template version, so a changed
//! input is a new key. Writes are atomic (temporary file, then rename): an interrupted run
//! leaves finished answers behind, and the next run resumes from them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub(crate) use super::usage::Usage;

/// A stored answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub answer: String,
    #[serde(default)]
    pub usage: Usage,
}

/// The key of a request: a hash of everything that decides the answer.
pub(crate) fn key(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex(&h.finalize())
}

#[derive(Debug, Clone)]
pub(crate) struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    pub(crate) fn new(dir: Option<PathBuf>) -> Cache {
        Cache {
            dir: dir.map(|d| d.join("judge")),
        }
    }

    pub(crate) fn disabled() -> Cache {
        Cache { dir: None }
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(&key[..2]).join(format!("{key}.json")))
    }

    pub(crate) fn get(&self, key: &str) -> Option<Entry> {
        let p = self.path(key)?;
        let text = std::fs::read_to_string(p).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(crate) fn enabled(&self) -> bool {
        self.dir.is_some()
    }

    /// Stores an answer, saying when it could not.
    pub(crate) fn try_put(&self, key: &str, entry: &Entry) -> std::io::Result<()> {
        let Some(p) = self.path(key) else {
            return Err(std::io::Error::other("the cache is disabled"));
        };
        crate::files::write_atomic(&p, &stored(entry).map_err(std::io::Error::other)?)
    }

    /// Stores an answer; a cache that cannot be written only costs a repeat call later.
    pub(crate) fn put(&self, key: &str, entry: &Entry) {
        let Some(p) = self.path(key) else { return };
        let _ = crate::files::write_atomic(&p, &stored(entry).unwrap_or_default());
    }
}

/// An entry as stored: a model may say a secret it was never shown (from its training, or a
/// guess), and what is kept on disk is redacted like everything else.
fn stored(entry: &Entry) -> serde_json::Result<Vec<u8>> {
    let (answer, n) = crate::redact::redact_document(&entry.answer);
    if n == 0 {
        return serde_json::to_vec(entry);
    }
    serde_json::to_vec(&Entry {
        answer,
        ..entry.clone()
    })
}

/// Bytes as lowercase hexadecimal: the cache's keys, prompt digests and template versions.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_key_separation() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(Some(dir.path().to_path_buf()));
        let k = key(&["openai", "m", "prompt"]);
        assert!(c.get(&k).is_none());
        let e = Entry {
            answer: "{}".into(),
            usage: Usage {
                input_tokens: 3,
                ..Default::default()
            },
        };
        c.put(&k, &e);
        assert_eq!(c.get(&k), Some(e));
        // length-prefixed parts: ["ab","c"] and ["a","bc"] differ
        assert_ne!(key(&["ab", "c"]), key(&["a", "bc"]));
        assert!(Cache::disabled().get(&k).is_none());
    }
}
