//! SARIF for code scanning: the rules GitHub documents for ingestion and ranking, stable
//! fingerprints, `--all` over a scanner's file, and the SARIF multitool's own checks.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Repo, skip};

/// The repository Cargo.toml declares: SARIF's `informationUri`.
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

fn sarif(run: &crate::common::Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap()
}

/// What GitHub's code scanning documents for a SARIF upload it can rank
/// (docs.github.com, "SARIF support for code scanning"): rules with descriptions, help,
/// `security` tag, CWE tags and a `security-severity` from 0.0 to 10.0; results with a rule,
/// a message and a relative file location; fingerprints as strings.
fn assert_github_rules(log: &Value) {
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run");
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "git-sage");
    assert_eq!(driver["informationUri"], REPOSITORY);
    assert!(REPOSITORY.starts_with("https://"), "{REPOSITORY}");
    let rules = driver["rules"].as_array().unwrap();
    for rule in rules {
        let id = rule["id"].as_str().unwrap();
        for field in ["shortDescription", "fullDescription"] {
            let t = rule[field]["text"].as_str().unwrap_or("");
            assert!(!t.is_empty(), "{id}: {field}");
            assert!(t.len() <= 1024, "{id}: {field} over 1,024 characters");
        }
        assert!(!rule["help"]["text"].as_str().unwrap().is_empty(), "{id}");
        assert!(
            !rule["help"]["markdown"].as_str().unwrap().is_empty(),
            "{id}"
        );
        assert!(
            rule["helpUri"].as_str().unwrap().starts_with("https://"),
            "{id}"
        );
        let tags: Vec<&str> = rule["properties"]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(tags.contains(&"security"), "{id}: {tags:?}");
        if let Some(cwe) = id.strip_prefix("sage/repair-origin/cwe-") {
            assert!(
                tags.contains(&format!("external/cwe/cwe-{cwe}").as_str()),
                "{id}: {tags:?}"
            );
        }
        let sev = rule["properties"]["security-severity"].as_str().unwrap();
        let n: f64 = sev.parse().unwrap();
        assert!((0.0..=10.0).contains(&n), "{id}: {sev}");
    }
    for r in runs[0]["results"].as_array().unwrap() {
        let rule_id = r["ruleId"].as_str().unwrap();
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], rule_id);
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
        assert!(!uri.starts_with('/') && !uri.contains("://"), "{uri}");
        if let Some(l) = loc["region"]["startLine"].as_u64() {
            assert!(l >= 1);
        }
        for (_, v) in r["partialFingerprints"].as_object().unwrap() {
            assert!(v.is_string());
        }
    }
}

#[test]
fn the_demo_sarif_has_a_rule_per_cwe_that_github_can_rank() {
    let r = Repo::new();
    let d = r.demo();
    let run = r.blame_demo(&d, &["--format", "sarif"]).ok();
    let log = sarif(&run);
    assert_github_rules(&log);
    let rule = &log["runs"][0]["tool"]["driver"]["rules"][0];
    assert_eq!(rule["id"], "sage/repair-origin/cwe-918");
    // No severity from an anchor YAML: the documented default of the CWE.
    assert_eq!(rule["properties"]["security-severity"], "9.1");
    assert!(
        rule["fullDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("server-side request forgery"),
        "{rule}"
    );
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["level"], "error");
    let region = &result["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 9);
    assert!(
        region["snippet"]["text"]
            .as_str()
            .unwrap()
            .contains("url.startswith")
    );
    // The introducing write, where the defect entered.
    let rel = &result["relatedLocations"][0];
    assert_eq!(
        rel["physicalLocation"]["artifactLocation"]["uri"],
        "media/fetcher.py"
    );
    assert!(
        rel["message"]["text"]
            .as_str()
            .unwrap()
            .contains("introduced by commit 40feeea"),
        "{rel}"
    );

    // The fingerprint follows the code, not its line: the same after a line is added above.
    let fp = result["partialFingerprints"]["sageOrigin/v1"].clone();
    assert_eq!(
        sarif(&r.blame_demo(&d, &["--format", "sarif"]).ok())["runs"][0]["results"][0]["partialFingerprints"]
            ["sageOrigin/v1"],
        fp
    );
    let file = d.join("media/fetcher.py");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("# catalogue previews\n{text}")).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&d)
            .args(args)
            .env("GIT_AUTHOR_NAME", "Dev")
            .env("GIT_AUTHOR_EMAIL", "dev@example.com")
            .env("GIT_COMMITTER_NAME", "Dev")
            .env("GIT_COMMITTER_EMAIL", "dev@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["commit", "-qam", "A heading comment"]);
    let moved = sarif(&r.blame_demo(&d, &["--format", "sarif"]).ok());
    let moved = &moved["runs"][0]["results"][0];
    assert_eq!(
        moved["locations"][0]["physicalLocation"]["region"]["startLine"],
        10
    );
    assert_eq!(moved["partialFingerprints"]["sageOrigin/v1"], fp);
}

