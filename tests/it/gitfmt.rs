//! Our readers of git's own files (packs, commit-graph) against git itself.

use std::io::Write;
use std::process::{Command, Stdio};

use sage::git::pack::{PackReader, Packs};

use crate::common::Repo;

/// A repository whose history deltifies well: one file edited line by line, a tree that
/// changes every commit, and enough commits for the commit-graph path to engage.
fn history(commits: usize) -> Repo {
    let r = Repo::new();
    let mut body: Vec<String> = (0..200)
        .map(|i| format!("line {i} of the module"))
        .collect();
    for c in 0..commits {
        body[c % 200] = format!("line {} edited in commit {c}", c % 200);
        r.write("src/mod.py", &(body.join("\n") + "\n"));
        r.write(&format!("notes/n{}.txt", c % 7), &format!("{c}\n"));
        r.commit(&format!("commit {c}"));
    }
    r
}

/// Every object git knows, with its type and bytes, from `git cat-file --batch`.
fn all_objects(r: &Repo) -> Vec<(String, String, Vec<u8>)> {
    let list = r.git(&[
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname)",
    ]);
    let ids: Vec<&str> = list.lines().collect();
    let mut child = Command::new("git")
        .current_dir(r.path())
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let joined = ids.join("\n") + "\n";
    let writer = std::thread::spawn(move || input.write_all(joined.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap().stdout;
    writer.join().unwrap();
    let mut objects = Vec::new();
    let mut pos = 0;
    while pos < out.len() {
        let nl = pos + out[pos..].iter().position(|&b| b == b'\n').unwrap();
        let header = String::from_utf8_lossy(&out[pos..nl]).into_owned();
        let parts: Vec<&str> = header.split(' ').collect();
        let size: usize = parts[2].parse().unwrap();
        let body = out[nl + 1..nl + 1 + size].to_vec();
        objects.push((parts[0].to_string(), parts[1].to_string(), body));
        pos = nl + 1 + size + 1;
    }
    objects
}

fn check_every_object_reads_back(r: &Repo) {
    let packs = Packs::open(&r.path().join(".git/objects"));
    let mut reader = PackReader::new(packs);
    let objects = all_objects(r);
    assert!(objects.len() > 100);
    let mut deltas_seen = 0;
    for (id, kind, body) in &objects {
        let raw: Vec<u8> = (0..20)
            .map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let (k, data) = reader
            .read(&raw)
            .unwrap_or_else(|| panic!("{id} ({kind}) not read from the pack"));
        assert_eq!(format!("{k:?}").to_lowercase(), *kind, "{id}");
        assert_eq!(&data[..], &body[..], "{id} ({kind}) differs");
        deltas_seen += 1;
    }
    assert_eq!(deltas_seen, objects.len());
}

#[test]
fn pack_reader_matches_git_with_offset_deltas() {
    let r = history(60);
    r.git(&["gc", "-q", "--aggressive"]);
    let verify = r.git(&["verify-pack", "-v", &glob_idx(&r)]);
    assert!(
        verify.contains("chain length"),
        "no deltas in the test pack: {verify}"
    );
    check_every_object_reads_back(&r);
}

#[test]
fn pack_reader_matches_git_with_ref_deltas() {
    let r = history(40);
    r.git(&[
        "-c",
        "repack.useDeltaBaseOffset=false",
        "repack",
        "-a",
        "-d",
        "-q",
        "-f",
    ]);
    check_every_object_reads_back(&r);
}

fn glob_idx(r: &Repo) -> String {
    let dir = r.path().join(".git/objects/pack");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn provenance_json(r: &Repo) -> String {
    let f = r.finding(
        "a.yaml",
        "file: src/mod.py\nfragment: 'line 150 edited in commit 150'\n",
    );
    let base = r.git(&["rev-list", "--max-parents=0", "HEAD"]);
    let out = r
        .sage(&[
            "provenance",
            "--finding",
            &f,
            "--base",
            &base,
            "--format",
            "json",
            "--all-writes",
        ])
        .ok();
    out.stdout
}

#[test]
fn commit_graph_walks_agree_with_object_walks() {
    let r = history(220);
    let plain = provenance_json(&r);
    let v: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(v["provenance"]["status"], "introduced");
    assert_eq!(v["provenance"]["writes"].as_array().unwrap().len(), 219);
    // one graph file
    r.git(&["commit-graph", "write", "--reachable"]);
    assert!(r.path().join(".git/objects/info/commit-graph").exists());
    assert_eq!(provenance_json(&r), plain);
    // packed objects plus a graph
    r.git(&["gc", "-q"]);
    assert_eq!(provenance_json(&r), plain);
    // a split chain of graphs, with commits newer than the graph on top
    std::fs::remove_file(r.path().join(".git/objects/info/commit-graph")).ok();
    r.git(&["commit-graph", "write", "--reachable", "--split"]);
    for c in 0..3 {
        r.write("later.txt", &format!("{c}\n"));
        r.commit(&format!("later {c}"));
    }
    r.git(&["commit-graph", "write", "--reachable", "--split=no-merge"]);
    r.write("later.txt", "not in any graph\n");
    r.commit("newest");
    let v: serde_json::Value = serde_json::from_str(&provenance_json(&r)).unwrap();
    assert_eq!(v["provenance"]["writes"].as_array().unwrap().len(), 223);
    let w: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(
        v["provenance"]["introducing_write"],
        w["provenance"]["introducing_write"]
    );
}
