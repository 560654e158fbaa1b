//! Conformance over real scanner output in ../shared/fixtures/real/findings (skipped when absent).

use sage::finding;

/// What each real file must yield: (file, results, a CWE we must extract, a tool name).
const EXPECT: &[(&str, usize, Option<u32>, &str)] = &[
    ("bandit-1.9.4_securityeval.json", 67, Some(20), "Bandit"),
    ("bandit-1.9.4_securityeval.sarif", 67, Some(20), "Bandit"),
    (
        "bandit_bandit-demo_windows_venv.json",
        516,
        Some(838),
        "Bandit",
    ),
    ("bandit_flask-demo_sqli.json", 3, Some(259), "Bandit"),
    ("bandit_todo-list-aws.sarif", 1, None, "Bandit"),
    ("codeql_demo-python_python.sarif", 2, Some(89), "CodeQL"),
    (
        "semgrep_json_hacs_smartcocoon.json",
        1,
        Some(250),
        "Semgrep",
    ),
    ("semgrep_pygoat.sarif", 46, None, ""),
    ("semgrep_securityeval.json", 1, Some(502), "Semgrep"),
    ("semgrep_securityeval.sarif", 1, Some(502), ""),
];

#[test]
fn every_real_finding_file_parses() {
    let Some(dir) = crate::common::real_fixtures("findings") else {
        return;
    };
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        seen += 1;
        if name == "semgrep_json_empty_project1-python-secure-cicd.json" {
            // A real Semgrep run that found nothing: a clear "no results", not a crash.
            let e = finding::load_all(&path).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("holds no results"), "{e}");
            continue;
        }
        let expected = EXPECT.iter().find(|(n, ..)| *n == name);
        let anchors = match finding::load_all(&path) {
            Ok(a) => a,
            // A file we have no expectations for may be empty; it must still fail cleanly.
            Err(e) if expected.is_none() && e.exit_code() == 2 => {
                eprintln!("{name}: {e}");
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let Some((_, count, cwe, tool)) = expected else {
            eprintln!(
                "{name}: {} results (no expectations recorded)",
                anchors.len()
            );
            continue;
        };
        assert_eq!(anchors.len(), *count, "{name}");
        for a in &anchors {
            assert!(!a.file.is_empty(), "{name}: result without file");
            assert!(
                !a.file.contains('\\'),
                "{name}: {} keeps Windows separators",
                a.file
            );
            assert!(!a.file.starts_with("./"), "{name}: {}", a.file);
            // every result can be selected by its index and is locatable
            let one = finding::select(
                &path,
                anchors.clone(),
                Some(&a.source.index.unwrap().to_string()),
            )
            .unwrap();
            assert_eq!(&one, a);
        }
        if let Some(c) = cwe {
            assert_eq!(anchors[0].cwe, Some(*c), "{name}: first result's CWE");
        }
        if !tool.is_empty() {
            assert_eq!(anchors[0].source.tool.as_deref(), Some(*tool), "{name}");
        }
    }
    assert!(
        seen >= EXPECT.len(),
        "only {seen} fixtures in {}",
        dir.display()
    );
}

#[test]
fn semgrep_sarif_cwe_lives_in_tag_strings() {
    let Some(dir) = crate::common::real_fixtures("findings") else {
        return;
    };
    let anchors = finding::load_all(&dir.join("semgrep_pygoat.sarif")).unwrap();
    let with_cwe = anchors.iter().filter(|a| a.cwe.is_some()).count();
    assert!(
        with_cwe * 2 > anchors.len(),
        "only {with_cwe}/{} pygoat results have a CWE",
        anchors.len()
    );
    // Windows paths of the bandit demo become forward-slash relative paths
    let anchors = finding::load_all(&dir.join("bandit_flask-demo_sqli.json")).unwrap();
    assert_eq!(anchors[0].file, "app.py");
}
