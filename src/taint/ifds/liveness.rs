//! Which SSA values are live on entry to each block.
//!
//! A value fact is dropped on an edge into a block where its value is dead:
//! nothing later can read it, so carrying it would only multiply path
//! edges. Besides ordinary uses, a branch condition is *used* wherever its
//! divergence still matters (the blocks of its region and the loops it
//! skews, see `control`), so its fact reaches every join, loop exit and
//! per-thread store it decides.

use super::layout::Shape;
use crate::dataflow::Bits;
use crate::graph::Cfg;
use crate::ir::{BlockId, Function, InstId, InstKind, Opcode, Value};

#[derive(Clone, Debug)]
pub struct Liveness {
    params: usize,
    live_in: Vec<Bits>,
    /// Per instruction: values whose last use in its block it is, and
    /// that are dead after the block (their facts can go).
    dead_after: Vec<Vec<Value>>,
}

impl Liveness {
    /// `extra` lists `(block, value)`: `value` is used at `block`'s start.
    pub fn new(func: &Function, cfg: &Cfg, shape: &Shape, extra: &[(BlockId, Value)]) -> Self {
        let params = func.params.len();
        let size = params + func.insts.len();
        let index = |v: Value| match v {
            Value::Arg(a) => Some(a as usize),
            Value::Inst(i) => Some(params + i.index()),
            _ => None,
        };
        let n = func.blocks.len();
        // Upward-exposed uses and definitions of each block, and the phi
        // operands each block passes along each of its out-edges.
        let mut uses = vec![Bits::new(size); n];
        let mut defs = vec![Bits::new(size); n];
        let mut edge_uses: Vec<Vec<(BlockId, Bits)>> = vec![Vec::new(); n];
        for b in func.block_ids() {
            for &i in &func.blocks[b.index()].insts {
                let inst = func.inst(i);
                if inst.op != Opcode::Phi {
                    for o in inst.operands.iter().filter_map(|&o| index(o)) {
                        if !defs[b.index()].contains(o) {
                            uses[b.index()].insert(o);
                        }
                    }
                }
                defs[b.index()].insert(params + i.index());
            }
            for &phi in &shape.phis[b.index()] {
                let inst = func.inst(phi);
                let InstKind::Phi { blocks } = &inst.kind else {
                    continue;
                };
                for (&from, &v) in blocks.iter().zip(&inst.operands) {
                    let Some(o) = index(v) else { continue };
                    let list = &mut edge_uses[from.index()];
                    match list.iter_mut().find(|(to, _)| *to == b) {
                        Some((_, bits)) => {
                            bits.insert(o);
                        }
                        None => {
                            let mut bits = Bits::new(size);
                            bits.insert(o);
                            list.push((b, bits));
                        }
                    }
                }
            }
        }
        for &(b, v) in extra {
            if let Some(o) = index(v) {
                uses[b.index()].insert(o);
            }
        }
        let mut control_used = vec![Bits::new(size); n];
        for &(b, v) in extra {
            if let Some(o) = index(v) {
                control_used[b.index()].insert(o);
            }
        }
        let mut live_in = uses.clone();
        let order: Vec<BlockId> = cfg.reverse_post_order().iter().rev().copied().collect();
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order {
                let mut out = Bits::new(size);
                for &s in cfg.succs(b) {
                    out.union_with(&live_in[s.index()]);
                }
                for (_, bits) in &edge_uses[b.index()] {
                    out.union_with(bits);
                }
                for v in out.iter() {
                    if !defs[b.index()].contains(v) && live_in[b.index()].insert(v) {
                        changed = true;
                    }
                }
            }
        }
        let mut dead_after = vec![Vec::new(); func.insts.len()];
        for b in func.block_ids() {
            let mut out = control_used[b.index()].clone();
            for &s in cfg.succs(b) {
                out.union_with(&live_in[s.index()]);
            }
            for (_, bits) in &edge_uses[b.index()] {
                out.union_with(bits);
            }
            for (v, last) in last_uses(func, b, params) {
                if !out.contains(index(v).expect("an SSA value")) {
                    dead_after[last.index()].push(v);
                }
            }
        }
        Liveness {
            params,
            live_in,
            dead_after,
        }
    }

    /// Whether `v`'s fact can be dropped after instruction `i` (its last
    /// use in a block after which `v` is dead).
    pub fn dies_after(&self, i: InstId, v: Value) -> bool {
        self.dead_after[i.index()].contains(&v)
    }

    /// Whether `v` may be read at or after the start of `b`.
    pub fn live_in(&self, b: BlockId, v: Value) -> bool {
        let i = match v {
            Value::Arg(a) => a as usize,
            Value::Inst(i) => self.params + i.index(),
            _ => return false,
        };
        self.live_in[b.index()].contains(i)
    }
}

