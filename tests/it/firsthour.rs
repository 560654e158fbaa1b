//! A new user's first hour: the finding the repository keeps is used, a missing one says what
//! is there, and the user's word on a finding wins over the scanner's; and the list of issue 44
//! (licence files, settings that name nothing, what `--out` and the hooks say).

use crate::common::{DEMO_FINDING, Repo};

/// A SARIF result on the demo's `startswith` line, whose rule says CWE-22 (as Bandit's B310
/// does for urlopen).
fn b310_sarif() -> String {
    r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Bandit","rules":[{"id":"B310","properties":{"tags":["external/cwe/cwe-22"]}}]}},
      "results":[{"ruleId":"B310","message":{"text":"Audit url open for permitted schemes."},
      "locations":[{"physicalLocation":{"artifactLocation":{"uri":"media/fetcher.py"},"region":{"startLine":9}}}]}]}]}"#
        .to_string()
}

#[test]
fn blame_origin_takes_the_only_finding_the_repository_keeps() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let run = r.sage(&["-C", d, "blame-origin", "--format", "json"]).ok();
    assert_eq!(run.json()["finding"]["id"], "ssrf-preview");
    assert!(
        run.stderr.contains(DEMO_FINDING),
        "says which finding it took: {}",
        run.stderr
    );
    // provenance follows the same rule.
    let p = r.sage(&["-C", d, "provenance", "--format", "json"]).ok();
    assert_eq!(p.json()["finding"]["id"], "ssrf-preview");

    // Two kept findings: the user picks, and is told which there are.
    std::fs::write(dir.join(".sage/findings/b310.sarif"), b310_sarif()).unwrap();
    let run = r.sage(&["-C", d, "blame-origin"]).bad_input("keeps 2");
    assert!(run.stderr.contains("b310.sarif") && run.stderr.contains("ssrf-preview.yaml"));
    assert!(run.stderr.contains("--finding"), "{}", run.stderr);
}

#[test]
fn a_missing_finding_file_says_what_is_there() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let run = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--finding",
            ".sage/findings/ssrf.yaml",
        ])
        .bad_input("cannot read finding .sage/findings/ssrf.yaml: no such file");
    assert!(
        run.stderr
            .contains(".sage/findings holds: ssrf-preview.yaml"),
        "{}",
        run.stderr
    );
    r.sage(&["-C", d, "blame-origin", "--finding", "nowhere/f.yaml"])
        .bad_input("there is no folder nowhere");
    let none = Repo::new();
    none.write("a.py", "x = 1\n");
    none.commit("a");
    none.sage(&["provenance"])
        .bad_input("no finding given, and none kept in the repository");
}

