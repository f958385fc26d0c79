//! Explanations and the HTML report name values as the user wrote them:
//! source variables where debug info has them, a description (`the load at
//! line 12`, `the shared array As`) otherwise; never an IR name (`%add5`)
//! or a mangled symbol (`_ZZ12matmul_tiledPKfS0_PfiE2As`).

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// Every example and every fixture warpcheck analyses (the two malformed
/// modules are left out: their error messages quote the bad IR text).
fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = cu_files(&root.join("examples"));
    for dir in [
        "cu",
        "hangs",
        "time",
        "projects/nvcc_db/src",
        "projects/report/src",
    ] {
        files.extend(cu_files(&fixture(dir)));
    }
    for dir in ["ir", "regress", "time"] {
        let mut lls: Vec<PathBuf> = std::fs::read_dir(fixture(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "ll"))
            .filter(|p| !p.ends_with("invalid.ll") && !p.ends_with("malformed.ll"))
            .collect();
        lls.sort();
        files.extend(lls);
    }
    files
}

/// IR value names (`%add5`, `%12`) and mangled symbols (`_Z…`) in `text`.
fn ir_names(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let word = |from: usize| {
            text[from..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .next()
                .unwrap_or("")
        };
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if b == b'%' && !word(i + 1).is_empty() {
            found.push(format!("%{}", word(i + 1)));
        } else if b == b'_' && starts_word && mangled(&text[i..]) {
            found.push(word(i).to_string());
        }
    }
    found
}

/// An Itanium symbol: `_Z` and a length (`_Z6kernelPf`), a nested (`N`),
/// local (`Z`), substituted (`S`) or internal (`L`) name.
fn mangled(text: &str) -> bool {
    text.strip_prefix("_Z")
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_digit() || "NZSL".contains(c))
}

#[test]
fn the_scanner_finds_ir_names() {
    // The text the old explanations printed, and what they print now.
    assert_eq!(
        ir_names("threadIdx.x → %add5 → %12 (load) in [@_ZZ12matmul_tiledPKfS0_PfiE2As]"),
        ["%add5", "%12", "_ZZ12matmul_tiledPKfS0_PfiE2As"]
    );
    assert!(ir_names("threadIdx.x → i → the load at line 12, 50% of _Zero").is_empty());
}

/// Lines that quote the user's source (` 12 |   x = a % b;`, the caret
/// line under it) are the user's text, not ours.
fn is_excerpt(line: &str) -> bool {
    line.trim_start()
        .split_once('|')
        .is_some_and(|(n, _)| n.trim().chars().all(|c| c.is_ascii_digit()))
}

#[test]
fn explanations_name_source_values() {
    let out = run(warpcheck()
        .args(["check", "--explain", "--notes", "--block-dim", "256"])
        .args(inputs()));
    let text = stdout(&out) + &stderr(&out);
    assert!(
        text.contains("note: dependence:"),
        "no explanations at all: {text}"
    );
    let bad: Vec<(&str, Vec<String>)> = text
        .lines()
        .filter(|l| !is_excerpt(l))
        .map(|l| (l, ir_names(l)))
        .filter(|(_, names)| !names.is_empty())
        .collect();
    assert!(bad.is_empty(), "IR names in explanations: {bad:#?}");
    // Debug info names them: examples/histogram.cu line 6 is
    // `for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; ...)`,
    // compared at its `<` (column 57 for clang 19).
    assert!(
        text.contains("histogram.cu:6:3: note: dependence: threadIdx.x → i → the comparison at 6:"),
        "{text}"
    );
    // histogram_shared's `__shared__ unsigned local[256]` in a per-lane
    // address: the array by its name, the bin by the load that read it
    // (`data[i]`, column 22 of `atomicAdd(&local[data[i]], 1u)`).
    assert!(
        text.contains("histogram.cu:19:5: note: per lane: [local] + 4·?(the load at 19:22)"),
        "{text}"
    );
}

#[test]
fn the_report_names_source_values() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("names.html");
    let out = run(warpcheck()
        .args(["report", "--no-simulate", "-o"])
        .arg(&page)
        .args(inputs()));
    assert!(page.exists(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let text = visible_text(&html);
    assert!(text.contains("dependence:"), "no explanations on the page");
    let names = ir_names(&text);
    assert!(names.is_empty(), "IR names on the page: {names:?}");
    // transpose.cu's `__shared__ float tile[32][32]` in a site's address:
    // 128 bytes a row, so threadIdx.x strides by 128 and threadIdx.y by 4.
    assert!(text.contains("128·tid.x + 4·tid.y + [tile]"), "{text}");
}

/// The page's text without tags, styles, scripts and source excerpts
/// (`<pre>`, the user's code).
fn visible_text(html: &str) -> String {
    let mut page = html.to_string();
    for (open, close) in [
        ("<style", "</style>"),
        ("<script", "</script>"),
        ("<pre", "</pre>"),
    ] {
        page = without(&page, open, close);
    }
    let mut text = String::new();
    let mut in_tag = false;
    for c in page.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// `text` with every `open … close` span removed.
fn without(text: &str, open: &str, close: &str) -> String {
    let mut kept = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        kept.push_str(&rest[..at]);
        rest = rest[at..]
            .find(close)
            .map_or("", |end| &rest[at + end + close.len()..]);
    }
    kept.push_str(rest);
    kept
}

/// RaCuda's `reduce2a` compares `tid < s` with `s = blockDim.x / (2 * d)`
/// while the loop counts `d`: the sweep's rows are values of `s`, so the
/// warning names `s` (with the debug info `--explain` compiles with) or
/// describes the division, never the ACF's rendering of it (brackets and
/// `% 4294967296`). Clang 19's code: clang 22 shifts by `cttz(2 * d)`
/// instead, which the sweep does not evaluate (`tests/llvm22_parity.rs`).
#[test]
fn a_swept_value_is_named_as_the_source_names_it() {
    let f = fixture("cu/cost_racuda.cu");
    let line = |args: &[&str]| -> String {
        let out = run(warpcheck()
            .args(["check", "--min-impact", "0", "--clang", "clang-19"])
            .args(args)
            .arg(&f));
        stdout(&out)
            .lines()
            .find(|l| l.contains("cost_racuda.cu:62:") && l.contains("warning:"))
            .unwrap_or_else(|| panic!("no warning at line 62:\n{}", stdout(&out)))
            .to_string()
    };
    let named = line(&["--explain"]);
    assert!(named.contains("for s = 16..1"), "{named}");
    let plain = line(&[]);
    let message = plain.split(" [warpcheck-").next().unwrap();
    assert!(
        !message.contains('[') && !message.contains("4294967296"),
        "{plain}"
    );
    assert!(plain.contains("= 16..1"), "{plain}");
}
