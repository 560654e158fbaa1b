//! One set of conventions for every command: `--out` (repeatable, format from the
//! extension), shared `--format` values, `-q`/`-v`, `--fail-on`, warnings on stderr,
//! `--color` with NO_COLOR/CLICOLOR_FORCE, and wrapping to a terminal's width.

use crate::common::Repo;

const SESSION: &str = ".sage/sessions/fix-ssrf.yaml";

#[test]
fn several_outs_in_one_run_each_in_its_extensions_format() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let run = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--out",
            "r.md",
            "--out",
            "r.sarif",
            "--out",
            "r.json",
            "--out",
            "r.html",
            "--out",
            "r.txt",
        ])
        .ok();
    assert_eq!(run.stdout, "", "--out replaces stdout");
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    assert!(read("r.md").starts_with("### git sage"), "{}", read("r.md"));
    let sarif: serde_json::Value = serde_json::from_str(&read("r.sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let json: serde_json::Value = serde_json::from_str(&read("r.json")).unwrap();
    assert_eq!(json["schema"], "sage.report/1");
    assert!(read("r.html").starts_with("<!DOCTYPE html>"));
    assert!(read("r.txt").starts_with("git sage blame-origin"));
    // --format wins over the extension; `-` is stdout
    let run = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--format",
            "json",
            "--out",
            "x.md",
            "--out",
            "-",
        ])
        .ok();
    assert_eq!(run.json()["schema"], "sage.report/1");
    assert!(read("x.md").starts_with('{'));
    // an extension the command cannot write is bad input, not text under the wrong name
    r.sage(&["-C", d, "provenance", "--out", "p.html"])
        .bad_input("provenance writes text, json; --out p.html asks for html");
    assert!(!dir.join("p.html").exists());
    // every data command takes --out the same way
    r.sage(&["-C", d, "provenance", "--out", "p.json"]).ok();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&read("p.json")).unwrap()["schema"],
        "sage.provenance/1"
    );
    r.sage(&["-C", d, "turns", SESSION, "--out", "t.json"]).ok();
    assert!(read("t.json").contains("\"turns\""));
    r.sage(&[
        "-C", d, "judge", SESSION, "--out", "s.json", "--out", "s.txt",
    ])
    .ok();
    assert!(read("s.json").contains("sage.scores/1"));
    assert!(read("s.txt").starts_with("judge offline"));
    r.sage(&[
        "-C",
        d,
        "origin",
        "--scores",
        "s.json",
        "--provenance",
        "p.json",
        "--out",
        "o.txt",
    ])
    .ok();
    assert!(
        read("o.txt").starts_with("origin: turn 1"),
        "{}",
        read("o.txt")
    );
}

#[test]
fn format_values_are_one_list_narrowed_per_command() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let run = r.sage(&["-C", d, "provenance", "--format", "html"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("[possible values: text, json]"),
        "{}",
        run.stderr
    );
    let help = r.sage(&["screen", "--help"]).ok().stdout;
    assert!(
        help.contains("[possible values: text, json, sarif]"),
        "{help}"
    );
    let help = r.sage(&["batch", "--help"]).ok().stdout;
    assert!(help.contains("[possible values: text, md, json]"), "{help}");
}

