//! Thread dependence: which values may differ between the threads of a warp.
//!
//! Every later check asks one question of this stage: "may this value differ
//! across the lanes of a warp?". [`DependenceAnalysis`] is the interface; an
//! implementation fills a [`KernelDeps`] per kernel, recording for each
//! dependent value *why* it depends (a [`Why`] edge back towards a source),
//! so that findings can explain themselves.

mod explain;
pub mod simple;

use crate::graph::ModuleGraphs;
use crate::ir::intrinsics::Dim;
use crate::ir::{FuncId, InstId, Module, Value};
use crate::memory::Spaces;
use std::collections::HashMap;

/// Where thread dependence starts.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Source {
    ThreadIdx(Dim),
    LaneId,
    LaneMask,
    Clock,
    /// The old value an atomic returns depends on the order lanes run in.
    Atomic,
    /// A warp shuffle that reads another lane's value.
    Shuffle,
    /// `__match_any_sync`: the set of lanes holding the same value.
    MatchAny,
    /// Inline asm, indirect calls, unknown intrinsics: assumed dependent.
    Opaque,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::ThreadIdx(Dim::X) => "threadIdx.x",
            Source::ThreadIdx(Dim::Y) => "threadIdx.y",
            Source::ThreadIdx(Dim::Z) => "threadIdx.z",
            Source::LaneId => "the lane id",
            Source::LaneMask => "a lane mask",
            Source::Clock => "the clock",
            Source::Atomic => "an atomic's result",
            Source::Shuffle => "a warp shuffle",
            Source::MatchAny => "__match_any_sync",
            Source::Opaque => "an opaque call",
        }
    }
}

/// One step back along the reason a value is thread-dependent.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Why {
    Source(Source),
    /// Computed from a dependent operand of the same function.
    Operand(Value),
    /// Merges values at the join of a dependent branch (phi or select chain).
    Join {
        branch: InstId,
    },
    /// Live out of a loop whose exit is decided per thread.
    LoopExit {
        branch: InstId,
    },
    /// Loaded from memory that a dependent store wrote.
    Memory {
        func: FuncId,
        store: InstId,
    },
    /// A parameter that a call site passes a dependent value to.
    Arg {
        caller: FuncId,
        call: InstId,
    },
    /// The result of a call whose callee returns a dependent value.
    Return {
        callee: FuncId,
        ret: InstId,
    },
}

/// Thread dependence of one function, in one kernel's context.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FuncDeps {
    pub insts: Vec<Option<Why>>,
    pub args: Vec<Option<Why>>,
}

impl FuncDeps {
    pub fn new(insts: usize, args: usize) -> Self {
        FuncDeps {
            insts: vec![None; insts],
            args: vec![None; args],
        }
    }
}

/// Thread dependence for every function a kernel reaches.
#[derive(Clone, Debug, Default)]
pub struct KernelDeps {
    pub kernel: FuncId,
    pub funcs: HashMap<FuncId, FuncDeps>,
}

impl KernelDeps {
    /// Why `v` (a value of function `f`) is thread-dependent, or `None` if it
    /// is the same in every lane.
    pub fn why(&self, f: FuncId, v: Value) -> Option<Why> {
        let deps = self.funcs.get(&f)?;
        match v {
            Value::Inst(i) => deps.insts.get(i.index()).copied().flatten(),
            Value::Arg(a) => deps.args.get(a as usize).copied().flatten(),
            _ => None,
        }
    }

    pub fn is_dependent(&self, f: FuncId, v: Value) -> bool {
        self.why(f, v).is_some()
    }
}

/// A thread-dependence analysis.
pub trait DependenceAnalysis {
    /// Analyses `kernel` and the functions it reaches (`reached`, kernel
    /// first), with pointer origins from `spaces`.
    fn analyze(
        &self,
        m: &Module,
        graphs: &ModuleGraphs,
        kernel: FuncId,
        reached: &[FuncId],
        spaces: &Spaces,
    ) -> KernelDeps;
}

pub use explain::explain;
