//! Abstract memory locations, and which reads of shared memory may
//! observe thread-dependent data.
//!
//! Memory is split by who can see it. *Per-thread* memory (an `alloca`,
//! local space) has one copy per lane: its facts are flow-sensitive, and a
//! lane's copy differs from its neighbours' once a lane-dependent value, a
//! lane-dependent address or lane-dependent control writes it. *Shared*
//! memory (`__shared__` arrays, global memory by base pointer, constants) is
//! one copy that every thread reads, so only writing lane-dependent *data*
//! makes it dependent: `if (tid == 0) s = x;` leaves `s` uniform.
//!
//! Locations come from `memory::Spaces` origins: a pointer whose root is
//! unknown may alias every location of its kind, and one whose space is
//! unknown as well may be either kind.
//!
//! # When a read of shared memory is thread-dependent
//!
//! A read at a thread-dependent address is dependent through its address
//! (the `load` rule), whatever memory holds: lanes read different
//! elements, and nothing below makes elements alike (a barrier makes each
//! location hold one value for the block, not an array one value; after
//! `cache[tid] = tid` every element differs). At a uniform address the
//! lanes read one location; they may still read different values, since
//! lanes run at their own pace (independent thread scheduling keeps not
//! even a warp together): one lane may read before a write and another
//! after it. The values that differ are those of writes of dependent data
//! (a write of one value for all is not followed: the analysis, like
//! LLVM's, tracks data, not the timing of a uniform update). So a read at
//! a uniform address is dependent when a dependent write to a location it
//! may alias *may run while the read does*, in another thread or the same
//! — and only then. Three facts decide that (`visible` applies them, with
//! `memory::phases`):
//!
//! 1. **Constant memory is read-only.** No store, atomic or asm of a
//!    kernel can change `__constant__` memory (the host writes it before
//!    the launch), so a read from `addrspace(4)`, or through a generic
//!    pointer traced to it, has the dependence of its address alone.
//! 2. **Order.** A write can only reach a read that can run after it.
//!    A barrier orders the threads of a block: everything before it in
//!    every thread happens before anything after it in any thread. So a
//!    write and a read a barrier apart on every path, both ways round
//!    (the next iteration's write comes after this iteration's read), and
//!    not split by a branch threads may take differently, never meet.
//!    For shared memory the barriers are the block's; global (and
//!    unknown) memory is written by other blocks too, which no block
//!    barrier orders, so there only the grid barrier counts.
//! 3. **Broadcast.** Once a barrier is passed, a shared location holds one
//!    value for the whole block: every write before the barrier, in every
//!    thread, is complete and visible (`bar.sync` orders memory for the
//!    block), racing writes to one word leave one of their values, and
//!    nothing can change it until a write in the read's own phase. A
//!    uniform read then returns that value to every lane: `cache[0]` after
//!    a cooperative fill, `total` after block-wide `atomicAdd`s, a flag
//!    written by thread 0. It stays dependent when any write that may
//!    alias it can run in the same phase: before the read (no barrier
//!    between), after it (another thread ahead, or the next iteration
//!    round a loop), on the other side of a branch, or as an atomic or a
//!    `volatile` store: these are writes like any other, and run in a
//!    phase like any other (a `volatile` read is a read like any other).
//!    Warp-level synchronisation (`__syncwarp`, shuffles, votes) holds one
//!    warp only, and a barrier with a thread count only that many threads:
//!    the other threads run on and may write meanwhile, so neither is a
//!    barrier here (nor the unaligned `barrier.sync`); and a barrier that
//!    a branch differing between lanes lets some threads skip is paired
//!    with the one they meet instead (see `memory::phases`).
//!
//! A write is in the phase of its instruction, except one that lands
//! later: an asynchronous copy (`cp.async`) completes at a wait, and code
//! no analysis sees into may start one; those may meet any read.
//!
//! Which writes may reach which locations: a location is a space and the
//! objects a pointer may point into (`memory::Pointer`). A `phi` or
//! `select` of two arrays writes one of them, not every array; a pointer
//! loaded from memory points to shared memory only if the kernel stored a
//! shared address somewhere (`memory::escape`: the host never makes one),
//! so a store through a table of pointers in `__constant__` memory writes
//! global memory.
//!
//! What is assumed: that every thread of a block reaches a branch that
//! decides which barrier comes next the same way, unless thread dependence
//! shows otherwise (see `memory::phases`); that kernel parameters do not
//! point into each other's buffers (as everywhere in warpcheck); and, for
//! global memory, nothing about other blocks but what the grid barrier
//! orders.
//!
//! The dependence itself is the rounds' (see `super`): a round finds the
//! dependent writes and branches, the next knows more reads to be
//! dependent, until nothing changes.

