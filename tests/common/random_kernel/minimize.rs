//! Shrinks a failing program by hand-written steps, which cut much
//! deeper than proptest's generic shrinking of a recursive tree: drop a
//! statement, put an if's or a loop's body in its place, replace an
//! expression by one of its operands or by 0, empty a device function.
//! Greedy: the first smaller variant that still fails is kept, until none
//! does or the budget of tries is spent.

use super::ast::*;

/// The smallest program found that still satisfies `fails`, trying at
/// most `budget` variants.
pub fn minimize(p: &Program, budget: usize, mut fails: impl FnMut(&Program) -> bool) -> Program {
    let mut best = p.clone();
    let mut tries = 0;
    'outer: loop {
        for v in program_variants(&best) {
            if tries == budget {
                break 'outer;
            }
            tries += 1;
            if fails(&v) {
                best = v;
                continue 'outer;
            }
        }
        break;
    }
    best
}

fn program_variants(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    if !p.funcs.is_empty() {
        let mut q = p.clone();
        q.funcs.pop();
        out.push(q);
    }
    for body in stmts_variants(&p.body) {
        out.push(Program { body, ..p.clone() });
    }
    for (i, f) in p.funcs.iter().enumerate() {
        for body in stmts_variants(&f.body) {
            let mut q = p.clone();
            q.funcs[i].body = body;
            out.push(q);
        }
        for ret in expr_variants(&f.ret) {
            let mut q = p.clone();
            q.funcs[i].ret = ret;
            out.push(q);
        }
    }
    for (i, e) in p.init.iter().enumerate() {
        for init in expr_variants(e) {
            let mut q = p.clone();
            q.init[i] = init;
            out.push(q);
        }
    }
    out
}

/// `v` with statement `i` replaced by `with`.
fn splice(v: &[Stmt], i: usize, with: &[Stmt]) -> Vec<Stmt> {
    let mut out = v[..i].to_vec();
    out.extend_from_slice(with);
    out.extend_from_slice(&v[i + 1..]);
    out
}

fn stmts_variants(v: &[Stmt]) -> Vec<Vec<Stmt>> {
    let mut out = Vec::new();
    for i in 0..v.len() {
        out.push(splice(v, i, &[]));
        match &v[i] {
            Stmt::If(_, t, e) => {
                out.push(splice(v, i, t));
                out.push(splice(v, i, e));
            }
            Stmt::Loop(_, _, body) => out.push(splice(v, i, body)),
            _ => {}
        }
    }
    for (i, s) in v.iter().enumerate() {
        for s in stmt_variants(s) {
            out.push(splice(v, i, &[s]));
        }
    }
    out
}

fn stmt_variants(s: &Stmt) -> Vec<Stmt> {
    let mut out = Vec::new();
    match s {
        Stmt::Assign(x, e) => {
            out.extend(expr_variants(e).into_iter().map(|e| Stmt::Assign(*x, e)));
        }
        Stmt::Store(a, e) | Stmt::AtomicAdd(a, e) => {
            let make = |a: Access, e: Expr| match s {
                Stmt::Store(..) => Stmt::Store(a, e),
                _ => Stmt::AtomicAdd(a, e),
            };
            if matches!(s, Stmt::AtomicAdd(..)) {
                out.push(Stmt::Store(a.clone(), e.clone()));
            }
            out.extend(access_variants(a).into_iter().map(|a| make(a, e.clone())));
            out.extend(expr_variants(e).into_iter().map(|e| make(a.clone(), e)));
        }
        Stmt::If(c, t, e) => {
            out.extend(
                cond_variants(c)
                    .into_iter()
                    .map(|c| Stmt::If(c, t.clone(), e.clone())),
            );
            out.extend(
                stmts_variants(t)
                    .into_iter()
                    .map(|t| Stmt::If(c.clone(), t, e.clone())),
            );
            out.extend(
                stmts_variants(e)
                    .into_iter()
                    .map(|e| Stmt::If(c.clone(), t.clone(), e)),
            );
        }
        Stmt::Loop(shape, b, body) => {
            out.extend(
                expr_variants(b)
                    .into_iter()
                    .map(|b| Stmt::Loop(*shape, b, body.clone())),
            );
            out.extend(
                stmts_variants(body)
                    .into_iter()
                    .map(|body| Stmt::Loop(*shape, b.clone(), body)),
            );
        }
        Stmt::BreakIf(c) => out.extend(cond_variants(c).into_iter().map(Stmt::BreakIf)),
        Stmt::Barrier => {}
        Stmt::Share(shape, v, k, e) => {
            let make = |k: Expr, e: Expr| Stmt::Share(*shape, *v, k, e);
            out.extend(expr_variants(k).into_iter().map(|k| make(k, e.clone())));
            out.extend(expr_variants(e).into_iter().map(|e| make(k.clone(), e)));
        }
        Stmt::VecStore(a, e) => {
            let make = |a: VecAccess, e: Expr| Stmt::VecStore(a, e);
            out.extend(vec_variants(a).into_iter().map(|a| make(a, e.clone())));
            out.extend(expr_variants(e).into_iter().map(|e| make(a.clone(), e)));
        }
    }
    out
}

