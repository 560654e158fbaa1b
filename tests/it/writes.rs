//! `provenance.writes[]` lists the writes that touched the anchored file (and those the
//! verdict names), counts the rest, and lists them all with `--all-writes` or
//! `sage.allWrites` (issue 21).

use serde_json::Value;

use crate::common::{AGENT, HUMAN, Repo};

const VULN: &str = "if not url.startswith(\"https://\"):";

fn fetcher(check: bool, extra: &str) -> String {
    let mut s = String::from("import urllib.request\n\n\ndef download(url):\n");
    if check {
        s.push_str("    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n");
    }
    s.push_str("    return urllib.request.urlopen(url).read()\n");
    s.push_str(extra);
    s
}

fn finding(r: &Repo) -> String {
    r.finding(
        "ssrf.yaml",
        &format!("id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - '{VULN}'\n"),
    )
}

/// Seven agent writes over a human base: the check comes in at write 2 (in `old/fetch.py`),
/// write 4 renames the file to `media/fetcher.py`, write 6 edits it; writes 1, 3, 5 and 7
/// change other files only.
fn history() -> Repo {
    let r = Repo::new();
    r.write("old/fetch.py", &fetcher(false, ""));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    for i in 1..=7 {
        match i {
            2 => r.write("old/fetch.py", &fetcher(true, "")),
            4 => {
                std::fs::create_dir_all(r.path().join("media")).unwrap();
                r.git(&["mv", "old/fetch.py", "media/fetcher.py"]);
            }
            6 => r.write("media/fetcher.py", &fetcher(true, "# logged\n")),
            _ => r.write(&format!("noise/{i}.txt"), &format!("{i}\n")),
        }
        r.commit_as(AGENT, &format!("write {i}"));
    }
    r
}

