//! Conventions of compilers and linters on the command line: colour on a
//! terminal (`--color`, NO_COLOR), carets under tab-indented code, and
//! `--error-exitcode`.

mod common;
use common::*;

const ESC: char = '\x1b';

#[test]
fn colour_when_asked_and_never_in_a_pipe_by_default() {
    let f = fixture("cu/branches.cu");
    // Tests read stdout through a pipe: auto means plain.
    let plain = run(warpcheck().args(["check"]).arg(&f));
    assert!(stdout(&plain).contains("warning: "), "{}", stdout(&plain));
    assert!(!stdout(&plain).contains(ESC));
    let never = run(warpcheck().args(["check", "--color=never"]).arg(&f));
    assert_eq!(stdout(&never), stdout(&plain));
    // Always: clang's colours, bold magenta for the warning, a green
    // caret; an explicit choice wins over NO_COLOR (no-color.org).
    let always = run(warpcheck()
        .args(["check", "--color=always"])
        .env("NO_COLOR", "1")
        .arg(&f));
    let text = stdout(&always);
    assert!(text.contains("\x1b[1;35mwarning:\x1b[0m"), "{text:?}");
    assert!(text.contains("\x1b[1;32m^\x1b[0m"), "{text:?}");
    // Without the escapes it is the plain text.
    assert_eq!(strip_sgr(&text), stdout(&plain));
    // JSON is never coloured.
    let json = run(warpcheck()
        .args(["check", "--color=always", "--format=json"])
        .arg(&f));
    assert!(!stdout(&json).contains(ESC));
    let bad = run(warpcheck().args(["check", "--color=sometimes"]).arg(&f));
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("--color"), "{}", stderr(&bad));
}

/// `text` without SGR escapes (`ESC [ … m`).
fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == ESC {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn the_caret_sits_under_tab_indented_code() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("tabs.cu");
    // Line 3 is a tab, then `if (threadIdx.x % 2)`: the condition starts
    // at byte column 6 (tab, `i`, `f`, ` `, `(`, then `t`), which is
    // display column 13 with the tab expanded to 8 spaces.
    std::fs::write(
        &src,
        "__global__ void k(float *a) {\n\t// é\n\tif (threadIdx.x % 2)\n\t\ta[threadIdx.x] = a[threadIdx.x] * 2.0f + 1.0f;\n}\n",
    )
    .unwrap();
    let out = run(warpcheck()
        .current_dir(dir.path())
        // The one-line branch is cheap (a note by impact); this test is
        // about where the caret sits, so every warning is kept.
        .args(["check", "--min-impact", "0", "tabs.cu"]));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(" 3 | "))
        .unwrap_or_else(|| panic!("no source line 3 in:\n{text}"));
    // No tabs left, so any terminal or editor shows the same columns.
    assert_eq!(lines[at], " 3 |         if (threadIdx.x % 2)");
    // The warning's byte column (clang 19 and 22 place a branch apart).
    let col: usize = text
        .split("tabs.cu:3:")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no warning on line 3:\n{text}"));
    let raw = "\tif (threadIdx.x % 2)";
    // After the tab (8 columns) every byte is one column.
    let caret = lines[at + 1];
    assert_eq!(caret.find('^'), Some(" 3 | ".len() + 8 + col - 2), "{text}");
    assert_eq!(
        lines[at].as_bytes()[caret.find('^').unwrap()],
        raw.as_bytes()[col - 1],
        "{text}"
    );
}

