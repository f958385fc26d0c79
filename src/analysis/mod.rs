//! The driver: runs every stage over a module and keeps the typed results
//! that checks and reports read.

mod block_dim;
mod sites;

pub use block_dim::{BlockDim, BlockDimSource};
pub use sites::{Site, SiteKind};

use crate::acf::KernelAcf;
use crate::graph::ModuleGraphs;
use crate::ir::{FuncId, Module};
use crate::memory::Spaces;
use crate::taint::{DependenceAnalysis, KernelDeps};

/// What the user configured.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--block-dim`, or the plugin's configuration.
    pub block_dim: Option<BlockDim>,
    /// Checks switched off by name.
    pub disabled: Vec<String>,
    /// Leave out the dependence chains (`Site::why`) and the notes made of
    /// them: for text without `--explain` and for the plugin, which show
    /// neither.
    pub no_explanations: bool,
}

/// Everything warpcheck knows about one kernel.
#[derive(Debug)]
pub struct KernelAnalysis {
    pub kernel: FuncId,
    /// Defined functions the kernel reaches, kernel first.
    pub reached: Vec<FuncId>,
    pub block_dim: BlockDim,
    pub spaces: Spaces,
    pub deps: KernelDeps,
    pub sites: Vec<Site>,
    /// The ACF of the sites' values, instantiated per warp.
    pub acf: KernelAcf,
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
    deps: &dyn DependenceAnalysis,
) -> ModuleAnalysis<'m> {
    let graphs = ModuleGraphs::new(m);
    let kernels = m
        .kernels()
        .filter(|&k| !m.func(k).is_declaration)
        .map(|k| {
            let reached = graphs.calls.reachable_from(k);
            let spaces = Spaces::for_kernel(m, k, &reached);
            let kdeps = deps.analyze(m, &graphs, k, &reached, &spaces);
            let sites = sites::collect(m, &reached, &spaces, &kdeps, !opts.no_explanations);
            let block_dim = BlockDim::resolve(m.func(k), opts.block_dim);
            // Uniform sites need no per-lane figures.
            let values: Vec<_> = sites
                .iter()
                .filter(|s| s.thread_dependent)
                .map(|s| (s.func, s.value))
                .collect();
            let acf = KernelAcf::new(m, &graphs, &kdeps, k, &reached, block_dim.dims, &values);
            KernelAnalysis {
                kernel: k,
                block_dim,
                reached,
                spaces,
                deps: kdeps,
                sites,
                acf,
            }
        })
        .collect();
    ModuleAnalysis {
        module: m,
        graphs,
        kernels,
    }
}
