//! What a thread-dependent branch does to values that no data connects to
//! its condition: GPUCheck's control-dependence term (§3.1, Eq. 1), made
//! sharp with sync dependence (Rosemann, Moll and Hack, POPL 2021).
//!
//! Eq. 1 taints a definition with the conditions deciding its operands but
//! not itself. Read literally on a CFG that misses merges: when both sides
//! of a dependent branch `B` can reach a block `J` and one side passes a
//! uniform branch on the way, `J` and its incoming blocks share the same
//! controlling conditions, yet `J`'s phis still choose by the side a lane
//! came from. So, for each branch `B` whose condition is dependent:
//!
//! * **Joins.** A phi merges lanes from different sides when its block is
//!   reached from two successors of `B` by paths that share no block but
//!   the end (and do not pass `B` again or its immediate post-dominator,
//!   where lanes meet). By Menger's theorem these are the blocks whose
//!   immediate dominator, in the graph of those paths rooted at a virtual
//!   node before `B`'s successors, is that root. Phis whose incoming values
//!   are all the same (ignoring `undef`) stay uniform. A virtual exit joins
//!   the `ret` blocks, for functions returning different values.
//! * **Loop exits** (temporal divergence). If a loop holding `B` can be
//!   left from `B`'s region, lanes leave it on different iterations: the
//!   values defined in the loop differ where they are used after that exit.
//!   This is decided per exit edge, so an exit no dependent branch reaches
//!   stays uniform.
//! * **Skewed loops.** If lanes wait inside a loop (at `B`'s post-dominator)
//!   while others go round it, they meet on different iterations, and every
//!   value of the loop may differ. The same holds for irreducible cycles
//!   holding `B` or one of its joins, which have no single header to
//!   reason about.
//! * **Per-thread writes.** A write to per-thread memory in `B`'s region
//!   happens in some lanes only; after the lanes meet, their copies differ.

use super::layout::Shape;
use super::liveness::Liveness;
use crate::dataflow::Bits;
use crate::dataflow::FastMap;
use crate::graph::dom::immediate_dominators;
use crate::graph::{Cfg, FunctionGraphs};
use crate::ir::{BlockId, Const, Function, InstId, InstKind, Module, Opcode, TypeKind, Value};

/// The effects of one conditional branch, were its condition dependent.
#[derive(Clone, Debug)]
pub struct Branch {
    pub block: BlockId,
    pub term: InstId,
    pub cond: Value,
    /// Blocks lanes may reach from the branch before they meet again at its
    /// immediate post-dominator.
    pub region: Bits,
    /// Blocks whose phis choose by the side lanes came from.
    pub joins: Bits,
    /// Lanes from different sides may reach different `ret`s.
    pub exit_join: bool,
    /// Blocks where every value may differ (skewed loops).
    pub skew: Bits,
}

/// A loop-exit edge that some dependent branch can make lanes take on
/// different iterations.
#[derive(Clone, Debug, Default)]
pub struct Exit {
    /// The branches (indices into [`Control::branches`]).
    pub branches: Vec<usize>,
    /// Values of the loop(s) left that are read after the edge.
    pub values: Vec<InstId>,
    /// Phis of the exit block reading one of `values` along this edge.
    pub phis: Vec<InstId>,
}

#[derive(Clone, Debug)]
pub struct Control {
    pub branches: Vec<Branch>,
    by_cond: FastMap<Value, Vec<usize>>,
    /// Keyed by `(exiting block, exit block)`.
    pub exits: FastMap<(BlockId, BlockId), Exit>,
    /// Phis whose incoming values are not all the same.
    merges: Bits,
    /// The function returns at least two different values.
    pub distinct_returns: bool,
}

impl Control {
    pub fn new(m: &Module, func: &Function, g: &FunctionGraphs) -> Self {
        let cfg = &g.cfg;
        let rets = ret_blocks(func, cfg);
        let mut branches = Vec::new();
        let mut by_cond: FastMap<Value, Vec<usize>> = FastMap::default();
        let mut exits: FastMap<(BlockId, BlockId), Exit> = FastMap::default();
        for &b in cfg.reverse_post_order() {
            if !cfg.is_branch(b) {
                continue;
            }
            let term = *func.blocks[b.index()].insts.last().expect("terminator");
            let cond = func.inst(term).operands.first().copied();
            let Some(cond @ (Value::Inst(_) | Value::Arg(_))) = cond else {
                continue;
            };
            let idx = branches.len();
            let branch = analyse_branch(cfg, g, b, term, cond, &rets);
            for (x, e) in divergent_exit_edges(g, &branch) {
                exits.entry((x, e)).or_default().branches.push(idx);
            }
            by_cond.entry(cond).or_default().push(idx);
            branches.push(branch);
        }
        let mut merges = Bits::new(func.insts.len());
        for i in func.inst_ids() {
            let inst = func.inst(i);
            if inst.op == Opcode::Phi && distinct_values(m, &inst.operands) {
                merges.insert(i.index());
            }
        }
        let returned: Vec<Value> = rets
            .iter()
            .filter_map(|b| func.terminator(BlockId::new(b)))
            .filter_map(|t| t.operands.first().copied())
            .collect();
        Control {
            branches,
            by_cond,
            exits,
            merges,
            distinct_returns: distinct_values(m, &returned),
        }
    }

