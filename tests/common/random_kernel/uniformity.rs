//! The generator's own, deliberately coarse, view of which values and
//! which control are the same across a block or a warp. It only decides
//! where a barrier (control uniform over the block) or a warp primitive
//! (every lane of the warp active) may go; the analysis under test is
//! never consulted. It must err towards `Thread`: a wrong `Block` makes
//! the simulator report barrier divergence, which fails the test.

use super::ast::*;

/// Over how many threads a value or the control is known to be one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Uni {
    /// The same in every thread of the block.
    Block,
    /// The same in the lanes of each warp (`tid / 32`).
    Warp,
    Thread,
}

/// The state at one point of a function: the variables' uniformity and
/// the control's.
#[derive(Clone, Debug)]
pub struct Scope {
    pub vars: [Uni; VARS],
    /// Enclosing loops' counters, innermost last.
    pub counters: Vec<Uni>,
    /// How uniform the conditions are that decide whether a thread is here.
    pub ctl: Uni,
    /// Conditional breaks taken so far in the innermost loop: they raise
    /// the control of everything after them up to the loop's end.
    breaks: Uni,
    /// Every value each variable held in the innermost loop so far (the
    /// values a break carries out of the loop).
    held: [Uni; VARS],
    /// The integer parameters: uniform in a kernel, anything the callers
    /// pass in a device function.
    params: Uni,
    /// Device functions (a kernel can call them all).
    pub funcs: usize,
}

/// The variables a statement list assigns anywhere inside it.
pub fn assigned(stmts: &[Stmt]) -> [bool; VARS] {
    let mut out = [false; VARS];
    fn walk(stmts: &[Stmt], out: &mut [bool; VARS]) {
        for s in stmts {
            match s {
                Stmt::Assign(v, _) | Stmt::Share(_, v, ..) => out[*v as usize % VARS] = true,
                Stmt::If(_, t, e) => {
                    walk(t, out);
                    walk(e, out);
                }
                Stmt::Loop(_, _, body) => walk(body, out),
                _ => {}
            }
        }
    }
    walk(stmts, &mut out);
    out
}

impl Scope {
    /// The entry of a kernel: uniform control, variables as initialised.
    pub fn kernel(p: &Program) -> Scope {
        let mut s = Scope {
            vars: [Uni::Block; VARS],
            counters: Vec::new(),
            ctl: Uni::Block,
            breaks: Uni::Block,
            held: [Uni::Block; VARS],
            params: Uni::Block,
            funcs: p.funcs.len(),
        };
        for (v, e) in p.init.iter().enumerate().take(VARS) {
            s.vars[v] = s.expr(e);
        }
        s.held = s.vars;
        s
    }

    /// A device function: nothing is known to be uniform.
    pub fn device(funcs: usize) -> Scope {
        Scope {
            vars: [Uni::Thread; VARS],
            counters: Vec::new(),
            ctl: Uni::Thread,
            breaks: Uni::Thread,
            held: [Uni::Thread; VARS],
            params: Uni::Thread,
            funcs,
        }
    }

    pub fn barrier_allowed(&self) -> bool {
        self.ctl == Uni::Block
    }

    pub fn warp_ops_allowed(&self) -> bool {
        self.ctl <= Uni::Warp
    }

    pub fn leaf(&self, l: Leaf) -> Uni {
        match l {
            Leaf::Const(_) | Leaf::Ntid(_) | Leaf::Ctaid(_) => Uni::Block,
            Leaf::Param(_) | Leaf::Small => self.params,
            Leaf::Warp => Uni::Warp,
            Leaf::Tid(_) | Leaf::LaneId | Leaf::Linear | Leaf::Lane => Uni::Thread,
            Leaf::Var(v) => self.vars[v as usize % VARS],
            Leaf::Counter(k) => self
                .counters
                .iter()
                .rev()
                .nth(k as usize % self.counters.len().max(1))
                .copied()
                .unwrap_or(Uni::Block),
        }
    }

    pub fn cond(&self, c: &Cond) -> Uni {
        self.expr(&c.a).max(self.expr(&c.b))
    }

    pub fn expr(&self, e: &Expr) -> Uni {
        match e {
            Expr::Leaf(l) => self.leaf(*l),
            Expr::Bin(_, a, b) => self.expr(a).max(self.expr(b)),
            Expr::Shift(_, a, _) | Expr::Div(_, a, _) => self.expr(a),
            Expr::Select(c, a, b) => self.cond(c).max(self.expr(a)).max(self.expr(b)),
            Expr::Load(_) | Expr::VecLoad(_) => Uni::Thread,
            Expr::Shfl(Shfl::Idx, _, l) if self.warp_ops_allowed() && self.expr(l) <= Uni::Warp => {
                Uni::Warp
            }
            Expr::Shfl(..) if self.warp_ops_allowed() => Uni::Thread,
            Expr::Shfl(_, v, _) => self.expr(v),
            Expr::Vote(..) if self.warp_ops_allowed() => Uni::Warp,
            Expr::Vote(_, c) => self.cond(c),
            Expr::Call(g, ..) if usize::from(*g) < self.funcs => Uni::Thread,
            Expr::Call(_, a, _, _) => self.expr(a),
        }
    }

