//! Text bound for a terminal: control characters from transcripts, commit subjects and file
//! names are shown, not obeyed. A raw ESC in a log could otherwise recolour, move the cursor,
//! retitle the window or hide the lines above it (`\r`).
//!
//! Wrapping is our own: a continuation line goes under the last column of a table or a
//! labelled section, which no wrapping crate computes; widths are terminal columns
//! (unicode-width), so Chinese text, two columns a character, wraps where it should.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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

static QUIET: AtomicBool = AtomicBool::new(false);
static COLOR_ERR: AtomicBool = AtomicBool::new(false);

/// `-q`: only the result on stdout, and errors; no notes, warnings or progress on stderr.
pub(crate) fn set_quiet(on: bool) {
    QUIET.store(on, Ordering::Relaxed);
}

/// Whether `-q` was given.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether stderr gets colour (decided once from `--color` and the environment).
pub(crate) fn set_color_stderr(on: bool) {
    COLOR_ERR.store(on, Ordering::Relaxed);
}

/// One line on stderr, cleaned (what `eprintln!` would print), unless `-q`.
pub(crate) fn say_line(s: &str) {
    if !quiet() {
        error_line(s);
    }
}

/// One line on stderr whatever `-q` says: the error a command ends with.
pub(crate) fn error_line(s: &str) {
    use std::io::Write;
    // One line: a newline inside (a path, a name from the repository) is shown as `\n`, so a
    // script reading line by line sees one message, as with git's quoted paths.
    let s = clean(s);
    let s = match s.contains('\n') {
        true => Cow::Owned(s.trim_end_matches('\n').replace('\n', "\\n")),
        false => s,
    };
    let s = match COLOR_ERR.load(Ordering::Relaxed) {
        true => paint_prefix(&s),
        false => s,
    };
    // A closed stderr is no reason to fail the command.
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

/// `git-sage: warning:` in yellow and `git-sage: error:` in red.
fn paint_prefix(s: &str) -> Cow<'_, str> {
    for (word, colour) in [("warning:", YELLOW), ("error:", RED)] {
        let head = format!("git-sage: {word}");
        if let Some(rest) = s.strip_prefix(&head) {
            return Cow::Owned(format!("git-sage: {colour}{word}{RESET}{rest}"));
        }
    }
    Cow::Borrowed(s)
}

/// `eprintln!` for messages that may carry repository or transcript text; silent under `-q`.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::term::say_line(&format!($($arg)*))
    };
}

/// `--color`: when, and whether the environment agrees (`NO_COLOR`, `CLICOLOR_FORCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set (`CLICOLOR_FORCE` forces it on).
    #[default]
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// What the environment says about the terminal, read once at the edge (`env::Env`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TermEnv {
    /// `NO_COLOR` set and not empty.
    pub no_color: bool,
    /// `CLICOLOR_FORCE` set, not empty and not "0".
    pub force_color: bool,
    /// `TERM=dumb`.
    pub dumb: bool,
    /// `COLUMNS`, when it is a number.
    pub columns: Option<usize>,
}

impl ColorChoice {
    /// Whether a stream that is (or is not) a terminal gets colour. See no-color.org and
    /// bixense.com/clicolors: `NO_COLOR` (non-empty) turns auto off, `CLICOLOR_FORCE` (not
    /// "0") turns it on; an explicit flag beats both.
    pub(crate) fn enabled(self, is_terminal: bool, env: &TermEnv) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if env.no_color => false,
            ColorChoice::Auto if env.force_color => true,
            ColorChoice::Auto => is_terminal && !env.dumb,
        }
    }
}

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[33m";
const BOLD: &str = "\x1b[1m";
const YELLOW_BOLD: &str = "\x1b[1;33m";
const RESET: &str = "\x1b[0m";

/// The words of a text report's headings in its language: this module knows no language, so
/// the caller, which does, says them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Headings {
    /// Red, and its turn's `◆ origin` marker in the table.
    pub origin: String,
    /// Yellow, and the `○ missed` markers.
    pub missed: String,
    /// Bold.
    pub other: Vec<String>,
}

