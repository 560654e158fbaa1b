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

/// Quadratic-weighted kappa over pairs of 0–3 ratings (the statistic bench/judge_eval.py
/// reports; here so that the test does not depend on the code it checks).
fn weighted_kappa(pairs: &[(u8, u8)]) -> f64 {
    let n = pairs.len() as f64;
    let mut obs = [[0.0f64; 4]; 4];
    for (a, b) in pairs {
        obs[*a as usize][*b as usize] += 1.0;
    }
    let ra: Vec<f64> = (0..4).map(|i| obs[i].iter().sum()).collect();
    let rb: Vec<f64> = (0..4).map(|j| (0..4).map(|i| obs[i][j]).sum()).collect();
    let w = |i: usize, j: usize| ((i as f64 - j as f64) / 3.0).powi(2);
    let (mut o, mut e) = (0.0, 0.0);
    for i in 0..4 {
        for j in 0..4 {
            o += w(i, j) * obs[i][j] / n;
            e += w(i, j) * ra[i] * rb[j] / (n * n);
        }
    }
    if e == 0.0 { 1.0 } else { 1.0 - o / e }
}

/// The offline judge against the hand labels of bench/judge_labels/fixtures.json (185 turns of
/// the real fixture logs, 8 formats, labelled before the judge was tuned): agreement may only
/// go up. The floors are the figures measured when they were set, less a small margin.
#[test]
fn offline_judge_agrees_with_hand_labels_on_the_real_logs() {
    let Some(root) = crate::common::real_fixtures("") else {
        return;
    };
    let labels: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("bench/judge_labels/fixtures.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let r = crate::common::Repo::new();
    let dims = ["tr", "di", "vr", "sa"];
    let mut pairs: Vec<Vec<(u8, u8)>> = vec![Vec::new(); 4];
    let (mut kinds, mut turns) = (0, 0);
    for s in labels["sessions"].as_array().unwrap() {
        let log = root.join(s["source"]["fixture"].as_str().unwrap());
        let mut args = vec![
            "judge".to_string(),
            log.display().to_string(),
            "--cwe".into(),
            s["cwe"].to_string(),
            "--task".into(),
            s["task"].as_str().unwrap().into(),
            "--format".into(),
            "json".into(),
            "--no-cache".into(),
        ];
        if let Some(f) = s["anchor"]["file"].as_str() {
            args.extend(["--anchor-file".into(), f.into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = r.sage(&args).ok().json();
        let got: std::collections::HashMap<u64, &serde_json::Value> = out["turns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["turn"].as_u64().unwrap(), t))
            .collect();
        for t in s["turns"].as_array().unwrap() {
            let j = got[&t["turn"].as_u64().unwrap()];
            turns += 1;
            kinds += usize::from(j["kind"] == t["kind"]);
            for (i, d) in dims.iter().enumerate() {
                let judged = j["scores"][d].as_u64().unwrap_or(0) as u8;
                pairs[i].push((t[d].as_u64().unwrap() as u8, judged));
            }
        }
    }
    assert_eq!(turns, 185, "the labelled set changed: set the floors again");
    // (kappa, exact) floors per dimension, measured at 0.48/0.86, 0.72/0.95, 0.64/0.82, and SA
    // 0.53/0.71 against its blind revision (fixtures.json `sa_revision`: reading or editing
    // the place that needs the defence is SA 1).
    let floors = [(0.43, 0.82), (0.67, 0.91), (0.59, 0.78), (0.48, 0.66)];
    for (i, d) in dims.iter().enumerate() {
        let k = weighted_kappa(&pairs[i]);
        let exact = pairs[i].iter().filter(|(a, b)| a == b).count() as f64 / turns as f64;
        assert!(
            k >= floors[i].0 && exact >= floors[i].1,
            "{d}: kappa {k:.2} (floor {}), exact {exact:.2} (floor {})",
            floors[i].0,
            floors[i].1
        );
    }
    let kind = kinds as f64 / turns as f64;
    // Measured at 0.72 since the kinds follow docs/method.md's table as two blind labellers
    // apply it (bench/verdict, 0.89 there): these older labels mostly kept the kinds of the
    // binary of their day, where reading any file after an edit was review and a listing was
    // bookkeeping (0.83 then).
    assert!(kind >= 0.68, "kind agreement {kind:.2} (floor 0.68)");
}
