//! Which SSA values are live on entry to each block.
//!
//! A value fact is dropped on an edge into a block where its value is dead:
//! nothing later can read it, so carrying it would only multiply path
//! edges. Besides ordinary uses, a branch condition is *used* wherever its
//! divergence still matters (the blocks of its region and the loops it
//! skews, see `control`), so its fact reaches every join, loop exit and
//! per-thread store it decides.

use super::bits::Bits;
use super::layout::Shape;
use crate::graph::Cfg;
use crate::ir::{BlockId, Function, InstKind, Opcode, Value};

#[derive(Clone, Debug)]
pub struct Liveness {
    params: usize,
    live_in: Vec<Bits>,
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
        Liveness { params, live_in }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataflow::FastMap;
    use crate::graph::FunctionGraphs;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{InstId, IntPred};

    #[test]
    fn loop_values_live_until_their_last_use() {
        // 0: %tid; br 1.  1: %i = phi [0, 0], [%inc, 2]; %c = i < tid; br %c, 2, 3.
        // 2: %inc = i + 1; br 1.  3: %u = i * 2; ret.
        let mut mb = ModuleBuilder::new();
        let (i32t, void) = (mb.int(32), mb.void());
        let mut fb = mb.define("k", &[], void);
        let (h, body, exit) = (fb.block(), fb.block(), fb.block());
        let tid = fb.sreg("tid.x");
        fb.br(h);
        fb.switch_to(h);
        let zero = fb.const_int(32, 0);
        let i = fb.phi(i32t, &[(zero, BlockId(0))]);
        let c = fb.icmp(IntPred::Slt, i, tid);
        fb.cond_br(c, body, exit);
        fb.switch_to(body);
        let one = fb.const_int(32, 1);
        let inc = fb.binary(Opcode::Add, i, one);
        fb.add_incoming(i, inc, body);
        fb.br(h);
        fb.switch_to(exit);
        let two = fb.const_int(32, 2);
        fb.binary(Opcode::Mul, i, two);
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
    }
}