#[test]
fn the_users_cwe_wins_over_the_scanners_and_both_are_shown() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let sarif = dir.join("b310.sarif");
    std::fs::write(&sarif, b310_sarif()).unwrap();
    let f = sarif.to_str().unwrap();

    // The scanner alone, an unconfirmed claim: Bandit files urlopen under CWE-22, the task is
    // an SSRF fix — the task's CWE is used, the scanner's kept as said (issue 43).
    let v = r
        .sage(&["-C", d, "blame-origin", "--finding", f, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["unconfirmed"], true);
    assert_eq!(v["finding"]["cwe"], 918);
    assert_eq!(v["finding"]["source"]["said"]["cwe"], 22);
    assert!(
        v["warnings"]
            .to_string()
            .contains("the task is about CWE-918"),
        "{}",
        v["warnings"]
    );
    // Kept among the repository's findings, it is confirmed: the scanner's CWE stands.
    std::fs::copy(&sarif, dir.join(".sage/findings/b310.sarif")).unwrap();
    let v = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--finding",
            ".sage/findings/b310.sarif",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert!(v.get("unconfirmed").is_none_or(|u| u == false), "{v}");
    assert_eq!(v["finding"]["cwe"], 22);
    assert!(v["finding"]["source"].get("said").is_none());
    std::fs::remove_file(dir.join(".sage/findings/b310.sarif")).unwrap();

    // The user's word: CWE-918 everywhere, the scanner's kept beside it.
    let base = [
        "-C",
        d,
        "blame-origin",
        "--finding",
        f,
        "--cwe",
        "918",
        "--class",
        "insufficient_defence",
        "--id",
        "ssrf-b310",
        "--description",
        "reaches internal hosts",
    ];
    let json = r
        .sage(&[&base[..], &["--format", "json"]].concat())
        .ok()
        .json();
    assert_eq!(json["finding"]["cwe"], 918);
    assert_eq!(json["finding"]["id"], "ssrf-b310");
    assert_eq!(json["finding"]["class"], "insufficient_defence");
    assert_eq!(json["finding"]["description"], "reaches internal hosts");
    assert_eq!(json["finding"]["source"]["said"]["cwe"], 22);
    assert_eq!(
        json["finding"]["source"]["said"]["id"],
        "B310:media/fetcher.py:9"
    );
    assert_eq!(
        json["finding"]["source"]["said"]["description"],
        "Audit url open for permitted schemes."
    );
    let text = r.sage(&base).ok().stdout;
    assert!(
        text.contains("CWE-918 (given; Bandit said CWE-22)"),
        "{text}"
    );
    assert!(text.contains("Defence checklist for CWE-918"), "{text}");
    let md = r
        .sage(&[&base[..], &["--format", "md"]].concat())
        .ok()
        .stdout;
    assert!(md.contains("CWE-918 (given; Bandit said CWE-22)"), "{md}");

    // The same word with the same value as the scanner's records nothing.
    let v = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--finding",
            f,
            "--cwe",
            "22",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert!(v["finding"]["source"].get("said").is_none(), "{v}");
    // A bad word is bad input, named.
    r.sage(&["-C", d, "blame-origin", "--finding", f, "--cwe", "ssrf"])
        .bad_input("--cwe ssrf");
}

#[test]
fn a_bad_judge_setting_is_named_as_the_setting() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    r.git(&["-C", d, "config", "sage.judge", "bogus"]);
    r.sage(&["-C", d, "blame-origin"])
        .bad_input("git config sage.judge = bogus: unknown judge");
    // A flag still wins over the broken setting, and is named as the flag when it is bad.
    r.sage(&["-C", d, "blame-origin", "--judge", "offline"])
        .ok();
    r.sage(&["-C", d, "blame-origin", "--judge", "nope"])
        .bad_input("--judge nope: unknown judge");
}

