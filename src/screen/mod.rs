//! `git sage screen`: the funnel of docs/method.md#screening over the files a range changed — L0
//! the file parses, L1 its base definitions are kept and its imports resolve (and, only on request,
//! the tests pass), L2 Bandit's high-severity findings, L3 the rule score R — and the candidates:
//! files that pass L0 and L1 and are flagged by L2 or L3.
//!
//! `screen` runs in steps, one function each: read → parse → score → resolve → scan → tally.
//!
//! Language-independent here; `python.rs` (with `python_run.rs`) and templates/screen/python/
//! are the Python part (another language is one module like it plus its tables).

pub(crate) mod anchorless;
pub(crate) mod bandit;
pub(crate) mod facts;
pub(crate) mod python;
pub(crate) mod python_run;
pub(crate) mod report;
pub(crate) mod rules;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::git::{Oid, Repo};
use crate::history::range::Range;
use crate::scanners::Scratch;
use facts::{Facts, ParseError};
use python::{Dynamic, ImportEnv, Unresolved};
use rules::{Score, Tables};

pub(crate) const SCREEN_SCHEMA: &str = "sage.screen/1";

/// The embedded Python tables; a templates directory may override each (screen/python/NAME).
const PY_TABLES: [(&str, &str); 6] = [
    (
        "sources.yaml",
        include_str!("../../templates/screen/python/sources.yaml"),
    ),
    (
        "sinks.yaml",
        include_str!("../../templates/screen/python/sinks.yaml"),
    ),
    (
        "guards.yaml",
        include_str!("../../templates/screen/python/guards.yaml"),
    ),
    (
        "weaknesses.yaml",
        include_str!("../../templates/screen/python/weaknesses.yaml"),
    ),
    (
        "stdlib.txt",
        include_str!("../../templates/screen/python/stdlib.txt"),
    ),
    (
        "distributions.yaml",
        include_str!("../../templates/screen/python/distributions.yaml"),
    ),
];

/// A Python table, from `dir/screen/python/NAME` when present, else embedded.
pub(crate) fn py_table(dir: Option<&Path>, name: &str) -> Result<(String, String)> {
    if let Some(d) = dir {
        let p = d.join("screen/python").join(name);
        if p.exists() {
            let t = crate::files::read_text(&p, "table", crate::files::DOC_CAP)?;
            return Ok((p.display().to_string(), t));
        }
    }
    let (_, t) = PY_TABLES
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a known table");
    Ok((format!("templates/screen/python/{name}"), t.to_string()))
}

pub(crate) fn python_tables(dir: Option<&Path>) -> Result<Tables> {
    let s = py_table(dir, "sources.yaml")?;
    let k = py_table(dir, "sinks.yaml")?;
    let g = py_table(dir, "guards.yaml")?;
    let w = py_table(dir, "weaknesses.yaml")?;
    Tables::parse((&s.0, &s.1), (&k.0, &k.1), (&g.0, &g.1), (&w.0, &w.1))
}

/// What running the tables' own examples found (`git sage screen --check-tables`).
#[derive(Debug, Default)]
pub(crate) struct TableCheck {
    /// Entries, and how many of them carry no example.
    pub entries: usize,
    pub without_examples: Vec<String>,
    pub examples: usize,
    /// "TABLE ENTRY: what went wrong", one per example that did not hold.
    pub failures: Vec<String>,
}

