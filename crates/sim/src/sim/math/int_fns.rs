//! Integer functions on zero-extended words of `bits` width.

use crate::sim::scalar::{mask, sext};

pub fn ctpop(a: &[u64], bits: u32) -> u64 {
    u64::from((a[0] & mask(bits)).count_ones())
}

/// Leading zeros within the width (`bits` for 0, as `ctlz` with zero defined).
pub fn ctlz(a: &[u64], bits: u32) -> u64 {
    u64::from((a[0] & mask(bits)).leading_zeros()) - u64::from(64 - bits)
}

pub fn cttz(a: &[u64], bits: u32) -> u64 {
    let v = a[0] & mask(bits);
    if v == 0 {
        u64::from(bits)
    } else {
        u64::from(v.trailing_zeros())
    }
}

pub fn bitreverse(a: &[u64], bits: u32) -> u64 {
    (a[0].reverse_bits() >> (64 - bits)) & mask(bits)
}

pub fn bswap(a: &[u64], bits: u32) -> u64 {
    (a[0].swap_bytes() >> (64 - bits)) & mask(bits)
}

/// Funnel shift left: the high half of `a:b << (c mod bits)`.
pub fn fshl(a: &[u64], bits: u32) -> u64 {
    let s = a[2] % u64::from(bits);
    if s == 0 {
        return a[0] & mask(bits);
    }
    ((a[0] << s) | ((a[1] & mask(bits)) >> (u64::from(bits) - s))) & mask(bits)
}

/// Funnel shift right: the low half of `a:b >> (c mod bits)`.
pub fn fshr(a: &[u64], bits: u32) -> u64 {
    let s = a[2] % u64::from(bits);
    if s == 0 {
        return a[1] & mask(bits);
    }
    (((a[1] & mask(bits)) >> s) | (a[0] << (u64::from(bits) - s))) & mask(bits)
}

pub fn smax(a: &[u64], bits: u32) -> u64 {
    if sext(a[0], bits) >= sext(a[1], bits) {
        a[0]
    } else {
        a[1]
    }
}

pub fn smin(a: &[u64], bits: u32) -> u64 {
    if sext(a[0], bits) <= sext(a[1], bits) {
        a[0]
    } else {
        a[1]
    }
}

pub fn umax(a: &[u64], _: u32) -> u64 {
    a[0].max(a[1])
}

pub fn umin(a: &[u64], _: u32) -> u64 {
    a[0].min(a[1])
}

pub fn abs(a: &[u64], bits: u32) -> u64 {
    sext(a[0], bits).unsigned_abs() & mask(bits)
}

fn clamp_signed(v: i128, bits: u32) -> u64 {
    let hi = (1i128 << (bits - 1)) - 1;
    let lo = -(1i128 << (bits - 1));
    (v.clamp(lo, hi) as u64) & mask(bits)
}

fn clamp_unsigned(v: i128, bits: u32) -> u64 {
    v.clamp(0, i128::from(mask(bits))) as u64
}

fn signed(a: &[u64], bits: u32) -> (i128, i128) {
    (i128::from(sext(a[0], bits)), i128::from(sext(a[1], bits)))
}

fn unsigned(a: &[u64], bits: u32) -> (i128, i128) {
    (i128::from(a[0] & mask(bits)), i128::from(a[1] & mask(bits)))
}

pub fn sadd_sat(a: &[u64], bits: u32) -> u64 {
    let (x, y) = signed(a, bits);
    clamp_signed(x + y, bits)
}
pub fn ssub_sat(a: &[u64], bits: u32) -> u64 {
    let (x, y) = signed(a, bits);
    clamp_signed(x - y, bits)
}
pub fn uadd_sat(a: &[u64], bits: u32) -> u64 {
    let (x, y) = unsigned(a, bits);
    clamp_unsigned(x + y, bits)
}
pub fn usub_sat(a: &[u64], bits: u32) -> u64 {
    let (x, y) = unsigned(a, bits);
    clamp_unsigned(x - y, bits)
}

/// `{ result, overflowed }` of an exact i128 computation.
fn with_overflow(exact: i128, bits: u32, is_signed: bool) -> (u64, u64) {
    let wrapped = (exact as u64) & mask(bits);
    let back = if is_signed {
        i128::from(sext(wrapped, bits))
    } else {
        i128::from(wrapped)
    };
    (wrapped, u64::from(back != exact))
}

