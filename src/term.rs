//! Text bound for a terminal: control characters from transcripts, commit subjects and file
//! names are shown, not obeyed. A raw ESC in a log could otherwise recolour, move the cursor,
//! retitle the window or hide the lines above it (`\r`).

use std::borrow::Cow;

/// `s` with C0 controls (but newline and tab), DEL and C1 controls written out as `\x1b`,
/// `\r`, `\u{9b}`.
pub(crate) fn clean(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{202e}' | '\u{2066}'..='\u{2069}'
            )
    };
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if bad(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if bad(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line on stderr, cleaned (what `eprintln!` would print).
pub(crate) fn say_line(s: &str) {
    use std::io::Write;
    // A closed stderr is no reason to fail the command.
    let _ = writeln!(std::io::stderr().lock(), "{}", clean(s));
}

/// `eprintln!` for messages that may carry repository or transcript text.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::term::say_line(&format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_not_obeyed() {
        assert_eq!(clean("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            clean("a\x1b[2J\x1b]0;pwned\x07b\rc\u{9b}31m"),
            "a\\x1b[2J\\x1b]0;pwned\\x07b\\rc\\x9b31m"
        );
        assert_eq!(clean("x\u{202e}y\0"), "x\\u{202e}y\\x00");
    }
}