/// Colours a cleaned text report for a terminal: the origin in red, missed opportunities in
/// yellow, section headings in bold. Works on the marks the text report prints, after the
/// text was cleaned, so nothing from a transcript can reach the terminal as a control code.
pub(crate) fn paint_report(s: &str, h: &Headings) -> String {
    let mut out = String::with_capacity(s.len() + 256);
    let origin_mark = format!("◆ {}", h.origin.to_lowercase());
    let missed_mark = format!("○ {}", h.missed.to_lowercase());
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let label = body.split("  ").next().unwrap_or_default();
        // A heading the caller named, or a word in capitals of any script (Cyrillic too).
        let named = !label.is_empty()
            && (label == h.origin || label == h.missed || h.other.iter().any(|o| o == label));
        let capitals = label.chars().count() >= 4
            && label.chars().all(|c| c.is_uppercase())
            && label.chars().any(char::is_alphabetic);
        let mut b = body.to_string();
        if named || capitals {
            let colour = match label {
                l if l == h.origin => RED,
                l if l == h.missed => YELLOW_BOLD,
                _ => BOLD,
            };
            b = format!("{colour}{label}{RESET}{}", &body[label.len()..]);
        }
        b = b.replace(&origin_mark, &format!("{RED}{origin_mark}{RESET}"));
        b = b.replace(&missed_mark, &format!("{YELLOW}{missed_mark}{RESET}"));
        if let Some(rest) = b.strip_prefix("warning:") {
            b = format!("{YELLOW}warning:{RESET}{rest}");
        }
        out.push_str(&b);
        out.push_str(nl);
    }
    out
}

/// Wraps long lines to `width` columns at spaces for a terminal. A continuation line starts
/// under the line's last column of text (after its last run of two spaces in the first half
/// of the line, or under a list item's text), so tables and labelled sections stay readable.
pub(crate) fn wrap(s: &str, width: usize) -> String {
    let width = width.max(40);
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.width() <= width {
            out.push_str(line);
            continue;
        }
        let indent = hanging_indent(body, width);
        let pad = " ".repeat(indent);
        let mut col = 0usize;
        let mut first = true;
        let mut cur = String::new();
        for word in body.split(' ') {
            let w = word.width();
            if first {
                cur.push_str(word);
                col = w;
                first = false;
                continue;
            }
            if col + 1 + w > width && col > indent {
                out.push_str(cur.trim_end());
                out.push('\n');
                cur = pad.clone();
                cur.push_str(word);
                col = indent + w;
            } else {
                cur.push(' ');
                cur.push_str(word);
                col += 1 + w;
            }
        }
        out.push_str(&cur);
        out.push_str(nl);
    }
    out
}

