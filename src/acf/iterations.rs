//! Sites of loops whose counter the launch fixes, evaluated once per value
//! of the counter (the values come from [`ladder`]): the branch
//! conditions of the loop that read the counter are decided per
//! iteration, the lanes active in each block follow from them, and the
//! values the sites use are instantiated per iteration.

use super::active::{self, ControlEdges};
use super::build::Builder;
use super::expr::{Arena, Atom, AtomId, CtxId, ExprId, Uniform};
use super::ladder::{self, Counter, Ladder};
use super::warp::{self, Cond, Evaluator};
use super::{invariance, Iteration, WarpFacts};
use crate::dataflow::FastMap as HashMap;
use crate::graph::loops::LoopId;
use crate::graph::ModuleGraphs;
use crate::ir::{BlockId, FuncId, Module, Value};

/// One loop (in one context) whose sites are swept.
struct LoopSweep {
    c: CtxId,
    counter: Counter,
    /// Branches of the loop that read the counter, with their condition
    /// on each iteration (after [`Ladders::substitute`]).
    branches: Vec<(BlockId, ExprId, Vec<ExprId>)>,
    /// Site blocks whose ladder is this loop's.
    blocks: Vec<BlockId>,
    /// Values used at those blocks, with their expression.
    values: Vec<(Value, ExprId)>,
}

/// The per-iteration sweeps of one kernel.
#[derive(Default)]
pub struct Ladders {
    pub ladders: HashMap<(CtxId, BlockId), Ladder>,
    pub iter_exprs: HashMap<(CtxId, Value), Vec<ExprId>>,
    loops: Vec<LoopSweep>,
}

type UsedAt = HashMap<(CtxId, Value), Vec<BlockId>>;

/// Iterations × blocks × warps swept per kernel.
const MAX_WORK: usize = 1 << 20;

/// What the swept loops of a kernel may hold, in bytes, over its warps:
/// on every iteration, each site block's [`Iteration`], each branch's
/// condition with its per-lane column, and each value's lanes. A fully
/// unrolled loop left with two iterations of 2,500 sites in 32 warps would
/// hold 150 MB; such a loop is not swept (its sites keep the figures of
/// the loop as a whole).
const MAX_HELD: usize = 128 << 20;
/// Bytes one branch's condition holds on one iteration (a threshold's
/// column of per-lane offsets).
const COND_BYTES: usize = std::mem::size_of::<super::lanes::Column>();
/// Bytes one value's lanes hold on one iteration (a constant and one
/// uniform term per lane).
const VALUE_BYTES: usize =
    std::mem::size_of::<super::lanes::Lanes>() + std::mem::size_of::<[i64; super::lanes::LANES]>();

/// Each context's entry lanes in one warp: `(may, must)`, then the strict
/// ones.
pub type Entries = HashMap<CtxId, ((u32, u32), (u32, u32))>;