#[test]
fn the_report_shows_the_task_the_judge_was_given() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let own = r
        .sage(&["-C", d, "blame-origin", "--format", "json"])
        .ok()
        .json();
    let opened = own["session"]["scope"]["task"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!opened.is_empty());
    let given = "Block requests to internal hosts";
    let v = r
        .sage(&["-C", d, "blame-origin", "--task", given, "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["session"]["scope"]["task"], given);
    r.git(&["-C", d, "config", "sage.task", "From the setting"]);
    let v = r
        .sage(&["-C", d, "blame-origin", "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["session"]["scope"]["task"], "From the setting");
    let s = r
        .sage(&[
            "-C",
            d,
            "judge",
            ".sage/sessions/fix-ssrf.yaml",
            "--task",
            given,
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(s["scope"]["task"], given);
}

/// Issue 44 (1): Cargo.toml's `license` names the texts that ship beside it, and README says so.
#[test]
fn the_declared_licences_ship() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("license = \"MIT OR Apache-2.0\""),
        "Cargo.toml's licence changed: update the files and this test"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for (file, first, names) in [
        (
            "LICENSE-MIT",
            "MIT License",
            "Copyright (c) the git-sage contributors",
        ),
        (
            "LICENSE-APACHE",
            "Apache License",
            "END OF TERMS AND CONDITIONS",
        ),
    ] {
        let text =
            std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            text.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" "),
            first
        );
        assert!(text.contains(names), "{file} lacks {names:?}");
        assert!(
            readme.contains(&format!("]({file})")),
            "README does not link {file}"
        );
    }
}

/// Issue 44 (2): a templates folder that is not there was ignored without a word
/// (`screen --check-tables --templates my-tables` said "0 did not hold"). Every command that
/// takes `--templates` or reads `sage.templates` now says so, as bad input naming it.
#[test]
fn a_templates_folder_that_is_not_there_is_named() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    std::fs::write(dir.join("a-file"), "x\n").unwrap();
    let session = ".sage/sessions/fix-ssrf.yaml";
    let manifest = dir.join("corpus.yaml");
    std::fs::write(
        &manifest,
        format!("cases:\n  - {{id: demo, repo: {d}, finding: {DEMO_FINDING}}}\n"),
    )
    .unwrap();
    let m = manifest.to_str().unwrap();
    let commands: [&[&str]; 6] = [
        &["screen", "--check-tables"],
        &["screen"],
        &["blame-origin"],
        &["judge", session],
        &["checkpoint", "--cwe", "918"],
        &["batch", m, "--results", "out.jsonl"],
    ];
    for args in commands {
        for (folder, says) in [
            (
                "my-tables",
                "--templates my-tables: there is no such folder",
            ),
            ("a-file", "--templates a-file: is not a folder"),
        ] {
            let run = r.sage(&[&["-C", d][..], args, &["--templates", folder]].concat());
            run.bad_input(says);
        }
    }
    // The setting, relative to the working tree's top, in every command that reads it (and
    // in `git sage config`: tests/it/gitint.rs).
    r.git(&["-C", d, "config", "sage.templates", "my-tables"]);
    for args in commands {
        r.sage(&[&["-C", d][..], args].concat())
            .bad_input("git config sage.templates = my-tables: there is no such folder");
    }
    r.sage(&["-C", d, "config"])
        .bad_input("sage.templates = my-tables");
    // A folder that is there is used, from any directory of the working tree.
    std::fs::create_dir_all(dir.join("my-tables")).unwrap();
    r.sage(&["-C", d, "screen", "--check-tables"]).ok();
    r.sage(&["-C", dir.join("media").to_str().unwrap(), "checkpoint"])
        .ok();
    r.sage(&[
        "-C",
        d,
        "screen",
        "--check-tables",
        "--templates",
        "my-tables",
    ])
    .ok();
}

/// Issue 44 (3): the Russian and Chinese reports kept English pieces — the origin's bound
/// ("(кандидаты до хода 3, the introducing write)") and, in Markdown, the provenance line
/// ("introduced by write 2 (…) at turn 3"); and Russian called the agent's fix "ремонт".
#[test]
fn the_russian_and_chinese_reports_have_no_english_pieces() {
    let r = Repo::new();
    let dir = r.demo();
    let english = [
        "introducing write",
        "introduced by",
        "by write",
        "at turn",
        "candidates up to",
        "the last turn in scope",
        "delivered repair",
        "mapped by",
    ];
    for (lang, bound, provenance) in [
        (
            "ru",
            "(кандидаты до хода 3: запись, внёсшая код)",
            "внесено записью агента 2 (`40feeea`) на ходе 3",
        ),
        (
            "zh",
            "（候选至第 3 轮，引入代码的写入）",
            "由智能体的第 2 次写入引入（`40feeea`），在第 3 轮",
        ),
    ] {
        for format in ["text", "md", "html"] {
            let out = r
                .blame_demo(&dir, &["--lang", lang, "--format", format, "-q"])
                .ok()
                .stdout;
            for e in english {
                assert!(!out.contains(e), "{lang} {format}: {e:?} in\n{out}");
            }
            assert!(!out.contains("ремонт"), "{lang} {format}: {out}");
            match format {
                "text" => assert!(out.contains(bound), "{lang}: {out}"),
                "md" => assert!(out.contains(provenance), "{lang}: {out}"),
                _ => {}
            }
        }
    }
    let md = r
        .blame_demo(&dir, &["--lang", "ru", "--format", "md", "-q"])
        .ok()
        .stdout;
    assert!(md.contains("где исправление впервые пошло не так"), "{md}");
    // English says what it said, and JSON keeps its English `bound_by`.
    let en = r.blame_demo(&dir, &["-q"]).ok().stdout;
    assert!(
        en.contains("(candidates up to turn 3, the introducing write)"),
        "{en}"
    );
    let v = r
        .blame_demo(&dir, &["--lang", "zh", "--format", "json", "-q"])
        .ok()
        .json();
    assert_eq!(v["origin"]["bound_by"], "the introducing write");
}

/// Issue 44 (5): `man git-sage-guard` sent readers to git-sage-guard-install(1) and
/// git-sage-guard-check(1), which were not installed (nor the hooks' and notes' pages), and
/// git-sage(1)'s synopsis showed `[-C ]` without its value. Every page a page names is
/// installed, and every synopsis shows each option's value.
#[test]
fn every_man_page_a_page_names_is_installed() {
    let r = Repo::new();
    let man = r.home().join("man");
    r.sage(&["install-man", "--dir", man.to_str().unwrap()])
        .ok();
    let dir = man.join("man1");
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let named = regex::Regex::new(r"git\\-sage(\\-[a-z]+)*\(1\)").unwrap();
    let mut references = 0;
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        for m in named.find_iter(&text) {
            let name = m.as_str().replace("\\-", "-").replace("(1)", ".1");
            assert!(
                pages.contains(&name),
                "{page} names {}, which is not installed ({pages:?})",
                m.as_str()
            );
            references += 1;
        }
        // The synopsis is the command as typed, with each option's value.
        let synopsis = text
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|s| s.lines().next())
            .unwrap_or_else(|| panic!("{page} has no synopsis"));
        let typed = synopsis
            .strip_prefix("\\fB")
            .and_then(|s| s.split("\\fR").next())
            .unwrap_or_else(|| panic!("{page}: {synopsis}"))
            .replace("\\-", "-");
        assert!(typed.starts_with("git sage"), "{page}: {synopsis}");
        assert_eq!(
            format!("{}.1", typed.replace(' ', "-")),
            *page,
            "{page}: the synopsis is not the command as typed: {synopsis}"
        );
        assert!(
            !synopsis.contains(" \\fR]"),
            "{page}: an option without its value: {synopsis}"
        );
    }
    for page in [
        "git-sage-guard-install.1",
        "git-sage-guard-check.1",
        "git-sage-hooks-install.1",
        "git-sage-notes-show.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "{page} is not installed");
    }
    assert!(!pages.iter().any(|p| p.ends_with("-help.1")), "{pages:?}");
    assert!(references >= 25, "{references}");
    let top = std::fs::read_to_string(dir.join("git-sage.1")).unwrap();
    assert!(
        top.contains("[\\fB\\-C\\fR \\fIDIR\\fR]"),
        "git-sage(1) synopsis lacks -C DIR: {top}"
    );
    let screen = std::fs::read_to_string(dir.join("git-sage-screen.1")).unwrap();
    assert!(
        screen.contains("[\\fB\\-\\-templates\\fR \\fIDIR\\fR]"),
        "{screen}"
    );
}