/// A scanner's SARIF with two results in the demo's file: the SSRF line, and a second
/// result under another CWE whose rule carries the scanner's own `security-severity`.
fn two_results(dir: &Path) -> PathBuf {
    let p = dir.join("scan.sarif");
    let log = serde_json::json!({
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "Scanner", "rules": [
                {"id": "ssrf", "properties": {"tags": ["security", "external/cwe/cwe-918"]}},
                {"id": "open-url", "properties": {"tags": ["security", "external/cwe/cwe-22"], "security-severity": "7.7"}}
            ]}},
            "results": [
                {"ruleId": "ssrf", "ruleIndex": 0, "level": "error", "message": {"text": "URL reaches internal hosts"},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": "media/fetcher.py"}, "region": {"startLine": 9}}}]},
                {"ruleId": "open-url", "ruleIndex": 1, "level": "warning", "message": {"text": "urlopen of a user URL"},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": "media/fetcher.py"}, "region": {"startLine": 11}}}]}
            ]
        }]
    });
    std::fs::write(&p, serde_json::to_string_pretty(&log).unwrap()).unwrap();
    p
}

#[test]
fn all_explains_every_result_of_a_scan_in_one_run() {
    let r = Repo::new();
    let d = r.demo();
    // Kept among the repository's findings: confirmed, so each result keeps its own CWE (an
    // unconfirmed one in the SSRF task's code would take the task's).
    let scan = two_results(&d.join(".sage/findings"));
    let md = r.path().join("all.md");
    let out = r.path().join("all.sarif");
    let json = r.path().join("all.json");
    r.sage_in(
        &d,
        &[
            "blame-origin",
            "--finding",
            scan.to_str().unwrap(),
            "--all",
            "--out",
            out.to_str().unwrap(),
            "--out",
            md.to_str().unwrap(),
            "--out",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    let set: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(set["schema"], "sage.reports/1");
    let reports = set["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["finding"]["cwe"], 918);
    assert_eq!(reports[1]["finding"]["cwe"], 22);
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_github_rules(&log);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let ids: Vec<&str> = rules.iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["sage/repair-origin/cwe-918", "sage/repair-origin/cwe-22"]
    );
    // The scanner's own severity wins over the CWE's default.
    assert_eq!(rules[1]["properties"]["security-severity"], "7.7");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    // Each result keeps the scanner's location.
    for (res, line) in results.iter().zip([9, 11]) {
        assert_eq!(
            res["locations"][0]["physicalLocation"]["region"]["startLine"],
            line
        );
    }
    assert_ne!(
        results[0]["partialFingerprints"],
        results[1]["partialFingerprints"]
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert_eq!(
        md.matches("### git sage: where the repair first went wrong")
            .count(),
        2
    );

    // Without --finding, --all reads every finding the repository keeps (the demo keeps one,
    // and the scan kept beside it has two results).
    let kept = r
        .sage_in(&d, &["blame-origin", "--all", "--format", "json"])
        .ok()
        .json();
    assert_eq!(kept["schema"], "sage.reports/1");
    let ids: Vec<&str> = kept["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["finding"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids.contains(&"ssrf-preview"), "{ids:?}");

    // HTML holds one finding; `--all` says so and writes nothing.
    r.sage_in(
        &d,
        &[
            "blame-origin",
            "--finding",
            scan.to_str().unwrap(),
            "--all",
            "--format",
            "html",
        ],
    )
    .bad_input("--all writes text, Markdown, JSON and SARIF");
    // Without --all, a file of two results still asks which one.
    let one = r.sage_in(&d, &["blame-origin", "--finding", scan.to_str().unwrap()]);
    assert_eq!(one.code, 2, "{one:?}");
}

/// The SARIF multitool (Microsoft's, the one GitHub's docs name for checking uploads), from a
/// global npm install: its own binary, since its npm wrapper hands arguments to a shell.
fn multitool() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SARIF_MULTITOOL") {
        return Some(PathBuf::from(p));
    }
    let out = std::process::Command::new("npm")
        .args(["root", "-g"])
        .output()
        .ok()?;
    let root = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // npm hoists the platform package beside the wrapper, or nests it under it.
    [
        "@microsoft/sarif-multitool-linux",
        "@microsoft/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux",
    ]
    .iter()
    .map(|p| root.join(p).join("Sarif.Multitool"))
    .find(|b| b.exists())
}

#[test]
fn the_sarif_multitool_finds_no_error_or_warning() {
    let Some(tool) = multitool() else {
        return skip("SARIF multitool not found (npm install -g @microsoft/sarif-multitool)");
    };
    let r = Repo::new();
    let d = r.demo();
    let scan = two_results(r.path());
    let mut logs = Vec::new();
    let one = r.path().join("one.sarif");
    r.blame_demo(&d, &["--out", one.to_str().unwrap()]).ok();
    logs.push(one);
    let all = r.path().join("all.sarif");
    r.sage_in(
        &d,
        &[
            "blame-origin",
            "--finding",
            scan.to_str().unwrap(),
            "--all",
            "--out",
            all.to_str().unwrap(),
        ],
    )
    .ok();
    logs.push(all);
    let screen = r.path().join("screen.sarif");
    r.sage_in(&d, &["screen", "--out", screen.to_str().unwrap()])
        .ok();
    logs.push(screen);
    for log in logs {
        let verdict = r.path().join("verdict.sarif");
        let out = std::process::Command::new(&tool)
            .arg("validate")
            .arg(&log)
            .args(["--rule-kind", "Gh;Sarif", "--level", "Error;Warning"])
            .args(["--log", "ForceOverwrite", "-o"])
            .arg(&verdict)
            .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&verdict).unwrap()).unwrap();
        let found: Vec<String> = v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| format!("{} {}", x["ruleId"], x["message"]))
            .collect();
        assert!(found.is_empty(), "{}: {found:#?}", log.display());
    }
}
