//! `warpcheck run --format html` and `warpcheck report --run`: a run's
//! report as one self-contained page. The programs are those of
//! tests/run_claims.rs, tests/run_programs.rs and tests/run_sanitizer.rs,
//! whose figures those tests count by hand; here they must appear on the
//! page, beside check's claims, with the source of their lines. Needs
//! `cargo build` first (the runtime is in libwarpcheck.so).

mod common;

use common::{fixture, stderr, stdout, warpcheck};
use std::path::Path;
use std::process::Output;

/// `warpcheck run OPTIONS fixture` in `dir`.
fn run_in(dir: &Path, name: &str, options: &[&str]) -> Output {
    common::plugin();
    common::run(
        warpcheck()
            .current_dir(dir)
            .arg("run")
            .args(options)
            .arg(fixture(&format!("run/{name}.cu"))),
    )
}

/// The page of fixture `name` run in `dir` with `-o page.html`, which
/// must exit `code` and be well-formed; with the run's output.
fn page(dir: &Path, name: &str, code: i32) -> (Output, String) {
    let out = run_in(dir, name, &["--format", "html", "-o", "page.html"]);
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.join("page.html")).unwrap();
    assert_well_formed(&html);
    (out, html)
}

/// The names of the tags of `html` in order, `/name` for a closing one;
/// void and self-closed elements are left out.
fn tags(html: &str) -> Vec<String> {
    const VOID: &[&str] = &["meta", "br", "hr", "img", "input", "link", "wbr"];
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let end = rest.find('>').expect("a tag left open at the end");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.ends_with('/') {
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '/')
            .collect();
        assert!(!name.is_empty() && name != "/", "not a tag: <{tag}>");
        if !VOID.contains(&name.as_str()) {
            out.push(name.to_ascii_lowercase());
        }
    }
    out
}

/// A whole document whose every tag is closed in order, that fetches
/// nothing and links only inside itself, to anchors it has.
fn assert_well_formed(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.trim_end().ends_with("</html>"));
    let mut open: Vec<String> = Vec::new();
    for t in tags(html) {
        match t.strip_prefix('/') {
            Some(name) => {
                let top = open.pop();
                assert_eq!(top.as_deref(), Some(name), "</{name}> closes {top:?}");
            }
            None => open.push(t),
        }
    }
    assert!(open.is_empty(), "never closed: {open:?}");
    for outside in [
        "src=", "url(", "<script", "<link", "http:", "https:", "@import",
    ] {
        assert!(!html.contains(outside), "{outside} on the page");
    }
    for link in html.split("href=\"").skip(1) {
        let target = &link[..link.find('"').unwrap()];
        let id = target.strip_prefix('#').expect("a link inside the page");
        assert!(html.contains(&format!("id=\"{id}\"")), "no anchor {id}");
    }
}

/// The table row that starts with the site at `place`, up to its end.
fn row<'a>(html: &'a str, place: &str) -> &'a str {
    let cell = format!("<td><code>{place}</code></td>");
    let at = html
        .find(&cell)
        .unwrap_or_else(|| panic!("no row for {place}"));
    let start = html[..at].rfind("<tr").unwrap();
    &html[start..at + html[at..].find("</tr>").unwrap()]
}

/// tests/run_claims.rs counts these: the naive transpose's store makes 128
/// requests of 32 sectors (a float per row, rows 256 bytes apart), 4 ideal
/// (128 consecutive bytes); `column_sums` reads `tile[tx][r]` with all 32
/// lanes in one bank; `copy` reads from 4 bytes into its allocation, 5
/// sectors for each of 127 full warps and 4 for the last, whose `i < n`
/// split it: measured, for check cannot know `n`. The page shows them
/// beside check's claims, the measured branch also in the list of what
/// check left open, with the source at the lines that lost work; and
/// `report --run` on the run's JSON draws the same page.
#[test]
fn the_page_puts_each_site_beside_checks_claim() {
    let dir = tempfile::tempdir().unwrap();
    let (out, html) = page(dir.path(), "claims", 0);
    // The program's own output is untouched; the page is said on stderr.
    assert_eq!(stdout(&out), "claims: 0 wrong\n");
    assert!(stderr(&out).contains("wrote page.html"), "{}", stderr(&out));
    let claims = fixture("run/claims.cu").display().to_string();
    for cell in [
        "program exited with 0",
        "4 kernels launched",
        "0 errors",
        "14 confirmed",
        "1 measured",
        "0 contradicted",
    ] {
        assert!(html.contains(&format!("<td>{cell}</td>")), "{cell}");
    }
    let naive = row(&html, &format!("{claims}:14:24"));
    assert!(naive.contains("128 requests, 4096 sectors (ideal 512), 32.00 per request"));
    assert!(naive.contains("uncoalesced, 32..32 sectors per request"));
    assert!(naive.contains("<span class=\"verdict confirmed\">confirmed</span>"));
    let column = row(&html, &format!("{claims}:36:12"));
    assert!(column.contains("conflict degree up to 32"), "{column}");
    assert!(column.contains("bank conflicts, 32..32-way"), "{column}");
    assert!(html.contains("pointer in at offset 4 inside its allocation"));
    assert!(row(&html, &format!("{claims}:44:14")).contains("639 sectors (ideal 512)"));
    // The measured branch: a row of its card and of the list of what
    // check left open, which comes before every card.
    // Its column is where clang puts the branch (7 by clang 19, 9 by 22).
    let at = html.find(&format!("<code>{claims}:43:")).expect("line 43") + "<code>".len();
    let place = &html[at..at + html[at..].find("</code>").unwrap()];
    let branch = format!("<tr class=\"measured\"><td><code>{place}</code></td>");
    assert_eq!(html.matches(&branch).count(), 2, "{html}");
    assert!(row(&html, place).contains("diverged in 1 of 128 warp executions (1 of 128 warps)"));
    let open = html.find("Left open by check, measured here").unwrap();
    assert!(open < html.find("<section class=\"kernel\"").unwrap());
    // Nothing contradicted: no alarm.
    assert!(!html.contains("CONTRADICTION"));
    // The source at the sites that lost work: the store every 256 bytes,
    // the 32-way read, the misaligned load and the split branch.
    for line in [
        "   14 |     out[x * W + y + j] = in[(y + j) * W + x];",
        "   36 |       s += tile[threadIdx.x][r];",
        "   44 |     out[i] = in[i];",
        "   43 |   if (i &lt; n)",
    ] {
        assert!(
            html.contains(&format!("<span class=\"hl\">{line}</span>")),
            "{line}"
        );
    }
    // The same page from the run's JSON.
    let out = run_in(
        dir.path(),
        "claims",
        &["--format", "json", "-o", "run.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let again = common::run(warpcheck().current_dir(dir.path()).args([
        "report",
        "--run",
        "run.json",
        "-o",
        "again.html",
    ]));
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let from_json = std::fs::read_to_string(dir.path().join("again.html")).unwrap();
    assert_eq!(from_json, html);
}

