//! Reading transcripts: files or git blobs, peeked for detection, streamed line by line
//! (a 200 MB log is never held whole), tolerant of invalid UTF-8 and a truncated last line.

use std::io::{BufRead, BufReader, Read};

/// A transcript's bytes, from a file or from memory (a git blob), with its first bytes
/// peeked for format detection.
pub struct Input {
    /// How the user named it (path or `REV:path`), for messages.
    pub name: String,
    head: Vec<u8>,
    rest: Box<dyn BufRead>,
}

/// How much of the start of a file format detection looks at.
pub const PEEK: usize = 64 << 10;

impl Input {
    pub fn from_reader(name: impl Into<String>, mut r: Box<dyn BufRead>) -> std::io::Result<Input> {
        let mut head = Vec::with_capacity(PEEK);
        (&mut r).take(PEEK as u64).read_to_end(&mut head)?;
        Ok(Input {
            name: name.into(),
            head,
            rest: r,
        })
    }

    pub fn from_file(name: impl Into<String>, path: &std::path::Path) -> std::io::Result<Input> {
        let f = std::fs::File::open(path)?;
        Input::from_reader(name, Box::new(BufReader::with_capacity(256 << 10, f)))
    }

    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Input {
        Input::from_reader(name, Box::new(std::io::Cursor::new(bytes)))
            .expect("reading from memory cannot fail")
    }

    /// The first bytes (up to `PEEK`).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Everything, for formats that are one JSON document or small Markdown.
    pub fn read_all(self) -> std::io::Result<Vec<u8>> {
        let mut all = self.head;
        let mut rest = self.rest;
        rest.read_to_end(&mut all)?;
        Ok(all)
    }

    /// Line by line.
    pub fn lines(self) -> Lines {
        Lines {
            reader: Box::new(std::io::Cursor::new(self.head).chain(self.rest)),
            buf: Vec::new(),
            line: 0,
        }
    }
}

/// A lending iterator over lines (without the newline), numbered from 1.
pub struct Lines {
    reader: Box<dyn BufRead>,
    buf: Vec<u8>,
    line: u64,
}

impl Lines {
    /// The next non-blank line read as a JSON record (invalid UTF-8 replaced first), or
    /// `None` at the end; the parse error is the caller's to report as a skipped line.
    /// (Claude Code logs are parsed zero-copy by their own loop instead.)
    pub fn next_json<T: serde::de::DeserializeOwned>(
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
            let parsed = match std::str::from_utf8(raw) {
                Ok(text) => serde_json::from_str(text),
                Err(_) => serde_json::from_str(&String::from_utf8_lossy(raw)),
            };
            return Ok(Some((n, parsed)));
        }
    }

    /// The next line, or `None` at the end. Read errors end the input (and are returned).
    pub fn next_line(&mut self) -> std::io::Result<Option<(u64, &[u8])>> {
        self.buf.clear();
        let n = self.reader.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
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

/// Text of possibly invalid UTF-8, replacing what is not.
pub fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
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
            (n, text(s).into_owned()),
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
