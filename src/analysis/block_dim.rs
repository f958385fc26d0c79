//! The block shape a kernel is analysed for.

use crate::ir::Function;

/// Where a kernel's block shape came from, as the JSON reports it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BlockDimSource {
    Default,
    LaunchBounds,
    Reqntid,
    Option,
    Config,
}

impl BlockDimSource {
    pub fn name(self) -> &'static str {
        match self {
            BlockDimSource::Default => "default",
            BlockDimSource::LaunchBounds => "launch_bounds",
            BlockDimSource::Reqntid => "reqntid",
            BlockDimSource::Option => "option",
            BlockDimSource::Config => "config",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct BlockDim {
    pub dims: [u32; 3],
    pub source: BlockDimSource,
}

impl BlockDim {
    pub const DEFAULT: [u32; 3] = [256, 1, 1];

    pub fn threads(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }

    /// A kernel's `reqntid` is exact and always wins; `__launch_bounds__`
    /// wins over the default but not over what the user asked for.
    pub fn resolve(kernel: &Function, requested: Option<BlockDim>) -> BlockDim {
        if let Some(dims) = kernel.launch.reqntid {
            return BlockDim {
                dims,
                source: BlockDimSource::Reqntid,
            };
        }
        if let Some(r) = requested {
            return r;
        }
        if let Some(dims) = kernel.launch.maxntid {
            return BlockDim {
                dims,
                source: BlockDimSource::LaunchBounds,
            };
        }
        BlockDim {
            dims: Self::DEFAULT,
            source: BlockDimSource::Default,
        }
    }

    /// Parses `X[,Y[,Z]]`, each at least 1.
    pub fn parse(text: &str, source: BlockDimSource) -> Result<BlockDim, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!("block shape '{text}' must be X[,Y[,Z]]"));
        }
        let mut dims = [1u32; 3];
        for (d, p) in dims.iter_mut().zip(&parts) {
            *d =
                p.parse().ok().filter(|&v| v >= 1).ok_or_else(|| {
                    format!("block shape '{text}': '{p}' is not a positive integer")
                })?;
        }
        Ok(BlockDim { dims, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;

    #[test]
    fn precedence() {
        let mut mb = ModuleBuilder::new();
        let void = mb.void();
        mb.define("k", &[], void).kernel().ret(None);
        let mut m = mb.finish();
        let opt = BlockDim::parse("128,2", BlockDimSource::Option).unwrap();
        assert_eq!(opt.dims, [128, 2, 1]);
        let k = &mut m.funcs[0];
        assert_eq!(BlockDim::resolve(k, None).source, BlockDimSource::Default);
        k.launch.maxntid = Some([512, 1, 1]);
        assert_eq!(BlockDim::resolve(k, None).dims, [512, 1, 1]);
        assert_eq!(BlockDim::resolve(k, Some(opt)).dims, [128, 2, 1]);
        k.launch.reqntid = Some([32, 8, 1]);
        assert_eq!(
            BlockDim::resolve(k, Some(opt)).source,
            BlockDimSource::Reqntid
        );
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(BlockDim::parse("0", BlockDimSource::Option).is_err());
        assert!(BlockDim::parse("1,2,3,4", BlockDimSource::Option).is_err());
        assert!(BlockDim::parse("a", BlockDimSource::Option).is_err());
    }
}
