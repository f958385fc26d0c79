//! Loads, stores, atomics and block copies, with their cost recorded per
//! warp-level access before any lane touches memory.

use super::lanes::{each, row, row_mut, try_each, LANES};
use crate::ir::RmwOp;
use crate::memory::lower::Repeat;
use crate::memory::Space;
use crate::sim::code::{Atomic, Leaves, MemOp, OutParams, Requests, RmwKind, Slot};
use crate::sim::cost::{self, Counters, Scratch, SiteStats};
use crate::sim::memory::{put_le, read_le, Fault, View};
use crate::sim::race::{AccessKind, Me, WarpSyncs};
use crate::sim::sanitize::Sanitizer;
use crate::sim::scalar::{self, sext, Scalar};

/// A fault and the lane that caused it.
pub type LaneFault = (usize, Fault);

/// What a memory operation needs besides the registers.
pub struct MemCtx<'a, 'v> {
    pub view: &'a mut View<'v>,
    pub sites: &'a mut [SiteStats],
    /// The requests each access makes, by the index its op holds.
    pub requests: &'a [Requests],
    pub counters: &'a mut Counters,
    pub scratch: &'a mut Scratch,
    /// Counts the writes that changed memory.
    pub writes: &'a mut u64,
    pub san: &'a mut Sanitizer,
    /// The warp's first thread (linear in the block) and the meetings
    /// that order its lanes.
    pub warp: (u32, &'a WarpSyncs),
}

/// The active lanes' `(address, bytes)`, lowest lane first.
struct Accesses {
    list: [(u64, u32); LANES],
    len: usize,
    /// The lanes, one per entry of `list`.
    mask: u32,
}

impl Accesses {
    fn gather(regs: &[u64], mask: u32, addr: Slot, bytes: impl Fn(usize) -> u32) -> Self {
        let a = row(regs, addr);
        let mut acc = Accesses {
            list: [(0, 0); LANES],
            len: 0,
            mask,
        };
        each(mask, |l| {
            acc.list[acc.len] = (a[l], bytes(l));
            acc.len += 1;
        });
        acc
    }

    fn as_slice(&self) -> &[(u64, u32)] {
        &self.list[..self.len]
    }
}

impl MemCtx<'_, '_> {
    /// Records the requests the backend makes of one warp-level access
    /// (`memory::lower`): each piece at its offset with its width, a copy
    /// loop once per byte (a lane taking part while its length lasts), a
    /// merged vector access once with its whole width, its other pieces
    /// not at all.
    fn record(&mut self, access: u32, acc: &Accesses) {
        let Some(plan) = self.requests.get(access as usize) else {
            return;
        };
        // Most accesses are one request of the op's own width.
        if let [r] = plan.pieces.as_slice() {
            let same = acc
                .as_slice()
                .first()
                .is_some_and(|a| r.bytes == 0 || r.bytes == a.1);
            if r.offset == 0 && r.repeat == Repeat::Once && same {
                return self.record_one(r.site, acc, r.atomic);
            }
        }
        for r in &plan.pieces {
            let at = |acc: &Accesses, k: u64, bytes: u32| {
                let mut out = Accesses {
                    len: 0,
                    mask: 0,
                    ..*acc
                };
                let mut lanes = acc.mask;
                for &(a, n) in acc.as_slice() {
                    let lane = lanes.trailing_zeros();
                    lanes &= lanes.wrapping_sub(1);
                    let width = if bytes == 0 { n } else { bytes };
                    if r.repeat != Repeat::Once && k >= u64::from(n) {
                        continue;
                    }
                    let at = a.wrapping_add_signed(i64::from(r.offset)).wrapping_add(k);
                    out.list[out.len] = (at, width);
                    out.len += 1;
                    out.mask |= 1 << lane;
                }
                out
            };
            match r.repeat {
                Repeat::Once => self.record_one(r.site, &at(acc, 0, r.bytes), r.atomic),
                Repeat::Times(_) | Repeat::PerLane => {
                    let longest = acc.as_slice().iter().map(|a| a.1).max().unwrap_or(0);
                    for k in 0..u64::from(longest) {
                        self.record_one(r.site, &at(acc, k, 1), false);
                    }
                }
            }
        }
    }

