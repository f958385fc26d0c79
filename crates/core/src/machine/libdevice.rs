//! What a call to a libdevice function stands for when libdevice is not
//! linked (`-nocudalib`, warpcheck's own headers): the body it would
//! inline, as instructions by class. Costed as one instruction, `__nv_expf`
//! would make a kernel's other sites look several times costlier than the
//! same kernel built with libdevice linked; with its body's issue slots and
//! latencies the two builds agree.
//!
//! The counts are measured, not estimated: each function is compiled into
//! a `noinline` wrapper by clang 19 (`-O2`, sm_80) with CUDA 12.4's
//! `libdevice.10.bc` linked, and the wrapper's instructions are counted by
//! [`super::class_of`], every block once (a slow path and a loop's body
//! included, as the time model counts an inlined body's blocks).
//! `tests/libdevice_costs.rs` measures them again and fails, printing the
//! table, when a row differs. Functions that write through a pointer
//! (`sincosf`, `frexp`, `modf`, ...) are not in it: they keep the cost of
//! one math instruction.

use super::Machine;
use crate::ir::intrinsics::Family;
use crate::ir::{Callee, Inst, Module};

/// A body's instructions by class.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Body {
    pub alu: u32,
    pub fp64: u32,
    pub div: u32,
    pub math: u32,
    /// Loads of libdevice's constant tables.
    pub memory: u32,
}

impl Body {
    pub const fn new([alu, fp64, div, math, memory]: [u32; 5]) -> Body {
        Body {
            alu,
            fp64,
            div,
            math,
            memory,
        }
    }

    /// The warp instructions it issues.
    pub fn issues(&self) -> u64 {
        u64::from(self.alu + self.fp64 + self.div + self.math + self.memory)
    }
}

impl Machine {
    /// Cycles a warp waits for a body, each instruction its class's
    /// latency (a table load as a constant-memory hit): the chain the time
    /// model gives the same instructions inlined.
    pub fn body_latency(&self, b: &Body) -> u64 {
        let each = |n: u32, latency: u32| u64::from(n) * u64::from(latency);
        each(b.alu, self.alu_latency)
            + each(b.fp64, self.fp64_latency)
            + each(b.div, self.div_latency)
            + each(b.math, self.math_latency)
            + each(b.memory, self.local_latency)
    }
}

/// The body `inst` stands for, when it calls a libdevice function of the
/// table (declared, not linked: a linked one is inlined, no call left).
pub fn called(m: &Module, inst: &Inst) -> Option<&'static Body> {
    let Some(Callee::Direct(f)) = inst.callee() else {
        return None;
    };
    match Family::split(&m.func(f).name)? {
        (Family::Libdevice, name) => body(name),
        _ => None,
    }
}

/// The body of libdevice's `__nv_<name>`, if the table has it.
pub fn body(name: &str) -> Option<&'static Body> {
    BODIES
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| &BODIES[i].1)
}

