//! What users read points only at documents that ship with git-sage. The method's source
//! documents live outside the repository; a help text, report, template or doc that cites
//! them leaves the reader with nowhere to go. Also: every `docs/….md#anchor` cited exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::common::Repo;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The text that reaches users: the sources (help texts, reports and SARIF are built from
/// their strings and doc comments, and developers read the comments), the embedded
/// templates, the docs, the hook scripts, the README and the changelog. tests/ and bench/
/// are left out: they legitimately say where the optional fixture corpus is looked for.
fn shipped_text_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["src", "templates", "docs", "hooks"] {
        files_under(&root.join(dir), &mut files);
    }
    files.push(root.join("README.md"));
    files.push(root.join("CHANGELOG.md"));
    files.sort();
    files
}

/// Patterns that name the unshipped documents. `SPEC` alone is not one (`Spec::parse`, a
/// format spec); the document is cited as `SPEC.md` or by its sections (`§`).
fn unshipped_patterns() -> Vec<(Regex, &'static str)> {
    [
        (r"\bSPEC(\.md|\s*§)", "the method's unshipped spec"),
        (r"§", "a section of the unshipped spec"),
        (r"\bCONTRACT\b", "the unshipped output contract"),
        (
            r"\bARCHITECTURE\.md\b",
            "the unshipped architecture sketch (docs/architecture.md ships)",
        ),
        (r"\.\./shared\b", "the folder beside the repository"),
        (
            r"(?i)\bthe seeds\b|\bseeds(/|'|’)",
            "the method's unshipped source write-ups",
        ),
    ]
    .into_iter()
    .map(|(p, why)| (Regex::new(p).unwrap(), why))
    .collect()
}

/// The text as prose: comment markers dropped and whitespace collapsed, so that a phrase
/// wrapped across comment lines or help lines still matches.
fn prose(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.trim_start();
            ["//!", "///", "//", "#"]
                .iter()
                .find_map(|m| l.strip_prefix(m))
                .unwrap_or(l)
        })
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn unshipped_mentions(name: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (re, why) in unshipped_patterns() {
        // Line by line for a useful location, then as prose for phrases that wrap.
        let mut hit = false;
        for (i, line) in text.lines().enumerate() {
            if let Some(m) = re.find(line) {
                found.push(format!("{name}:{}: `{}` names {why}", i + 1, m.as_str()));
                hit = true;
            }
        }
        if !hit && let Some(m) = re.find(&prose(text)) {
            found.push(format!(
                "{name}: `{}` (across lines) names {why}",
                m.as_str()
            ));
        }
    }
    found
}