/// Runs every entry's examples against the tables in effect (`dir`, else the embedded ones):
/// each `hit` must show the entry, each `miss` must not. A user who edits a table checks the
/// edit with the examples beside it.
pub(crate) fn check_tables(dir: Option<&Path>) -> Result<TableCheck> {
    let t = python_tables(dir)?;
    let mut out = TableCheck::default();
    for (name, entries) in [
        ("sources.yaml", &t.sources),
        ("sinks.yaml", &t.sinks),
        ("guards.yaml", &t.guards),
    ] {
        let table = py_table(dir, name)?.0;
        for e in entries {
            out.entries += 1;
            if e.examples.hit.is_empty() && e.examples.miss.is_empty() {
                out.without_examples.push(format!("{table} {}", e.id));
            }
            // a fragment is an example too: score what tree-sitter reads of it
            let scored = |src: &str| {
                let facts = read_python(src, &t).facts;
                rules::score(&t, &facts, src, None, DEFAULT_THRESHOLD)
            };
            let found = |src: &str| {
                let s = scored(src);
                match name {
                    "sources.yaml" => s.sources.iter().any(|h| h.id == e.id),
                    "sinks.yaml" => s.sinks.iter().any(|h| h.id == e.id),
                    _ => s.guards.iter().any(|g| g.ids.contains(&e.id)),
                }
            };
            // each kind of example, and whether one of them holds
            let flagged = |src: &str| {
                let s = scored(src);
                (s.flagged && s.sinks.iter().any(|h| h.id == e.id), s.score)
            };
            let kinds: [(&str, &[String], &Holds, &str); 4] = [
                (
                    "hit",
                    &e.examples.hit,
                    &|src| (found(src), 0.0),
                    "is not found",
                ),
                (
                    "miss",
                    &e.examples.miss,
                    &|src| (!found(src), 0.0),
                    "is found",
                ),
                (
                    "flag",
                    &e.examples.flag,
                    &flagged,
                    "is not flagged without a CWE",
                ),
                (
                    "quiet",
                    &e.examples.quiet,
                    &|src| {
                        let s = scored(src);
                        (!s.flagged, s.score)
                    },
                    "is flagged without a CWE",
                ),
            ];
            for (kind, examples, holds, otherwise) in kinds {
                for (i, src) in examples.iter().enumerate() {
                    out.examples += 1;
                    let (ok, r) = holds(src);
                    if !ok {
                        // R is what a reviewer needs to see for the flag examples
                        let score = if matches!(kind, "flag" | "quiet") {
                            format!(" (R {r:.1})")
                        } else {
                            String::new()
                        };
                        out.failures.push(format!(
                            "{table} {}: {kind} {} {otherwise}{score}",
                            e.id,
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Whether a table example holds, and the R it scored.
type Holds<'a> = dyn Fn(&str) -> (bool, f64) + 'a;

/// What tree-sitter reads of a Python file, its values followed as the tables say.
fn read_python(text: &str, tables: &Tables) -> python::Reading {
    python::read(
        text,
        &|q, free, imports| tables.is_source(q, free, imports),
        &|q| tables.is_sanitizer(q),
    )
}

/// The candidate threshold (the rule score, 0–100) unless `--threshold` says. Set on the dev
/// half of `bench/heldout.py` without a task CWE (docs/screen.md, "Calibration"): the most
/// vulnerable code flagged while ordinary code stays within 5%, the highest such threshold.
pub(crate) const DEFAULT_THRESHOLD: f64 = 10.0;

/// How long `--run-tests` may take, in seconds, unless `--tests-timeout` says.
pub(crate) const DEFAULT_TESTS_TIMEOUT: u64 = 600;

/// What the user asked for.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub task_cwe: Option<u32>,
    pub threshold: f64,
    /// Bandit findings at or above this severity flag a file (3 high, 2 medium, 1 low).
    pub l2_severity: u8,
    pub bandit: bool,
    /// `--run-tests CMD`: run in a scratch checkout of the tip; never by default.
    pub run_tests: Option<String>,
    pub tests_timeout: std::time::Duration,
    /// Pathspecs limiting the files screened (empty: all).
    pub paths: Vec<String>,
    pub templates_dir: Option<std::path::PathBuf>,
}

impl Default for Options {
    /// `git sage screen` with no flags: Bandit on, high-severity results flag a file, no tests.
    fn default() -> Options {
        Options {
            task_cwe: None,
            threshold: DEFAULT_THRESHOLD,
            l2_severity: 3,
            bandit: true,
            run_tests: None,
            tests_timeout: std::time::Duration::from_secs(DEFAULT_TESTS_TIMEOUT),
            paths: Vec::new(),
            templates_dir: None,
        }
    }
}

/// Globs over whole paths (`*` crosses `/`, as in git's pathspecs; also `?`, `[…]`,
/// `{a,b}`), or a directory prefix.
pub(crate) fn pathspec_matches(spec: &str, path: &str) -> bool {
    let spec = spec.trim_start_matches("./").trim_end_matches('/');
    if !spec.contains(['*', '?', '[', '{']) {
        return path == spec || path.starts_with(&format!("{spec}/"));
    }
    match globset::GlobBuilder::new(spec)
        .literal_separator(false)
        .build()
    {
        Ok(g) => g.compile_matcher().is_match(path),
        // Not a glob after all (an unclosed `[`): the spec as written.
        Err(_) => path == spec,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Layer0 {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ParseError>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Layer1 {
    pub ok: bool,
    /// Functions, classes and methods of the base version missing at the tip.
    pub missing_defs: Vec<String>,
    pub unresolved_imports: Vec<Unresolved>,
    /// Imports of modules a repository file makes at run time: dynamic, not checked, and not a
    /// failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dynamic_imports: Vec<Dynamic>,
    /// The tests failed (`--run-tests`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tests_failed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Layer2 {
    pub flagged: bool,
    pub findings: Vec<bandit::Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What became of a changed file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum FileStatus {
    /// Through the layers.
    #[serde(rename = "ok")]
    Ok,
    /// Gone at the tip: listed, not counted.
    #[serde(rename = "deleted")]
    Deleted,
    /// Not text: not screened.
    #[serde(rename = "binary")]
    Binary,
    /// Screening failed (a bug of ours, kept to this file).
    #[serde(rename = "error")]
    Error,
}

impl FileStatus {
    /// As the JSON report spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FileStatus::Ok => "ok",
            FileStatus::Deleted => "deleted",
            FileStatus::Binary => "binary",
            FileStatus::Error => "error",
        }
    }
}

impl std::fmt::Display for FileStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// How an outside tool (Bandit for L2, the tests for L1) fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum ToolState {
    /// Bandit ran and its report was read.
    #[serde(rename = "ran")]
    Ran,
    /// The tests passed.
    #[serde(rename = "passed")]
    Passed,
    /// It ran and failed: the tests failed or timed out, or Bandit left no report.
    #[serde(rename = "failed")]
    Failed,
    /// Not installed here.
    #[serde(rename = "missing")]
    Missing,
    /// Turned off (`--no-bandit`).
    #[serde(rename = "off")]
    Off,
    /// Not asked for (the tests), or nothing to run it on.
    #[serde(rename = "not run")]
    NotRun,
}

impl ToolState {
    /// As the JSON report spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ToolState::Ran => "ran",
            ToolState::Passed => "passed",
            ToolState::Failed => "failed",
            ToolState::Missing => "missing",
            ToolState::Off => "off",
            ToolState::NotRun => "not run",
        }
    }
}

impl std::fmt::Display for ToolState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One changed file through the layers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FileResult {
    pub path: String,
    pub language: String,
    pub status: FileStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l0: Option<Layer0>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1: Option<Layer1>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2: Option<Layer2>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l3: Option<Score>,
    pub candidate: bool,
}

/// A file worth a security look, with where to look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Candidate {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub score: f64,
    pub by_l2: bool,
    pub by_l3: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwe: Option<u32>,
    /// The suspected weakness in words (`server-side request forgery (SSRF)`), where the CWE
    /// has a name of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weakness: Option<String>,
    /// What grounds it: the strongest sink's id, or Bandit's test id.
    pub rule: String,
    /// The lines to read to confirm or dismiss it, from the tip (secrets redacted).
    pub evidence: Vec<Evidence>,
    /// In words: the sinks, sources and Bandit tests behind it.
    pub reasons: Vec<String>,
}

/// One line a reviewer reads: what it is to the candidate and its text at the tip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Evidence {
    pub line: u32,
    /// `sink ID`, `source ID`, `weakness CWE-N` or `Bandit TEST`.
    pub role: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ToolStatus {
    pub status: ToolState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Counts {
    pub files: usize,
    pub l0_failed: usize,
    pub l1_failed: usize,
    pub l2_flagged: usize,
    pub l3_flagged: usize,
    pub candidates: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ScreenDoc {
    pub schema: String,
    /// The program that wrote the document.
    pub tool: crate::tool::Tool,
    pub base: String,
    pub tip: String,
    pub commits: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_cwe: Option<u32>,
    pub threshold: f64,
    /// The range's R: the highest file score.
    pub score: f64,
    /// L0's compile check (CPython), or why L0 fell back to tree-sitter's parse.
    pub compiler: ToolStatus,
    pub bandit: ToolStatus,
    pub tests: ToolStatus,
    pub counts: Counts,
    pub candidates: Vec<Candidate>,
    pub files: Vec<FileResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl FileResult {
    /// A file before the layers have said anything.
    fn new(path: &str, status: FileStatus) -> FileResult {
        FileResult {
            path: path.to_string(),
            language: "python".into(),
            status,
            l0: None,
            l1: None,
            l2: None,
            l3: None,
            candidate: false,
        }
    }
}

/// Which language module screens a path.
fn language_of(path: &str) -> Option<&'static str> {
    (path.ends_with(".py") || path.ends_with(".pyw")).then_some("python")
}

fn is_text(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Screens the files `range` changed: read → parse → score → resolve → scan → tally.
///
/// Bandit is started right after reading and collected in scan, so that the slowest layer
/// runs while L0, L1 and L3 do.
pub(crate) fn screen(repo: &Repo, range: &Range, opts: &Options) -> Result<ScreenDoc> {
    let tables = python_tables(opts.templates_dir.as_deref())?;
    let input = read(repo, range, opts)?;
    let bandit_run = start_bandit(opts, &input.scratch);
    let compiling = start_compile(&input);
    let mut parsed = parse(&input.changed, &tables);
    let mut notes = Vec::new();
    let compiler = apply_l0(
        &mut parsed,
        compiling.map(python_run::Compiling::finish),
        &mut notes,
    );
    let parsed = score(parsed, &tables, opts);
    let mut files = resolve(repo, input.tip_tree, opts, parsed, &mut notes)?;
    let (bandit, tests) = scan(
        repo,
        input.tip,
        opts,
        bandit_run,
        &input.scratch,
        &mut files,
        &mut notes,
    )?;
    let mut tally = tally(files, opts.l2_severity);
    report::fill_evidence(&mut tally.candidates, |path| {
        input
            .changed
            .iter()
            .find(|c| c.path == path)
            .and_then(|c| c.tip.as_deref())
    });
    if !input.notebooks.is_empty() {
        notes.push(format!(
            "not screened: {} (Jupyter notebooks: their code cells are not read; `jupyter nbconvert --to script` makes a .py of them to screen)",
            input.notebooks.join(", ")
        ));
    }
    if input.changed.is_empty() {
        notes.push("the range changes no Python files".into());
    }
    Ok(ScreenDoc {
        schema: SCREEN_SCHEMA.into(),
        tool: crate::tool::Tool::current(),
        base: range.base.to_string(),
        tip: input.tip.to_string(),
        commits: range.commits.len(),
        task_cwe: opts.task_cwe,
        threshold: opts.threshold,
        score: tally.score,
        compiler,
        bandit,
        tests,
        counts: tally.counts,
        candidates: tally.candidates,
        files: tally.files,
        notes,
    })
}

/// A changed file's two versions (`None`: absent on that side).
struct Changed {
    path: String,
    tip: Option<Vec<u8>>,
    base: Option<Vec<u8>>,
}

/// What `read` took from the repository.
struct Input {
    tip: Oid,
    tip_tree: Oid,
    changed: Vec<Changed>,
    /// The tip's versions of the changed files, where Bandit reads them.
    scratch: Scratch,
    /// Changed Jupyter notebooks, which are not screened.
    notebooks: Vec<String>,
}

/// Whether a changed path is screened: a language we know, within the `--` pathspecs.
fn selected(path: &str, specs: &[String]) -> bool {
    language_of(path).is_some()
        && (specs.is_empty() || specs.iter().any(|s| pathspec_matches(s, path)))
}

/// Read: the screened files the range changed, both versions of each, read once; the tip's
/// versions are also written to a scratch tree for Bandit.
fn read(repo: &Repo, range: &Range, opts: &Options) -> Result<Input> {
    let base_tree = repo.tree_of(range.base)?;
    let tip = range.commits.last().map_or(range.base, |c| c.id);
    let tip_tree = repo.tree_of(tip)?;
    let (paths, others): (Vec<String>, Vec<String>) = repo
        .changed_paths(base_tree, tip_tree)?
        .into_iter()
        .partition(|p| selected(p, &opts.paths));
    // Python that is not a .py file is said, not passed over in silence: a notebook's code
    // cells are Python the screen does not read
    let mut notebooks = Vec::new();
    for p in others {
        let asked = opts.paths.is_empty() || opts.paths.iter().any(|s| pathspec_matches(s, &p));
        // a notebook the range deleted has nothing left to screen
        if p.ends_with(".ipynb") && asked && repo.file_in_tree(tip_tree, &p)?.is_some() {
            notebooks.push(p);
        }
    }
    let mut scratch = Scratch::new()?;
    let mut changed = Vec::with_capacity(paths.len());
    for path in paths {
        let tip_bytes = repo.file_in_tree(tip_tree, &path)?.map(|b| b.to_vec());
        let base_bytes = repo.file_in_tree(base_tree, &path)?.map(|b| b.to_vec());
        if let Some(b) = &tip_bytes {
            scratch.add(&path, b)?;
        }
        changed.push(Changed {
            path,
            tip: tip_bytes,
            base: base_bytes,
        });
    }
    Ok(Input {
        tip,
        tip_tree,
        changed,
        scratch,
        notebooks,
    })
}

/// Scan, first half: Bandit started in the background on the scratch tree (`None`: off, or
/// no file to scan).
fn start_bandit(opts: &Options, scratch: &Scratch) -> Option<bandit::Started> {
    (opts.bandit && scratch.files() > 0).then(|| bandit::start(scratch))
}

/// A changed file between the steps: its result so far and, when it parsed, what later steps
/// read from it.
struct Screened<'a> {
    result: FileResult,
    parsed: Option<Parsed<'a>>,
}

struct Parsed<'a> {
    text: &'a str,
    facts: Facts,
    /// tree-sitter's first syntax error: `facts` are what its error recovery kept.
    read_error: Option<ParseError>,
}

impl Screened<'_> {
    /// No later step has anything to add (deleted, not text, not parsed, failed).
    fn done(result: FileResult) -> Self {
        Screened {
            result,
            parsed: None,
        }
    }

    /// One odd file must not sink the whole report: a panic while screening it is reported
    /// on the file.
    fn internal_error(path: &str) -> Self {
        let mut r = FileResult::new(path, FileStatus::Error);
        r.l0 = Some(Layer0 {
            ok: false,
            error: Some(ParseError {
                line: 1,
                message: "internal error while screening this file (please report it)".into(),
            }),
        });
        Screened::done(r)
    }
}

/// `f` over `items` on as many threads as there are cores, keeping their order.
fn par_map<T: Send, U: Send>(items: Vec<T>, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(items.len().max(1));
    let chunk = items.len().div_ceil(threads).max(1);
    let mut parts = Vec::with_capacity(threads);
    let mut rest = items;
    while rest.len() > chunk {
        let tail = rest.split_off(chunk);
        parts.push(rest);
        rest = tail;
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| s.spawn(move || part.into_iter().map(f).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("screening threads do not panic"))
            .collect()
    })
}

/// Parse: L0 and the definitions half of L1 for every changed file, in parallel.
fn parse<'a>(changed: &'a [Changed], tables: &Tables) -> Vec<Screened<'a>> {
    par_map(changed.iter().collect(), |c| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse_file(c, tables)))
            .unwrap_or_else(|_| Screened::internal_error(&c.path))
    })
}

