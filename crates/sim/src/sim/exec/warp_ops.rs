//! Operations that read other lanes: shuffles, votes, match, reductions.
//!
//! A source lane outside the active mask contributes its register's last
//! value, as undefined as on the hardware.

use super::lanes::{each, row, row_mut, write, LANES};
use crate::ir::intrinsics::{ShflControl, VoteMode};
use crate::sim::code::{Redux, Warp};
use crate::sim::scalar::{mask, sext};

pub fn exec(op: &Warp, regs: &mut [u64], active: u32) {
    match *op {
        Warp::Shfl {
            mode,
            dst,
            value,
            lane,
            clamp,
            with_pred,
        } => {
            let (v, b, c) = (*row(regs, value), *row(regs, lane), *row(regs, clamp));
            let mut out = [0u64; LANES];
            let mut ok = [0u64; LANES];
            each(active, |l| {
                let control = ShflControl::from_bits(c[l] as u32);
                let (src, valid) = control.source(mode, l as u32, b[l] as u32);
                out[l] = v[src as usize];
                ok[l] = u64::from(valid);
            });
            write(regs, dst, &out, active);
            if with_pred {
                write(regs, dst + 1, &ok, active);
            }
        }
        Warp::Vote {
            mode,
            dst,
            mask: m,
            pred,
        } => {
            let (members, p) = (*row(regs, m), *row(regs, pred));
            let mut yes = 0u32;
            each(active, |l| yes |= u32::from(p[l] & 1 != 0) << l);
            let out: [u64; LANES] = std::array::from_fn(|l| {
                let group = members[l] as u32 & active;
                let set = yes & group;
                match mode {
                    VoteMode::Ballot => u64::from(set),
                    VoteMode::All => u64::from(set == group),
                    VoteMode::Any => u64::from(set != 0),
                    VoteMode::Uni => u64::from(set == group || set == 0),
                }
            });
            write(regs, dst, &out, active);
        }
        Warp::MatchAny {
            dst,
            mask: m,
            value,
        } => {
            let (members, v) = (*row(regs, m), *row(regs, value));
            let out: [u64; LANES] = std::array::from_fn(|l| {
                let group = members[l] as u32 & active;
                let mut same = 0u32;
                each(group, |k| same |= u32::from(v[k] == v[l]) << k);
                u64::from(same)
            });
            write(regs, dst, &out, active);
        }
        Warp::MatchAll {
            dst,
            mask: m,
            value,
        } => {
            let (members, v) = (*row(regs, m), *row(regs, value));
            let mut out = [0u64; LANES];
            let mut pred = [0u64; LANES];
            each(active, |l| {
                let group = members[l] as u32 & active;
                let mut all = true;
                each(group, |k| all &= v[k] == v[l]);
                out[l] = if all { u64::from(group) } else { 0 };
                pred[l] = u64::from(all);
            });
            write(regs, dst, &out, active);
            write(regs, dst + 1, &pred, active);
        }
        Warp::Redux {
            op,
            dst,
            value,
            mask: m,
        } => {
            let (members, v) = (*row(regs, m), *row(regs, value));
            let out: [u64; LANES] = std::array::from_fn(|l| {
                let group = members[l] as u32 & active;
                let mut acc: Option<u64> = None;
                each(group, |k| {
                    acc = Some(acc.map_or(v[k], |a| redux(op, a, v[k])))
                });
                acc.unwrap_or(0) & mask(32)
            });
            write(regs, dst, &out, active);
        }
        Warp::ActiveMask { dst } => {
            each(active, |l| row_mut(regs, dst)[l] = u64::from(active));
        }
        Warp::Elect { dst, mask: m } => {
            let members = *row(regs, m);
            each(active, |l| {
                let group = members[l] as u32 & active;
                let leader = group.trailing_zeros();
                row_mut(regs, dst)[l] = u64::from(leader.min(31));
                row_mut(regs, dst + 1)[l] = u64::from(group != 0 && leader == l as u32);
            });
        }
    }
}

fn redux(op: Redux, a: u64, b: u64) -> u64 {
    match op {
        Redux::Add => a.wrapping_add(b),
        Redux::And => a & b,
        Redux::Or => a | b,
        Redux::Xor => a ^ b,
        Redux::UMin => a.min(b),
        Redux::UMax => a.max(b),
        Redux::Min if sext(a, 32) <= sext(b, 32) => a,
        Redux::Max if sext(a, 32) >= sext(b, 32) => a,
        Redux::Min | Redux::Max => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn votes_and_matches() {
        let mut regs = vec![0u64; 6 * LANES];
        for l in 0..LANES {
            row_mut(&mut regs, 0)[l] = 0xffff_ffff; // member mask
            row_mut(&mut regs, 1)[l] = (l % 2) as u64; // predicate
            row_mut(&mut regs, 2)[l] = (l / 4) as u64; // value
        }
        let active = 0x0000_00ff;
        exec(
            &Warp::Vote {
                mode: VoteMode::Ballot,
                dst: 3,
                mask: 0,
                pred: 1,
            },
            &mut regs,
            active,
        );
        assert_eq!(row(&regs, 3)[0], 0xaa);
        exec(
            &Warp::MatchAny {
                dst: 4,
                mask: 0,
                value: 2,
            },
            &mut regs,
            active,
        );
        assert_eq!(row(&regs, 4)[5], 0xf0);
        exec(
            &Warp::Redux {
                op: Redux::Add,
                dst: 5,
                value: 2,
                mask: 0,
            },
            &mut regs,
            active,
        );
        // Lanes 0-3 hold 0, lanes 4-7 hold 1: sum 4.
        assert_eq!(row(&regs, 5)[0], 4);
    }
}
