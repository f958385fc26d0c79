//! The documentation held against the tool. The commands README.md and
//! docs/ show on files of this repository (the bundled examples, the
//! fixtures) run and exit as the docs say (0, or the `# exit N` their
//! comment gives), and print the diagnostics quoted under them; the docs
//! speak to users (no issue numbers, no paths of one machine); their links
//! lead to files; the changelog's top entry is the crate's version. The
//! quoted output is clang 19's, held in the default (LLVM 19) build.

mod common;
use common::*;

use std::path::Path;

/// The documents users read.
fn documents() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec!["README.md".to_string(), "CHANGELOG.md".to_string()];
    let mut guides: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    guides.sort();
    docs.extend(guides);
    docs
}

fn read(doc: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc)).unwrap()
}

/// A document's lines, each marked with whether it is code: a fenced
/// block, or a block indented by four spaces after a blank line.
fn lines_with_code(text: &str) -> Vec<(usize, bool, &str)> {
    let mut out = Vec::new();
    let (mut fenced, mut indented, mut blank_before) = (false, false, true);
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push((n + 1, true, line));
            continue;
        }
        let blank = line.trim().is_empty();
        if line.starts_with("    ") && (indented || blank_before) {
            indented = true;
        } else if !blank {
            indented = false;
        }
        out.push((n + 1, fenced || indented, line));
        blank_before = blank;
    }
    out
}

/// The code blocks of a document: each its first line number and lines.
fn code_blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut blocks: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut open = false;
    for (n, code, line) in lines_with_code(text) {
        if code && !line.trim().is_empty() {
            if !open {
                blocks.push((n, Vec::new()));
                open = true;
            }
            blocks.last_mut().unwrap().1.push(line.trim_start());
        } else if !code {
            open = false;
        }
    }
    blocks
}

/// A command a document shows: its words after the program, the exit code
/// it says it ends with, and the diagnostics quoted under it.
struct Shown {
    place: String,
    words: Vec<String>,
    exit: i32,
    quoted: Vec<String>,
}

/// `target/release/warpcheck ARGS` or `warpcheck ARGS`, continued over
/// lines that end in `\`: the line after the program, and how many lines
/// it took.
fn command_at(lines: &[&str]) -> Option<(String, usize)> {
    let first = lines[0];
    let rest = first
        .strip_prefix("target/release/warpcheck ")
        .or_else(|| first.strip_prefix("warpcheck "))?;
    let mut text = rest.to_string();
    let mut used = 1;
    while text.trim_end().ends_with('\\') && used < lines.len() {
        text = text.trim_end().trim_end_matches('\\').to_string() + " " + lines[used];
        used += 1;
    }
    Some((text, used))
}

/// Whether a line is a diagnostic as `check` prints it (`file:line[:col]:
/// warning|note|error: …`).
fn is_diagnostic(line: &str) -> bool {
    [": warning: ", ": note: ", ": error: "].iter().any(|kind| {
        line.split_once(kind).is_some_and(|(place, _)| {
            let mut parts = place.split(':');
            let file = parts.next().unwrap_or("");
            let numbers: Vec<&str> = parts.collect();
            (file.ends_with(".cu") || file.ends_with(".ll"))
                && (1..=2).contains(&numbers.len())
                && numbers.iter().all(|n| n.parse::<u32>().is_ok())
        })
    })
}

