//! The driver: runs every stage over a module and keeps the typed results
//! that checks and reports read.

mod block_dim;
mod shapes;
mod sites;

/// What a site's request is a piece of (`memory::lower`), for the reports.
pub use crate::memory::lower::{PieceOf, Repeat, Whole};
pub use block_dim::{check_block, check_grid, parse_grid, BlockDim, BlockDimSource};
pub use shapes::{shape_text, LaunchShapes};
pub use sites::Site;

use crate::acf::KernelAcf;
use crate::budget::{Budget, Exhausted};
use crate::glob::glob;
use crate::graph::ModuleGraphs;
use crate::ir::{BlockId, FuncId, Module, SiteKind, Value};
use crate::memory::{Space, Spaces};
use crate::taint::{DependenceAnalysis, KernelDeps, KernelScope};
use tracing::field::Empty;
use tracing::{info_span, warn};

/// How to analyse: the block shapes, the budget, the threads and whether
/// to keep explanations. Which findings to report is chosen above, by the
/// CLI and the plugin, from what the analysis found.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--block-dim`, or the plugin's configuration.
    pub block_dim: Option<BlockDim>,
    /// Block shapes by kernel-name glob (the configuration's `Kernels`):
    /// the first match wins over `block_dim`.
    pub kernel_dims: Vec<(String, BlockDim)>,
    /// Leave out the dependence chains (`Site::why`) and the notes made of
    /// them: for text without `--explain` and for the plugin, which show
    /// neither.
    pub no_explanations: bool,
    /// The limits each kernel's analysis runs within.
    pub budget: Budget,
    /// Threads to analyse a module's kernels on (0 or 1: one at a time).
    pub jobs: usize,
    /// The kernel launches of the file's host code (`.cu` input).
    pub launches: Vec<crate::ir::launch::HostLaunch>,
    /// Integer kernel parameters with a known value, by name (`--param`,
    /// the configuration's `Params`): the analysis reads them as numbers.
    pub params: Vec<(String, i128)>,
    /// Do not take kernel pointer parameters as `cudaMalloc` pointers,
    /// 256-byte aligned (`--no-malloc-alignment`, the configuration's
    /// `MallocAlignment: false`): their alignment is then only what each
    /// access states.
    pub no_malloc_alignment: bool,
}

impl Options {
    /// The values of `kernel`'s integer parameters that `params` names
    /// (by source name, or `argN` for the N-th when the IR has none):
    /// `(index, value)`. A pointer or a float keeps its symbol.
    pub fn pinned(&self, m: &Module, kernel: FuncId) -> Vec<(u32, i128)> {
        let f = m.func(kernel);
        f.params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let bits = m.types.int_bits(p.ty)?;
                // A parameter is also `argN`, as `simulate` calls it.
                let positional = format!("arg{i}");
                let (_, v) = self
                    .params
                    .iter()
                    .rev()
                    .find(|(n, _)| Some(n) == p.name.as_ref() || *n == positional)?;
                Some((i as u32, wrap_signed(*v, bits)))
            })
            .collect()
    }

    /// The block shape asked for `kernel` (its short or demangled name).
    pub fn block_dim_for(&self, short: &str, demangled: &str) -> Option<BlockDim> {
        self.kernel_dims
            .iter()
            .find(|(g, _)| glob(g, short) || glob(g, demangled))
            .map(|(_, d)| *d)
            .or(self.block_dim)
    }
}

