//! The user's files: reads capped by the bytes actually read, and outputs that replace regular
//! files atomically but write FIFOs, devices and symlink targets in place.
//!
//! Why not `metadata().len()`: a FIFO, `/dev/zero` or a file still being written report a size
//! that says nothing about what a read returns. Why not always temp file + rename: a rename
//! turns `--out /dev/stdout`, a FIFO or a symlinked `CLAUDE.md` into a regular file, and as
//! root it can replace a device node.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Refuses to write `path` when it lies in `worktree` and it, or a folder on the way to it,
/// is a symbolic link that leads out of the worktree (or nowhere): a link committed in a
/// repository must not make git sage append to `~/.bashrc`. Links that stay inside are
/// followed; parts not made yet are fine; a path outside the worktree is the user's own
/// choice and is not looked at.
pub(crate) fn refuse_link_out(worktree: &Path, path: &Path, what: &str) -> Result<()> {
    let Ok(rel) = path.strip_prefix(worktree) else {
        return Ok(());
    };
    let root = worktree
        .canonicalize()
        .map_err(|e| Error::env(format!("cannot read {}: {e}", worktree.display())))?;
    let mut p = worktree.to_path_buf();
    for part in rel.components() {
        p.push(part);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                // A link to a file not made yet: where its folder really is.
                let real = p.canonicalize().or_else(|_| {
                    let to = p.parent().unwrap_or(worktree).join(std::fs::read_link(&p)?);
                    let dir = to.parent().unwrap_or(worktree).canonicalize()?;
                    Ok::<_, io::Error>(dir.join(to.file_name().unwrap_or_default()))
                });
                if real.is_ok_and(|real| real.starts_with(&root)) {
                    continue;
                }
                let to = std::fs::read_link(&p)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                return Err(Error::input(format!(
                    "{} is a symbolic link to {to}, outside the worktree: git sage does not write the {what} through it",
                    p.strip_prefix(worktree).unwrap_or(&p).display()
                ))
                .hint("replace the link with a plain file or folder of the worktree"));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::env(format!("cannot read {}: {e}", p.display()))),
        }
    }
    Ok(())
}

/// Findings, manifests, templates, saved scores: anything read whole and parsed whole.
pub(crate) const DOC_CAP: u64 = 256 << 20;
/// Session transcripts (streamed line by line, but bounded in total).
pub(crate) const SESSION_CAP: u64 = 4 << 30;
/// One line of a transcript.
pub(crate) const LINE_CAP: usize = 256 << 20;

/// `bytes` in binary units for messages ("256 MiB").
pub(crate) fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// Why a capped read stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    Io(io::Error),
    /// More than the cap was there; reading stopped at the cap.
    TooLarge(u64),
    /// Memory for the bytes could not be had (under a memory limit).
    OutOfMemory(usize),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge(cap) => {
                write!(f, "more than {} (reading stopped there)", size_text(*cap))
            }
            ReadError::OutOfMemory(n) => write!(
                f,
                "out of memory after {} (is a memory limit set?)",
                size_text(*n as u64)
            ),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// Reads at most `cap` bytes from `r`; more is an error, and so is an allocation that fails.
