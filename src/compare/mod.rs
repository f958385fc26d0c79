//! Our thread dependence next to LLVM's UniformityAnalysis
//! (`opt -passes='print<uniformity>'`), for `warpcheck check
//! --compare-uniformity` and for the test that we are never less sound.
//!
//! For every kernel and every function it reaches, three kinds of items
//! are compared: branch conditions (as the branch reads them), memory
//! addresses (as the access reads them), and the values of instructions
//! (where defined). LLVM analyses each function once, for any caller; ours
//! are per kernel, so a device function is compared once per kernel.
//!
//! Each disagreement gets a reason. Where LLVM says divergent and we prove
//! uniform, the reason is where LLVM's divergence starts ([`LlvmRoot`]).
//! Where we say dependent and LLVM uniform, it is the kind of step in our
//! explanation that LLVM does not model ([`OursOnly`]); anything else is
//! reported as unexplained, and the comparison test fails on it. Two kinds
//! are expected, both where LLVM's answer rests on an assumption that does
//! not hold in general:
//!
//! * **Memory.** LLVM calls a load from a non-generic address space at a
//!   uniform address uniform, whatever threads stored there: it assumes the
//!   warp reads converged and that no thread writes the location while it
//!   does. Independent thread scheduling (sm_70+) does not keep a warp
//!   converged, so lanes may read before or after a write that runs in the
//!   same barrier phase: in warp-synchronous code such as
//!   `if (tid & 1) s = tid; x = s;`, or when a thread runs ahead to a
//!   write that follows the read. We call a load dependent when a write of
//!   thread-dependent data to memory it may alias can run while it does
//!   (`taint::ifds::memory`): never for `__constant__` memory, and not
//!   after a barrier that every such write comes before (a broadcast);
//!   global memory is written by other blocks, which no barrier of this
//!   block orders. (clang's -O2 IR reaches memory through generic
//!   pointers, whose loads LLVM always calls divergent, so this only shows
//!   on IR after address-space inference.)
//! * **Loop skew.** When lanes wait inside a loop while others go round it
//!   (see `ifds::control`), LLVM counts the iterations as different dynamic
//!   instances and so never compares them; the hardware runs them together
//!   at the reconvergence point.

mod llvm_view;
pub mod parse;
mod report;

pub use llvm_view::LlvmRoot;
pub use parse::{parse, LlvmUniformity};
pub use report::{render_text, Summary};

use crate::analysis::ModuleAnalysis;
use crate::ir::SiteKind;
use crate::ir::{InstId, Opcode, TypeKind, Value};
use crate::taint::{reasons_at, KernelDeps, Why};
use llvm_view::LlvmView;
use serde::Serialize;

/// What kind of item was compared.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Branch,
    Access,
    Value,
}

/// Why we call something dependent that LLVM calls uniform.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum OursOnly {
    /// Through memory a dependent write may change while the load runs
    /// (LLVM does not track it).
    Memory,
    /// Lanes meet on different iterations of a loop.
    LoopSkew,
    /// None of the above: a bug on one side or the other.
    Unexplained,
}

impl OursOnly {
    pub fn describe(self) -> &'static str {
        match self {
            OursOnly::Memory => {
                "memory a thread-dependent write may change during the read (LLVM assumes one value per uniform address)"
            }
            OursOnly::LoopSkew => {
                "lanes meet on different iterations of a loop (LLVM counts iterations apart)"
            }
            OursOnly::Unexplained => "unexplained",
        }
    }
}

/// One item the analyses disagree on.
#[derive(Clone, Debug, Serialize)]
pub struct Disagreement {
    pub kind: ItemKind,
    /// `load`, `store`, `atomic` for accesses; the opcode for values.
    pub what: String,
    pub line: u32,
    /// The value compared, as explanations name it.
    pub value: String,
    pub llvm_divergent: bool,
    pub warpcheck_dependent: bool,
    pub reason: String,
    #[serde(skip)]
    pub llvm_root: Option<LlvmRoot>,
    #[serde(skip)]
    pub ours_only: Option<OursOnly>,
}

/// How many items of one kind fell where.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub agree: usize,
    pub llvm_only: usize,
    pub warpcheck_only: usize,
}

/// One function as one kernel reaches it.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionComparison {
    pub kernel: String,
    pub function: String,
    /// Why the function could not be compared, if it could not.
    pub skipped: Option<String>,
    pub branches: Tally,
    pub accesses: Tally,
    pub values: Tally,
    pub disagreements: Vec<Disagreement>,
}

