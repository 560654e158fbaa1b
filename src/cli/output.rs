//! One set of output conventions for every command that prints a result: `--format` (one
//! list of values, each command taking the ones it can write), `--out FILE` (repeatable; the
//! format follows the extension unless `--format` says otherwise), and, on a terminal,
//! colour and wrapping.

use crate::term::Styled;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Arg, Args, ValueEnum};

use super::Context;
use crate::error::{Error, Result};

/// Every output format of the tool; a command accepts the ones it can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// For people, on a terminal.
    Text,
    /// The command's JSON document (docs/json.md).
    Json,
    /// Markdown, for a pull-request comment.
    Md,
    /// A self-contained HTML page.
    Html,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

/// What the data commands write (`provenance`, `turns`, `judge`, `origin`).
pub(crate) const DATA: [Format; 2] = [Format::Text, Format::Json];

/// What the corpus summaries write (`batch`, `agree`).
pub(crate) const SUMMARY: [Format; 3] = [Format::Text, Format::Md, Format::Json];

/// What the reports write (`blame-origin`, `demo`): everything.
pub(crate) const REPORT: [Format; 5] = [
    Format::Text,
    Format::Json,
    Format::Md,
    Format::Html,
    Format::Sarif,
];

impl Format {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Md => "md",
            Format::Html => "html",
            Format::Sarif => "sarif",
        }
    }

    /// What it is called in a sentence ("wrote r.json (JSON)").
    pub(crate) fn title(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "JSON",
            Format::Md => "Markdown",
            Format::Html => "HTML",
            Format::Sarif => "SARIF",
        }
    }

    /// The extension `--out` names it by (`of_path` takes a few more spellings).
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Format::Text => ".txt",
            Format::Json => ".json",
            Format::Md => ".md",
            Format::Html => ".html",
            Format::Sarif => ".sarif",
        }
    }

    /// The format a file's extension names, if any.
    pub(crate) fn of_path(p: &Path) -> Option<Format> {
        let ext = p.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" | "text" => Format::Text,
            "json" => Format::Json,
            "md" | "markdown" => Format::Md,
            "html" | "htm" => Format::Html,
            "sarif" => Format::Sarif,
            _ => return None,
        })
    }
}

/// Narrows `--format` to the formats a command writes, so that its help lists only those.
pub(crate) fn only(arg: Arg, formats: &'static [Format]) -> Arg {
    let names: Vec<&'static str> = formats.iter().map(|f| f.name()).collect();
    arg.value_parser(
        PossibleValuesParser::new(names)
            .map(|s: String| Format::from_str(&s, true).unwrap_or(Format::Text)),
    )
}

/// `--format` and `--out`, flattened into every command that prints a result.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Output")]
pub(crate) struct OutputArgs {
    /// Format of the result on stdout, and of every --out file [default: text; for --out, the
    /// file's extension]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Write the result to FILE instead of stdout, in the format its extension names (.txt,
    /// .json, .md, .html, .sarif); repeat for several; `-` is stdout
    #[arg(long, value_name = "FILE")]
    pub out: Vec<PathBuf>,
}

/// Where one rendering of the result goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// `None`: stdout.
    pub path: Option<PathBuf>,
    pub format: Format,
}

impl OutputArgs {
    /// Where the result goes, in which format; `allowed` is what the command writes (its first
    /// is the default). An `--out` whose extension names a format the command cannot write, or
    /// no format at all (`r.pdf`), is bad input unless `--format` says which, so `--out r.html`
    /// never quietly writes text; a name without an extension gets the default.
    pub(crate) fn targets(&self, command: &str, allowed: &[Format]) -> Result<Vec<Target>> {
        let check = |f: Format, why: String| -> Result<Format> {
            if allowed.contains(&f) {
                return Ok(f);
            }
            let list: Vec<&str> = allowed.iter().map(|f| f.name()).collect();
            Err(Error::input(format!(
                "{command} writes {}; {why} asks for {}",
                list.join(", "),
                f.name()
            ))
            .hint("name a file with one of those extensions, or pass --format"))
        };
        let default = allowed.first().copied().unwrap_or(Format::Text);
        if self.out.is_empty() {
            return Ok(vec![Target {
                path: None,
                format: self.format.unwrap_or(default),
            }]);
        }
        let mut out = Vec::new();
        for p in &self.out {
            let stdout = p.as_os_str() == "-";
            // Said before any work is done, and as bad input: a folder is no file to write.
            if !stdout && p.is_dir() {
                return Err(
                    Error::input(format!("--out {} is a directory", p.display()))
                        .hint("name a file in it, e.g. --out DIR/report.html"),
                );
            }
            let format = match (self.format, Format::of_path(p)) {
                (Some(f), _) => f,
                (None, Some(f)) if !stdout => check(f, format!("--out {}", p.display()))?,
                (None, None) if !stdout && p.extension().is_some() => {
                    let known: Vec<&str> = allowed.iter().map(|f| f.extension()).collect();
                    return Err(Error::input(format!(
                        "--out {}: {command} writes {}, and no other extension names a format",
                        p.display(),
                        known.join(", ")
                    ))
                    .hint("name the file with one of those extensions, or pass --format"));
                }
                (None, _) => default,
            };
            out.push(Target {
                path: (!stdout).then(|| p.clone()),
                format,
            });
        }
        Ok(out)
    }
}

