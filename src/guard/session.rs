//! What the guard remembers of a session between two checks (`.git/sage/guard/sessions/`):
//! how far it has read and judged, so the check of a long session parses and judges only what
//! the agent added since (docs/guard.md#speed). Never committed; a record that no longer fits
//! the file (rewritten, truncated, another format) is dropped and the session read whole.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::policy::Prior;
use crate::error::{Error, Result};
use crate::transcript::{Format, Input, Transcript};

/// How many bytes before the end of what was read last are compared to tell an appended
/// file from a rewritten one.
const TAIL: u64 = 4096;

const VERSION: u32 = 1;

/// Where the window of the next check starts: a line that begins a turn, with the number of
/// the session's turns before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Cut {
    pub offset: u64,
    pub line: u64,
    pub turns: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    version: u32,
    transcript: String,
    /// The judge whose scores `prior` holds (`sage.guardJudge`, or `offline`).
    judge: String,
    format: Format,
    /// Bytes read so far, and a digest of the last `TAIL` of them.
    len: u64,
    tail: String,
    cut: Cut,
    prior: Prior,
}

/// The part of the session a check reads, and what earlier checks left.
pub(crate) struct Window {
    pub transcript: Transcript,
    pub cut: Cut,
    pub prior: Prior,
    bytes: Arc<Vec<u8>>,
    /// Where `bytes` starts in the file (before the cut when the tail had to be compared).
    start: u64,
    len: u64,
    tail: String,
    record: Option<PathBuf>,
}

/// Formats whose logs grow by whole lines: an earlier check's judgements still hold.
fn appendable(f: Format) -> bool {
    matches!(f, Format::ClaudeCode | Format::Codex)
}

/// Formats whose parse from a turn's first line gives that turn and the ones after it as the
/// parse of the whole file does (tests/it/guard.rs checks it on real logs): the next check can start
/// there. Not Codex: its paths are relative to the working directory its first record names.
fn resumable(f: Format) -> bool {
    matches!(f, Format::ClaudeCode)
}

struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let tail = &bytes[bytes.len().saturating_sub(TAIL as usize)..];
    Sha256::digest(tail)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The record's file for a transcript: named by a digest of its path.
fn record_path(dir: &Path, transcript: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let h: String = Sha256::digest(transcript.to_string_lossy().as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("{h}.json"))
}

fn read_from(path: &Path, from: u64) -> std::io::Result<Vec<u8>> {
    let mut f = crate::files::open_to_read(path)?;
    f.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::new();
    (&mut f)
        .take(crate::files::SESSION_CAP)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

/// Reads the session at `path`: from the cut of the record in `dir` when it still fits the
/// file, else whole. `whole` reads from the start every time, keeping only what was judged (a
/// model judge's prompts hold the whole prefix, and its cached answers are keyed by it).
pub(crate) fn read(dir: Option<&Path>, path: &Path, judge: &str, whole: bool) -> Result<Window> {
    let name = path.display().to_string();
    let cannot = |e: std::io::Error| Error::env(format!("cannot read {name}: {e}"));
    let record = dir.map(|d| record_path(d, path));
    let old: Option<Record> = record
        .as_deref()
        .and_then(|r| std::fs::read(r).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|r: &Record| {
            r.version == VERSION
                && r.transcript == name
                && r.judge == judge
                && appendable(r.format)
                && r.cut.offset <= r.len
        });
    if let Some(mut old) = old {
        let start = if whole {
            0
        } else {
            old.cut.offset.min(old.len.saturating_sub(TAIL))
        };
        let bytes = read_from(path, start).map_err(cannot)?;
        let seen = (old.len - start) as usize;
        if bytes.len() >= seen && digest(&bytes[..seen]) == old.tail {
            if whole && old.cut.offset > 0 {
                old.cut = Cut::default();
                old.prior.users.clear();
            }
            return window(name, bytes, start, old.cut, old.prior, old.format, record)
                .or_else(|_| read_whole(path, record_from(dir, path)));
        }
    }
    read_whole(path, record)
}

fn record_from(dir: Option<&Path>, path: &Path) -> Option<PathBuf> {
    dir.map(|d| record_path(d, path))
}

fn read_whole(path: &Path, record: Option<PathBuf>) -> Result<Window> {
    let name = path.display().to_string();
    let bytes = read_from(path, 0).map_err(|e| Error::env(format!("cannot read {name}: {e}")))?;
    let head = &bytes[..bytes.len().min(crate::transcript::lines::PEEK)];
    let format = crate::transcript::detect::detect(head, &name);
    let (cut, prior) = (Cut::default(), Prior::default());
    match format {
        Some(f) => window(name, bytes, 0, cut, prior, f, record),
        // Not a format we know: the parser says so, in its words.
        None => {
            let t = crate::transcript::parse(Input::from_bytes(name.clone(), bytes), None)?;
            Ok(Window {
                transcript: t,
                cut,
                prior,
                bytes: Arc::new(Vec::new()),
                start: 0,
                len: 0,
                tail: String::new(),
                record: None,
            })
        }
    }
}

fn window(
    name: String,
    bytes: Vec<u8>,
    start: u64,
    cut: Cut,
    prior: Prior,
    format: Format,
    record: Option<PathBuf>,
) -> Result<Window> {
    let len = start + bytes.len() as u64;
    let tail = digest(&bytes);
    let bytes = Arc::new(bytes);
    let skip = (cut.offset - start) as usize;
    let mut reader = std::io::Cursor::new(Shared(bytes.clone()));
    reader.set_position(skip as u64);
    let input = Input::from_reader(name, Box::new(reader))
        .map_err(|e| Error::env(format!("cannot read the session: {e}")))?;
    let transcript = crate::transcript::parse(input, Some(format))?;
    Ok(Window {
        transcript,
        cut,
        prior,
        bytes,
        start,
        len,
        tail,
        record: record.filter(|_| appendable(format)),
    })
}

impl Window {
    /// The session's number of the window's turn `n`.
    pub(crate) fn absolute(&self, n: u32) -> u32 {
        self.cut.turns + n
    }

    /// Keeps what this check learnt for the next one, with the next window starting at the
    /// window's last turn (it may still grow: the agent is writing it). Best effort: a record
    /// that cannot be written only makes the next check read the whole log.
    pub(crate) fn save(&self, prior: Prior, judge: &str, whole: bool) {
        let Some(path) = &self.record else { return };
        let last = self.transcript.turns.last();
        let cut = match last
            .and_then(|t| t.source.line)
            .filter(|_| !whole && resumable(self.transcript.format))
        {
            Some(line) if line > 1 => {
                let skip = (self.cut.offset - self.start) as usize;
                let rest = &self.bytes[skip..];
                match memchr::memchr_iter(b'\n', rest).nth(line as usize - 2) {
                    Some(i) => Cut {
                        offset: self.cut.offset + i as u64 + 1,
                        line: self.cut.line.max(1) + line - 1,
                        turns: self.absolute(self.transcript.turns.len() as u32) - 1,
                    },
                    None => self.cut,
                }
            }
            _ => self.cut,
        };
        let prior = prior.before(cut.offset, cut.turns);
        let rec = Record {
            version: VERSION,
            transcript: self.transcript.source.clone(),
            judge: judge.to_string(),
            format: self.transcript.format,
            len: self.len,
            tail: self.tail.clone(),
            cut,
            prior,
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        // Written aside, then renamed: two checks at once never leave half a record.
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        if let Ok(text) = serde_json::to_vec(&rec)
            && std::fs::write(&tmp, text).is_ok()
            && std::fs::rename(&tmp, path).is_err()
        {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}