    /// The branches whose condition is `v`.
    pub fn branches_on(&self, v: Value) -> &[usize] {
        self.by_cond.get(&v).map_or(&[], Vec::as_slice)
    }

    /// Whether `phi` merges different values.
    pub fn is_merge(&self, phi: InstId) -> bool {
        self.merges.contains(phi.index())
    }

    /// Where each condition must stay live: its region and skewed loops.
    pub fn control_uses(&self) -> Vec<(BlockId, Value)> {
        let mut uses = Vec::new();
        for br in &self.branches {
            let mut blocks = br.region.clone();
            blocks.union_with(&br.skew);
            uses.extend(blocks.iter().map(|b| (BlockId::new(b), br.cond)));
        }
        uses
    }

    /// Fills in what each divergent exit edge carries out of its loops;
    /// needs liveness, which needs [`Self::control_uses`] first.
    pub fn find_escapes(
        &mut self,
        m: &Module,
        func: &Function,
        g: &FunctionGraphs,
        shape: &Shape,
        live: &Liveness,
    ) {
        for (&(x, e), exit) in self.exits.iter_mut() {
            let Some(left) = outermost_loop_left(g, x, e) else {
                continue;
            };
            let values: Vec<InstId> = g
                .loops
                .get(left)
                .blocks
                .iter()
                .flat_map(|b| func.blocks[b.index()].insts.iter().copied())
                .filter(|&i| !matches!(m.types.kind(func.inst(i).ty), TypeKind::Void))
                .filter(|&i| {
                    live.live_in(e, Value::Inst(i))
                        || incoming_on(func, shape, e, x).any(|(_, v)| v == Value::Inst(i))
                })
                .collect();
            exit.phis = incoming_on(func, shape, e, x)
                .filter(|(_, v)| matches!(v, Value::Inst(i) if values.contains(i)))
                .map(|(phi, _)| phi)
                .collect();
            exit.values = values;
        }
    }
}

/// The phis of `to` with the value each takes along the edge `from -> to`.
pub fn incoming_on<'f>(
    func: &'f Function,
    shape: &'f Shape,
    to: BlockId,
    from: BlockId,
) -> impl Iterator<Item = (InstId, Value)> + 'f {
    shape.phis[to.index()].iter().filter_map(move |&phi| {
        let inst = func.inst(phi);
        let InstKind::Phi { blocks } = &inst.kind else {
            return None;
        };
        let k = blocks.iter().position(|&b| b == from)?;
        Some((phi, inst.operands[k]))
    })
}

fn analyse_branch(
    cfg: &Cfg,
    g: &FunctionGraphs,
    b: BlockId,
    term: InstId,
    cond: Value,
    rets: &Bits,
) -> Branch {
    let stop = g.pdom.idom(b);
    let region = region(cfg, b, stop);
    let (joins, exit_join) = joins(cfg, b, stop, &region, rets);
    let mut skew = Bits::new(cfg.num_blocks());
    let mut l = g.loops.loop_of(b);
    while let Some(id) = l {
        let lp = g.loops.get(id);
        let waits_inside = stop.is_some_and(|p| lp.contains(p));
        if waits_inside && region.contains(lp.header.index()) {
            lp.blocks.iter().for_each(|x| {
                skew.insert(x.index());
            });
        }
        l = lp.parent;
    }
    for cycle in g.loops.irreducible() {
        let touched =
            cycle.blocks.contains(&b) || cycle.blocks.iter().any(|x| joins.contains(x.index()));
        if touched {
            cycle.blocks.iter().for_each(|x| {
                skew.insert(x.index());
            });
        }
    }
    Branch {
        block: b,
        term,
        cond,
        region,
        joins,
        exit_join,
        skew,
    }
}

