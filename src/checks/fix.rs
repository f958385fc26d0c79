//! A check's mechanical fix, as clang-tidy exports one (`--export-fixes`):
//! the diagnostic and the text edits that resolve it. Each check that has
//! one computes it in its own file ([`super::Check::fix`]); the CLI only
//! collects and writes them.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Reads a source file a finding names (the caller decides how: the CLI
/// reads it from disk within its size limit).
pub type SourceReader<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// One text edit: insert or replace `length` bytes at `offset` (its
/// fields named as clang-tidy's YAML names them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Replacement {
    #[serde(rename = "FilePath")]
    pub file: PathBuf,
    #[serde(rename = "Offset")]
    pub offset: usize,
    #[serde(rename = "Length")]
    pub length: usize,
    #[serde(rename = "ReplacementText")]
    pub text: String,
}

/// A diagnostic with its fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub name: String,
    pub message: String,
    pub file: PathBuf,
    /// Byte offset of the diagnostic's position in `file`.
    pub offset: usize,
    pub level: &'static str,
    pub replacements: Vec<Replacement>,
}

/// The byte offset of 1-based `line`, `col` (a byte column, as debug
/// info counts).
pub fn line_col_offset(text: &str, line: u32, col: u32) -> Option<usize> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)? as usize)
        .map(str::len)
        .sum();
    Some(start + col.saturating_sub(1) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_bytes() {
        let src = "ab\ncdé\nfg\n";
        assert_eq!(line_col_offset(src, 1, 1), Some(0));
        // Line 3 starts after "ab\n" (3) and "cdé\n" (5: é is 2 bytes).
        assert_eq!(line_col_offset(src, 3, 2), Some(3 + 5 + 1));
    }
}