/// The commands of `doc` that run on files of this repository alone: every
/// word naming a path (a `/`, or a source or report file's extension) but an
/// output names one that exists, one of them an input; no shell syntax.
fn runnable_commands(doc: &str) -> Vec<Shown> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = read(doc);
    let mut shown = Vec::new();
    for (start, lines) in code_blocks(&text) {
        let mut i = 0;
        while i < lines.len() {
            let Some((line, used)) = command_at(&lines[i..]) else {
                i += 1;
                continue;
            };
            let place = format!("{doc}:{}", start + i);
            i += used;
            let (command, comment) = match line.split_once(" # ") {
                Some((c, note)) => (c, note),
                None => (line.as_str(), ""),
            };
            if command.contains(['$', '|', '>', '<', ';', '&', '*']) {
                continue;
            }
            let words = shlex::split(command).unwrap_or_else(|| panic!("{place}: bad quoting"));
            let is_input = |w: &str| [".cu", ".ll", ".bc"].iter().any(|x| w.ends_with(x));
            let names_path = |w: &str| {
                !w.starts_with('-')
                    && (w.contains('/')
                        || is_input(w)
                        || w.ends_with(".json")
                        || w.ends_with(".yaml"))
            };
            let outputs: Vec<&String> = words
                .windows(2)
                .filter(|p| ["-o", "--export-fixes"].contains(&p[0].as_str()))
                .map(|p| &p[1])
                .collect();
            let paths: Vec<&String> = words
                .iter()
                .filter(|w| names_path(w) && !outputs.contains(w))
                .collect();
            let runs_here = paths.iter().any(|w| is_input(w))
                && paths.iter().all(|w| root.join(w.as_str()).exists())
                && !words.iter().any(|w| w == "-p");
            if !runs_here {
                continue;
            }
            let exit = comment
                .split_whitespace()
                .skip_while(|w| *w != "exit")
                .nth(1)
                .map_or(0, |n| n.trim_end_matches([':', ',', ')']).parse().unwrap());
            // The diagnostics quoted under it, up to the next command.
            let quoted = lines[i..]
                .iter()
                .take_while(|l| command_at(&[**l]).is_none())
                .filter(|l| is_diagnostic(l))
                .map(|l| l.to_string())
                .collect();
            shown.push(Shown {
                place,
                words,
                exit,
                quoted,
            });
        }
    }
    shown
}