    /// Adds one warp-level request at `site` to the site and warp counters;
    /// an `atomic` one serialises on each address.
    fn record_one(&mut self, site: u32, acc: &Accesses, atomic: bool) {
        let accesses = acc.as_slice();
        let Some(&(first, _)) = accesses.first() else {
            return;
        };
        let stats = &mut self.sites[site as usize];
        stats.executions += 1;
        let space = cost::space_of(first);
        stats.space.get_or_insert(space);
        // One pass: whether every lane has the first's address, and
        // whether every lane is in its space.
        let tag = crate::sim::addr::tag(first);
        let (mut differ, mut spaces) = (false, false);
        for &(a, _) in accesses {
            differ |= a != first;
            spaces |= crate::sim::addr::tag(a) != tag;
        }
        stats.nonuniform += u64::from(differ);
        let at_max = stats.lanes(acc.len as u32);
        if atomic {
            stats
                .contention
                .add(cost::contention(accesses, self.scratch));
        }
        let in_space = |s: Space| !spaces && space == s;
        if in_space(Space::Global) {
            let (sectors, ideal) = cost::sectors(accesses, self.scratch);
            stats.sectors.add(sectors);
            stats.ideal_sectors += ideal;
            if at_max {
                stats.sectors_at_max.add(sectors);
                stats.excess_at_max.add(sectors.saturating_sub(ideal));
            }
            self.counters.requests += 1;
            self.counters.sectors += sectors;
            self.counters.ideal_sectors += ideal;
        } else if in_space(Space::Shared) {
            let b = cost::banks(acc.mask, accesses, atomic, self.scratch);
            stats.conflict.add(b.degree);
            if at_max {
                stats.conflict_at_max.add(b.degree);
            }
            stats.wavefronts.add(b.wavefronts);
            stats.ideal_wavefronts += b.ideal_wavefronts;
            self.counters.wavefronts += b.wavefronts;
            self.counters.conflicts += b.wavefronts - b.ideal_wavefronts;
        }
    }

    /// What lane `lane` does, for the sanitizer.
    #[inline]
    fn me(&self, lane: usize, access: u32, kind: AccessKind, changed: bool) -> Me {
        Me {
            access,
            thread: self.warp.0 + lane as u32,
            gen: self.warp.1.count(),
            kind,
            changed,
        }
    }

    /// Lane `lane` read `len` bytes at `address` (access `access`).
    #[inline]
    fn sanitize_read(&mut self, lane: usize, address: u64, len: usize, access: u32) -> bool {
        let me = self.me(lane, access, AccessKind::Read, false);
        self.san
            .read(&*self.view.objects, address, len, &me, self.warp.1)
    }

    /// The lanes of `mask` read `len` bytes each at their `address`. Lanes
    /// in a row reading the same address (a broadcast) are applied once
    /// for the first and once for the last, when the first says that is
    /// what applying them all would come to.
    fn sanitize_reads(&mut self, mask: u32, address: &[u64; LANES], len: usize, access: u32) {
        if !self.san.on {
            return;
        }
        let mut lanes = [0u8; LANES];
        let mut n = 0;
        each(mask, |l| {
            if self.san.wants(self.view.objects, address[l]) {
                lanes[n] = l as u8;
                n += 1;
            }
        });
        let mut i = 0;
        while i < n {
            let first = usize::from(lanes[i]);
            let quiet = self.sanitize_read(first, address[first], len, access);
            let mut j = i + 1;
            while j < n && address[usize::from(lanes[j])] == address[first] {
                if !quiet {
                    let l = usize::from(lanes[j]);
                    self.sanitize_read(l, address[l], len, access);
                }
                j += 1;
            }
            if quiet && j > i + 1 {
                let last = usize::from(lanes[j - 1]);
                self.sanitize_read(last, address[last], len, access);
            }
            i = j;
        }
    }

    /// Lane `lane` wrote `len` bytes at `address`, changing them or not,
    /// or (`kind` atomic) read and wrote them.
    #[inline]
    fn sanitize_write(
        &mut self,
        lane: usize,
        (address, len): (u64, usize),
        access: u32,
        kind: AccessKind,
        changed: bool,
    ) {
        if self.san.wants(self.view.objects, address) {
            let me = self.me(lane, access, kind, changed);
            self.san
                .write(&mut *self.view.objects, address, len, &me, self.warp.1);
        }
    }

