//! The GitHub Action (`action.yml`): its steps run as a runner would run them — each `run:`
//! script with the step's `env:` evaluated from the inputs and earlier steps' outputs — on the
//! demo repository, against a local mock of GitHub's API. The `uses:` steps (cache, SARIF
//! upload) and the download of the prebuilt binary are GitHub's; the binary under test is on
//! PATH instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_yaml::Value as Yaml;

use crate::common::Repo;
use crate::pr_comment::{github, serve};

fn action() -> Yaml {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

/// What one run of the action left: step outputs, the summary, each step's exit code.
#[derive(Debug, Default)]
struct Ran {
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    summary: String,
    codes: Vec<(String, i32)>,
    stdout: String,
}

impl Ran {
    fn code(&self, step: &str) -> Option<i32> {
        self.codes.iter().find(|(n, _)| n == step).map(|(_, c)| *c)
    }
}

/// `${{ … }}` of a step's `env:` value, from the inputs and earlier outputs.
fn eval(v: &str, inputs: &BTreeMap<String, String>, ran: &Ran) -> String {
    let mut out = v.to_string();
    while let Some(a) = out.find("${{") {
        let b = out[a..].find("}}").unwrap() + a;
        let expr = out[a + 3..b].trim();
        let value = if let Some(k) = expr.strip_prefix("inputs.") {
            inputs[k].clone()
        } else if let Some(rest) = expr.strip_prefix("steps.") {
            let (id, key) = rest.split_once(".outputs.").unwrap();
            ran.outputs
                .get(id)
                .and_then(|o| o.get(key))
                .cloned()
                .unwrap_or_default()
        } else {
            panic!("unknown expression {expr}")
        };
        out.replace_range(a..b + 2, &value);
    }
    out
}

/// Runs the action's steps in `dir` with `given` inputs, GitHub at `api`.
fn run_action(r: &Repo, dir: &Path, given: &[(&str, &str)], api: &str, token: &str) -> Ran {
    let action = action();
    let mut inputs = BTreeMap::new();
    for (k, v) in action["inputs"].as_mapping().unwrap() {
        let default = v["default"].as_str().unwrap_or_default();
        let default = match default {
            "${{ github.token }}" => token.to_string(),
            d => d.to_string(),
        };
        inputs.insert(k.as_str().unwrap().to_string(), default);
    }
    for (k, v) in given {
        assert!(inputs.contains_key(*k), "no input {k}");
        inputs.insert(k.to_string(), v.to_string());
    }
    let work = r.home().join("runner");
    std::fs::create_dir_all(&work).unwrap();
    let summary = work.join("summary.md");
    let _ = std::fs::remove_file(&summary);
    let event = work.join("event.json");
    std::fs::write(&event, r#"{"pull_request": {"number": 7}}"#).unwrap();
    let mut ran = Ran::default();
    for step in action["runs"]["steps"].as_sequence().unwrap() {
        let name = step["name"].as_str().unwrap().to_string();
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        // The download and the PATH step are the runner's side: the binary under test stands in.
        if name.starts_with("Install") || name == "git-sage on PATH" {
            continue;
        }
        if name == "Pull-request comment"
            && (inputs["comment"] != "true"
                || ran
                    .outputs
                    .get("explain")
                    .and_then(|o| o.get("report"))
                    .is_none())
        {
            continue;
        }
        let output = work.join("output.txt");
        let _ = std::fs::remove_file(&output);
        let mut cmd = r.command("bash", dir);
        cmd.arg("-c")
            .arg(script)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_EVENT_PATH", &event)
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_API_URL", api)
            .env("RUNNER_TEMP", &work);
        if let Some(env) = step["env"].as_mapping() {
            for (k, v) in env {
                let v = eval(v.as_str().unwrap(), &inputs, &ran);
                cmd.env(k.as_str().unwrap(), v);
            }
        }
        let out = cmd.output().unwrap();
        ran.stdout.push_str(&String::from_utf8_lossy(&out.stdout));
        ran.stdout.push_str(&String::from_utf8_lossy(&out.stderr));
        ran.codes
            .push((name.clone(), out.status.code().unwrap_or(-1)));
        if let Some(id) = step["id"].as_str() {
            let text = std::fs::read_to_string(&output).unwrap_or_default();
            let kv = text
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            ran.outputs.insert(id.to_string(), kv);
        }
    }
    ran.summary = std::fs::read_to_string(&summary).unwrap_or_default();
    ran
}

#[test]
fn the_action_is_composite_and_splices_no_input_into_a_script() {
    let a = action();
    assert_eq!(a["runs"]["using"].as_str(), Some("composite"));
    for step in a["runs"]["steps"].as_sequence().unwrap() {
        if let Some(script) = step["run"].as_str() {
            // Inputs reach scripts through env only: `${{ inputs.x }}` in a script is code
            // injection from whoever sets the input (a branch name, a PR title).
            assert!(!script.contains("${{"), "{script}");
        }
    }
    let uses: Vec<&str> = a["runs"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|s| s["uses"].as_str())
        .collect();
    assert!(
        uses.contains(&"github/codeql-action/upload-sarif@v3"),
        "{uses:?}"
    );
    assert!(uses.contains(&"actions/cache@v4"), "{uses:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn on_the_demo_the_action_comments_once_and_gates_as_asked() {
    let (server, state) = github(serve, &[]).await;
    let r = Repo::new();
    let d = r.demo();
    let base = [("base", "main")];
    let ran = run_action(&r, &d, &base, &server.uri(), "tok");
    assert_eq!(ran.outputs["version"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(ran.outputs["explain"]["exit-code"], "0", "{ran:?}");
    let sarif = PathBuf::from(&ran.outputs["explain"]["sarif"]);
    assert!(
        std::fs::read_to_string(&sarif)
            .unwrap()
            .contains("\"2.1.0\"")
    );
    assert_eq!(ran.code("Verdict"), Some(0), "{ran:?}");
    assert!(
        ran.stdout.contains("pull-request comment created"),
        "{ran:?}"
    );
    // Run again, gated: the same comment updated; the job fails with what fail-on found.
    let ran = run_action(
        &r,
        &d,
        &[("base", "main"), ("fail-on", "introduced")],
        &server.uri(),
        "tok",
    );
    assert_eq!(ran.outputs["explain"]["exit-code"], "1", "{ran:?}");
    assert_eq!(ran.code("Verdict"), Some(1), "{ran:?}");
    assert!(
        ran.stdout.contains("pull-request comment updated"),
        "{ran:?}"
    );
    let s = state.lock().unwrap();
    assert_eq!(s.comments.len(), 1, "{:?}", s.comments);
    assert!(
        s.comments[0].1.contains("ssrf-preview"),
        "{}",
        s.comments[0].1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_fails_closed_only_where_asked_and_says_so_in_the_summary() {
    let (server, state) = github(serve, &[]).await;
    let r = Repo::new();
    let d = r.demo();
    // A SARIF path that does not exist: one line in the summary, a warning, the job passes.
    let ran = run_action(
        &r,
        &d,
        &[("base", "main"), ("sarif", "nope.sarif")],
        &server.uri(),
        "tok",
    );
    assert_eq!(ran.outputs["explain"]["exit-code"], "2", "{ran:?}");
    assert!(
        ran.summary.contains("could not explain the findings"),
        "{}",
        ran.summary
    );
    assert!(ran.summary.contains("nope.sarif"), "{}", ran.summary);
    assert!(
        ran.stdout.contains("::warning title=git-sage::"),
        "{}",
        ran.stdout
    );
    assert_eq!(ran.code("Verdict"), Some(0));
    // ... and fails the job when a gate was asked for.
    let ran = run_action(
        &r,
        &d,
        &[
            ("base", "main"),
            ("sarif", "nope.sarif"),
            ("fail-on", "origin"),
        ],
        &server.uri(),
        "tok",
    );
    assert!(
        ran.stdout.contains("::error title=git-sage::"),
        "{}",
        ran.stdout
    );
    assert_eq!(ran.code("Verdict"), Some(2));
    // An empty report from the scanner: nothing to explain, no comment, the job passes.
    std::fs::write(
        d.join("empty.sarif"),
        r#"{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "bandit"}}, "results": []}]}"#,
    )
    .unwrap();
    let ran = run_action(
        &r,
        &d,
        &[
            ("base", "main"),
            ("sarif", "empty.sarif"),
            ("fail-on", "origin"),
        ],
        &server.uri(),
        "tok",
    );
    assert_eq!(ran.outputs["explain"]["exit-code"], "0", "{ran:?}");
    assert!(
        ran.summary.contains("no results: nothing to explain"),
        "{}",
        ran.summary
    );
    assert_eq!(ran.code("Verdict"), Some(0));
    assert!(
        state.lock().unwrap().seen.is_empty(),
        "no comment was asked for"
    );
    // A fork's pull request: no token; the report goes to the summary, the job passes.
    let ran = run_action(&r, &d, &[("base", "main")], &server.uri(), "");
    assert!(ran.summary.contains("ssrf-preview"), "{}", ran.summary);
    assert!(ran.stdout.contains("no GITHUB_TOKEN"), "{}", ran.stdout);
    assert_eq!(ran.code("Verdict"), Some(0));
    assert!(state.lock().unwrap().seen.is_empty());
}
