//! The SIMT stack: lock-step control flow with reconvergence at the
//! immediate post-dominator.
//!
//! Each frame keeps a stack of entries `(pc, reconvergence block, mask)`;
//! the top one runs. A divergent branch turns the top entry into one that
//! waits at the branch's immediate post-dominator R, and pushes one entry
//! per target for the lanes taking it, each reconverging at R. An entry
//! whose lanes reach its reconvergence block is popped, and the waiting
//! entry below resumes there with the union of the lanes. Loops need nothing
//! special: lanes leaving a loop wait at its post-dominator until the last
//! lane leaves. The invariant is that every entry's reconvergence block is
//! where the entry below it waits.

use super::lanes::{row, row_mut, write, LANES};
use crate::sim::code::{Edge, EXIT};

/// The pc of an entry waiting at the virtual exit.
pub const EXIT_PC: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub pc: u32,
    /// The block where this entry's lanes reconverge, or [`EXIT`].
    pub rpc: u32,
    pub mask: u32,
}

/// One group of lanes leaving a branch together.
#[derive(Copy, Clone, Debug)]
pub struct Group {
    pub edge: u32,
    pub target: u32,
    pub pc: u32,
    pub mask: u32,
}

/// The groups of one branch execution; at most one per lane, kept on the
/// stack so branching never allocates.
pub struct Groups {
    list: [Group; LANES],
    len: usize,
}

impl Groups {
    pub fn new() -> Self {
        Groups {
            list: [Group {
                edge: 0,
                target: 0,
                pc: 0,
                mask: 0,
            }; LANES],
            len: 0,
        }
    }

    /// Adds the lanes of `mask` leaving along edge `id`.
    pub fn add(&mut self, id: u32, e: &Edge, mask: u32) {
        if mask == 0 {
            return;
        }
        match self.list[..self.len].iter_mut().find(|g| g.edge == id) {
            Some(g) => g.mask |= mask,
            None => {
                self.list[self.len] = Group {
                    edge: id,
                    target: e.target,
                    pc: e.pc,
                    mask,
                };
                self.len += 1;
            }
        }
    }

    pub fn as_slice(&self) -> &[Group] {
        &self.list[..self.len]
    }
}

/// Performs an edge's phi copies for the lanes in `mask`; `tmp` holds the
/// sources when a destination is also a source (a swap).
pub fn phi_copies(regs: &mut [u64], e: &Edge, mask: u32, tmp: &mut Vec<[u64; LANES]>) {
    if !e.parallel {
        for &(dst, src) in &e.copies {
            let v = *row(regs, src);
            write(regs, dst, &v, mask);
        }
        return;
    }
    tmp.clear();
    tmp.extend(e.copies.iter().map(|&(_, src)| *row(regs, src)));
    for (&(dst, _), v) in e.copies.iter().zip(tmp.iter()) {
        write(regs, dst, v, mask);
    }
}

/// All active lanes move to `target` together.
pub fn goto(stack: &mut Vec<Entry>, target: u32, pc: u32) {
    let top = stack.last_mut().expect("a running frame has an entry");
    if top.rpc == target {
        stack.pop();
    } else {
        top.pc = pc;
    }
}

/// The active lanes split into `groups`, reconverging at block `ipdom`
/// (whose first op is `ipdom_pc`). The first group runs first.
pub fn diverge(stack: &mut Vec<Entry>, groups: &[Group], ipdom: u32, ipdom_pc: u32) {
    let top = stack.last_mut().expect("a running frame has an entry");
    if top.rpc == ipdom {
        // The entry below already waits at `ipdom` for all of these lanes.
        stack.pop();
    } else {
        top.pc = ipdom_pc;
    }
    for g in groups.iter().rev().filter(|g| g.target != ipdom) {
        stack.push(Entry {
            pc: g.pc,
            rpc: ipdom,
            mask: g.mask,
        });
    }
}