/// Issue 44 (6): the HTML report said it was the offline judge's draft only among the warnings
/// at the foot of the page. It says so under the verdict's heading, in the page's language;
/// a model judge's page has no such notice.
#[test]
fn the_html_report_says_at_the_verdict_that_it_is_an_offline_draft() {
    let r = Repo::new();
    let page = r.sage(&["demo", "--format", "html"]).ok().stdout;
    let verdict = page
        .split("<section class=\"verdict\"")
        .nth(1)
        .and_then(|s| s.split("<div class=\"cards\">").next())
        .unwrap();
    assert!(
        verdict.contains("<strong>Offline draft.</strong>"),
        "{verdict}"
    );
    assert!(
        verdict.contains("confirm the verdict with an LLM judge"),
        "{verdict}"
    );
    // Before the timeline and the cards: the first thing read after the header.
    let at = page.find("Offline draft.").unwrap();
    assert!(at < page.find("class=\"cards\"").unwrap());
    let ru = r
        .sage(&["demo", "--format", "html", "--lang", "ru"])
        .ok()
        .stdout;
    assert!(
        ru.contains("<strong>Черновик офлайн-судьи.</strong>"),
        "{ru}"
    );

    // A model judge (here a command giving every turn zeros) has no notice.
    let dir = r.demo();
    let script = r.home().join("zeros.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nturn=$(grep -o 'Score turn [0-9]*' | head -1 | tr -dc 0-9)\nprintf '{\"turn\": %s, \"applicable\": true, \"opportunity\": false, \"kind\": \"planning\", \"scores\": {\"tr\":0,\"di\":0,\"vr\":0,\"sa\":0}, \"quotes\": {\"tr\":null,\"di\":null,\"vr\":null,\"sa\":null}}\\n' \"$turn\"\n",
    )
    .unwrap();
    let judge = format!("command:sh {}", script.display());
    let page = r
        .blame_demo(&dir, &["--judge", &judge, "--format", "html", "-q"])
        .ok()
        .stdout;
    assert!(page.contains("<section class=\"verdict\""), "{page}");
    assert!(!page.contains("Offline draft"), "{page}");
}

