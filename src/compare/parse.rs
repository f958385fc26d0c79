//! Reads what `opt -passes='print<uniformity>'` prints.
//!
//! Per function LLVM 19 prints (to stderr):
//!
//! ```text
//! UniformityInfo for function '_Z6helperiPi':
//! DIVERGENT ARGUMENTS:
//!   DIVERGENT: i32 %v
//! CYCLES WITH DIVERGENT EXIT:
//!   depth=1: entries(for.body) if.end3 if.then
//!
//! BLOCK entry
//! DEFINITIONS
//!   DIVERGENT:   %cmp = icmp sgt i32 %v, 3, !dbg !14
//!                %x = add i32 %v, 1
//! TERMINATORS
//!   DIVERGENT:   br i1 %cmp, label %if.then, label %if.end, !dbg !15
//! END BLOCK
//! ```
//!
//! Every non-terminator instruction of a block is one entry under
//! DEFINITIONS, in order, marked or padded to the same column; a block's
//! terminator is divergent when its entry is marked. Entries start at
//! column 15 (`DIVERGENT:` plus padding, or spaces); anything indented
//! differently continues the previous entry (a `switch` prints its cases on
//! lines of their own). A function where nothing is divergent gets only
//! `ALL VALUES UNIFORM`. Sections this parser does not know are skipped.

use std::collections::HashMap;