/// A rendered result: text for people keeps its writer's marks (`Styled`) until it is printed.
pub(crate) enum Rendered {
    Plain(String),
    Styled(Styled),
}

impl From<String> for Rendered {
    fn from(s: String) -> Rendered {
        Rendered::Plain(s)
    }
}

impl From<Styled> for Rendered {
    fn from(s: Styled) -> Rendered {
        Rendered::Styled(s)
    }
}

impl Rendered {
    fn into_styled(self) -> Styled {
        match self {
            Rendered::Plain(s) => Styled::from(s),
            Rendered::Styled(s) => s,
        }
    }
}

/// Writes the result to every target: `json` for JSON (streamed to stdout), `render` for the
/// others, each format rendered once. Text for a terminal is coloured (where its writer
/// marked it) and wrapped.
pub(crate) fn emit<T: serde::Serialize, R: Into<Rendered>>(
    ctx: &Context,
    targets: &[Target],
    json: &T,
    render: impl Fn(Format) -> Result<R>,
) -> Result<()> {
    let mut done: Vec<(Format, Styled)> = Vec::new();
    for t in targets {
        if t.format == Format::Json && t.path.is_none() {
            ctx.print_json(json)?;
            continue;
        }
        let rendered = match done.iter().find(|(f, _)| *f == t.format) {
            Some((_, s)) => s.clone(),
            None => {
                let s = match t.format {
                    Format::Json => Styled::from(
                        crate::report::jsonfmt::to_string(json)
                            .map_err(|e| Error::env(format!("cannot encode JSON: {e}")))?,
                    ),
                    f => render(f)?.into().into_styled(),
                };
                done.push((t.format, s.clone()));
                s
            }
        };
        match &t.path {
            Some(p) => {
                // Text from repository and transcript content: controls shown, not obeyed —
                // on a terminal, in a pull-request comment (`| gh pr comment`), in a
                // browser's view source or a pager.
                let text = match t.format {
                    Format::Text | Format::Md | Format::Html => rendered.to_terminal(false),
                    _ => rendered.into_plain(),
                };
                crate::files::write_output(p, text.as_bytes())
                    .map_err(|e| Error::env(format!("cannot write {}: {e}", p.display())))?;
                // A file written is said, as nothing else on the terminal shows it.
                crate::say!("git-sage: wrote {} ({})", p.display(), t.format.title());
            }
            None if t.format == Format::Text => ctx.print_report(&rendered)?,
            None if matches!(t.format, Format::Md | Format::Html) => {
                ctx.print(&rendered.to_terminal(false))?
            }
            None => ctx.print(rendered.as_str())?,
        }
    }
    Ok(())
}

/// Warnings go to stderr as `git-sage: warning: …` (JSON documents also carry them as data).
pub(crate) fn warn_all<'a>(
    tr: &crate::i18n::Tr,
    warnings: impl IntoIterator<Item = &'a crate::warning::Warning>,
) {
    for w in warnings {
        crate::say!("git-sage: warning: {}", w.shown(tr));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(format: Option<Format>, out: &[&str]) -> OutputArgs {
        OutputArgs {
            format,
            out: out.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn the_extension_decides_unless_format_says() {
        let all = [
            Format::Text,
            Format::Json,
            Format::Md,
            Format::Html,
            Format::Sarif,
        ];
        let t = args(None, &["r.md", "r.sarif", "r", "-"])
            .targets("x", &all)
            .unwrap();
        let f: Vec<Format> = t.iter().map(|t| t.format).collect();
        assert_eq!(f, [Format::Md, Format::Sarif, Format::Text, Format::Text]);
        assert_eq!(t[3].path, None);
        let t = args(Some(Format::Json), &["r.md"])
            .targets("x", &all)
            .unwrap();
        assert_eq!(t[0].format, Format::Json);
        let t = args(None, &[])
            .targets("x", &[Format::Text, Format::Json])
            .unwrap();
        assert_eq!(
            t,
            [Target {
                path: None,
                format: Format::Text
            }]
        );
        let e = args(None, &["r.html"])
            .targets("provenance", &[Format::Text, Format::Json])
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("provenance writes text, json; --out r.html asks for html"),
            "{e}"
        );
        // An extension that names no format is bad input, unless --format says which.
        let e = args(None, &["r.pdf"]).targets("x", &all).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains(
                "--out r.pdf: x writes .txt, .json, .md, .html, .sarif, and no other extension names a format"
            ),
            "{e}"
        );
        let t = args(Some(Format::Json), &["r.pdf"])
            .targets("x", &all)
            .unwrap();
        assert_eq!(t[0].format, Format::Json);
        let t = args(None, &["report"]).targets("x", &all).unwrap();
        assert_eq!(t[0].format, Format::Text);
    }
}
