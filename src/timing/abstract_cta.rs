//! Abstract CTA simulation (Hirvisalo, "On Static Timing Analysis of GPU
//! Kernels", WCET 2014, §3), for given parameters, made sound for the
//! round-robin machine of `sim::cycles`.
//!
//! **The abstract warp** is the cost stage's warp graph: the CFG with each
//! branch that may split a warp serialised (both sides run, one in a copy;
//! the copy's cycles are the divergence, Hirvisalo's shift), branches the
//! ACF proves uniform left as choices (the worse side is taken, his LUB),
//! loops bounded by the trip bounds of `cost::trips` evaluated at the
//! parameters (his loop edge), memory nodes costed from the checks'
//! sectors and wavefronts, barrier nodes from the machine. Its longest
//! path under the loop bounds is found as a linear program over edge
//! counts (implicit path enumeration).
//!
//! **The CTA simulation.** Hirvisalo charges a memory node
//! max(0, T_memory − N_warps), which holds while the warps move in one
//! convoy; a warp that drifts out of the convoy can wait longer. We charge
//! instead what round-robin guarantees whatever the drift: with N warps
//! resident on the SM (N_high: the block's warps times the blocks sharing
//! the SM) and P issue slots per cycle, a ready warp is passed over at
//! most q = ⌊(N − 1)/P⌋ cycles, so an instruction costs its warp at most
//! its latency plus q. Between two barriers a block takes as long as its
//! slowest warp, and one path of the abstract warp bounds every warp's
//! stretch when all warps meet at the same barriers (no barrier under a
//! thread-dependent branch; otherwise there is no bound: the paper
//! assumes this structure).

use super::costs::KernelCosts;
use crate::cost::affine::{Affine, Sym};
use crate::cost::bound::{Names, Params, Poly};
use crate::cost::lp::{Lp, Row, Solver, VarId};
use crate::cost::rat::Rat;
use crate::cost::Cbc;
use crate::cost::{Problem, Trip};
use crate::dataflow::FastMap as HashMap;
use crate::graph::{FunctionGraphs, LoopId};
use crate::ir::{FileId, Function, Module};
use crate::machine::Machine;

/// Each loop's most back edges per entry at the parameters `at`, outer
/// loops first so an inner bound over an outer counter takes its worst;
/// `nominal` for a loop whose bound needs a parameter `at` lacks.
pub fn trip_values(
    trips: &[Trip],
    names: &Names,
    (g, unbounded): (&FunctionGraphs, &[String]),
    at: &Params,
    nominal: Option<f64>,
) -> Result<Vec<f64>, String> {
    let mut order: Vec<(LoopId, u32)> = g.loops.iter().map(|(l, lp)| (l, lp.depth)).collect();
    order.sort_by_key(|&(l, d)| (d, l));
    let mut values = vec![0.0; trips.len()];
    for (l, _) in order {
        let a = match &trips[l.index()] {
            Trip::Bounded(a) => a,
            Trip::Unknown(why) => {
                return Err(unbounded
                    .first()
                    .cloned()
                    .unwrap_or_else(|| format!("a loop has no trip bound: {why}")))
            }
        };
        let mut a: Affine = a.clone();
        for (&s, &c) in a.clone().terms.iter() {
            if let Sym::Ghost(o) = s {
                let worst = if c > Rat::ZERO {
                    values[o.index()]
                } else {
                    0.0
                };
                a = a.subst(
                    s,
                    &Affine::constant(crate::cost::potential::rational(worst)),
                );
            }
        }
        let mut p = Poly::default();
        p.add(vec![a.clone()], Rat::ONE);
        let v = names.eval(&p, at).or(nominal).ok_or_else(|| {
            let missing: Vec<String> = a
                .terms
                .keys()
                .filter_map(|s| match s {
                    Sym::Param(i) => names.params.get(*i as usize).cloned(),
                    _ => None,
                })
                .filter(|n| !at.values.contains_key(n))
                .collect();
            format!(
                "a loop's trip count needs the value of {} (--param NAME=VALUE)",
                missing.join(", ")
            )
        })?;
        // Past 2^40 a float LP no longer tells one iteration from the
        // next: no bound rather than a rounded one.
        if !v.is_finite() || v > crate::cost::potential::LARGEST_COEFF as f64 {
            return Err(format!(
                "a loop's trip count ({v:e}) is too large for the solver's floating point"
            ));
        }
        values[l.index()] = (v + 1e-9).floor();
    }
    Ok(values)
}

