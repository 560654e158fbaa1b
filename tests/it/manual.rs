//! The manual judge through the real binary on the demo repository: prompts exported, chat
//! replies pasted back a few at a time, the same scores and origin as a `command:` judge
//! given the same answers, and what becomes of replies that cannot be used.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Repo, Run};

const SESSION: &str = ".sage/sessions/fix-ssrf.yaml";

/// A judge's answer for one turn of the demo session.
fn answer(turn: u32, kind: &str, s: [u8; 4], q: [Option<&str>; 4]) -> Value {
    json!({"turn": turn, "applicable": true, "opportunity": true, "kind": kind,
        "scores": {"tr": s[0], "di": s[1], "vr": s[2], "sa": s[3]},
        "quotes": {"tr": q[0], "di": q[1], "vr": q[2], "sa": q[3]}})
}

/// An answer for each turn, quotes copied from the turns — but turn 5's VR quote, which that
/// turn does not hold.
fn answers() -> Vec<Value> {
    vec![
        answer(
            1,
            "planning",
            [1, 2, 1, 0],
            [
                Some("The preview downloader fetches any URL a seller gives us."),
                Some("we will check that the\n scheme is https before downloading"),
                Some("add a test that plain http is rejected"),
                None,
            ],
        ),
        answer(2, "implementation", [0, 0, 0, 0], [None; 4]),
        answer(
            3,
            "implementation",
            [0, 2, 0, 1],
            [
                None,
                Some("if not url.startswith(\"https://\"):"),
                None,
                Some("media/fetcher.py"),
            ],
        ),
        answer(
            4,
            "verification",
            [0, 0, 1, 0],
            [None, None, Some("python -m pytest -q"), None],
        ),
        answer(
            5,
            "review",
            [0, 0, 2, 0],
            [
                None,
                None,
                Some("we tried http://169.254.169.254 and every private range"),
                None,
            ],
        ),
        answer(
            6,
            "implementation",
            [0, 1, 0, 0],
            [
                None,
                Some("Preview downloads accept https:// URLs only."),
                None,
                None,
            ],
        ),
    ]
}

/// The answer for `turn` as a chat may give it back: in prose and fences, pretty-printed with
/// a trailing comma, with typographic quotes.
fn chat_reply(turn: u32, a: &Value) -> (String, String) {
    let compact = a.to_string();
    let mut pretty = serde_json::to_string_pretty(a).unwrap();
    let reply = match turn {
        1 => format!("Sure! Here are the scores:\n```json\n{pretty}\n```\nLet me know"),
        3 => {
            pretty.insert(pretty.rfind("\n}").unwrap(), ',');
            format!("```json\n{pretty}\n```\n")
        }
        4 => format!("I scored turn 4 as follows.\n\n{compact}\n\nHope that helps!"),
        5 => format!("```\n{compact}\n```"),
        6 => {
            assert!(!compact.contains("\\\""), "no quote marks inside strings");
            let mut open = true;
            compact
                .chars()
                .map(|c| match c {
                    '"' => {
                        open = !open;
                        if open { '\u{201d}' } else { '\u{201c}' }
                    }
                    c => c,
                })
                .collect()
        }
        _ => compact,
    };
    let name = match turn {
        3 => format!("turn-{turn:03}.answer.txt"),
        _ => format!("turn-{turn:03}.answer.md"),
    };
    (name, reply)
}

/// The demo repository with its session's prompts exported to `review/` in it.
struct Setup {
    r: Repo,
    demo: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let r = Repo::new();
        let demo = r.demo();
        Setup { r, demo }
    }

    fn ds(&self) -> &str {
        self.demo.to_str().unwrap()
    }

    fn review(&self) -> PathBuf {
        self.demo.join("review")
    }

    fn sage(&self, args: &[&str]) -> Run {
        let mut all = vec!["-C", self.ds()];
        all.extend_from_slice(args);
        self.r.sage(&all)
    }

    fn judge(&self, extra: &[&str]) -> Run {
        let mut args = vec!["judge", SESSION];
        args.extend_from_slice(extra);
        self.sage(&args)
    }

    fn paste(&self, turn: u32) {
        let (name, text) = chat_reply(turn, &answers()[turn as usize - 1]);
        std::fs::write(self.review().join(name), text).unwrap();
    }

    /// A `command:` judge that keeps each prompt it is sent and answers with the plain JSON
    /// of `answers()` for the turn asked.
    fn command_judge(&self) -> (String, PathBuf) {
        let dir = self.r.home().join("command");
        std::fs::create_dir_all(&dir).unwrap();
        for (i, a) in answers().iter().enumerate() {
            std::fs::write(dir.join(format!("answer-{}.json", i + 1)), a.to_string()).unwrap();
        }
        let script = dir.join("judge.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nd={}\nt=$(mktemp \"$d/in.XXXXXX\")\ncat > \"$t\"\nturn=$(grep -o 'Score turn [0-9]*' \"$t\" | tail -1 | tr -dc 0-9)\nmv \"$t\" \"$d/prompt-$turn.txt\"\ncat \"$d/answer-$turn.json\"\n",
                dir.display()
            ),
        )
        .unwrap();
        (format!("command:sh {}", script.display()), dir)
    }
}

