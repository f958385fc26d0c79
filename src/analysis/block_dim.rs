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
    /// The `i`-th launch of the kernel in the host code
    /// (`shapes::LaunchShapes::sites`).
    Launch(usize),
}

impl BlockDimSource {
    pub fn name(self) -> &'static str {
        match self {
            BlockDimSource::Default => "default",
            BlockDimSource::LaunchBounds => "launch_bounds",
            BlockDimSource::Reqntid => "reqntid",
            BlockDimSource::Option => "option",
            BlockDimSource::Config => "config",
            BlockDimSource::Launch(_) => "launch",
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

    /// Parses `X[,Y[,Z]]`, each at least 1 and within CUDA's limits.
    pub fn parse(text: &str, source: BlockDimSource) -> Result<BlockDim, String> {
        let dims = parse_dims(text, "block shape")?;
        check_block(&dims).map_err(|e| format!("block shape '{text}': {e}"))?;
        Ok(BlockDim { dims, source })
    }
}

/// Parses a grid `X[,Y[,Z]]`, each at least 1 and within CUDA's limits.
pub fn parse_grid(text: &str) -> Result<[u32; 3], String> {
    let dims = parse_dims(text, "grid")?;
    check_grid(&dims).map_err(|e| format!("grid '{text}': {e}"))?;
    Ok(dims)
}

/// `X[,Y[,Z]]` as numbers of at least 1; a number too large for a
/// dimension is left for the limits to name (it is over all of them).
fn parse_dims(text: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} '{text}' must be X[,Y[,Z]]"));
    }
    let mut dims = [1u32; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        let v: u128 = p
            .parse()
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| format!("{what} '{text}': '{p}' is not a positive integer"))?;
        *d = u32::try_from(v).map_err(|_| {
            format!("{what} '{text}': {v} is over CUDA's limits (at most 2^31-1 along any axis)")
        })?;
    }
    Ok(dims)
}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// CUDA's limits on a block: at most 1024, 1024 and 64 threads along x, y
/// and z, and 1024 in all.
pub fn check_block(dims: &[u32]) -> Result<(), String> {
    within(dims, crate::hw::MAX_BLOCK_DIM)?;
    let threads: u64 = dims.iter().map(|&d| u64::from(d)).product();
    if threads > crate::hw::MAX_BLOCK_THREADS {
        return Err(format!(
            "{threads} threads, over CUDA's limit of {} per block",
            crate::hw::MAX_BLOCK_THREADS
        ));
    }
    Ok(())
}

/// CUDA's limits on a grid: at most 2^31-1 blocks along x, 65535 along y
/// and z.
pub fn check_grid(dims: &[u32]) -> Result<(), String> {
    within(dims, crate::hw::MAX_GRID_DIM)
}

fn within(dims: &[u32], max: [u32; 3]) -> Result<(), String> {
    if dims.is_empty() || dims.len() > 3 || dims.contains(&0) {
        return Err(format!("expected 1 to 3 positive numbers, got {dims:?}"));
    }
    for ((&d, m), axis) in dims.iter().zip(max).zip(AXES) {
        if d > m {
            return Err(format!("{axis} = {d} is over CUDA's limit of {m}"));
        }
    }
    Ok(())
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

    #[test]
    fn cuda_limits_at_the_limit_and_one_over() {
        let block = |t: &str| BlockDim::parse(t, BlockDimSource::Option).map(|b| b.dims);
        // 1024 threads along x, or 16 x 64 = 1024, are the most a block has.
        assert_eq!(block("1024").unwrap(), [1024, 1, 1]);
        assert_eq!(block("1,16,64").unwrap(), [1, 16, 64]);
        for bad in ["1025", "1,1025", "1,1,65", "33,32", "1024,1024,64"] {
            assert!(block(bad).is_err(), "{bad}");
        }
        // 2^32, 2^64-1, 2^64: over every limit, and said so (not a panic).
        for huge in ["4294967296", "18446744073709551615", "18446744073709551616"] {
            let e = block(huge).unwrap_err();
            assert!(e.contains("over CUDA's limits"), "{e}");
            assert!(parse_grid(huge).is_err());
        }
        let e = block("2147483647,2147483647,2147483647").unwrap_err();
        assert!(
            e.contains("x = 2147483647 is over CUDA's limit of 1024"),
            "{e}"
        );
        assert_eq!(
            parse_grid("2147483647,65535,65535").unwrap()[0],
            (1 << 31) - 1
        );
        for bad in ["2147483648", "1,65536", "1,1,65536", "4294967295"] {
            assert!(parse_grid(bad).is_err(), "{bad}");
        }
    }
}
