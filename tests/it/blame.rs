//! `blame-origin`, `demo`, `origin` and `checkpoint` through the real binary; every report
//! format snapshot-tested on the worked example.

use crate::common::{HUMAN, Repo};

#[test]
fn demo_tells_the_expected_story() {
    let r = Repo::new();
    let out = r.sage(&["demo"]).ok().stdout;
    // introduced by the agent's write; origin earlier, in the plan, inadequate defence
    assert!(
        out.contains("PROVENANCE  introduced by the agent's write 2"),
        "{out}"
    );
    assert!(out.contains("at turn 3 (mapped by replay)"), "{out}");
    assert!(
        out.contains("ORIGIN      turn 1 — inadequate defence"),
        "{out}"
    );
    assert!(
        out.contains("we will check that the scheme is https"),
        "{out}"
    );
    // the "tests are green" review turn is a missed opportunity
    let missed = out.lines().find(|l| l.starts_with("MISSED")).unwrap();
    assert!(missed.contains("turn 5 (review"), "{missed}");
    assert!(
        out.contains("Tests are green") || out.contains("the SSRF fix is complete"),
        "{out}"
    );
    // the recommendation names the SSRF defences
    for needle in [
        "resolve the host name",
        "private",
        "loopback",
        "link-local",
        "metadata",
    ] {
        assert!(out.contains(needle), "recommendation lacks {needle}: {out}");
    }
}

/// The demo in Russian and Chinese: the text, Markdown and HTML reports in the language, the
/// JSON byte for byte the English one (codes, not words), the guard's and checkpoint's text too.
#[test]
fn the_demo_speaks_russian_and_chinese() {
    let r = Repo::new();
    let keep = r.path().join("demo");
    let d = keep.to_str().unwrap();
    r.sage(&["demo", "--keep", d, "--format", "json"]).ok();
    let blame = |extra: &[&str]| {
        let mut args = vec![
            "-C",
            d,
            "blame-origin",
            "--finding",
            ".sage/findings/ssrf-preview.yaml",
        ];
        args.extend_from_slice(extra);
        r.sage(&args).ok().stdout
    };
    let json_en = blame(&["--format", "json"]);
    assert!(json_en.contains("offline draft: phrase lists"), "{json_en}");
    for (lang, words, warned) in [
        (
            "ru",
            [
                "ИСТОК",
                "неадекватная защита",
                "Чек-лист защиты для CWE-918",
            ],
            "офлайн-черновик",
        ),
        (
            "zh",
            ["起源", "防御不充分", "CWE-918 的防御检查清单"],
            "离线草稿",
        ),
    ] {
        let demo = r.sage(&["demo", "--lang", lang]).ok().stdout;
        insta::assert_snapshot!(format!("demo_text_{lang}"), demo);
        for w in words {
            assert!(demo.contains(w), "{lang}: {w} not in {demo}");
        }
        let md = blame(&["--lang", lang, "--format", "md"]);
        assert!(md.contains(words[1]), "{md}");
        // Warnings are values, worded in the report's language (issue 45).
        assert!(md.contains(warned), "{md}");
        let html = blame(&["--lang", lang, "--format", "html"]);
        assert!(html.contains(&format!("<html lang=\"{lang}\">")), "{html}");
        assert!(html.contains(words[1]), "{lang}");
        assert!(html.contains(warned), "{lang}");
        // JSON stays the English document, whatever the language.
        assert_eq!(blame(&["--lang", lang, "--format", "json"]), json_en);
        // sage.lang does what --lang does; the flag wins over it.
        r.git(&["-C", d, "config", "sage.lang", lang]);
        assert!(blame(&[]).contains(words[0]));
        assert!(blame(&["--lang", "en"]).contains("ORIGIN"));
        r.git(&["-C", d, "config", "--unset", "sage.lang"]);
        let cp = r
            .sage(&["checkpoint", "--cwe", "918", "--lang", lang])
            .ok()
            .stdout;
        assert!(cp.contains(words[2]), "{cp}");
    }
    r.git(&["-C", d, "config", "sage.lang", "fr"]);
    r.sage(&[
        "-C",
        d,
        "blame-origin",
        "--finding",
        ".sage/findings/ssrf-preview.yaml",
    ])
    .bad_input("sage.lang");
}