/// The text of the fenced block under a heading of a prompt file, as a person copies it.
fn part<'a>(md: &'a str, heading: &str) -> &'a str {
    let after = &md[md.find(heading).unwrap_or_else(|| panic!("{heading}")) + heading.len()..];
    let open = after.find("text\n").unwrap();
    let fence = after[..open].trim();
    assert!(
        fence.len() >= 4 && fence.chars().all(|c| c == '`'),
        "{fence}"
    );
    let body = &after[open + "text\n".len()..];
    &body[..body.find(&format!("\n{fence}\n")).unwrap()]
}

fn lines_with<'a>(run: &'a Run, prefix: &str) -> Vec<&'a str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with(prefix))
        .collect()
}

#[test]
fn export_paste_some_import_paste_the_rest_and_blame_origin_reports() {
    let s = Setup::new();
    let run = s.judge(&["--export", "review"]).ok();
    assert!(
        run.stdout
            .starts_with("wrote 6 prompt(s) to review (review/README.md says what to do)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("git sage judge {SESSION} --import review")),
        "{}",
        run.stdout
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(s.review().join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(crate::schemas::check(&manifest), "sage.manual-judge/1");
    let turns: Vec<u64> = manifest["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [1, 2, 3, 4, 5, 6]);
    let readme = std::fs::read_to_string(s.review().join("README.md")).unwrap();
    assert!(
        readme.contains("| `turn-004.md` | `turn-004.answer.md` |"),
        "{readme}"
    );

    // Three replies pasted: the rest are pending, listed with their files, and nothing is 0.
    for t in 1..=3 {
        s.paste(t);
    }
    let run = s.judge(&["--import", "review", "--format", "json"]);
    assert_eq!(run.code, 3, "an incomplete judgement: {run:#?}");
    let v = run.json();
    assert_eq!(v["judge"]["name"], "manual:review");
    assert_eq!(v["judge"]["calls"], 3);
    let failed: Vec<(u64, &str)> = v["failed_turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["turn"].as_u64().unwrap(), f["cause"].as_str().unwrap()))
        .collect();
    assert_eq!(failed, [(4, "deferred"), (5, "deferred"), (6, "deferred")]);
    assert!(
        v["turns"][3]["scores"].is_null(),
        "pending is never scored 0"
    );
    assert_eq!(
        v["turns"][3]["error"],
        "no answer yet: paste review/turn-004.md into a chat and save the reply as review/turn-004.answer.md"
    );
    assert_eq!(
        v["turns"][0]["scores"],
        json!({"tr": 1, "di": 2, "vr": 1, "sa": 0})
    );
    assert_eq!(
        v["turns"][2]["scores"]["di"], 2,
        "the trailing comma was read"
    );
    let note = lines_with(&run, "git-sage: manual judge: ");
    assert_eq!(
        note,
        [
            "git-sage: manual judge: 3 of 6 answer(s) read from review; waiting for 3: review/turn-004.md, review/turn-005.md, review/turn-006.md (save each reply beside its prompt as turn-NNN.answer.md)"
        ]
    );
    let errors = lines_with(&run, "git-sage: error: ");
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].starts_with(
            "git-sage: error: 3 turn(s) could not be scored: manual:review: no answer pasted yet (turns 4-6); hint: paste each waiting review/turn-NNN.md"
        ),
        "{}",
        errors[0]
    );
    // --allow-partial: the same report, a warning, exit 0.
    let run = s.judge(&["--import", "review", "--allow-partial"]).ok();
    assert!(run.stdout.contains("failed: 3 turn(s)"), "{}", run.stdout);

    // The rest pasted: the judgement completes, the answers given before are kept.
    for t in 4..=6 {
        s.paste(t);
    }
    let scores = s.r.home().join("manual.json");
    let manual = s
        .judge(&[
            "--import",
            "review",
            "--format",
            "json",
            "--out",
            scores.to_str().unwrap(),
            "--out",
            "-",
        ])
        .ok();
    // Nothing but the file written (stdout is the other --out).
    assert_eq!(
        manual.stderr,
        format!("git-sage: wrote {} (JSON)\n", scores.display()),
        "{}",
        manual.stderr
    );
    let manual = manual.json();
    assert!(manual.get("failed_turns").is_none(), "{manual}");
    assert_eq!(manual["judge"]["calls"], 6);
    // Turn 5's quote is not in the turn: its score is dropped and the rejection kept, as for
    // any judge.
    let t5 = &manual["turns"][4];
    assert_eq!(t5["scores"]["vr"], 0);
    assert_eq!(
        t5["rejected_quotes"],
        json!([{"dim": "vr", "score": 2, "quote": "we tried http://169.254.169.254 and every private range", "reason": "the quote is not in this turn"}])
    );
    assert_eq!(
        manual["turns"][5]["scores"]["di"], 1,
        "typographic quotes read"
    );

    // The same answers through a command judge: the same turns, from the very same prompts.
    let (command, seen) = s.command_judge();
    let cmd = s
        .judge(&["--judge", &command, "--no-cache", "--format", "json"])
        .ok()
        .json();
    assert_eq!(manual["turns"], cmd["turns"]);
    for t in 1..=6 {
        let md = std::fs::read_to_string(s.review().join(format!("turn-{t:03}.md"))).unwrap();
        let sent = std::fs::read_to_string(seen.join(format!("prompt-{t}.txt"))).unwrap();
        let pasted = format!("{}\n\n{}", part(&md, "## System\n"), part(&md, "## User\n"));
        assert!(
            pasted == sent,
            "turn {t}: the exported prompt is not the one a judge is sent"
        );
    }

    // blame-origin reads the same directory (the session found in git this time) and reports.
    let report = s
        .sage(&[
            "blame-origin",
            "--finding",
            crate::common::DEMO_FINDING,
            "--judge",
            "manual:review",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(report["judge"]["name"], "manual:review");
    assert_eq!(report["origin"]["status"], "localized");
    assert_eq!(report["origin"]["turn"], 1);
    let by_command = s
        .sage(&[
            "blame-origin",
            "--finding",
            crate::common::DEMO_FINDING,
            "--judge",
            &command,
            "--no-cache",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(report["origin"], by_command["origin"]);
    assert_eq!(
        report["missed_opportunities"],
        by_command["missed_opportunities"]
    );
    let text = s
        .sage(&[
            "blame-origin",
            "--finding",
            crate::common::DEMO_FINDING,
            "--judge",
            "manual:review",
        ])
        .ok()
        .stdout;
    assert!(text.contains("judge manual:review (prefix)"), "{text}");
    assert!(text.contains("ORIGIN      turn 1"), "{text}");
    assert!(text.contains("RECOMMENDATION"), "{text}");
}

#[test]
fn blame_origin_with_an_empty_manual_directory_exports_and_says_what_to_do() {
    let s = Setup::new();
    let run = s.sage(&[
        "blame-origin",
        "--finding",
        crate::common::DEMO_FINDING,
        "--judge",
        "manual:fresh",
    ]);
    assert_eq!(run.code, 3, "{run:#?}");
    let note = lines_with(&run, "git-sage: manual judge: ");
    assert_eq!(note.len(), 1, "{}", run.stderr);
    assert!(
        note[0].starts_with("git-sage: manual judge: wrote 6 prompt(s) to fresh;"),
        "{}",
        note[0]
    );
    assert!(run.stdout.contains("FAILED      6 turn(s) could not be scored: manual:fresh: no answer pasted yet (turns 1-6)"), "{}", run.stdout);
    for f in ["README.md", "manifest.json", "turn-001.md", "turn-006.md"] {
        assert!(s.demo.join("fresh").join(f).is_file(), "{f}");
    }
    // The prompts blame-origin exported are the ones `judge SESSION --import` reads.
    std::fs::write(
        s.demo.join("fresh/turn-002.answer.md"),
        answers()[1].to_string(),
    )
    .unwrap();
    let v = s.judge(&["--import", "fresh", "--format", "json"]);
    assert_eq!(v.code, 3);
    assert_eq!(v.json()["turns"][1]["scores"]["tr"], 0);
}

#[test]
fn a_reply_that_cannot_be_used_is_bad_input_naming_its_file_and_line() {
    let s = Setup::new();
    s.judge(&["--export", "review"]).ok();
    for t in 1..=6 {
        s.paste(t);
    }
    let turn2 = s.review().join("turn-002.answer.md");
    std::fs::write(
        &turn2,
        "Here you go:\n\n{\"turn\": 2, \"applicable\": tru, \"opportunity\": true}\n",
    )
    .unwrap();
    let out = s.r.home().join("partial.json");
    s.judge(&["--import", "review", "-q", "--out", out.to_str().unwrap()])
        .bad_input("review/turn-002.answer.md:3: not valid JSON (column ");
    // The scores are written all the same, the turn listed as needing a new reply.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    crate::schemas::check(&v);
    assert_eq!(v["failed_turns"][0]["turn"], 2);
    assert_eq!(v["failed_turns"][0]["cause"], "invalid_answer");
    assert!(v["turns"][1]["scores"].is_null());
    let run = s.judge(&["--import", "review"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("hint: replace that file with the chat's whole reply"),
        "{}",
        run.stderr
    );

    // Another turn's answer in the file is refused, not scored as this turn.
    std::fs::write(&turn2, answers()[2].to_string()).unwrap();
    s.judge(&["--import", "review", "-q"])
        .bad_input("review/turn-002.answer.md:1: this is an answer for turn 3, not turn 2");
    // Two different answers in one reply: neither is picked.
    let mut changed = answers()[1].clone();
    changed["scores"]["tr"] = json!(1);
    changed["quotes"]["tr"] = json!("Adding a test");
    std::fs::write(
        &turn2,
        format!("{}\n\nOn second thought:\n{changed}\n", answers()[1]),
    )
    .unwrap();
    s.judge(&["--import", "review", "-q"])
        .bad_input("review/turn-002.answer.md:4: the reply holds 2 different answers");
    std::fs::write(&turn2, answers()[1].to_string()).unwrap();
    s.judge(&["--import", "review", "-q"]).ok();

    // Answers are read only against the prompts they were given for.
    // Issue 43 (17): the message named the same session twice; it says what differs.
    s.judge(&["--import", "review", "--turns", "2-6", "-q"])
        .bad_input(
            "review: its prompts are for turns 1-6 of .sage/sessions/fix-ssrf.yaml, not turns 2-6",
        );
    s.judge(&["--import", "review", "--criterion", "privacy", "-q"])
        .bad_input("review: its prompts were exported with criterion security, not privacy");
    let other = s.judge(&["--import", "review", "--task", "Make it fast.", "-q"]);
    let other = other.bad_input(
        "review: its prompts are for another version of .sage/sessions/fix-ssrf.yaml: its task or turns",
    );
    assert_eq!(
        other.stderr.matches("fix-ssrf.yaml").count(),
        1,
        "{}",
        other.stderr
    );
    let templates = s.r.home().join("templates");
    std::fs::create_dir_all(templates.join("judge")).unwrap();
    std::fs::write(
        templates.join("judge/instruction.j2"),
        "\nRate turn {{ turn }}. Answer with the JSON object only.\n",
    )
    .unwrap();
    let t = templates.to_str().unwrap();
    s.judge(&["--import", "review", "--templates", t, "-q"])
        .bad_input("review: its prompts were exported with templates of version ");
    s.sage(&[
        "blame-origin",
        "--finding",
        crate::common::DEMO_FINDING,
        "--judge",
        "manual:review",
        "--judge-sees-anchor",
        "-q",
    ])
    .bad_input("review: the prompt turn-001.md is not the one this run would send");
    s.judge(&["--import", "review", "--repeat", "2", "-q"])
        .bad_input("--repeat 2: the manual judge answers each turn once");
    let other = s.r.home().join("notes");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("mine.txt"), "mine").unwrap();
    let o = other.to_str().unwrap();
    s.judge(&["--import", o, "-q"])
        .bad_input("no manifest.json there");
    s.judge(&["--export", o, "-q"]).bad_input("is not empty");
    std::fs::write(
        s.r.path().join("corpus.yaml"),
        format!(
            "schema: sage.manifest/1\ncases:\n  - {{id: a, repo: demo, tip: agent/fix-ssrf, base: main, finding: {}}}\n",
            crate::common::DEMO_FINDING
        ),
    )
    .unwrap();
    s.r.sage(&["batch", "corpus.yaml", "--judge", "manual:review", "-q"])
        .bad_input("a manual judge takes one session per directory");
}

#[test]
fn exported_prompts_cite_only_this_repositorys_docs_and_fence_the_session() {
    let s = Setup::new();
    s.judge(&["--export", "review"]).ok();
    for e in std::fs::read_dir(s.review()).unwrap() {
        let p: &Path = &e.unwrap().path();
        let text = std::fs::read_to_string(p).unwrap();
        assert!(!text.contains("../"), "{}: {text}", p.display());
        if p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("turn-")
        {
            let user = part(&text, "## User\n");
            assert!(
                user.contains("<task-"),
                "the task is fenced as for any judge"
            );
            assert!(
                user.trim_end()
                    .ends_with("Answer with the JSON object only."),
                "{user}"
            );
        }
    }
}