fn hanging_indent(line: &str, width: usize) -> usize {
    let chars: Vec<char> = line.chars().collect();
    let lead = chars.iter().take_while(|c| **c == ' ').count();
    // Columns start in the first three fifths of a line; later double spaces are prose.
    let limit = (width * 3 / 5).max(36).min(chars.len());
    let mut indent = lead;
    let mut i = lead;
    while i + 1 < limit {
        if chars[i] == ' ' && chars[i + 1] == ' ' {
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            if j < limit {
                indent = j;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    if chars.get(indent..indent + 2) == Some(&['-', ' ']) {
        indent += 2;
    }
    // The columns those characters take.
    chars[..indent.min(chars.len())]
        .iter()
        .map(|c| c.width().unwrap_or(0))
        .sum()
}

/// The terminal's width in columns when `stdout` is one; `COLUMNS` wins, as in other tools.
pub(crate) fn stdout_width(env: &TermEnv) -> Option<usize> {
    if let Some(n) = env.columns {
        return Some(n);
    }
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| w.0 as usize)
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

    #[test]
    fn chinese_wraps_by_columns_not_characters() {
        let line = format!("起源  {}", "第一轮的防御不充分 ".repeat(12));
        let w = wrap(&line, 60);
        for l in w.lines() {
            assert!(l.width() <= 60, "{l} is {} columns", l.width());
        }
        assert!(w.lines().count() > 3, "{w}");
        // continuation lines start under the text after the label's two spaces
        assert!(w.lines().nth(1).unwrap().starts_with("      第"), "{w}");
    }

    #[test]
    fn wraps_under_the_last_column() {
        let row = "   3  implementation  0  2  0  0  ✎ write ○ missed DI: \"if not url.startswith(\"https://\"):\" and more words here";
        let w = wrap(row, 72);
        let lines: Vec<&str> = w.lines().collect();
        assert!(lines.len() > 1, "{w}");
        assert!(lines.iter().all(|l| l.chars().count() <= 72), "{w}");
        let col = lines[0].find("✎").unwrap();
        assert!(
            lines[1].starts_with(&" ".repeat(lines[0][..col].chars().count())),
            "{w}"
        );
        let item = format!("  - {}", "word ".repeat(20));
        assert!(
            wrap(&item, 40)
                .lines()
                .nth(1)
                .unwrap()
                .starts_with("    word")
        );
        let label = format!("ORIGIN      {}", "turn one ".repeat(10));
        assert!(
            wrap(&label, 50)
                .lines()
                .nth(1)
                .unwrap()
                .starts_with("            turn")
        );
        assert_eq!(wrap("short\n", 40), "short\n");
        // a word longer than the line stays whole
        let long = format!("x {}", "y".repeat(80));
        assert_eq!(wrap(&long, 40).lines().count(), 2);
    }

    #[test]
    fn colour_goes_on_marks_only() {
        let s = "   1  planning  2  2  0  0  ◆ origin DI: \"x\"\n   2  review  0 0 0 0  ○ missed VR: \"y\"\nORIGIN      turn 1\n";
        let en = Headings {
            origin: "ORIGIN".into(),
            missed: "MISSED".into(),
            other: vec!["TURNS".into()],
        };
        let p = paint_report(s, &en);
        assert!(p.contains("\x1b[1;31m◆ origin\x1b[0m"), "{p:?}");
        assert!(p.contains("\x1b[33m○ missed\x1b[0m"), "{p:?}");
        assert!(p.contains("\x1b[1;31mORIGIN\x1b[0m      turn 1"), "{p:?}");
        assert!(paint_report("TURNS  x\n", &en).starts_with("\x1b[1mTURNS\x1b[0m"));
        assert_eq!(paint_report("plain\n", &en), "plain\n");
    }

    /// Russian and Chinese headings are coloured too: by the words the caller names, and
    /// Cyrillic capitals as capitals.
    #[test]
    fn headings_in_any_language_are_coloured() {
        let zh = Headings {
            origin: "起源".into(),
            missed: "错过".into(),
            other: vec!["轮次".into(), "建议".into()],
        };
        let p = paint_report("轮次  x\n起源        第 1 轮\n   1  ◆ 起源 DI\n建议\n", &zh);
        assert!(p.contains("\x1b[1m轮次\x1b[0m"), "{p:?}");
        assert!(p.contains("\x1b[1;31m起源\x1b[0m        第 1 轮"), "{p:?}");
        assert!(p.contains("\x1b[1;31m◆ 起源\x1b[0m"), "{p:?}");
        assert!(p.contains("\x1b[1m建议\x1b[0m"), "{p:?}");
        let ru = Headings {
            origin: "ИСТОК".into(),
            missed: "УПУЩЕНО".into(),
            other: Vec::new(),
        };
        let p = paint_report(
            "ИСТОК          ход 1\n   2  ○ упущено VR\nРЕКОМЕНДАЦИЯ\n",
            &ru,
        );
        assert!(p.contains("\x1b[1;31mИСТОК\x1b[0m"), "{p:?}");
        assert!(p.contains("\x1b[33m○ упущено\x1b[0m"), "{p:?}");
        assert!(p.contains("\x1b[1mРЕКОМЕНДАЦИЯ\x1b[0m"), "{p:?}");
    }
}
