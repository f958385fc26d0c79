//! Lane-parallel register access. Pure operations are computed for all 32
//! lanes at once (the loops vectorize) and written back under the mask;
//! anything with side effects visits only the active lanes.

use crate::sim::code::Slot;

pub const LANES: usize = 32;
pub const FULL: u32 = u32::MAX;

#[inline(always)]
pub fn row(regs: &[u64], s: Slot) -> &[u64; LANES] {
    let at = s as usize * LANES;
    regs[at..at + LANES].try_into().expect("32 lanes")
}

#[inline(always)]
pub fn row_mut(regs: &mut [u64], s: Slot) -> &mut [u64; LANES] {
    let at = s as usize * LANES;
    (&mut regs[at..at + LANES]).try_into().expect("32 lanes")
}

/// Calls `f` for each set bit of `mask`, lowest first.
#[inline(always)]
pub fn each(mask: u32, mut f: impl FnMut(usize)) {
    if mask == FULL {
        (0..LANES).for_each(f);
    } else {
        let mut m = mask;
        while m != 0 {
            f(m.trailing_zeros() as usize);
            m &= m - 1;
        }
    }
}

/// Like [`each`], stopping at the first error.
#[inline(always)]
pub fn try_each<E>(mask: u32, mut f: impl FnMut(usize) -> Result<(), E>) -> Result<(), E> {
    let mut m = mask;
    while m != 0 {
        f(m.trailing_zeros() as usize)?;
        m &= m - 1;
    }
    Ok(())
}

#[inline(always)]
pub fn write(regs: &mut [u64], dst: Slot, vals: &[u64; LANES], mask: u32) {
    let d = row_mut(regs, dst);
    if mask == FULL {
        *d = *vals;
    } else {
        each(mask, |l| d[l] = vals[l]);
    }
}

#[inline(always)]
pub fn map1(regs: &mut [u64], mask: u32, dst: Slot, a: Slot, f: impl Fn(u64) -> u64) {
    if mask == FULL {
        let (a, d) = (a as usize * LANES, dst as usize * LANES);
        in_place(regs, [a, a, d], |x, _| f(x));
        return;
    }
    let a = row(regs, a);
    let out: [u64; LANES] = std::array::from_fn(|l| f(a[l]));
    write(regs, dst, &out, mask);
}

#[inline(always)]
pub fn map2(regs: &mut [u64], mask: u32, dst: Slot, a: Slot, b: Slot, f: impl Fn(u64, u64) -> u64) {
    if mask == FULL {
        let at = |s: Slot| s as usize * LANES;
        in_place(regs, [at(a), at(b), at(dst)], f);
        return;
    }
    let (a, b) = (row(regs, a), row(regs, b));
    let out: [u64; LANES] = std::array::from_fn(|l| f(a[l], b[l]));
    write(regs, dst, &out, mask);
}

#[inline(always)]
pub fn map3(
    regs: &mut [u64],
    mask: u32,
    dst: Slot,
    [a, b, c]: [Slot; 3],
    f: impl Fn(u64, u64, u64) -> u64,
) {
    let (a, b, c) = (row(regs, a), row(regs, b), row(regs, c));
    let out: [u64; LANES] = std::array::from_fn(|l| f(a[l], b[l], c[l]));
    write(regs, dst, &out, mask);
}

/// All lanes of the rows at word offsets `a`, `b` into the row at `d`,
/// lane by lane in place: a lane reads its operands before it writes its
/// result, so a destination that is an operand is fine, and no row is
/// copied through a temporary.
#[inline(always)]
fn in_place(regs: &mut [u64], [a, b, d]: [usize; 3], f: impl Fn(u64, u64) -> u64) {
    let top = a.max(b).max(d) + LANES;
    let regs = &mut regs[..top];
    for l in 0..LANES {
        regs[d + l] = f(regs[a + l], regs[b + l]);
    }
}

/// Copies `n` consecutive slots for the active lanes.
#[inline(always)]
pub fn copy(regs: &mut [u64], mask: u32, dst: Slot, src: Slot, n: u32) {
    for k in 0..n {
        let v = *row(regs, src + k);
        write(regs, dst + k, &v, mask);
    }
}

/// The lanes of `mask` where the low bit of slot `s` is set.
#[inline(always)]
pub fn true_lanes(regs: &[u64], s: Slot, mask: u32) -> u32 {
    let r = row(regs, s);
    let mut bits = 0u32;
    for (l, v) in r.iter().enumerate() {
        bits |= ((*v & 1) as u32) << l;
    }
    bits & mask
}

/// The lanes of a mask as `0-15,17` for messages.
pub fn describe(mask: u32) -> String {
    let mut parts = Vec::new();
    let mut l = 0;
    while l < 32 {
        if mask >> l & 1 == 1 {
            let start = l;
            while l + 1 < 32 && mask >> (l + 1) & 1 == 1 {
                l += 1;
            }
            parts.push(if start == l {
                format!("{start}")
            } else {
                format!("{start}-{l}")
            });
        }
        l += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_rows() {
        let mut regs = vec![0u64; 3 * LANES];
        row_mut(&mut regs, 0).copy_from_slice(&std::array::from_fn::<u64, 32, _>(|l| l as u64));
        map1(&mut regs, 0b101, 1, 0, |x| x + 100);
        assert_eq!(row(&regs, 1)[..3], [100, 0, 102]);
        assert_eq!(true_lanes(&regs, 0, FULL), 0xaaaa_aaaa);
        assert_eq!(describe(0x0000_ffff), "0-15");
        assert_eq!(describe(0b1011), "0-1,3");
        let mut seen = Vec::new();
        each(0x8000_0001, |l| seen.push(l));
        assert_eq!(seen, vec![0, 31]);
    }
}