/// `(name without __nv_, [alu, fp64, div, math, memory])`, sorted by name.
#[rustfmt::skip]
pub static BODIES: &[(&str, Body)] = &[
    ("abs", Body::new([1, 0, 0, 0, 0])),
    ("acos", Body::new([17, 53, 0, 8, 0])),
    ("acosf", Body::new([32, 0, 0, 1, 0])),
    ("acosh", Body::new([56, 104, 1, 19, 0])),
    ("acoshf", Body::new([69, 0, 0, 1, 0])),
    ("asin", Body::new([13, 47, 0, 6, 0])),
    ("asinf", Body::new([29, 0, 0, 1, 0])),
    ("asinh", Body::new([56, 107, 2, 23, 0])),
    ("asinhf", Body::new([49, 0, 1, 2, 0])),
    ("atan", Body::new([6, 30, 0, 4, 0])),
    ("atan2", Body::new([21, 37, 1, 12, 0])),
    ("atan2f", Body::new([53, 0, 2, 0, 0])),
    ("atanf", Body::new([25, 0, 0, 0, 0])),
    ("atanh", Body::new([29, 58, 2, 12, 0])),
    ("atanhf", Body::new([47, 0, 0, 0, 0])),
    ("brev", Body::new([1, 0, 0, 0, 0])),
    ("brevll", Body::new([1, 0, 0, 0, 0])),
    ("byte_perm", Body::new([2, 0, 0, 0, 0])),
    ("cbrt", Body::new([23, 20, 0, 14, 0])),
    ("cbrtf", Body::new([13, 0, 0, 2, 0])),
    ("ceil", Body::new([0, 0, 0, 1, 0])),
    ("ceilf", Body::new([0, 0, 0, 1, 0])),
    ("clz", Body::new([1, 0, 0, 0, 0])),
    ("clzll", Body::new([2, 0, 0, 0, 0])),
    ("copysign", Body::new([3, 1, 0, 3, 0])),
    ("copysignf", Body::new([6, 0, 0, 0, 0])),
    ("cos", Body::new([28, 19, 0, 3, 8])),
    ("cosf", Body::new([88, 3, 0, 1, 6])),
    ("cosh", Body::new([9, 24, 0, 7, 0])),
    ("coshf", Body::new([20, 0, 0, 3, 0])),
    ("cospi", Body::new([22, 17, 0, 4, 6])),
    ("cospif", Body::new([28, 0, 0, 1, 0])),
    ("cyl_bessel_i0", Body::new([21, 71, 1, 6, 0])),
    ("cyl_bessel_i0f", Body::new([57, 0, 0, 3, 0])),
    ("cyl_bessel_i1", Body::new([23, 73, 1, 9, 0])),
    ("cyl_bessel_i1f", Body::new([63, 0, 0, 3, 0])),
    ("dadd_rd", Body::new([0, 1, 0, 0, 0])),
    ("dadd_rn", Body::new([0, 1, 0, 0, 0])),
    ("dadd_ru", Body::new([0, 1, 0, 0, 0])),
    ("dadd_rz", Body::new([0, 1, 0, 0, 0])),
    ("ddiv_rd", Body::new([0, 0, 0, 1, 0])),
    ("ddiv_rn", Body::new([0, 0, 1, 0, 0])),
    ("ddiv_ru", Body::new([0, 0, 0, 1, 0])),
    ("ddiv_rz", Body::new([0, 0, 0, 1, 0])),
    ("dmul_rd", Body::new([0, 1, 0, 0, 0])),
    ("dmul_rn", Body::new([0, 1, 0, 0, 0])),
    ("dmul_ru", Body::new([0, 1, 0, 0, 0])),
    ("dmul_rz", Body::new([0, 1, 0, 0, 0])),
    ("double2float_rd", Body::new([0, 0, 0, 1, 0])),
    ("double2float_rn", Body::new([0, 0, 0, 1, 0])),
    ("double2float_ru", Body::new([0, 0, 0, 1, 0])),
    ("double2float_rz", Body::new([0, 0, 0, 1, 0])),
    ("double2hiint", Body::new([0, 0, 0, 1, 0])),
    ("double2int_rd", Body::new([0, 0, 0, 1, 0])),
    ("double2int_rn", Body::new([0, 0, 0, 1, 0])),
    ("double2int_ru", Body::new([0, 0, 0, 1, 0])),
    ("double2int_rz", Body::new([0, 1, 0, 0, 0])),
    ("double2ll_rd", Body::new([0, 0, 0, 1, 0])),
    ("double2ll_rn", Body::new([0, 0, 0, 1, 0])),
    ("double2ll_ru", Body::new([0, 0, 0, 1, 0])),
    ("double2ll_rz", Body::new([0, 1, 0, 0, 0])),
    ("double2loint", Body::new([0, 0, 0, 1, 0])),
    ("double2uint_rd", Body::new([0, 0, 0, 1, 0])),
    ("double2uint_rn", Body::new([0, 0, 0, 1, 0])),
    ("double2uint_ru", Body::new([0, 0, 0, 1, 0])),
    ("double2uint_rz", Body::new([0, 1, 0, 0, 0])),
    ("double2ull_rd", Body::new([0, 0, 0, 1, 0])),
    ("double2ull_rn", Body::new([0, 0, 0, 1, 0])),
    ("double2ull_ru", Body::new([0, 0, 0, 1, 0])),
    ("double2ull_rz", Body::new([0, 1, 0, 0, 0])),
    ("double_as_longlong", Body::new([1, 0, 0, 0, 0])),
    ("drcp_rd", Body::new([0, 0, 0, 1, 0])),
    ("drcp_rn", Body::new([0, 0, 1, 0, 0])),
    ("drcp_ru", Body::new([0, 0, 0, 1, 0])),
    ("drcp_rz", Body::new([0, 0, 0, 1, 0])),
    ("dsqrt_rd", Body::new([0, 0, 0, 1, 0])),
    ("dsqrt_rn", Body::new([0, 0, 0, 1, 0])),
    ("dsqrt_ru", Body::new([0, 0, 0, 1, 0])),
    ("dsqrt_rz", Body::new([0, 0, 0, 1, 0])),
    ("dsub_rd", Body::new([1, 0, 0, 0, 0])),
    ("dsub_rn", Body::new([1, 0, 0, 0, 0])),
    ("dsub_ru", Body::new([1, 0, 0, 0, 0])),
    ("dsub_rz", Body::new([1, 0, 0, 0, 0])),
    ("erf", Body::new([4, 51, 0, 5, 0])),
    ("erfc", Body::new([20, 72, 1, 7, 0])),
    ("erfcf", Body::new([54, 0, 0, 2, 0])),
    ("erfcinv", Body::new([44, 158, 2, 14, 0])),
    ("erfcinvf", Body::new([35, 0, 0, 3, 0])),
    ("erfcx", Body::new([25, 81, 2, 8, 0])),
    ("erfcxf", Body::new([60, 0, 0, 3, 0])),
    ("erff", Body::new([28, 0, 0, 1, 0])),
    ("erfinv", Body::new([19, 95, 0, 7, 0])),
    ("erfinvf", Body::new([28, 0, 1, 2, 0])),
    ("exp", Body::new([15, 21, 1, 4, 0])),
    ("exp10", Body::new([17, 23, 1, 4, 0])),
    ("exp10f", Body::new([10, 0, 0, 2, 0])),
    ("exp2", Body::new([17, 22, 1, 4, 0])),
    ("exp2f", Body::new([0, 0, 0, 1, 0])),
    ("expf", Body::new([10, 0, 0, 2, 0])),
    ("expm1", Body::new([21, 23, 0, 2, 0])),
    ("expm1f", Body::new([27, 0, 0, 2, 0])),
    ("fabs", Body::new([0, 1, 0, 0, 0])),
    ("fabsf", Body::new([1, 0, 0, 0, 0])),
    ("fadd_rd", Body::new([1, 0, 0, 0, 0])),
    ("fadd_rn", Body::new([1, 0, 0, 0, 0])),
    ("fadd_ru", Body::new([1, 0, 0, 0, 0])),
    ("fadd_rz", Body::new([1, 0, 0, 0, 0])),
    ("fast_cosf", Body::new([0, 0, 0, 1, 0])),
    ("fast_exp10f", Body::new([1, 0, 0, 1, 0])),
    ("fast_expf", Body::new([1, 0, 0, 1, 0])),
    ("fast_fdividef", Body::new([0, 0, 0, 1, 0])),
    ("fast_log10f", Body::new([1, 0, 0, 1, 0])),
    ("fast_log2f", Body::new([0, 0, 0, 1, 0])),
    ("fast_logf", Body::new([1, 0, 0, 1, 0])),
    ("fast_powf", Body::new([1, 0, 0, 2, 0])),
    ("fast_sinf", Body::new([0, 0, 0, 1, 0])),
    ("fast_tanf", Body::new([0, 0, 0, 3, 0])),
    ("fdim", Body::new([2, 1, 0, 0, 0])),
    ("fdimf", Body::new([3, 0, 0, 0, 0])),
    ("fdiv_rd", Body::new([0, 0, 0, 1, 0])),
    ("fdiv_rn", Body::new([0, 0, 0, 1, 0])),
    ("fdiv_ru", Body::new([0, 0, 0, 1, 0])),
    ("fdiv_rz", Body::new([0, 0, 0, 1, 0])),
    ("ffs", Body::new([3, 0, 0, 0, 0])),
    ("ffsll", Body::new([5, 0, 0, 0, 0])),
    ("finitef", Body::new([3, 0, 0, 0, 0])),
    ("float2half_rn", Body::new([0, 0, 0, 1, 0])),
    ("float2int_rd", Body::new([0, 0, 0, 1, 0])),
    ("float2int_rn", Body::new([0, 0, 0, 1, 0])),
    ("float2int_ru", Body::new([0, 0, 0, 1, 0])),
    ("float2int_rz", Body::new([1, 0, 0, 0, 0])),
    ("float2ll_rd", Body::new([0, 0, 0, 1, 0])),
    ("float2ll_rn", Body::new([0, 0, 0, 1, 0])),
    ("float2ll_ru", Body::new([0, 0, 0, 1, 0])),
    ("float2ll_rz", Body::new([1, 0, 0, 0, 0])),
    ("float2uint_rd", Body::new([0, 0, 0, 1, 0])),
    ("float2uint_rn", Body::new([0, 0, 0, 1, 0])),
    ("float2uint_ru", Body::new([0, 0, 0, 1, 0])),
    ("float2uint_rz", Body::new([1, 0, 0, 0, 0])),
    ("float2ull_rd", Body::new([0, 0, 0, 1, 0])),
    ("float2ull_rn", Body::new([0, 0, 0, 1, 0])),
    ("float2ull_ru", Body::new([0, 0, 0, 1, 0])),
    ("float2ull_rz", Body::new([1, 0, 0, 0, 0])),
    ("float_as_int", Body::new([1, 0, 0, 0, 0])),
    ("float_as_uint", Body::new([1, 0, 0, 0, 0])),
    ("floor", Body::new([0, 0, 0, 1, 0])),
    ("floorf", Body::new([0, 0, 0, 1, 0])),
    ("fma", Body::new([0, 1, 0, 0, 0])),
    ("fma_rd", Body::new([0, 1, 0, 0, 0])),
    ("fma_rn", Body::new([0, 1, 0, 0, 0])),
    ("fma_ru", Body::new([0, 1, 0, 0, 0])),
    ("fma_rz", Body::new([0, 1, 0, 0, 0])),
    ("fmaf", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_ieee_rd", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_ieee_rn", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_ieee_ru", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_ieee_rz", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_rd", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_rn", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_ru", Body::new([1, 0, 0, 0, 0])),
    ("fmaf_rz", Body::new([1, 0, 0, 0, 0])),
    ("fmax", Body::new([0, 1, 0, 0, 0])),
    ("fmaxf", Body::new([1, 0, 0, 0, 0])),
    ("fmin", Body::new([0, 1, 0, 0, 0])),
    ("fminf", Body::new([1, 0, 0, 0, 0])),
    ("fmod", Body::new([65, 12, 0, 12, 0])),
    ("fmodf", Body::new([80, 0, 0, 3, 0])),
    ("fmul_rd", Body::new([1, 0, 0, 0, 0])),
    ("fmul_rn", Body::new([1, 0, 0, 0, 0])),
    ("fmul_ru", Body::new([1, 0, 0, 0, 0])),
    ("fmul_rz", Body::new([1, 0, 0, 0, 0])),
    ("frcp_rd", Body::new([0, 0, 0, 1, 0])),
    ("frcp_rn", Body::new([0, 0, 0, 1, 0])),
    ("frcp_ru", Body::new([0, 0, 0, 1, 0])),
    ("frcp_rz", Body::new([0, 0, 0, 1, 0])),
    ("frsqrt_rn", Body::new([29, 0, 0, 2, 0])),
    ("fsqrt_rd", Body::new([0, 0, 0, 1, 0])),
    ("fsqrt_rn", Body::new([0, 0, 0, 1, 0])),
    ("fsqrt_ru", Body::new([0, 0, 0, 1, 0])),
    ("fsqrt_rz", Body::new([0, 0, 0, 1, 0])),
    ("fsub_rd", Body::new([1, 0, 0, 0, 0])),
    ("fsub_rn", Body::new([1, 0, 0, 0, 0])),
    ("fsub_ru", Body::new([1, 0, 0, 0, 0])),
    ("fsub_rz", Body::new([1, 0, 0, 0, 0])),
    ("hadd", Body::new([4, 0, 0, 0, 0])),
    ("half2float", Body::new([0, 0, 0, 1, 0])),
    ("hiloint2double", Body::new([0, 1, 0, 0, 0])),
    ("hypot", Body::new([13, 18, 0, 3, 0])),
    ("hypotf", Body::new([22, 0, 0, 1, 0])),
    ("ilogb", Body::new([20, 3, 0, 4, 0])),
    ("ilogbf", Body::new([16, 0, 0, 0, 0])),
    ("int2double_rn", Body::new([0, 0, 0, 1, 0])),
    ("int2float_rd", Body::new([0, 0, 0, 1, 0])),
    ("int2float_rn", Body::new([0, 0, 0, 1, 0])),
    ("int2float_ru", Body::new([0, 0, 0, 1, 0])),
    ("int2float_rz", Body::new([1, 0, 0, 0, 0])),
    ("int_as_float", Body::new([1, 0, 0, 0, 0])),
    ("isfinited", Body::new([3, 0, 0, 1, 0])),
    ("isinfd", Body::new([5, 0, 0, 2, 0])),
    ("isinff", Body::new([3, 0, 0, 0, 0])),
    ("isnand", Body::new([1, 1, 0, 0, 0])),
    ("isnanf", Body::new([3, 0, 0, 0, 0])),
    ("j0", Body::new([45, 116, 0, 8, 10])),
    ("j0f", Body::new([139, 3, 0, 3, 6])),
    ("j1", Body::new([47, 116, 0, 8, 10])),
    ("j1f", Body::new([147, 3, 0, 3, 6])),
    ("jn", Body::new([226, 502, 2, 33, 40])),
    ("jnf", Body::new([650, 12, 3, 13, 24])),
    ("ldexp", Body::new([31, 14, 2, 1, 0])),
    ("ldexpf", Body::new([31, 0, 2, 6, 0])),
    ("lgamma", Body::new([50, 61, 1, 13, 6])),
    ("lgammaf", Body::new([210, 0, 0, 2, 0])),
    ("ll2double_rd", Body::new([0, 0, 0, 1, 0])),
    ("ll2double_rn", Body::new([0, 0, 0, 1, 0])),
    ("ll2double_ru", Body::new([0, 0, 0, 1, 0])),
    ("ll2double_rz", Body::new([0, 1, 0, 0, 0])),
    ("ll2float_rd", Body::new([0, 0, 0, 1, 0])),
    ("ll2float_rn", Body::new([0, 0, 0, 1, 0])),
    ("ll2float_ru", Body::new([0, 0, 0, 1, 0])),
    ("ll2float_rz", Body::new([1, 0, 0, 0, 0])),
    ("llabs", Body::new([1, 0, 0, 0, 0])),
    ("llmax", Body::new([1, 0, 0, 0, 0])),
    ("llmin", Body::new([1, 0, 0, 0, 0])),
    ("llrint", Body::new([0, 0, 0, 1, 0])),
    ("llrintf", Body::new([0, 0, 0, 1, 0])),
    ("llround", Body::new([2, 3, 0, 4, 0])),
    ("llroundf", Body::new([32, 0, 0, 0, 0])),
    ("log", Body::new([21, 37, 0, 8, 0])),
    ("log10", Body::new([21, 39, 0, 8, 0])),
    ("log10f", Body::new([29, 0, 0, 0, 0])),
    ("log1p", Body::new([27, 53, 1, 9, 0])),
    ("log1pf", Body::new([31, 0, 0, 0, 0])),
    ("log2", Body::new([21, 39, 0, 8, 0])),
    ("log2f", Body::new([30, 0, 0, 0, 0])),
    ("logb", Body::new([17, 7, 0, 2, 0])),
    ("logbf", Body::new([17, 0, 0, 0, 0])),
    ("logf", Body::new([28, 0, 0, 0, 0])),
    ("longlong_as_double", Body::new([1, 0, 0, 0, 0])),
    ("max", Body::new([1, 0, 0, 0, 0])),
    ("min", Body::new([1, 0, 0, 0, 0])),
    ("mul24", Body::new([5, 0, 0, 0, 0])),
    ("mul64hi", Body::new([1, 0, 0, 0, 0])),
    ("mulhi", Body::new([1, 0, 0, 0, 0])),
    ("nearbyint", Body::new([0, 0, 0, 1, 0])),
    ("nearbyintf", Body::new([0, 0, 0, 1, 0])),
    ("nextafter", Body::new([26, 8, 0, 3, 0])),
    ("nextafterf", Body::new([38, 0, 0, 0, 0])),
    ("norm3d", Body::new([7, 27, 0, 2, 0])),
    ("norm3df", Body::new([26, 0, 0, 1, 0])),
    ("norm4d", Body::new([7, 33, 0, 2, 0])),
    ("norm4df", Body::new([32, 0, 0, 1, 0])),
    ("normcdf", Body::new([26, 86, 1, 11, 0])),
    ("normcdff", Body::new([74, 0, 0, 2, 0])),
    ("normcdfinv", Body::new([44, 162, 2, 14, 0])),
    ("normcdfinvf", Body::new([38, 0, 0, 3, 0])),
    ("popc", Body::new([1, 0, 0, 0, 0])),
    ("popcll", Body::new([2, 0, 0, 0, 0])),
    ("pow", Body::new([53, 16, 0, 8, 0])),
    ("powf", Body::new([107, 0, 0, 3, 0])),
    ("powi", Body::new([14, 2, 1, 0, 0])),
    ("powif", Body::new([17, 0, 1, 0, 0])),
    ("rcbrt", Body::new([24, 25, 0, 11, 0])),
    ("rcbrtf", Body::new([16, 0, 0, 2, 0])),
    ("rcp64h", Body::new([0, 0, 0, 1, 0])),
    ("remainder", Body::new([69, 16, 0, 12, 0])),
    ("remainderf", Body::new([98, 0, 0, 3, 0])),
    ("rhadd", Body::new([4, 0, 0, 0, 0])),
    ("rhypot", Body::new([15, 19, 0, 3, 0])),
    ("rhypotf", Body::new([18, 0, 0, 1, 0])),
    ("rint", Body::new([0, 0, 0, 1, 0])),
    ("rintf", Body::new([0, 0, 0, 1, 0])),
    ("rnorm3d", Body::new([5, 26, 0, 1, 0])),
    ("rnorm3df", Body::new([25, 0, 0, 1, 0])),
    ("rnorm4d", Body::new([5, 32, 0, 1, 0])),
    ("rnorm4df", Body::new([31, 0, 0, 1, 0])),
    ("round", Body::new([2, 2, 0, 4, 0])),
    ("roundf", Body::new([5, 0, 0, 1, 0])),
    ("rsqrt", Body::new([0, 0, 0, 1, 0])),
    ("rsqrtf", Body::new([0, 0, 0, 1, 0])),
    ("sad", Body::new([0, 0, 0, 1, 0])),
    ("saturatef", Body::new([0, 0, 0, 1, 0])),
    ("scalbn", Body::new([31, 14, 2, 1, 0])),
    ("scalbnf", Body::new([31, 0, 2, 6, 0])),
    ("signbitd", Body::new([1, 0, 0, 1, 0])),
    ("signbitf", Body::new([2, 0, 0, 0, 0])),
    ("sin", Body::new([26, 19, 0, 3, 8])),
    ("sinf", Body::new([87, 3, 0, 1, 6])),
    ("sinh", Body::new([20, 35, 1, 6, 0])),
    ("sinhf", Body::new([36, 0, 0, 3, 0])),
    ("sinpi", Body::new([19, 18, 0, 4, 6])),
    ("sinpif", Body::new([26, 0, 0, 2, 0])),
    ("sqrt", Body::new([0, 0, 0, 1, 0])),
    ("sqrtf", Body::new([0, 0, 0, 1, 0])),
    ("tan", Body::new([15, 37, 0, 4, 2])),
    ("tanf", Body::new([88, 3, 0, 1, 6])),
    ("tanh", Body::new([9, 43, 0, 7, 0])),
    ("tanhf", Body::new([22, 0, 0, 1, 0])),
    ("tgamma", Body::new([108, 245, 4, 23, 6])),
    ("tgammaf", Body::new([164, 0, 0, 6, 0])),
    ("trunc", Body::new([0, 0, 0, 1, 0])),
    ("truncf", Body::new([0, 0, 0, 1, 0])),
    ("uhadd", Body::new([4, 0, 0, 0, 0])),
    ("uint2double_rn", Body::new([0, 0, 0, 1, 0])),
    ("uint2float_rd", Body::new([0, 0, 0, 1, 0])),
    ("uint2float_rn", Body::new([0, 0, 0, 1, 0])),
    ("uint2float_ru", Body::new([0, 0, 0, 1, 0])),
    ("uint2float_rz", Body::new([1, 0, 0, 0, 0])),
    ("uint_as_float", Body::new([1, 0, 0, 0, 0])),
    ("ull2double_rd", Body::new([0, 0, 0, 1, 0])),
    ("ull2double_rn", Body::new([0, 0, 0, 1, 0])),
    ("ull2double_ru", Body::new([0, 0, 0, 1, 0])),
    ("ull2double_rz", Body::new([0, 1, 0, 0, 0])),
    ("ull2float_rd", Body::new([0, 0, 0, 1, 0])),
    ("ull2float_rn", Body::new([0, 0, 0, 1, 0])),
    ("ull2float_ru", Body::new([0, 0, 0, 1, 0])),
    ("ull2float_rz", Body::new([1, 0, 0, 0, 0])),
    ("ullmax", Body::new([1, 0, 0, 0, 0])),
    ("ullmin", Body::new([1, 0, 0, 0, 0])),
    ("umax", Body::new([1, 0, 0, 0, 0])),
    ("umin", Body::new([1, 0, 0, 0, 0])),
    ("umul24", Body::new([3, 0, 0, 0, 0])),
    ("umul64hi", Body::new([1, 0, 0, 0, 0])),
    ("umulhi", Body::new([1, 0, 0, 0, 0])),
    ("urhadd", Body::new([4, 0, 0, 0, 0])),
    ("usad", Body::new([0, 0, 0, 1, 0])),
    ("y0", Body::new([114, 299, 0, 22, 20])),
    ("y0f", Body::new([339, 6, 0, 6, 12])),
    ("y1", Body::new([118, 294, 2, 24, 20])),
    ("y1f", Body::new([334, 6, 2, 6, 12])),
    ("yn", Body::new([489, 1200, 6, 92, 80])),
    ("ynf", Body::new([1386, 24, 6, 24, 48])),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_read_by_name() {
        assert!(BODIES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(BODIES.iter().all(|(_, b)| b.issues() > 0));
        assert_eq!(body(BODIES[0].0), Some(&BODIES[0].1));
        // Functions that write through a pointer are not in it.
        assert_eq!(body("sincosf"), None);
        assert_eq!(body("no_such_function"), None);
    }

    #[test]
    fn a_body_waits_for_each_instruction() {
        // 10 ALU (4 cycles), 1 FP64 (8), 1 division (20), 2 math (20), one
        // table load (32): 40 + 8 + 20 + 40 + 32.
        let b = Body::new([10, 1, 1, 2, 1]);
        assert_eq!(b.issues(), 15);
        assert_eq!(Machine::a100().body_latency(&b), 140);
        // The paper's machine: every instruction 1 cycle, memory 10.
        assert_eq!(Machine::paper().body_latency(&b), 14 + 10);
    }
}
