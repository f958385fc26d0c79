//! Clang-style text: `file:line:col: warning: message [warpcheck-check]`,
//! then the source line and a caret when the file can be read.

use crate::finding::Finding;
use crate::ir::Position;
use std::collections::HashMap;
use std::fmt::Write;

/// Caches source files so each is read once per report.
#[derive(Default)]
pub struct SourceCache {
    files: HashMap<std::path::PathBuf, Option<Vec<String>>>,
}

impl SourceCache {
    fn lines(&mut self, path: &std::path::Path) -> Option<&Vec<String>> {
        self.files
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                std::fs::read_to_string(path)
                    .ok()
                    .map(|t| t.lines().map(str::to_string).collect())
            })
            .as_ref()
    }

    /// The text of `pos`'s line, if the file can be read.
    pub fn line(&mut self, pos: &Position) -> Option<String> {
        let n = pos.line.checked_sub(1)? as usize;
        self.lines(&pos.path)?.get(n).cloned()
    }

    /// `pos`'s line with up to `around` lines either side, numbered from 1;
    /// empty if the file cannot be read.
    pub fn excerpt(&mut self, pos: &Position, around: u32) -> Vec<(u32, String)> {
        let Some(lines) = self.lines(&pos.path) else {
            return Vec::new();
        };
        let first = pos.line.saturating_sub(around).max(1);
        (first..=pos.line.saturating_add(around))
            .filter_map(|n| Some((n, lines.get(n as usize - 1)?.clone())))
            .collect()
    }
}

/// Renders one finding with its hints; `explain` adds the dependence
/// chain as notes.
pub fn render(f: &Finding, explain: bool, cache: &mut SourceCache) -> String {
    let mut out = String::new();
    let location = match &f.pos {
        Some(p) if p.col > 0 => format!("{}:{}:{}", p.file, p.line, p.col),
        Some(p) => format!("{}:{}", p.file, p.line),
        None => format!("in function '{}'", f.function),
    };
    let _ = writeln!(
        out,
        "{location}: {}: {} [{}]",
        f.severity.name(),
        f.message,
        f.tag()
    );
    if let Some(p) = &f.pos {
        if let Some(src) = cache.line(p) {
            let gutter = p.line.to_string().len();
            let _ = writeln!(out, " {} | {}", p.line, src);
            if p.col > 0 {
                // Keep tabs so the caret lines up under the source text.
                let pad: String = src
                    .chars()
                    .take(p.col as usize - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                let _ = writeln!(out, " {} | {pad}^", " ".repeat(gutter));
            }
        }
    }
    // Hints always; the dependence chain with `--explain`.
    for n in f.notes.iter().filter(|n| explain || n.starts_with("hint:")) {
        let _ = writeln!(out, "{location}: note: {n}");
    }
    out
}