fn cond_variants(c: &Cond) -> Vec<Cond> {
    let mut out: Vec<Cond> = expr_variants(&c.a)
        .into_iter()
        .map(|a| Cond { a, ..c.clone() })
        .collect();
    out.extend(
        expr_variants(&c.b)
            .into_iter()
            .map(|b| Cond { b, ..c.clone() }),
    );
    out
}

fn access_variants(a: &Access) -> Vec<Access> {
    let mut out = Vec::new();
    if a.width != Width::W4 {
        out.push(Access {
            width: Width::W4,
            ..a.clone()
        });
    }
    out.extend(
        expr_variants(&a.index)
            .into_iter()
            .map(|index| Access { index, ..a.clone() }),
    );
    if a.buf == Buf::Tile {
        out.extend(
            expr_variants(&a.col)
                .into_iter()
                .map(|col| Access { col, ..a.clone() }),
        );
    }
    out
}

/// Simpler vector accesses: fewer fields, the plain shape, the index's
/// variants.
fn vec_variants(a: &VecAccess) -> Vec<VecAccess> {
    let mut out = Vec::new();
    let mut push = |b: VecAccess| {
        if b != *a {
            out.push(b);
        }
    };
    push(VecAccess {
        skip: None,
        ..a.clone()
    });
    push(VecAccess {
        reversed: false,
        ..a.clone()
    });
    push(VecAccess {
        fields: false,
        ..a.clone()
    });
    push(VecAccess {
        lanes: 2,
        ..a.clone()
    });
    push(VecAccess {
        align_shift: 0,
        ..a.clone()
    });
    out.extend(
        expr_variants(&a.index)
            .into_iter()
            .map(|index| VecAccess { index, ..a.clone() }),
    );
    out
}

const ZERO: Expr = Expr::Leaf(Leaf::Const(0));

/// Smaller expressions: 0, each operand, then each operand simplified.
fn expr_variants(e: &Expr) -> Vec<Expr> {
    let b = |x: &Expr| Box::new(x.clone());
    let mut out = Vec::new();
    if *e != ZERO {
        out.push(ZERO);
    }
    match e {
        Expr::Leaf(_) => {}
        Expr::Bin(op, x, y) => {
            out.extend([(**x).clone(), (**y).clone()]);
            out.extend(
                expr_variants(x)
                    .into_iter()
                    .map(|x| Expr::Bin(*op, Box::new(x), b(y))),
            );
            out.extend(
                expr_variants(y)
                    .into_iter()
                    .map(|y| Expr::Bin(*op, b(x), Box::new(y))),
            );
        }
        Expr::Shift(op, x, k) => {
            out.push((**x).clone());
            out.extend(
                expr_variants(x)
                    .into_iter()
                    .map(|x| Expr::Shift(*op, Box::new(x), *k)),
            );
        }
        Expr::Div(op, x, d) => {
            out.push((**x).clone());
            out.extend(
                expr_variants(x)
                    .into_iter()
                    .map(|x| Expr::Div(*op, Box::new(x), *d)),
            );
        }
        Expr::Select(c, x, y) => {
            out.extend([(**x).clone(), (**y).clone()]);
            out.extend(
                cond_variants(c)
                    .into_iter()
                    .map(|c| Expr::Select(Box::new(c), b(x), b(y))),
            );
            out.extend(
                expr_variants(x)
                    .into_iter()
                    .map(|x| Expr::Select(c.clone(), Box::new(x), b(y))),
            );
            out.extend(
                expr_variants(y)
                    .into_iter()
                    .map(|y| Expr::Select(c.clone(), b(x), Box::new(y))),
            );
        }
        Expr::Load(a) => {
            out.push(a.index.clone());
            out.extend(
                access_variants(a)
                    .into_iter()
                    .map(|a| Expr::Load(Box::new(a))),
            );
        }
        Expr::Shfl(m, v, l) => {
            out.push((**v).clone());
            out.extend(
                expr_variants(v)
                    .into_iter()
                    .map(|v| Expr::Shfl(*m, Box::new(v), b(l))),
            );
            out.extend(
                expr_variants(l)
                    .into_iter()
                    .map(|l| Expr::Shfl(*m, b(v), Box::new(l))),
            );
        }
        Expr::Vote(m, c) => {
            out.push(c.a.clone());
            out.extend(
                cond_variants(c)
                    .into_iter()
                    .map(|c| Expr::Vote(*m, Box::new(c))),
            );
        }
        Expr::VecLoad(a) => {
            out.push(a.index.clone());
            out.extend(
                vec_variants(a)
                    .into_iter()
                    .map(|a| Expr::VecLoad(Box::new(a))),
            );
        }
        Expr::Call(g, x, y, p) => {
            out.extend([(**x).clone(), (**y).clone()]);
            out.extend(
                expr_variants(x)
                    .into_iter()
                    .map(|x| Expr::Call(*g, Box::new(x), b(y), *p)),
            );
            out.extend(
                expr_variants(y)
                    .into_iter()
                    .map(|y| Expr::Call(*g, b(x), Box::new(y), *p)),
            );
        }
    }
    out
}