const MARK: &str = "  DIVERGENT:";
/// The column instruction text starts at, after the mark or padding.
const ENTRY_COLUMN: usize = 15;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlvmUniformity {
    /// Keyed by the function's symbol name.
    pub funcs: HashMap<String, LlvmFunction>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlvmFunction {
    /// Names (without `%`) of the parameters LLVM assumes divergent.
    pub divergent_args: Vec<String>,
    pub blocks: Vec<LlvmBlock>,
    /// Block names of each cycle with a divergent exit.
    pub divergent_exit_cycles: Vec<Vec<String>>,
    /// Block names of each cycle LLVM assumes wholly divergent.
    pub divergent_cycles: Vec<Vec<String>>,
    /// LLVM found nothing divergent (and then prints no blocks).
    pub all_uniform: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlvmBlock {
    pub name: String,
    /// Each non-terminator instruction: divergent, and its text.
    pub defs: Vec<(bool, String)>,
    pub terminator_divergent: bool,
}

#[derive(Copy, Clone, PartialEq)]
enum Section {
    Other,
    Args,
    ExitCycles,
    DivergentCycles,
    Defs,
    Terms,
}

/// Parses the whole output; never fails (unknown lines are ignored).
pub fn parse(text: &str) -> LlvmUniformity {
    let mut out = LlvmUniformity::default();
    let mut current: Option<(String, LlvmFunction)> = None;
    let mut section = Section::Other;
    let mut terminator_seen = false;
    for line in text.lines() {
        if let Some(name) = function_header(line) {
            if let Some((n, f)) = current.take() {
                out.funcs.insert(n, f);
            }
            current = Some((name.to_string(), LlvmFunction::default()));
            section = Section::Other;
            continue;
        }
        let Some((_, func)) = current.as_mut() else {
            continue;
        };
        match line.trim_end() {
            "DIVERGENT ARGUMENTS:" => section = Section::Args,
            "CYCLES WITH DIVERGENT EXIT:" => section = Section::ExitCycles,
            // LLVM 19 spells it with three S's; later versions with two.
            "CYCLES ASSSUMED DIVERGENT:" | "CYCLES ASSUMED DIVERGENT:" => {
                section = Section::DivergentCycles
            }
            "DEFINITIONS" => section = Section::Defs,
            "TERMINATORS" => {
                section = Section::Terms;
                terminator_seen = false;
            }
            "ALL VALUES UNIFORM" => {
                func.all_uniform = true;
                section = Section::Other;
            }
            "END BLOCK" | "TEMPORAL DIVERGENCE LIST:" => section = Section::Other,
            l if l.starts_with("BLOCK ") => {
                func.blocks.push(LlvmBlock {
                    name: l["BLOCK ".len()..]
                        .trim()
                        .trim_start_matches('%')
                        .to_string(),
                    ..LlvmBlock::default()
                });
                section = Section::Other;
            }
            _ => match section {
                Section::Args => {
                    if let Some(name) = line.strip_prefix(MARK).and_then(last_name) {
                        func.divergent_args.push(name);
                    }
                }
                Section::ExitCycles | Section::DivergentCycles => {
                    if let Some(blocks) = cycle_blocks(line) {
                        let list = if section == Section::ExitCycles {
                            &mut func.divergent_exit_cycles
                        } else {
                            &mut func.divergent_cycles
                        };
                        list.push(blocks);
                    }
                }
                Section::Defs => {
                    if let (Some(entry), Some(block)) = (entry(line), func.blocks.last_mut()) {
                        block.defs.push(entry);
                    }
                }
                Section::Terms => {
                    if let (Some((divergent, _)), Some(block)) =
                        (entry(line), func.blocks.last_mut())
                    {
                        if !terminator_seen {
                            block.terminator_divergent = divergent;
                            terminator_seen = true;
                        }
                    }
                }
                Section::Other => {}
            },
        }
    }
    if let Some((n, f)) = current {
        out.funcs.insert(n, f);
    }
    out
}

fn function_header(line: &str) -> Option<&str> {
    line.strip_prefix("UniformityInfo for function '")?
        .strip_suffix("':")
}

/// An entry line: whether it is marked, and the instruction text.
fn entry(line: &str) -> Option<(bool, String)> {
    if line.len() <= ENTRY_COLUMN || !line.is_char_boundary(ENTRY_COLUMN) {
        return None;
    }
    let (lead, text) = line.split_at(ENTRY_COLUMN);
    let divergent = lead.starts_with(MARK);
    let padded = lead.bytes().all(|b| b == b' ');
    let starts_text = !text.starts_with(' ');
    (starts_text && (divergent || padded)).then(|| (divergent, text.trim_end().to_string()))
}

/// `  depth=1: entries(a b) c d` → `[a, b, c, d]`.
fn cycle_blocks(line: &str) -> Option<Vec<String>> {
    let rest = line.trim_start().strip_prefix("depth=")?;
    let (_, rest) = rest.split_once(": ")?;
    let names = rest
        .replace("entries(", " ")
        .replace(')', " ")
        .split_whitespace()
        .map(|n| n.trim_start_matches('%').to_string())
        .collect();
    Some(names)
}

/// The last `%name` of a line such as ` i32 %v`.
fn last_name(text: &str) -> Option<String> {
    let at = text.rfind('%')?;
    let name = text[at + 1..].trim();
    (!name.is_empty()).then(|| name.trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
UniformityInfo for function '_Z6helperiPi':
DIVERGENT ARGUMENTS:
  DIVERGENT: ptr %p
  DIVERGENT: i32 %v
CYCLES WITH DIVERGENT EXIT:
  depth=1: entries(for.body) if.end3 if.then

BLOCK entry
DEFINITIONS
  DIVERGENT:   %cmp = icmp sgt i32 %v, 3, !dbg !14
               %x = add i32 %n, 1
TERMINATORS
  DIVERGENT:   switch i32 %v, label %a [
    i32 0, label %b
  ]
END BLOCK

BLOCK %5
DEFINITIONS
TERMINATORS
               ret void, !dbg !23
END BLOCK
UniformityInfo for function 'k':
ALL VALUES UNIFORM
";

    #[test]
    fn reads_args_cycles_blocks_and_entries() {
        let u = parse(SAMPLE);
        let f = &u.funcs["_Z6helperiPi"];
        assert_eq!(f.divergent_args, ["p", "v"]);
        assert_eq!(
            f.divergent_exit_cycles,
            [vec!["for.body", "if.end3", "if.then"]]
        );
        assert_eq!(f.blocks.len(), 2);
        let entry = &f.blocks[0];
        assert_eq!(entry.name, "entry");
        assert_eq!(entry.defs.len(), 2);
        assert!(entry.defs[0].0 && !entry.defs[1].0);
        assert!(entry.defs[1].1.starts_with("%x = add"));
        assert!(
            entry.terminator_divergent,
            "the switch's case lines are not entries"
        );
        assert_eq!(f.blocks[1].name, "5");
        assert!(!f.blocks[1].terminator_divergent);
        assert!(u.funcs["k"].blocks.is_empty() && u.funcs["k"].all_uniform);
        assert!(!f.all_uniform);
    }

    #[test]
    fn noise_is_ignored() {
        let u = parse("warning: something\nUniformityInfo for function 'f':\n\nBLOCK b\nDEFINITIONS\n  junk\nEND BLOCK\n");
        assert_eq!(u.funcs["f"].blocks[0].defs, []);
    }
}
