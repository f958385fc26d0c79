//! The block shapes a kernel is analysed for, by priority: the kernel's
//! `reqntid` (exact), what the user asked for (`--block-dim`, the
//! configuration's `Kernels`), the shapes its launches in the host code
//! write down (`ir::launch`), `__launch_bounds__` (a maximum, taken as
//! the shape), and 256×1×1. A kernel launched with several block shapes
//! is analysed once for each; the checks keep the worst finding at each
//! place and name the shape it came from.

use super::block_dim::{check_block, BlockDim, BlockDimSource};
use crate::ir::launch::HostLaunch;
use crate::ir::Function;

/// A kernel's launches and the shapes they make it analysed for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchShapes {
    /// Every launch of the kernel in the host code, in the file's order;
    /// `BlockDimSource::Launch(i)` names the `i`-th.
    pub sites: Vec<HostLaunch>,
    /// The shapes the kernel is analysed for (one unless its launches
    /// give several).
    pub analysed: Vec<BlockDim>,
}

impl LaunchShapes {
    /// The launches of `kernel` in `launches` and the shapes to analyse
    /// it for.
    pub fn resolve(
        kernel: &Function,
        requested: Option<BlockDim>,
        launches: &[HostLaunch],
    ) -> LaunchShapes {
        let sites: Vec<HostLaunch> = launches
            .iter()
            .filter(|l| l.kernel == kernel.name)
            .cloned()
            .collect();
        let analysed = if let Some(dims) = kernel.launch.reqntid {
            vec![BlockDim {
                dims,
                source: BlockDimSource::Reqntid,
            }]
        } else if let Some(r) = requested {
            vec![r]
        } else {
            let from_sites = distinct_blocks(&sites);
            if from_sites.is_empty() {
                vec![BlockDim::resolve(kernel, None)]
            } else {
                from_sites
            }
        };
        LaunchShapes { sites, analysed }
    }

    /// The launch a shape came from, if it came from one.
    pub fn site_of(&self, b: &BlockDim) -> Option<&HostLaunch> {
        match b.source {
            BlockDimSource::Launch(i) => self.sites.get(i),
            _ => None,
        }
    }

    /// The launches whose block is computed at run time.
    pub fn unknown_blocks(&self) -> impl Iterator<Item = &HostLaunch> {
        self.sites.iter().filter(|l| valid_block(l).is_none())
    }

    /// Says, for a finding of an analysis at `b`, which shape it is when
    /// the kernel is analysed for several (to end the finding's message):
    /// `None` when there is one.
    pub fn shape_note(&self, b: &BlockDim) -> Option<String> {
        if self.analysed.len() < 2 {
            return None;
        }
        let others: Vec<String> = self
            .analysed
            .iter()
            .filter(|o| o.dims != b.dims)
            .map(|o| shape_text(o.dims))
            .collect();
        let at = self
            .site_of(b)
            .map(|l| format!(" of the launch at {}:{}", l.file, l.line))
            .unwrap_or_default();
        Some(format!(
            "with the {} block{at} (also launched with {})",
            shape_text(b.dims),
            others.join(", ")
        ))
    }
}

/// `16×16×1`.
pub fn shape_text(d: [u32; 3]) -> String {
    format!("{}×{}×{}", d[0], d[1], d[2])
}

/// A launch's block, when it is constant and one CUDA accepts.
fn valid_block(l: &HostLaunch) -> Option<[u32; 3]> {
    l.block.filter(|b| check_block(b).is_ok())
}

/// Each block shape the launches give, once, from its first launch.
fn distinct_blocks(sites: &[HostLaunch]) -> Vec<BlockDim> {
    let mut out: Vec<BlockDim> = Vec::new();
    for (i, l) in sites.iter().enumerate() {
        if let Some(dims) = valid_block(l) {
            if !out.iter().any(|b| b.dims == dims) {
                out.push(BlockDim {
                    dims,
                    source: BlockDimSource::Launch(i),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;

    fn launch(kernel: &str, block: Option<[u32; 3]>, line: u32) -> HostLaunch {
        HostLaunch {
            arg_offsets: Vec::new(),
            kernel: kernel.into(),
            grid: None,
            block,
            shared_bytes: Some(0),
            file: "t.cu".into(),
            line,
        }
    }

    #[test]
    fn priority_and_distinct_shapes() {
        let mut mb = ModuleBuilder::new();
        let void = mb.void();
        mb.define("k", &[], void).kernel().ret(None);
        let mut m = mb.finish();
        let launches = [
            launch("k", Some([16, 16, 1]), 10),
            launch("other", Some([64, 1, 1]), 11),
            launch("k", None, 12),
            launch("k", Some([16, 16, 1]), 13),
            launch("k", Some([32, 4, 1]), 14),
            // 2048 threads: no launch CUDA accepts, so not a shape.
            launch("k", Some([2048, 1, 1]), 15),
        ];
        let k = &mut m.funcs[0];
        k.launch.maxntid = Some([512, 1, 1]);
        let s = LaunchShapes::resolve(k, None, &launches);
        // Launch sites win over __launch_bounds__; each shape once, from
        // its first launch (sites are the kernel's own: 10, 12, 13, 14, 15).
        assert_eq!(s.sites.len(), 5);
        let got: Vec<_> = s.analysed.iter().map(|b| (b.dims, b.source)).collect();
        assert_eq!(
            got,
            [
                ([16, 16, 1], BlockDimSource::Launch(0)),
                ([32, 4, 1], BlockDimSource::Launch(3))
            ]
        );
        assert_eq!(
            s.unknown_blocks().map(|l| l.line).collect::<Vec<_>>(),
            [12, 15]
        );
        let note = s.shape_note(&s.analysed[1]).unwrap();
        assert_eq!(
            note,
            "with the 32×4×1 block of the launch at t.cu:14 (also launched with 16×16×1)"
        );
        // The option wins over launches; reqntid over everything.
        let opt = BlockDim::parse("128", BlockDimSource::Option).unwrap();
        let s = LaunchShapes::resolve(k, Some(opt), &launches);
        assert_eq!(s.analysed, [opt]);
        assert_eq!(s.shape_note(&opt), None);
        k.launch.reqntid = Some([8, 8, 1]);
        let s = LaunchShapes::resolve(k, Some(opt), &launches);
        assert_eq!(s.analysed[0].source, BlockDimSource::Reqntid);
        // Without launches of a known block: __launch_bounds__, then the default.
        k.launch.reqntid = None;
        let only_unknown = [launch("k", None, 3)];
        let s = LaunchShapes::resolve(k, None, &only_unknown);
        assert_eq!(s.analysed[0].source, BlockDimSource::LaunchBounds);
        k.launch.maxntid = None;
        let s = LaunchShapes::resolve(k, None, &only_unknown);
        assert_eq!(s.analysed[0].source, BlockDimSource::Default);
        assert_eq!(s.analysed[0].dims, [256, 1, 1]);
    }
}