pub(crate) fn read_to_end_capped(
    r: &mut dyn Read,
    cap: u64,
    out: &mut Vec<u8>,
) -> std::result::Result<(), ReadError> {
    let mut chunk = [0u8; 64 << 10];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if out.len() as u64 + n as u64 > cap {
            return Err(ReadError::TooLarge(cap));
        }
        if out.capacity() - out.len() < n {
            // Doubling, as Vec does, but a failure is an error rather than an abort.
            let want = out.len().max(n).min(cap as usize - out.len());
            out.try_reserve(want)
                .map_err(|_| ReadError::OutOfMemory(out.len()))?;
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// The bytes of a user's file, `what` naming it in messages ("finding", "session"); exit 2
/// when it cannot be read or is larger than `cap`.
pub(crate) fn read_input(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>> {
    let fail = |e: ReadError| {
        let too_large = matches!(e, ReadError::TooLarge(_));
        let e = Error::input(format!("cannot read {what} {}: {e}", path.display()));
        match too_large {
            true => e.hint(
                "is it the right file? a device or a FIFO that never ends cannot be read whole",
            ),
            false => e,
        }
    };
    let mut f = open_to_read(path).map_err(|e| fail(e.into()))?;
    let mut out = Vec::new();
    read_to_end_capped(&mut f, cap, &mut out).map_err(fail)?;
    Ok(out)
}

/// `read_input` as text; invalid UTF-8 is an error naming the byte offset.
pub(crate) fn read_text(path: &Path, what: &str, cap: u64) -> Result<String> {
    let bytes = read_input(path, what, cap)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::input(format!(
            "{what} {} is not UTF-8 text (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Like `read_text`, but a missing file is `None`.
pub(crate) fn read_text_if_exists(path: &Path, what: &str, cap: u64) -> Result<Option<String>> {
    // `metadata` follows links: a link to a file not made yet holds nothing either.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        _ => read_text(path, what, cap).map(Some),
    }
}

/// Writes a report or data file the user named. Regular files (and new ones) are replaced
/// atomically, keeping their permissions; a symlink's target is written (the link stays);
/// FIFOs, devices and other special files are opened and written in place.
pub(crate) fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_file() => replace_atomically(&target, bytes, Some(m.permissions())),
        Ok(m) if m.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(m) => {
            let mut f = open_bounded(OpenOptions::new().write(true), &target, is_fifo(&m))?;
            f.write_all(bytes)?;
            f.flush()
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => replace_atomically(&target, bytes, None),
        Err(e) => Err(e),
    }
}

/// How long a write waits for a process to open a FIFO for reading.
const FIFO_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[cfg(unix)]
fn is_fifo(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::Metadata) -> bool {
    false
}

/// Opens `path` with `opts`. Opening a FIFO waits for the other end, for ever: here, for
/// [`FIFO_WAIT`] at most (the opening thread is left behind; the command ends with the
/// error). A FIFO whose other end is there (`--session <(…)`) opens at once.
fn open_bounded(opts: &OpenOptions, path: &Path, fifo: bool) -> io::Result<File> {
    if !fifo {
        return opts.open(path);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (p, o) = (path.to_path_buf(), opts.clone());
    std::thread::spawn(move || {
        let _ = tx.send(o.open(p));
    });
    rx.recv_timeout(FIFO_WAIT).unwrap_or_else(|_| {
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "a FIFO no process opened at the other end within {} s",
                FIFO_WAIT.as_secs()
            ),
        ))
    })
}

/// Opens `path` for reading, a FIFO with a bounded wait for its writer.
pub(crate) fn open_to_read(path: &Path) -> io::Result<File> {
    let fifo = std::fs::metadata(path).is_ok_and(|m| is_fifo(&m));
    open_bounded(OpenOptions::new().read(true), path, fifo)
}

/// The path a write to `path` lands on: symlinks followed, a dangling link's target included.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Temp file in the same directory, then rename: readers see the old bytes or the new.
fn replace_atomically(
    path: &Path,
    bytes: &[u8],
    keep: Option<std::fs::Permissions>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // As a plain create would: 0666 less the umask.
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = b.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.flush()?;
    if let Some(perm) = keep {
        tmp.as_file().set_permissions(perm)?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes a file git-sage owns (cache entries, results): atomically, whatever was there.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_atomically(path, bytes, None)
}

/// YAML nested deeper than this is refused before it is parsed: the YAML parser's handling of
/// flow collections (`[[[[…`) is quadratic in their depth (100 KB took 9 s), and no file
/// git sage reads nests more than a few levels.
pub(crate) const YAML_MAX_DEPTH: usize = 64;

/// The line at which `text` nests flow collections deeper than `YAML_MAX_DEPTH`, if it does.
/// Brackets inside quotes and comments do not count; an approximation that errs on the side
/// of parsing.
pub(crate) fn yaml_too_deep(text: &str) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut quote: Option<char> = None;
    let mut prev = '\n';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '\n') => {
                line += 1;
                if quote == Some('#') {
                    quote = None;
                }
            }
            (Some('#'), _) => {}
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '#') if prev.is_whitespace() => quote = Some('#'),
            (None, '"' | '\'') if prev.is_whitespace() || "[{,:".contains(prev) => quote = Some(c),
            (None, '[' | '{') => {
                depth += 1;
                if depth > YAML_MAX_DEPTH {
                    return Some(line);
                }
            }
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = c;
    }
    None
}