pub fn sadd_overflow(a: &[u64], bits: u32) -> (u64, u64) {
    let (x, y) = signed(a, bits);
    with_overflow(x + y, bits, true)
}
pub fn ssub_overflow(a: &[u64], bits: u32) -> (u64, u64) {
    let (x, y) = signed(a, bits);
    with_overflow(x - y, bits, true)
}
pub fn smul_overflow(a: &[u64], bits: u32) -> (u64, u64) {
    let (x, y) = signed(a, bits);
    with_overflow(x * y, bits, true)
}
pub fn uadd_overflow(a: &[u64], bits: u32) -> (u64, u64) {
    let (x, y) = unsigned(a, bits);
    with_overflow(x + y, bits, false)
}
pub fn usub_overflow(a: &[u64], bits: u32) -> (u64, u64) {
    let (x, y) = unsigned(a, bits);
    with_overflow(x - y, bits, false)
}
pub fn umul_overflow(a: &[u64], bits: u32) -> (u64, u64) {
    let (x, y) = unsigned(a, bits);
    // u64 * u64 fits in u128 but not always in i128.
    let p = (x as u128) * (y as u128);
    let wrapped = (p as u64) & mask(bits);
    (wrapped, u64::from(p != u128::from(wrapped)))
}

/// Three-way compares returning -1, 0, 1 in the result width (`llvm.scmp`).
pub fn scmp(a: &[u64], bits: u32) -> u64 {
    let (x, y) = signed(a, bits);
    (x.cmp(&y) as i64 as u64) & mask(bits)
}
pub fn ucmp(a: &[u64], bits: u32) -> u64 {
    let (x, y) = unsigned(a, bits);
    (x.cmp(&y) as i64 as u64) & mask(bits)
}

/// High half of the product (`mulhi`), signed or not.
pub fn mulhi_signed(a: &[u64], bits: u32) -> u64 {
    let (x, y) = signed(a, bits);
    (((x * y) >> bits) as u64) & mask(bits)
}
pub fn mulhi_unsigned(a: &[u64], bits: u32) -> u64 {
    let p = u128::from(a[0] & mask(bits)) * u128::from(a[1] & mask(bits));
    ((p >> bits) as u64) & mask(bits)
}

/// `mul24`: the low 32 bits of the product of the low 24 bits.
pub fn mul24_signed(a: &[u64], _: u32) -> u64 {
    let (x, y) = (sext(a[0], 24), sext(a[1], 24));
    (x.wrapping_mul(y) as u64) & mask(32)
}
pub fn mul24_unsigned(a: &[u64], _: u32) -> u64 {
    ((a[0] & mask(24)) * (a[1] & mask(24))) & mask(32)
}

/// `sad`: `|a - b| + c`.
pub fn sad_signed(a: &[u64], _: u32) -> u64 {
    let d = (sext(a[0], 32) - sext(a[1], 32)).unsigned_abs();
    d.wrapping_add(a[2]) & mask(32)
}
pub fn sad_unsigned(a: &[u64], _: u32) -> u64 {
    let d = (a[0] & mask(32)).abs_diff(a[1] & mask(32));
    d.wrapping_add(a[2]) & mask(32)
}

/// `prmt` / `__byte_perm`: each selector nibble's low 3 bits pick one of
/// the eight bytes of `b:a`; with its top bit set, the byte's sign bit is
/// replicated instead (PTX `prmt` default mode).
pub fn byte_perm(a: &[u64], _: u32) -> u64 {
    let bytes = ((a[1] & mask(32)) << 32) | (a[0] & mask(32));
    (0..4).fold(0u64, |acc, i| {
        let sel = (a[2] >> (4 * i)) & 0xf;
        let byte = (bytes >> (8 * (sel & 7))) & 0xff;
        let out = match sel & 8 {
            0 => byte,
            _ if byte & 0x80 != 0 => 0xff,
            _ => 0,
        };
        acc | (out << (8 * i))
    })
}

/// `__ffs`: 1 + the index of the lowest set bit, 0 for 0.
pub fn ffs(a: &[u64], bits: u32) -> u64 {
    let v = a[0] & mask(bits);
    if v == 0 {
        0
    } else {
        u64::from(v.trailing_zeros()) + 1
    }
}