/// Issue 44 (7): a test that skipped for want of a tool or fixture was listed as `ok`, and
/// said so only in output libtest hides. Run here as a program of its own (this test binary,
/// one conformance test, the fixtures pointed nowhere), the skip is listed by name, with why,
/// after libtest's summary.
#[test]
fn a_skipped_test_is_listed_as_skipped() {
    let test = "conformance::every_real_finding_file_parses";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads", "1"])
        .env("SAGE_REAL_FIXTURES", "/nonexistent/real")
        .env_remove("CI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stderr.contains("1 test(s) skipped: they passed without running"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "test {test} ... skipped: /nonexistent/real/findings is absent"
        )),
        "{stderr}"
    );
    // Under CI the same skip fails the run.
    let ci = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact"])
        .env("SAGE_REAL_FIXTURES", "/nonexistent/real")
        .env("CI", "true")
        .output()
        .unwrap();
    assert!(!ci.status.success());
}

/// Issue 44 (9): `--out r.pdf` wrote text without a word, and no `--out` said what it wrote.
/// An extension that names no format is bad input naming the ones the command writes; each
/// file written is one line on stderr, which `-q` keeps quiet.
#[test]
fn out_names_what_it_writes_and_refuses_what_it_cannot() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let run = r
        .sage(&["-C", d, "blame-origin", "--out", "r.pdf"])
        .bad_input("--out r.pdf: blame-origin writes .txt, .json, .md, .html, .sarif");
    assert!(run.stderr.contains("--format"), "{}", run.stderr);
    assert!(!dir.join("r.pdf").exists());
    r.sage(&["-C", d, "provenance", "--out", "p.docx"])
        .bad_input("--out p.docx: provenance writes .txt, .json,");
    // --format says which: the name is the user's.
    r.sage(&[
        "-C",
        d,
        "provenance",
        "--out",
        "p.log",
        "--format",
        "json",
        "-q",
    ])
    .ok();
    assert!(
        std::fs::read_to_string(dir.join("p.log"))
            .unwrap()
            .starts_with('{')
    );

    let run = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--out",
            "r.json",
            "--out",
            "r.md",
            "--out",
            "r.txt",
        ])
        .ok();
    for line in [
        "git-sage: wrote r.json (JSON)",
        "git-sage: wrote r.md (Markdown)",
        "git-sage: wrote r.txt (text)",
    ] {
        assert!(
            run.stderr.lines().any(|l| l == line),
            "{line}: {}",
            run.stderr
        );
    }
    assert_eq!(run.stdout, "");
    let run = r
        .sage(&["-C", d, "blame-origin", "--out", "r.html", "-q"])
        .ok();
    assert_eq!(run.stderr, "", "-q: nothing on stderr");
    assert!(dir.join("r.html").is_file());
}

