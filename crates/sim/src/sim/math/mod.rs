//! Pure math: libdevice (`__nv_*`), `llvm.*` and `llvm.nvvm.*` functions of
//! their operands, looked up by name once at decode time.
//!
//! GPU "fast" variants (`__expf`, `ex2.approx`) are computed accurately: the
//! simulator is an oracle for costs and control flow, not for last-bit
//! precision of approximate hardware instructions.

mod float_fns;
mod int_fns;
mod libdevice;
mod llvm;
mod nvvm;
mod rounding;
mod special;

pub use libdevice::{libdevice, out_params};
pub use llvm::llvm;
pub use nvvm::nvvm;

use super::scalar::{bits_f32, bits_f64, f32_of, f64_of, Scalar};

/// A function of one lane's argument words; `bits` is the integer width of
/// width-generic intrinsics.
#[derive(Copy, Clone, Debug)]
pub enum PureFn {
    F32(fn(f32) -> f32),
    F64(fn(f64) -> f64),
    F32x2(fn(f32, f32) -> f32),
    F64x2(fn(f64, f64) -> f64),
    F32x3(fn(f32, f32, f32) -> f32),
    F64x3(fn(f64, f64, f64) -> f64),
    /// Any signature, on raw words.
    Raw(fn(&[u64], u32) -> u64),
    /// Two result words (`{ iN, i1 }`, or a value and an out-parameter).
    Raw2(fn(&[u64], u32) -> (u64, u64)),
    /// Three result words (`sincos`: return slot unused, sine, cosine).
    Raw3(fn(&[u64], u32) -> [u64; 3]),
}

impl PureFn {
    /// Evaluates one lane; unused result words are 0.
    pub fn eval(self, a: &[u64], bits: u32) -> [u64; 3] {
        let one = |v| [v, 0, 0];
        match self {
            PureFn::F32(f) => one(bits_f32(f(f32_of(a[0])))),
            PureFn::F64(f) => one(bits_f64(f(f64_of(a[0])))),
            PureFn::F32x2(f) => one(bits_f32(f(f32_of(a[0]), f32_of(a[1])))),
            PureFn::F64x2(f) => one(bits_f64(f(f64_of(a[0]), f64_of(a[1])))),
            PureFn::F32x3(f) => one(bits_f32(f(f32_of(a[0]), f32_of(a[1]), f32_of(a[2])))),
            PureFn::F64x3(f) => one(bits_f64(f(f64_of(a[0]), f64_of(a[1]), f64_of(a[2])))),
            PureFn::Raw(f) => one(f(a, bits)),
            PureFn::Raw2(f) => {
                let (x, y) = f(a, bits);
                [x, y, 0]
            }
            PureFn::Raw3(f) => f(a, bits),
        }
    }

    /// How many result words it produces.
    pub fn results(self) -> u8 {
        match self {
            PureFn::Raw2(_) => 2,
            PureFn::Raw3(_) => 3,
            _ => 1,
        }
    }
}

/// The float function named `base` (`sin`, `pow`, `fma`) at one precision.
pub fn float_fn(base: &str, scalar: Scalar) -> Option<PureFn> {
    let double = match scalar {
        Scalar::F32 => false,
        Scalar::F64 => true,
        _ => return None,
    };
    float_fns::lookup(base, double)
}