/// PTX `fns` (`llvm.nvvm.fns(mask, base, offset)`): the position of the
/// |offset|-th set bit of `mask` counting from bit `base` up (offset > 0)
/// or down (offset < 0); offset 0 asks whether bit `base` itself is set.
/// `0xffffffff` when there is none.
pub fn find_nth_set(a: &[u64], _: u32) -> u64 {
    let (m, base, offset) = (a[0] as u32, a[1] as u32 & 31, sext(a[2], 32));
    let set = |p: u32| m >> p & 1 != 0;
    let found = if offset == 0 {
        set(base).then_some(base)
    } else {
        let positions: Box<dyn Iterator<Item = u32>> = match offset > 0 {
            true => Box::new(base..32),
            false => Box::new((0..=base).rev()),
        };
        positions
            .filter(|&p| set(p))
            .nth(offset.unsigned_abs() as usize - 1)
    };
    found.map_or(0xffff_ffff, u64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_set_bit_follows_the_ptx_examples() {
        // The PTX ISA's examples on 0xaaaaaaaa (the odd bits): from bit 3
        // either way, bit 3 itself; from bit 2 up, 3; down, 1.
        let m = 0xaaaa_aaaa;
        let neg = |v: i64| v as u64 & mask(32);
        assert_eq!(find_nth_set(&[m, 3, 1], 32), 3);
        assert_eq!(find_nth_set(&[m, 3, neg(-1)], 32), 3);
        assert_eq!(find_nth_set(&[m, 2, 1], 32), 3);
        assert_eq!(find_nth_set(&[m, 2, neg(-1)], 32), 1);
        // The third odd bit from 0 is 5; bit 2 is not set; no 17th.
        assert_eq!(find_nth_set(&[m, 0, 3], 32), 5);
        assert_eq!(find_nth_set(&[m, 2, 0], 32), 0xffff_ffff);
        assert_eq!(find_nth_set(&[m, 0, 17], 32), 0xffff_ffff);
    }

    #[test]
    fn bit_functions() {
        assert_eq!(ctlz(&[1], 32), 31);
        assert_eq!(ctlz(&[0], 32), 32);
        assert_eq!(cttz(&[8], 32), 3);
        assert_eq!(bitreverse(&[1], 32), 0x8000_0000);
        assert_eq!(bswap(&[0x1122_3344], 32), 0x4433_2211);
        assert_eq!(fshl(&[0x8000_0001, 0x8000_0000, 1], 32), 0x0000_0003);
        assert_eq!(fshr(&[0x1, 0x2, 1], 32), 0x8000_0001);
        // __byte_perm(0x33221100, 0x77665544, 0x3210) keeps a.
        assert_eq!(
            byte_perm(&[0x3322_1100, 0x7766_5544, 0x3210], 32),
            0x3322_1100
        );
        assert_eq!(
            byte_perm(&[0x3322_1100, 0x7766_5544, 0x7654], 32),
            0x7766_5544
        );
        assert_eq!(ffs(&[0b1000], 32), 4);
    }

    #[test]
    fn arithmetic_functions() {
        let m1 = mask(32); // -1 as i32
        assert_eq!(smax(&[m1, 3], 32), 3);
        assert_eq!(umax(&[m1, 3], 32), m1);
        assert_eq!(abs(&[m1], 32), 1);
        assert_eq!(sadd_sat(&[0x7fff_ffff, 1], 32), 0x7fff_ffff);
        assert_eq!(usub_sat(&[1, 2], 32), 0);
        assert_eq!(sadd_overflow(&[0x7fff_ffff, 1], 32), (0x8000_0000, 1));
        assert_eq!(uadd_overflow(&[m1, 1], 32), (0, 1));
        assert_eq!(umul_overflow(&[u64::MAX, 2], 64), (u64::MAX - 1, 1));
        assert_eq!(mulhi_unsigned(&[m1, m1], 32), 0xffff_fffe);
        assert_eq!(mulhi_signed(&[m1, m1], 32), 0);
        assert_eq!(sad_signed(&[(-3i64 as u64) & m1, 4, 1], 32), 8);
        assert_eq!(scmp(&[m1, 0], 32), m1);
    }
}
