//! Scanner paths made repository-relative: URIs, Windows separators, `./` and absolute prefixes.

/// Normalises a path as a scanner wrote it, without looking at the repository:
/// `file://` URIs and percent escapes decoded, `\` turned into `/`, `./` and `//` removed.
pub(crate) fn normalise(raw: &str) -> String {
    let mut s = raw.trim().to_string();
    if let Some(rest) = s.strip_prefix("file://") {
        // file:///C:/x or file:///home/x: keep the path part.
        s = rest.to_string();
        if s.len() > 3 && s.as_bytes()[0] == b'/' && s.as_bytes()[2] == b':' {
            s.remove(0);
        }
    } else if let Some(rest) = s.strip_prefix("file:") {
        s = rest.to_string();
    }
    if s.contains('%') {
        s = percent_decode(&s);
    }
    s = s.replace('\\', "/");
    let absolute = s.starts_with('/');
    // `a/../b` is `b`; a `..` that would climb above the start is kept, so that
    // `escapes` can refuse it.
    let mut parts: Vec<&str> = Vec::new();
    for p in s.split('/').filter(|p| !p.is_empty() && *p != ".") {
        match (p, parts.last()) {
            ("..", Some(&last)) if last != ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Whether a normalised relative path climbs out of the directory it is relative to.
pub(crate) fn escapes(path: &str) -> bool {
    path == ".." || path.starts_with("../")
}

/// Whether a normalised path is absolute (POSIX root or a Windows drive).
pub(crate) fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    path.starts_with('/') || (b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic())
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Picks the repository path a scanner path means, given the files that exist.
///
/// Tries, in order: the path itself; with the work tree's prefix removed; the longest suffix
/// (on a component boundary) that names a file; a unique file ending in `/path` (a scan run
/// from a subdirectory). Returns `None` when nothing fits.
pub(crate) fn resolve<'a, I>(path: &str, workdir: Option<&str>, files: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    let exists = |p: &str| files.clone().into_iter().any(|f| f == p);
    if !is_absolute(path) && exists(path) {
        return Some(path.to_string());
    }
    if let Some(w) = workdir {
        let w = normalise(w);
        if let Some(rest) = path.strip_prefix(&format!("{}/", w.trim_end_matches('/')))
            && exists(rest)
        {
            return Some(rest.to_string());
        }
    }
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if is_absolute(path) {
        for start in 1..parts.len() {
            let candidate = parts[start..].join("/");
            if exists(&candidate) {
                return Some(candidate);
            }
        }
        return None;
    }
    let suffix = format!("/{path}");
    let mut hits = files.into_iter().filter(|f| f.ends_with(&suffix));
    match (hits.next(), hits.next()) {
        (Some(one), None) => Some(one.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_scanner_spellings() {
        assert_eq!(normalise(".\\app.py"), "app.py");
        assert_eq!(normalise(".\\.venv\\Lib\\x.py"), ".venv/Lib/x.py");
        assert_eq!(normalise("./src//a.py"), "src/a.py");
        assert_eq!(
            normalise("file:///home/u/repo/a%20b.py"),
            "/home/u/repo/a b.py"
        );
        assert_eq!(
            normalise("file:///C:/Users/u/repo/a.py"),
            "C:/Users/u/repo/a.py"
        );
        assert_eq!(
            normalise("C:\\Users\\u\\repo\\a.py"),
            "C:/Users/u/repo/a.py"
        );
        assert_eq!(normalise("media/fetcher.py"), "media/fetcher.py");
        assert_eq!(normalise("100%.py"), "100%.py");
        assert!(is_absolute("C:/x") && is_absolute("/x") && !is_absolute("x/y"));
    }

    #[test]
    fn resolves_against_the_tree() {
        let files = ["media/fetcher.py", "svc/app.py", "a/app.py", "b/x.py"];
        let f = || files.iter().copied();
        assert_eq!(
            resolve("media/fetcher.py", None, f()).as_deref(),
            Some("media/fetcher.py")
        );
        assert_eq!(
            resolve(
                "/home/ci/work/repo/media/fetcher.py",
                Some("/home/ci/work/repo"),
                f()
            )
            .as_deref(),
            Some("media/fetcher.py")
        );
        assert_eq!(
            resolve("C:/Users/dev/proj/media/fetcher.py", None, f()).as_deref(),
            Some("media/fetcher.py")
        );
        // run from a subdirectory: unique suffix
        assert_eq!(resolve("x.py", None, f()).as_deref(), Some("b/x.py"));
        // ambiguous suffix: no guess
        assert_eq!(resolve("app.py", None, f()), None);
        assert_eq!(resolve("nope.py", None, f()), None);
    }
}