fn json(r: &Repo, command: &str, extra: &[&str]) -> Value {
    let f = finding(r);
    let mut args = vec![command, "--finding", f.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    r.sage(&args).ok().json()
}

fn numbers(p: &Value) -> Vec<u64> {
    p["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["write"].as_u64().unwrap())
        .collect()
}

#[test]
fn untouched_writes_are_left_out_and_counted() {
    let r = history();
    for command in ["provenance", "blame-origin"] {
        let v = json(&r, command, &[]);
        let p = &v["provenance"];
        assert_eq!(p["status"], "introduced", "{command}");
        assert_eq!(numbers(p), [2, 4, 6], "{command}: {p}");
        assert!(
            p["writes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| w["changed"] == true),
            "{command}: {p}"
        );
        assert_eq!(p["writes_total"], 7, "{command}");
        assert_eq!(p["writes_omitted"], 4, "{command}");
        assert_eq!(v["range"]["commits"], 7, "{command}");
        // The rename and the edit after it are there, each at its own path.
        assert_eq!(p["writes"][0]["path"], "old/fetch.py", "{command}");
        assert_eq!(p["writes"][1]["path"], "media/fetcher.py", "{command}");
    }
}

#[test]
fn all_writes_lists_every_write_at_the_same_positions() {
    let r = history();
    for command in ["provenance", "blame-origin"] {
        let pruned = json(&r, command, &[]);
        let all = json(&r, command, &["--all-writes"]);
        let (p, a) = (&pruned["provenance"], &all["provenance"]);
        assert_eq!(numbers(a), [1, 2, 3, 4, 5, 6, 7], "{command}");
        assert_eq!(a["writes_total"], 7, "{command}");
        assert_eq!(a["writes_omitted"], 0, "{command}");
        // Each listed write is the same object in both, at the same position.
        for w in p["writes"].as_array().unwrap() {
            let n = w["write"].as_u64().unwrap() as usize;
            assert_eq!(&a["writes"][n - 1], w, "{command}: write {n}");
        }
        let untouched = a["writes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["changed"] == false)
            .count();
        assert_eq!(untouched, 4, "{command}: {a}");
        assert_eq!(p["introducing_write"], a["introducing_write"], "{command}");
    }
    // The setting does what the flag does.
    r.git(&["config", "sage.allWrites", "true"]);
    assert_eq!(
        numbers(&json(&r, "provenance", &[])["provenance"]),
        [1, 2, 3, 4, 5, 6, 7]
    );
    r.git(&["config", "sage.allWrites", "sometimes"]);
    let f = finding(&r);
    r.sage(&["provenance", "--finding", &f])
        .bad_input("sage.allWrites");
}

#[test]
fn the_introducing_write_is_kept() {
    let r = history();
    let p = &json(&r, "provenance", &[])["provenance"];
    let intro = &p["introducing_write"];
    assert_eq!(intro["write"], 2);
    let listed = p["writes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["write"] == intro["write"])
        .unwrap_or_else(|| panic!("the introducing write is not listed: {p}"));
    assert_eq!(listed["commit"], intro["commit"]);
    assert_eq!(listed["present_after"], true);
}

#[test]
fn the_text_report_counts_the_same() {
    let r = history();
    let f = finding(&r);
    let pruned = r.sage(&["provenance", "--finding", &f]).ok().stdout;
    let all = r
        .sage(&["provenance", "--finding", &f, "--all-writes"])
        .ok()
        .stdout;
    assert!(
        pruned.contains("(3 of 7 writes changed media/fetcher.py)"),
        "{pruned}"
    );
    assert_eq!(pruned, all);
    // The text beside a pruned JSON, from the same run, still lists the untouched writes.
    let dir = tempfile::tempdir().unwrap();
    let (txt, js) = (dir.path().join("p.txt"), dir.path().join("p.json"));
    let (txt_s, js_s) = (txt.to_str().unwrap(), js.to_str().unwrap());
    r.sage(&["provenance", "--finding", &f, "--out", txt_s, "--out", js_s])
        .ok();
    assert_eq!(std::fs::read_to_string(&txt).unwrap(), all);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    assert_eq!(v["provenance"]["writes_omitted"], 4);
    let blame = |extra: &[&str]| {
        let mut args = vec!["blame-origin", "--finding", f.as_str()];
        args.extend_from_slice(extra);
        r.sage(&args).ok().stdout
    };
    assert_eq!(blame(&[]), blame(&["--all-writes"]));
}

#[test]
fn the_writes_a_lost_defect_names_are_kept() {
    // Present after write 1, still there after write 2 (which does not touch the file),
    // removed by write 3: the reason names write 2.
    let r = Repo::new();
    r.write("media/fetcher.py", &fetcher(false, ""));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("media/fetcher.py", &fetcher(true, ""));
    r.commit_as(AGENT, "add the check");
    r.write("a.txt", "a\n");
    r.commit_as(AGENT, "other file");
    r.write("media/fetcher.py", &fetcher(false, "# no check\n"));
    r.commit_as(AGENT, "drop the check");
    r.write("b.txt", "b\n");
    r.commit_as(AGENT, "other file again");
    let p = &json(&r, "provenance", &[])["provenance"];
    assert_eq!(p["status"], "no_code_location");
    let reason = p["reason"].as_str().unwrap();
    assert!(reason.contains("present after write 2"), "{reason}");
    assert_eq!(numbers(p), [1, 2, 3]);
    assert_eq!(p["writes_total"], 4);
    assert_eq!(p["writes_omitted"], 1);

    // A write that deletes the file is listed; the writes around it are not.
    let r = Repo::new();
    r.write("media/fetcher.py", &fetcher(true, ""));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("a.txt", "a\n");
    r.commit_as(AGENT, "other file");
    r.remove("media/fetcher.py");
    r.commit_as(AGENT, "delete the fetcher");
    r.write("b.txt", "b\n");
    r.commit_as(AGENT, "other file again");
    let p = &json(&r, "provenance", &[])["provenance"];
    let reason = p["reason"].as_str().unwrap();
    assert!(reason.contains("write 2"), "{reason}");
    assert_eq!(numbers(p), [2]);
    assert_eq!(p["writes"][0]["blob"], Value::Null);
    assert_eq!(p["writes_omitted"], 2);
}

const SESSION: &str = r#"schema: sage.session/1
task: fix the SSRF in fetch
turns:
  - text: "Plan: the scheme check is already there; add logging."
  - text: Adding a log line to the fetcher.
  - text: Running the tests.
  - text: Writing the docs.
  - text: Done.
"#;

#[test]
fn the_delivered_repair_bounds_the_origin_from_a_pruned_document() {
    // Inherited: the origin rule is bounded by the agent's last mapped write (turn 4), which
    // changes only the docs. `origin --provenance` must find it in the pruned list.
    let r = Repo::new();
    r.write("media/fetcher.py", &fetcher(true, ""));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("media/fetcher.py", &fetcher(true, "# logged\n"));
    r.commit_as(AGENT, "log the URL\n\nSage-Turn: 2");
    r.write("README.md", "https only\n");
    r.commit_as(AGENT, "docs\n\nSage-Turn: 4");
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.yaml");
    std::fs::write(&session, SESSION).unwrap();
    let s = session.to_str().unwrap();
    let pruned = json(&r, "provenance", &["--session", s]);
    let all = json(&r, "provenance", &["--session", s, "--all-writes"]);
    assert_eq!(pruned["provenance"]["status"], "inherited");
    assert_eq!(numbers(&pruned["provenance"]), [1, 2]);
    assert_eq!(pruned["provenance"]["writes"][1]["changed"], false);
    assert_eq!(pruned["provenance"]["writes"][1]["turn"], 4);

    let scores = dir.path().join("scores.json");
    r.sage(&["judge", s, "--out", scores.to_str().unwrap(), "-q"])
        .ok();
    let origin = |doc: &Value, name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        r.sage(&[
            "origin",
            "--scores",
            scores.to_str().unwrap(),
            "--provenance",
            path.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json()
    };
    let from_pruned = origin(&pruned, "pruned.json");
    assert_eq!(from_pruned["origin"]["bound"], 4, "{from_pruned}");
    assert_eq!(from_pruned["origin"]["bound_by"], "the delivered repair");
    assert_eq!(from_pruned, origin(&all, "all.json"));
}

#[test]
fn demo_and_batch_take_the_flag_too() {
    let r = Repo::new();
    let dir = r.path().join("demo");
    let d = dir.to_str().unwrap();
    let pruned = r
        .sage(&["demo", "--keep", d, "--format", "json"])
        .ok()
        .json();
    let all = r
        .sage(&["demo", "--format", "json", "--all-writes"])
        .ok()
        .json();
    // The demo's writes 1 and 3 leave the fetcher as it was; write 3, the last at a turn,
    // is the delivered repair.
    assert_eq!(numbers(&pruned["provenance"]), [2, 3]);
    assert_eq!(numbers(&all["provenance"]), [1, 2, 3]);
    assert_eq!(pruned["provenance"]["writes_omitted"], 1);
    std::fs::write(
        r.path().join("corpus.yaml"),
        "schema: sage.manifest/1\ncases:\n  - {id: demo, repo: demo, tip: agent/fix-ssrf, base: main, finding: .sage/findings/ssrf-preview.yaml}\n",
    )
    .unwrap();
    let line = |results: &str, extra: &[&str]| -> Value {
        let mut args = vec!["batch", "corpus.yaml", "--results", results, "-q"];
        args.extend_from_slice(extra);
        r.sage(&args).ok();
        crate::schemas::check_lines(&r.path().join(results)).remove(0)
    };
    let p = &line("pruned.jsonl", &[])["report"]["provenance"];
    assert_eq!(numbers(p), [2, 3]);
    assert_eq!(p["writes_total"], 3);
    let a = &line("all.jsonl", &["--all-writes"])["report"]["provenance"];
    assert_eq!(numbers(a), [1, 2, 3]);
    assert_eq!(a["writes_omitted"], 0);
}
