//! Reading transcripts: files or git blobs, peeked for detection, streamed line by line
//! (a 200 MB log is never held whole), tolerant of invalid UTF-8 and a truncated last line,
//! bounded in total and per line by the bytes actually read (a FIFO or `/dev/zero` has no
//! meaningful size).

use std::io::{BufRead, BufReader, Read};

use crate::files::{LINE_CAP, ReadError, SESSION_CAP, read_to_end_capped, size_text};

/// A reader that fails once more than `left` bytes have come through.
struct Capped<R> {
    inner: R,
    left: u64,
    cap: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("more than {} (reading stopped there)", size_text(self.cap)),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn io_error(e: ReadError) -> std::io::Error {
    match e {
        ReadError::Io(e) => e,
        other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
    }
}

/// A transcript's bytes, from a file or from memory (a git blob), with its first bytes
/// peeked for format detection.
pub(crate) struct Input {
    /// How the user named it (path or `REV:path`), for messages.
    pub name: String,
    head: Vec<u8>,
    rest: Box<dyn BufRead>,
}

/// How much of the start of a file format detection looks at.
pub(crate) const PEEK: usize = 64 << 10;

impl Input {
    pub(crate) fn from_reader(
        name: impl Into<String>,
        mut r: Box<dyn BufRead>,
    ) -> std::io::Result<Input> {
        let mut head = Vec::with_capacity(PEEK);
        (&mut r).take(PEEK as u64).read_to_end(&mut head)?;
        Ok(Input {
            name: name.into(),
            head,
            rest: r,
        })
    }

    pub(crate) fn from_file(
        name: impl Into<String>,
        path: &std::path::Path,
    ) -> std::io::Result<Input> {
        let f = crate::files::open_to_read(path)?;
        let capped = Capped {
            inner: f,
            left: SESSION_CAP,
            cap: SESSION_CAP,
        };
        Input::from_reader(name, Box::new(BufReader::with_capacity(256 << 10, capped)))
    }

    pub(crate) fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Input {
        Input::from_reader(name, Box::new(std::io::Cursor::new(bytes)))
            .expect("reading from memory cannot fail")
    }

    /// The first bytes (up to `PEEK`).
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }

    /// Everything, for formats that are one JSON document or small Markdown.
    pub(crate) fn read_all(self) -> std::io::Result<Vec<u8>> {
        let mut all = self.head;
        let mut rest = self.rest;
        read_to_end_capped(&mut rest, SESSION_CAP, &mut all).map_err(io_error)?;
        Ok(all)
    }

    /// Line by line.
    pub(crate) fn lines(self) -> Lines {
        Lines {
            reader: Box::new(std::io::Cursor::new(self.head).chain(self.rest)),
            buf: Vec::new(),
            line: 0,
        }
    }
}

/// A lending iterator over lines (without the newline), numbered from 1.
pub(crate) struct Lines {
    reader: Box<dyn BufRead>,
    buf: Vec<u8>,
    line: u64,
}

