//! What the simulator's sanitizer found in a launch, reported as
//! compute-sanitizer reports it: on stderr as the program runs, and in
//! the run's report (`errors`, kinds `race` and `uninitialized-read`).
//! Each race is reported once per kernel and pair of source places, each
//! unwritten read once per kernel and place, however many launches,
//! threads and bytes repeat it. Neither stops the program nor sets an
//! error: CUDA would not notice them.

use super::report::{FaultJson, Measured, RelatedJson};
use crate::ir::Position;
use crate::sim::sanitize::{place, Findings, Race, UnwrittenRead};
use std::collections::HashSet;

/// The findings reported so far, by kernel and places.
#[derive(Default)]
pub struct Reported {
    seen: HashSet<(String, String, String)>,
}

impl Reported {
    /// Reports what is new in one launch of `kernel`.
    pub fn launch(&mut self, kernel: &str, found: &Findings, measured: &mut Measured) {
        for r in &found.races {
            let (a, b) = (place(&r.first.pos), place(&r.second.pos));
            let key = match a <= b {
                true => (kernel.to_string(), a, b),
                false => (kernel.to_string(), b, a),
            };
            if self.seen.insert(key) {
                eprintln!(
                    "========= warpcheck run: race in {kernel}: {}",
                    r.describe()
                );
                measured.error(race_json(kernel, r));
            }
        }
        for u in &found.reads {
            let key = (kernel.to_string(), place(&u.pos), String::new());
            if self.seen.insert(key) {
                eprintln!("========= warpcheck run: uninitialized-read in {kernel}");
                eprintln!("=========     {}: {}", place(&u.pos), u.describe());
                eprintln!("=========     {}", u.who());
                measured.error(read_json(kernel, u));
            }
        }
    }
}

fn parts(pos: &Option<Position>) -> (Option<String>, Option<u32>, Option<u32>) {
    match pos {
        Some(p) => (Some(p.file.clone()), Some(p.line), Some(p.col)),
        None => (None, None, None),
    }
}

fn race_json(kernel: &str, r: &Race) -> FaultJson {
    let (file, line, column) = parts(&r.first.pos);
    let (other_file, other_line, other_column) = parts(&r.second.pos);
    FaultJson {
        kernel: kernel.to_string(),
        kind: "race",
        message: format!("shared-memory race: {}", r.describe_from_first()),
        file,
        line,
        column,
        thread: Some(r.first.thread),
        block: Some(r.block),
        related: Some(RelatedJson {
            file: other_file,
            line: other_line,
            column: other_column,
            thread: r.second.thread,
            access: r.second.kind.name(),
        }),
        access: Some(r.first.kind.name()),
    }
}

fn read_json(kernel: &str, u: &UnwrittenRead) -> FaultJson {
    let (file, line, column) = parts(&u.pos);
    FaultJson {
        kernel: kernel.to_string(),
        kind: "uninitialized-read",
        message: u.describe(),
        file,
        line,
        column,
        thread: Some(u.thread),
        block: Some(u.block),
        related: None,
        access: None,
    }
}
