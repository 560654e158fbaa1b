//! L2: Bandit over the tip's versions of the changed files (written to a scratch directory;
//! Bandit parses them, it does not run them). Started in the background; its report is read
//! when the other layers are done. A missing or crashing Bandit is a note, never a crash.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde::Serialize;
use serde_json::Value;

/// One Bandit result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Repository-relative.
    pub file: String,
    pub test_id: String,
    pub test_name: String,
    pub severity: String,
    pub confidence: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwe: Option<u32>,
    pub start: u32,
    pub end: u32,
    pub text: String,
}

impl Finding {
    /// 3 high, 2 medium, 1 low.
    pub fn severity_rank(&self) -> u8 {
        match self.severity.to_ascii_uppercase().as_str() {
            "HIGH" => 3,
            "MEDIUM" => 2,
            "LOW" => 1,
            _ => 0,
        }
    }
}

pub struct Report {
    pub version: String,
    pub findings: Vec<Finding>,
    /// (file, reason) for files Bandit could not scan.
    pub errors: Vec<(String, String)>,
}

pub struct Running {
    child: std::result::Result<(Child, String), String>,
    out: PathBuf,
}

/// Starts Bandit on `dir`, writing its JSON report to `out`.
pub fn start(dir: &Path, out: &Path) -> Running {
    let child = match crate::finding::scan::scanner_command("bandit") {
        None => Err("Bandit is not installed (pip install bandit); L2 was skipped".to_string()),
        Some(cmd) => {
            let version = Command::new(&cmd[0])
                .args(&cmd[1..])
                .arg("--version")
                .output()
                .ok()
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            Command::new(&cmd[0])
                .args(&cmd[1..])
                .args(["-f", "json", "-q", "-r"])
                .arg(dir)
                .arg("-o")
                .arg(out)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map(|c| (c, version))
                .map_err(|e| format!("cannot start Bandit: {e}"))
        }
    };
    Running {
        child,
        out: out.to_path_buf(),
    }
}

fn rel(file: &str, dir: &Path) -> String {
    let f = file.replace('\\', "/");
    let d = dir.to_string_lossy().replace('\\', "/");
    f.strip_prefix(&format!("{}/", d.trim_end_matches('/')))
        .unwrap_or(&f)
        .trim_start_matches("./")
        .to_string()
}

/// Waits for Bandit and reads its report.
pub fn finish(run: Running, dir: &Path) -> std::result::Result<Report, String> {
    let (child, version) = run.child?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("Bandit did not finish: {e}"))?;
    let text = std::fs::read_to_string(&run.out).unwrap_or_default();
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(_) => {
            let err = String::from_utf8_lossy(&output.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output")
                .trim()
                .to_string();
            return Err(format!(
                "Bandit failed (exit {}): {last}",
                output
                    .status
                    .code()
                    .map_or("signal".into(), |c| c.to_string())
            ));
        }
    };
    let findings = v["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let line = r["line_number"].as_u64().unwrap_or(1) as u32;
            let range: Vec<u32> = r["line_range"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .map(|n| n as u32)
                .collect();
            Finding {
                file: rel(r["filename"].as_str().unwrap_or(""), dir),
                test_id: r["test_id"].as_str().unwrap_or("").to_string(),
                test_name: r["test_name"].as_str().unwrap_or("").to_string(),
                severity: r["issue_severity"].as_str().unwrap_or("").to_string(),
                confidence: r["issue_confidence"].as_str().unwrap_or("").to_string(),
                cwe: r
                    .pointer("/issue_cwe/id")
                    .and_then(Value::as_u64)
                    .map(|n| n as u32)
                    .filter(|n| *n > 0),
                start: range.iter().min().copied().unwrap_or(line),
                end: range.iter().max().copied().unwrap_or(line),
                text: r["issue_text"].as_str().unwrap_or("").to_string(),
            }
        })
        .collect();
    let errors = v["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                rel(e["filename"].as_str().unwrap_or(""), dir),
                e["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    Ok(Report {
        version: if version.is_empty() {
            "bandit".into()
        } else {
            version
        },
        findings,
        errors,
    })
}
