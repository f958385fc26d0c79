//! Accesses of swept loops, charged once per entry into the loop.
//!
//! The checks evaluate an access of a loop whose counter the launch fixes
//! (the ACF's ladder: `for (s = 1; s < blockDim.x; s *= 2)`) once per
//! value of the counter and keep a row per value, which `metric.rs` sums
//! into a [`metric::PerEntry`] cost. The ladder's loop leaves at one uniform counter test only and its
//! counter starts from a constant, so one entry into the loop runs each
//! value at most once, in order. When the access's innermost loop is the
//! ladder's and a warp runs it at most once per iteration, one entry costs
//! the warp at most the rows' figures summed, whichever iterations its
//! lanes run it on (a figure is never negative, and each row is the most
//! any warp's request takes then). reduce1's `sdata[2·s·tid]` at 256
//! threads is 2, 4, 8, 8, 8, 4, 2, 1-way for s = 1..128: 29 extra
//! wavefronts per entry, where the worst row times the trips is 56.
//!
//! A warp runs a block of the loop twice in one iteration only when a
//! divergent branch sends lanes to it down both of its sides before they
//! meet again (the side run first, then the other). Where no branch of
//! the loop does, the block runs once per iteration; an entry of a split
//! warp's groups into the loop is an entry of its own in the warp graph,
//! and pays again.
//!
//! [`metric::PerEntry`]: super::metric::PerEntry

use super::conditions::Env;
use crate::analysis::KernelAnalysis;
use crate::dataflow::FastMap as HashMap;
use crate::graph::LoopId;
use crate::ir::{BlockId, SiteKind};

/// The access blocks whose per-entry sums apply: each with the loop whose
/// entries pay them.
pub type Swept = HashMap<BlockId, LoopId>;

/// The blocks of `k`'s accesses whose innermost loop is their ladder's and
/// that a warp runs at most once per iteration of it, given the branches
/// that can split a warp (`divergent`).
pub fn swept_blocks(
    env: &Env<'_>,
    k: &KernelAnalysis,
    divergent: &dyn Fn(BlockId) -> bool,
) -> Swept {
    let mut out = Swept::default();
    let acf = &k.acf;
    let &[c] = acf.contexts(k.kernel) else {
        return out;
    };
    for s in &k.sites {
        if s.func != k.kernel || s.kind == SiteKind::Branch {
            continue;
        }
        let b = env.f.inst(s.inst).block;
        if out.contains_key(&b) {
            continue;
        }
        let Some(ladder) = acf.ladder(c, b) else {
            continue;
        };
        if env.g.loops.loop_of(b) != Some(ladder.lp) || !distinct(&ladder.values) {
            continue;
        }
        if once_per_iteration(env, ladder.lp, b, divergent) {
            out.insert(b, ladder.lp);
        }
    }
    out
}

/// Whether no value repeats (a counter that came back to a value would
/// loop for ever; checked all the same, as the sum needs it).
fn distinct(values: &[i128]) -> bool {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len() == values.len()
}

/// Whether a warp runs block `b`, whose innermost loop is `l`, at most once
/// per iteration of `l`: no branch of `l` that can split a warp reaches
/// `b` from both of its sides before they reconverge (within one
/// iteration: not through `l`'s header). A loop nested in `l` is walked
/// round, so a split at its exit that reaches `b` both ways counts.
pub fn once_per_iteration(
    env: &Env<'_>,
    l: LoopId,
    b: BlockId,
    divergent: &dyn Fn(BlockId) -> bool,
) -> bool {
    let (f, g) = (env.f, env.g);
    let lp = g.loops.get(l);
    f.block_ids()
        .filter(|&d| lp.contains(d) && divergent(d))
        .all(|d| {
            let r = g.pdom.idom(d);
            let mut succs = g.cfg.succs(d).to_vec();
            succs.sort();
            succs.dedup();
            succs
                .iter()
                .filter(|&&s| reaches(env, (l, s, r), b))
                .count()
                < 2
        })
}

/// Whether `to` is reachable from `from` inside loop `l` without passing
/// `stop` or `l`'s header.
fn reaches(
    env: &Env<'_>,
    (l, from, stop): (LoopId, BlockId, Option<BlockId>),
    to: BlockId,
) -> bool {
    let (g, lp) = (env.g, env.g.loops.get(l));
    let blocked = |x: BlockId| Some(x) == stop || x == lp.header || !lp.contains(x);
    if blocked(from) {
        return false;
    }
    let mut seen = vec![false; env.f.blocks.len()];
    let mut work = vec![from];
    seen[from.index()] = true;
    while let Some(x) = work.pop() {
        if x == to {
            return true;
        }
        for &y in g.cfg.succs(x) {
            if !blocked(y) && !seen[y.index()] {
                seen[y.index()] = true;
                work.push(y);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ModuleGraphs;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{FuncId, Value};

    /// `for (…) { if (p0) { if (p1) continue; } acc; }` with the two `if`s
    /// as the branches ending `header` and `a`: the blocks, in order
    /// `header, a, b (else), acc, latch`.
    fn continue_loop() -> (crate::ir::Module, [BlockId; 5]) {
        let mut mb = ModuleBuilder::new();
        let i1 = mb.int(1);
        let void = mb.void();
        let mut fb = mb.define("k", &[i1, i1, i1], void);
        let [header, a, b, acc, latch, exit] = [(); 6].map(|_| fb.block());
        fb.br(header);
        fb.switch_to(header);
        fb.cond_br(Value::Arg(0), a, b);
        fb.switch_to(a);
        fb.cond_br(Value::Arg(1), latch, acc);
        fb.switch_to(b);
        fb.br(acc);
        fb.switch_to(acc);
        fb.br(latch);
        fb.switch_to(latch);
        fb.cond_br(Value::Arg(2), header, exit);
        fb.switch_to(exit);
        fb.ret(None);
        (mb.finish(), [header, a, b, acc, latch])
    }

    #[test]
    fn a_block_both_sides_of_a_split_reach_runs_twice_an_iteration() {
        let (m, [header, a, b, acc, latch]) = continue_loop();
        let graphs = ModuleGraphs::new(&m);
        let g = graphs.func(FuncId(0));
        let env = Env {
            m: &m,
            f: m.func(FuncId(0)),
            g,
            block: [32, 1, 1],
            unsigned: Vec::new(),
        };
        let l = g.loops.loop_of(acc).unwrap();
        let once =
            |div: &[BlockId], x: BlockId| once_per_iteration(&env, l, x, &|d| div.contains(&d));
        // Split at `header`: lanes of `a` that stay, then those of `b`,
        // both reach `acc` before they meet at the latch.
        assert!(!once(&[header], acc));
        assert!(!once(&[header, a], acc));
        // Only the `continue` splits: the lanes that stay run `acc` once.
        assert!(once(&[a], acc));
        // Uniform branches: the warp runs every block once an iteration.
        assert!(once(&[], acc));
        // `b` and the latch are on one side of each split (the latch is
        // where they meet).
        assert!(once(&[header, a], b));
        assert!(once(&[header, a], latch));
    }
}