/// One line's share of the abstract path.
#[derive(Clone, Debug)]
pub struct LineShare {
    pub file: Option<FileId>,
    pub line: u32,
    pub cycles: Shares,
    /// The most cycles one of its memory instructions keeps a warp.
    pub memory_latency: u64,
}

/// Cycles by what the warp does, as fractions of cycles (an LP solution).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shares {
    pub issue: f64,
    pub memory: f64,
    pub barrier: f64,
    pub divergence: f64,
}

impl Shares {
    pub fn total(&self) -> f64 {
        self.issue + self.memory + self.barrier + self.divergence
    }

    pub fn scaled(&self, k: f64) -> Shares {
        Shares {
            issue: self.issue * k,
            memory: self.memory * k,
            barrier: self.barrier * k,
            divergence: self.divergence * k,
        }
    }

    fn add(&mut self, o: &Shares, k: f64) {
        self.issue += o.issue * k;
        self.memory += o.memory * k;
        self.barrier += o.barrier * k;
        self.divergence += o.divergence * k;
    }
}

/// The longest path of the abstract warp.
#[derive(Clone, Debug)]
pub struct AbstractPath {
    /// Cycles of a block, at most.
    pub cycles: f64,
    pub shares: Shares,
    pub lines: Vec<LineShare>,
}

/// The longest path through the warp graph with each instruction costing
/// its latency plus `wait`, each loop's back edges at most its trip
/// value per entry.
pub fn longest_path(
    m: &Module,
    f: &Function,
    g: &FunctionGraphs,
    problem: &Problem,
    costs: &KernelCosts,
    trips: &[f64],
    (machine, wait): (&Machine, u64),
) -> Result<AbstractPath, String> {
    let graph = &problem.graph;
    let edge_costs = problem.edge_costs(f, &costs.as_costs(machine, wait), &|_, _| true);
    let mut lp = Lp::default();
    let x: Vec<VarId> = graph.edges.iter().map(|_| lp.var()).collect();
    // Flow: what enters a node leaves it; one unit enters at the entry.
    let mut flow: Vec<Vec<(VarId, f64)>> = vec![Vec::new(); graph.nodes.len()];
    for (e, &v) in graph.edges.iter().zip(&x) {
        flow[e.from.index()].push((v, -1.0));
        if let Some(to) = e.to {
            flow[to.index()].push((v, 1.0));
        }
    }
    for (n, terms) in flow.into_iter().enumerate() {
        let source = if n == graph.entry.index() { 1.0 } else { 0.0 };
        lp.rows.push(Row {
            terms: terms.clone(),
            lo: -source,
        });
        lp.rows.push(Row {
            terms: terms.into_iter().map(|(v, c)| (v, -c)).collect(),
            lo: source,
        });
    }
    // Loops: back edges at most the trip value per entry.
    let entry_block = graph.nodes[graph.entry].block;
    for (l, lp_) in g.loops.iter() {
        let t = trips[l.index()];
        let mut terms = Vec::new();
        for (e, &v) in graph.edges.iter().zip(&x) {
            // The blocks the edge joins, not its logical CFG edge: where a
            // split's first side reconverges, the edge goes on to the
            // second side (perhaps a loop's header) while it stands for
            // the CFG edge into the reconvergence block.
            let Some(to) = e.to else { continue };
            let (u, h) = (graph.nodes[e.from].block, graph.nodes[to].block);
            if h != lp_.header {
                continue;
            }
            match lp_.contains(u) {
                true => terms.push((v, -1.0)),
                false => terms.push((v, t)),
            }
        }
        let from_entry = if entry_block == lp_.header { t } else { 0.0 };
        lp.rows.push(Row {
            terms,
            lo: -from_entry,
        });
    }
    let objective: Vec<(VarId, f64)> = x
        .iter()
        .zip(&edge_costs)
        .map(|(&v, c)| (v, -c.to_f64()))
        .collect();
    let solver = Cbc { seconds: 10.0 };
    let sol = solver
        .minimize(&lp, &objective)
        .map_err(|e| format!("the abstract warp's longest path: {e}"))?;
    let cycles: f64 = x
        .iter()
        .zip(&edge_costs)
        .map(|(v, c)| sol[v.index()] * c.to_f64())
        .sum();
    // The longest path is at least the cheapest: less is a failed solve.
    let least = crate::cost::sanity::cheapest_path(f, graph, &edge_costs);
    if !cycles.is_finite() || least.is_some_and(|l| cycles < l.to_f64() * (1.0 - 1e-9)) {
        return Err(format!(
            "internal inconsistency: the abstract warp's longest path ({cycles}) is shorter \
             than the cheapest path through the kernel ({}); please report this kernel",
            least.map_or("?".into(), |l| l.to_string())
        ));
    }
    let (shares, lines) = attribute(m, f, problem, costs, (&x, &sol, &edge_costs), wait);
    Ok(AbstractPath {
        cycles,
        shares,
        lines,
    })
}

