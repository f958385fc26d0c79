//! Expressions as text: `[p] + 4·tid.x + 1024·[ctaid.x]`, for `--explain`,
//! the JSON report and tests.

use super::expr::*;
use crate::ir::intrinsics::Dim;
use crate::ir::{Module, Value};

/// Names leaves: the module and the kernel whose parameters `[p]` are.
#[derive(Copy, Clone)]
pub struct Names<'a> {
    pub m: &'a Module,
    pub kernel: crate::ir::FuncId,
}

/// Renders `e`.
pub fn render(arena: &Arena, n: Names<'_>, e: ExprId) -> String {
    poly(arena, n, arena.poly(e))
}

pub fn poly(arena: &Arena, n: Names<'_>, p: &Poly) -> String {
    if p.terms.is_empty() {
        return "0".into();
    }
    let mut out = String::new();
    for (i, (mono, c)) in p.terms.iter().enumerate() {
        let neg = *c < 0;
        if i > 0 {
            out.push_str(if neg { " - " } else { " + " });
        } else if neg {
            out.push('-');
        }
        let k = c.unsigned_abs();
        let factors: Vec<String> = mono.iter().map(|&a| atom(arena, n, a)).collect();
        match (k, factors.is_empty()) {
            (_, true) => out.push_str(&k.to_string()),
            (1, false) => out.push_str(&factors.join("·")),
            _ => out.push_str(&format!("{k}·{}", factors.join("·"))),
        }
    }
    out
}

fn dim(d: Dim) -> &'static str {
    match d {
        Dim::X => "x",
        Dim::Y => "y",
        Dim::Z => "z",
    }
}

/// A value's source label, in parentheses when it is a description
/// (`the load at line 23`) so that it reads as one term.
fn value(m: &Module, f: crate::ir::FuncId, v: Value) -> String {
    let label = m.value_label(m.func(f), v);
    if label.contains(' ') {
        format!("({label})")
    } else {
        label
    }
}

pub fn atom(arena: &Arena, n: Names<'_>, a: AtomId) -> String {
    let m = n.m;
    let args = |xs: &[ExprId]| -> Vec<String> { xs.iter().map(|&e| render(arena, n, e)).collect() };
    match arena.atom(a) {
        Atom::Tid(d) => format!("tid.{}", dim(*d)),
        Atom::LaneId => "laneid".into(),
        Atom::Opaque(c, v) => format!("?{}", value(m, arena.func_of(*c), *v)),
        Atom::Pending(c, i) => format!("@{}", value(m, arena.func_of(*c), Value::Inst(*i))),
        Atom::Op(op, xs) => op_text(*op, &args(xs)),
        Atom::Uniform(u) => match u {
            Uniform::Param(i, _) => format!("[{}]", value(m, n.kernel, Value::Arg(*i))),
            Uniform::BlockIdx(d) => format!("[ctaid.{}]", dim(*d)),
            Uniform::GridDim(d) => format!("[nctaid.{}]", dim(*d)),
            Uniform::BlockDim(d) => format!("[ntid.{}]", dim(*d)),
            Uniform::Global(g) => format!("[{}]", m.global_label(*g)),
            Uniform::LoopPhi(c, i) => format!("[{}]", value(m, arena.func_of(*c), Value::Inst(*i))),
            Uniform::Value(c, v) => format!("[{}]", value(m, arena.func_of(*c), *v)),
            Uniform::Op(op, xs) => format!("[{}]", op_text(*op, &args(xs))),
        },
    }
}

fn op_text(op: Op, a: &[String]) -> String {
    let bin = |s: &str| format!("({} {s} {})", a[0], a[1]);
    match op {
        Op::Div(_) => bin("/"),
        Op::Rem(_) => bin("%"),
        Op::And => bin("&"),
        Op::Or => bin("|"),
        Op::Xor => bin("^"),
        Op::Shl => bin("<<"),
        Op::Cmp(p) => bin(cmp_text(p)),
        Op::Select => format!("({} ? {} : {})", a[0], a[1], a[2]),
        Op::Min { .. } => format!("min({}, {})", a[0], a[1]),
        Op::Max { .. } => format!("max({}, {})", a[0], a[1]),
    }
}

fn cmp_text(p: crate::ir::IntPred) -> &'static str {
    use crate::ir::IntPred::*;
    match p {
        Eq => "==",
        Ne => "!=",
        Ugt | Sgt => ">",
        Uge | Sge => ">=",
        Ult | Slt => "<",
        Ule | Sle => "<=",
    }
}
