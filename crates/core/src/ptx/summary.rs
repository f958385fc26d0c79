//! What an asm body does, for the analyses: what each output is computed
//! from (asm inputs, special registers, memory, other lanes) and the
//! memory and synchronisation effects in program order.

use super::flow::{self, Join, Regs};
use super::inst::*;
use super::sreg::{Dependence, Special};
use super::Body;

/// The origins of a value inside an asm body.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Sources {
    /// Input operands (`$n`) it is computed from, ascending.
    pub inputs: Vec<u32>,
    /// Special registers it reads, in first-read order.
    pub specials: Vec<Special>,
    /// Loaded from memory or returned by an atomic.
    pub memory: bool,
    /// Combines values of other lanes (shuffle, vote, match, `redux`,
    /// `elect`, `bar.red`).
    pub other_lanes: bool,
    /// The windows (`cvta.shared` and the like) it was made a generic
    /// address of: where it points, when it is a pointer.
    pub windows: Vec<Space>,
}

impl Join for Sources {
    fn join(&mut self, other: &Sources) {
        for &n in &other.inputs {
            if let Err(at) = self.inputs.binary_search(&n) {
                self.inputs.insert(at, n);
            }
        }
        for &s in &other.specials {
            if !self.specials.contains(&s) {
                self.specials.push(s);
            }
        }
        self.memory |= other.memory;
        self.other_lanes |= other.other_lanes;
        for &w in &other.windows {
            if !self.windows.contains(&w) {
                self.windows.push(w);
            }
        }
    }
}

impl Sources {
    /// The special registers it reads that differ between threads or
    /// between reads (`%laneid`, `%lanemask_*`, `%warpid`, `%smid`, clocks).
    pub fn varying_specials(&self) -> impl Iterator<Item = Special> + '_ {
        self.specials
            .iter()
            .copied()
            .filter(|s| s.dependence() != Dependence::Uniform)
    }

    /// Nothing but uniform special registers and constants: the same in
    /// every thread whatever the inputs.
    pub fn is_uniform_alone(&self) -> bool {
        self.inputs.is_empty()
            && !self.memory
            && !self.other_lanes
            && self.varying_specials().next().is_none()
    }
}

/// A memory or synchronisation effect of an asm body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum EffectKind {
    Load {
        space: Space,
        bytes: u32,
        sem: Sem,
        scope: Option<Scope>,
        nc: bool,
        address: Sources,
    },
    Store {
        space: Space,
        bytes: u32,
        sem: Sem,
        scope: Option<Scope>,
        address: Sources,
        value: Sources,
    },
    /// `atom` (`returns`) or `red`.
    Atomic {
        op: AtomOp,
        space: Space,
        bytes: u32,
        sem: Sem,
        scope: Scope,
        returns: bool,
        address: Sources,
        value: Sources,
    },
    /// `cp.async`: global to shared, completed by a later wait.
    AsyncCopy {
        dst: Sources,
        src: Sources,
    },
    /// `cp.async.commit_group`: the copies so far form a group.
    AsyncCommit,
    /// `cp.async.wait_group`/`wait_all`: earlier groups complete.
    AsyncWait,
    Barrier {
        kind: BarKind,
        aligned: bool,
    },
    Fence {
        kind: FenceKind,
        scope: Scope,
    },
    /// A `.sync` warp instruction: the lanes of its mask meet there.
    WarpSync,
    Sleep,
    Trap,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Effect {
    pub kind: EffectKind,
    /// The instruction's line in the asm text.
    pub line: u32,
    /// The instruction's position in [`Body::insts`].
    pub index: usize,
    /// Runs only where a guard predicate holds.
    pub guarded: bool,
}

/// See the module documentation.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Summary {
    /// Per output operand `$n`, in order: what its final value comes from.
    pub outputs: Vec<(u32, Sources)>,
    pub effects: Vec<Effect>,
}

