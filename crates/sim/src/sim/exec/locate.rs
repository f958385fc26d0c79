//! Where the lanes of a stopped warp are: running, spinning, waiting at a
//! barrier, left behind at a branch (to run later, or to return without
//! meeting a barrier), or exited; each group placed at its source line and
//! at the loop around it.

use super::control::EXIT_PC;
use super::{Machine, Warp};
use crate::graph::{FunctionGraphs, Loops};
use crate::ir::Position;
use crate::ir::{BlockId, InstId};
use crate::sim::error::{LaneGroup, LaneState};

/// Places ops at source lines and loops; each function's loops are found
/// once, when first needed.
pub struct Locator<'a, 'm> {
    m: &'a Machine<'m>,
    loops: Vec<Option<Loops>>,
}

impl<'a, 'm> Locator<'a, 'm> {
    pub fn new(m: &'a Machine<'m>) -> Self {
        Locator {
            m,
            loops: vec![None; m.program.funcs.len()],
        }
    }

    /// The lanes of warp `w` of the current block, grouped by what they do.
    pub fn warp(&mut self, w: &Warp) -> Vec<LaneGroup> {
        let mut groups = Vec::new();
        if w.done {
            groups.push(self.group(w, w.valid, LaneState::Exited, None));
            return groups;
        }
        let mut placed = w.exited;
        if w.exited != 0 {
            groups.push(self.group(w, w.exited, LaneState::Exited, None));
        }
        if let Some(wait) = &w.wait {
            placed |= wait.mask;
            let at = Some((wait.func, wait.pc));
            groups.push(self.group(w, wait.mask, LaneState::AtBarrier, at));
        }
        let mut first = w.wait.is_none();
        for frame in w.frames.iter().rev() {
            let func = &self.m.program.funcs[frame.func as usize];
            for e in frame.stack.iter().rev() {
                let here = e.mask & w.valid & !placed & !frame.returned;
                if here == 0 {
                    continue;
                }
                placed |= here;
                let state = if std::mem::take(&mut first) {
                    match w.parked {
                        Some(_) => LaneState::Spinning,
                        None => LaneState::Running,
                    }
                } else if e.pc == EXIT_PC || func.barrier_free[func.block_of(e.pc)] {
                    LaneState::Returning
                } else {
                    LaneState::Pending
                };
                let at = (e.pc != EXIT_PC).then_some((frame.func, e.pc));
                groups.push(self.group(w, here, state, at));
            }
        }
        groups
    }

    fn group(
        &mut self,
        w: &Warp,
        lanes: u32,
        state: LaneState,
        at: Option<(u32, u32)>,
    ) -> LaneGroup {
        LaneGroup {
            block: self.m.block,
            warp: w.index,
            lanes,
            state,
            pos: at.and_then(|(f, pc)| self.m.position(f, pc)),
            in_loop: at.and_then(|(f, pc)| self.loop_at(f, pc)),
        }
    }

    /// The innermost natural loop around op `pc` of function `func`,
    /// placed where clang places the loop statement: at the branch that
    /// closes it (else at the first line of its header).
    pub fn loop_at(&mut self, func: u32, pc: u32) -> Option<Position> {
        let f = &self.m.program.funcs[func as usize];
        let module = self.m.module;
        let ir = module.func(f.id);
        let loops = self.loops[func as usize].get_or_insert_with(|| FunctionGraphs::new(ir).loops);
        let l = loops.get(loops.loop_of(BlockId::new(f.block_of(pc)))?);
        let located = |i: &InstId| {
            let loc = ir.inst(*i).loc.filter(|&l| module.loc(l).pos.line != 0)?;
            Some(Position::resolve(module, &module.user_pos(loc).0))
        };
        l.latches
            .iter()
            .find_map(|b| ir.blocks[b.index()].insts.last().and_then(located))
            .or_else(|| ir.blocks[l.header.index()].insts.iter().find_map(located))
    }
}
