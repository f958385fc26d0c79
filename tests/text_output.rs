//! The clang-style text format: location, message, tag, source and caret.

mod common;
use common::*;

#[test]
fn warning_with_source_line_and_caret() {
    let f = fixture("cu/branches.cu");
    // `--min-impact=0`: line 3's branch guards one store, a cheap note by
    // default; the format of a warning is what is checked here.
    let out = run(warpcheck()
        .args(["check", "--explain", "--min-impact=0"])
        .arg(&f));
    let text = stdout(&out);
    // Clang records the path relative to the working directory when it can.
    let loc = "tests/fixtures/cu/branches.cu:3:7: warning: ";
    let line = text
        .lines()
        .position(|l| l.contains(loc))
        .unwrap_or_else(|| panic!("no warning at {loc} in:\n{text}"));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[line].ends_with("[warpcheck-divergent-branch]"));
    // 256 threads: 8 warps, each with odd and even lanes.
    assert!(
        lines[line].contains("diverges in 8 of 8 warps"),
        "{}",
        lines[line]
    );
    // ` 3 |   if (threadIdx.x % 2) ...` then the caret under column 7.
    assert!(
        lines[line + 1].starts_with(" 3 |   if (threadIdx.x % 2)"),
        "{}",
        lines[line + 1]
    );
    assert_eq!(lines[line + 2], format!("   | {}^", " ".repeat(6)));
    // A hint always; --explain adds the dependence chain from the source.
    assert!(
        lines[line + 3].contains("note: hint:"),
        "{}",
        lines[line + 3]
    );
    assert!(
        lines[line + 4].contains("note: dependence: threadIdx.x →"),
        "{}",
        lines[line + 4]
    );
    // The other warning: line 20, a branch on the lane id inline asm reads.
    assert!(
        stderr(&out).contains("2 warnings generated."),
        "{}",
        stderr(&out)
    );
}

#[test]
fn checks_and_explain_commands() {
    let out = run(warpcheck().arg("checks"));
    for name in ["divergent-branch", "uncoalesced-access", "bank-conflict"] {
        assert!(stdout(&out).contains(name), "{}", stdout(&out));
    }
    // Each explains itself: what it finds, the model, an example with
    // its fix, and what to do.
    for name in ["divergent-branch", "bank-conflict", "uncoalesced-access"] {
        let out = run(warpcheck().args(["explain", name]));
        assert_eq!(out.status.code(), Some(0));
        let text = stdout(&out);
        for part in [
            "## What it does",
            "## The model",
            "## Example",
            "Fix:",
            "## What to do",
        ] {
            assert!(text.contains(part), "{name}: no {part} in {text}");
        }
    }
    // The retired name still explains what replaced it.
    let out = run(warpcheck().args(["explain", "thread-dependent-branch"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("warps"));
}

#[test]
fn print_plugin_path_finds_the_library() {
    let out = run(warpcheck().arg("print-plugin-path"));
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).trim().ends_with("libwarpcheck.so"));
}

#[test]
fn kernels_on_several_threads_give_the_same_report() {
    // One file: `-j4` analyses its kernels on four threads, `-j1` one at a
    // time. The report is the same, kernels in the file's order.
    for f in [
        "cu/sim_ops.cu",
        "cu/templated_steps.cu",
        "cu/acf_branches.cu",
    ] {
        let report = |j: &str| {
            let out = run(warpcheck()
                .args(["check", "--format", "json", "--explain", "-j", j])
                .arg(fixture(f)));
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            stdout(&out)
        };
        let one = report("1");
        assert!(one.contains("\"kernels\""), "{one}");
        assert_eq!(one, report("4"), "{f}");
    }
}
