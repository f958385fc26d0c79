//! What LLVM 20-22 spell differently from LLVM 19, mapped to the LLVM 19
//! forms that every later stage reads. Pure Rust: the loader asks these
//! tables while it copies a module, so no stage after it can tell which
//! LLVM made the IR.
//!
//! LLVM 22 also upgrades LLVM 19's forms itself when it reads old IR
//! (`nvvm.annotations` become the attributes below, `barrier0` becomes
//! `barrier.cta.sync.aligned.all(0)`), so an LLVM 22 build sees only the
//! new forms, whichever clang wrote the module.

/// A launch-bound attribute (`"nvvm.maxntid"="128,2"`: missing trailing
/// dimensions are 1) as the three dimensions `nvvm.annotations` gave.
pub fn launch_dims(text: &str) -> Option<[u32; 3]> {
    let mut dims = [1u32; 3];
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    for (slot, part) in dims.iter_mut().zip(&parts) {
        *slot = part.parse().ok()?;
    }
    Some(dims)
}

/// A call to rewrite: the LLVM 19 intrinsic to call instead, and whether
/// the first argument (the barrier id, always 0 here) goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallRewrite {
    pub callee: &'static str,
    pub drop_id: bool,
}

/// The LLVM 19 form of a call to LLVM 22's `llvm.nvvm.barrier.cta.*`
/// intrinsic `name`, given whether its first argument (the barrier id) is
/// the constant 0. `None`: no LLVM 19 intrinsic means the same (arrive,
/// reductions on a named barrier or a thread count); it stays as it is,
/// an intrinsic the analyses do not know.
pub fn barrier_call(name: &str, id_is_zero: bool) -> Option<CallRewrite> {
    let form = name.strip_prefix("llvm.nvvm.barrier.cta.")?;
    let to = |callee, drop_id| Some(CallRewrite { callee, drop_id });
    match (form, id_is_zero) {
        // `bar.sync 0`, i.e. __syncthreads(), and its reductions.
        ("sync.aligned.all", true) => to("llvm.nvvm.barrier0", true),
        ("red.popc.aligned.all", true) => to("llvm.nvvm.barrier0.popc", true),
        ("red.and.aligned.all", true) => to("llvm.nvvm.barrier0.and", true),
        ("red.or.aligned.all", true) => to("llvm.nvvm.barrier0.or", true),
        // Named barriers and thread counts keep their operands.
        ("sync.aligned.all", false) => to("llvm.nvvm.barrier.n", false),
        ("sync.aligned.count", _) => to("llvm.nvvm.barrier", false),
        ("sync.all", _) => to("llvm.nvvm.barrier.sync", false),
        ("sync.count", _) => to("llvm.nvvm.barrier.sync.cnt", false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::intrinsics::{Barrier, BarrierOperands, BarrierReduce, Intrinsic};

    #[test]
    fn launch_bounds_fill_missing_dimensions_with_one() {
        assert_eq!(launch_dims("128"), Some([128, 1, 1]));
        assert_eq!(launch_dims("64,2"), Some([64, 2, 1]));
        assert_eq!(launch_dims("32, 1, 3"), Some([32, 1, 3]));
        assert_eq!(launch_dims("1,2,3,4"), None);
        assert_eq!(launch_dims("x"), None);
        assert_eq!(launch_dims(""), None);
    }

    #[test]
    fn syncthreads_and_its_reductions_become_barrier0() {
        // LLVM 22 writes __syncthreads_count(p) as red.popc(0, p); LLVM 19
        // as barrier0.popc(p): the id goes, the predicate stays.
        let r = barrier_call("llvm.nvvm.barrier.cta.red.popc.aligned.all", true).unwrap();
        assert_eq!(r.callee, "llvm.nvvm.barrier0.popc");
        assert!(r.drop_id);
        for (new, reduce) in [
            ("sync.aligned.all", BarrierReduce::None),
            ("red.popc.aligned.all", BarrierReduce::Popc),
            ("red.and.aligned.all", BarrierReduce::And),
            ("red.or.aligned.all", BarrierReduce::Or),
        ] {
            let r = barrier_call(&format!("llvm.nvvm.barrier.cta.{new}"), true).unwrap();
            assert_eq!(
                Intrinsic::from_name(r.callee),
                Some(Intrinsic::Barrier(Barrier {
                    reduce,
                    operands: BarrierOperands::Implicit,
                    aligned: true,
                })),
                "{new}"
            );
        }
    }

    #[test]
    fn named_barriers_keep_their_id() {
        let r = barrier_call("llvm.nvvm.barrier.cta.sync.aligned.all", false).unwrap();
        assert_eq!(r.callee, "llvm.nvvm.barrier.n");
        assert!(!r.drop_id);
        let r = barrier_call("llvm.nvvm.barrier.cta.sync.count", true).unwrap();
        assert_eq!(r.callee, "llvm.nvvm.barrier.sync.cnt");
        assert!(!r.drop_id);
        // A reduction on another barrier has no LLVM 19 spelling.
        assert_eq!(
            barrier_call("llvm.nvvm.barrier.cta.red.popc.aligned.all", false),
            None
        );
        assert_eq!(
            barrier_call("llvm.nvvm.barrier.cta.arrive.aligned.count", true),
            None
        );
        assert_eq!(barrier_call("llvm.nvvm.barrier0", true), None);
    }
}
