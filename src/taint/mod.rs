//! Thread dependence: which values may differ between the threads of a warp.
//!
//! Every later check asks one question of this stage: "may this value differ
//! across the lanes of a warp?". [`DependenceAnalysis`] is the interface; an
//! implementation fills a [`KernelDeps`] per kernel, recording for each
//! dependent value *why* it depends (a [`Why`] edge back towards a source),
//! so that findings can explain themselves.
//!
//! The analysis is [`ifds::IfdsTaint`], GPUCheck's IFDS taint over the
//! kernel's supergraph; `crate::compare` (a layer above the driver) sets
//! its answers next to LLVM's UniformityAnalysis.

mod explain;
pub mod ifds;

use crate::budget::{Exhausted, Meter};
use crate::dataflow::FastMap as HashMap;
use crate::graph::ModuleGraphs;
use crate::ir::intrinsics::Dim;
use crate::ir::{FuncId, InstId, Module, Value};
use crate::memory::Spaces;

/// Where thread dependence starts.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Source {
    ThreadIdx(Dim),
    LaneId,
    LaneMask,
    Clock,
    /// The old value an atomic returns depends on the order lanes run in.
    Atomic,
    /// The in-range predicate of a shuffle up, down or xor: per lane.
    Shuffle,
    /// Inline asm, indirect calls, unknown intrinsics: assumed dependent.
    Opaque,
}

impl Source {
    /// Every source, for tests and documentation.
    pub const ALL: [Source; 9] = [
        Source::ThreadIdx(Dim::X),
        Source::ThreadIdx(Dim::Y),
        Source::ThreadIdx(Dim::Z),
        Source::LaneId,
        Source::LaneMask,
        Source::Clock,
        Source::Atomic,
        Source::Shuffle,
        Source::Opaque,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Source::ThreadIdx(Dim::X) => "threadIdx.x",
            Source::ThreadIdx(Dim::Y) => "threadIdx.y",
            Source::ThreadIdx(Dim::Z) => "threadIdx.z",
            Source::LaneId => "the lane id",
            Source::LaneMask => "a lane mask",
            Source::Clock => "the clock",
            Source::Atomic => "an atomic's result",
            Source::Shuffle => "a warp shuffle's lane range",
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
    /// Live out of a loop whose exit is decided per thread: lanes leave it
    /// on different iterations (temporal divergence).
    LoopExit {
        branch: InstId,
    },
    /// Computed in a loop that a dependent branch lets some lanes go round
    /// while others wait inside it, so lanes meet on different iterations.
    LoopSkew {
        branch: InstId,
    },
    /// A memory write that only the lanes a dependent branch sends here
    /// perform (per-thread memory then differs between lanes).
    Control {
        branch: InstId,
    },
    /// A function entered by only part of the warp, because the call at
    /// `caller`/`call` sits under a dependent branch.
    Called {
        caller: FuncId,
        call: InstId,
    },
    /// Loaded from memory that a write of dependent data may change while
    /// the load runs (`store`: that write; see `ifds::memory`).
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
    /// Values dependent where they are defined (and so at every use).
    pub insts: Vec<Option<Why>>,
    pub args: Vec<Option<Why>>,
    /// Uses that see a value dependent although it is uniform where it is
    /// defined: `(user, value)`, for values live out of a loop that lanes
    /// leave on different iterations.
    pub late: HashMap<(InstId, Value), Why>,
    /// Why an instruction without a value of its own matters: a store,
    /// atomic, copy or opaque call that made memory dependent, a call that
    /// enters its callee with part of the warp, a `ret` whose function
    /// merges different return values.
    pub effects: HashMap<InstId, Why>,
}

impl FuncDeps {
    pub fn new(insts: usize, args: usize) -> Self {
        FuncDeps {
            insts: vec![None; insts],
            args: vec![None; args],
            ..FuncDeps::default()
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
    /// Why `v` (a value of function `f`) is thread-dependent where it is
    /// defined, or `None` if it is the same in every lane there.
    pub fn why(&self, f: FuncId, v: Value) -> Option<Why> {
        let deps = self.funcs.get(&f)?;
        match v {
            Value::Inst(i) => deps.insts.get(i.index()).copied().flatten(),
            Value::Arg(a) => deps.args.get(a as usize).copied().flatten(),
            _ => None,
        }
    }

    /// Why `v` is thread-dependent as instruction `user` sees it: where it
    /// is defined, or (for values leaving a loop) only at this use.
    pub fn why_at(&self, f: FuncId, v: Value, user: InstId) -> Option<Why> {
        self.why(f, v).or_else(|| {
            let deps = self.funcs.get(&f)?;
            deps.late.get(&(user, v)).copied()
        })
    }

    pub fn is_dependent(&self, f: FuncId, v: Value) -> bool {
        self.why(f, v).is_some()
    }

    pub fn is_dependent_at(&self, f: FuncId, v: Value, user: InstId) -> bool {
        self.why_at(f, v, user).is_some()
    }

    /// Why instruction `i` of `f` has a thread-dependent effect (see
    /// [`FuncDeps::effects`]).
    pub fn effect(&self, f: FuncId, i: InstId) -> Option<Why> {
        self.funcs.get(&f)?.effects.get(&i).copied()
    }
}

/// What a thread-dependence analysis reads: one kernel, the functions it
/// reaches (`reached`, kernel first) and their pointer origins.
#[derive(Copy, Clone)]
pub struct KernelScope<'a> {
    pub m: &'a Module,
    pub graphs: &'a ModuleGraphs,
    pub kernel: FuncId,
    pub reached: &'a [FuncId],
    pub spaces: &'a Spaces,
}

/// A thread-dependence analysis.
pub trait DependenceAnalysis {
    /// Analyses the kernel of `scope` within `meter`'s budget.
    fn analyze_within(
        &self,
        scope: &KernelScope<'_>,
        meter: &Meter,
    ) -> Result<KernelDeps, Exhausted>;

    /// Analyses the kernel of `scope` to the end, however long it takes.
    fn analyze(&self, scope: &KernelScope<'_>) -> KernelDeps {
        match self.analyze_within(scope, &Meter::unlimited()) {
            Ok(deps) => deps,
            Err(e) => unreachable!("an unlimited meter ran out: {e}"),
        }
    }
}

pub use explain::{explain, explain_at, reasons_at};