/// L0 (the tip parses) and L1's definitions (the base's functions, classes and methods are
/// still there) for one file.
fn parse_file<'a>(c: &'a Changed, tables: &Tables) -> Screened<'a> {
    let Some(tip) = &c.tip else {
        return Screened::done(FileResult::new(&c.path, FileStatus::Deleted));
    };
    let mut r = FileResult::new(&c.path, FileStatus::Ok);
    let Some(text) = is_text(tip) else {
        r.status = FileStatus::Binary;
        r.l0 = Some(Layer0 {
            ok: false,
            error: Some(ParseError {
                line: 1,
                message: "not UTF-8 text (a binary file named like source?)".into(),
            }),
        });
        return Screened::done(r);
    };
    let reading = read_python(text, tables);
    // tree-sitter's verdict until CPython's arrives (`apply_l0`)
    r.l0 = Some(Layer0 {
        ok: reading.error.is_none(),
        error: reading.error.clone(),
    });
    // a base that no longer parses says nothing about what was removed
    let missing_defs = match c
        .base
        .as_deref()
        .and_then(is_text)
        .map(|b| python::parse(b, &|_, _, _| None))
    {
        Some(Ok(b)) => b
            .defs
            .into_iter()
            .filter(|d| !reading.facts.defs.contains(d))
            .collect(),
        _ => Vec::new(),
    };
    r.l1 = Some(Layer1 {
        ok: missing_defs.is_empty(),
        missing_defs,
        unresolved_imports: Vec::new(),
        dynamic_imports: Vec::new(),
        tests_failed: false,
    });
    Screened {
        result: r,
        parsed: Some(Parsed {
            text,
            facts: reading.facts,
            read_error: reading.error,
        }),
    }
}

