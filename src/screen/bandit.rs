//! L2: Bandit over the tip's versions of the changed files. Started in the background; its
//! report is read when the other layers are done. A missing or crashing Bandit is a note,
//! never a crash. Running and reading Bandit is `crate::scanners`' part; this is the L2 view.

use serde::Serialize;

use crate::finding::bandit::{Issue, severity_rank};
use crate::scanners::{self, Running, Scratch};

/// The weaknesses a weak hash is: a broken algorithm, a reversible hash, a password hash too
/// cheap (916), without a salt (759) or with a predictable one (760).
const WEAK_HASH_CWES: [u32; 5] = [327, 328, 759, 760, 916];

/// The weaknesses a cleartext protocol is: sensitive data sent (319) or stored (312) in clear.
const CLEARTEXT_CWES: [u32; 2] = [319, 312];

/// One Bandit result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Finding {
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
    pub(crate) fn severity_rank(&self) -> u8 {
        severity_rank(&self.severity)
    }

    /// Whether it can flag a file. Three kinds of finding name a thing rather than a misuse of
    /// it, so they flag only under a task of their own weakness: Bandit's import blacklist
    /// (B401–B415: `import xmlrpc`, `import pickle`) names a module it distrusts; B324 names a
    /// weak hash (`hashlib.sha1`), which protocols mandate (WebSocket's accept key, HTTP
    /// digest auth) and caches use as a checksum; B312 and B321 name the Telnet and FTP
    /// clients, which a program speaking those protocols cannot do without. L3's rules judge
    /// the hash by what it hashes and the protocol by what it carries, so they still count
    /// there.
    pub(crate) fn flags(&self, task_cwe: Option<u32>) -> bool {
        let number = self
            .test_id
            .strip_prefix('B')
            .and_then(|n| n.parse::<u32>().ok());
        match number {
            Some(401..=415) => task_cwe.is_some() && task_cwe == self.cwe,
            Some(324) => task_cwe.is_some_and(|c| WEAK_HASH_CWES.contains(&c)),
            // telnetlib, ftplib: a protocol's client, which a program speaking that protocol
            // needs; whether what it sends should be in clear is the cleartext task's question
            Some(312 | 321) => task_cwe.is_some_and(|c| CLEARTEXT_CWES.contains(&c)),
            _ => true,
        }
    }

    fn new(i: Issue) -> Finding {
        Finding {
            file: i.file.unwrap_or_default(),
            test_id: i.test_id.unwrap_or_default(),
            test_name: i.test_name.unwrap_or_default(),
            severity: i.severity.unwrap_or_default(),
            confidence: i.confidence.unwrap_or_default(),
            cwe: i.cwe,
            start: i.start.unwrap_or(1),
            end: i.end.unwrap_or(1),
            text: i.text.unwrap_or_default(),
        }
    }
}

pub(crate) struct Report {
    pub version: String,
    pub findings: Vec<Finding>,
    /// (file, reason) for files Bandit could not scan.
    pub errors: Vec<(String, String)>,
}

/// Why L2 has no report. Not being installed is its own case: the report calls it `missing`,
/// not `failed`, and the user's remedy differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunError {
    /// Neither `bandit` nor `python3 -m bandit` runs here.
    NotInstalled,
    /// Bandit would not start, did not finish, or left no readable report; in words.
    Failed(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NotInstalled => {
                f.write_str("Bandit is not installed (pip install bandit); L2 was skipped")
            }
            RunError::Failed(why) => f.write_str(why),
        }
    }
}

/// Bandit under way, with its version; or why it is not.
pub(crate) type Started = std::result::Result<(Running, String), RunError>;

/// Starts Bandit on the scratch tree.
pub(crate) fn start(tree: &Scratch) -> Started {
    let bandit = scanners::probe(scanners::Kind::Bandit).ok_or(RunError::NotInstalled)?;
    let run = bandit
        .start(tree)
        .map_err(|e| RunError::Failed(format!("cannot start Bandit: {e}")))?;
    Ok((run, bandit.version))
}

/// Waits for Bandit and reads its report.
pub(crate) fn finish(started: Started, tree: &Scratch) -> std::result::Result<Report, RunError> {
    let (run, version) = started?;
    let output = run
        .finish()
        .map_err(|e| RunError::Failed(format!("Bandit did not finish: {e}")))?;
    let Ok(report) = scanners::bandit_report(&output, tree) else {
        let err = String::from_utf8_lossy(&output.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_string();
        return Err(RunError::Failed(format!(
            "Bandit failed (exit {}): {last}",
            output
                .status
                .code()
                .map_or("signal".into(), |c| c.to_string())
        )));
    };
    Ok(Report {
        version: if version.is_empty() {
            "bandit".into()
        } else {
            version
        },
        findings: report.issues.into_iter().map(Finding::new).collect(),
        errors: report.errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(id: &str, cwe: Option<u32>) -> Finding {
        Finding {
            file: "a.py".into(),
            test_id: id.into(),
            test_name: String::new(),
            severity: "HIGH".into(),
            confidence: "HIGH".into(),
            cwe,
            start: 1,
            end: 1,
            text: String::new(),
        }
    }

    #[test]
    fn an_import_blacklist_finding_flags_only_for_its_cwe() {
        let f = finding;
        assert!(f("B602", Some(78)).flags(None), "a call: always");
        assert!(!f("B411", Some(20)).flags(None), "an import, no task");
        assert!(
            !f("B411", Some(20)).flags(Some(78)),
            "an import of another CWE"
        );
        assert!(
            f("B411", Some(20)).flags(Some(20)),
            "an import of the task's CWE"
        );
        assert!(f("B400x", None).flags(None) && f("B416", None).flags(None));
    }

    #[test]
    fn a_cleartext_protocol_finding_flags_only_for_a_cleartext_task() {
        for id in ["B312", "B321"] {
            let f = finding(id, Some(319));
            assert!(!f.flags(None) && !f.flags(Some(78)), "{id}");
            assert!(f.flags(Some(319)) && f.flags(Some(312)), "{id}");
        }
    }

    #[test]
    fn a_weak_hash_finding_flags_only_for_a_weak_hash_task() {
        let f = finding("B324", Some(327));
        assert!(!f.flags(None), "no task: L3 judges the hash");
        assert!(!f.flags(Some(78)), "another weakness");
        assert!(f.flags(Some(328)) && f.flags(Some(327)) && f.flags(Some(759)));
    }

    #[test]
    fn run_errors_say_what_the_report_said() {
        assert_eq!(
            RunError::NotInstalled.to_string(),
            "Bandit is not installed (pip install bandit); L2 was skipped"
        );
        assert_eq!(
            RunError::Failed("Bandit failed (exit 2): boom".into()).to_string(),
            "Bandit failed (exit 2): boom"
        );
    }
}
