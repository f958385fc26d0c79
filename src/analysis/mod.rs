//! The driver: runs every stage over a module and keeps the typed results
//! that checks and reports read.

mod block_dim;
mod sites;

pub use block_dim::{BlockDim, BlockDimSource};
pub use sites::{Site, SiteKind};

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
}

/// Everything warpcheck knows about one kernel.
#[derive(Clone, Debug)]
pub struct KernelAnalysis {
    pub kernel: FuncId,
    /// Defined functions the kernel reaches, kernel first.
    pub reached: Vec<FuncId>,
    pub block_dim: BlockDim,
    pub spaces: Spaces,
    pub deps: KernelDeps,
    pub sites: Vec<Site>,
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
            let sites = sites::collect(m, &reached, &spaces, &kdeps);
            KernelAnalysis {
                kernel: k,
                block_dim: BlockDim::resolve(m.func(k), opts.block_dim),
                reached,
                spaces,
                deps: kdeps,
                sites,
            }
        })
        .collect();
    ModuleAnalysis {
        module: m,
        graphs,
        kernels,
    }
}