/// Starts L0's compile check on the tip's text versions of the changed files.
fn start_compile(input: &Input) -> Option<python_run::Compiling> {
    let paths: Vec<String> = input
        .changed
        .iter()
        .filter(|c| c.tip.as_deref().and_then(is_text).is_some())
        .map(|c| c.path.clone())
        .collect();
    if paths.is_empty() {
        return None;
    }
    python_run::start_compile(input.scratch.root(), paths)
}

/// L0's verdict: CPython's compile where it ran, tree-sitter's parse where it did not. A file
/// failing L0 keeps its facts for L3 (scored on what could be read) but has no L1: preserved
/// definitions and imports mean little in code that does not compile. Returns the compiler's
/// status.
fn apply_l0(
    files: &mut [Screened],
    compiled: Option<std::result::Result<python_run::Compiled, String>>,
    notes: &mut Vec<String>,
) -> ToolStatus {
    let status = match &compiled {
        None if files.iter().all(|s| s.parsed.is_none()) => ToolStatus {
            status: ToolState::NotRun,
            detail: Some("no changed text file to compile".into()),
        },
        None => ToolStatus {
            status: ToolState::Missing,
            detail: Some(TREE_SITTER_ONLY.into()),
        },
        Some(Err(e)) => ToolStatus {
            status: ToolState::Failed,
            detail: Some(format!("{e}; {TREE_SITTER_ONLY}")),
        },
        Some(Ok(c)) => ToolStatus {
            status: ToolState::Ran,
            detail: Some(format!("CPython {}, compile only", c.version)),
        },
    };
    if status.status != ToolState::Ran && status.status != ToolState::NotRun {
        notes.push(format!(
            "L0 without CPython: {}",
            status.detail.as_deref().unwrap_or_default()
        ));
    }
    let verdicts = compiled.and_then(|c| c.ok()).map(|c| c.errors);
    for s in files.iter_mut() {
        if s.parsed.is_none() {
            continue;
        }
        if let Some(v) = verdicts.as_ref().and_then(|v| v.get(&s.result.path)) {
            s.result.l0 = Some(Layer0 {
                ok: v.is_none(),
                error: v.as_ref().map(|(line, message)| ParseError {
                    line: *line,
                    message: message.clone(),
                }),
            });
        }
        if s.result.l0.as_ref().is_some_and(|l| !l.ok) {
            s.result.l1 = None;
        }
    }
    status
}