impl Ladders {
    /// Finds, for each site block (branches, and the blocks `used_at`
    /// names), the innermost loop around it with a fixed counter that some
    /// site of the loop reads.
    pub fn find(
        b: &mut Builder<'_>,
        m: &Module,
        graphs: &ModuleGraphs,
        (branches, used_at): (&[(CtxId, BlockId, ExprId)], &UsedAt),
        warps: usize,
    ) -> Self {
        // Each swept iteration reworks the lanes of every block of the
        // function in every warp: a kernel gets at most this much.
        let mut work_left: usize = MAX_WORK;
        let mut sites: Vec<(CtxId, BlockId)> = branches.iter().map(|&(c, x, _)| (c, x)).collect();
        for (&(c, _), at) in used_at {
            sites.extend(at.iter().map(|&x| (c, x)));
        }
        sites.sort_unstable();
        sites.dedup();
        let mut counters: HashMap<(CtxId, LoopId), Option<usize>> = HashMap::default();
        let mut out = Ladders::default();
        for (c, blk) in sites {
            let f = b.arena.func_of(c);
            let g = graphs.func(f);
            let mut l = g.loops.loop_of(blk);
            while let Some(lid) = l {
                let at = match counters.get(&(c, lid)) {
                    Some(&x) => x,
                    None => {
                        let x = ladder::counter(b, m, g, c, lid)
                            .filter(|ctr| read_in_loop(b, g, c, ctr, branches, used_at))
                            .filter(|ctr| {
                                let work = ctr.values.len() * g.cfg.num_blocks() * warps;
                                work <= work_left && {
                                    work_left -= work;
                                    true
                                }
                            })
                            .map(|ctr| {
                                out.loops.push(LoopSweep {
                                    c,
                                    branches: loop_branches(b, g, c, &ctr, branches),
                                    counter: ctr,
                                    blocks: Vec::new(),
                                    values: Vec::new(),
                                });
                                out.loops.len() - 1
                            });
                        counters.insert((c, lid), x);
                        x
                    }
                };
                if let Some(i) = at {
                    let ls = &mut out.loops[i];
                    ls.blocks.push(blk);
                    out.ladders
                        .insert((c, blk), ladder::ladder(g, &ls.counter, blk));
                    break;
                }
                l = g.loops.get(lid).parent;
            }
        }
        for (&(c, v), at) in used_at {
            let Some(ls) = out
                .loops
                .iter_mut()
                .find(|ls| ls.c == c && at.iter().any(|x| ls.blocks.contains(x)))
            else {
                continue;
            };
            let e = b.value(c, v);
            ls.values.push((v, e));
        }
        out.within_held(warps);
        out
    }

    /// Drops the loops whose sweep would hold more than what is left of
    /// [`MAX_HELD`] (in the order they were found), with their ladders.
    fn within_held(&mut self, warps: usize) {
        let mut left = MAX_HELD;
        let ladders = &mut self.ladders;
        self.loops.retain(|ls| {
            let per_iteration = ls.blocks.len() * std::mem::size_of::<Iteration>()
                + ls.branches.len() * COND_BYTES
                + ls.values.len() * VALUE_BYTES;
            let held = per_iteration
                .saturating_mul(ls.counter.values.len())
                .saturating_mul(warps);
            if held <= left {
                left -= held;
                return true;
            }
            for &blk in &ls.blocks {
                ladders.remove(&(ls.c, blk));
            }
            false
        });
    }

    /// Each swept expression with the counter replaced by each of its
    /// values.
    pub fn substitute(mut self, arena: &mut Arena) -> Self {
        for ls in &mut self.loops {
            let ctr = &ls.counter;
            for k in 0..ctr.values.len() {
                // The counter and its companions, each with its own memo.
                let mut subs: Vec<(AtomId, i128, HashMap<ExprId, ExprId>)> =
                    std::iter::once((ctr.atom, ctr.values[k]))
                        .chain(ctr.companions.iter().map(|(a, vs)| (*a, vs[k])))
                        .map(|(a, v)| (a, v, HashMap::default()))
                        .collect();
                let mut at_k = |arena: &mut Arena, e: ExprId| {
                    subs.iter_mut()
                        .fold(e, |x, (a, v, memo)| arena.substitute(x, *a, *v, memo))
                };
                for (_, e, per) in &mut ls.branches {
                    per.push(at_k(arena, *e));
                }
                for &(val, e) in &ls.values {
                    let ek = at_k(arena, e);
                    self.iter_exprs.entry((ls.c, val)).or_default().push(ek);
                }
            }
        }
        self
    }

