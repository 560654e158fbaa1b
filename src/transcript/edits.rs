//! Edits written as text in a reply, in the formats Aider's docs describe and plain-text logs
//! reuse: SEARCH/REPLACE blocks (and the older ORIGINAL/UPDATED and HEAD/updated spellings),
//! with the path before the fence (`diff`) or inside it (`diff-fenced`); unified diffs
//! (`udiff`); whole files in a fence after their path (`whole`, `editor-whole`), fences of
//! three or more backticks or `<source>` tags.

use super::turn::Edit;

/// A path as a reply writes it on its own line: `**a/b.py**`, `` `a\b.py`: ``, `# a/b.py`.
pub(crate) fn clean_path(line: &str) -> String {
    line.trim()
        .trim_end_matches(':')
        .trim_start_matches('#')
        .trim()
        .trim_matches(['`', '*'])
        .trim()
        .replace("\\_", "_")
        .replace('\\', "/")
        .trim_start_matches("./")
        .to_string()
}

/// Whether a line could be a file path standing alone (no spaces, not a fence or marker).
fn looks_like_path(l: &str) -> bool {
    let p = clean_path(l);
    !p.is_empty()
        && !p.contains(' ')
        && !p.starts_with("```")
        && !p.starts_with('<')
        && !p.starts_with("---")
        && !p.starts_with("+++")
        && (p.contains('/') || p.contains('.'))
        && p.chars().any(|c| c.is_alphanumeric())
}

/// Two spellings of one path (separators, `./`, decoration).
pub(crate) fn same_path(a: &str, b: &str) -> bool {
    clean_path(a) == clean_path(b)
}

fn is_search(l: &str) -> bool {
    let t = l.trim_end();
    let rest = t.trim_start_matches('<');
    t.len() - rest.len() >= 5 && matches!(rest.trim(), "SEARCH" | "ORIGINAL" | "HEAD")
}

fn is_divider(l: &str) -> bool {
    let t = l.trim();
    t.len() >= 5 && t.bytes().all(|b| b == b'=')
}

fn is_replace(l: &str) -> bool {
    let t = l.trim_end();
    let rest = t.trim_start_matches('>');
    t.len() - rest.len() >= 5 && matches!(rest.trim(), "REPLACE" | "UPDATED" | "updated")
}

/// A fence opener: three or more backticks or tildes, or a `<source…>` tag.
pub(crate) fn opens_fence(l: &str) -> Option<String> {
    let t = l.trim_start();
    // `<source>`, `<source>markdown`, `<source lang="py">`
    if t.starts_with("<source") && t.contains('>') && !t.contains("</source>") {
        return Some("</source>".into());
    }
    let ticks: String = t.chars().take_while(|c| *c == '`').collect();
    if ticks.len() >= 3 {
        return Some(ticks);
    }
    let tildes: String = t.chars().take_while(|c| *c == '~').collect();
    (tildes.len() >= 3).then_some(tildes)
}

pub(crate) fn closes_fence(l: &str, closer: &str) -> bool {
    let t = l.trim();
    if closer == "</source>" {
        return t == "</source>";
    }
    t.len() >= closer.len() && t.chars().all(|c| c == closer.chars().next().unwrap_or('`'))
}

/// (file, search, replace) of every SEARCH/REPLACE block, in order. The file is the nearest
/// path line before the block (skipping fence lines), else the previous block's file.
pub(crate) fn search_replace(text: &str) -> Vec<(String, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut last_file = String::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_search(lines[i]) {
            i += 1;
            continue;
        }
        let file = (i.saturating_sub(3)..i)
            .rev()
            .map(|k| lines[k])
            .find(|l| !l.trim().is_empty() && opens_fence(l).is_none())
            .filter(|l| looks_like_path(l))
            .map(clean_path)
            .unwrap_or_else(|| last_file.clone());
        let (mut search, mut replace) = (String::new(), String::new());
        let (mut in_replace, mut done) = (false, false);
        i += 1;
        while i < lines.len() {
            let l = lines[i];
            if is_divider(l) && !in_replace {
                in_replace = true;
            } else if is_replace(l) {
                done = true;
                break;
            } else if is_search(l) {
                break; // a block cut off: the next one starts here
            } else if in_replace {
                replace.push_str(l);
                replace.push('\n');
            } else {
                search.push_str(l);
                search.push('\n');
            }
            i += 1;
        }
        if done {
            i += 1;
            if in_replace && !file.is_empty() {
                last_file = file.clone();
                out.push((file, search, replace));
            }
        }
    }
    out
}

/// (file, patch) of every file in the reply's unified diffs: `--- a/x` / `+++ b/x` headers
/// followed by `@@` hunks, in a ```diff fence or bare. A new file (`--- /dev/null`) is a
/// patch too; a deleted one (`+++ /dev/null`) is named by its `---` line.
pub(crate) fn unified(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let (a, b) = (lines[i], lines[i + 1]);
        let hunk_follows = lines.get(i + 2).is_some_and(|l| l.starts_with("@@"));
        if !(a.starts_with("--- ") && b.starts_with("+++ ") && hunk_follows) {
            i += 1;
            continue;
        }
        let name = |l: &str, prefix: &str| {
            let p = l[4..].split('\t').next().unwrap_or("").trim();
            let p = p.strip_prefix(prefix).unwrap_or(p);
            clean_path(p)
        };
        let new = name(b, "b/");
        let file = if new == "/dev/null" || new == "dev/null" {
            name(a, "a/")
        } else {
            new
        };
        let mut patch = format!("{a}\n{b}\n");
        i += 2;
        while i < lines.len() {
            let l = lines[i];
            let next_file =
                l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "));
            if next_file || l.trim_start().starts_with("```") {
                break;
            }
            if !(l.starts_with("@@") || l.starts_with([' ', '+', '-', '\\']) || l.is_empty()) {
                break;
            }
            patch.push_str(l);
            patch.push('\n');
            i += 1;
        }
        match out.iter_mut().find(|(f, _)| *f == file) {
            Some((_, p)) => p.push_str(&patch),
            None => out.push((file, patch)),
        }
    }
    out
}