/// Compares every kernel of `a` with LLVM's output for the module.
pub fn compare(a: &ModuleAnalysis<'_>, llvm: &LlvmUniformity) -> Vec<FunctionComparison> {
    let m = a.module;
    let mut out = Vec::new();
    for k in &a.kernels {
        for &f in &k.reached {
            let func = m.func(f);
            let mut fc = FunctionComparison {
                kernel: m.func(k.kernel).demangled.clone(),
                function: func.demangled.clone(),
                skipped: None,
                branches: Tally::default(),
                accesses: Tally::default(),
                values: Tally::default(),
                disagreements: Vec::new(),
            };
            let view = match llvm.funcs.get(&func.name) {
                None => Err("not in LLVM's output".to_string()),
                Some(lf) => LlvmView::new(m, func, a.graphs.func(f), lf),
            };
            match view {
                Err(why) => fc.skipped = Some(why),
                Ok(view) => Comparer {
                    a,
                    deps: &k.deps,
                    f,
                    view: &view,
                    out: &mut fc,
                }
                .run(k),
            }
            out.push(fc);
        }
    }
    out
}

/// One compared item: what it is, the instruction it belongs to, and the
/// value decided (read by `user`, for sites).
struct Item {
    kind: ItemKind,
    what: String,
    at: InstId,
    value: Value,
    user: Option<InstId>,
}

struct Comparer<'a, 'm> {
    a: &'a ModuleAnalysis<'m>,
    deps: &'a KernelDeps,
    f: crate::ir::FuncId,
    view: &'a LlvmView<'a>,
    out: &'a mut FunctionComparison,
}

impl Comparer<'_, '_> {
    fn run(mut self, k: &crate::analysis::KernelAnalysis) {
        let m = self.a.module;
        let func = m.func(self.f);
        let f = self.f;
        for site in k.sites.iter().filter(|s| s.func == f) {
            let (kind, llvm) = match site.kind {
                SiteKind::Branch => (
                    ItemKind::Branch,
                    self.view.terminator_divergent(func.inst(site.inst).block),
                ),
                _ => (
                    ItemKind::Access,
                    self.view.divergent_at(site.value, site.inst),
                ),
            };
            let item = Item {
                kind,
                what: site.kind.name().to_string(),
                at: site.inst,
                value: site.value,
                user: Some(site.inst),
            };
            self.record(item, llvm, site.thread_dependent);
        }
        for i in func.inst_ids() {
            let inst = func.inst(i);
            if matches!(m.types.kind(inst.ty), TypeKind::Void) || inst.op == Opcode::Alloca {
                continue;
            }
            let v = Value::Inst(i);
            let item = Item {
                kind: ItemKind::Value,
                what: inst.op.mnemonic().to_string(),
                at: i,
                value: v,
                user: None,
            };
            let ours = self.deps.is_dependent(self.f, v);
            self.record(item, self.view.divergent(v), ours);
        }
    }

    fn record(&mut self, item: Item, llvm: bool, ours: bool) {
        let Item {
            kind,
            what,
            at,
            value: v,
            user,
        } = item;
        let tally = match kind {
            ItemKind::Branch => &mut self.out.branches,
            ItemKind::Access => &mut self.out.accesses,
            ItemKind::Value => &mut self.out.values,
        };
        let (llvm_root, ours_only) = match (llvm, ours) {
            (true, false) => {
                tally.llvm_only += 1;
                let (deps, f) = (self.deps, self.f);
                let uniform = move |x: Value| !deps.is_dependent(f, x);
                (Some(self.view.root(v, &uniform)), None)
            }
            (false, true) => {
                tally.warpcheck_only += 1;
                (None, Some(self.ours_only(v, user)))
            }
            _ => {
                tally.agree += 1;
                return;
            }
        };
        let m = self.a.module;
        let func = m.func(self.f);
        let reason = llvm_root
            .map(LlvmRoot::describe)
            .or(ours_only.map(OursOnly::describe))
            .unwrap_or_default()
            .to_string();
        self.out.disagreements.push(Disagreement {
            kind,
            what,
            line: m.inst_pos(func, at).map_or(0, |p| p.line),
            value: m.ir_label(func, v),
            llvm_divergent: llvm,
            warpcheck_dependent: ours,
            reason,
            llvm_root,
            ours_only,
        });
    }

    /// The kind of step in our explanation LLVM does not model.
    fn ours_only(&self, v: Value, user: Option<InstId>) -> OursOnly {
        let whys = reasons_at(self.deps, self.a.module, self.f, v, user);
        if whys.iter().any(|w| matches!(w, Why::Memory { .. })) {
            OursOnly::Memory
        } else if whys.iter().any(|w| matches!(w, Why::LoopSkew { .. })) {
            OursOnly::LoopSkew
        } else {
            OursOnly::Unexplained
        }
    }
}
