//! `git sage screen`: the funnel of SPEC §8 over the files a range changed — L0 the file
//! parses, L1 its base definitions are kept and its imports resolve (and, only on request,
//! the tests pass), L2 Bandit's high-severity findings, L3 the rule score R — and the
//! candidates: files that pass L0 and L1 and are flagged by L2 or L3.
//!
//! Language-independent here; `python.rs` and templates/screen/python/ are the Python part
//! (another language is one module like it plus its tables).

pub mod anchorless;
pub mod bandit;
pub mod facts;
pub mod python;
pub mod report;
pub mod rules;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::git::Repo;
use crate::history::range::Range;
use crate::scanners::Scratch;
use facts::ParseError;
use python::{ImportEnv, Unresolved};
use rules::{Score, Tables};

pub const SCREEN_SCHEMA: &str = "sage.screen/1";

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
pub fn py_table(dir: Option<&Path>, name: &str) -> Result<(String, String)> {
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

pub fn python_tables(dir: Option<&Path>) -> Result<Tables> {
    let s = py_table(dir, "sources.yaml")?;
    let k = py_table(dir, "sinks.yaml")?;
    let g = py_table(dir, "guards.yaml")?;
    let w = py_table(dir, "weaknesses.yaml")?;
    Tables::parse((&s.0, &s.1), (&k.0, &k.1), (&g.0, &g.1), (&w.0, &w.1))
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Options {
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

/// `*` and `?` globs over whole paths, or a directory prefix.
pub fn pathspec_matches(spec: &str, path: &str) -> bool {
    let spec = spec.trim_start_matches("./").trim_end_matches('/');
    if !spec.contains(['*', '?']) {
        return path == spec || path.starts_with(&format!("{spec}/"));
    }
    fn glob(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
            (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
            _ => false,
        }
    }
    glob(spec.as_bytes(), path.as_bytes())
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layer0 {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ParseError>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layer1 {
    pub ok: bool,
    /// Functions, classes and methods of the base version missing at the tip.
    pub missing_defs: Vec<String>,
    pub unresolved_imports: Vec<Unresolved>,
    /// The tests failed (`--run-tests`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tests_failed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layer2 {
    pub flagged: bool,
    pub findings: Vec<bandit::Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One changed file through the layers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileResult {
    pub path: String,
    pub language: String,
    /// `ok`, `deleted`, `binary` (not text: not screened), `error` (screening failed).
    pub status: String,
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
pub struct Candidate {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub score: f64,
    pub by_l2: bool,
    pub by_l3: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwe: Option<u32>,
    /// In words: the sinks, sources and Bandit tests behind it.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolStatus {
    /// `ran`, `missing`, `failed`, `off`, `not run`, `passed`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    pub files: usize,
    pub l0_failed: usize,
    pub l1_failed: usize,
    pub l2_flagged: usize,
    pub l3_flagged: usize,
    pub candidates: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScreenDoc {
    pub schema: String,
    pub base: String,
    pub tip: String,
    pub commits: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_cwe: Option<u32>,
    pub threshold: f64,
    /// The range's R: the highest file score.
    pub score: f64,
    pub bandit: ToolStatus,
    pub tests: ToolStatus,
    pub counts: Counts,
    pub candidates: Vec<Candidate>,
    pub files: Vec<FileResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A changed file's two versions (`None`: absent on that side).
struct Changed {
    path: String,
    tip: Option<Vec<u8>>,
    base: Option<Vec<u8>>,
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

/// L0, L1 (without tests) and L3 for one file.
fn screen_file(
    path: &str,
    tip: &[u8],
    base: Option<&[u8]>,
    tables: &Tables,
    opts: &Options,
) -> (FileResult, Option<Vec<facts::Import>>) {
    let mut r = FileResult {
        path: path.to_string(),
        language: "python".into(),
        status: "ok".into(),
        l0: None,
        l1: None,
        l2: None,
        l3: None,
        candidate: false,
    };
    let Some(text) = is_text(tip) else {
        r.status = "binary".into();
        r.l0 = Some(Layer0 {
            ok: false,
            error: Some(ParseError {
                line: 1,
                message: "not UTF-8 text (a binary file named like source?)".into(),
            }),
        });
        return (r, None);
    };
    let is_source = |q: &str| tables.is_source(q);
    let is_sanitizer = |q: &str| tables.is_sanitizer(q);
    let facts = match python::parse_with(text, &is_source, &is_sanitizer) {
        Ok(f) => f,
        Err(e) => {
            r.l0 = Some(Layer0 {
                ok: false,
                error: Some(e),
            });
            return (r, None);
        }
    };
    r.l0 = Some(Layer0 {
        ok: true,
        error: None,
    });
    // definitions of the base version that are gone (a base that no longer parses says nothing)
    let missing_defs = match base.and_then(is_text).map(|b| python::parse(b, &|_| false)) {
        Some(Ok(b)) => b
            .defs
            .into_iter()
            .filter(|d| !facts.defs.contains(d))
            .collect(),
        _ => Vec::new(),
    };
    r.l1 = Some(Layer1 {
        ok: missing_defs.is_empty(),
        missing_defs,
        unresolved_imports: Vec::new(),
        tests_failed: false,
    });
    r.l3 = Some(rules::score(
        tables,
        &facts,
        text,
        opts.task_cwe,
        opts.threshold,
    ));
    (r, Some(facts.imports))
}

/// Runs the tests in a scratch checkout of the tip (only with `--run-tests`).
fn run_tests(
    repo: &Repo,
    tip: crate::git::Oid,
    cmd: &str,
    timeout: std::time::Duration,
) -> Result<ToolStatus> {
    let dir = tempfile::tempdir()
        .map_err(|e| Error::env(format!("cannot make a scratch directory: {e}")))?;
    repo.checkout_to(tip, dir.path())?;
    let mut child = std::process::Command::new("sh")
        .args(["-c", cmd])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Error::env(format!("cannot run the tests ({cmd}): {e}")))?;
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::env(format!("waiting for the tests: {e}")))?
        {
            let out = child
                .wait_with_output()
                .map_err(|e| Error::env(format!("reading the tests' output: {e}")))?;
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let tail: Vec<&str> = all
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Ok(ToolStatus {
                status: if status.success() {
                    "passed".into()
                } else {
                    "failed".into()
                },
                detail: Some(format!(
                    "`{cmd}` exited with {}{}",
                    status.code().map_or("a signal".into(), |c| c.to_string()),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", tail.join(" | "))
                    }
                )),
            });
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            return Ok(ToolStatus {
                status: "failed".into(),
                detail: Some(format!(
                    "`{cmd}` did not finish within {}s",
                    timeout.as_secs()
                )),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Screens the files `range` changed.
pub fn screen(repo: &Repo, range: &Range, opts: &Options) -> Result<ScreenDoc> {
    let tables = python_tables(opts.templates_dir.as_deref())?;
    let base_tree = repo.tree_of(range.base)?;
    let tip = range.commits.last().map_or(range.base, |c| c.id);
    let tip_tree = repo.tree_of(tip)?;
    let changed: Vec<String> = repo
        .changed_paths(base_tree, tip_tree)?
        .into_iter()
        .filter(|p| language_of(p).is_some())
        .filter(|p| opts.paths.is_empty() || opts.paths.iter().any(|s| pathspec_matches(s, p)))
        .collect();
    let mut notes = Vec::new();

    // Read every changed file once; write the tip's versions where Bandit can read them.
    let mut scratch = Scratch::new()?;
    let mut jobs: Vec<Changed> = Vec::new();
    for p in &changed {
        let tip_bytes = repo.file_in_tree(tip_tree, p)?.map(|b| b.to_vec());
        let base_bytes = repo.file_in_tree(base_tree, p)?.map(|b| b.to_vec());
        if let Some(b) = &tip_bytes {
            scratch.add(p, b)?;
        }
        jobs.push(Changed {
            path: p.clone(),
            tip: tip_bytes,
            base: base_bytes,
        });
    }
    // L2 runs in the background while L0, L1 and L3 run here.
    let bandit_run = (opts.bandit && scratch.files() > 0).then(|| bandit::start(&scratch));

    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(jobs.len().max(1));
    let chunk = jobs.len().div_ceil(threads).max(1);
    let tables_ref = &tables;
    let mut screened: Vec<(FileResult, Option<Vec<facts::Import>>)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|c| match &c.tip {
                            None => (
                                FileResult {
                                    path: c.path.clone(),
                                    language: "python".into(),
                                    status: "deleted".into(),
                                    l0: None,
                                    l1: None,
                                    l2: None,
                                    l3: None,
                                    candidate: false,
                                },
                                None,
                            ),
                            Some(t) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                screen_file(&c.path, t, c.base.as_deref(), tables_ref, opts)
                            }))
                            .unwrap_or_else(|_| {
                                // one odd file must not sink the whole report
                                let mut r = FileResult {
                                    path: c.path.clone(),
                                    language: "python".into(),
                                    status: "error".into(),
                                    l0: None,
                                    l1: None,
                                    l2: None,
                                    l3: None,
                                    candidate: false,
                                };
                                r.l0 = Some(Layer0 {
                                    ok: false,
                                    error: Some(ParseError {
                                        line: 1,
                                        message: "internal error while screening this file (please report it)".into(),
                                    }),
                                });
                                (r, None)
                            }),
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("screening threads do not panic"))
            .collect()
    });

    // L1 imports: static lookup against the tip's files
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
    for (r, imports) in &mut screened {
        if let (Some(l1), Some(imports)) = (&mut r.l1, imports) {
            l1.unresolved_imports = env.unresolved(&r.path, imports);
            l1.ok = l1.missing_defs.is_empty() && l1.unresolved_imports.is_empty();
        }
    }
    notes.append(&mut env.notes);

    let tests = match &opts.run_tests {
        None => ToolStatus {
            status: "not run".into(),
            detail: Some("repository code is not run unless --run-tests CMD is given".into()),
        },
        Some(cmd) => run_tests(repo, tip, cmd, opts.tests_timeout)?,
    };
    if tests.status == "failed" {
        for (r, _) in &mut screened {
            if let Some(l1) = &mut r.l1 {
                l1.tests_failed = true;
                l1.ok = false;
            }
        }
    }

    let bandit_status = match bandit_run {
        None if !opts.bandit => ToolStatus {
            status: "off".into(),
            detail: None,
        },
        None => ToolStatus {
            status: "not run".into(),
            detail: Some("no changed file to scan".into()),
        },
        Some(run) => match bandit::finish(run, &scratch) {
            Ok(report) => {
                let mut by_file: HashMap<String, Vec<bandit::Finding>> = HashMap::new();
                for f in report.findings {
                    by_file.entry(f.file.clone()).or_default().push(f);
                }
                let errors: HashMap<String, String> = report.errors.into_iter().collect();
                for (r, _) in &mut screened {
                    if r.status != "ok" && r.status != "binary" {
                        continue;
                    }
                    let findings = by_file.remove(&r.path).unwrap_or_default();
                    let flagged = findings
                        .iter()
                        .any(|f| f.severity_rank() >= opts.l2_severity);
                    r.l2 = Some(Layer2 {
                        flagged,
                        findings,
                        error: errors.get(&r.path).cloned(),
                    });
                }
                ToolStatus {
                    status: "ran".into(),
                    detail: Some(report.version),
                }
            }
            Err(e) => {
                notes.push(format!("L2 did not run: {e}"));
                ToolStatus {
                    status: if e.contains("not installed") {
                        "missing".into()
                    } else {
                        "failed".into()
                    },
                    detail: Some(e),
                }
            }
        },
    };

    let mut counts = Counts {
        files: screened.len(),
        ..Counts::default()
    };
    let mut candidates = Vec::new();
    let mut files = Vec::new();
    for (mut r, _) in screened {
        if r.status == "deleted" {
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
            candidates.push(report::candidate(&r, opts.l2_severity));
        }
        files.push(r);
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    let score = files
        .iter()
        .filter_map(|f| f.l3.as_ref().map(|s| s.score))
        .fold(0.0, f64::max);
    if changed.is_empty() {
        notes.push("the range changes no Python files".into());
    }
    Ok(ScreenDoc {
        schema: SCREEN_SCHEMA.into(),
        base: range.base.to_string(),
        tip: tip.to_string(),
        commits: range.commits.len(),
        task_cwe: opts.task_cwe,
        threshold: opts.threshold,
        score,
        bandit: bandit_status,
        tests,
        counts,
        candidates,
        files,
        notes,
    })
}