impl Lines {
    /// The next non-blank line read as a JSON record (invalid UTF-8 replaced first), or
    /// `None` at the end; the parse error is the caller's to report as a skipped line.
    /// (Claude Code logs are parsed zero-copy by their own loop instead.)
    pub(crate) fn next_json<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
    ) -> crate::error::Result<Option<(u64, serde_json::Result<T>)>> {
        loop {
            let next = self
                .next_line()
                .map_err(|e| crate::error::Error::input(format!("{name}: cannot read: {e}")))?;
            let Some((n, raw)) = next else {
                return Ok(None);
            };
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parse = |raw: &[u8]| match std::str::from_utf8(raw) {
                Ok(text) => serde_json::from_str(text),
                Err(_) => serde_json::from_str(&String::from_utf8_lossy(raw)),
            };
            let parsed = match parse(raw) {
                Err(e) if !e.is_eof() => match escape_controls(raw) {
                    Some(fixed) => parse(&fixed).map_err(|_| e),
                    None => Err(e),
                },
                other => other,
            };
            return Ok(Some((n, parsed)));
        }
    }

    /// The next line, or `None` at the end. Read errors end the input (and are returned).
    /// A line longer than `LINE_CAP`, or one whose memory cannot be had, is an error naming it.
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<(u64, &[u8])>> {
        self.buf.clear();
        let mut done = false;
        while !done {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            let (take, found) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let too_long = |line| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("line {line} is longer than {}", size_text(LINE_CAP as u64)),
                )
            };
            if self.buf.len() + take > LINE_CAP + 2 {
                return Err(too_long(self.line + 1));
            }
            if self.buf.capacity() - self.buf.len() < take {
                let want = self.buf.len().max(take).min(LINE_CAP + 2 - self.buf.len());
                self.buf
                    .try_reserve(want)
                    .map_err(|_| io_error(ReadError::OutOfMemory(self.buf.len())))?;
            }
            self.buf.extend_from_slice(&chunk[..take]);
            self.reader.consume(take);
            done = found;
        }
        if self.buf.is_empty() {
            return Ok(None);
        }
        self.line += 1;
        let mut end = self.buf.len();
        while end > 0 && matches!(self.buf[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        Ok(Some((self.line, &self.buf[..end])))
    }
}

/// A conversation folder of one JSON event per file (OpenHands V1: `events/event-NNNNN-*.json`),
/// as one JSONL text in file-name order; `None` when `dir` is no such folder.
pub(crate) fn folder_events(dir: &std::path::Path) -> Option<crate::error::Result<Vec<u8>>> {
    let events = dir.join("events");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&events)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        match crate::files::read_input(&f, "event", crate::files::DOC_CAP) {
            Ok(bytes) => {
                out.extend(bytes.iter().filter(|&&b| b != b'\n' && b != b'\r'));
                out.push(b'\n');
            }
            Err(e) => return Some(Err(e)),
        }
        if out.len() as u64 > SESSION_CAP {
            return Some(Err(crate::error::Error::input(format!(
                "cannot read session {}: more than {}",
                dir.display(),
                size_text(SESSION_CAP)
            ))));
        }
    }
    Some(Ok(out))
}

/// A JSON line with raw control characters inside its strings (a NUL or an escape byte a
/// tool printed) escaped as `\u00XX`, as JSON requires; `None` when there are none.
pub(crate) fn escape_controls(raw: &[u8]) -> Option<Vec<u8>> {
    if !raw.iter().any(|&b| b < 0x20) {
        return None;
    }
    let mut out = Vec::with_capacity(raw.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    for &b in raw {
        match b {
            _ if escaped => {
                escaped = false;
                out.push(b);
            }
            b'\\' if in_string => {
                escaped = true;
                out.push(b);
            }
            b'"' => {
                in_string = !in_string;
                out.push(b);
            }
            0..0x20 if in_string => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_survive_crlf_missing_newline_and_bad_utf8() {
        let input = Input::from_bytes("t", b"a\r\nb\n\xff\xfe c".to_vec());
        let mut l = input.lines();
        assert_eq!(
            l.next_line().unwrap().map(|(n, s)| (n, s.to_vec())),
            Some((1, b"a".to_vec()))
        );
        assert_eq!(
            l.next_line().unwrap().map(|(n, s)| (n, s.to_vec())),
            Some((2, b"b".to_vec()))
        );
        let (n, s) = l.next_line().unwrap().unwrap();
        assert_eq!(
            (n, String::from_utf8_lossy(s).into_owned()),
            (3, "\u{fffd}\u{fffd} c".to_string())
        );
        assert!(l.next_line().unwrap().is_none());
    }

    #[test]
    fn head_then_rest_reads_everything() {
        let big: Vec<u8> = (0..PEEK + 100).map(|i| b'a' + (i % 26) as u8).collect();
        let input = Input::from_bytes("t", big.clone());
        assert_eq!(input.head().len(), PEEK);
        assert_eq!(input.read_all().unwrap(), big);
    }
}
