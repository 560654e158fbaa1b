//! Scanner findings through the binary, and every bad input of issue 1/7.

use crate::common::{HUMAN, Repo};

const FETCHER_BASE: &str = "import urllib.request\n\n\ndef download(url):\n    return urllib.request.urlopen(url).read()\n";
const FETCHER_TIP: &str = "import urllib.request\n\n\ndef download(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return urllib.request.urlopen(url).read()\n";

/// base (human) on main, branch agent with one write adding the check at line 5.
fn repo() -> (Repo, String) {
    let r = Repo::new();
    r.write("media/fetcher.py", FETCHER_BASE);
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("media/fetcher.py", FETCHER_TIP);
    let w = r.commit("check scheme");
    r.write("notes.txt", "n\n");
    r.commit("notes");
    (r, w)
}

fn sarif(uri: &str, results: &[(&str, u32)]) -> String {
    let res: Vec<String> = results
        .iter()
        .map(|(rule, line)| {
            format!(
                r#"{{"ruleId":"{rule}","message":{{"text":"m"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"{uri}"}},"region":{{"startLine":{line}}}}}}}]}}"#
            )
        })
        .collect();
    format!(
        r#"{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"Bandit","rules":[{{"id":"B310","properties":{{"tags":["external/cwe/cwe-22"]}}}}]}}}},"results":[{}]}}]}}"#,
        res.join(",")
    )
}

#[test]
fn bandit_json_with_windows_path_and_line_range() {
    let (r, w) = repo();
    let f = r.finding(
        "bandit.json",
        r#"{"errors":[],"generated_at":"2026-01-01T00:00:00Z","metrics":{},"results":[
          {"code":"5     if not url.startswith(\"https://\"):\n","filename":".\\media\\fetcher.py","issue_cwe":{"id":918},
           "issue_text":"x","line_number":5,"line_range":[5],"test_id":"B310","col_offset":4}]}"#,
    );
    let v = r
        .sage(&["provenance", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["finding"]["file"], "media/fetcher.py");
    assert_eq!(v["finding"]["cwe"], 918);
    assert_eq!(
        v["finding"]["fragments"][0],
        "    if not url.startswith(\"https://\"):"
    );
    assert_eq!(v["finding"]["id"], "B310:media/fetcher.py:5");
    assert_eq!(v["provenance"]["introducing_write"]["commit"], w);
}

#[test]
fn sarif_with_absolute_uri_from_another_machine_and_select() {
    let (r, w) = repo();
    let f = r.finding(
        "scan.sarif",
        &sarif(
            "file:///home/runner/work/shop/shop/media/fetcher.py",
            &[("B310", 5), ("B101", 1)],
        ),
    );
    r.sage(&["provenance", "--finding", &f])
        .bad_input("holds 2 results");
    let v = r
        .sage(&[
            "provenance",
            "--finding",
            &f,
            "--select",
            "B310",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["finding"]["file"], "media/fetcher.py");
    assert_eq!(v["finding"]["cwe"], 22);
    assert_eq!(v["provenance"]["introducing_write"]["commit"], w);
    assert!(
        v["provenance"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("taken as media/fetcher.py")
    );
    // by index: result 2 is line 1 (the import), inherited
    let v = r
        .sage(&[
            "provenance",
            "--finding",
            &f,
            "--select",
            "2",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "inherited");
    r.sage(&["provenance", "--finding", &f, "--select", "3"])
        .bad_input("results 1..2");
    r.sage(&["provenance", "--finding", &f, "--select", "B999"])
        .bad_input("no result");
}

#[test]
fn semgrep_json() {
    let (r, w) = repo();
    let f = r.finding(
        "semgrep.json",
        r#"{"version":"1.185.0","results":[{"check_id":"python.ssrf","path":"media/fetcher.py","start":{"line":5,"col":5},"end":{"line":6,"col":30},
            "extra":{"message":"m","metadata":{"cwe":["CWE-918: Server-Side Request Forgery (SSRF)"]},"lines":"requires login"}}],"errors":[],"paths":{"scanned":[]}}"#,
    );
    let v = r
        .sage(&["provenance", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["finding"]["cwe"], 918);
    assert_eq!(v["provenance"]["introducing_write"]["commit"], w);
    assert_eq!(v["finding"]["source"]["tool"], "Semgrep");
}

#[test]
fn bad_input_unknown_finding_format() {
    let (r, _) = repo();
    let f = r.finding("weird.json", r#"{"hello": "world"}"#);
    r.sage(&["provenance", "--finding", &f])
        .bad_input("unknown finding format");
    let f = r.finding("weird.txt", "just some text\n");
    r.sage(&["provenance", "--finding", &f])
        .bad_input("weird.txt");
}

#[test]
fn bad_input_sarif_without_results() {
    let (r, _) = repo();
    let f = r.finding("empty.sarif", &sarif("a.py", &[]));
    r.sage(&["provenance", "--finding", &f])
        .bad_input("empty.sarif: SARIF file holds no results");
}

#[test]
fn bad_input_finding_on_a_file_not_in_the_repository() {
    let (r, _) = repo();
    let f = r.finding("nofile.yaml", "file: media/nothere.py\nfragment: x\n");
    r.sage(&["provenance", "--finding", &f])
        .bad_input("media/nothere.py is not in the repository");
}

#[test]
fn bad_input_base_not_an_ancestor() {
    let (r, _) = repo();
    r.git(&["checkout", "-q", "-b", "elsewhere", "main"]);
    r.write("x.txt", "x\n");
    r.commit_as(HUMAN, "diverge");
    r.git(&["checkout", "-q", "agent"]);
    let f = r.finding("a.yaml", "file: media/fetcher.py\nfragment: x\n");
    r.sage(&["provenance", "--finding", &f, "--base", "elsewhere"])
        .bad_input("base elsewhere is not an ancestor");
    r.sage(&["provenance", "--finding", &f, "--base", "nosuchrev"])
        .bad_input("unknown revision nosuchrev");
}

#[test]
fn bad_input_non_repository_directory() {
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    let f = r.finding("a.yaml", "file: a.py\nfragment: x\n");
    r.sage_in(outside.path(), &["provenance", "--finding", &f])
        .bad_input("is not inside a git repository");
    r.sage(&["-C", "/no/such/dir", "provenance", "--finding", &f])
        .bad_input("-C /no/such/dir");
}

#[test]
fn bad_input_range_of_zero_commits() {
    let (r, _) = repo();
    let f = r.finding("a.yaml", "file: media/fetcher.py\nfragment: x\n");
    r.sage(&["provenance", "--finding", &f, "--base", "HEAD"])
        .bad_input("holds no commits");
}

#[test]
fn bad_input_finding_files() {
    let (r, _) = repo();
    r.sage(&["provenance", "--finding", "/no/such.sarif"])
        .bad_input("cannot read finding /no/such.sarif: no such file");
    let f = r.finding(
        "typo.yaml",
        "id: x\nfile: media/fetcher.py\nfragmnts: [x]\n",
    );
    r.sage(&["provenance", "--finding", &f])
        .bad_input("typo.yaml:3:");
    let f = r.finding("lines.yaml", "file: media/fetcher.py\nlines: 90-99\n");
    r.sage(&["provenance", "--finding", &f])
        .bad_input("lines 90-99 are outside");
    let f = r.finding("re.yaml", "file: media/fetcher.py\npattern: '('\n");
    r.sage(&["provenance", "--finding", &f])
        .bad_input("not a valid regex");
    r.sage(&["provenance"]).bad_input("no finding given");
    r.sage(&["provenance", "--finding", &f, "--agent", "("])
        .bad_input("--agent");
}