/// Parses YAML from a user's file: too-deep nesting refused at once, errors as one
/// `file:line: what` line.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str, shown: &str) -> Result<T> {
    if let Some(line) = yaml_too_deep(text) {
        return Err(Error::input(format!(
            "{shown}:{line}: nested deeper than {YAML_MAX_DEPTH} levels"
        )));
    }
    serde_yaml::from_str(text).map_err(|e| match control_char(text) {
        // The library says where only as a byte position on "line 1".
        Some((line, col, c)) if e.to_string().contains("control characters") => {
            Error::input(format!(
                "{shown}:{line}: control character U+{:04X} at column {col}; YAML allows tab, \
                 line breaks and printable characters only",
                c as u32
            ))
        }
        _ => yaml_error(shown, &e),
    })
}

/// The line and column (from 1) of the first character YAML does not allow in a file.
fn control_char(text: &str) -> Option<(usize, usize, char)> {
    let bad = |c: char| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{85}'))
            || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    text.lines().enumerate().find_map(|(i, l)| {
        l.chars()
            .position(bad)
            .map(|col| (i + 1, col + 1, l.chars().nth(col).expect("found there")))
    })
}

/// A YAML error as `file:line: message` (the library's own " at line L column C" dropped).
pub(crate) fn yaml_error(shown: &str, e: &serde_yaml::Error) -> Error {
    let line = e
        .location()
        .map(|l| format!(":{}", l.line()))
        .unwrap_or_default();
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg);
    Error::input(format!("{shown}{line}: {msg}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_yaml_is_refused_quickly_with_its_line() {
        let deep = format!("file: a.py\nfragment: {}", "[".repeat(100_000));
        let t = std::time::Instant::now();
        assert_eq!(yaml_too_deep(&deep), Some(2));
        assert!(t.elapsed().as_millis() < 500);
        assert_eq!(
            yaml_too_deep("a: \"[[[[\"\nb: '{{{{' # [[[[\nc: [[1], {d: [2]}]\n"),
            None
        );
        let e = parse_yaml::<serde_json::Value>(&deep, "f.yaml").unwrap_err();
        assert!(e.to_string().starts_with("f.yaml:2: nested deeper"), "{e}");
        let e = parse_yaml::<serde_json::Value>("a: [1\nb: 2\n", "f.yaml").unwrap_err();
        assert!(e.to_string().starts_with("f.yaml:"), "{e}");
    }

    #[test]
    fn a_control_character_is_named_on_its_own_line() {
        let text = "a: 1\n# x\n\n\n\n\n\nb: \"x\u{1}y\"\n";
        let e = parse_yaml::<serde_json::Value>(text, "f.yaml").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.yaml:8: control character U+0001 at column 6"),
            "{e}"
        );
    }

    #[test]
    fn capped_reads_stop_at_the_cap() {
        let mut src = io::repeat(0).take(10_000);
        let mut out = Vec::new();
        assert!(matches!(
            read_to_end_capped(&mut src, 4096, &mut out),
            Err(ReadError::TooLarge(4096))
        ));
        let mut src = io::repeat(1).take(4096);
        let mut out = Vec::new();
        read_to_end_capped(&mut src, 4096, &mut out).unwrap();
        assert_eq!(out.len(), 4096);
    }

    #[cfg(unix)]
    #[test]
    fn outputs_keep_links_and_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.md");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink("real.md", &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // a dangling link creates its target
        let dangling = dir.path().join("d.md");
        std::os::unix::fs::symlink("made.md", &dangling).unwrap();
        write_output(&dangling, b"x").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.md")).unwrap(),
            "x"
        );
        assert!(write_output(dir.path(), b"x").is_err());
    }
}
