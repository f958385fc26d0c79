//! IEEE half and bfloat16 conversions, rounding to nearest even as the
//! GPU's `cvt.rn` does (`half`'s). Half arithmetic is done in `f32` and
//! rounded back, which is exact for `+ - * /`: `f32` has more than twice
//! half's precision, so the double rounding cannot change a result.

use half::{bf16, f16};

/// Rounds an `f32` to the nearest half (ties to even).
pub fn f32_to_f16(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

pub fn f16_to_f32(h: u16) -> f32 {
    f16::from_bits(h).to_f32()
}

/// Rounds an `f32` to the nearest bfloat16 (ties to even; a NaN stays one).
pub fn f32_to_bf16(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

pub fn bf16_to_f32(h: u16) -> f32 {
    bf16::from_bits(h).to_f32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions() {
        // 1.0 = 0x3c00, 65504 = 0x7bff (largest), 2^-24 = 0x0001 (smallest subnormal).
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16(2f32.powi(-26)), 0x0000);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        for h in [0x3c00u16, 0x0001, 0x03ff, 0x7bff, 0xc000, 0x7c00] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h);
        }
        assert!(f16_to_f32(0x7e00).is_nan());
        // The quiet NaN keeps its quiet bit.
        assert_eq!(f32_to_f16(f32::NAN), 0x7e00);
    }

    #[test]
    fn bfloat_conversions() {
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
        // bfloat16 keeps 7 fraction bits: 1 + 2^-8 is halfway between 1 and
        // 1 + 2^-7 and rounds to the even one, 1 + 3·2^-8 up to 1 + 2^-6.
        assert_eq!(f32_to_bf16(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(f32_to_bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        // Past the largest finite value: infinity.
        assert_eq!(f32_to_bf16(f32::MAX), 0x7f80);
    }
}