#[test]
fn every_report_format_of_the_demo() {
    let r = Repo::new();
    let keep = r.path().join("demo");
    r.sage(&["demo", "--keep", keep.to_str().unwrap(), "--format", "json"])
        .ok();
    let d = keep.to_str().unwrap();
    for (fmt, name) in [
        ("text", "text"),
        ("md", "markdown"),
        ("json", "json"),
        ("html", "html"),
        ("sarif", "sarif"),
    ] {
        let out = r
            .sage(&[
                "-C",
                d,
                "blame-origin",
                "--finding",
                ".sage/findings/ssrf-preview.yaml",
                "--format",
                fmt,
            ])
            .ok()
            .stdout;
        // The version moves with every release: the snapshot keeps only that one is there.
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(
            r#"("name": "git-sage",\s*"version": )"[^"]*""#,
            r#"$1"[version]""#,
        );
        // SARIF's driver (keys sorted: the version comes after the rules) and the HTML's
        // header and footer.
        let version = env!("CARGO_PKG_VERSION").replace('.', r"\.");
        settings.add_filter(
            &format!(r#"("driver": \{{[\s\S]*?"version": )"{version}""#),
            r#"$1"[version]""#,
        );
        settings.add_filter(&format!("git sage {version}"), "git sage [version]");
        settings.bind(|| insta::assert_snapshot!(format!("demo_{name}"), out));
    }
    // JSON follows the contract
    let v = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--finding",
            ".sage/findings/ssrf-preview.yaml",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["schema"], "sage.report/1");
    assert_eq!(v["provenance"]["status"], "introduced");
    assert_eq!(v["provenance"]["introducing_write"]["turn"], 3);
    assert_eq!(v["origin"]["status"], "localized");
    assert_eq!(v["origin"]["turn"], 1);
    assert_eq!(v["origin"]["type"], "inadequate_defence");
    assert!(
        v["missed_opportunities"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["turn"] == 5 && m["kind"] == "review")
    );
    assert_eq!(v["judge"]["name"], "offline");
    // --out and --fail-on
    let out = keep.join("r.sarif");
    let run = r.sage(&[
        "-C",
        d,
        "blame-origin",
        "--finding",
        ".sage/findings/ssrf-preview.yaml",
        "--format",
        "sarif",
        "--out",
        out.to_str().unwrap(),
        "--fail-on",
        "origin",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.is_empty());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        9
    );
    assert_eq!(
        r.sage(&[
            "-C",
            d,
            "blame-origin",
            "--finding",
            ".sage/findings/ssrf-preview.yaml",
            "--fail-on",
            "introduced"
        ])
        .code,
        1
    );
    // the rule again, from saved results, with other levers
    let prov = keep.join("prov.json");
    let scores = keep.join("scores.json");
    std::fs::write(
        &prov,
        r.sage(&[
            "-C",
            d,
            "provenance",
            "--finding",
            ".sage/findings/ssrf-preview.yaml",
            "--format",
            "json",
        ])
        .ok()
        .stdout,
    )
    .unwrap();
    r.sage(&[
        "-C",
        d,
        "judge",
        "HEAD:.sage/sessions/fix-ssrf.yaml",
        "--out",
        scores.to_str().unwrap(),
        "-q",
    ])
    .ok();
    let o = r
        .sage(&[
            "origin",
            "--scores",
            scores.to_str().unwrap(),
            "--provenance",
            prov.to_str().unwrap(),
            "--format",
            "json",
            "--two-types",
            "--vr-max",
            "0",
            "--sa-max",
            "0",
        ])
        .ok()
        .json();
    assert_eq!(o["origin"]["turn"], 1);
    assert_eq!(o["origin"]["type"], "noticed_chose_poorly");
    r.sage(&[
        "origin",
        "--scores",
        prov.to_str().unwrap(),
        "--provenance",
        prov.to_str().unwrap(),
    ])
    .bad_input("not a sage.scores/1 file");
}

#[test]
fn transcripts_cannot_inject_html() {
    let r = Repo::new();
    r.write("app.py", "def f(url):\n    return get(url)\n");
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("app.py", "def f(url):\n    if not url.startswith(\"https://\"): raise ValueError\n    return get(url)\n");
    r.write(
        ".sage/sessions/s.yaml",
        "task: fix the <b>SSRF</b>\nturns:\n  - text: \"<script>alert('x')</script> We will check the scheme is https. <img src=x onerror=alert(1)>\"\n    kind: planning\n",
    );
    r.commit("fix");
    let f = r.finding(
        "a.yaml",
        "id: x\ncwe: 918\nfile: app.py\nfragment: 'if not url.startswith(\"https://\"):'\n",
    );
    for fmt in ["html", "md"] {
        let out = r
            .sage(&["blame-origin", "--finding", &f, "--format", fmt])
            .ok()
            .stdout;
        if fmt == "md" {
            // Markdown shows transcript text in code spans, where nothing is markup: the
            // text is there verbatim, and what is outside the spans holds no tag.
            let parts: Vec<&str> = out.split('`').collect();
            let outside: String = parts.iter().step_by(2).copied().collect();
            let inside: String = parts.iter().skip(1).step_by(2).copied().collect();
            assert!(
                !outside.contains("<script") && !outside.contains("<img"),
                "{out}"
            );
            assert!(inside.contains("<script>alert('x')</script>"), "{out}");
            continue;
        }
        assert!(!out.contains("<script>alert"), "{fmt}: {out}");
        assert!(!out.contains("<img src=x"), "{fmt}: {out}");
        assert!(out.contains("&lt;script"), "{fmt}: {out}");
    }
}