    /// `v` takes a value read from memory: thread-dependent, to the
    /// generator (as every load).
    pub fn loaded(&mut self, v: u8) {
        self.assign(v, &Expr::Load(Box::new(shared_read())));
    }

    pub fn assign(&mut self, v: u8, e: &Expr) {
        let v = v as usize % VARS;
        self.vars[v] = self.expr(e);
        self.held[v] = self.held[v].max(self.vars[v]);
    }

    /// The scope of both arms of `if (c)`.
    pub fn enter_if(&self, c: &Cond) -> Scope {
        let mut inner = self.clone();
        inner.ctl = self.ctl.max(self.cond(c));
        inner
    }

    /// After the arms (`then`, `els`) of `if (c) t else e` join.
    pub fn leave_if(&mut self, c: &Cond, t: &[Stmt], e: &[Stmt], then: &Scope, els: &Scope) {
        let uc = self.cond(c);
        let (at, ae) = (assigned(t), assigned(e));
        for v in 0..VARS {
            if at[v] || ae[v] {
                self.vars[v] = then.vars[v].max(els.vars[v]).max(uc);
            }
            self.held[v] = then.held[v].max(els.held[v]).max(self.vars[v]);
        }
        self.breaks = then.breaks.max(els.breaks);
        self.ctl = self.ctl.max(self.breaks);
    }

    pub fn break_if(&mut self, c: &Cond) {
        if self.counters.is_empty() {
            return;
        }
        self.breaks = self.breaks.max(self.ctl).max(self.cond(c));
        self.ctl = self.ctl.max(self.breaks);
    }

    /// The scope at the top of the body of `for (c < bound) body`: a fixed
    /// point over the iterations. Returns it with the loop's exit control
    /// (a block-stride loop's counter starts at the thread's index).
    pub fn enter_loop(&self, shape: LoopShape, bound: &Expr, body: &[Stmt]) -> (Scope, Uni) {
        let mut exit = match shape {
            LoopShape::BlockStride => Uni::Thread,
            _ => self.expr(bound),
        };
        let mut top = self.clone();
        let changed = assigned(body);
        loop {
            let mut inner = top.clone();
            inner.ctl = self.ctl.max(exit);
            inner.breaks = Uni::Block;
            inner.held = inner.vars;
            inner.counters.push(exit);
            inner.block(body);
            let mut next = top.clone();
            for (v, _) in changed.iter().enumerate().filter(|(_, &c)| c) {
                next.vars[v] = top.vars[v].max(inner.held[v]).max(exit);
            }
            let next_exit = exit.max(inner.breaks);
            if next.vars == top.vars && next_exit == exit {
                let mut at_top = top;
                at_top.ctl = self.ctl.max(exit);
                at_top.breaks = Uni::Block;
                at_top.held = at_top.vars;
                at_top.counters.push(exit);
                return (at_top, exit);
            }
            top = next;
            exit = next_exit;
        }
    }

    /// After the loop whose body ended in `inner`: the values at the top
    /// and any a break carried out, joined with the exit's control.
    pub fn leave_loop(&mut self, body: &[Stmt], inner: &Scope, exit: Uni) {
        for (v, changed) in assigned(body).into_iter().enumerate() {
            if changed {
                self.vars[v] = self.vars[v].max(inner.held[v]).max(exit);
            }
            self.held[v] = self.held[v].max(self.vars[v]);
        }
    }

    /// The effect of a statement, for loops' fixed points.
    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(v, e) => self.assign(*v, e),
            Stmt::Store(..) | Stmt::AtomicAdd(..) | Stmt::VecStore(..) | Stmt::Barrier => {}
            // Read from memory: thread-dependent, to the generator.
            Stmt::Share(_, v, ..) => self.loaded(*v),
            Stmt::If(c, t, e) => {
                let (mut then, mut els) = (self.enter_if(c), self.enter_if(c));
                then.block(t);
                els.block(e);
                self.leave_if(c, t, e, &then, &els);
            }
            Stmt::Loop(shape, bound, body) => {
                let (mut inner, exit) = self.enter_loop(*shape, bound, body);
                inner.block(body);
                self.leave_loop(body, &inner, exit);
            }
            Stmt::BreakIf(c) => self.break_if(c),
        }
    }

    pub fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }
}

/// A read of `s[0]`.
fn shared_read() -> Access {
    Access {
        buf: Buf::Shared { generic: false },
        width: Width::W4,
        index: Expr::Leaf(Leaf::Const(0)),
        mask_bits: 0,
        col: Expr::Leaf(Leaf::Const(0)),
    }
}
