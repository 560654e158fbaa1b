//! Every `git sage …` command in README.md and docs/ parses with this command line: a renamed
//! flag or a format a command does not write fails here, not in a user's terminal.

use std::path::Path;

use clap::Parser;

use super::Cli;

/// The `git sage …` commands of a Markdown text (fenced blocks and inline code), with the
/// line each starts on; shell around them (`&&`, pipes, redirections, comments) cut off.
fn commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut console = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            fenced = !fenced;
            console = fenced && lang.trim() == "console";
            continue;
        }
        let mut candidates: Vec<String> = Vec::new();
        if let Some((n, mut acc)) = pending.take() {
            acc.push(' ');
            acc.push_str(line.trim());
            match acc.strip_suffix('\\') {
                Some(a) => pending = Some((n, a.trim_end().to_string())),
                None => out.push((n, acc)),
            }
            continue;
        }
        if fenced {
            // Where a command starts: a line of its own, after a prompt, `run:` or `&&`; not in
            // a comment, a step's name, or the output shown in a console block.
            if let Some(at) = line.find("git sage ").or_else(|| line.find("git-sage ")) {
                let before = line[..at].trim();
                let starts = if console {
                    before == "$"
                } else {
                    ["", "$", "run:", "- run:", "&&", "||", "then", "do"].contains(&before)
                        || before.ends_with("&&")
                };
                if starts {
                    candidates.push(line[at..].to_string());
                }
            }
        } else {
            for (k, span) in line.split('`').enumerate() {
                if k % 2 == 1 && (span.starts_with("git sage ") || span.starts_with("git-sage ")) {
                    out.push((i + 1, span.to_string()));
                }
            }
        }
        for c in candidates {
            match c.trim_end().strip_suffix('\\') {
                Some(a) => pending = Some((i + 1, a.trim_end().to_string())),
                None => out.push((i + 1, c)),
            }
        }
    }
    out.into_iter()
        .map(|(n, c)| {
            let mut c = c;
            for cut in [" #", "&&", "||", " | ", ";", " > ", " 2>", " >>", ")"] {
                if let Some(at) = c.find(cut) {
                    c.truncate(at);
                }
            }
            (n, c.trim().to_string())
        })
        .collect()
}

/// Shell words of a simple command line (quotes and backslashes); `None` for what this does
/// not read (variables, globs, placeholders such as `<file>` or `A|B`).
fn words(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                any = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        '$' | '`' => return None,
                        d => cur.push(d),
                    }
                }
            }
            '\\' => cur.extend(chars.next()),
            ' ' | '\t' => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            '$' | '*' | '<' | '>' | '|' | '[' | '…' | '{' => return None,
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Some(out)
}

#[test]
fn every_documented_command_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let (mut checked, mut failures) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (line, cmd) in commands(&text) {
            let Some(w) = words(&cmd) else { continue };
            // `git sage X` → X; `git-sage X` → X
            let args: Vec<String> = w
                .into_iter()
                .skip_while(|a| a != "sage" && a != "git-sage")
                .skip(1)
                .collect();
            // A command named in prose (`git sage batch`) is not a command line to parse.
            if args.len() < 2 {
                continue;
            }
            // Placeholders (`SESSION`, `DIR`) stand for a value: any value will do, but one
            // that must come from a list is not checked.
            let placeholder = |a: &str| {
                a.len() > 1
                    && a.chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c == '.')
            };
            let args: Vec<String> = args
                .into_iter()
                .map(|a| {
                    if placeholder(&a) {
                        "PLACEHOLDER".into()
                    } else {
                        a
                    }
                })
                .collect();
            checked += 1;
            let argv = std::iter::once("git-sage".to_string()).chain(args);
            if let Err(e) = Cli::try_parse_from(argv) {
                use clap::error::ErrorKind::*;
                let listed = e.kind() == InvalidValue && e.to_string().contains("'PLACEHOLDER'");
                if !listed
                    && !matches!(
                        e.kind(),
                        DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
                    )
                {
                    let first = e.to_string().lines().next().unwrap_or_default().to_string();
                    failures.push(format!(
                        "{}:{line}: {cmd}\n    {first}",
                        f.strip_prefix(root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        checked >= 50,
        "only {checked} commands found: the extraction broke"
    );
    assert!(
        failures.is_empty(),
        "{} documented command(s) do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn extraction_reads_blocks_spans_and_continuations() {
    let md = "Run `git sage demo --keep DIR` now.\n```sh\nx && git sage turns a.jsonl --out t.json  # c\ngit sage judge s \\\n  --jobs 2\n```\n";
    let c: Vec<String> = commands(md).into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        c,
        [
            "git sage demo --keep DIR",
            "git sage turns a.jsonl --out t.json",
            "git sage judge s --jobs 2"
        ]
    );
    assert_eq!(words("a 'b c' \"d\\\"e\"").unwrap(), ["a", "b c", "d\"e"]);
    assert_eq!(words("a <file>"), None);
}