/// Splits the path's cycles by line and by what the warp does.
fn attribute(
    m: &Module,
    f: &Function,
    problem: &Problem,
    costs: &KernelCosts,
    (x, sol, edge_costs): (&[VarId], &[f64], &[Rat]),
    wait: u64,
) -> (Shares, Vec<LineShare>) {
    use crate::machine::Class;
    let graph = &problem.graph;
    let mut by_line: HashMap<(Option<FileId>, u32), (Shares, u64)> = HashMap::default();
    let mut total = Shares::default();
    let line_of = |i| {
        m.inst_pos(f, i)
            .filter(|p| p.line > 0)
            .map_or((None, 0), |p| (Some(p.file), p.line))
    };
    for ((e, v), c) in graph.edges.iter().zip(x).zip(edge_costs) {
        let count = sol[v.index()];
        if count < 1e-9 {
            continue;
        }
        let node = &graph.nodes[e.from];
        let split = node.copy.index() != 0;
        let insts = &f.blocks[node.block.index()].insts;
        let mut in_block = 0.0;
        for &i in insts {
            let Some(cost) = costs.insts.get(&i) else {
                continue;
            };
            if cost.class == Class::Free {
                continue;
            }
            let all = (cost.latency + wait) as f64;
            in_block += all;
            let stall = match cost.class {
                Class::Memory | Class::Barrier => (cost.latency - 1) as f64,
                _ => 0.0,
            };
            let mut s = Shares::default();
            match cost.class {
                Class::Memory => s.memory = stall,
                Class::Barrier => s.barrier = stall,
                _ => {}
            }
            match split {
                true => s.divergence = all - stall,
                false => s.issue = all - stall,
            }
            let at = by_line.entry(line_of(i)).or_default();
            at.0.add(&s, count);
            if cost.class == Class::Memory {
                at.1 = at.1.max(cost.latency);
            }
            total.add(&s, count);
        }
        // The rest of the edge's cost is its phi copies.
        let phis = (c.to_f64() - in_block).max(0.0);
        if phis > 0.0 {
            let s = match split {
                true => Shares {
                    divergence: phis,
                    ..Shares::default()
                },
                false => Shares {
                    issue: phis,
                    ..Shares::default()
                },
            };
            let at = insts.last().map_or((None, 0), |&t| line_of(t));
            by_line.entry(at).or_default().0.add(&s, count);
            total.add(&s, count);
        }
    }
    let mut lines: Vec<LineShare> = by_line
        .into_iter()
        .map(|((file, line), (cycles, memory_latency))| LineShare {
            file,
            line,
            cycles,
            memory_latency,
        })
        .collect();
    lines.sort_by_key(|l| (l.file, l.line));
    (total, lines)
}