/// What L0 is when CPython cannot be asked.
const TREE_SITTER_ONLY: &str = "python3 did not run, so L0 is tree-sitter's parse (which accepts some code CPython 3 rejects, such as Python 2's print statement)";

/// Score: L3, the rule score R of every parsed file, in parallel.
fn score<'a>(files: Vec<Screened<'a>>, tables: &Tables, opts: &Options) -> Vec<Screened<'a>> {
    par_map(files, |mut s| {
        let scored = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(p) = &s.parsed {
                let mut l3 = rules::score(tables, &p.facts, p.text, opts.task_cwe, opts.threshold);
                l3.partial = p.read_error.is_some();
                s.result.l3 = Some(l3);
            }
        }));
        match scored {
            Ok(()) => s,
            Err(_) => Screened::internal_error(&s.result.path),
        }
    })
}

/// Resolve: the imports half of L1 — each import of a parsed file looked up statically among
/// the tip's files, the standard library, and the declared and installed packages. What could
/// not be checked becomes a note.
fn resolve(
    repo: &Repo,
    tip_tree: Oid,
    opts: &Options,
    files: Vec<Screened>,
    notes: &mut Vec<String>,
) -> Result<Vec<FileResult>> {
    let paths = repo.tree_paths(tip_tree)?;
    let read = |p: &str| {
        repo.file_in_tree(tip_tree, p)
            .ok()
            .flatten()
            .and_then(|b| String::from_utf8(b.to_vec()).ok())
    };
    let (_, stdlib) = py_table(opts.templates_dir.as_deref(), "stdlib.txt")?;
    let (dname, dists) = py_table(opts.templates_dir.as_deref(), "distributions.yaml")?;
    let dists: HashMap<String, Vec<String>> = crate::files::parse_yaml(&dists, &dname)?;
    let mut env = ImportEnv::new(&paths, &read, &stdlib, &dists);
    let files = files
        .into_iter()
        .map(|s| {
            let mut r = s.result;
            if let (Some(l1), Some(p)) = (&mut r.l1, &s.parsed) {
                let checked = env.check(&r.path, &p.facts.imports);
                l1.unresolved_imports = checked.unresolved;
                l1.dynamic_imports = checked.dynamic;
                l1.ok = l1.missing_defs.is_empty() && l1.unresolved_imports.is_empty();
            }
            r
        })
        .collect();
    notes.append(&mut env.notes);
    Ok(files)
}

/// Scan, second half: the tests (only with `--run-tests`) and Bandit's report, folded into L1
/// and L2. Returns Bandit's status and the tests'.
fn scan(
    repo: &Repo,
    tip: Oid,
    opts: &Options,
    bandit_run: Option<bandit::Started>,
    scratch: &Scratch,
    files: &mut [FileResult],
    notes: &mut Vec<String>,
) -> Result<(ToolStatus, ToolStatus)> {
    let tests = match &opts.run_tests {
        None => ToolStatus {
            status: ToolState::NotRun,
            detail: Some("repository code is not run unless --run-tests CMD is given".into()),
        },
        Some(cmd) => run_tests(repo, tip, cmd, opts.tests_timeout)?,
    };
    apply_tests(&tests, files);
    let report = bandit_run.map(|run| bandit::finish(run, scratch));
    let bandit = apply_l2(
        opts.bandit,
        report,
        files,
        (opts.l2_severity, opts.task_cwe),
        notes,
    );
    Ok((bandit, tests))
}