    pub fn load(
        &mut self,
        regs: &mut [u64],
        mask: u32,
        (dst, addr, s, site): (Slot, Slot, Scalar, u32),
    ) -> Result<(), LaneFault> {
        let n = s.bytes();
        self.record(site, &Accesses::gather(regs, mask, addr, |_| n));
        let a = *row(regs, addr);
        let m = scalar_mask(s);
        if let Some(data) = self.view.span_read(&a, mask, n as usize) {
            gather(data, &a, mask, n as usize, row_mut(regs, dst), m);
        } else {
            try_each(mask, |l| {
                let b = self.view.read(a[l], n as usize, l).map_err(|f| (l, f))?;
                row_mut(regs, dst)[l] = read_le(b) & m;
                Ok(())
            })?;
        }
        self.sanitize_reads(mask, &a, n as usize, site);
        Ok(())
    }

    pub fn store(
        &mut self,
        regs: &mut [u64],
        mask: u32,
        (src, addr, s, site): (Slot, Slot, Scalar, u32),
    ) -> Result<(), LaneFault> {
        let n = s.bytes();
        self.record(site, &Accesses::gather(regs, mask, addr, |_| n));
        let (a, v) = (row(regs, addr), row(regs, src));
        if self.san.idle() {
            if let Some(data) = self.view.span_write(a, mask, n as usize) {
                *self.writes += scatter(data, a, mask, n as usize, v);
                return Ok(());
            }
        }
        try_each(mask, |l| {
            let b = self
                .view
                .bytes(a[l], n as usize, l, true)
                .map_err(|f| (l, f))?;
            let changed = put_le(b, v[l]);
            *self.writes += u64::from(changed);
            self.sanitize_write(l, (a[l], n as usize), site, AccessKind::Write, changed);
            Ok(())
        })
    }

    /// A vector or aggregate, leaf by leaf, counted as one access.
    pub fn leaves(
        &mut self,
        regs: &mut [u64],
        mask: u32,
        x: &Leaves,
        write: bool,
    ) -> Result<(), LaneFault> {
        self.record(x.site, &Accesses::gather(regs, mask, x.addr, |_| x.bytes));
        let a = *row(regs, x.addr);
        try_each(mask, |l| {
            for (k, leaf) in x.leaves.iter().enumerate() {
                let n = leaf.scalar.bytes() as usize;
                let at = a[l].wrapping_add(u64::from(leaf.offset));
                let slot = x.value + k as u32;
                if write {
                    let b = self.view.bytes(at, n, l, true).map_err(|f| (l, f))?;
                    let changed = put_le(b, row(regs, slot)[l]);
                    *self.writes += u64::from(changed);
                    self.sanitize_write(l, (at, n), x.site, AccessKind::Write, changed);
                } else {
                    let b = self.view.read(at, n, l).map_err(|f| (l, f))?;
                    row_mut(regs, slot)[l] = read_le(b) & scalar_mask(leaf.scalar);
                    if self.san.wants(self.view.objects, at) {
                        self.sanitize_read(l, at, n, x.site);
                    }
                }
            }
            Ok(())
        })
    }

    /// Lanes perform their read-modify-writes one after another, lowest first.
    pub fn atomic(&mut self, regs: &mut [u64], mask: u32, x: &Atomic) -> Result<(), LaneFault> {
        let n = x.scalar.bytes();
        self.record(x.site, &Accesses::gather(regs, mask, x.addr, |_| n));
        let (a, v, c) = (*row(regs, x.addr), *row(regs, x.val), *row(regs, x.cmp));
        let m = scalar_mask(x.scalar);
        try_each(mask, |l| {
            let b = self
                .view
                .bytes(a[l], n as usize, l, true)
                .map_err(|f| (l, f))?;
            let old = read_le(b) & m;
            let changed = put_le(b, rmw(x.kind, x.scalar, old, v[l], c[l]));
            *self.writes += u64::from(changed);
            let at = (a[l], n as usize);
            self.sanitize_write(l, at, x.site, AccessKind::Atomic, changed);
            row_mut(regs, x.dst)[l] = old;
            if x.with_flag {
                row_mut(regs, x.dst + 1)[l] = u64::from(old == c[l] & m);
            }
            Ok(())
        })
    }

