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

/// A history of `commits` commits written at once through `git fast-import`: a module edited
/// line by line, notes, a session under `.sage/sessions/` halfway, a merged side branch.
fn imported(commits: usize) -> Repo {
    let r = Repo::new();
    let mut stream = String::new();
    let mut body: Vec<String> = (0..200)
        .map(|i| format!("line {i} of the module"))
        .collect();
    let data = |s: &mut String, text: &str| {
        s.push_str(&format!("data {}\n{text}\n", text.len()));
    };
    for c in 0..commits {
        body[c % 200] = format!("line {} edited in commit {c}", c % 200);
        let when = 1_700_000_000 + c * 60;
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{}\nauthor A <a@x> {when} +0000\ncommitter A <a@x> {when} +0000\n",
            c + 1
        ));
        data(&mut stream, &format!("commit {c}"));
        if c > 0 {
            stream.push_str(&format!("from :{c}\n"));
        }
        stream.push_str("M 100644 inline src/mod.py\n");
        data(&mut stream, &(body.join("\n") + "\n"));
        stream.push_str(&format!("M 100644 inline notes/n{}.txt\n", c % 7));
        data(&mut stream, &format!("{c}\n"));
        if c == commits / 2 {
            stream.push_str("M 100644 inline .sage/sessions/fix.yaml\n");
            data(
                &mut stream,
                "schema: sage.session/1\ntask: keep the module tidy\nturns:\n  - text: \"Plan: edit the module line by line.\"\n  - text: \"Done; tests pass.\"\n",
            );
        }
    }
    let mut import = r.command("git", r.path());
    import.args(["fast-import", "--quiet"]);
    let out = crate::common::feed(import, stream.as_bytes());
    assert!(out.status.success(), "{out:?}");
    r.git(&["reset", "-q", "--hard", "main"]);
    r
}

/// blame-origin discovering the session, as JSON text: the whole report must agree.
fn blame_json(r: &Repo, dir: &std::path::Path, base: &str) -> crate::common::Run {
    let f = r.finding(
        "a.yaml",
        "file: src/mod.py\ncwe: 918\nfragment: 'line 150 edited in commit 550'\n",
    );
    r.sage_in(
        dir,
        &[
            "blame-origin",
            "--finding",
            &f,
            "--base",
            base,
            "--format",
            "json",
        ],
    )
}

fn remove_graphs(dir: &std::path::Path) {
    let info = dir.join("objects/info");
    std::fs::remove_file(info.join("commit-graph")).ok();
    std::fs::remove_dir_all(info.join("commit-graphs")).ok();
}

/// Bad input for issue 48: a commit-graph of every shape git writes (filters or none, version
/// 1 filters as older git wrote them, a split chain under newer commits, one gone stale) and
/// one damaged give the answer the objects give; a shallow clone deep enough for the range
/// gives the full clone's answer; a partial clone says in one line what it lacks.
#[test]
fn every_shape_of_commit_graph_and_clone_gives_the_objects_answer() {
    let r = imported(700);
    let git_dir = r.path().join(".git");
    let base = r.git(&["rev-list", "--max-parents=0", "HEAD"]);
    let plain = blame_json(&r, r.path(), &base).ok().stdout;
    let v: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(v["provenance"]["status"], "introduced", "{v:#}");
    assert!(
        v["session"]["found_by"]
            .to_string()
            .contains(".sage/sessions"),
        "{v:#}"
    );
    let shapes: [&[&str]; 4] = [
        &["commit-graph", "write", "--reachable", "--changed-paths"],
        &[
            "-c",
            "commitGraph.changedPathsVersion=1",
            "commit-graph",
            "write",
            "--reachable",
            "--changed-paths",
        ],
        &["commit-graph", "write", "--reachable"],
        &[
            "commit-graph",
            "write",
            "--reachable",
            "--split",
            "--changed-paths",
        ],
    ];
    for shape in shapes {
        remove_graphs(&git_dir);
        r.git(shape);
        assert_eq!(
            blame_json(&r, r.path(), &base).ok().stdout,
            plain,
            "{shape:?}"
        );
    }
    // A split chain with a layer on top, and commits newer than every layer.
    for c in 0..3 {
        r.write("later.txt", &format!("{c}\n"));
        r.commit(&format!("later {c}"));
        r.git(&[
            "commit-graph",
            "write",
            "--reachable",
            "--split=no-merge",
            "--changed-paths",
        ]);
    }
    r.write("later.txt", "in no graph\n");
    r.commit("newest");
    let layered = blame_json(&r, r.path(), &base).ok().stdout;
    remove_graphs(&git_dir);
    let objects = blame_json(&r, r.path(), &base).ok().stdout;
    assert_eq!(layered, objects, "a split chain under newer commits");
    // A damaged graph: its filters cut short, then its bytes scrambled past the header.
    r.git(&["commit-graph", "write", "--reachable", "--changed-paths"]);
    let graph = git_dir.join("objects/info/commit-graph");
    let mut bytes = std::fs::read(&graph).unwrap();
    let half = bytes.len() / 2;
    for b in &mut bytes[half..half + 64] {
        *b ^= 0x5a;
    }
    let mut perms = std::fs::metadata(&graph).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&graph, perms).unwrap();
    std::fs::write(&graph, &bytes).unwrap();
    let damaged = blame_json(&r, r.path(), &base);
    if damaged.code == 0 {
        assert_eq!(damaged.stdout, objects, "a scrambled graph");
    } else {
        damaged.bad_input("commit-graph");
    }
    crate::common::cut_in_half(&graph);
    let cut = blame_json(&r, r.path(), &base);
    if cut.code == 0 {
        assert_eq!(cut.stdout, objects, "a graph cut short");
    } else {
        cut.bad_input("commit-graph");
    }
    remove_graphs(&git_dir);
    // A shallow clone holding the range answers as the full one does.
    let near = r.git(&["rev-parse", "HEAD~300"]);
    let full = blame_json(&r, r.path(), near.trim()).ok().json();
    let shallow = tempfile::tempdir().unwrap();
    let url = format!("file://{}", r.path().display());
    r.git(&[
        "clone",
        "-q",
        "--depth",
        "400",
        &url,
        &shallow.path().display().to_string(),
    ]);
    let v = blame_json(&r, shallow.path(), near.trim()).ok().json();
    for key in ["provenance", "session", "origin", "turns"] {
        assert_eq!(v[key], full[key], "{key} in a shallow clone");
    }
    // A partial clone lacks the old blobs, which git would fetch on demand: one line saying
    // so and how to get them, not a wrong answer.
    r.git(&["config", "uploadpack.allowFilter", "true"]);
    let partial = tempfile::tempdir().unwrap();
    r.git(&[
        "clone",
        "-q",
        "--filter=blob:none",
        &url,
        &partial.path().display().to_string(),
    ]);
    let run = blame_json(&r, partial.path(), &base);
    assert_eq!(run.code, 3, "{run:#?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("is missing") && run.stderr.contains("partial clone"),
        "{}",
        run.stderr
    );
}
