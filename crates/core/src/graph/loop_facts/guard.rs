//! The guard clang's loop rotation leaves before a loop: the loop's exit
//! test made on the counter's start, which lanes that would not run an
//! iteration fail on "iteration 0".
//!
//! ```text
//! P:     br (start < n), body, after      ; the guard
//! body:  h = phi [start, P], [h', body]
//!        h' = h + S; br (h' < n), body, after
//! ```

use super::{LoopFacts, Read};
use crate::graph::{Cfg, LoopId, Loops};
use crate::ir::{BlockId, Function, InstKind, Value};

/// A branch whose staying side leads straight to a loop's header (the
/// header itself, or a block that only jumps there) on the comparison the
/// loop's one exit makes on its counter's next value, made on the
/// counter's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// The block whose branch guards.
    pub block: BlockId,
    /// The exit it repeats (the only one of the loop that leaves it for its
    /// parent, [`super::exit_of`]).
    pub exit: BlockId,
}

/// The guards of loop `l`, in block order.
pub(super) fn guards(
    f: &Function,
    cfg: &Cfg,
    loops: &Loops,
    facts: &LoopFacts,
    l: LoopId,
) -> Vec<Guard> {
    let header = loops.get(l).header;
    // A guard's staying side is the header or a block that only jumps
    // there: the guards are among their predecessors.
    let leads_in = |s: BlockId| s == header || cfg.succs(s) == [header];
    let mut candidates: Vec<BlockId> = std::iter::once(header)
        .chain(cfg.preds(header).iter().copied().filter(|&s| leads_in(s)))
        .flat_map(|s| cfg.preds(s).iter().copied())
        .collect();
    candidates.sort();
    candidates.dedup();
    candidates
        .into_iter()
        .filter_map(|g| guard(f, cfg, loops, facts, l, g))
        .collect()
}

/// Whether the branch ending `g` guards loop `l`, and the exit it repeats.
fn guard(
    f: &Function,
    cfg: &Cfg,
    loops: &Loops,
    facts: &LoopFacts,
    l: LoopId,
    g: BlockId,
) -> Option<Guard> {
    let header = loops.get(l).header;
    let term = f.terminator(g)?;
    let InstKind::Br { targets } = &term.kind else {
        return None;
    };
    if targets.len() != 2 {
        return None;
    }
    let leads_in = |s: BlockId| s == header || cfg.succs(s) == [header];
    let stay = [true, false]
        .into_iter()
        .find(|&t| leads_in(targets[usize::from(!t)]))?;
    let Some(Value::Inst(ci)) = term.operands.first().copied() else {
        return None;
    };
    let InstKind::ICmp(p) = f.inst(ci).kind else {
        return None;
    };
    let ops = &f.inst(ci).operands;
    let p = if stay { p } else { p.negated() };
    let [exit] = facts
        .exits(l)
        .iter()
        .filter(|x| super::exit_of(cfg, loops, x.block) == Some(l))
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let t = exit.tests.first().and_then(|t| t.counter)?;
    let counter = facts.counter(t.phi)?;
    let same = (p == t.pred && ops[..] == [counter.start, t.bound])
        || (p.swapped() == t.pred && ops[..] == [t.bound, counter.start]);
    (same && t.read == Read::Next).then_some(Guard {
        block: g,
        exit: exit.block,
    })
}
