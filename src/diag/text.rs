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
                crate::files::source_text(path).map(|t| t.lines().map(str::to_string).collect())
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

/// Whether text output is coloured, as clang colours it.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Colour {
    #[default]
    Plain,
    Ansi,
}

impl Colour {
    /// `text` in the SGR style `code` (`1;35` bold magenta), if coloured.
    fn paint(self, code: &str, text: &str) -> String {
        match self {
            Colour::Plain => text.to_string(),
            Colour::Ansi => format!("\x1b[{code}m{text}\x1b[0m"),
        }
    }
}

/// Clang's colours: bold location and message, the severity in its own
/// colour, a green caret.
fn severity_style(name: &str) -> &'static str {
    match name {
        "error" => "1;31",
        "warning" => "1;35",
        _ => "1;30",
    }
}

/// Tab stops as clang's (and most terminals') are: every 8 columns.
const TAB: usize = 8;

/// A source line with tabs expanded, and the display column of byte
/// column `col` (1-based, as debug info counts) in it: the caret then sits
/// under its character whatever the terminal's tab stops and however many
/// bytes the characters before it take.
fn expand(src: &str, col: usize) -> (String, usize) {
    let mut out = String::with_capacity(src.len());
    let mut width = 0;
    let mut caret = None;
    for (at, c) in src.char_indices() {
        if caret.is_none() && at + 1 >= col {
            caret = Some(width);
        }
        if c == '\t' {
            let n = TAB - width % TAB;
            out.extend(std::iter::repeat_n(' ', n));
            width += n;
        } else {
            out.push(c);
            width += 1;
        }
    }
    (out, caret.unwrap_or(width))
}

/// Renders one finding with its hints; `explain` adds the dependence
/// chain as notes.
pub fn render(f: &Finding, explain: bool, cache: &mut SourceCache) -> String {
    render_styled(f, explain, cache, Colour::Plain)
}

/// [`render`] in `colour`.
pub fn render_styled(
    f: &Finding,
    explain: bool,
    cache: &mut SourceCache,
    colour: Colour,
) -> String {
    let mut out = String::new();
    let location = match &f.pos {
        Some(p) if p.col > 0 => format!("{}:{}:{}", p.file, p.line, p.col),
        Some(p) => format!("{}:{}", p.file, p.line),
        None => format!("in function '{}'", f.function),
    };
    let sev = f.severity.name();
    let _ = writeln!(
        out,
        "{}: {} {}",
        colour.paint("1", &location),
        colour.paint(severity_style(sev), &format!("{sev}:")),
        colour.paint("1", &format!("{} [{}]", f.message, f.tag())),
    );
    if let Some(p) = &f.pos {
        if let Some(src) = cache.line(p) {
            let gutter = p.line.to_string().len();
            let (shown, caret) = expand(&src, p.col as usize);
            let _ = writeln!(out, " {} | {}", p.line, shown);
            if p.col > 0 {
                let _ = writeln!(
                    out,
                    " {} | {}{}",
                    " ".repeat(gutter),
                    " ".repeat(caret),
                    colour.paint("1;32", "^")
                );
            }
        }
    }
    // Hints and an assumed shape always; the dependence chain with
    // `--explain`.
    let shown: Vec<&String> = match explain {
        true => f.notes.iter().collect(),
        false => f.shown_notes().collect(),
    };
    for n in shown {
        let _ = writeln!(
            out,
            "{}: {} {n}",
            colour.paint("1", &location),
            colour.paint(severity_style("note"), "note:")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_expand_and_the_caret_follows() {
        // `\tif (x)`: the `i` is byte column 2, display column 8.
        assert_eq!(expand("\tif (x)", 2), ("        if (x)".to_string(), 8));
        // A tab after 3 characters reaches column 8, not 11.
        assert_eq!(expand("abc\tx", 5), ("abc     x".to_string(), 8));
        // `é` is two bytes: byte column 4 (`x`) is display column 2.
        assert_eq!(expand("ée x", 5), ("ée x".to_string(), 3));
        assert_eq!(expand("éx", 3), ("éx".to_string(), 1));
    }

    #[test]
    fn colours_only_when_asked() {
        assert_eq!(Colour::Plain.paint("1;35", "warning:"), "warning:");
        assert_eq!(
            Colour::Ansi.paint("1;35", "warning:"),
            "\x1b[1;35mwarning:\x1b[0m"
        );
    }
}
