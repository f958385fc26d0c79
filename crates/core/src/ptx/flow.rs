//! One forward pass over an asm body, shared by the views the analyses
//! take of it ([`super::summary`] for what values come from,
//! [`super::varies`] for what makes them differ between lanes): the body
//! is straight-line code, so one pass in order is the fixpoint.

use super::inst::{Inst, Operand, Reg};
use super::Body;
use std::collections::HashMap;

/// A value a pass keeps per register.
pub trait Join: Clone + Default {
    fn join(&mut self, other: &Self);
}

/// The state after a pass: each register's value.
pub struct Regs<T> {
    map: HashMap<Reg, T>,
}

impl<T: Join> Regs<T> {
    /// The value of a register operand (the default for immediates, sinks
    /// and special registers: the pass reads those itself).
    pub fn get(&self, o: Operand) -> T {
        match o {
            Operand::Reg(r) => self.map.get(&r).cloned().unwrap_or_default(),
            _ => T::default(),
        }
    }

    /// The value of operand `$n` after the body.
    pub fn arg(&self, n: u32) -> T {
        self.get(Operand::Reg(Reg::Arg(n)))
    }
}

/// Runs the body once. `start(k)` is the value of input `$k` (outputs
/// start as the input tied to them, or the default); `transfer(index,
/// inst, regs)` gives the value of each register the instruction writes,
/// in [`super::Op::writes`] order. Where a guard fails a register keeps
/// its old value, so a guarded write joins the guard's value and the old
/// one.
pub fn forward<T: Join>(
    body: &Body,
    start: impl Fn(u32) -> T,
    read_guard: impl Fn(&Regs<T>, Operand) -> T,
    mut transfer: impl FnMut(usize, &Inst, &Regs<T>) -> Vec<T>,
) -> Regs<T> {
    let c = &body.constraints;
    let mut regs = Regs {
        map: HashMap::new(),
    };
    for n in 0..c.operands.len() as u32 {
        let from = if c.is_output(n) {
            c.tied_input(n)
        } else {
            Some(n)
        };
        if let Some(k) = from {
            regs.map.insert(Reg::Arg(n), start(k));
        }
    }
    for (index, inst) in body.insts.iter().enumerate() {
        let guard = inst.guard.map(|g| read_guard(&regs, g.value));
        let values = transfer(index, inst, &regs);
        for (dst, mut value) in inst.op.writes().into_iter().zip(values) {
            let Operand::Reg(r) = dst else { continue };
            if let Some(g) = &guard {
                value.join(g);
                value.join(&regs.get(dst));
            }
            regs.map.insert(r, value);
        }
    }
    regs
}