/// For each value used or defined in block `b`, the last instruction of
/// `b` that still needs its fact: its last use, and at least the
/// instruction after its definition (where the definition's own fact is
/// first seen). Values the terminator needs are left out: its edges check
/// liveness themselves.
fn last_uses(func: &Function, b: BlockId, params: usize) -> Vec<(Value, InstId)> {
    let insts = &func.blocks[b.index()].insts;
    let mut last: Vec<(Value, usize)> = Vec::new();
    let mut note = |v: Value, at: usize| match last.iter_mut().find(|(x, _)| *x == v) {
        Some(entry) => entry.1 = entry.1.max(at),
        None => last.push((v, at)),
    };
    let phis = insts
        .iter()
        .take_while(|&&i| func.inst(i).op == Opcode::Phi)
        .count();
    for (at, &i) in insts.iter().enumerate() {
        let inst = func.inst(i);
        // Seen from the first non-phi (phis are evaluated on the edge).
        note(Value::Inst(i), (at + 1).max(phis));
        if inst.op != Opcode::Phi {
            for &o in &inst.operands {
                if matches!(o, Value::Inst(_))
                    || matches!(o, Value::Arg(a) if (a as usize) < params)
                {
                    note(o, at);
                }
            }
        }
    }
    // Facts the terminator reads (its condition decides joins and exits
    // on its edges) stay to the end, where liveness takes over.
    let terminator = insts.len().saturating_sub(1);
    last.into_iter()
        .filter(|&(_, at)| at < terminator)
        .map(|(v, at)| (v, insts[at]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataflow::FastMap;
    use crate::graph::FunctionGraphs;
    use crate::ir::builder::ModuleBuilder;
    use crate::taint::ifds::tests::{counting_loop, CountingLoop};

    #[test]
    fn loop_values_live_until_their_last_use() {
        // 0: %tid; br 1.  1: %i = phi [0, 0], [%inc, 2]; %c = i < tid; br %c, 2, 3.
        // 2: %inc = i + 1; br 1.  3: %u = i * 2; ret.
        let mut mb = ModuleBuilder::new();
        let (i32t, void) = (mb.int(32), mb.void());
        let mut fb = mb.define("k", &[], void);
        let tid = fb.sreg("tid.x");
        let CountingLoop {
            header: h,
            body,
            exit,
            i,
            cond: c,
            inc,
            ..
        } = counting_loop(&mut fb, i32t, tid);
        fb.ret(None);
        let m = mb.finish();
        let func = &m.funcs[0];
        let g = FunctionGraphs::new(func);
        let succs = func.block_ids().map(|b| g.cfg.succs(b).to_vec()).collect();
        let shape = Shape::new(func, succs, &FastMap::default());
        let live = Liveness::new(func, &g.cfg, &shape, &[]);
        // tid is used in the header each iteration; i after the loop.
        assert!(live.live_in(h, tid) && live.live_in(body, tid));
        assert!(!live.live_in(exit, tid));
        assert!(live.live_in(exit, i) && live.live_in(body, i));
        assert!(!live.live_in(h, i), "defined by the header's phi");
        assert!(!live.live_in(h, c) && !live.live_in(exit, inc));
        // A control use keeps the condition alive in the loop body.
        let live = Liveness::new(func, &g.cfg, &shape, &[(body, c)]);
        assert!(live.live_in(body, c) && !live.live_in(h, c));
        assert_eq!(c, Value::Inst(InstId(3)));
        // In the exit block, i is last used by the multiply and dead after.
        let mul = m.funcs[0].blocks[exit.index()].insts[0];
        assert!(live.dies_after(mul, i));
        assert!(!live.dies_after(mul, tid), "tid is not used there");
    }
}