use super::layout::{Node, Proc};
use crate::dataflow::FastMap;
use crate::ir::InstId;
use crate::memory::{Origin, Pointer, Root, Space};

/// The location(s) an address may denote, as indices into [`Locations`].
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Target {
    pub per_thread: Option<u32>,
    pub shared: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Locations {
    per_thread: Vec<Root>,
    /// A space and the objects in it (sorted; `Root::Unknown` for any).
    shared: Vec<(Space, Vec<Root>)>,
    per_thread_index: FastMap<Root, u32>,
    shared_index: FastMap<(Space, Vec<Root>), u32>,
}

impl Locations {
    /// The locations behind a pointer with origin `o`.
    pub fn target(&mut self, o: Origin) -> Target {
        self.pointer_target(&Pointer::from(o))
    }

    /// The locations behind pointer `p`. One that may point anywhere but
    /// to shared memory (loaded from memory no shared address reached)
    /// writes global memory, or per-thread memory.
    pub fn pointer_target(&mut self, p: &Pointer) -> Target {
        let o = p.origin;
        let all = |kind: fn(&Root) -> bool| p.roots.iter().all(kind);
        let local = all(|r| matches!(r, Root::Alloca(..))) || o.space == Space::Local;
        let shared_space = matches!(o.space, Space::Global | Space::Shared | Space::Constant);
        let shared_root = all(|r| matches!(r, Root::KernelParam(_) | Root::Global(_)));
        match (local, shared_space || shared_root) {
            (true, _) => Target {
                per_thread: Some(self.per_thread_loc(o.root)),
                shared: None,
            },
            (false, true) => Target {
                per_thread: None,
                shared: Some(self.shared_loc(o.space, &p.roots)),
            },
            (false, false) => {
                let space = if p.shared {
                    Space::Unknown
                } else {
                    Space::Global
                };
                Target {
                    per_thread: Some(self.per_thread_loc(Root::Unknown)),
                    shared: Some(self.shared_loc(space, &p.roots)),
                }
            }
        }
    }

    fn per_thread_loc(&mut self, root: Root) -> u32 {
        let next = self.per_thread.len() as u32;
        *self.per_thread_index.entry(root).or_insert_with(|| {
            self.per_thread.push(root);
            next
        })
    }

    fn shared_loc(&mut self, space: Space, roots: &[Root]) -> u32 {
        let next = self.shared.len() as u32;
        let key = (space, roots.to_vec());
        *self.shared_index.entry(key).or_insert_with_key(|key| {
            self.shared.push(key.clone());
            next
        })
    }

    pub fn per_thread_count(&self) -> usize {
        self.per_thread.len()
    }

    pub fn shared_count(&self) -> usize {
        self.shared.len()
    }

    pub fn per_thread_root(&self, l: u32) -> Root {
        self.per_thread[l as usize]
    }

    /// The space shared location `l` is in.
    pub fn shared_space(&self, l: u32) -> Space {
        self.shared[l as usize].0
    }

    /// Whether two per-thread locations may overlap.
    pub fn per_thread_alias(&self, a: u32, b: u32) -> bool {
        let (x, y) = (self.per_thread[a as usize], self.per_thread[b as usize]);
        x == y || x == Root::Unknown || y == Root::Unknown
    }

    /// Whether two shared locations may overlap.
    pub fn shared_alias(&self, a: u32, b: u32) -> bool {
        let ((sx, rx), (sy, ry)) = (&self.shared[a as usize], &self.shared[b as usize]);
        let space = sx == sy || *sx == Space::Unknown || *sy == Space::Unknown;
        let any = |r: &[Root]| r.contains(&Root::Unknown);
        space && (any(rx) || any(ry) || rx.iter().any(|r| ry.contains(r)))
    }
}

/// Reads of shared locations found to observe dependent data in earlier
/// rounds.
#[derive(Clone, Debug, Default)]
pub struct SharedTaint {
    /// Per read (its node, the location read): the dependent write it
    /// may observe.
    seen: FastMap<(Node, u32), (Proc, InstId)>,
}

impl SharedTaint {
    /// Records that the read of `loc` at `n` observes the write `cause`;
    /// whether that is new.
    pub fn add(&mut self, n: Node, loc: u32, cause: (Proc, InstId)) -> bool {
        let fresh = !self.seen.contains_key(&(n, loc));
        self.seen.entry((n, loc)).or_insert(cause);
        fresh
    }

    /// The dependent write the read of `loc` at `n` may observe.
    pub fn cause(&self, n: Node, loc: u32) -> Option<(Proc, InstId)> {
        self.seen.get(&(n, loc)).copied()
    }

    pub fn sees(&self, n: Node, loc: u32) -> bool {
        self.seen.contains_key(&(n, loc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{FuncId, GlobalId};

    fn origin(space: Space, root: Root) -> Origin {
        Origin { space, root }
    }

    #[test]
    fn classify_and_alias() {
        let mut l = Locations::default();
        let a = l.target(origin(Space::Local, Root::Alloca(FuncId(0), InstId(1))));
        let a2 = l.target(origin(Space::Unknown, Root::Alloca(FuncId(0), InstId(1))));
        assert_eq!(
            a, a2,
            "an alloca root is per-thread whatever the space says"
        );
        assert!(a.shared.is_none());
        let s = l.target(origin(Space::Shared, Root::Global(GlobalId(0))));
        let g = l.target(origin(Space::Global, Root::KernelParam(0)));
        assert!(s.per_thread.is_none() && g.per_thread.is_none());
        assert!(!l.shared_alias(s.shared.unwrap(), g.shared.unwrap()));
        let unknown = l.target(Origin::UNKNOWN);
        let (up, us) = (unknown.per_thread.unwrap(), unknown.shared.unwrap());
        assert!(l.per_thread_alias(up, a.per_thread.unwrap()));
        assert!(l.shared_alias(us, s.shared.unwrap()) && l.shared_alias(us, g.shared.unwrap()));
        let other = l.target(origin(Space::Local, Root::Alloca(FuncId(0), InstId(2))));
        // A choice of two shared arrays aliases each, not a third; a
        // pointer that cannot be shared aliases global memory only.
        let (g1, g2, g3) = (
            Root::Global(GlobalId(1)),
            Root::Global(GlobalId(2)),
            Root::Global(GlobalId(3)),
        );
        let either = Pointer {
            origin: origin(Space::Shared, Root::Unknown),
            roots: vec![g1, g2],
            shared: true,
        };
        let either = l.pointer_target(&either).shared.unwrap();
        let one = l.target(origin(Space::Shared, g2)).shared.unwrap();
        let third = l.target(origin(Space::Shared, g3)).shared.unwrap();
        assert!(l.shared_alias(either, one) && !l.shared_alias(either, third));
        let global_only = Pointer {
            shared: false,
            ..Pointer::from(Origin::UNKNOWN)
        };
        let global_only = l.pointer_target(&global_only).shared.unwrap();
        assert!(
            !l.shared_alias(global_only, third) && l.shared_alias(global_only, g.shared.unwrap())
        );
        assert!(!l.per_thread_alias(other.per_thread.unwrap(), a.per_thread.unwrap()));
        assert_eq!(l.per_thread_count(), 3);
    }
}
