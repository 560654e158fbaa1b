//! Text bound for a terminal: control characters from transcripts, commit subjects and file
//! names are shown, not obeyed. A raw ESC in a log could otherwise recolour, move the cursor,
//! retitle the window or hide the lines above it (`\r`).
//!
//! Colour is chosen while writing: a writer marks what its spans are (`Styled`, `Mark`) and
//! anstyle paints them only on the way to a terminal that wants colour. Lines are broken by
//! textwrap (terminal columns by unicode-width, colour codes none); where a continuation line
//! starts is ours: under the last column of a table or a labelled section, which no wrapping
//! crate computes.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use unicode_width::UnicodeWidthChar;

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

/// `s` on one line (white space folded), cut to `max` characters with an ellipsis.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        one
    } else {
        let mut c: String = one.chars().take(max.saturating_sub(1)).collect();
        c.push('…');
        c
    }
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
    for (word, mark) in [("warning:", Mark::Warning), ("error:", Mark::Error)] {
        let head = format!("git-sage: {word}");
        if let Some(rest) = s.strip_prefix(&head) {
            return Cow::Owned(format!("git-sage: {}{rest}", mark.paint(word)));
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

/// What a writer marks in text for people, for the colour a terminal shows it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// The origin: its heading and its turn's marker.
    Origin,
    /// Missed opportunities: their heading and their turns' markers.
    Missed,
    /// A section heading.
    Heading,
    /// `warning:`.
    Warning,
    /// `error:`.
    Error,
}

impl Mark {
    fn style(self) -> anstyle::Style {
        use anstyle::{AnsiColor, Style};
        match self {
            Mark::Origin | Mark::Error => Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
            Mark::Missed => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Mark::Heading => Style::new().bold(),
            Mark::Warning => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
        }
    }

    /// `s` in this mark's colour.
    fn paint(self, s: &str) -> String {
        let style = self.style();
        format!("{}{s}{}", style.render(), style.render_reset())
    }
}

/// Text for people with the spans its writer marked (headings, the origin, missed
/// opportunities): the writer says what each span is as it writes it, and the colour is
/// chosen only when the text goes to a terminal. The marks are kept beside the text, never in
/// it, so nothing a transcript holds can pose as one; the text itself is cleaned span by span
/// on the way out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Styled {
    text: String,
    marks: Vec<(std::ops::Range<usize>, Mark)>,
}

impl Styled {
    pub(crate) fn new() -> Styled {
        Styled::default()
    }

    pub(crate) fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
    }

    pub(crate) fn push(&mut self, c: char) {
        self.text.push(c);
    }

    /// `s`, marked.
    pub(crate) fn mark(&mut self, mark: Mark, s: &str) {
        let start = self.text.len();
        self.text.push_str(s);
        self.marks.push((start..self.text.len(), mark));
    }

    /// Another styled text after this one, its marks kept.
    pub(crate) fn append(&mut self, other: Styled) {
        let shift = self.text.len();
        self.text.push_str(&other.text);
        self.marks.extend(
            other
                .marks
                .into_iter()
                .map(|(r, m)| (r.start + shift..r.end + shift, m)),
        );
    }

    /// Drops trailing whitespace (and the marks' share of it).
    pub(crate) fn trim_end(&mut self) {
        let len = self.text.trim_end().len();
        self.text.truncate(len);
        self.marks.retain(|(r, _)| r.start < len);
        for (r, _) in &mut self.marks {
            r.end = r.end.min(len);
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn into_plain(self) -> String {
        self.text
    }

    /// The text for a terminal: controls shown, not obeyed (`clean`, span by span), and with
    /// `colour`, each mark in its colour.
    pub(crate) fn to_terminal(&self, colour: bool) -> String {
        let mut out = String::with_capacity(self.text.len() + self.marks.len() * 12);
        let mut at = 0;
        for (r, m) in &self.marks {
            if r.start < at {
                continue;
            }
            out.push_str(&clean(&self.text[at..r.start]));
            let span = clean(&self.text[r.clone()]);
            match colour {
                true => out.push_str(&m.paint(&span)),
                false => out.push_str(&span),
            }
            at = r.end;
        }
        out.push_str(&clean(&self.text[at..]));
        out
    }
}

impl From<String> for Styled {
    fn from(text: String) -> Styled {
        Styled {
            text,
            marks: Vec::new(),
        }
    }
}

impl std::fmt::Write for Styled {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

/// Wraps long lines to `width` columns at spaces for a terminal. A continuation line starts
/// under the line's last column of text (after its last run of two spaces in the first half
/// of the line, or under a list item's text), so tables and labelled sections stay readable.
/// Colour codes take no columns.
pub(crate) fn wrap(s: &str, width: usize) -> String {
    let width = width.max(40);
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if textwrap::core::display_width(body) <= width {
            out.push_str(line);
            continue;
        }
        let visible: String = anstream::adapter::strip_str(body).to_string();
        let pad = " ".repeat(hanging_indent(&visible, width));
        // The line's own indent stays on its first line; textwrap would count it as a word.
        let lead = body.len() - body.trim_start_matches(' ').len();
        let options = textwrap::Options::new(width)
            .word_separator(textwrap::WordSeparator::AsciiSpace)
            .break_words(false)
            .initial_indent(&body[..lead])
            .subsequent_indent(&pad);
        out.push_str(&textwrap::wrap(&body[lead..], options).join("\n"));
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
    use unicode_width::UnicodeWidthStr;

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
        let mut s = Styled::new();
        s.push_str("   1  planning  2  2  0  0  ");
        s.mark(Mark::Origin, "◆ origin");
        s.push_str(" DI: \"\x1b[31mx\"\n");
        let p = s.to_terminal(true);
        assert_eq!(
            p,
            "   1  planning  2  2  0  0  \x1b[1m\x1b[31m◆ origin\x1b[0m DI: \"\\x1b[31mx\"\n"
        );
        // Without colour: the text as written, a transcript's escape shown, not obeyed.
        assert_eq!(
            s.to_terminal(false),
            "   1  planning  2  2  0  0  ◆ origin DI: \"\\x1b[31mx\"\n"
        );
        assert_eq!(
            Styled::from("plain\n".to_string()).to_terminal(true),
            "plain\n"
        );
    }

    /// Marks are the writer's, so headings in any script are coloured; appending keeps them
    /// and trimming cuts them with the text.
    #[test]
    fn marks_travel_with_their_text() {
        let mut head = Styled::new();
        head.mark(Mark::Heading, "轮次");
        head.push_str("  x\n");
        let mut row = Styled::new();
        row.push_str("   2  ");
        row.mark(Mark::Missed, "○ упущено ");
        row.trim_end();
        head.append(row);
        assert_eq!(head.as_str(), "轮次  x\n   2  ○ упущено");
        let p = head.to_terminal(true);
        assert!(p.starts_with(&Mark::Heading.paint("轮次")), "{p:?}");
        assert!(p.ends_with(&Mark::Missed.paint("○ упущено")), "{p:?}");
    }

    /// Wrapping counts columns, not colour codes.
    #[test]
    fn colour_takes_no_columns() {
        let plain = format!("ORIGIN      {}", "turn one ".repeat(10));
        let mut s = Styled::new();
        s.mark(Mark::Origin, "ORIGIN");
        s.push_str(&plain["ORIGIN".len()..]);
        let wrapped = wrap(&s.to_terminal(true), 50);
        let stripped = anstream::adapter::strip_str(&wrapped).to_string();
        assert_eq!(stripped, wrap(&plain, 50));
    }
}
