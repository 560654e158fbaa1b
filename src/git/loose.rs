//! Loose objects checked before libgit2 reads them.
//!
//! libgit2 up to 1.9 loops forever, at full CPU, on a loose object whose zlib stream is cut
//! short (a crash or a full disk while writing; libgit2 issue 7342, fixed upstream after the
//! version git2 0.21 vendors). Any walk can touch any object, so before libgit2 gets the
//! repository every loose object is inflated here once, through a fixed buffer, and checked:
//! complete stream, a `kind size\0` header, and exactly `size` bytes after it. A repository
//! fully packed, as most are, has nothing to check.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A loose object that would hang or fail a reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Corrupt {
    pub id: String,
    pub path: PathBuf,
    pub reason: String,
}

/// Checks every loose object under `objects` (and its alternates) once per process.
pub(crate) fn guard(objects: &Path) -> Result<(), Corrupt> {
    static CHECKED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let checked = CHECKED.get_or_init(Default::default);
    let key = objects
        .canonicalize()
        .unwrap_or_else(|_| objects.to_path_buf());
    if checked.lock().map(|s| s.contains(&key)).unwrap_or(false) {
        return Ok(());
    }
    let mut dirs = vec![objects.to_path_buf()];
    // Alternates (one level, as git reads them): absolute or relative to `objects`.
    if let Ok(text) = std::fs::read_to_string(objects.join("info/alternates")) {
        for line in text.lines().map(str::trim) {
            if !line.is_empty() && !line.starts_with('#') {
                dirs.push(objects.join(line));
            }
        }
    }
    for dir in &dirs {
        check_dir(dir)?;
    }
    if let Ok(mut s) = checked.lock() {
        s.insert(key);
    }
    Ok(())
}

fn check_dir(objects: &Path) -> Result<(), Corrupt> {
    let Ok(fan) = std::fs::read_dir(objects) else {
        return Ok(());
    };
    let dirs: Vec<(String, PathBuf)> = fan
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            is_hex(&name, 2).then(|| (name, e.path()))
        })
        .collect();
    if dirs.is_empty() {
        return Ok(());
    }
    // Opening thousands of small files is system time: spread it over the cores.
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(dirs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found: Mutex<Option<Corrupt>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut buf = vec![0u8; 64 << 10];
                let mut out = vec![0u8; 64 << 10];
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((prefix, dir)) = dirs.get(i) else {
                        return;
                    };
                    if let Err(c) = check_fanout(prefix, dir, &mut buf, &mut out)
                        && let Ok(mut f) = found.lock()
                    {
                        f.get_or_insert(c);
                        return;
                    }
                }
            });
        }
    });
    match found.into_inner().ok().flatten() {
        Some(c) => Err(c),
        None => Ok(()),
    }
}

fn check_fanout(prefix: &str, dir: &Path, buf: &mut [u8], out: &mut [u8]) -> Result<(), Corrupt> {
    let Ok(files) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for f in files.flatten() {
        let fname = f.file_name();
        let Some(rest) = fname.to_str().filter(|n| is_hex(n, 38) || is_hex(n, 62)) else {
            continue;
        };
        let path = f.path();
        if let Err(reason) = check_file(&path, buf, out) {
            return Err(Corrupt {
                id: format!("{prefix}{rest}"),
                path,
                reason,
            });
        }
    }
    Ok(())
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Inflates one loose object through fixed buffers; `Err` says what is wrong with it.
fn check_file(path: &Path, buf: &mut [u8], out: &mut [u8]) -> Result<(), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut z = flate2::Decompress::new(true);
    let mut header: Vec<u8> = Vec::new();
    let mut body: Option<(u64, u64)> = None; // (declared size, bytes seen)
    let mut input_end = false;
    let (mut start, mut end) = (0usize, 0usize);
    loop {
        if start == end && !input_end {
            end = file.read(buf).map_err(|e| format!("cannot be read: {e}"))?;
            start = 0;
            input_end = end == 0;
        }
        let (before_in, before_out) = (z.total_in(), z.total_out());
        let status = z
            .decompress(&buf[start..end], out, flate2::FlushDecompress::None)
            .map_err(|e| format!("is not a valid zlib stream ({e})"))?;
        start += (z.total_in() - before_in) as usize;
        let produced = &out[..(z.total_out() - before_out) as usize];
        for (i, &b) in produced.iter().enumerate() {
            match &mut body {
                Some((_, seen)) => {
                    *seen += (produced.len() - i) as u64;
                    break;
                }
                None if b == 0 => body = Some((parse_header(&header)?, 0)),
                None if header.len() > 64 => return Err("has no object header".into()),
                None => header.push(b),
            }
        }
        let stalled = produced.is_empty() && z.total_in() == before_in;
        match status {
            flate2::Status::StreamEnd => break,
            _ if input_end && start == end && produced.is_empty() => {
                return Err("is truncated (its zlib stream ends early)".into());
            }
            _ if stalled && start < end => return Err("is not a valid zlib stream".into()),
            _ => {}
        }
    }
    match body {
        None => Err("has no object header".into()),
        Some((size, seen)) if size != seen => Err(format!(
            "declares {size} bytes but holds {seen} (truncated?)"
        )),
        Some(_) => Ok(()),
    }
}

fn parse_header(h: &[u8]) -> Result<u64, String> {
    let text = std::str::from_utf8(h).map_err(|_| "has a garbled header".to_string())?;
    let (kind, size) = text
        .split_once(' ')
        .ok_or_else(|| "has a garbled header".to_string())?;
    if !matches!(kind, "commit" | "tree" | "blob" | "tag") {
        return Err(format!("has an unknown object type {kind:?}"));
    }
    size.parse().map_err(|_| "has a garbled header".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn check(bytes: &[u8]) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("obj");
        std::fs::write(&p, bytes).unwrap();
        check_file(&p, &mut [0u8; 16], &mut [0u8; 16])
    }

    #[test]
    fn whole_objects_pass_cut_ones_do_not() {
        let body: Vec<u8> = (0..5000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut obj = format!("blob {}\0", body.len()).into_bytes();
        obj.extend_from_slice(&body);
        let z = deflate(&obj);
        assert_eq!(check(&z), Ok(()));
        for cut in [1, 2, 10, z.len() / 2, z.len() - 4, z.len() - 1] {
            assert!(check(&z[..cut]).is_err(), "cut at {cut}");
        }
        assert!(check(&deflate(b"blob 10\0short")).is_err());
        assert!(check(&deflate(b"frob 3\0abc")).is_err());
        assert!(check(b"not zlib at all").is_err());
        assert_eq!(check(&deflate(b"tree 0\0")), Ok(()));
    }
}
