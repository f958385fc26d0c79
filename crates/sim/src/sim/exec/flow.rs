//! Branches, switches and returns: which lanes go where, the phi copies on
//! the way, the SIMT stack, and the divergence they cost.

use super::control::{self, Groups};
use super::lanes::{self, each, row, true_lanes};
use super::{Machine, Warp};
use crate::sim::code::{Func, Switch};
use crate::sim::scalar;

/// Which of a warp's marks in `Machine::seen` to set.
const RAN: usize = 0;
const SPLIT: usize = 1;
/// Ran with all 32 lanes active.
const WHOLE: usize = 2;

impl Machine<'_> {
    /// An unconditional branch: every active lane along `edge`.
    pub(super) fn jump(&mut self, w: &mut Warp, func: &Func, edge: u32, mask: u32) {
        let mut groups = Groups::new();
        groups.add(edge, &func.edges[edge as usize], mask);
        self.take(w, func, &groups, 0, None);
    }

    pub(super) fn cond_branch(
        &mut self,
        w: &mut Warp,
        func: &Func,
        (cond, edges, site, ipdom): (u32, [u32; 2], u32, u32),
        mask: u32,
    ) {
        let regs = &w.frames.last().expect("running").regs;
        let taken = true_lanes(regs, cond, mask);
        let split = [taken, mask & !taken];
        let stats = &mut self.sites[site as usize];
        stats.executions += 1;
        stats.lanes(mask.count_ones());
        if split[0] != 0 && split[1] != 0 {
            stats.nonuniform += 1;
        }
        self.warp_at(w.index, site, RAN);
        if mask == u32::MAX {
            self.warp_at(w.index, site, WHOLE);
        }
        let mut groups = Groups::new();
        for (&edge, &m) in edges.iter().zip(&split) {
            groups.add(edge, &func.edges[edge as usize], m);
        }
        self.take(w, func, &groups, ipdom, Some(site));
    }

    pub(super) fn switch(&mut self, w: &mut Warp, func: &Func, s: &Switch, mask: u32) {
        let c = *row(&w.frames.last().expect("running").regs, s.cond);
        let first = c[mask.trailing_zeros() as usize];
        let mut same = true;
        let mut groups = Groups::new();
        each(mask, |l| {
            let v = c[l] & scalar::mask(u32::from(s.bits));
            same &= c[l] == first;
            let edge = s
                .cases
                .iter()
                .find(|&&(k, _)| k == v)
                .map_or(s.default, |&(_, e)| e);
            groups.add(edge, &func.edges[edge as usize], 1 << l);
        });
        let stats = &mut self.sites[s.site as usize];
        stats.executions += 1;
        stats.lanes(mask.count_ones());
        if !same {
            stats.nonuniform += 1;
        }
        self.warp_at(w.index, s.site, RAN);
        if mask == u32::MAX {
            self.warp_at(w.index, s.site, WHOLE);
        }
        self.take(w, func, &groups, s.ipdom, Some(s.site));
    }

    /// Moves each group along its edge: phi copies, then the SIMT stack.
    /// Several groups are a divergent branch at `site`, reconverging at
    /// block `ipdom`.
    fn take(&mut self, w: &mut Warp, func: &Func, groups: &Groups, ipdom: u32, site: Option<u32>) {
        let frame = w.frames.last_mut().expect("running");
        let groups = groups.as_slice();
        for g in groups {
            let e = &func.edges[g.edge as usize];
            w.counters.steps += u64::from(e.phis);
            if let Some(t) = w.timeline.as_deref_mut() {
                t.phis(e.phis);
            }
            w.counters.thread_instructions += u64::from(e.phis) * u64::from(g.mask.count_ones());
            control::phi_copies(&mut frame.regs, e, g.mask, &mut self.phi_tmp);
        }
        if let [g] = groups {
            control::goto(&mut frame.stack, g.target, g.pc);
            return;
        }
        if let Some(site) = site {
            self.sites[site as usize].divergent += 1;
            self.warp_at(w.index, site, SPLIT);
        }
        w.counters.divwarps += 1;
        let ipdom_pc = control::reconvergence_pc(&func.block_pc, ipdom);
        control::diverge(&mut frame.stack, groups, ipdom, ipdom_pc);
    }

    /// Counts warp `warp` of the current block as having run branch `site`
    /// (`RAN`), run it with the whole warp (`WHOLE`) or been split by it
    /// (`SPLIT`), once per block.
    #[inline]
    fn warp_at(&mut self, warp: u32, site: u32, what: usize) {
        let slot = self.groups[site as usize] as usize * self.warps_per_block + warp as usize;
        let last = &mut self.seen[slot][what];
        if *last == self.epoch {
            return;
        }
        *last = self.epoch;
        let stats = &mut self.sites[site as usize];
        let per_warp = &mut stats.by_warp[warp as usize];
        match what {
            RAN => {
                stats.warps += 1;
                per_warp.0 += 1;
            }
            SPLIT => {
                stats.divergent_warps += 1;
                per_warp.1 += 1;
            }
            _ => per_warp.2 += 1,
        }
    }

    /// `ret`: the lanes leave the stack entry; the frame ends when no
    /// entry has lanes left (see [`control::settle`]).
    pub(super) fn ret(w: &mut Warp, func: &Func, (src, words): (u32, u32), mask: u32) {
        let kernel = w.frames.len() == 1;
        let frame = w.frames.last_mut().expect("running");
        lanes::copy(&mut frame.regs, mask, func.ret_slot, src, words);
        frame.returned |= mask;
        if kernel {
            w.exited |= mask;
        }
        frame.stack.pop();
    }
}
