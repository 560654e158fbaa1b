//! Replaying a transcript's file changes onto file contents, to rebuild the snapshots
//! between commits. Exact or nothing: a replay that does not reproduce the text fails.

use super::turn::Edit;

/// Why an edit could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReplayError {
    NotFound(&'static str),
    Opaque,
    BadPatch(String),
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::NotFound(what) => write!(f, "{what} not found in the file"),
            ReplayError::Opaque => write!(f, "the log does not say what changed"),
            ReplayError::BadPatch(why) => write!(f, "patch does not apply: {why}"),
        }
    }
}

/// Applies one edit to a file's content (`None`: the file does not exist).
pub(crate) fn apply(content: Option<&str>, edit: &Edit) -> Result<Option<String>, ReplayError> {
    match edit {
        Edit::Write { content } => Ok(Some(content.clone())),
        Edit::Delete => Ok(None),
        Edit::Opaque | Edit::Fragment { .. } => Err(ReplayError::Opaque),
        Edit::Replace { old, new, all } => {
            let cur = content.unwrap_or("");
            if old.is_empty() {
                return if cur.is_empty() {
                    Ok(Some(new.clone()))
                } else {
                    Err(ReplayError::NotFound(
                        "an empty old text in a non-empty file",
                    ))
                };
            }
            if !cur.contains(old.as_str()) {
                return Err(ReplayError::NotFound("the old text"));
            }
            Ok(Some(if *all {
                cur.replace(old.as_str(), new)
            } else {
                cur.replacen(old.as_str(), new, 1)
            }))
        }
        Edit::Lines { start, end, text } => {
            let cur = content.unwrap_or("");
            let (mut lines, trailing) = split_lines(cur);
            if *start == 0
                || *start > lines.len() + 1
                || end.saturating_add(1) < *start
                || *end > lines.len()
            {
                return Err(ReplayError::NotFound("the line range"));
            }
            let new: Vec<String> = split_lines(text).0;
            lines.splice(start - 1..*end, new);
            Ok(Some(join_lines(&lines, trailing || cur.is_empty())))
        }
        Edit::Patch { patch } => apply_patch(content.unwrap_or(""), patch).map(Some),
    }
}

fn split_lines(s: &str) -> (Vec<String>, bool) {
    if s.is_empty() {
        return (Vec::new(), false);
    }
    let trailing = s.ends_with('\n');
    let body = s.strip_suffix('\n').unwrap_or(s);
    (body.split('\n').map(str::to_string).collect(), trailing)
}

fn join_lines(lines: &[String], trailing: bool) -> String {
    let mut s = lines.join("\n");
    if trailing && !lines.is_empty() {
        s.push('\n');
    }
    s
}

struct Hunk {
    old: Vec<String>,
    new: Vec<String>,
    /// 1-based start line of the old side, when the header gives it.
    hint: Option<usize>,
    /// Codex's `@@ def f():` anchor line, searched before the hunk.
    anchor: Option<String>,
}

fn parse_hunks(patch: &str) -> Result<Vec<Hunk>, ReplayError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut cur: Option<Hunk> = None;
    for line in patch.lines() {
        if line.starts_with("--- ")
            || line.starts_with("+++ ")
            || line.starts_with("diff --git")
            || line.starts_with("index ")
            || line.starts_with("*** ")
            || line.starts_with("\\ No newline")
        {
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            if let Some(h) = cur.take() {
                hunks.push(h);
            }
            let (hint, anchor) = parse_header(rest);
            cur = Some(Hunk {
                old: Vec::new(),
                new: Vec::new(),
                hint,
                anchor,
            });
            continue;
        }
        let h = cur.get_or_insert_with(|| Hunk {
            old: Vec::new(),
            new: Vec::new(),
            hint: None,
            anchor: None,
        });
        match line.chars().next() {
            Some('+') => h.new.push(line[1..].to_string()),
            Some('-') => h.old.push(line[1..].to_string()),
            Some(' ') => {
                h.old.push(line[1..].to_string());
                h.new.push(line[1..].to_string());
            }
            // An empty context line often loses its leading space in logs.
            None => {
                h.old.push(String::new());
                h.new.push(String::new());
            }
            _ => return Err(ReplayError::BadPatch(format!("unexpected line {line:?}"))),
        }
    }
    if let Some(h) = cur {
        hunks.push(h);
    }
    Ok(hunks)
}

/// `@@ -12,3 +12,4 @@ ctx` → (Some(12), None); Codex `@@ def f():` → (None, Some("def f():")).
fn parse_header(rest: &str) -> (Option<usize>, Option<String>) {
    let rest = rest.trim();
    if let Some(r) = rest.strip_prefix('-') {
        let num: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
        return (num.parse().ok(), None);
    }
    let anchor = rest.trim_end_matches("@@").trim();
    (None, (!anchor.is_empty()).then(|| anchor.to_string()))
}

fn find_block(lines: &[String], block: &[String], from: usize, loose: bool) -> Option<usize> {
    if block.is_empty() {
        return Some(from.min(lines.len()));
    }
    let eq = |a: &str, b: &str| {
        if loose {
            a.trim_end() == b.trim_end()
        } else {
            a == b
        }
    };
    if block.len() > lines.len() {
        return None;
    }
    (from..=lines.len() - block.len())
        .find(|&i| block.iter().enumerate().all(|(k, b)| eq(&lines[i + k], b)))
}

