//! What a write changed in the anchored file, as unified diff hunks (the `similar` crate), cut
//! to the hunks that hold the anchored code so a report shows the lines that matter.

use similar::{ChangeTag, TextDiff};

/// Lines of context around each change, as `git diff` shows them.
const CONTEXT: usize = 3;
/// A report shows at most this many diff lines; the rest are counted.
const MAX_LINES: usize = 60;

/// The hunks of `before` → `after` whose added lines `anchored` says hold the located code,
/// or every hunk when none does (a defence that must be absent is found in no added line).
/// `None` when nothing changed.
pub(crate) fn hunks(before: &str, after: &str, anchored: impl Fn(&str) -> bool) -> Option<String> {
    let diff = TextDiff::from_lines(before, after);
    let mut udiff = diff.unified_diff();
    udiff.context_radius(CONTEXT);
    let all: Vec<_> = udiff.iter_hunks().collect();
    if all.is_empty() {
        return None;
    }
    let holds: Vec<bool> = all
        .iter()
        .map(|h| {
            h.iter_changes()
                .any(|c| c.tag() == ChangeTag::Insert && anchored(c.value()))
        })
        .collect();
    let any = holds.contains(&true);
    let keep = all
        .iter()
        .zip(&holds)
        .filter(|(_, h)| **h || !any)
        .map(|(h, _)| h);
    let mut lines = Vec::new();
    for h in keep {
        lines.push(h.header().to_string());
        for c in h.iter_changes() {
            let sign = match c.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            let text = c.value().trim_end_matches(['\n', '\r']);
            lines.push(format!("{sign}{text}"));
        }
    }
    let extra = lines.len().saturating_sub(MAX_LINES);
    lines.truncate(MAX_LINES);
    if extra > 0 {
        lines.push(format!(
            "… {extra} more diff lines (git show shows them all)"
        ));
    }
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hunk_with_the_anchored_code_is_kept_alone() {
        let mut before: Vec<String> = (1..=30).map(|i| format!("line {i}")).collect();
        let mut after = before.clone();
        after[2] = "changed far away".into();
        after.insert(20, "if not url.startswith(\"https://\"):".into());
        before.push(String::new());
        after.push(String::new());
        let h = hunks(&before.join("\n"), &after.join("\n"), |l| {
            l.contains("startswith")
        })
        .unwrap();
        assert!(h.starts_with("@@ -18,6 +18,7 @@"), "{h}");
        assert!(h.contains("+if not url.startswith"), "{h}");
        assert!(!h.contains("changed far away"), "{h}");
        // Without an anchored line every hunk is shown.
        let all = hunks(&before.join("\n"), &after.join("\n"), |_| false).unwrap();
        assert!(
            all.contains("+changed far away") && all.contains("+if not"),
            "{all}"
        );
        assert_eq!(hunks("a\n", "a\n", |_| true), None);
    }

    #[test]
    fn a_long_diff_is_cut_and_says_so() {
        let after: String = (0..200).map(|i| format!("x{i}\n")).collect();
        let h = hunks("", &after, |_| true).unwrap();
        assert_eq!(h.lines().count(), MAX_LINES + 1);
        assert!(
            h.ends_with("… 141 more diff lines (git show shows them all)"),
            "{h}"
        );
    }
}