    /// One warp's conditions, active lanes and values on every iteration
    /// of every swept loop. `entries` holds each context's entry lanes
    /// (`(may, must)`, then the strict ones) in this warp.
    pub fn run<'x>(
        &self,
        arena: &mut Arena,
        ev: &mut Evaluator<'_>,
        wf: &mut WarpFacts,
        (m, graphs): (&Module, &ModuleGraphs),
        (control, entries): (&dyn Fn(FuncId) -> &'x ControlEdges, &Entries),
    ) {
        for ls in &self.loops {
            let c = ls.c;
            let Some(&(entry, strict_entry)) = entries.get(&c) else {
                continue;
            };
            let f = arena.func_of(c);
            let g = graphs.func(f);
            let edges = control(f);
            for k in 0..ls.counter.values.len() {
                let mut over: HashMap<BlockId, Cond> = HashMap::default();
                for (blk, e, per) in &ls.branches {
                    let ek = per[k];
                    let cond = if ek == *e {
                        wf.conds.get(&(c, *blk)).cloned().unwrap_or(Cond::Unknown)
                    } else if !arena.is_thread(ek) {
                        Cond::Uniform
                    } else {
                        let variant = |ar: &Arena, u: &super::expr::Poly| {
                            invariance::variant_terms(m, g, ar, u, f, *blk)
                        };
                        warp::condition(arena, ev, m.func(f), *blk, ek, &variant)
                    };
                    over.insert(*blk, cond);
                }
                let (lanes, strict) = {
                    let cond = |x: BlockId| over.get(&x).or_else(|| wf.conds.get(&(c, x)));
                    (
                        active::active_lanes(g, edges, entry, cond, true),
                        active::active_lanes(g, edges, strict_entry, cond, false),
                    )
                };
                for &blk in &ls.blocks {
                    let cond = over.get(&blk).or_else(|| wf.conds.get(&(c, blk))).cloned();
                    let (may, must) = lanes[blk.index()];
                    wf.iterations.entry((c, blk)).or_default().push(Iteration {
                        cond,
                        may,
                        must,
                        strict: strict[blk.index()].1,
                    });
                }
                for &(v, _) in &ls.values {
                    if let Some(&ek) = self.iter_exprs.get(&(c, v)).and_then(|x| x.get(k)) {
                        ev.eval(arena, ek);
                    }
                }
            }
        }
    }
}

/// Whether the lanes of `e` depend on counter `a` other than through one
/// uniform shift of all of them (`[i]·64 + tid` needs no sweep, the
/// uniform part says it; `2·[k]·tid` and `tid % (2·[k])` do).
fn needs_sweep(arena: &Arena, e: ExprId, a: AtomId) -> bool {
    arena.poly(e).terms.iter().any(|(mono, _)| {
        let thread = mono.iter().any(|&b| arena.facts(b).thread);
        let reads = |b: AtomId| {
            b == a
                || matches!(arena.atom(b), Atom::Uniform(Uniform::Op(_, args)) if args.iter().any(|&x| arena.mentions(x, a)))
        };
        (thread && mono.iter().any(|&b| reads(b)))
            || mono.iter().any(|&b| match arena.atom(b) {
                Atom::Op(_, args) => args.iter().any(|&x| arena.mentions(x, a)),
                _ => false,
            })
    })
}

/// Whether some site of the counter's loop needs its values.
fn read_in_loop(
    b: &mut Builder<'_>,
    g: &crate::graph::FunctionGraphs,
    c: CtxId,
    ctr: &Counter,
    branches: &[(CtxId, BlockId, ExprId)],
    used_at: &UsedAt,
) -> bool {
    let lp = g.loops.get(ctr.lp);
    let needs = |arena: &Arena, e: ExprId| ctr.atoms().any(|a| needs_sweep(arena, e, a));
    let branch = branches
        .iter()
        .any(|&(x, blk, e)| x == c && lp.contains(blk) && needs(&b.arena, e));
    branch
        || used_at.iter().any(|(&(x, v), at)| {
            x == c && at.iter().any(|&blk| lp.contains(blk)) && {
                let e = b.value(c, v);
                needs(&b.arena, e)
            }
        })
}

/// The branches of the counter's loop that read it.
fn loop_branches(
    b: &Builder<'_>,
    g: &crate::graph::FunctionGraphs,
    c: CtxId,
    ctr: &Counter,
    branches: &[(CtxId, BlockId, ExprId)],
) -> Vec<(BlockId, ExprId, Vec<ExprId>)> {
    let lp = g.loops.get(ctr.lp);
    branches
        .iter()
        .filter(|&&(x, blk, e)| {
            x == c && lp.contains(blk) && ctr.atoms().any(|a| b.arena.mentions(e, a))
        })
        .map(|&(_, blk, e)| (blk, e, Vec::new()))
        .collect()
}