/// tests/run_sanitizer.rs: thread 0 reads `s[32]` on line 11 (column 12)
/// before thread 32 writes it on line 10 (column 8), with no barrier; the
/// program itself sees no error. Without `-o` the page is
/// warpcheck-run.html in the current directory.
#[test]
fn a_race_is_shown_at_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), "race_shared", &["--format", "html"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "sync: no error\n");
    let html = std::fs::read_to_string(dir.path().join("warpcheck-run.html")).unwrap();
    assert_well_formed(&html);
    let file = fixture("run/race_shared.cu").display().to_string();
    assert!(html.contains("<td>1 error</td>"));
    assert!(html.contains(&format!(
        "<span class=\"error\">race</span> <code>{file}:11:12</code> in <a href=\"#r0\"><code>rotate(int*)</code></a>"
    )));
    assert!(html.contains("read by thread (0,0,0)"));
    assert!(html.contains("write by thread (32,0,0) in block (0,0,0)"));
    assert!(html.contains(&format!(
        "the other access, the write at <code>{file}:10:8</code>"
    )));
    for line in [
        "   11 |   out[t] = s[(t + 32) % 64];",
        "   10 |   s[t] = t;",
    ] {
        assert!(
            html.contains(&format!("<span class=\"hl\">{line}</span>")),
            "{line}"
        );
    }
}

/// tests/run_programs.rs: thread 1000, thread 232 of block 3, writes the 4
/// bytes after the 1000-float buffer at line 9. The fault comes before
/// the kernel's card, and the program's own exit code (3) stays
/// warpcheck's.
#[test]
fn a_memory_error_comes_before_the_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = page(dir.path(), "out_of_bounds", 3);
    let file = fixture("run/out_of_bounds.cu").display().to_string();
    let fault = html
        .find(&format!(
            "<span class=\"error\">memory-error</span> <code>{file}:9:10</code>"
        ))
        .expect("the fault");
    assert!(html.contains("invalid __global__ write of size 4 bytes"));
    assert!(html.contains("0 bytes after the end of &#39;cudaMalloc #1&#39; (4000 bytes)"));
    assert!(html.contains("by thread (232,0,0) in block (3,0,0)"));
    assert!(html.contains("<span class=\"hl\">    9 |     c[i] = 1.0f;</span>"));
    assert!(fault < html.find("<section class=\"kernel\"").unwrap());
    assert!(html.contains("<td>program exited with 3</td>"));
}

/// A page that cannot be written is an input error naming the file, after
/// the program ran with its own output.
#[test]
fn a_page_into_a_missing_directory_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("missing/page.html");
    let out = run_in(
        dir.path(),
        "vector_add",
        &["--format", "html", "-o", page.to_str().unwrap()],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot write the report to {}", page.display())),
        "{err}"
    );
    assert!(err.contains("No such file or directory"), "{err}");
    assert_eq!(stdout(&out), "vector_add: all 1000 elements right\n");
}

/// `report --run` takes only a run's JSON report.
#[test]
fn report_run_refuses_what_is_not_a_runs_report() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("text.json", "not json", "not JSON"),
        (
            "check.json",
            r#"{"files": [], "kernels": 3}"#,
            "not a report of `warpcheck run --format json`",
        ),
    ];
    for (name, text, says) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let out = common::run(
            warpcheck()
                .current_dir(dir.path())
                .args(["report", "--run", name, "-o", "p.html"]),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(name) && err.contains(says), "{err}");
        assert!(!dir.path().join("p.html").exists());
    }
    let out =
        common::run(
            warpcheck()
                .current_dir(dir.path())
                .args(["report", "--run", "gone.json"]),
        );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("gone.json"), "{}", stderr(&out));
}