/// Issue 44 (9): the text report showed the recommendation's Markdown as written, so a
/// terminal read "Require a **bypass check**". Text drops emphasis marks, in every language
/// and in `git sage origin`; Markdown and HTML keep their emphasis.
#[test]
fn no_markdown_emphasis_in_text_reports() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    for lang in ["en", "ru", "zh"] {
        let text = r.blame_demo(&dir, &["--lang", lang, "-q"]).ok().stdout;
        assert!(!text.contains("**"), "{lang}: {text}");
    }
    let text = r.blame_demo(&dir, &["-q"]).ok().stdout;
    assert!(text.contains("Require a bypass check:"), "{text}");
    let md = r.blame_demo(&dir, &["--format", "md", "-q"]).ok().stdout;
    assert!(md.contains("Require a **bypass check**:"), "{md}");
    let html = r.blame_demo(&dir, &["--format", "html", "-q"]).ok().stdout;
    assert!(html.contains("<strong>bypass check</strong>"));
    r.sage(&[
        "-C",
        d,
        "judge",
        ".sage/sessions/fix-ssrf.yaml",
        "--out",
        "s.json",
        "-q",
    ])
    .ok();
    r.sage(&["-C", d, "provenance", "--out", "p.json", "-q"])
        .ok();
    let origin = r
        .sage(&[
            "-C",
            d,
            "origin",
            "--scores",
            "s.json",
            "--provenance",
            "p.json",
        ])
        .ok()
        .stdout;
    assert!(origin.contains("bypass check"), "{origin}");
    assert!(!origin.contains("**"), "{origin}");
}

/// Issue 44 (9): `--estimate` priced `claude-sonnet-4-5` as `claude-sonnet-4` and said so
/// under Sonnet 4's name. Sonnet 4.5 has its own entry; a model priced by its family's entry
/// is named with whose prices they are.
#[test]
fn the_estimate_prices_a_model_as_what_it_is() {
    let r = Repo::new();
    let dir = r.demo();
    let estimate = |judge: &str| {
        r.blame_demo(&dir, &["--judge", judge, "--estimate", "-q"])
            .ok()
            .stdout
    };
    let out = estimate("anthropic:claude-sonnet-4-5");
    assert!(
        out.contains("    claude-sonnet-4-5: $3.00 input, $0.30 cached, $15.00 output"),
        "{out}"
    );
    assert!(!out.contains("claude-sonnet-4:"), "{out}");
    let out = estimate("anthropic:claude-opus-4-1");
    assert!(
        out.contains(
            "    claude-opus-4-1 at claude-opus-4's prices (no entry of its own): $15.00 input"
        ),
        "{out}"
    );
}

/// Issue 44 (9): the SARIF message put a full stop after a quote that ended with one
/// (`rejected.".`).
#[test]
fn the_sarif_message_ends_each_sentence_once() {
    let r = Repo::new();
    let dir = r.demo();
    let v: serde_json::Value =
        serde_json::from_str(&r.blame_demo(&dir, &["--format", "sarif", "-q"]).ok().stdout)
            .unwrap();
    let text = v["runs"][0]["results"][0]["message"]["text"]
        .as_str()
        .unwrap();
    assert!(!text.contains(".\"."), "{text}");
    assert!(
        text.contains("plain http is rejected.\" The defect was introduced by commit"),
        "{text}"
    );
    assert!(
        text.ends_with("Missed opportunities at turns 2, 3, 5, 6."),
        "{text}"
    );
}
