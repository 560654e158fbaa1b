//! The HTML report in a real browser: headless Chromium lays out the demo's report and a
//! generated 300-turn one at 1400 and 400 px, and a script injected into a copy of each page
//! (browser_check.js) checks that the page never scrolls sideways, that no two texts of the
//! timeline overlap or leave their lane, that no text is below 12 px and that nothing is
//! fetched from the network. Screenshots are kept under target/browser-test/.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{HUMAN, Repo, skip};

const CHECK: &str = include_str!("browser_check.js");
/// The widths a security engineer reads the page at: a desktop window and a phone.
const WIDTHS: [u32; 2] = [1400, 400];
/// Screenshots are cut at this height: the header, the verdict and the timeline.
const SHOT_MAX_HEIGHT: u64 = 4000;
/// One browser run never takes longer than this.
const RUN_LIMIT: Duration = Duration::from_secs(60);

fn chromium() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    });
    Some(PathBuf::from("/usr/bin/chromium"))
        .filter(|p| p.is_file())
        .or(on_path)
}

/// Chromium with a home and a profile of its own in a temporary directory: nothing of the
/// machine's user is read or written.
struct Browser {
    bin: PathBuf,
    dir: tempfile::TempDir,
}

impl Browser {
    fn run(&self, width: u32, height: u64, args: &[&str]) -> String {
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut child = Command::new(&self.bin)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("LC_ALL", "C")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--hide-scrollbars",
            ])
            .arg(format!(
                "--user-data-dir={}",
                self.dir.path().join("profile").display()
            ))
            .arg(format!("--window-size={width},{height}"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let start = Instant::now();
        // A browser that hangs fails the test instead of holding the suite.
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > RUN_LIMIT {
                child.kill().ok();
                panic!("chromium {args:?} took longer than {RUN_LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A page holding `page` in a frame of exactly `width` px — Chromium's headless window is
    /// never narrower than 500 px, a frame is — with the verdict the frame posts written into
    /// the page for `--dump-dom`.
    fn host(&self, page: &str, width: u32, height: u64) -> String {
        let host = self.dir.path().join("host.html");
        std::fs::write(
            &host,
            format!(
                "<!DOCTYPE html><html><body style=\"margin:0\"><pre id=\"v\" style=\"display:none\"></pre>\
<script>addEventListener('message',function(e){{document.getElementById('v').textContent=e.data}})</script>\
<iframe src=\"{page}\" style=\"display:block;border:0;width:{width}px;height:{height}px\"></iframe></body></html>"
            ),
        )
        .unwrap();
        format!("file://{}", host.display())
    }

    /// Lays `html` out at `width`, returns the check's verdict, and keeps a screenshot as
    /// `shot`.
    fn check(&self, html: &str, width: u32, shot: &Path) -> serde_json::Value {
        let checked = html.replacen("</body>", &format!("<script>{CHECK}</script></body>"), 1);
        assert_ne!(checked, html, "the report has no </body>");
        std::fs::write(self.dir.path().join("checked.html"), &checked).unwrap();
        std::fs::write(self.dir.path().join("report.html"), html).unwrap();
        let url = self.host("checked.html", width, 900);
        let dom = self.run(width, 900, &["--dump-dom", &url]);
        let verdict = dom
            .split("<pre id=\"v\" style=\"display:none\">")
            .nth(1)
            .and_then(|s| s.split("</pre>").next())
            .unwrap_or_else(|| panic!("no verdict in the page at {width} px: {dom}"))
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&");
        let v: serde_json::Value = serde_json::from_str(&verdict)
            .unwrap_or_else(|e| panic!("verdict at {width} px is not JSON ({e}): {verdict:?}"));
        let height = v["scrollHeight"]
            .as_u64()
            .unwrap_or(900)
            .min(SHOT_MAX_HEIGHT);
        let url = self.host("report.html", width, height);
        self.run(
            width,
            height,
            &[&format!("--screenshot={}", shot.display()), &url],
        );
        assert!(shot.is_file(), "no screenshot {}", shot.display());
        v
    }
}

/// Where the screenshots are kept: target/browser-test/ (test artefacts, not committed).
fn shots_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("browser-test");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A sage-format session of `n` turns that fixes an SSRF the way the demo's agent did: it
/// names the threat early, writes the scheme-only check at turn `write_at`, runs tests and
/// reviews, again and again.
fn long_session(n: u32, write_at: u32) -> String {
    let mut s = String::from(
        "schema: sage.session/1\nagent: claude-code\nmodel: test-model\ntask: Fix the SSRF in app/fetch.py (fetch_url downloads any URL a user gives).\nturns:\n",
    );
    for t in 1..=n {
        let turn = if t == write_at {
            format!(
                "  - kind: implementation\n    text: \"Turn {t}: adding the scheme check to fetch_url.\"\n    tool_calls:\n      - name: Edit\n        arguments: {{file_path: app/fetch.py}}\n        result: The file app/fetch.py has been updated.\n    file_changes:\n      - path: app/fetch.py\n        old: \"def fetch_url(url):\\n\"\n        new: \"def fetch_url(url):\\n    if not url.startswith(\\\"https://\\\"):\\n        raise ValueError(url)\\n\"\n"
            )
        } else {
            let (kind, text) = match t % 10 {
                1 => (
                    "planning",
                    "the URL comes from users, so an attacker could reach the internal network (SSRF); we will check that the scheme is https",
                ),
                3 => (
                    "verification",
                    "running the tests with http://127.0.0.1 as the URL",
                ),
                5 => ("review", "tests are green; the fix looks complete"),
                7 => ("implementation", "tidying the logging around every fetch"),
                9 => ("administrative", "updating the changelog"),
                _ => (
                    "planning",
                    "reading the code around fetch_url and its callers",
                ),
            };
            format!("  - kind: {kind}\n    text: \"Turn {t}: {text}.\"\n")
        };
        s.push_str(&turn);
    }
    s
}

/// The 300-turn report, through the real binary on a repository built for it.
fn long_report(r: &Repo) -> String {
    r.write(
        "app/fetch.py",
        "import urllib.request\n\n\ndef fetch_url(url):\n    return urllib.request.urlopen(url).read()\n",
    );
    r.commit_as(HUMAN, "fetch by URL");
    r.git(&["checkout", "-q", "-b", "agent/fix-ssrf"]);
    r.write(
        "app/fetch.py",
        "import urllib.request\n\n\ndef fetch_url(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return urllib.request.urlopen(url).read()\n",
    );
    r.commit("Fix SSRF: only https URLs in fetch_url");
    r.write(".sage/sessions/long.yaml", &long_session(300, 120));
    r.commit("Session of the fix\n\nSage-Session: .sage/sessions/long.yaml");
    let f = r.finding(
        "ssrf.yaml",
        "id: ssrf-fetch\ncwe: 918\nfile: app/fetch.py\nfragment: 'if not url.startswith(\"https://\"):'\ndescription: only the scheme is checked\n",
    );
    let json = r
        .sage(&["blame-origin", "--finding", &f, "--format", "json", "-q"])
        .ok()
        .json();
    assert_eq!(json["turns"].as_array().unwrap().len(), 300, "{json}");
    assert_eq!(json["provenance"]["introducing_write"]["turn"], 120);
    r.sage(&["blame-origin", "--finding", &f, "--format", "html", "-q"])
        .ok()
        .stdout
}

#[test]
fn reports_lay_out_in_chromium_at_1400_and_400_px() {
    let Some(bin) = chromium() else {
        skip("chromium not found");
        return;
    };
    let browser = Browser {
        bin,
        dir: tempfile::tempdir().unwrap(),
    };
    let r = Repo::new();
    let demo = r.demo();
    let demo_html = r.blame_demo(&demo, &["--format", "html", "-q"]).ok().stdout;
    let long = Repo::new();
    let long_html = long_report(&long);
    let shots = shots_dir();
    for (name, html) in [("demo", &demo_html), ("turns300", &long_html)] {
        for w in WIDTHS {
            let shot = shots.join(format!("{name}-{w}.png"));
            let start = Instant::now();
            let v = browser.check(html, w, &shot);
            eprintln!(
                "{name} at {w} px: {} texts in the timeline, page {}x{} ({:?}); {}",
                v["texts"],
                v["scrollWidth"],
                v["scrollHeight"],
                start.elapsed(),
                shot.display()
            );
            assert_eq!(
                v["innerWidth"], w,
                "{name} at {w} px: the frame's width: {v}"
            );
            assert!(
                v["scrollWidth"].as_u64() <= v["innerWidth"].as_u64(),
                "{name} at {w} px scrolls sideways: {v}"
            );
            assert_eq!(
                v["overlaps"],
                serde_json::json!([]),
                "{name} at {w} px: {v}"
            );
            assert_eq!(
                v["offscreen"],
                serde_json::json!([]),
                "{name} at {w} px: {v}"
            );
            assert_eq!(v["small"], serde_json::json!([]), "{name} at {w} px: {v}");
            assert_eq!(
                v["external"],
                serde_json::json!([]),
                "{name} at {w} px: {v}"
            );
            assert!(
                v["texts"].as_u64().unwrap_or(0) > 10,
                "{name} at {w} px: {v}"
            );
            assert_eq!(v["ok"], true, "{name} at {w} px: {v}");
        }
    }
}

#[test]
fn the_report_is_one_file_that_fetches_nothing() {
    let r = Repo::new();
    let demo = r.demo();
    let html = r.blame_demo(&demo, &["--format", "html", "-q"]).ok().stdout;
    for needle in [
        "<script",
        "<link",
        "<img",
        "<iframe",
        " src=",
        "url(",
        "@import",
        "href=\"http",
    ] {
        assert!(!html.contains(needle), "the report holds {needle:?}");
    }
    // The recommendation's Markdown is rendered, not shown as marks.
    assert!(html.contains("<strong>bypass check</strong>"), "{html}");
    assert!(!html.contains("**bypass check**"), "{html}");
    // The header: CWE with its name, repository, branch, range, tip date, version, judge.
    for needle in [
        "CWE-918 · server-side request forgery (SSRF)",
        "<dt>Repository</dt><dd>demo</dd>",
        "<code>agent/fix-ssrf</code>",
        "3 commits",
        "2026-03-02 09:01:05 UTC",
        concat!("git sage ", env!("CARGO_PKG_VERSION")),
        "offline (prefix)",
        "sage format · agent cursor · model gpt-4.1",
        "+    if not url.startswith(&quot;https://&quot;):",
    ] {
        assert!(html.contains(needle), "the report lacks {needle:?}");
    }
}
