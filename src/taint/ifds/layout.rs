//! The supergraph of one kernel: every instruction of the functions it
//! reaches is a node, numbered densely.
//!
//! Phis are not nodes of their own: a block's phis are evaluated together
//! on each edge into the block (from the predecessor's terminator to the
//! block's first other instruction), where it is known which incoming
//! value is chosen. A call to a function the kernel reaches is a call node
//! whose return site is the next instruction; calls to declarations
//! (intrinsics, externals) are ordinary nodes.

use crate::dataflow::{FastMap, Supergraph};
use crate::graph::ModuleGraphs;
use crate::ir::{BlockId, Callee, FuncId, Function, InstId, Module, Opcode};

/// A procedure: a function's position in the kernel's `reached` list.
pub type Proc = u32;
/// A node: an instruction, numbered across the reached functions.
pub type Node = u32;

/// How one function's instructions are laid out as nodes.
#[derive(Clone, Debug)]
pub struct Shape {
    /// The next instruction of the same block, for non-terminators.
    pub next: Vec<Option<InstId>>,
    /// Per block, the first instruction that is not a phi.
    pub first: Vec<InstId>,
    /// Per block, its phis in order.
    pub phis: Vec<Vec<InstId>>,
    /// Per instruction, the procedure it calls, for call nodes.
    pub callee: Vec<Option<Proc>>,
    /// Per block, its distinct successors (as the CFG lists them).
    pub succs: Vec<Vec<BlockId>>,
}

impl Shape {
    pub fn new(func: &Function, succs: Vec<Vec<BlockId>>, proc_of: &FastMap<FuncId, Proc>) -> Self {
        let mut next = vec![None; func.insts.len()];
        let mut first = Vec::with_capacity(func.blocks.len());
        let mut phis = Vec::with_capacity(func.blocks.len());
        for block in &func.blocks {
            for w in block.insts.windows(2) {
                next[w[0].index()] = Some(w[1]);
            }
            let (p, rest): (Vec<InstId>, Vec<InstId>) = block
                .insts
                .iter()
                .partition(|&&i| func.inst(i).op == Opcode::Phi);
            // A block always ends in a terminator, so `rest` is not empty
            // for well-formed IR; fall back to the block's last instruction.
            first.push(
                rest.first()
                    .or(block.insts.last())
                    .copied()
                    .unwrap_or_default(),
            );
            phis.push(p);
        }
        let callee = func
            .insts
            .iter()
            .map(|inst| match inst.callee() {
                Some(Callee::Direct(f)) => proc_of.get(&f).copied(),
                _ => None,
            })
            .collect();
        Shape {
            next,
            first,
            phis,
            callee,
            succs,
        }
    }
}

/// Node numbering and the supergraph over a kernel's reached functions.
pub struct Layout<'m> {
    pub m: &'m Module,
    /// The reached functions; `Proc` indexes this.
    pub funcs: Vec<FuncId>,
    pub proc_of: FastMap<FuncId, Proc>,
    base: Vec<Node>,
    pub shapes: Vec<Shape>,
}

impl<'m> Layout<'m> {
    pub fn new(m: &'m Module, graphs: &ModuleGraphs, reached: &[FuncId]) -> Self {
        let proc_of: FastMap<FuncId, Proc> = reached
            .iter()
            .enumerate()
            .map(|(p, &f)| (f, p as Proc))
            .collect();
        let mut base = Vec::with_capacity(reached.len());
        let mut next_base: Node = 0;
        let mut shapes = Vec::with_capacity(reached.len());
        for &f in reached {
            let func = m.func(f);
            base.push(next_base);
            next_base += func.insts.len() as Node;
            let cfg = &graphs.func(f).cfg;
            let succs = func.block_ids().map(|b| cfg.succs(b).to_vec()).collect();
            shapes.push(Shape::new(func, succs, &proc_of));
        }
        Layout {
            m,
            funcs: reached.to_vec(),
            proc_of,
            base,
            shapes,
        }
    }

    pub fn func(&self, p: Proc) -> &'m Function {
        self.m.func(self.funcs[p as usize])
    }

    pub fn node(&self, p: Proc, i: InstId) -> Node {
        self.base[p as usize] + i.0
    }

    /// The procedure and instruction of a node.
    pub fn locate(&self, n: Node) -> (Proc, InstId) {
        let p = self.base.partition_point(|&b| b <= n) - 1;
        (p as Proc, InstId(n - self.base[p]))
    }

    /// The node where the values defined by `i` (a phi: by its block's
    /// incoming edges) are first visible.
    pub fn after_def(&self, p: Proc, i: InstId) -> Option<Node> {
        let func = self.func(p);
        let shape = &self.shapes[p as usize];
        let inst = func.inst(i);
        if inst.op == Opcode::Phi {
            return Some(self.node(p, shape.first[inst.block.index()]));
        }
        shape.next[i.index()].map(|n| self.node(p, n))
    }

    /// The first node of block `b`.
    pub fn block_start(&self, p: Proc, b: BlockId) -> Node {
        self.node(p, self.shapes[p as usize].first[b.index()])
    }
}

impl Supergraph for Layout<'_> {
    type Node = Node;
    type Proc = Proc;

    fn proc_of(&self, n: Node) -> Proc {
        self.locate(n).0
    }

    fn start_of(&self, p: Proc) -> Node {
        self.block_start(p, BlockId(0))
    }

    fn successors(&self, n: Node, out: &mut Vec<Node>) {
        let (p, i) = self.locate(n);
        let shape = &self.shapes[p as usize];
        match shape.next[i.index()] {
            Some(next) => out.push(self.node(p, next)),
            None => {
                let block = self.func(p).inst(i).block;
                out.extend(
                    shape.succs[block.index()]
                        .iter()
                        .map(|&s| self.block_start(p, s)),
                );
            }
        }
    }

    fn callees(&self, n: Node, out: &mut Vec<Proc>) {
        let (p, i) = self.locate(n);
        out.extend(self.shapes[p as usize].callee[i.index()]);
    }

    fn is_exit(&self, n: Node) -> bool {
        let (p, i) = self.locate(n);
        self.func(p).inst(i).op == Opcode::Ret
    }
}