/// The reconvergence pc of a post-dominator block.
pub fn reconvergence_pc(block_pc: &[u32], ipdom: u32) -> u32 {
    if ipdom == EXIT {
        EXIT_PC
    } else {
        block_pc[ipdom as usize]
    }
}

/// Drops entries that have nothing left to run: those waiting at the
/// virtual exit (their lanes have returned) and those whose lanes all
/// returned. Returns whether the frame is finished.
pub fn settle(stack: &mut Vec<Entry>, returned: u32) -> bool {
    while let Some(top) = stack.last() {
        if top.pc == EXIT_PC || top.mask & !returned == 0 {
            stack.pop();
        } else {
            return false;
        }
    }
    true
}

/// Copies `words` slots from one register file to another for `mask`.
pub fn copy_between(from: &[u64], src: u32, to: &mut [u64], dst: u32, words: u32, mask: u32) {
    for k in 0..words {
        let v = *row(from, src + k);
        if mask == u32::MAX {
            *row_mut(to, dst + k) = v;
        } else {
            write(to, dst + k, &v, mask);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pc: u32, rpc: u32, mask: u32) -> Entry {
        Entry { pc, rpc, mask }
    }

    #[test]
    fn if_then_else_reconverges() {
        // Block 0 branches to 1 (pc 10) and 2 (pc 20); both join at 3 (pc 30).
        let mut s = vec![entry(0, EXIT, 0xff)];
        let groups = [
            Group {
                edge: 0,
                target: 1,
                pc: 10,
                mask: 0x0f,
            },
            Group {
                edge: 1,
                target: 2,
                pc: 20,
                mask: 0xf0,
            },
        ];
        diverge(&mut s, &groups, 3, 30);
        assert_eq!(
            s,
            vec![
                entry(30, EXIT, 0xff),
                entry(20, 3, 0xf0),
                entry(10, 3, 0x0f)
            ]
        );
        goto(&mut s, 3, 30); // the then-side reaches the join
        goto(&mut s, 3, 30); // the else-side too
        assert_eq!(s, vec![entry(30, EXIT, 0xff)]);
    }

    #[test]
    fn loop_exits_wait_at_the_post_dominator() {
        // A latch (block 2) loops to 1 or exits to 3; lanes leave one group
        // at a time and the last one resumes the waiting entry.
        let mut s = vec![entry(0, EXIT, 0b111)];
        let split = |cont| {
            [
                Group {
                    edge: 0,
                    target: 1,
                    pc: 10,
                    mask: cont,
                },
                Group {
                    edge: 1,
                    target: 3,
                    pc: 30,
                    mask: 0b111 & !cont,
                },
            ]
        };
        diverge(&mut s, &split(0b110), 3, 30);
        assert_eq!(s, vec![entry(30, EXIT, 0b111), entry(10, 3, 0b110)]);
        // Next iteration: lane 1 leaves too. The top entry already
        // reconverges at 3, so it is replaced rather than nested.
        diverge(&mut s, &split(0b100), 3, 30);
        assert_eq!(s, vec![entry(30, EXIT, 0b111), entry(10, 3, 0b100)]);
        goto(&mut s, 3, 30);
        assert_eq!(s, vec![entry(30, EXIT, 0b111)]);
    }

    #[test]
    fn returns_unwind_to_the_caller() {
        // A branch whose sides both return: ipdom is the virtual exit.
        let mut s = vec![entry(0, EXIT, 0b11)];
        let groups = [
            Group {
                edge: 0,
                target: 1,
                pc: 10,
                mask: 0b01,
            },
            Group {
                edge: 1,
                target: 2,
                pc: 20,
                mask: 0b10,
            },
        ];
        diverge(&mut s, &groups, EXIT, EXIT_PC);
        s.pop(); // lane 0 returns
        assert!(!settle(&mut s, 0b01));
        assert_eq!(s.last().unwrap().mask, 0b10);
        s.pop(); // lane 1 returns
        assert!(settle(&mut s, 0b11));
    }
}
