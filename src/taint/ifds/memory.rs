//! Abstract memory locations.
//!
//! Memory is split by who can see it. *Per-thread* memory (an `alloca`,
//! local space) has one copy per lane: its facts are flow-sensitive, and a
//! lane's copy differs from its neighbours' once a lane-dependent value, a
//! lane-dependent address or lane-dependent control writes it. *Shared*
//! memory (`__shared__` arrays, global memory by base pointer, constants) is
//! one copy that every thread reads, so only writing lane-dependent *data*
//! makes it dependent: `if (tid == 0) s = x;` leaves `s` uniform. Other
//! warps may write it at any time, so a shared location once written with
//! dependent data counts as dependent everywhere in the kernel.
//!
//! Locations come from `memory::Spaces` origins: a pointer whose root is
//! unknown may alias every location of its kind, and one whose space is
//! unknown as well may be either kind.

use super::layout::Proc;
use crate::dataflow::FastMap;
use crate::ir::InstId;
use crate::memory::{Origin, Root, Space};

/// The location(s) an address may denote, as indices into [`Locations`].
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Target {
    pub per_thread: Option<u32>,
    pub shared: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Locations {
    per_thread: Vec<Root>,
    shared: Vec<(Space, Root)>,
    per_thread_index: FastMap<Root, u32>,
    shared_index: FastMap<(Space, Root), u32>,
}

impl Locations {
    /// The locations behind a pointer with origin `o`.
    pub fn target(&mut self, o: Origin) -> Target {
        let local = matches!(o.root, Root::Alloca(..)) || o.space == Space::Local;
        let shared_space = matches!(o.space, Space::Global | Space::Shared | Space::Constant);
        let shared_root = matches!(o.root, Root::KernelParam(_) | Root::Global(_));
        match (local, shared_space || shared_root) {
            (true, _) => Target {
                per_thread: Some(self.per_thread_loc(o.root)),
                shared: None,
            },
            (false, true) => Target {
                per_thread: None,
                shared: Some(self.shared_loc(o.space, o.root)),
            },
            (false, false) => Target {
                per_thread: Some(self.per_thread_loc(Root::Unknown)),
                shared: Some(self.shared_loc(Space::Unknown, Root::Unknown)),
            },
        }
    }

    fn per_thread_loc(&mut self, root: Root) -> u32 {
        let next = self.per_thread.len() as u32;
        *self.per_thread_index.entry(root).or_insert_with(|| {
            self.per_thread.push(root);
            next
        })
    }

    fn shared_loc(&mut self, space: Space, root: Root) -> u32 {
        let next = self.shared.len() as u32;
        *self.shared_index.entry((space, root)).or_insert_with(|| {
            self.shared.push((space, root));
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

    /// Whether two per-thread locations may overlap.
    pub fn per_thread_alias(&self, a: u32, b: u32) -> bool {
        let (x, y) = (self.per_thread[a as usize], self.per_thread[b as usize]);
        x == y || x == Root::Unknown || y == Root::Unknown
    }

    /// Whether two shared locations may overlap.
    pub fn shared_alias(&self, a: u32, b: u32) -> bool {
        let ((sx, rx), (sy, ry)) = (self.shared[a as usize], self.shared[b as usize]);
        let space = sx == sy || sx == Space::Unknown || sy == Space::Unknown;
        let root = rx == ry || rx == Root::Unknown || ry == Root::Unknown;
        space && root
    }
}

/// Shared locations known to hold dependent data, from earlier rounds.
#[derive(Clone, Debug, Default)]
pub struct SharedTaint {
    /// Per shared location: the write that made it dependent.
    causes: Vec<Option<(Proc, InstId)>>,
    /// Per shared location: whether it may overlap a dependent one.
    aliased: Vec<bool>,
}

impl SharedTaint {
    pub fn new(count: usize) -> Self {
        SharedTaint {
            causes: vec![None; count],
            aliased: vec![false; count],
        }
    }

    /// Records new dependent locations; whether any was new.
    pub fn add(&mut self, locs: &Locations, found: &[(u32, (Proc, InstId))]) -> bool {
        let mut changed = false;
        for &(loc, cause) in found {
            if self.causes[loc as usize].is_none() {
                self.causes[loc as usize] = Some(cause);
                changed = true;
            }
        }
        for (l, aliased) in self.aliased.iter_mut().enumerate() {
            *aliased = self
                .causes
                .iter()
                .enumerate()
                .any(|(t, c)| c.is_some() && locs.shared_alias(l as u32, t as u32));
        }
        changed
    }

    /// A dependent write a read of `loc` may observe.
    pub fn cause_for(&self, locs: &Locations, loc: u32) -> Option<(Proc, InstId)> {
        self.causes
            .iter()
            .enumerate()
            .find(|(t, c)| c.is_some() && locs.shared_alias(loc, *t as u32))
            .and_then(|(_, c)| *c)
    }

    pub fn aliased(&self, loc: u32) -> bool {
        self.aliased[loc as usize]
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
        assert!(!l.per_thread_alias(other.per_thread.unwrap(), a.per_thread.unwrap()));
        assert_eq!(l.per_thread_count(), 3);
    }
}
