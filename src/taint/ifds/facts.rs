//! The fact domain of the thread-dependence problem, packed into `u32`s so
//! the solver's tables stay small.
//!
//! * `Λ` (zero): the program point is reached.
//! * `Value(p, v)`: SSA value `v` (an instruction or parameter of
//!   procedure `p`) may differ between the lanes of a warp here.
//! * `PerThread(l)`: per-thread (local) memory location `l` may hold
//!   different contents in different lanes here.
//! * `SharedWrite(l)`: the previous instruction wrote lane-dependent data
//!   to memory location `l` shared between threads (shared or global
//!   memory). It lives for one step; the analysis collects these, and
//!   the next round makes dependent the reads that may run while such a
//!   write does (see `super` and `memory`).
//! * `Masked`: the current procedure runs with only part of the warp, so
//!   its writes to its callers' per-thread memory make lanes differ.

use super::layout::Proc;
use crate::ir::{InstId, Value};

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Fact(u32);

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FactKind {
    Zero,
    Masked,
    Value(Proc, Value),
    PerThread(u32),
    SharedWrite(u32),
}

/// The numbering of facts for one kernel.
#[derive(Clone, Debug)]
pub struct FactSpace {
    /// Per procedure: the first value fact; its parameters come first,
    /// then its instructions.
    value_base: Vec<u32>,
    params: Vec<u32>,
    per_thread_base: u32,
    shared_base: u32,
    end: u32,
}

const ZERO: u32 = 0;
const MASKED: u32 = 1;

impl FactSpace {
    /// `sizes[p]` is `(parameters, instructions)` of procedure `p`.
    pub fn new(sizes: &[(usize, usize)], per_thread: usize, shared: usize) -> Self {
        let mut next = 2u32;
        let mut value_base = Vec::with_capacity(sizes.len());
        let mut params = Vec::with_capacity(sizes.len());
        for &(np, ni) in sizes {
            value_base.push(next);
            params.push(np as u32);
            next += (np + ni) as u32;
        }
        let per_thread_base = next;
        let shared_base = per_thread_base + per_thread as u32;
        FactSpace {
            value_base,
            params,
            per_thread_base,
            shared_base,
            end: shared_base + shared as u32,
        }
    }

    pub fn zero() -> Fact {
        Fact(ZERO)
    }

    pub fn masked() -> Fact {
        Fact(MASKED)
    }

    /// The fact for an instruction or parameter; `None` for constants,
    /// globals and other operands that are always uniform.
    pub fn value(&self, p: Proc, v: Value) -> Option<Fact> {
        let base = self.value_base[p as usize];
        match v {
            Value::Arg(a) => Some(Fact(base + a)),
            Value::Inst(i) => Some(Fact(base + self.params[p as usize] + i.0)),
            _ => None,
        }
    }

    pub fn inst(&self, p: Proc, i: InstId) -> Fact {
        Fact(self.value_base[p as usize] + self.params[p as usize] + i.0)
    }

    pub fn per_thread(&self, loc: u32) -> Fact {
        Fact(self.per_thread_base + loc)
    }

    pub fn shared_write(&self, loc: u32) -> Fact {
        Fact(self.shared_base + loc)
    }

    pub fn decode(&self, f: Fact) -> FactKind {
        let id = f.0;
        debug_assert!(id < self.end, "fact {id} out of range");
        match id {
            ZERO => FactKind::Zero,
            MASKED => FactKind::Masked,
            _ if id >= self.shared_base => FactKind::SharedWrite(id - self.shared_base),
            _ if id >= self.per_thread_base => FactKind::PerThread(id - self.per_thread_base),
            _ => {
                let p = self.value_base.partition_point(|&b| b <= id) - 1;
                let offset = id - self.value_base[p];
                let np = self.params[p];
                let v = if offset < np {
                    Value::Arg(offset)
                } else {
                    Value::Inst(InstId(offset - np))
                };
                FactKind::Value(p as Proc, v)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips() {
        // Procedure 0: 2 params, 3 insts; procedure 1: 0 params, 4 insts.
        let s = FactSpace::new(&[(2, 3), (0, 4)], 2, 3);
        let cases = [
            FactKind::Zero,
            FactKind::Masked,
            FactKind::Value(0, Value::Arg(1)),
            FactKind::Value(0, Value::Inst(InstId(2))),
            FactKind::Value(1, Value::Inst(InstId(0))),
            FactKind::Value(1, Value::Inst(InstId(3))),
            FactKind::PerThread(1),
            FactKind::SharedWrite(2),
        ];
        for k in cases {
            let f = match k {
                FactKind::Zero => FactSpace::zero(),
                FactKind::Masked => FactSpace::masked(),
                FactKind::Value(p, v) => s.value(p, v).unwrap(),
                FactKind::PerThread(l) => s.per_thread(l),
                FactKind::SharedWrite(l) => s.shared_write(l),
            };
            assert_eq!(s.decode(f), k);
        }
        assert_eq!(s.value(0, Value::Opaque), None);
        assert_eq!(
            s.inst(1, InstId(3)),
            s.value(1, Value::Inst(InstId(3))).unwrap()
        );
    }
}