    /// `memcpy`, `memmove` (through a buffer, so overlap is fine) and `memset`.
    pub fn block(&mut self, regs: &mut [u64], mask: u32, x: &MemOp) -> Result<(), LaneFault> {
        let len = *row(regs, x.len);
        let len_mask = scalar::mask(u32::from(x.len_bits));
        let bytes = |l: usize| u32::try_from(len[l] & len_mask).unwrap_or(u32::MAX);
        if !x.is_set {
            self.record(x.load_site, &Accesses::gather(regs, mask, x.src, bytes));
        }
        self.record(x.store_site, &Accesses::gather(regs, mask, x.dst, bytes));
        let (d, s) = (*row(regs, x.dst), *row(regs, x.src));
        let mut tmp = Vec::new();
        try_each(mask, |l| {
            let n = bytes(l) as usize;
            tmp.clear();
            if x.is_set {
                tmp.resize(n, s[l] as u8);
            } else {
                tmp.extend_from_slice(self.view.read(s[l], n, l).map_err(|f| (l, f))?);
                // A copy passes bytes on without using them: only a
                // shared source can race, and an unwritten global one is
                // not reported.
                if self.san.on && crate::sim::addr::tag(s[l]) == crate::sim::addr::SHARED {
                    self.sanitize_read(l, s[l], n, x.load_site);
                }
            }
            let to = self.view.bytes(d[l], n, l, true).map_err(|f| (l, f))?;
            let changed = *to != *tmp;
            if changed {
                to.copy_from_slice(&tmp);
                *self.writes += 1;
            }
            let at = (d[l], n);
            self.sanitize_write(l, at, x.store_site, AccessKind::Write, changed);
            Ok(())
        })
    }

    /// A libdevice call that writes results through pointers (`sincosf`).
    pub fn out_params(
        &mut self,
        regs: &mut [u64],
        mask: u32,
        x: &OutParams,
    ) -> Result<(), LaneFault> {
        let mut args = [0u64; super::MAX_MATH_ARGS];
        try_each(mask, |l| {
            for (i, &(s, _)) in x.math.args.iter().enumerate() {
                args[i] = row(regs, s)[l];
            }
            let r = x.math.f.eval(&args[..x.math.args.len()], 0);
            if x.returns {
                row_mut(regs, x.math.dst)[l] = r[0];
            }
            for (k, &(ptr, s)) in x.outputs.iter().enumerate() {
                let n = s.bytes() as usize;
                let at = row(regs, ptr)[l];
                let b = self.view.bytes(at, n, l, true).map_err(|f| (l, f))?;
                let changed = put_le(b, r[k + 1]);
                *self.writes += u64::from(changed);
                // The call has no access of its own to name.
                self.sanitize_write(l, (at, n), u32::MAX, AccessKind::Write, changed);
            }
            Ok(())
        })
    }
}

fn scalar_mask(s: Scalar) -> u64 {
    match s {
        Scalar::Int(b) => scalar::mask(u32::from(b)),
        _ => u64::MAX,
    }
}

/// The value an atomic leaves in memory.
pub fn rmw(kind: RmwKind, s: Scalar, old: u64, v: u64, cmp: u64) -> u64 {
    let bits = match s {
        Scalar::Int(b) => u32::from(b),
        _ => s.bytes() * 8,
    };
    let m = scalar::mask(bits);
    let float = |op: fn(f64, f64) -> f64| {
        let ty = s.float().unwrap_or(crate::sim::scalar::FTy::F32);
        scalar::from_f64(ty, op(scalar::to_f64(ty, old), scalar::to_f64(ty, v)))
    };
    let r = match kind {
        RmwKind::Cas if old == cmp & m => v,
        RmwKind::Cas => old,
        RmwKind::Rmw(op) => match op {
            RmwOp::Xchg => v,
            RmwOp::Add => old.wrapping_add(v),
            RmwOp::Sub => old.wrapping_sub(v),
            RmwOp::And => old & v,
            RmwOp::Nand => !(old & v),
            RmwOp::Or => old | v,
            RmwOp::Xor => old ^ v,
            RmwOp::Max if sext(old, bits) >= sext(v, bits) => old,
            RmwOp::Min if sext(old, bits) <= sext(v, bits) => old,
            RmwOp::Max | RmwOp::Min => v,
            RmwOp::UMax => old.max(v & m),
            RmwOp::UMin => old.min(v & m),
            RmwOp::FAdd => float(|a, b| a + b),
            RmwOp::FSub => float(|a, b| a - b),
            RmwOp::FMax => float(f64::max),
            RmwOp::FMin => float(f64::min),
            RmwOp::UIncWrap if old >= v & m => 0,
            RmwOp::UIncWrap => old + 1,
            RmwOp::UDecWrap if old == 0 || old > v & m => v,
            RmwOp::UDecWrap => old - 1,
            RmwOp::USubCond if old >= v & m => old - (v & m),
            RmwOp::USubCond => old,
            RmwOp::USubSat => old.saturating_sub(v & m),
            RmwOp::FMaximum => float(ieee_maximum),
            RmwOp::FMinimum => float(|a, b| -ieee_maximum(-a, -b)),
        },
    };
    r & m
}

/// IEEE 754-2019 `maximum`: a NaN operand gives NaN, and +0 is above -0
/// (`f64::max` returns the other operand of a NaN).
fn ieee_maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        // Only the zeros differ while equal: +0 if either is +0.
        if a.is_sign_positive() {
            a
        } else {
            b
        }
    } else {
        a.max(b)
    }
}