/// (file, content) of every fenced block right after a line naming a file — Aider's `whole`
/// format. With `wanted`, only those files (the ones the log says were written); a block that
/// holds SEARCH/REPLACE markers or a unified diff is not a whole file.
pub(crate) fn whole_files(text: &str, wanted: Option<&[String]>) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(closer) = opens_fence(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !closes_fence(lines[end], &closer) {
            end += 1;
        }
        let path_line = (0..i)
            .rev()
            .map(|k| lines[k])
            .find(|l| !l.trim().is_empty());
        let body = &lines[start..end.min(lines.len())];
        let edit_markers = body.iter().any(|l| is_search(l))
            || body
                .windows(2)
                .any(|w| w[0].starts_with("--- ") && w[1].starts_with("+++ "));
        if let Some(p) = path_line
            && looks_like_path(p)
            && !edit_markers
            && end < lines.len()
        {
            let path = clean_path(p);
            let ok = match wanted {
                Some(w) => w.iter().any(|x| same_path(x, &path)),
                None => true,
            };
            if ok {
                let mut content = body.join("\n");
                content.push('\n');
                out.push((path, content));
            }
        }
        i = end + 1;
    }
    out
}

/// Every edit a reply's text carries for `path`, in the order written.
pub(crate) fn edits_for(text: &str, path: &str) -> Vec<Edit> {
    let mut out: Vec<Edit> = search_replace(text)
        .into_iter()
        .filter(|(f, _, _)| same_path(f, path))
        .map(|(_, old, new)| Edit::Replace {
            old,
            new,
            all: false,
        })
        .collect();
    out.extend(
        unified(text)
            .into_iter()
            .filter(|(f, _)| same_path(f, path))
            .map(|(_, patch)| Edit::Patch { patch }),
    );
    if out.is_empty() {
        let wanted = [path.to_string()];
        out.extend(
            whole_files(text, Some(&wanted))
                .into_iter()
                .map(|(_, content)| Edit::Write { content }),
        );
    }
    out
}

/// Every (file, edit) a reply's text carries, for logs that do not say which were applied.
pub(crate) fn all_edits(text: &str) -> Vec<(String, Edit)> {
    let mut out: Vec<(String, Edit)> = search_replace(text)
        .into_iter()
        .map(|(f, old, new)| {
            (
                f,
                Edit::Replace {
                    old,
                    new,
                    all: false,
                },
            )
        })
        .collect();
    out.extend(
        unified(text)
            .into_iter()
            .map(|(f, patch)| (f, Edit::Patch { patch })),
    );
    out.extend(
        whole_files(text, None)
            .into_iter()
            .filter(|(f, _)| !out.iter().any(|(g, _)| g == f))
            .map(|(f, content)| (f, Edit::Write { content }))
            .collect::<Vec<_>>(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_aider_edit_format() {
        // diff: path before the fence
        let diff = "Here:\n\napp.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n";
        assert_eq!(
            search_replace(diff),
            [("app.py".into(), "x = 1\n".into(), "x = 2\n".into())]
        );
        // diff-fenced: path inside; Windows separators; the 2023 spellings
        let fenced = "````\nsrc\\app.py\n<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED\n````\n";
        assert_eq!(search_replace(fenced)[0].0, "src/app.py");
        let head = "```python\nlib/x.py\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> updated\n```\n";
        assert_eq!(search_replace(head)[0].0, "lib/x.py");
        // a block cut off at the end is not an edit
        assert!(search_replace("a.py\n<<<<<<< SEARCH\nx\n=======\n").is_empty());
        // udiff, two files, one new
        let udiff = "```diff\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+hello\n```\n";
        let u = unified(udiff);
        assert_eq!(u.len(), 2);
        assert_eq!(u[0].0, "app.py");
        assert!(u[0].1.contains("-y\n+z\n"));
        assert_eq!(u[1].0, "new.py");
        // whole, with four backticks, and editor-whole's <source>
        let whole = "README.md\n````\n# Title\n```sh\nrun\n```\n````\n\nbackend/app.py\n<source>\nprint(1)\n</source>\n";
        let w = whole_files(whole, None);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(
            w[0],
            ("README.md".into(), "# Title\n```sh\nrun\n```\n".into())
        );
        assert_eq!(w[1], ("backend/app.py".into(), "print(1)\n".into()));
        // only the files the log says were written
        assert!(whole_files(whole, Some(&["other.py".into()])).is_empty());
        // prose before a fence is no path
        assert!(whole_files("Run this:\n```\nls\n```\n", None).is_empty());
        assert_eq!(edits_for(whole, "backend\\app.py").len(), 1);
    }
}