/// `v` as a `bits`-wide integer holds it (two's complement, read signed).
fn wrap_signed(v: i128, bits: u32) -> i128 {
    if bits >= 128 {
        return v;
    }
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// Everything warpcheck knows about one kernel.
#[derive(Debug)]
pub struct KernelAnalysis {
    pub kernel: FuncId,
    /// Defined functions the kernel reaches, kernel first.
    pub reached: Vec<FuncId>,
    /// The shape this analysis is for: one of `shapes.analysed`.
    pub block_dim: BlockDim,
    /// The kernel's launches and every shape it is analysed for (a kernel
    /// launched with several has one `KernelAnalysis` per shape, in a row).
    pub shapes: LaunchShapes,
    pub spaces: Spaces,
    pub deps: KernelDeps,
    pub sites: Vec<Site>,
    /// The ACF of the sites' values, instantiated per warp.
    pub acf: KernelAcf,
    /// The budget that stopped this kernel's analysis, if one did: its
    /// sites are then unknown (and, if thread dependence stopped, all
    /// taken as thread-dependent).
    pub exhausted: Option<Exhausted>,
    /// What the analysis takes of each pointer parameter's address.
    pub pointers: Vec<PointerBase>,
}

/// What the analysis takes of a pointer parameter's address: `offset`
/// modulo `align` (256 and the offset the host launches add, for a
/// `cudaMalloc` pointer; 1 when nothing is assumed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerBase {
    pub param: u32,
    pub align: u64,
    pub offset: u64,
}

/// Each pointer parameter's base: a `cudaMalloc` allocation (256-byte
/// aligned) unless `opts` says not to assume it, plus the constant offset
/// every launch of `launches` adds where they show one (`k<<<…>>>(p + 1)`);
/// a launch that adds an offset it does not show leaves nothing known.
pub fn pointer_bases(
    m: &Module,
    kernel: FuncId,
    opts: &Options,
    launches: &[crate::ir::launch::HostLaunch],
) -> Vec<PointerBase> {
    let f = m.func(kernel);
    (0..f.params.len() as u32)
        .filter(|&i| m.types.is_ptr(f.params[i as usize].ty))
        .map(|i| {
            let unknown = PointerBase {
                param: i,
                align: 1,
                offset: 0,
            };
            if opts.no_malloc_alignment {
                return unknown;
            }
            // A launch whose arguments were not found shows no offset.
            let offsets: Option<Vec<i128>> = launches
                .iter()
                .filter(|l| !l.arg_offsets.is_empty())
                .map(|l| {
                    l.arg_offsets
                        .get(i as usize)
                        .copied()
                        .flatten()
                        .map(i128::from)
                })
                .collect();
            let Some(offsets) = offsets else {
                return unknown;
            };
            let first = offsets.first().copied().unwrap_or(0);
            let align = offsets
                .iter()
                .fold(crate::hw::MALLOC_ALIGN as i128, |g, &o| {
                    crate::acf::expr::gcd(g, o - first)
                });
            PointerBase {
                param: i,
                align: align as u64,
                offset: first.rem_euclid(align) as u64,
            }
        })
        .collect()
}

/// The results for a whole module.
pub struct ModuleAnalysis<'m> {
    pub module: &'m Module,
    pub graphs: ModuleGraphs,
    pub kernels: Vec<KernelAnalysis>,
}

/// Runs the pipeline up to thread dependence and sites for every kernel.
pub fn analyze<'m>(
    m: &'m Module,
    opts: &Options,
    deps: &(dyn DependenceAnalysis + Sync),
) -> ModuleAnalysis<'m> {
    analyze_kernels(m, graphs(m), opts, deps, &kernels(m))
}

/// Kernels analysed, reported and dropped together: enough to keep the
/// threads busy, few enough that memory follows the batch, not the module
/// (a file of thousands of template instantiations).
pub const BATCH: usize = 32;

