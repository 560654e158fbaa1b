//! The small Markdown subset the recommendation templates use — paragraphs, `-` and `1.`
//! lists, `**bold**` and `` `code` `` — rendered to HTML, or to text for a terminal. Everything
//! is escaped first, so a template (or a user's override of one) can never put markup of its
//! own on the page.

use super::escape::esc;

/// `text` as HTML blocks: a blank line ends a block, a list line opens or continues a list,
/// an indented line continues the item above it, other lines join their paragraph.
pub(crate) fn to_html(text: &str) -> String {
    let mut blocks = Blocks::default();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            blocks.close();
            continue;
        }
        let item = t
            .strip_prefix("- ")
            .or_else(|| t.strip_prefix("* "))
            .map(|i| ("ul", i))
            .or_else(|| ordered_item(t).map(|i| ("ol", i)));
        match (item, blocks.list.as_mut()) {
            (Some((tag, i)), _) => {
                blocks.close_para();
                if blocks.list.as_ref().is_some_and(|(open, _)| *open != tag) {
                    blocks.close_list();
                }
                blocks
                    .list
                    .get_or_insert((tag, Vec::new()))
                    .1
                    .push(i.to_string());
            }
            (None, Some((_, items))) if line.starts_with([' ', '\t']) => {
                if let Some(last) = items.last_mut() {
                    last.push(' ');
                    last.push_str(t);
                }
            }
            (None, _) => {
                blocks.close_list();
                blocks.para.push(t.to_string());
            }
        }
    }
    blocks.close();
    blocks.out
}

/// The blocks written so far, the open paragraph and the open list (its tag and items).
#[derive(Default)]
struct Blocks {
    out: String,
    para: Vec<String>,
    list: Option<(&'static str, Vec<String>)>,
}

impl Blocks {
    fn close_para(&mut self) {
        if !self.para.is_empty() {
            self.out
                .push_str(&format!("<p>{}</p>\n", inline(&self.para.join(" "))));
            self.para.clear();
        }
    }

    fn close_list(&mut self) {
        if let Some((tag, items)) = self.list.take() {
            self.out.push_str(&format!("<{tag}>\n"));
            for i in items {
                self.out.push_str(&format!("<li>{}</li>\n", inline(&i)));
            }
            self.out.push_str(&format!("</{tag}>\n"));
        }
    }

    fn close(&mut self) {
        self.close_para();
        self.close_list();
    }
}

/// `text` for a terminal, line by line: the `**` of bold dropped (a terminal would show the
/// asterisks); code spans, lists and unpaired marks stay as they are.
pub(crate) fn to_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&spans(
            line,
            |code| format!("`{code}`"),
            |t| bold(t, "", ""),
        ));
    }
    out
}

/// `1. text` → `text`.
fn ordered_item(t: &str) -> Option<&str> {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    t[digits..].strip_prefix(". ")
}

/// Inline markup of one block: code spans first (their text is shown as it is), then bold
/// outside them.
fn inline(text: &str) -> String {
    spans(
        &esc(text),
        |code| format!("<code>{code}</code>"),
        |t| bold(t, "<strong>", "</strong>"),
    )
}

/// `text` with each code span through `code` and the text between them through `other`. A
/// backtick without a partner stays a backtick.
fn spans(text: &str, code: impl Fn(&str) -> String, other: impl Fn(&str) -> String) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    // Parts 1, 3, … up to the last pair are code.
    let last_code = (parts.len() - 1) / 2 * 2;
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 && i < last_code {
            out.push_str(&code(part));
        } else {
            if i % 2 == 1 {
                out.push('`');
            }
            out.push_str(&other(part));
        }
    }
    out
}

/// `**x**` → `{open}x{close}`; a `**` without a partner stays as it is.
fn bold(text: &str, open: &str, close: &str) -> String {
    let parts: Vec<&str> = text.split("**").collect();
    let last_bold = (parts.len() - 1) / 2 * 2;
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 && i < last_bold {
            out.push_str(&format!("{open}{part}{close}"));
        } else {
            if i % 2 == 1 {
                out.push_str("**");
            }
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recommendation_subset() {
        let md = "The agent named a defence. Require a **bypass check**: run `git sage checkpoint`\nbefore the patch.\n\nDefence checklist for CWE-918:\n- resolve the host name\n- test with http://127.0.0.1\n\n1. first\n2. second\n";
        assert_eq!(
            to_html(md),
            "<p>The agent named a defence. Require a <strong>bypass check</strong>: run <code>git sage checkpoint</code> before the patch.</p>\n\
<p>Defence checklist for CWE-918:</p>\n<ul>\n<li>resolve the host name</li>\n<li>test with http://127.0.0.1</li>\n</ul>\n\
<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n"
        );
    }

    #[test]
    fn markup_is_escaped_and_code_is_not_bold() {
        let html = to_html("<script>alert(1)</script> **<b>x</b>** `**not bold** <i>`");
        assert!(!html.contains("<script>") && !html.contains("<b>") && !html.contains("<i>"));
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            html.contains("<strong>&lt;b&gt;x&lt;/b&gt;</strong>"),
            "{html}"
        );
        assert!(
            html.contains("<code>**not bold** &lt;i&gt;</code>"),
            "{html}"
        );
    }

    #[test]
    fn text_drops_the_marks_of_bold_only() {
        let md = "Require a **bypass check**: run `git sage **x**`.\n\n- **a** b\n- c ** d\n";
        assert_eq!(
            to_text(md),
            "Require a bypass check: run `git sage **x**`.\n\n- a b\n- c ** d\n"
        );
        assert_eq!(to_text("a ` **b**"), "a ` b");
        assert_eq!(to_text(""), "");
    }

    #[test]
    fn unpaired_marks_stay_literal() {
        assert_eq!(to_html("a ` b"), "<p>a ` b</p>\n");
        assert_eq!(to_html("a ** b"), "<p>a ** b</p>\n");
        assert_eq!(to_html("`x` and ` y"), "<p><code>x</code> and ` y</p>\n");
        assert_eq!(to_html("**a** b **c"), "<p><strong>a</strong> b **c</p>\n");
        assert_eq!(
            to_html("- item\n  goes on\ntext"),
            "<ul>\n<li>item goes on</li>\n</ul>\n<p>text</p>\n"
        );
        assert_eq!(to_html(""), "");
    }
}