/// Applies unified-diff or Codex-style hunks by matching their old side in order.
pub(crate) fn apply_patch(content: &str, patch: &str) -> Result<String, ReplayError> {
    let hunks = parse_hunks(patch)?;
    if hunks.is_empty() {
        return Err(ReplayError::BadPatch("no hunks".into()));
    }
    let (mut lines, trailing) = split_lines(content);
    let mut cursor = 0usize;
    for h in hunks {
        let mut from = cursor;
        if let Some(a) = &h.anchor
            && let Some(i) = (cursor..lines.len()).find(|&i| lines[i].trim() == a.trim())
        {
            from = i;
        }
        // Prefer the position the header names, then the first match after the last hunk.
        let at = h
            .hint
            .map(|n| n.saturating_sub(1))
            .filter(|&i| i >= cursor && find_block(&lines, &h.old, i, false) == Some(i))
            .or_else(|| find_block(&lines, &h.old, from, false))
            .or_else(|| find_block(&lines, &h.old, from, true))
            .ok_or_else(|| {
                ReplayError::BadPatch("a hunk's old lines are not in the file".into())
            })?;
        let n_new = h.new.len();
        lines.splice(at..at + h.old.len(), h.new);
        cursor = at + n_new;
    }
    Ok(join_lines(&lines, trailing || content.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_write_delete_lines() {
        let r = |old: &str, new: &str| Edit::Replace {
            old: old.into(),
            new: new.into(),
            all: false,
        };
        assert_eq!(
            apply(Some("a b a"), &r("a", "x")).unwrap().unwrap(),
            "x b a"
        );
        assert_eq!(
            apply(
                Some("a b a"),
                &Edit::Replace {
                    old: "a".into(),
                    new: "x".into(),
                    all: true
                }
            )
            .unwrap()
            .unwrap(),
            "x b x"
        );
        assert_eq!(
            apply(Some("abc"), &r("zz", "y")),
            Err(ReplayError::NotFound("the old text"))
        );
        assert_eq!(apply(None, &r("", "new\n")).unwrap().unwrap(), "new\n");
        assert_eq!(apply(Some("x"), &Edit::Delete).unwrap(), None);
        let l = Edit::Lines {
            start: 2,
            end: 3,
            text: "B\nC\nD\n".into(),
        };
        assert_eq!(
            apply(Some("a\nb\nc\nd\n"), &l).unwrap().unwrap(),
            "a\nB\nC\nD\nd\n"
        );
        let insert = Edit::Lines {
            start: 2,
            end: 1,
            text: "new".into(),
        };
        assert_eq!(
            apply(Some("a\nb\n"), &insert).unwrap().unwrap(),
            "a\nnew\nb\n"
        );
        assert_eq!(apply(Some("a"), &Edit::Opaque), Err(ReplayError::Opaque));
    }

    use proptest::prelude::*;

    fn edit() -> impl Strategy<Value = Edit> {
        let text = || "[ab\n+ -@]{0,12}";
        prop_oneof![
            (text(), text(), any::<bool>()).prop_map(|(old, new, all)| Edit::Replace {
                old,
                new,
                all
            }),
            text().prop_map(|content| Edit::Write { content }),
            Just(Edit::Delete),
            (any::<usize>(), any::<usize>(), text()).prop_map(|(start, end, text)| Edit::Lines {
                start,
                end,
                text
            }),
            (0usize..6, 0usize..6, text()).prop_map(|(start, end, text)| Edit::Lines {
                start,
                end,
                text
            }),
            text().prop_map(|patch| Edit::Patch { patch }),
            "(@@ -[0-9]{1,3},[0-9] \\+1 @@\n)?([ +-][ab]{0,3}\n){0,6}"
                .prop_map(|patch| Edit::Patch { patch }),
        ]
    }

    proptest! {
        #[test]
        fn replay_never_panics(content in proptest::option::of("[ab\n ]{0,30}"), e in edit()) {
            let _ = apply(content.as_deref(), &e);
        }
    }

    #[test]
    fn unified_and_codex_hunks() {
        let file = "def f(url):\n    return get(url)\n\n\ndef g():\n    pass\n";
        let unified = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,4 @@\n def f(url):\n+    if not url.startswith(\"https://\"):\n+        raise ValueError(url)\n     return get(url)\n";
        let out = apply_patch(file, unified).unwrap();
        assert!(
            out.starts_with("def f(url):\n    if not url.startswith"),
            "{out}"
        );
        assert!(out.ends_with("def g():\n    pass\n"));
        let codex = "@@ def g():\n-    pass\n+    return 1\n";
        assert_eq!(
            apply_patch(file, codex).unwrap(),
            file.replace("    pass", "    return 1")
        );
        assert!(apply_patch(file, "@@\n-nothing like this\n+x\n").is_err());
        // several hunks apply in order
        let two = "@@ -1,1 +1,1 @@\n-def f(url):\n+def f(u):\n@@ -5,2 +5,2 @@\n def g():\n-    pass\n+    return 2\n";
        assert_eq!(
            apply_patch(file, two).unwrap(),
            file.replace("def f(url)", "def f(u)")
                .replace("    pass", "    return 2")
        );
    }
}
