//! Blocks a tool manages inside a user's file, between a start and an end marker line: put
//! in, replaced, or taken out, leaving everything else as it was.

/// `text` with the block between `start` and `end` (markers included, and the line break
/// after the end marker) replaced by `managed`, or removed when `None`. `None` when the
/// markers are not there.
pub(crate) fn replace_between(
    text: &str,
    start: &str,
    end: &str,
    managed: Option<&str>,
) -> Option<String> {
    let (a, z) = (text.find(start)?, text.find(end)?);
    if a > z {
        return None;
    }
    let mut after = z + end.len();
    if text[after..].starts_with('\n') {
        after += 1;
    }
    let mut out = text[..a].to_string();
    match managed {
        Some(m) => out.push_str(m),
        // the blank line put before the block goes with it
        None if out.ends_with("\n\n") => {
            out.pop();
        }
        None => {}
    }
    out.push_str(&text[after..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_removes() {
        let t = "a\n\n# >>\nold\n# <<\nb\n";
        assert_eq!(
            replace_between(t, "# >>", "# <<", Some("# >>\nnew\n# <<\n")).unwrap(),
            "a\n\n# >>\nnew\n# <<\nb\n"
        );
        assert_eq!(replace_between(t, "# >>", "# <<", None).unwrap(), "a\nb\n");
        assert_eq!(replace_between("x\n", "# >>", "# <<", None), None);
    }
}
