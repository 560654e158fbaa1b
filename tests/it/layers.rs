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
    &["i18n", "env"],
    &["warning"],
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

/// The module path of a file under src/ (`judge/run.rs` → judge::run, `judge/mod.rs` → judge).
fn module_of(rel: &str) -> Vec<String> {
    let p = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = p.split('/').map(str::to_string).collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The file that holds module `path`, if one does.
fn file_of(path: &[String], files: &BTreeMap<Vec<String>, String>) -> Option<String> {
    files.get(path).cloned()
}

/// Every `crate::…`, `super::…` and `self::…` path of a file's code, grouped `use` forms
/// expanded (`use super::{a, b::c}`), as segments from the crate root.
fn paths_used(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let segs = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|p| {
                p.trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|p| !p.is_empty())
            .collect()
    };
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let at = &code[i..];
        let opens = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| at.starts_with(p));
        if !opens || (i > 0 && (word(bytes[i - 1]) || bytes[i - 1] == b':')) {
            i += 1;
            continue;
        }
        // The base: the crate root, this module, or its parent (`super::super::` climbs on).
        let mut base: Vec<String> = me.to_vec();
        let mut rest = at;
        loop {
            if let Some(r) = rest.strip_prefix("crate::") {
                base.clear();
                rest = r;
            } else if let Some(r) = rest.strip_prefix("self::") {
                rest = r;
            } else if let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            } else {
                break;
            }
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let mut p = base.clone();
                p.extend(segs(item));
                out.push(p);
            }
        } else {
            let mut p = base.clone();
            p.extend(segs(rest));
            out.push(p);
        }
        i += at.len() - rest.len();
    }
    out
}

/// No circles between files: a file never uses, through any chain, a file that uses it.
/// A folder's `mod.rs` naming and calling its own files is not counted — it is their front
/// door — nor is `lib.rs`/`main.rs`, the root that names every module; every other path
/// (`use`, a re-export, an inline `super::x::f()`) is.
#[test]
fn no_file_uses_a_file_that_uses_it() {
    let all = sources();
    let files: BTreeMap<Vec<String>, String> = all
        .iter()
        .map(|(rel, _)| (module_of(rel), rel.clone()))
        .collect();
    let mut edges: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in &all {
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        let me = module_of(rel);
        let is_mod = rel.ends_with("/mod.rs");
        for path in paths_used(&code(text), &me) {
            // The longest prefix of the path that is a file.
            let Some(target) = (1..=path.len())
                .rev()
                .find_map(|k| file_of(&path[..k], &files))
            else {
                continue;
            };
            if &target == rel {
                continue;
            }
            let folder = rel.trim_end_matches("mod.rs");
            if is_mod && target.starts_with(folder) {
                continue;
            }
            edges.entry(rel.clone()).or_default().insert(target);
        }
    }
    // Tarjan's strongly connected components: any with two files or more is a circle.
    struct T<'a> {
        edges: &'a BTreeMap<String, std::collections::BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: std::collections::BTreeSet<String>,
        next: usize,
        circles: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_string(), t.next);
        t.low.insert(v.to_string(), t.next);
        t.next += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        let next: Vec<String> = t.edges.get(v).into_iter().flatten().cloned().collect();
        for w in next {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let l = t.low[&w].min(t.low[v]);
                t.low.insert(v.to_string(), l);
            } else if t.on.contains(&w) {
                let l = t.index[&w].min(t.low[v]);
                t.low.insert(v.to_string(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                scc.push(w);
                if done {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.circles.push(scc);
            }
        }
    }
    let mut t = T {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: Default::default(),
        next: 0,
        circles: Vec::new(),
    };
    let nodes: Vec<String> = all.iter().map(|(r, _)| r.clone()).collect();
    for n in &nodes {
        if !t.index.contains_key(n) {
            visit(&mut t, n);
        }
    }
    let total: usize = edges.values().map(|s| s.len()).sum();
    assert!(
        total > 200,
        "too few arrows read ({total}): the reader is broken"
    );
    let shown: Vec<String> = t
        .circles
        .iter()
        .map(|c| {
            let ties: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            ties.join(", ")
        })
        .collect();
    assert!(shown.is_empty(), "import circles:\n{}", shown.join("\n"));
}

/// The environment is read once, at the edge (`env.rs`, read by `cli`), and passed down as
/// values. Exceptions, each for its reason: `judge/endpoint.rs` reads the HTTP judges' keys
/// where it checks them (keys only ever come from there), and `git/` honours git's own
/// `GIT_NO_REPLACE_OBJECTS` as git does.
#[test]
fn only_the_edge_reads_the_environment() {
    let allowed = |rel: &str| {
        rel == "env.rs"
            || rel.starts_with("cli/")
            || rel == "judge/endpoint.rs"
            || rel.starts_with("git/")
    };
    let files = sources();
    // Files declared as `#[cfg(test)] mod name;` ship nothing.
    let mut tests_only = Vec::new();
    for (rel, text) in &files {
        let dir = match rel.rsplit_once('/') {
            Some((d, "mod.rs")) => format!("{d}/"),
            Some((d, f)) => format!("{d}/{}/", f.trim_end_matches(".rs")),
            None if rel == "lib.rs" => String::new(),
            None => format!("{}/", rel.trim_end_matches(".rs")),
        };
        let lines: Vec<&str> = text.lines().collect();
        for w in lines.windows(2) {
            let decl = w[1].trim().trim_start_matches("pub(crate) ");
            if w[0].trim() == "#[cfg(test)]"
                && let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';'))
            {
                tests_only.push(format!("{dir}{name}.rs"));
            }
        }
    }
    assert!(!tests_only.is_empty());
    let mut readers = Vec::new();
    for (rel, text) in files {
        let code = code(&text);
        if tests_only.contains(&rel) || allowed(&rel) {
            continue;
        }
        for call in ["env::var(", "env::var_os(", "env::vars("] {
            if code.contains(call) {
                readers.push(format!("{rel}: {call}"));
            }
        }
    }
    assert!(
        readers.is_empty(),
        "read the variable in env.rs and pass the value down: {readers:?}"
    );
}