/// Analyses `m`'s kernels a batch at a time ([`BATCH`], or four per thread
/// where that is more), hands each batch to `each` and drops its results
/// before the next: what `check`, `report` and the plugin share. Returns
/// how many kernels there were. A function's graphs are built for the
/// first batch whose kernels reach it and dropped after the last, so that
/// they too follow the batch (their loop facts grow as they are used).
pub fn in_batches<'m>(
    m: &'m Module,
    opts: &Options,
    deps: &(dyn DependenceAnalysis + Sync),
    mut each: impl FnMut(&ModuleAnalysis<'m>),
) -> usize {
    let todo = kernels(m);
    let mut graphs = ModuleGraphs::calls_only(m);
    let batches: Vec<&[FuncId]> = todo
        .chunks(BATCH.max(opts.jobs.saturating_mul(4)))
        .collect();
    let reached: Vec<Vec<FuncId>> = batches
        .iter()
        .map(|b| {
            let mut r: Vec<FuncId> = b
                .iter()
                .flat_map(|&k| graphs.calls.reachable_from(k))
                .collect();
            r.sort_unstable_by_key(|f| f.index());
            r.dedup();
            r
        })
        .collect();
    // The last batch each function is reached by.
    let mut last = vec![0usize; m.funcs.len()];
    for (i, r) in reached.iter().enumerate() {
        for f in r {
            last[f.index()] = i;
        }
    }
    for (i, (batch, r)) in batches.iter().zip(&reached).enumerate() {
        info_span!("graphs", functions = r.len()).in_scope(|| graphs.build(m, r.iter().copied()));
        let a = analyze_kernels(m, graphs, opts, deps, batch);
        each(&a);
        graphs = a.into_graphs();
        graphs.drop_graphs(r.iter().copied().filter(|f| last[f.index()] == i));
    }
    todo.len()
}

/// The kernels of `m` that have a body, in module order.
pub fn kernels(m: &Module) -> Vec<FuncId> {
    m.kernels().filter(|&k| !m.func(k).is_declaration).collect()
}

/// The graphs of every function of `m`, built once per module.
pub fn graphs(m: &Module) -> ModuleGraphs {
    let _span = info_span!("graphs", functions = m.funcs.len()).entered();
    ModuleGraphs::new(m)
}

/// The pipeline for `todo` only, on graphs built before: a caller that
/// streams a module of many kernels analyses them a few at a time,
/// reports and drops each batch, and hands the graphs on
/// ([`ModuleAnalysis::into_graphs`]), so that memory follows the batch,
/// not the module. A kernel that would start past the module's memory
/// budget is not analysed (`exhausted` says so).
pub fn analyze_kernels<'m>(
    m: &'m Module,
    graphs: ModuleGraphs,
    opts: &Options,
    deps: &(dyn DependenceAnalysis + Sync),
    todo: &[FuncId],
) -> ModuleAnalysis<'m> {
    // A kernel launched with several block shapes is analysed for each.
    let todo: Vec<(FuncId, LaunchShapes, BlockDim)> = todo
        .iter()
        .flat_map(|&k| {
            let func = m.func(k);
            let asked = opts.block_dim_for(&func.short_name(), &func.demangled);
            let shapes = LaunchShapes::resolve(func, asked, &opts.launches);
            let each = shapes.analysed.clone();
            each.into_iter().map(move |b| (k, shapes.clone(), b))
        })
        .collect();
    let kernels = in_parallel(&todo, opts.jobs, |(k, shapes, b)| {
        let shape = (shapes.clone(), *b);
        match opts.budget.memory_for(0) {
            Ok(()) => analyze_kernel(m, &graphs, opts, deps, *k, shape),
            Err(e) => not_analysed(m, &graphs, *k, shape, e),
        }
    });
    ModuleAnalysis {
        module: m,
        graphs,
        kernels,
    }
}

impl ModuleAnalysis<'_> {
    /// The module's graphs, for the next batch of kernels.
    pub fn into_graphs(self) -> ModuleGraphs {
        self.graphs
    }
}

/// A kernel left out on `why` (the module's memory): no sites, one note.
fn not_analysed(
    m: &Module,
    graphs: &ModuleGraphs,
    k: FuncId,
    (shapes, block_dim): (LaunchShapes, BlockDim),
    why: Exhausted,
) -> KernelAnalysis {
    let func = m.func(k);
    warn!(kernel = %func.demangled, budget = why.name(), "kernel not analysed: {why}");
    KernelAnalysis {
        kernel: k,
        reached: graphs.calls.reachable_from(k),
        spaces: Spaces::default(),
        deps: KernelDeps::default(),
        sites: Vec::new(),
        acf: KernelAcf::empty(k, block_dim.dims),
        pointers: Vec::new(),
        block_dim,
        shapes,
        exhausted: Some(why),
    }
}

