//! IEEE half and bfloat16 conversions. Half arithmetic is done in `f32` and
//! rounded back, which is exact for `+ - * /`: `f32` has more than twice
//! half's precision, so the double rounding cannot change a result.

/// Rounds an `f32` to the nearest half (ties to even).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        let nan = if man != 0 {
            0x200 | (man >> 13) as u16
        } else {
            0
        };
        return sign | 0x7c00 | nan;
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal: the value in units of 2^-24 is the full significand
        // shifted right by 14 - e.
        let full = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let rounded = (full + (1 << (shift - 1)) - 1 + ((full >> shift) & 1)) >> shift;
        return sign | rounded as u16;
    }
    let rounded = (man + 0xfff + ((man >> 13) & 1)) >> 13;
    // A carry out of the significand correctly bumps the exponent.
    let v = ((e as u32) << 10) + rounded;
    if v >= 0x7c00 {
        sign | 0x7c00
    } else {
        sign | v as u16
    }
}

pub fn f16_to_f32(h: u16) -> f32 {
    let negative = h & 0x8000 != 0;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let magnitude = match exp {
        // Subnormals are exact in f32: man * 2^-24.
        0 => man as f32 * f32::from_bits(0x3380_0000),
        0x1f => f32::from_bits(0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(((exp + 112) << 23) | (man << 13)),
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
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
    }

    #[test]
    fn bfloat_conversions() {
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
    }
}