#[test]
fn quiet_verbose_and_warnings_on_stderr() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let run = r.sage(&["-C", d, "blame-origin"]).ok();
    assert!(
        run.stderr
            .contains("git-sage: warning: offline draft: phrase lists"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("warning"),
        "warnings are not in the report"
    );
    let json = r.sage(&["-C", d, "blame-origin", "--format", "json"]).ok();
    assert!(
        json.json()["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("offline draft"),
        "and in JSON as data"
    );
    let quiet = r.sage(&["-C", d, "blame-origin", "-q"]).ok();
    assert_eq!(quiet.stderr, "", "-q: only the result");
    assert_eq!(quiet.stdout, run.stdout);
    let judged = r.sage(&["-C", d, "judge", SESSION, "--quiet"]).ok();
    assert_eq!(judged.stderr, "");
    let verbose = r.sage(&["-C", d, "provenance", "-v"]).ok();
    assert!(verbose.stderr.contains("timing: "), "{}", verbose.stderr);
    // errors are never quiet
    let bad = r.sage(&["-C", d, "-q", "blame-origin", "--finding", "nope.yaml"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("git-sage: error: cannot read finding nope.yaml")
    );
}

#[test]
fn fail_on_is_spelled_the_same_everywhere() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    assert_eq!(
        r.sage(&["-C", d, "blame-origin", "--fail-on", "origin"])
            .code,
        1
    );
    assert_eq!(
        r.sage(&["-C", d, "blame-origin", "--fail-on", "introduced"])
            .code,
        1
    );
    assert_eq!(
        r.sage(&["-C", d, "provenance", "--fail-on", "introduced"])
            .code,
        1
    );
    assert_eq!(r.sage(&["-C", d, "provenance"]).code, 0);
    let run = r.sage(&["-C", d, "provenance", "--fail-on", "candidates"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("[possible values: introduced]"),
        "{}",
        run.stderr
    );
}

#[test]
fn colour_follows_the_flag_and_the_environment() {
    let r = Repo::new();
    let dir = r.demo();
    let d = dir.to_str().unwrap();
    let esc = |s: &str| s.contains('\u{1b}');
    let plain = r.sage(&["-C", d, "blame-origin"]).ok();
    assert!(!esc(&plain.stdout), "no colour into a pipe");
    let always = r.sage(&["-C", d, "blame-origin", "--color", "always"]).ok();
    // Bold red, as anstyle writes it: one sequence per effect.
    const RED: &str = "\u{1b}[1m\u{1b}[31m";
    assert!(
        always.stdout.contains(&format!("{RED}◆ origin")),
        "{}",
        always.stdout
    );
    assert!(always.stdout.contains("\u{1b}[33m○ missed"));
    // Russian and Chinese reports colour their own headings and marks (issue 45).
    for (lang, origin, mark) in [("ru", "ИСТОК", "◆ исток"), ("zh", "起源", "◆ 起源")]
    {
        let run = r
            .sage(&["-C", d, "blame-origin", "--color", "always", "--lang", lang])
            .ok();
        assert!(
            run.stdout.contains(&format!("{RED}{origin}\u{1b}[0m")),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains(&format!("{RED}{mark}")),
            "{}",
            run.stdout
        );
    }
    assert!(
        always.stderr.contains("git-sage: \u{1b}[33mwarning:"),
        "{}",
        always.stderr
    );
    let forced = r
        .sage_env(&dir, &["blame-origin"], &[("CLICOLOR_FORCE", "1")])
        .ok();
    assert!(esc(&forced.stdout), "CLICOLOR_FORCE colours a pipe");
    let no = r
        .sage_env(
            &dir,
            &["blame-origin"],
            &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        )
        .ok();
    assert!(!esc(&no.stdout), "NO_COLOR wins over auto");
    let never = r
        .sage_env(
            &dir,
            &["blame-origin", "--color", "never"],
            &[("CLICOLOR_FORCE", "1")],
        )
        .ok();
    assert!(!esc(&never.stdout));
    // colour is for text only: JSON stays JSON
    let json = r
        .sage(&[
            "-C",
            d,
            "blame-origin",
            "--color",
            "always",
            "--format",
            "json",
        ])
        .ok();
    assert!(!esc(&json.stdout));
    // a transcript's own escape codes are still shown, not obeyed, with colour on
    assert!(!always.stdout.contains("\u{1b}]"));
}

#[test]
fn text_is_wrapped_to_a_terminal_and_not_into_a_pipe() {
    let r = Repo::new();
    let dir = r.demo();
    let piped = r.sage_in(&dir, &["blame-origin"]).ok();
    assert!(
        piped.stdout.lines().any(|l| l.chars().count() > 100),
        "long lines stay whole in a pipe"
    );
    // A pseudo-terminal of 72 columns, from util-linux's script(1).
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        return crate::common::skip("script(1) is not installed");
    }
    let log = dir.join("typescript");
    let bin = assert_cmd::cargo::cargo_bin("git-sage");
    let out = std::process::Command::new("script")
        .current_dir(&dir)
        .env("COLUMNS", "72")
        .env("NO_COLOR", "1")
        .env("HOME", r.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-q", "-e", "-c"])
        .arg(format!("{} blame-origin -q", bin.display()))
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(shown.contains("ORIGIN"), "{shown}");
    let widest = shown.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 72, "widest line {widest}:\n{shown}");
}