impl Summary {
    pub fn of(body: &Body) -> Summary {
        let start = |k| Sources {
            inputs: vec![k],
            ..Sources::default()
        };
        let mut effects = Vec::new();
        let regs = flow::forward(body, start, read, |index, inst, regs| {
            let read = |o: Operand| read(regs, o);
            let all = |ops: &[Operand]| {
                ops.iter().fold(Sources::default(), |mut acc, &o| {
                    acc.join(&read(o));
                    acc
                })
            };
            if let Some(kind) = effect(&inst.op, &read, &all) {
                effects.push(Effect {
                    kind,
                    line: inst.line,
                    index,
                    guarded: inst.guard.is_some(),
                });
            }
            let mut result = all(&inst.op.reads());
            match &inst.op {
                Op::Ld { .. } | Op::Atom { .. } => result.memory = true,
                Op::Shfl { .. }
                | Op::Vote { .. }
                | Op::Match { .. }
                | Op::Redux { .. }
                | Op::Elect { .. }
                | Op::Bar { .. } => result.other_lanes = true,
                Op::Cvta {
                    to_generic: true,
                    space,
                    ..
                } => result.windows = vec![*space],
                _ => {}
            }
            vec![result; inst.op.writes().len()]
        });
        let c = &body.constraints;
        let outputs = (0..c.operands.len() as u32)
            .filter(|&n| c.is_output(n))
            .map(|n| (n, regs.arg(n)))
            .collect();
        Summary { outputs, effects }
    }

    /// Whether the body touches memory or synchronises (anything beyond
    /// computing its outputs).
    pub fn is_pure(&self) -> bool {
        self.effects.is_empty()
    }
}

/// The sources of an operand: a register's, or a special register.
fn read(regs: &Regs<Sources>, o: Operand) -> Sources {
    match o {
        Operand::Special(s) => Sources {
            specials: vec![s],
            ..Sources::default()
        },
        o => regs.get(o),
    }
}

/// The effect of one instruction, given how to read the sources of its
/// operands.
fn effect(
    op: &Op,
    read: &dyn Fn(Operand) -> Sources,
    all: &dyn Fn(&[Operand]) -> Sources,
) -> Option<EffectKind> {
    Some(match op {
        Op::Ld {
            mem, vec, ty, addr, ..
        } => EffectKind::Load {
            space: mem.space,
            bytes: ty.bytes() * u32::from(*vec),
            sem: mem.sem,
            scope: mem.scope,
            nc: mem.nc,
            address: read(addr.base),
        },
        Op::St {
            mem,
            vec,
            ty,
            addr,
            srcs,
        } => EffectKind::Store {
            space: mem.space,
            bytes: ty.bytes() * u32::from(*vec),
            sem: mem.sem,
            scope: mem.scope,
            address: read(addr.base),
            value: all(srcs),
        },
        Op::Atom {
            op,
            space,
            sem,
            scope,
            ty,
            vec,
            dsts,
            addr,
            srcs,
        } => EffectKind::Atomic {
            op: *op,
            space: *space,
            bytes: ty.bytes() * u32::from(*vec),
            sem: *sem,
            scope: *scope,
            returns: !dsts.is_empty(),
            address: read(addr.base),
            value: all(srcs),
        },
        Op::CpAsync { dst, src, .. } => EffectKind::AsyncCopy {
            dst: read(dst.base),
            src: read(src.base),
        },
        Op::CpAsyncCommit => EffectKind::AsyncCommit,
        Op::CpAsyncWait { .. } => EffectKind::AsyncWait,
        Op::Bar { kind, aligned, .. } => EffectKind::Barrier {
            kind: *kind,
            aligned: *aligned,
        },
        Op::Fence { kind, scope } => EffectKind::Fence {
            kind: *kind,
            scope: *scope,
        },
        Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Match { .. }
        | Op::Redux { .. }
        | Op::Elect { .. } => EffectKind::WarpSync,
        Op::Nanosleep { .. } => EffectKind::Sleep,
        Op::Trap => EffectKind::Trap,
        _ => return None,
    })
}
