//! What makes the values of an asm body differ between the lanes of a
//! warp: the thread-dependence view of a body, for the analyses. It
//! differs from [`super::summary`]'s "computed from" where the warp
//! primitives give the lanes one answer: a vote, a `redux`, `match.all`
//! or a shuffle that broadcasts one lane depend on their mask (and the
//! source lane) only, as the taint rules say of the same intrinsics.

use super::flow::{self, Join, Regs};
use super::inst::*;
use super::sreg::{Dependence, Special};
use super::Body;
use crate::ir::intrinsics::ShflControl;

/// A reason a value differs between lanes whatever the inputs.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum LaneSource {
    /// A thread- or time-dependent special register (`%laneid`,
    /// `%lanemask_lt`, `%tid.x`, `%clock`).
    Special(Special),
    /// The old value an `atom` returns: it depends on the order lanes run in.
    Atomic,
    /// The in-range predicate of `shfl.up`, `.down` or `.bfly`.
    ShuffleRange,
    /// `elect.sync`'s predicate: true in the one elected lane.
    Elected,
}

/// Why a value may differ between the lanes of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Varies {
    /// It differs where one of these inputs (`$n`, ascending) does.
    pub inputs: Vec<u32>,
    /// It differs in any case, for these reasons.
    pub sources: Vec<LaneSource>,
    /// Loaded by these instructions (indices into [`Body::insts`]): it
    /// differs where the memory read does.
    pub loads: Vec<usize>,
}

impl Join for Varies {
    fn join(&mut self, other: &Varies) {
        for &n in &other.inputs {
            if let Err(at) = self.inputs.binary_search(&n) {
                self.inputs.insert(at, n);
            }
        }
        for &s in &other.sources {
            if !self.sources.contains(&s) {
                self.sources.push(s);
            }
        }
        for &l in &other.loads {
            if !self.loads.contains(&l) {
                self.loads.push(l);
            }
        }
    }
}

impl Varies {
    /// The same in every lane whatever the inputs and memory hold.
    pub fn is_uniform(&self) -> bool {
        *self == Varies::default()
    }

    fn source(s: LaneSource) -> Varies {
        Varies {
            sources: vec![s],
            ..Varies::default()
        }
    }
}

/// See the module documentation.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Variance {
    /// Per output operand `$n`, in order.
    pub outputs: Vec<(u32, Varies)>,
    /// Per instruction: what its memory addresses vary with, in the order
    /// `ld`/`st`/`atom` (one), `cp.async` (destination, then source).
    pub addresses: Vec<Vec<Varies>>,
    /// Per instruction: what the values a `st` or `atom` writes vary with.
    pub stored: Vec<Varies>,
}

impl Variance {
    pub fn of(body: &Body) -> Variance {
        let start = |k| Varies {
            inputs: vec![k],
            ..Varies::default()
        };
        let mut addresses = vec![Vec::new(); body.insts.len()];
        let mut stored = vec![Varies::default(); body.insts.len()];
        let regs = flow::forward(body, start, read, |index, inst, regs| {
            let get = |o: Operand| read(regs, o);
            let union = |ops: &[Operand]| {
                ops.iter().fold(Varies::default(), |mut acc, &o| {
                    acc.join(&get(o));
                    acc
                })
            };
            let n = inst.op.writes().len();
            match &inst.op {
                Op::Ld { addr, .. } => {
                    addresses[index].push(get(addr.base));
                    let mut v = get(addr.base);
                    v.loads.push(index);
                    vec![v; n]
                }
                Op::St { addr, srcs, .. } => {
                    addresses[index].push(get(addr.base));
                    stored[index] = union(srcs);
                    Vec::new()
                }
                Op::Atom { addr, srcs, .. } => {
                    addresses[index].push(get(addr.base));
                    stored[index] = union(srcs);
                    vec![Varies::source(LaneSource::Atomic); n]
                }
                Op::CpAsync { dst, src, .. } => {
                    addresses[index].extend([get(dst.base), get(src.base)]);
                    Vec::new()
                }
                Op::Shfl { mode, a, b, c, .. } => {
                    let whole_warp = matches!(c, Operand::Imm(c) if ShflControl::from_bits(*c as u32).whole_warp());
                    let value = match mode {
                        ShflMode::Idx if whole_warp => get(*b),
                        ShflMode::Idx => union(&[*a, *b]),
                        _ => get(*a),
                    };
                    let in_range = match mode {
                        ShflMode::Idx => union(&[*b, *c]),
                        _ => Varies::source(LaneSource::ShuffleRange),
                    };
                    vec![value, in_range]
                }
                Op::Vote { mask, .. }
                | Op::Redux { mask, .. }
                | Op::Match {
                    all: true, mask, ..
                } => vec![get(*mask); n],
                Op::Match { a, mask, .. } => vec![union(&[*a, *mask]); n],
                Op::Elect { mask, .. } => vec![get(*mask), Varies::source(LaneSource::Elected)],
                // `bar.red` gives every thread of the block one answer.
                Op::Bar { .. } => vec![Varies::default(); n],
                op => vec![union(&op.reads()); n],
            }
        });
        let c = &body.constraints;
        let outputs = (0..c.operands.len() as u32)
            .filter(|&n| c.is_output(n))
            .map(|n| (n, regs.arg(n)))
            .collect();
        Variance {
            outputs,
            addresses,
            stored,
        }
    }

    /// What output `$n` varies with (the default for a non-output).
    pub fn output(&self, n: u32) -> Varies {
        self.outputs
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

/// A register's variance, or a special register's: only those that
/// differ between threads or reads count.
fn read(regs: &Regs<Varies>, o: Operand) -> Varies {
    match o {
        Operand::Special(s) if s.dependence() != Dependence::Uniform => {
            Varies::source(LaneSource::Special(s))
        }
        o => regs.get(o),
    }
}