/// Each lane of `mask` reads `n` bytes of `data` at its address's offset
/// into `out`, masked to `m` (the span already checked).
#[inline(always)]
fn gather(data: &[u8], a: &[u64; LANES], mask: u32, n: usize, out: &mut [u64; LANES], m: u64) {
    let at = |l: usize| (a[l] & crate::sim::addr::OFFSET_MASK) as usize;
    match n {
        4 => each(mask, |l| {
            let o = at(l);
            out[l] = u64::from(u32::from_le_bytes(data[o..o + 4].try_into().expect("4"))) & m;
        }),
        8 => each(mask, |l| {
            let o = at(l);
            out[l] = u64::from_le_bytes(data[o..o + 8].try_into().expect("8")) & m;
        }),
        _ => each(mask, |l| {
            let o = at(l);
            out[l] = read_le(&data[o..o + n]) & m;
        }),
    }
}

/// Each lane of `mask` writes the low `n` bytes of `v[lane]` into `data`
/// at its address's offset; returns how many writes changed memory.
#[inline(always)]
fn scatter(data: &mut [u8], a: &[u64; LANES], mask: u32, n: usize, v: &[u64; LANES]) -> u64 {
    let mut changed = 0;
    each(mask, |l| {
        let o = (a[l] & crate::sim::addr::OFFSET_MASK) as usize;
        changed += u64::from(put_le(&mut data[o..o + n], v[l]));
    });
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scalar::{bits_f32, f32_of};

    #[test]
    fn read_modify_write() {
        let i32_ = Scalar::Int(32);
        let m1 = scalar::mask(32);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::Max), i32_, m1, 3, 0), 3); // max(-1, 3)
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::UMax), i32_, m1, 3, 0), m1);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::UIncWrap), i32_, 10, 10, 0), 0);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::UIncWrap), i32_, 9, 10, 0), 10);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::UDecWrap), i32_, 0, 10, 0), 10);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::UDecWrap), i32_, 5, 10, 0), 4);
        assert_eq!(rmw(RmwKind::Cas, i32_, 7, 9, 7), 9);
        assert_eq!(rmw(RmwKind::Cas, i32_, 7, 9, 8), 7);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::Sub), i32_, 0, 1, 0), m1);
        // LLVM 20's unsigned subtractions: 5 - 3 = 2; 3 - 5 keeps 3
        // (usub_cond) or clamps to 0 (usub_sat).
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::USubCond), i32_, 5, 3, 0), 2);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::USubCond), i32_, 3, 5, 0), 3);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::USubSat), i32_, 5, 3, 0), 2);
        assert_eq!(rmw(RmwKind::Rmw(RmwOp::USubSat), i32_, 3, 5, 0), 0);
        // maximum/minimum propagate NaN where max/min drop it, and order
        // the zeros.
        let f = |op, a: f32, b: f32| {
            f32_of(rmw(
                RmwKind::Rmw(op),
                Scalar::F32,
                bits_f32(a),
                bits_f32(b),
                0,
            ))
        };
        assert!(f(RmwOp::FMaximum, f32::NAN, 1.0).is_nan());
        assert_eq!(f(RmwOp::FMax, f32::NAN, 1.0), 1.0);
        assert!(f(RmwOp::FMinimum, 1.0, f32::NAN).is_nan());
        assert!(f(RmwOp::FMaximum, -0.0, 0.0).is_sign_positive());
        assert!(f(RmwOp::FMinimum, 0.0, -0.0).is_sign_negative());
        assert_eq!(f(RmwOp::FMinimum, 2.0, -3.0), -3.0);
        let f = rmw(
            RmwKind::Rmw(RmwOp::FAdd),
            Scalar::F32,
            bits_f32(1.5),
            bits_f32(2.0),
            0,
        );
        assert_eq!(f32_of(f), 3.5);
    }
}
