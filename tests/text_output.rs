//! The clang-style text format: location, message, tag, source and caret.

mod common;
use common::*;

#[test]
fn warning_with_source_line_and_caret() {
    let f = fixture("cu/branches.cu");
    let out = run(warpcheck().args(["check", "--explain"]).arg(&f));
    let text = stdout(&out);
    // Clang records the path relative to the working directory when it can.
    let loc = "tests/fixtures/cu/branches.cu:3:7: warning: ";
    let line = text
        .lines()
        .position(|l| l.contains(loc))
        .unwrap_or_else(|| panic!("no warning at {loc} in:\n{text}"));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[line].ends_with("[warpcheck-thread-dependent-branch]"));
    assert!(lines[line].contains("threadIdx.x"));
    // ` 3 |   if (threadIdx.x % 2) ...` then the caret under column 7.
    assert!(
        lines[line + 1].starts_with(" 3 |   if (threadIdx.x % 2)"),
        "{}",
        lines[line + 1]
    );
    assert_eq!(lines[line + 2], format!("   | {}^", " ".repeat(6)));
    // --explain adds the dependence chain, starting at the source.
    assert!(
        lines[line + 3].contains("note: dependence: threadIdx.x →"),
        "{}",
        lines[line + 3]
    );
    assert!(stderr(&out).contains("warnings generated."));
}

#[test]
fn checks_and_explain_commands() {
    let out = run(warpcheck().arg("checks"));
    assert!(stdout(&out).contains("thread-dependent-branch"));
    let out = run(warpcheck().args(["explain", "thread-dependent-branch"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("blockIdx"));
}

#[test]
fn print_plugin_path_finds_the_library() {
    let out = run(warpcheck().arg("print-plugin-path"));
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).trim().ends_with("libwarpcheck.so"));
}