/// `work` on every item, on up to `jobs` threads, results in item order.
/// Kernels are independent; a module of many (a file of template
/// instantiations) is where a build waits on us longest. Each thread
/// reports to the caller's tracing subscriber.
fn in_parallel<I: Sync, T: Send>(
    items: &[I],
    jobs: usize,
    work: impl Fn(&I) -> T + Sync,
) -> Vec<T> {
    let jobs = jobs.clamp(1, items.len().max(1));
    if jobs == 1 {
        return items.iter().map(&work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let parent = tracing::Span::current();
    let mut done: Vec<(usize, T)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| {
                    tracing::dispatcher::with_default(&dispatch, || {
                        let _in = parent.enter();
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(k) = items.get(i) else { break out };
                            out.push((i, work(k)));
                        }
                    })
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|x| x.0);
    done.into_iter().map(|x| x.1).collect()
}

fn analyze_kernel(
    m: &Module,
    graphs: &ModuleGraphs,
    opts: &Options,
    deps: &dyn DependenceAnalysis,
    k: FuncId,
    (shapes, block_dim): (LaunchShapes, BlockDim),
) -> KernelAnalysis {
    let name = m.func(k).demangled.clone();
    let _kernel = info_span!("kernel", name = %name).entered();
    let meter = opts.budget.start();
    let reached = graphs.calls.reachable_from(k);
    let pointers = pointer_bases(m, k, opts, &shapes.sites);
    let spaces = Spaces::for_kernel(m, k, &reached);
    let taint = info_span!(
        "taint",
        path_edges = Empty,
        summary_edges = Empty,
        rounds = Empty
    )
    .in_scope(|| {
        let scope = KernelScope {
            m,
            graphs,
            kernel: k,
            reached: &reached,
            spaces: &spaces,
        };
        warn_on_budget(deps.analyze_within(&scope, &meter))
    });
    let (kdeps, mut exhausted) = match taint {
        Ok(d) => (d, None),
        Err(e) => (KernelDeps::default(), Some(e)),
    };
    let mut sites = sites::collect(m, &reached, &spaces, &kdeps, !opts.no_explanations);
    if exhausted.is_some() {
        // Nothing is known uniform.
        for s in &mut sites {
            s.thread_dependent = true;
        }
    }
    let acf = match exhausted {
        Some(_) => KernelAcf::empty(k, block_dim.dims),
        None => {
            // Uniform sites need no per-lane figures, but for atomics (how
            // many lanes update one address).
            let values: Vec<_> = sites
                .iter()
                .filter(|s| s.thread_dependent || s.kind == SiteKind::Atomic)
                .map(|s| (s.func, s.value, m.func(s.func).inst(s.inst).block))
                .chain(row_values(m, &sites))
                .collect();
            let span = info_span!(
                "acf",
                exprs = Empty,
                contexts = Empty,
                leaves_on_budget = Empty
            );
            let built = span.in_scope(|| {
                let bases: Vec<(u32, crate::acf::expr::Congruence)> = pointers
                    .iter()
                    .map(|p| {
                        let c = crate::acf::expr::Congruence::new(
                            i128::from(p.align),
                            i128::from(p.offset),
                        );
                        (p.param, c)
                    })
                    .collect();
                let input = crate::acf::Input {
                    m,
                    graphs,
                    deps: &kdeps,
                    kernel: k,
                    reached: &reached,
                    pinned: &opts.pinned(m, k),
                    pointer_bases: &bases,
                };
                warn_on_budget(KernelAcf::new(&input, block_dim.dims, &values, &meter))
            });
            built.unwrap_or_else(|e| {
                exhausted = Some(e);
                KernelAcf::empty(k, block_dim.dims)
            })
        }
    };
    KernelAnalysis {
        kernel: k,
        block_dim,
        shapes,
        reached,
        spaces,
        deps: kdeps,
        sites,
        acf,
        exhausted,
        pointers,
    }
}

/// Says, inside the running stage's span, that a budget stopped it.
fn warn_on_budget<T>(r: Result<T, Exhausted>) -> Result<T, Exhausted> {
    if let Err(e) = &r {
        warn!(budget = e.name(), "analysis stopped: {e}");
    }
    r
}

/// The row indices of thread-dependent accesses into two-dimensional
/// `__shared__` arrays, for the ACF: the bank-conflict check evaluates a
/// padded pitch from them (`memory::rows`).
fn row_values<'s>(
    m: &'s Module,
    sites: &'s [Site],
) -> impl Iterator<Item = (FuncId, Value, BlockId)> + 's {
    sites
        .iter()
        .filter(|s| s.thread_dependent && s.space == Some(Space::Shared))
        .flat_map(move |s| {
            let func = m.func(s.func);
            let block = func.inst(s.inst).block;
            crate::memory::rows::row_terms(m, func, s.value)
                .into_iter()
                .flat_map(|r| r.terms)
                .filter(|(v, _)| matches!(v, Value::Inst(_) | Value::Arg(_)))
                .map(move |(v, _)| (s.func, v, block))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::taint::ifds::IfdsTaint;

    /// Kernel `k(i1 c)`: `if (c) tid.x;` — two kernels of it, `k0`, `k1`.
    fn two_kernels() -> Module {
        let mut mb = ModuleBuilder::new();
        let i1 = mb.int(1);
        let void = mb.void();
        for name in ["k0", "k1"] {
            let mut fb = mb.define(name, &[i1], void);
            fb.kernel();
            let (then, exit) = (fb.block(), fb.block());
            fb.cond_br(crate::ir::Value::Arg(0), then, exit);
            fb.switch_to(then);
            fb.sreg("tid.x");
            fb.br(exit);
            fb.switch_to(exit);
            fb.ret(None);
        }
        mb.finish()
    }

    #[test]
    fn a_kernel_past_the_memory_budget_is_not_analysed() {
        let m = two_kernels();
        let mut opts = Options::default();
        // Any process holds more than one byte: neither kernel starts.
        opts.budget.memory = 1;
        let a = analyze(&m, &opts, &IfdsTaint);
        if crate::budget::resident_bytes().is_some() {
            assert_eq!(a.kernels.len(), 2);
            for k in &a.kernels {
                assert_eq!(k.exhausted, Some(Exhausted::Memory(1)));
                assert!(k.sites.is_empty());
            }
        }
        // Lifted, both are analysed: each has its branch on `c`.
        opts.budget.memory = usize::MAX;
        let a = analyze(&m, &opts, &IfdsTaint);
        for k in &a.kernels {
            assert_eq!(k.exhausted, None);
            assert_eq!(k.sites.len(), 1);
        }
    }

    #[test]
    fn batches_give_what_the_whole_module_gives() {
        let m = two_kernels();
        let opts = Options::default();
        let whole = analyze(&m, &opts, &IfdsTaint);
        let todo = kernels(&m);
        let first = analyze_kernels(&m, graphs(&m), &opts, &IfdsTaint, &todo[..1]);
        let second = analyze_kernels(&m, first.graphs, &opts, &IfdsTaint, &todo[1..]);
        let batched = [&first.kernels[0], &second.kernels[0]];
        for (w, b) in whole.kernels.iter().zip(batched) {
            assert_eq!(w.kernel, b.kernel);
            assert_eq!(w.sites.len(), b.sites.len());
            let dep = |k: &KernelAnalysis| {
                k.sites
                    .iter()
                    .map(|s| s.thread_dependent)
                    .collect::<Vec<_>>()
            };
            assert_eq!(dep(w), dep(b));
        }
    }
}