/// Runs the tests in a scratch checkout of the tip (only with `--run-tests`).
fn run_tests(repo: &Repo, tip: Oid, cmd: &str, timeout: std::time::Duration) -> Result<ToolStatus> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::env(format!("cannot make a scratch directory: {e}")))?;
    repo.checkout_to(tip, dir.path())?;
    // The output goes to a file, not a pipe: a suite that prints more than a pipe holds would
    // block on it while we wait for it to exit, and be reported as too slow.
    let output = tempfile::tempfile()
        .map_err(|e| Error::env(format!("cannot make a file for the tests' output: {e}")))?;
    let stdout = output
        .try_clone()
        .map_err(|e| Error::env(format!("cannot make a file for the tests' output: {e}")))?;
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", cmd])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(
            output.try_clone().map_err(|e| {
                Error::env(format!("cannot make a file for the tests' output: {e}"))
            })?,
        );
    let mut child = command
        .spawn()
        .map_err(|e| Error::env(format!("cannot run the tests ({cmd}): {e}")))?;
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::env(format!("waiting for the tests: {e}")))?
        {
            let all = read_output(output);
            return Ok(tests_finished(cmd, status.success(), status.code(), &all));
        }
        if start.elapsed() > timeout {
            // the shell only: what it started in the background holds the output file, no
            // pipe of ours, so nothing here waits on it
            let _ = child.kill();
            let _ = child.wait();
            return Ok(ToolStatus {
                status: ToolState::Failed,
                detail: Some(format!(
                    "`{cmd}` did not finish within {}s",
                    timeout.as_secs()
                )),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// What the tests printed (lossy: only its last lines are shown).
fn read_output(mut file: std::fs::File) -> String {
    use std::io::{Read, Seek};
    let mut bytes = Vec::new();
    let _ = file.rewind().and_then(|_| file.read_to_end(&mut bytes));
    String::from_utf8_lossy(&bytes).into_owned()
}

fn tests_finished(cmd: &str, success: bool, code: Option<i32>, output: &str) -> ToolStatus {
    let tail: Vec<&str> = output
        .lines()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    ToolStatus {
        status: if success {
            ToolState::Passed
        } else {
            ToolState::Failed
        },
        detail: Some(format!(
            "`{cmd}` exited with {}{}",
            code.map_or("a signal".into(), |c| c.to_string()),
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {}", tail.join(" | "))
            }
        )),
    }
}

/// Failing tests fail L1 for every file that reached L1: the tests speak for the range, not
/// for one file.
fn apply_tests(tests: &ToolStatus, files: &mut [FileResult]) {
    if tests.status != ToolState::Failed {
        return;
    }
    for l1 in files.iter_mut().filter_map(|r| r.l1.as_mut()) {
        l1.tests_failed = true;
        l1.ok = false;
    }
}

/// L2's status, and Bandit's findings on the files it scanned. `report` is `None` when Bandit
/// was not started: turned off (`enabled` false), or no changed file to scan.
fn apply_l2(
    enabled: bool,
    report: Option<std::result::Result<bandit::Report, bandit::RunError>>,
    files: &mut [FileResult],
    (l2_severity, task_cwe): (u8, Option<u32>),
    notes: &mut Vec<String>,
) -> ToolStatus {
    let report = match report {
        None if !enabled => {
            return ToolStatus {
                status: ToolState::Off,
                detail: None,
            };
        }
        None => {
            return ToolStatus {
                status: ToolState::NotRun,
                detail: Some("no changed file to scan".into()),
            };
        }
        Some(Err(e)) => {
            notes.push(format!("L2 did not run: {e}"));
            return ToolStatus {
                status: match e {
                    bandit::RunError::NotInstalled => ToolState::Missing,
                    bandit::RunError::Failed(_) => ToolState::Failed,
                },
                detail: Some(e.to_string()),
            };
        }
        Some(Ok(report)) => report,
    };
    let mut by_file: HashMap<String, Vec<bandit::Finding>> = HashMap::new();
    for f in report.findings {
        by_file.entry(f.file.clone()).or_default().push(f);
    }
    let errors: HashMap<String, String> = report.errors.into_iter().collect();
    // deleted files were not written for Bandit; a file screening failed on shows only that
    // failure
    for r in files
        .iter_mut()
        .filter(|r| matches!(r.status, FileStatus::Ok | FileStatus::Binary))
    {
        let findings = by_file.remove(&r.path).unwrap_or_default();
        let flagged = findings
            .iter()
            .any(|f| f.severity_rank() >= l2_severity && f.flags(task_cwe));
        r.l2 = Some(Layer2 {
            flagged,
            findings,
            error: errors.get(&r.path).cloned(),
        });
    }
    ToolStatus {
        status: ToolState::Ran,
        detail: Some(report.version),
    }
}

/// What the screening adds up to.
struct Tally {
    counts: Counts,
    /// Highest R first.
    candidates: Vec<Candidate>,
    /// The range's R: the highest file score.
    score: f64,
    files: Vec<FileResult>,
}

/// Tally: the candidates (pass L0 and L1, flagged by L2 or L3), the counts and the range's R.
/// Deleted files stay listed but are not counted.
fn tally(screened: Vec<FileResult>, l2_severity: u8) -> Tally {
    let mut counts = Counts {
        files: screened.len(),
        ..Counts::default()
    };
    let mut candidates = Vec::new();
    let mut files = Vec::with_capacity(screened.len());
    for mut r in screened {
        if r.status == FileStatus::Deleted {
            counts.files -= 1;
            files.push(r);
            continue;
        }
        let l0 = r.l0.as_ref().is_some_and(|l| l.ok);
        let l1 = r.l1.as_ref().is_some_and(|l| l.ok);
        let l2 = r.l2.as_ref().is_some_and(|l| l.flagged);
        let l3 = r.l3.as_ref().is_some_and(|l| l.flagged);
        counts.l0_failed += usize::from(!l0);
        counts.l1_failed += usize::from(l0 && !l1);
        counts.l2_flagged += usize::from(l2);
        counts.l3_flagged += usize::from(l3);
        r.candidate = l0 && l1 && (l2 || l3);
        if r.candidate {
            counts.candidates += 1;
            candidates.push(report::candidate(&r, l2_severity));
        }
        files.push(r);
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    let score = files
        .iter()
        .filter_map(|f| f.l3.as_ref().map(|s| s.score))
        .fold(0.0, f64::max);
    Tally {
        counts,
        candidates,
        score,
        files,
    }
}

#[cfg(test)]
mod tests {
    /// Every entry of the embedded tables carries examples, and each example does what it says.
    #[test]
    fn every_table_entry_finds_its_examples_and_leaves_its_look_alikes() {
        let c = super::check_tables(None).unwrap();
        assert!(c.without_examples.is_empty(), "{:?}", c.without_examples);
        assert!(c.failures.is_empty(), "{}", c.failures.join("\n"));
        assert!(c.examples > c.entries, "{c:?}");
    }

    use super::*;

    fn parsed(path: &str, l1_ok: bool, l3: Option<(f64, bool)>) -> FileResult {
        let mut r = FileResult::new(path, FileStatus::Ok);
        r.l0 = Some(Layer0 {
            ok: true,
            error: None,
        });
        r.l1 = Some(Layer1 {
            ok: l1_ok,
            missing_defs: Vec::new(),
            unresolved_imports: Vec::new(),
            dynamic_imports: Vec::new(),
            tests_failed: false,
        });
        r.l3 = l3.map(|(score, flagged)| Score {
            score,
            flagged,
            sources: Vec::new(),
            sinks: Vec::new(),
            weakness: None,
            guards: Vec::new(),
            guard_deduction: 0.0,
            partial: false,
            hints_only: false,
        });
        r
    }

    fn finding(file: &str, severity: &str) -> bandit::Finding {
        bandit::Finding {
            file: file.into(),
            test_id: "B602".into(),
            test_name: "subprocess_popen_with_shell_equals_true".into(),
            severity: severity.into(),
            confidence: "HIGH".into(),
            cwe: Some(78),
            start: 4,
            end: 4,
            text: "shell=True".into(),
        }
    }

    #[test]
    fn statuses_serialise_as_the_report_always_spelled_them() {
        let files = [
            (FileStatus::Ok, "ok"),
            (FileStatus::Deleted, "deleted"),
            (FileStatus::Binary, "binary"),
            (FileStatus::Error, "error"),
        ];
        for (s, name) in files {
            assert_eq!(serde_json::to_value(s).unwrap(), name);
            assert_eq!((s.as_str(), s.to_string()), (name, name.to_string()));
        }
        let tools = [
            (ToolState::Ran, "ran"),
            (ToolState::Passed, "passed"),
            (ToolState::Failed, "failed"),
            (ToolState::Missing, "missing"),
            (ToolState::Off, "off"),
            (ToolState::NotRun, "not run"),
        ];
        for (s, name) in tools {
            assert_eq!(serde_json::to_value(s).unwrap(), name);
            assert_eq!((s.as_str(), s.to_string()), (name, name.to_string()));
        }
        assert_eq!(format!("{:>9}|", ToolState::NotRun), "  not run|");
    }

    #[test]
    fn tally_counts_candidates_and_the_range_score() {
        let mut binary = FileResult::new("bin.py", FileStatus::Binary);
        binary.l0 = Some(Layer0 {
            ok: false,
            error: None,
        });
        let mut by_l2 = parsed("b2.py", true, Some((5.0, false)));
        by_l2.l2 = Some(Layer2 {
            flagged: true,
            findings: vec![finding("b2.py", "HIGH")],
            error: None,
        });
        let files = vec![
            FileResult::new("gone.py", FileStatus::Deleted),
            binary,
            // flagged by L3 but failing L1: counted, not a candidate
            parsed("l1.py", false, Some((40.0, true))),
            by_l2,
            parsed("a3.py", true, Some((30.0, true))),
            parsed("z3.py", true, Some((30.0, true))),
            parsed("clean.py", true, Some((0.0, false))),
        ];
        let t = tally(files, 3);
        assert_eq!(
            t.counts,
            Counts {
                files: 6,
                l0_failed: 1,
                l1_failed: 1,
                l2_flagged: 1,
                l3_flagged: 3,
                candidates: 3,
            }
        );
        let order: Vec<&str> = t.candidates.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(order, ["a3.py", "z3.py", "b2.py"], "R, then path");
        assert!(t.candidates[2].by_l2 && !t.candidates[2].by_l3);
        assert_eq!((t.candidates[2].start, t.candidates[2].cwe), (4, Some(78)));
        assert_eq!(t.score, 40.0, "the range's R counts non-candidates too");
        let marked: Vec<&str> = t
            .files
            .iter()
            .filter(|f| f.candidate)
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            marked,
            ["b2.py", "a3.py", "z3.py"],
            "files keep their order"
        );
        assert_eq!(t.files.len(), 7);
    }

    #[test]
    fn l2_status_without_a_report() {
        let mut files = vec![parsed("a.py", true, None)];
        let mut notes = Vec::new();
        let off = apply_l2(false, None, &mut files, (3, None), &mut notes);
        assert_eq!((off.status, off.detail), (ToolState::Off, None));
        let nothing = apply_l2(true, None, &mut files, (3, None), &mut notes);
        assert_eq!(nothing.status, ToolState::NotRun);
        assert!(notes.is_empty());
        let missing = apply_l2(
            true,
            Some(Err(bandit::RunError::NotInstalled)),
            &mut files,
            (3, None),
            &mut notes,
        );
        assert_eq!(missing.status, ToolState::Missing);
        assert_eq!(
            missing.detail.as_deref(),
            Some("Bandit is not installed (pip install bandit); L2 was skipped")
        );
        // a message that mentions installation is still a failure: the type decides
        let failed = apply_l2(
            true,
            Some(Err(bandit::RunError::Failed(
                "Bandit failed (exit 1): plugin not installed".into(),
            ))),
            &mut files,
            (3, None),
            &mut notes,
        );
        assert_eq!(failed.status, ToolState::Failed);
        assert_eq!(
            notes,
            [
                "L2 did not run: Bandit is not installed (pip install bandit); L2 was skipped",
                "L2 did not run: Bandit failed (exit 1): plugin not installed",
            ]
        );
        assert!(files[0].l2.is_none());
    }

    #[test]
    fn l2_findings_flag_at_the_chosen_severity() {
        let mut files = vec![
            parsed("high.py", true, None),
            parsed("low.py", true, None),
            FileResult::new("blob.py", FileStatus::Binary),
            FileResult::new("gone.py", FileStatus::Deleted),
            FileResult::new("odd.py", FileStatus::Error),
        ];
        let report = bandit::Report {
            version: "bandit 1.9".into(),
            findings: vec![finding("high.py", "HIGH"), finding("low.py", "LOW")],
            errors: vec![("blob.py".into(), "syntax error".into())],
        };
        let mut notes = Vec::new();
        let s = apply_l2(true, Some(Ok(report)), &mut files, (3, None), &mut notes);
        assert_eq!(s.status, ToolState::Ran);
        assert_eq!(s.detail.as_deref(), Some("bandit 1.9"));
        let flagged: Vec<Option<bool>> = files
            .iter()
            .map(|f| f.l2.as_ref().map(|l| l.flagged))
            .collect();
        assert_eq!(
            flagged,
            [Some(true), Some(false), Some(false), None, None],
            "deleted and failed files get no L2"
        );
        assert_eq!(files[1].l2.as_ref().unwrap().findings.len(), 1);
        assert_eq!(
            files[2].l2.as_ref().unwrap().error.as_deref(),
            Some("syntax error")
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn failing_tests_fail_l1_of_every_parsed_file() {
        let mut files = vec![
            parsed("a.py", true, None),
            FileResult::new("gone.py", FileStatus::Deleted),
        ];
        let passed = tests_finished("pytest", true, Some(0), "1 passed\n");
        assert_eq!(passed.status, ToolState::Passed);
        apply_tests(&passed, &mut files);
        assert!(files[0].l1.as_ref().unwrap().ok);
        let failed = tests_finished("pytest", false, Some(1), "x\n");
        apply_tests(&failed, &mut files);
        let l1 = files[0].l1.as_ref().unwrap();
        assert!(!l1.ok && l1.tests_failed);
        assert!(files[1].l1.is_none());
    }

    #[test]
    fn tests_detail_keeps_the_last_five_lines() {
        let out = "1\n2\n3\n4\n5\n6\n";
        let t = tests_finished("make test", false, Some(2), out);
        assert_eq!(t.status, ToolState::Failed);
        assert_eq!(
            t.detail.as_deref(),
            Some("`make test` exited with 2: 2 | 3 | 4 | 5 | 6")
        );
        let t = tests_finished("sh t", false, None, "");
        assert_eq!(t.detail.as_deref(), Some("`sh t` exited with a signal"));
    }

    #[test]
    fn parse_file_statuses() {
        let tables = python_tables(None).unwrap();
        let changed = |tip: Option<&str>, base: Option<&str>| Changed {
            path: "m.py".into(),
            tip: tip.map(|t| t.as_bytes().to_vec()),
            base: base.map(|b| b.as_bytes().to_vec()),
        };
        let gone = changed(None, Some("x = 1\n"));
        let s = parse_file(&gone, &tables);
        assert_eq!(s.result.status, FileStatus::Deleted);
        assert!(s.parsed.is_none() && s.result.l0.is_none());
        let blob = changed(Some("a\0b"), None);
        let s = parse_file(&blob, &tables);
        assert_eq!(s.result.status, FileStatus::Binary);
        assert!(!s.result.l0.unwrap().ok);
        let broken = changed(Some("def f(:\n    eval(x)\n"), None);
        let mut s = [parse_file(&broken, &tables)];
        assert_eq!(s[0].result.status, FileStatus::Ok);
        assert_eq!(
            s[0].result
                .l0
                .as_ref()
                .unwrap()
                .error
                .as_ref()
                .unwrap()
                .line,
            1
        );
        // still read, for L3; L1 goes once L0's verdict is final
        let p = s[0].parsed.as_ref().unwrap();
        assert!(p.read_error.is_some() && p.facts.calls.iter().any(|c| c.name == "eval"));
        let status = apply_l0(&mut s, None, &mut Vec::new());
        assert_eq!(status.status, ToolState::Missing);
        assert!(s[0].result.l1.is_none());
        let kept = changed(
            Some("def f():\n    pass\n"),
            Some("def f():\n    pass\n\nclass C:\n    def m(self):\n        pass\n"),
        );
        let s = parse_file(&kept, &tables);
        let l1 = s.result.l1.unwrap();
        assert_eq!(
            (l1.ok, l1.missing_defs),
            (false, vec!["C".into(), "C.m".into()])
        );
        assert!(s.parsed.is_some());
        // a base that does not parse removes nothing
        let was_broken = changed(Some("x = 1\n"), Some("def f(:\n"));
        assert!(parse_file(&was_broken, &tables).result.l1.unwrap().ok);
    }

    #[test]
    fn cpython_has_the_last_word_on_l0() {
        let tables = python_tables(None).unwrap();
        let file = |path: &str, tip: &str| Changed {
            path: path.into(),
            tip: Some(tip.as_bytes().to_vec()),
            base: None,
        };
        // tree-sitter reads Python 2's print statement; CPython 3 does not
        let py2 = file("py2.py", "print \"hi\"\n");
        // tree-sitter-python may lag behind the language; CPython decides
        let new = file("new.py", "x = 1\n");
        let mut s = [parse_file(&py2, &tables), parse_file(&new, &tables)];
        assert!(s[0].result.l0.as_ref().unwrap().ok);
        let compiled = python_run::Compiled {
            version: "3.11.7".into(),
            errors: HashMap::from([
                (
                    "py2.py".into(),
                    Some((1, "SyntaxError: Missing parentheses".into())),
                ),
                ("new.py".into(), None),
            ]),
        };
        let mut notes = Vec::new();
        let status = apply_l0(&mut s, Some(Ok(compiled)), &mut notes);
        assert_eq!(
            (status.status, status.detail.as_deref()),
            (ToolState::Ran, Some("CPython 3.11.7, compile only"))
        );
        assert!(notes.is_empty());
        let l0 = s[0].result.l0.as_ref().unwrap();
        assert_eq!((l0.ok, l0.error.as_ref().map(|e| e.line)), (false, Some(1)));
        assert!(s[0].result.l1.is_none() && s[0].parsed.is_some());
        assert!(s[1].result.l0.as_ref().unwrap().ok && s[1].result.l1.is_some());
        let failed = apply_l0(
            &mut s[1..],
            Some(Err("python3 failed: boom".into())),
            &mut notes,
        );
        assert_eq!(failed.status, ToolState::Failed);
        assert!(notes[0].starts_with("L0 without CPython: python3 failed: boom; "));
    }

    #[test]
    fn selection_is_python_within_the_pathspecs() {
        let specs = vec!["pkg/".to_string(), "*.pyw".to_string()];
        assert!(selected("pkg/a.py", &[]));
        assert!(selected("tool.pyw", &[]));
        assert!(!selected("pkg/README.md", &[]));
        assert!(selected("pkg/sub/a.py", &specs));
        assert!(selected("gui/app.pyw", &specs));
        assert!(!selected("other/a.py", &specs));
    }

    #[test]
    fn par_map_keeps_order() {
        let out = par_map((0..1001).collect(), |i: i32| i * 2);
        assert_eq!(out, (0..1001).map(|i| i * 2).collect::<Vec<_>>());
        assert!(par_map(Vec::<i32>::new(), |i| i).is_empty());
    }
}