#[test]
fn error_exitcode_replaces_one_for_failing_findings() {
    let f = fixture("cu/branches.cu");
    let werror = run(warpcheck().args(["check", "--werror"]).arg(&f));
    assert_eq!(werror.status.code(), Some(1), "{}", stderr(&werror));
    let custom = run(warpcheck()
        .args(["check", "--werror", "--error-exitcode=17"])
        .arg(&f));
    assert_eq!(custom.status.code(), Some(17), "{}", stderr(&custom));
    // Warnings alone do not fail the run, whatever the code.
    let lax = run(warpcheck().args(["check", "--error-exitcode=17"]).arg(&f));
    assert_eq!(lax.status.code(), Some(0), "{}", stderr(&lax));
    // Errors from the command line's --warnings-as-errors fail it too.
    let errors = run(warpcheck()
        .args([
            "check",
            "--warnings-as-errors=divergent-branch",
            "--error-exitcode=9",
        ])
        .arg(&f));
    assert_eq!(errors.status.code(), Some(9), "{}", stderr(&errors));
    // An input error is still 2.
    let missing = run(warpcheck().args([
        "check",
        "--werror",
        "--error-exitcode=17",
        "no-such-file.cu",
    ]));
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    // 0 would say success; 256 does not fit an exit status.
    for bad in ["0", "256", "x"] {
        let out = run(warpcheck()
            .args(["check", &format!("--error-exitcode={bad}")])
            .arg(&f));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--error-exitcode"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn exported_fixes_pad_the_conflicting_array_and_the_conflict_goes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("transpose.cu");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/transpose.cu"),
        &src,
    )
    .unwrap();
    let yaml = dir.path().join("fixes.yaml");
    let out = run(warpcheck()
        .args(["check", "--export-fixes"])
        .arg(&yaml)
        .arg(&src));
    assert!(
        stdout(&out).contains("[warpcheck-bank-conflict]"),
        "{}",
        stdout(&out)
    );
    // clang-tidy's fixes file, as clang-apply-replacements reads it.
    #[derive(serde::Deserialize, Debug)]
    #[serde(rename_all = "PascalCase")]
    struct Doc {
        diagnostics: Vec<Diagnostic>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(rename_all = "PascalCase")]
    struct Diagnostic {
        diagnostic_name: String,
        diagnostic_message: Message,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(rename_all = "PascalCase")]
    struct Message {
        file_offset: usize,
        replacements: Vec<Replacement>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(rename_all = "PascalCase")]
    struct Replacement {
        offset: usize,
        length: usize,
        replacement_text: String,
    }
    let doc: Doc = serde_saphyr::from_str(&std::fs::read_to_string(&yaml).unwrap()).unwrap();
    let diags = &doc.diagnostics;
    // transpose_shared reads `tile[threadIdx.x][threadIdx.y]` of a
    // `float tile[32][32]`: 128-byte rows, every row in bank 0. The padded
    // kernel's `tile[TILE][TILE + 1]` has no conflict and no fix.
    assert_eq!(diags.len(), 1, "{doc:?}");
    let d = &diags[0];
    assert_eq!(d.diagnostic_name, "warpcheck-bank-conflict");
    let text = std::fs::read_to_string(&src).unwrap();
    // The diagnostic sits at the warning's line 26.
    let at = d.diagnostic_message.file_offset;
    assert_eq!(text[..at].matches('\n').count() + 1, 26);
    let reps = &d.diagnostic_message.replacements;
    assert_eq!(reps.len(), 1);
    let r = &reps[0];
    let (offset, length) = (r.offset, r.length);
    // Inserted before the `]` of line 19's `__shared__ float tile[TILE][TILE];`.
    let fixed = format!(
        "{}{}{}",
        &text[..offset],
        r.replacement_text,
        &text[offset + length..]
    );
    assert!(
        fixed
            .lines()
            .nth(18)
            .unwrap()
            .contains("__shared__ float tile[TILE][TILE + 1];"),
        "{}",
        fixed.lines().nth(18).unwrap()
    );
    // As clang-apply-replacements would, then check again: 33-word rows
    // start in 32 different banks, the conflict is gone.
    std::fs::write(&src, fixed).unwrap();
    let again = run(warpcheck().args(["check"]).arg(&src));
    assert!(
        !stdout(&again).contains("bank-conflict"),
        "{}",
        stdout(&again)
    );
}