/// Blocks reachable from `b`'s successors without passing `stop`.
fn region(cfg: &Cfg, b: BlockId, stop: Option<BlockId>) -> Bits {
    let mut seen = Bits::new(cfg.num_blocks());
    let mut stack: Vec<BlockId> = cfg.succs(b).to_vec();
    while let Some(x) = stack.pop() {
        if Some(x) == stop || !seen.insert(x.index()) {
            continue;
        }
        stack.extend(cfg.succs(x).iter().copied());
    }
    seen
}

/// The join blocks of `b` (see the module comment), and whether the
/// virtual exit is one. The paths from `b` are numbered densely: `b`'s
/// successors hang off node 0, the virtual exit is node 1.
fn joins(cfg: &Cfg, b: BlockId, stop: Option<BlockId>, region: &Bits, rets: &Bits) -> (Bits, bool) {
    const ROOT: usize = 0;
    const EXIT: usize = 1;
    let mut node: Vec<Option<usize>> = vec![None; cfg.num_blocks()];
    let mut nodes = 2;
    for x in region.iter().chain(stop.map(BlockId::index)) {
        node[x] = Some(nodes);
        nodes += 1;
    }
    let mut edges = Vec::new();
    for &s in cfg.succs(b) {
        if let Some(n) = node[s.index()] {
            edges.push((ROOT, n));
        }
    }
    // `b` itself and `stop` end paths: lanes there are at a new instance of
    // the branch, or have met again.
    for x in region.iter().filter(|&x| x != b.index()) {
        let from = node[x].expect("in region");
        for &s in cfg.succs(BlockId::new(x)) {
            if let Some(to) = node[s.index()] {
                edges.push((from, to));
            }
        }
        if rets.contains(x) {
            edges.push((from, EXIT));
        }
    }
    let idom = immediate_dominators(nodes, ROOT, edges.iter().copied());
    let mut preds = vec![Vec::new(); nodes];
    for &(from, to) in &edges {
        preds[to].push(from);
    }
    let dominated_by = |mut n: usize, by: usize| loop {
        if n == by {
            return true;
        }
        match idom[n] {
            Some(up) => n = up,
            None => return false,
        }
    };
    let is_join = |n: usize| {
        if idom[n] != Some(ROOT) {
            return false;
        }
        // One of `b`'s successors is a join only if lanes can also arrive
        // from another side: from a predecessor it does not dominate.
        let successor = preds[n].contains(&ROOT);
        !successor || preds[n].iter().any(|&p| p != ROOT && !dominated_by(p, n))
    };
    let mut found = Bits::new(cfg.num_blocks());
    for (x, n) in node.iter().enumerate() {
        if n.is_some_and(is_join) {
            found.insert(x);
        }
    }
    (found, is_join(EXIT))
}

/// Exit edges of loops holding `br` that lanes may take from its region.
fn divergent_exit_edges(g: &FunctionGraphs, br: &Branch) -> Vec<(BlockId, BlockId)> {
    let mut edges = Vec::new();
    let mut l = g.loops.loop_of(br.block);
    while let Some(id) = l {
        let lp = g.loops.get(id);
        for &(x, e) in &lp.exit_edges {
            if (x == br.block || br.region.contains(x.index())) && !edges.contains(&(x, e)) {
                edges.push((x, e));
            }
        }
        l = lp.parent;
    }
    edges
}

/// The outermost loop holding `x` but not `e`.
fn outermost_loop_left(g: &FunctionGraphs, x: BlockId, e: BlockId) -> Option<crate::graph::LoopId> {
    let mut found = None;
    let mut l = g.loops.loop_of(x);
    while let Some(id) = l {
        let lp = g.loops.get(id);
        if lp.contains(e) {
            break;
        }
        found = Some(id);
        l = lp.parent;
    }
    found
}

fn ret_blocks(func: &Function, cfg: &Cfg) -> Bits {
    let mut rets = Bits::new(cfg.num_blocks());
    for &b in cfg.exits() {
        if func.terminator(b).is_some_and(|t| t.op == Opcode::Ret) {
            rets.insert(b.index());
        }
    }
    rets
}

/// Whether `values`, `undef` and `poison` aside, hold two different ones.
fn distinct_values(m: &Module, values: &[Value]) -> bool {
    let mut defined = values
        .iter()
        .filter(|&&v| !matches!(v, Value::Const(c) if matches!(m.konst(c), Const::Undef(_) | Const::Poison(_))));
    match defined.next() {
        Some(first) => defined.any(|v| v != first),
        None => false,
    }
}