#[test]
fn shipped_text_names_no_unshipped_document() {
    let root = root();
    let mut found = Vec::new();
    for p in shipped_text_files() {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let name = p.strip_prefix(&root).unwrap().display().to_string();
        found.extend(unshipped_mentions(&name, &text));
    }
    assert!(
        found.is_empty(),
        "user-facing text cites documents that do not ship; point to docs/method.md (or another \
         doc under docs/) instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_patterns_catch_what_they_should_and_nothing_else() {
    for bad in [
        "the origin rule of SPEC §6",
        "see SPEC.md",
        "(§8)",
        "JSON documents of CONTRACT.md",
        "ARCHITECTURE.md",
        "in ../shared/fixtures/real",
        "(the seeds' format)",
        "/// a Markdown log (the\n/// seeds' format)",
    ] {
        assert!(!unshipped_mentions("t", bad).is_empty(), "missed: {bad}");
    }
    for good in [
        "Spec::parse(s)",
        "a format spec: {:>8}",
        "const SPEC_LEN: usize = 3;",
        "docs/architecture.md",
        "--seed 7: the same seed, the same figures",
        "shared between files",
        "a hook shared with other repositories",
    ] {
        assert!(
            unshipped_mentions("t", good).is_empty(),
            "false positive: {good}"
        );
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (`-` and `_` kept), spaces
/// to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings, outside code fences; repeated headings get
/// `-1`, `-2`… as on GitHub.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fence = false;
    for line in markdown.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let level = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && t[level..].starts_with(' ') {
            let base = slug(&t[level..]);
            let mut a = base.clone();
            let mut n = 0;
            while out.contains(&a) {
                n += 1;
                a = format!("{base}-{n}");
            }
            out.insert(a);
        }
    }
    out
}

fn check_target(
    from: &str,
    file: &Path,
    anchor: Option<&str>,
    cited: &str,
    broken: &mut Vec<String>,
) {
    let Ok(text) = std::fs::read_to_string(file) else {
        broken.push(format!("{from}: `{cited}`: no such file"));
        return;
    };
    if let Some(a) = anchor
        && !anchors(&text).contains(a)
    {
        broken.push(format!("{from}: `{cited}`: no heading with anchor #{a}"));
    }
}

#[test]
fn cited_docs_and_their_anchors_exist() {
    let root = root();
    // `docs/name.md#anchor` anywhere, from the repository root; not inside a longer path.
    let rooted =
        Regex::new(r"(?:^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_./-]*?\.md)(?:#([A-Za-z0-9_-]+))?")
            .unwrap();
    // Markdown links inside docs/, relative to docs/.
    let link = Regex::new(r"\]\(([A-Za-z0-9_./-]*\.md)?(?:#([A-Za-z0-9_-]+))?\)").unwrap();
    let mut broken = Vec::new();
    let mut cited = 0;
    for p in shipped_text_files() {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let name = p.strip_prefix(&root).unwrap().display().to_string();
        // Unit tests' sample paths (`docs/a.md` as data) cite nothing.
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) if p.extension().is_some_and(|x| x == "rs") => text[..i].to_string(),
            _ => text,
        };
        for c in rooted.captures_iter(&text) {
            cited += 1;
            let path = c.get(1).unwrap().as_str();
            let a = c.get(2).map(|m| m.as_str());
            check_target(
                &name,
                &root.join(path),
                a,
                c.get(0).unwrap().as_str().trim(),
                &mut broken,
            );
        }
        if p.starts_with(root.join("docs")) && p.extension().is_some_and(|x| x == "md") {
            for c in link.captures_iter(&text) {
                let whole = c.get(0).unwrap().as_str();
                let target = match c.get(1) {
                    Some(m) if m.as_str().starts_with("docs/") => continue, // rooted, above
                    Some(m) => p.parent().unwrap().join(m.as_str()),
                    None if c.get(2).is_some() => p.clone(),
                    None => continue,
                };
                cited += 1;
                check_target(
                    &name,
                    &target,
                    c.get(2).map(|m| m.as_str()),
                    whole,
                    &mut broken,
                );
            }
        }
    }
    assert!(
        cited > 20,
        "the scan found only {cited} citations: is the pattern broken?"
    );
    assert!(
        broken.is_empty(),
        "broken doc references:\n{}",
        broken.join("\n")
    );
}

#[test]
fn method_doc_has_the_anchors_code_cites() {
    let text = std::fs::read_to_string(root().join("docs/method.md")).unwrap();
    let have = anchors(&text);
    for a in [
        "provenance",
        "writes-and-turns",
        "turns-and-kinds",
        "task-scope",
        "rubric",
        "quotes",
        "prefix-protocol",
        "origin-rule",
        "missed-opportunities",
        "recommendations",
        "screening",
        "agreement",
        "worked-example",
    ] {
        assert!(have.contains(a), "docs/method.md lacks #{a}: {have:?}");
    }
    assert_eq!(
        slug("Agreement: `git sage agree`"),
        "agreement-git-sage-agree"
    );
}

/// The subcommands listed under "Commands:" in a help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A wrapped description continues deeper in; a command starts two spaces in.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn help_and_man_pages_name_no_unshipped_document() {
    let r = Repo::new();
    let mut found = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = r.sage(&args).ok().stdout;
        seen += 1;
        let name = format!("git sage {}", args.join(" "));
        found.extend(unshipped_mentions(&name, &help));
        for sub in subcommands(&help) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
    }
    assert!(
        seen > 15,
        "only {seen} help texts seen: is the command list parsed?"
    );

    let man = r.path().join("man");
    r.sage(&["install-man", "--dir", man.to_str().unwrap()])
        .ok();
    let mut pages = Vec::new();
    files_under(&man, &mut pages);
    assert!(pages.len() > 10, "{pages:?}");
    for p in pages {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        found.extend(unshipped_mentions(&name, &text));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