#[test]
fn no_session_and_a_session_of_another_range() {
    let r = Repo::new();
    r.write("app.py", "def f(url):\n    return get(url)\n");
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("app.py", "def f(url):\n    if not url.startswith(\"https://\"): raise ValueError\n    return get(url)\n");
    r.commit("fix");
    let f = r.finding(
        "a.yaml",
        "file: app.py\nfragment: 'if not url.startswith(\"https://\"):'\n",
    );
    let v = r
        .sage(&["blame-origin", "--finding", &f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(
        v["provenance"]["status"], "introduced",
        "provenance is still reported"
    );
    assert_eq!(v["origin"]["status"], "undetermined");
    assert_eq!(v["origin"]["reason"], "no_session");
    assert!(
        v["warnings"]
            .to_string()
            .contains("no session transcript found")
    );
    // a session whose edits belong elsewhere: nothing maps, and the report says so
    let other = r.path().join("other.yaml");
    std::fs::write(&other, "task: fix the xss in the comments page\nturns:\n  - text: Escaping the comment body.\n    file_changes:\n      - {path: web/comments.py, old: a, new: b}\n").unwrap();
    let v = r
        .sage(&[
            "blame-origin",
            "--finding",
            &f,
            "--session",
            other.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert!(
        v["warnings"]
            .to_string()
            .contains("no write of the range maps to a turn"),
        "{}",
        v["warnings"]
    );
    assert!(v["provenance"]["writes"][0]["turn"].is_null());
    // a finding on a file outside the range's files is still judged on provenance
    r.write("README.md", "x\n");
    r.git(&["checkout", "-q", "main"]);
    r.git(&["checkout", "-q", "agent"]);
    let g = r.finding("b.yaml", "file: nowhere.py\nfragment: x\n");
    r.sage(&["blame-origin", "--finding", &g])
        .bad_input("nowhere.py is not in the repository");
    r.sage(&[
        "blame-origin",
        "--finding",
        &f,
        "--session",
        "/no/such.yaml",
    ])
    .bad_input("cannot read session /no/such.yaml");
}

#[test]
fn checkpoint_block_in_agents_md() {
    let r = Repo::new();
    let printed = r.sage(&["checkpoint", "--cwe", "918"]).ok().stdout;
    assert!(
        printed.contains("## Security plan") && printed.contains("Defence checklist for CWE-918")
    );
    std::fs::write(r.path().join("AGENTS.md"), "# Agents\n\nUse tabs.\n").unwrap();
    r.sage(&["checkpoint", "--agent-file", "AGENTS.md"]).ok();
    let once = std::fs::read_to_string(r.path().join("AGENTS.md")).unwrap();
    assert!(once.starts_with("# Agents\n\nUse tabs.\n") && once.contains("## Security plan"));
    let run = r.sage(&["checkpoint", "--agent-file", "AGENTS.md"]).ok();
    assert!(run.stderr.contains("already up to date"));
    assert_eq!(
        std::fs::read_to_string(r.path().join("AGENTS.md")).unwrap(),
        once
    );
    r.sage(&["checkpoint", "--agent-file", "AGENTS.md", "--remove"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(r.path().join("AGENTS.md")).unwrap(),
        "# Agents\n\nUse tabs.\n"
    );
    // A file the checkpoint created goes away with the block; one the user then wrote in stays.
    r.sage(&["checkpoint", "--agent-file", "CLAUDE.md", "--cwe", "918"])
        .ok();
    let made = std::fs::read_to_string(r.path().join("CLAUDE.md")).unwrap();
    assert!(made.contains("## Security plan"), "{made}");
    r.sage(&["checkpoint", "--agent-file", "CLAUDE.md", "--remove"])
        .ok();
    assert!(!r.path().join("CLAUDE.md").exists());
    r.sage(&["checkpoint", "--agent-file", "CLAUDE.md"]).ok();
    let made = std::fs::read_to_string(r.path().join("CLAUDE.md")).unwrap();
    std::fs::write(r.path().join("CLAUDE.md"), format!("{made}\nMine.\n")).unwrap();
    r.sage(&["checkpoint", "--agent-file", "CLAUDE.md", "--remove"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(r.path().join("CLAUDE.md")).unwrap(),
        "\nMine.\n"
    );
    let none = r
        .sage(&["checkpoint", "--agent-file", "GEMINI.md", "--remove"])
        .ok();
    assert!(none.stderr.contains("nothing to remove"), "{none:?}");
    assert!(!r.path().join("GEMINI.md").exists());
}

#[test]
fn find_anchor_with_bandit_or_a_clear_message() {
    let r = Repo::new();
    r.write(
        "loader.py",
        "import json\n\ndef load(path):\n    return json.load(open(path))\n",
    );
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("loader.py", "import yaml\n\ndef load(path):\n    with open(path) as f:\n        return yaml.load(f, Loader=yaml.Loader)\n");
    r.commit("switch to yaml");
    let bandit = std::process::Command::new("python3")
        .args(["-m", "bandit", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
        || std::process::Command::new("bandit")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    let run = r.sage(&[
        "blame-origin",
        "--find-anchor",
        "bandit",
        "--format",
        "json",
    ]);
    if !bandit {
        assert_eq!(run.code, 3, "{run:?}");
        assert!(
            run.stderr.contains("bandit is not installed"),
            "{}",
            run.stderr
        );
        crate::common::skip("bandit is not installed; checked the message instead");
        return;
    }
    let v = run.ok().json();
    assert_eq!(v["unconfirmed"], true);
    assert_eq!(v["finding"]["file"], "loader.py");
    assert!(
        v["finding"]["id"]
            .as_str()
            .unwrap()
            .starts_with("unconfirmed:B506"),
        "{}",
        v["finding"]["id"]
    );
    assert_eq!(v["provenance"]["status"], "introduced");
    assert!(v["warnings"].to_string().contains("unconfirmed"));
    let text = r
        .sage(&["blame-origin", "--find-anchor", "bandit"])
        .ok()
        .stdout;
    assert!(text.contains("UNCONFIRMED"), "{text}");
}

/// A long session: the missed opportunities that touched the anchored code come first, a long
/// list is cut with the count of the rest, and the JSON keeps every one.
#[test]
fn missed_opportunities_most_relevant_first() {
    let r = Repo::new();
    let d = r.demo();
    let mut yaml = String::from(
        "schema: sage.session/1\nagent: cursor\ntask: Fix the SSRF in media/fetcher.py\nturns:\n  - kind: planning\n    text: \"Plan: we will check that the scheme is https before downloading.\"\n",
    );
    for i in 2..=11 {
        yaml.push_str(&format!(
            "  - text: Updating docs/page{i}.md.\n    file_changes:\n      - {{path: docs/page{i}.md, content: \"x\\n\"}}\n"
        ));
    }
    yaml.push_str("  - text: Adjusting the download.\n    file_changes:\n      - {path: media/fetcher.py, old: \"a\", new: \"b\"}\n");
    let s = r.home().join("long.yaml");
    std::fs::write(&s, yaml).unwrap();
    let ss = s.to_str().unwrap();
    let text = r.blame_demo(&d, &["--session", ss]).ok().stdout;
    let missed = text.lines().find(|l| l.starts_with("MISSED")).unwrap();
    assert!(
        missed.starts_with(
            "MISSED      turn 12 (implementation, VR 0, SA 0, touched the anchored code); turn 2 "
        ),
        "{missed}"
    );
    assert!(
        missed.ends_with("and 5 more (--format json lists them all)"),
        "{missed}"
    );
    let v = r
        .blame_demo(&d, &["--session", ss, "--format", "json"])
        .ok()
        .json();
    let all = v["missed_opportunities"].as_array().unwrap();
    assert_eq!(all.len(), 11);
    assert_eq!(all[10]["turn"], 12);
    assert_eq!(all[10]["touches_anchor"], true);
}

/// A `command:` judge that gives every turn the same scores, with `di_quote` as the quote of a
/// DI of 2 on turn `di_turn` (none when 0).
fn fixed_judge(r: &Repo, name: &str, di_turn: u32, di_quote: &str) -> String {
    let script = r.home().join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nturn=$(grep -o 'Score turn [0-9]*' | head -1 | tr -dc 0-9)\nif [ \"$turn\" = \"{di_turn}\" ]; then di=2; q='\"{di_quote}\"'; else di=0; q=null; fi\nprintf '{{\"turn\": %s, \"applicable\": true, \"opportunity\": true, \"kind\": \"planning\", \"scores\": {{\"tr\":0,\"di\":%s,\"vr\":0,\"sa\":0}}, \"quotes\": {{\"tr\":null,\"di\":%s,\"vr\":null,\"sa\":null}}}}\\n' \"$turn\" \"$di\" \"$q\"\n"
        ),
    )
    .unwrap();
    format!("command:sh {}", script.display())
}

/// Every verdict says how firm it is. The offline judge's verdict on the demo is firm. A judge
/// that reports no confidence has every one-step change weighed: its silent plan turn is a
/// close call, and `--confirm-with` re-scores exactly the turns the call depends on, whose
/// answers then stand — in text, Markdown, HTML and JSON.
#[test]
fn a_close_call_names_the_change_that_would_move_it() {
    let r = Repo::new();
    let d = r.demo();
    let v = r.blame_demo(&d, &["--format", "json"]).ok().json();
    assert_eq!(v["origin"]["margin"]["firm"], true, "{}", v["origin"]);
    let silent = fixed_judge(&r, "silent", 0, "");
    let base = ["--judge", silent.as_str(), "--no-cache"];
    let v = r
        .blame_demo(&d, &[&base[..], &["--format", "json"]].concat())
        .ok()
        .json();
    let o = &v["origin"];
    assert_eq!(
        (o["turn"].as_u64(), o["type"].as_str()),
        (Some(1), Some("unaddressed_requirement")),
        "{o}"
    );
    let m = &o["margin"];
    assert_eq!(m["firm"], false, "{m}");
    let flip = &m["flips"][0];
    assert_eq!(
        (
            &flip["turn"],
            &flip["what"],
            &flip["dim"],
            &flip["from"],
            &flip["to"]
        ),
        (
            &1.into(),
            &"score".into(),
            &"tr".into(),
            &0.into(),
            &1.into()
        ),
        "{m}"
    );
    assert_eq!(
        (&flip["origin_turn"], &flip["type"]),
        (&2.into(), &"unaddressed_requirement".into())
    );
    let text = r.blame_demo(&d, &base).ok().stdout;
    assert!(
        text.contains(
            "close call: if turn 1's TR were 1, the origin would be turn 2 (unaddressed requirement)"
        ),
        "{text}"
    );
    for (format, needle) in [
        ("md", "close call: if turn 1"),
        ("html", "<p class=\"margin close\">close call: if turn 1"),
    ] {
        let out = r
            .blame_demo(&d, &[&base[..], &["--format", format]].concat())
            .ok()
            .stdout;
        assert!(out.contains(needle), "{format}: {out}");
    }
    // A confirming judge that reads a defence in the plan: only the turns the call depends on
    // are asked, and its answer moves the verdict.
    let confirm = fixed_judge(
        &r,
        "confirm",
        1,
        "we will check that the scheme is https before downloading",
    );
    let with = [&base[..], &["--confirm-with", confirm.as_str()]].concat();
    let v = r
        .blame_demo(&d, &[&with[..], &["--format", "json"]].concat())
        .ok()
        .json();
    let c = &v["confirmation"];
    assert_eq!(c["changed"], true, "{c}");
    assert_eq!(c["before_turn"], 1);
    assert_eq!(c["before_type"], "unaddressed_requirement");
    assert!(
        c["judge"]["name"].as_str().unwrap().starts_with("command:"),
        "{c}"
    );
    let asked: Vec<u64> = c["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    assert!(asked.contains(&1), "{asked:?}");
    assert!(
        asked.len() < 6,
        "only the turns the call depends on: {asked:?}"
    );
    assert!(
        u64::try_from(asked.len()).unwrap() >= c["judge"]["calls"].as_u64().unwrap(),
        "{c}"
    );
    assert_eq!(
        (v["origin"]["turn"].as_u64(), v["origin"]["type"].as_str()),
        (Some(1), Some("inadequate_defence"))
    );
    assert_eq!(v["turns"][0]["scores"]["di"], 2);
    let text = r.blame_demo(&d, &with).ok().stdout;
    assert!(
        text.contains("re-scored by command:sh ")
            && text.contains("before, it was turn 1 (unaddressed requirement)"),
        "{text}"
    );
}
