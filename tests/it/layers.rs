//! The layer rule of docs/architecture.md, checked over the source text: a module uses only
//! modules below it, and a subcommand's file never uses another subcommand's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Top-level modules, lowest first. A module may use modules of a lower rank only.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["term"],
    &[
        "anchor", "files", "lang", "redact", "stats", "timing", "tool",
    ],
    &["i18n"],
    &["git"],
    &["settings"],
    &["finding"],
    &["history"],
    &["transcript"],
    &["judge"],
    &["origin"],
    &["report"],
    &["notes", "trace"],
    &["forge"],
    &["guard"],
    &["scanners"],
    &["screen"],
    &["pipeline"],
    &["batch"],
    &["agree"],
    &["cli"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its test module (tests may reach anywhere) and comments.
fn code(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `crate::name` paths a file uses, including grouped `use crate::{a, b::c}` forms.
fn used_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // `crate::say!` is a macro exported at the root: it belongs to where it is defined.
            if !rest[name.len()..].starts_with('!') {
                out.push(name);
            }
        }
    }
    out
}

fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

#[test]
fn modules_use_only_modules_below_them() {
    let mut wrong: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (rel, text) in sources() {
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs");
        let Some(mine) = rank(top) else {
            wrong.entry(rel.clone()).or_default().push(format!(
                "{top} is in no layer: add it to LAYERS and docs/architecture.md"
            ));
            continue;
        };
        for used in used_modules(&code(&text)) {
            if used == top || used.is_empty() || used == "Error" || used == "Result" {
                continue;
            }
            match rank(&used) {
                Some(r) if r < mine => {}
                Some(_) => wrong
                    .entry(rel.clone())
                    .or_default()
                    .push(format!("{top} uses {used}, which is not below it")),
                None => wrong
                    .entry(rel.clone())
                    .or_default()
                    .push(format!("{used} is in no layer")),
            }
        }
    }
    assert!(wrong.is_empty(), "layer rule broken:\n{wrong:#?}");
}

/// Subcommands share code through `cli/util.rs` (or a module below cli), never by calling
/// one another. The subcommands are the modules `cli/mod.rs` dispatches to.
#[test]
fn subcommands_do_not_use_each_other() {
    let all = sources();
    let dispatch = &all.iter().find(|(rel, _)| rel == "cli/mod.rs").unwrap().1;
    let mut commands: Vec<String> = dispatch
        .lines()
        .filter_map(|l| {
            let (_, call) = l.split_once("=> ")?;
            let name = call.split("::").next()?.trim();
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_')
                .then(|| name.to_string())
        })
        .collect();
    commands.sort();
    commands.dedup();
    assert!(commands.len() >= 10, "no dispatch found: {commands:?}");
    let mut wrong = Vec::new();
    for (rel, text) in &all {
        let Some(me) = rel.strip_prefix("cli/").and_then(|r| r.strip_suffix(".rs")) else {
            continue;
        };
        if !commands.iter().any(|c| c == me) {
            continue;
        }
        let code = code(text);
        for other in commands.iter().filter(|c| *c != me) {
            let uses = [
                format!("super::{other}::"),
                format!("super::{other}}}"),
                format!("super::{other},"),
                format!("crate::cli::{other}::"),
                format!("use super::{other};"),
            ];
            if uses.iter().any(|u| code.contains(u.as_str())) {
                wrong.push(format!("cli/{me}.rs uses cli/{other}.rs"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
