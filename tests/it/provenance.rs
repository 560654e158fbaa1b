//! `git sage provenance`: every status and the history shapes of issue 1/7.

use crate::common::{AGENT, HUMAN, Repo};

const VULN: &str = "if not url.startswith(\"https://\"):";

fn fetcher(check: bool) -> String {
    let mut s = String::from("import urllib.request\n\n\ndef download(url):\n");
    if check {
        s.push_str("    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n");
    }
    s.push_str("    return urllib.request.urlopen(url).read()\n");
    s
}

fn anchor(r: &Repo) -> String {
    r.finding(
        "ssrf.yaml",
        &format!("id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - '{VULN}'\n"),
    )
}

/// A repository with `media/fetcher.py` at base on main, and branch `agent` checked out.
fn base_repo(with_check: bool) -> (Repo, String) {
    let r = Repo::new();
    r.write("media/fetcher.py", &fetcher(with_check));
    let base = r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    (r, base)
}

fn prov(r: &Repo, extra: &[&str]) -> serde_json::Value {
    let f = anchor(r);
    let mut args = vec!["provenance", "--finding", f.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    let run = r.sage(&args).ok();
    let v = run.json();
    assert_eq!(v["schema"], "sage.provenance/1");
    v
}

#[test]
fn introduced_by_an_agent_write() {
    let (r, base) = base_repo(false);
    r.write("tests/test_fetcher.py", "def test(): pass\n");
    r.commit("add test");
    r.write("media/fetcher.py", &fetcher(true));
    let w2 = r.commit("check scheme");
    r.write("README.md", "https only\n");
    let tip = r.commit("docs");
    let v = prov(&r, &["--all-writes"]);
    assert_eq!(v["range"]["base"], base);
    assert_eq!(v["range"]["tip"], tip);
    assert_eq!(v["range"]["commits"], 3);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced");
    assert_eq!(p["introducing_write"]["commit"], w2);
    assert_eq!(p["introducing_write"]["write"], 2);
    assert_eq!(p["introducing_write"]["turn"], serde_json::Value::Null);
    assert_eq!(p["reconstruction"], "single-write");
    let present: Vec<bool> = p["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["present_after"].as_bool().unwrap())
        .collect();
    assert_eq!(present, [false, true, true]);
    assert_eq!(p["baseline"]["present"], false);

    // and the text report says the same thing to a person
    let f = anchor(&r);
    let text = r.sage(&["provenance", "--finding", &f]).ok().stdout;
    assert!(text.contains("INTRODUCED by agent write 2"), "{text}");
    assert!(text.contains("← introducing write"), "{text}");
}

#[test]
fn inherited_when_present_at_base_and_throughout() {
    let (r, _) = base_repo(true);
    r.write("media/fetcher.py", &(fetcher(true) + "# touched\n"));
    r.commit("touch");
    r.write("other.py", "x = 1\n");
    r.commit("other");
    let v = prov(&r, &[]);
    assert_eq!(v["provenance"]["status"], "inherited");
    assert!(v["provenance"]["introducing_write"].is_null());
    assert_eq!(v["provenance"]["baseline"]["present"], true);
}

#[test]
fn introduced_by_other_when_a_human_commit_wrote_it() {
    let (r, _) = base_repo(false);
    r.write("a.py", "1\n");
    r.commit_as(AGENT, "agent work");
    r.write("media/fetcher.py", &fetcher(true));
    let human = r.commit_as(HUMAN, "human adds the check");
    r.write("b.py", "2\n");
    r.commit_as(AGENT, "agent again");
    let v = prov(&r, &["--agent", "Agent", "--all-writes"]);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced_by_other");
    assert_eq!(p["introducing_write"]["commit"], human);
    assert_eq!(p["introducing_write"]["agent"], false);
    let agents: Vec<bool> = p["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["agent"].as_bool().unwrap())
        .collect();
    assert_eq!(agents, [true, false, true]);
}

#[test]
fn human_commit_inside_the_range_is_reported_as_such() {
    let (r, _) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    let w1 = r.commit_as(AGENT, "agent check");
    r.write("docs.md", "human docs\n");
    r.commit_as(HUMAN, "human docs");
    // the pattern may also come from git config, and match a Co-authored-by trailer
    r.git(&["config", "sage.agentPattern", "anthropic"]);
    r.write("c.py", "3\n");
    r.git_as(HUMAN, &["add", "-A"]);
    r.git_as(
        HUMAN,
        &[
            "commit",
            "-q",
            "-m",
            "pairing\n\nCo-authored-by: Claude <noreply@anthropic.com>",
        ],
    );
    let v = prov(&r, &["--all-writes"]);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced");
    assert_eq!(p["introducing_write"]["commit"], w1);
    let agents: Vec<bool> = p["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["agent"].as_bool().unwrap())
        .collect();
    assert_eq!(agents, [true, false, true]);
}

#[test]
fn no_code_location_when_never_present() {
    let (r, _) = base_repo(false);
    r.write(
        "media/fetcher.py",
        &(fetcher(false) + "# no check at all\n"),
    );
    r.commit("edit");
    let v = prov(&r, &[]);
    assert_eq!(v["provenance"]["status"], "no_code_location");
    let reason = v["provenance"]["reason"].as_str().unwrap();
    assert!(reason.contains("matches no snapshot"), "{reason}");
}

#[test]
fn no_code_location_when_fixed_before_the_tip() {
    let (r, _) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    r.commit("weak check");
    r.write(
        "media/fetcher.py",
        &fetcher(false).replace("return", "check_host(url)\n    return"),
    );
    r.commit("real check");
    let v = prov(&r, &[]);
    assert_eq!(v["provenance"]["status"], "no_code_location");
    assert!(
        v["provenance"]["reason"]
            .as_str()
            .unwrap()
            .contains("present after write 1")
    );
}

#[test]
fn remove_and_restore_yields_the_restoring_write() {
    let (r, _) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    r.commit("add check");
    r.write("media/fetcher.py", &fetcher(false));
    r.commit("remove check");
    r.write("media/fetcher.py", &fetcher(true));
    let restore = r.commit("restore check");
    r.write("z.py", "z\n");
    r.commit("unrelated");
    let v = prov(&r, &[]);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced");
    assert_eq!(p["introducing_write"]["commit"], restore);
    assert_eq!(p["introducing_write"]["write"], 3);
    assert_eq!(p["reconstruction"], "per-write");
    // the file returned to an earlier blob: one read per distinct blob
    assert_eq!(p["blobs_read"], 2);
}

#[test]
fn defence_removed_is_introduced() {
    let r = Repo::new();
    r.write(
        "media/fetcher.py",
        "def download(url):\n    check_host(url)\n    return get(url)\n",
    );
    r.commit_as(HUMAN, "base with defence");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write(
        "media/fetcher.py",
        "def download(url):\n    return get(url)\n",
    );
    let removed = r.commit("simplify");
    let f = r.finding(
        "absent.yaml",
        "id: host-check\nfile: media/fetcher.py\nkind: absent\nclass: missing_defence\nfragments: ['check_host(url)']\n",
    );
    let v = r
        .sage(&["provenance", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "introduced");
    assert_eq!(v["provenance"]["introducing_write"]["commit"], removed);
    assert_eq!(v["finding"]["kind"], "absent");
}

#[test]
fn rename_between_writes_is_followed() {
    let r = Repo::new();
    r.write("old/fetch.py", &fetcher(false));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("old/fetch.py", &fetcher(true));
    let w1 = r.commit("add check under the old name");
    std::fs::create_dir_all(r.path().join("media")).unwrap();
    r.git(&["mv", "old/fetch.py", "media/fetcher.py"]);
    r.commit("move the module");
    r.write("media/fetcher.py", &(fetcher(true) + "# moved\n"));
    r.commit("touch after the move");
    let v = prov(&r, &[]);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced");
    assert_eq!(p["introducing_write"]["commit"], w1);
    assert_eq!(p["writes"][0]["path"], "old/fetch.py");
    assert_eq!(p["writes"][2]["path"], "media/fetcher.py");
    assert_eq!(p["baseline"]["path"], "old/fetch.py");
    assert!(
        p["notes"][0].as_str().unwrap().contains("renamed"),
        "{}",
        p["notes"]
    );
}

#[test]
fn merge_commit_in_the_range() {
    let (r, _) = base_repo(false);
    r.write("a.py", "a\n");
    r.commit("agent a");
    // a side branch (a colleague's) brings the check; the agent merges it in
    r.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    r.write("media/fetcher.py", &fetcher(true));
    let side = r.commit_as(HUMAN, "colleague adds check");
    r.git(&["checkout", "-q", "agent"]);
    r.git_as(
        AGENT,
        &["merge", "-q", "--no-ff", "-m", "merge side", "side"],
    );
    let merge = r.git(&["rev-parse", "HEAD"]);
    r.write("b.py", "b\n");
    r.commit("agent b");
    let v = prov(&r, &["--all-writes"]);
    let p = &v["provenance"];
    // the merge brought the code: its side is walked and the colleague's commit, not the
    // merge, is the introducing write, naming the merge
    let commits: Vec<&str> = p["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["commit"].as_str().unwrap())
        .collect();
    assert_eq!(commits.len(), 4, "{commits:?}");
    assert_eq!(commits[1], side);
    assert_eq!(p["writes"][2]["merge"], true);
    assert_eq!(
        p["status"], "introduced",
        "every commit is the agent's by default"
    );
    assert_eq!(p["introducing_write"]["commit"], side);
    let p = &prov(&r, &["--agent", "Claude"])["provenance"];
    assert_eq!(
        p["status"], "introduced_by_other",
        "the colleague is no agent"
    );
    assert_eq!(p["introducing_write"]["commit"], side);
    assert_eq!(p["introducing_write"]["via_merge"], merge);
    assert!(
        p["notes"].to_string().contains("merged side"),
        "{}",
        p["notes"]
    );
    // a base on the merged side (off the first-parent chain) is an ancestor all the same;
    // what the base already holds is not walked again
    let v = prov(&r, &["--base", &side]);
    assert_eq!(v["range"]["commits"], 3, "{v}");
    assert_eq!(v["provenance"]["introducing_write"]["commit"], merge);
}

#[test]
fn anchored_file_deleted_at_the_tip() {
    let (r, _) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    r.commit("check");
    r.remove("media/fetcher.py");
    let del = r.commit("delete fetcher");
    let v = prov(&r, &[]);
    let p = &v["provenance"];
    assert_eq!(p["status"], "no_code_location");
    let reason = p["reason"].as_str().unwrap();
    assert!(
        reason.contains("does not exist at the tip") && reason.contains(&del[..7]),
        "{reason}"
    );
    // a line range cannot be read from a file the tip lacks
    let f = r.finding("lines.yaml", "file: media/fetcher.py\nlines: 5\n");
    r.sage(&["provenance", "--finding", &f])
        .bad_input("does not exist at");
}

#[test]
fn binary_files() {
    let (r, _) = base_repo(false);
    r.write_bytes("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0IHDR");
    r.write("media/fetcher.py", &fetcher(true));
    let w = r.commit("check and a logo");
    r.write_bytes("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0IHDR2");
    r.commit("new logo");
    // a binary file elsewhere in the range changes nothing
    let v = prov(&r, &[]);
    assert_eq!(v["provenance"]["introducing_write"]["commit"], w);
    // an anchor on a binary file is matched on its bytes
    let f = r.finding("bin.yaml", "file: assets/logo.png\nfragment: IHDR2\n");
    let v = r
        .sage(&["provenance", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "introduced");
    assert_eq!(v["provenance"]["introducing_write"]["write"], 2);
    // but a line range in a binary file is bad input
    let f = r.finding("binlines.yaml", "file: assets/logo.png\nlines: 1\n");
    r.sage(&["provenance", "--finding", &f]).bad_input("binary");
}

#[test]
fn empty_range_is_bad_input() {
    let (r, base) = base_repo(false);
    let f = anchor(&r);
    r.sage(&["provenance", "--finding", &f, "--base", &base])
        .bad_input("holds no commits");
    // on main itself there is nothing ahead of main
    r.git(&["checkout", "-q", "main"]);
    r.sage(&["provenance", "--finding", &f])
        .bad_input("cannot find the base");
}

#[test]
fn shallow_clone() {
    let (r, _) = base_repo(false);
    for i in 0..3 {
        r.write(&format!("f{i}.py"), "x\n");
        r.commit(&format!("agent {i}"));
    }
    r.write("media/fetcher.py", &fetcher(true));
    let w = r.commit("check");
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", r.path().display());
    r.git(&[
        "clone",
        "-q",
        "--depth",
        "3",
        "--branch",
        "agent",
        &url,
        clone.path().to_str().unwrap(),
    ]);
    let f = anchor(&r);
    // the base lies within the depth: works
    let v = r
        .sage_in(
            clone.path(),
            &[
                "provenance",
                "--finding",
                &f,
                "--base",
                "HEAD~2",
                "--format",
                "json",
            ],
        )
        .ok()
        .json();
    assert_eq!(v["provenance"]["introducing_write"]["commit"], w);
    assert_eq!(v["range"]["commits"], 2);
    // beyond the depth: one clear line about the shallow clone
    r.sage_in(
        clone.path(),
        &["provenance", "--finding", &f, "--base", "HEAD~4"],
    )
    .bad_input("shallow");
    // a base fetched on its own, beyond the branch's depth, is "not an ancestor" — the hint
    // says why
    let mut fetch = std::process::Command::new("git");
    fetch
        .current_dir(clone.path())
        .args(["fetch", "-q", "--depth", "1", "origin", "main:main"]);
    assert!(fetch.status().unwrap().success());
    r.sage_in(
        clone.path(),
        &["provenance", "--finding", &f, "--base", "main"],
    )
    .bad_input("shallow clone: the base may lie beyond its depth");
}

#[test]
fn base_from_config_and_from_main() {
    let (r, base) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    r.commit("check");
    // main moves on after the branch started: the merge-base is still the fork point
    r.git(&["checkout", "-q", "main"]);
    r.write("main.txt", "later\n");
    r.commit_as(HUMAN, "main moves");
    r.git(&["checkout", "-q", "agent"]);
    let v = prov(&r, &[]);
    assert_eq!(v["range"]["base"], base);
    assert_eq!(v["range"]["base_source"], "merge-base with main");
    r.git(&["branch", "trunk", "main"]);
    r.git(&["config", "sage.base", "trunk"]);
    let v = prov(&r, &[]);
    assert_eq!(v["range"]["base"], base);
    assert!(
        v["range"]["base_source"]
            .as_str()
            .unwrap()
            .contains("sage.base")
    );
}

#[test]
fn json_is_deterministic_and_c_flag_works() {
    let (r, _) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    r.commit("check");
    let f = anchor(&r);
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = r.path().to_str().unwrap();
    let a = r
        .sage_in(
            elsewhere.path(),
            &["-C", dir, "provenance", "--finding", &f, "--format", "json"],
        )
        .ok();
    let b = r
        .sage_in(
            elsewhere.path(),
            &["-C", dir, "provenance", "--finding", &f, "--format", "json"],
        )
        .ok();
    assert_eq!(a.stdout, b.stdout);
    // branch named explicitly, from main
    r.git(&["checkout", "-q", "main"]);
    let v = r
        .sage(&["provenance", "agent", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "introduced");
    assert_eq!(v["range"]["tip_name"], "agent");
}

#[test]
fn inline_anchor_and_pattern() {
    let (r, _) = base_repo(false);
    r.write("media/fetcher.py", &fetcher(true));
    let w = r.commit("check");
    let v = r
        .sage(&[
            "provenance",
            "--anchor-file",
            "media/fetcher.py",
            "--anchor-snippet",
            "url.startswith( \"https://\" )",
            "--cwe",
            "CWE-918",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["provenance"]["introducing_write"]["commit"], w);
    assert_eq!(v["finding"]["cwe"], 918);
    let v = r
        .sage(&[
            "provenance",
            "--anchor-file",
            "media/fetcher.py",
            "--anchor-pattern",
            r#"startswith\(["']https"#,
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["provenance"]["status"], "introduced");
}

#[test]
fn long_ranges_list_only_the_writes_that_matter() {
    let (r, _) = base_repo(false);
    for i in 0..50 {
        r.write("noise.txt", &format!("{i}\n"));
        r.commit(&format!("noise {i}"));
    }
    r.write("media/fetcher.py", &fetcher(true));
    r.commit("check");
    for i in 0..5 {
        r.write("noise.txt", &format!("after {i}\n"));
        r.commit(&format!("after {i}"));
    }
    let f = anchor(&r);
    let text = r.sage(&["provenance", "--finding", &f]).ok().stdout;
    assert!(text.contains("(50 writes not touching the file)"), "{text}");
    assert!(text.contains("← introducing write"), "{text}");
    assert!(text.lines().count() < 20, "{text}");
}

#[test]
fn changed_path_filters_change_nothing_but_the_cost() {
    let r = Repo::new();
    r.write("old/fetch.py", &fetcher(false));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    for i in 0..70 {
        r.write(&format!("noise/{}.txt", i % 7), &format!("{i}\n"));
        if i == 20 {
            r.write("old/fetch.py", &(fetcher(false) + "# touched\n"));
        }
        if i == 30 {
            r.write("old/fetch.py", &fetcher(true));
        }
        if i == 40 {
            std::fs::create_dir_all(r.path().join("media")).unwrap();
            r.git(&["mv", "old/fetch.py", "media/fetcher.py"]);
        }
        r.commit(&format!("c{i}"));
    }
    // Every write, so that the walks are compared on each commit, not only the touching ones.
    let all = ["--all-writes"];
    let plain = prov(&r, &all);
    r.git(&["commit-graph", "write", "--reachable", "--changed-paths"]);
    assert_eq!(prov(&r, &all), plain, "with filters");
    // Commits the graph does not know yet are read as before.
    for i in 0..5 {
        r.write("media/fetcher.py", &(fetcher(true) + &"#\n".repeat(i + 1)));
        r.commit(&format!("after the graph {i}"));
    }
    let stale = prov(&r, &all);
    std::fs::remove_file(r.path().join(".git/objects/info/commit-graph")).unwrap();
    assert_eq!(stale, prov(&r, &all), "a graph older than the tip");
    let p = &plain["provenance"];
    assert_eq!(p["status"], "introduced");
    assert_eq!(p["writes"][30]["changed"], true);
}

#[test]
fn copies_are_followed_to_where_the_code_came_from() {
    let r = Repo::new();
    r.write("lib/fetcher.py", &fetcher(true));
    r.write("lib/fetch_v1.py", &(fetcher(true) + "# v1\n"));
    r.write("lib/__init__.py", "");
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    // The agent copies the module (the old one stays) and edits the copy a little.
    std::fs::create_dir_all(r.path().join("media")).unwrap();
    r.write(
        "media/fetcher.py",
        &(fetcher(true) + "\n\ndef size(url):\n    return len(download(url))\n"),
    );
    r.write("media/__init__.py", "");
    // And copies the other one as it is, under a new name.
    r.write("media/legacy.py", &(fetcher(true) + "# v1\n"));
    let copy = r.commit("copy the fetchers");
    let v = prov(&r, &[]);
    let p = &v["provenance"];
    assert_eq!(p["status"], "inherited", "{p:#}");
    assert_eq!(p["baseline"]["path"], "lib/fetcher.py");
    let notes = p["notes"].to_string();
    assert!(
        notes.contains("media/fetcher.py was copied from lib/fetcher.py"),
        "{notes}"
    );
    assert!(notes.contains("% of its lines the same"), "{notes}");
    assert!(notes.contains(&copy[..7]), "{notes}");
    let f = r.finding(
        "legacy.yaml",
        &format!("id: l\ncwe: 918\nfile: media/legacy.py\nfragments:\n  - '{VULN}'\n"),
    );
    let v = r
        .sage(&["provenance", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    let notes = v["provenance"]["notes"].to_string();
    assert!(
        notes.contains("media/legacy.py was copied from lib/fetch_v1.py by write 1"),
        "{notes}"
    );
    assert!(!notes.contains("% of its lines"), "an exact copy: {notes}");
    // An empty file has twins everywhere: it is nobody's copy.
    let f = r.finding(
        "init.yaml",
        "id: init\ncwe: 918\nfile: media/__init__.py\npattern: '^$'\n",
    );
    let run = r.sage(&["provenance", "--finding", &f, "--format", "json"]);
    assert!(!run.stdout.contains("copied from"), "{}", run.stdout);
}

#[test]
fn a_move_of_every_file_costs_one_tree_diff_and_keeps_the_history() {
    let r = Repo::new();
    for i in 0..40 {
        r.write(&format!("pkg/m{i}.py"), &format!("x = {i}\n"));
    }
    r.write("pkg/fetcher.py", &fetcher(false));
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("pkg/fetcher.py", &fetcher(true));
    let w1 = r.commit("the check");
    // Everything moves under src/, and the anchored file is edited in the same commit.
    std::fs::create_dir_all(r.path().join("src")).unwrap();
    r.git(&["mv", "pkg", "src/pkg"]);
    r.write(
        "src/pkg/fetcher.py",
        &fetcher(true).replace("import urllib.request", "import urllib.request  # moved"),
    );
    r.commit("move everything into src/");
    let f = r.finding(
        "moved.yaml",
        &format!("id: m\ncwe: 918\nfile: src/pkg/fetcher.py\nfragments:\n  - '{VULN}'\n"),
    );
    let v = r
        .sage(&["provenance", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    let p = &v["provenance"];
    assert_eq!(p["introducing_write"]["commit"], w1, "{p:#}");
    assert_eq!(p["baseline"]["path"], "pkg/fetcher.py");
    let notes = p["notes"].to_string();
    assert!(
        notes.contains("pkg/fetcher.py was renamed to src/pkg/fetcher.py by write 2"),
        "{notes}"
    );
}