#[test]
fn the_commands_the_docs_show_on_the_examples_run_as_they_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shown: Vec<Shown> = documents()
        .iter()
        .flat_map(|d| runnable_commands(d))
        .collect();
    // The user guide's opening commands, its warnings and its cheap note
    // are among them, and so are the models' time and simulate examples.
    let guide = shown
        .iter()
        .filter(|s| s.place.starts_with("docs/user-guide.md"));
    assert!(
        guide.count() >= 6,
        "the user guide shows fewer commands than it did"
    );
    assert!(shown.iter().any(|s| s.words[0] == "simulate"));
    assert!(shown.iter().any(|s| s.words[0] == "time"));
    let mut failures = Vec::new();
    for s in &shown {
        // Shared scratch files stay out of the tree: outputs go to a
        // temporary directory.
        let scratch = tempfile::tempdir().unwrap();
        let words: Vec<String> = s
            .words
            .iter()
            .zip(std::iter::once(&String::new()).chain(&s.words))
            .map(|(w, before)| {
                if before == "-o" || before == "--export-fixes" {
                    scratch.path().join(w).display().to_string()
                } else {
                    w.clone()
                }
            })
            .collect();
        let out = run(warpcheck()
            .current_dir(root)
            .args(&words)
            .env("NO_COLOR", "1"));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        if out.status.code() != Some(s.exit) {
            failures.push(format!(
                "{}: `warpcheck {}` exited {:?}, the docs say {}:\n{said}",
                s.place,
                s.words.join(" "),
                out.status.code(),
                s.exit
            ));
        }
        // The output the docs quote is clang 19's (the default build): an
        // LLVM 22 build places some branches at other columns and emits
        // other instructions, so there only the exit codes are held.
        let quoted = if warpcheck::ir::major::LLVM_MAJOR == 19 {
            &s.quoted[..]
        } else {
            &[]
        };
        for q in quoted {
            if !said.lines().any(|l| l == q) {
                failures.push(format!(
                    "{}: `warpcheck {}` does not print the line the docs quote:\n  {q}\nit printed:\n{said}",
                    s.place,
                    s.words.join(" ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn json_carries_notes_only_with_notes() {
    // The user guide: `--notes` prints the notes too, and JSON carries them
    // only with `--notes` (or `--sites`). The odd/even branch of
    // divergence.cu is the guide's cheap note.
    let notes = |extra: &[&str]| {
        let out = run(warpcheck()
            .args(["check", "--format", "json"])
            .args(extra)
            .arg(fixture("../../examples/divergence.cu")));
        let json = ok_json(&out);
        let findings = json["findings"].as_array().unwrap().clone();
        findings
            .into_iter()
            .filter(|f| f["severity"] == "note" && f["line"] == 15)
            .count()
    };
    assert_eq!(notes(&[]), 0);
    assert_eq!(notes(&["--notes"]), 1);
}

/// The word after `issue`/`issues` when it is a number (`23`, `#23`).
fn issue_numbers(prose: &str) -> Vec<String> {
    let words: Vec<&str> = prose.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| {
            let word = w[0].trim_start_matches(['(', '`']).to_ascii_lowercase();
            let next = w[1].trim_start_matches('#');
            (word == "issue" || word == "issues") && next.starts_with(|c: char| c.is_ascii_digit())
        })
        .map(|w| w.join(" "))
        .collect()
}

/// Absolute paths in `line` other than system tools' and devices', and
/// the `/path/to/…` placeholder.
fn machine_paths(line: &str) -> Vec<String> {
    const ALLOWED: [&str; 5] = [
        "/usr/lib/llvm-",
        "/usr/local/cuda",
        "/usr/bin/",
        "/dev/",
        "/path/to/",
    ];
    let mut found = Vec::new();
    let bytes = line.as_bytes();
    for (i, _) in line.match_indices('/') {
        let starts_path = i == 0 || b" `'\"(=:".contains(&bytes[i - 1]);
        let next_is_name = bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphabetic());
        // `://` of a URL and `a/b` inside a word are not paths.
        if !starts_path || !next_is_name || line[..i].ends_with(':') && line[i..].starts_with("//")
        {
            continue;
        }
        let path: String = line[i..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !"`'\")],;".contains(*c))
            .collect();
        // A lone `/word` is a ratio or an option (`sectors/request`), not a path.
        if path.matches('/').count() >= 2 && !ALLOWED.iter().any(|a| path.starts_with(a)) {
            found.push(path);
        }
    }
    found
}

#[test]
fn the_docs_name_no_issue_numbers_and_no_machine_paths() {
    let mut bad = Vec::new();
    for doc in documents() {
        let text = read(&doc);
        for (n, code, line) in lines_with_code(&text) {
            // Tool output quoted in code may say "latency and issue 5406".
            if !code {
                for i in issue_numbers(line) {
                    bad.push(format!("{doc}:{n}: an issue number: {i}"));
                }
            }
            for p in machine_paths(line) {
                bad.push(format!("{doc}:{n}: a path of one machine: {p}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_guard_finds_what_it_must() {
    assert_eq!(issue_numbers("as (issue 23) says"), ["(issue 23)"]);
    assert_eq!(issue_numbers("see issues #24 and 25"), ["issues #24"]);
    assert!(issue_numbers("the issue's targets; an issue rate").is_empty());
    assert_eq!(
        machine_paths("scripts/suites.sh /work/suites-src/rodinia"),
        ["/work/suites-src/rodinia"]
    );
    assert_eq!(
        machine_paths("PREFIX=/opt/warpcheck/x"),
        ["/opt/warpcheck/x"]
    );
    assert!(
        machine_paths("`/usr/lib/llvm-19/bin`, `/usr/local/cuda`, a/b/c, 32 B/request").is_empty()
    );
    let blocks = code_blocks("text\n\n    code 1\n    code 2\n\nmore text\n```\nfenced\n```\n");
    assert_eq!(blocks[0], (3, vec!["code 1", "code 2"]));
    assert_eq!(blocks[1].1, ["```", "fenced", "```"]);
}

#[test]
fn the_changelog_starts_with_this_version() {
    let changelog = read("CHANGELOG.md");
    let top = changelog
        .lines()
        .find_map(|l| l.strip_prefix("## "))
        .expect("CHANGELOG.md has an entry");
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        top.split_whitespace().next() == Some(version),
        "CHANGELOG.md's top entry is `{top}`, Cargo.toml's version {version}"
    );
}

#[test]
fn the_docs_links_lead_to_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for doc in documents()
        .into_iter()
        .chain(["ARCHITECTURE.md".to_string()])
    {
        let dir = root.join(&doc).parent().unwrap().to_path_buf();
        let text = read(&doc);
        for (n, code, line) in lines_with_code(&text) {
            if code {
                continue;
            }
            for (at, _) in line.match_indices("](") {
                let target: String = line[at + 2..].chars().take_while(|&c| c != ')').collect();
                let path = target.split('#').next().unwrap_or("");
                if path.is_empty() || path.contains("://") {
                    continue;
                }
                if !dir.join(path).exists() {
                    broken.push(format!("{doc}:{n}: {target}"));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}
