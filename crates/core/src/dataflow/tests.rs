//! The solver on a toy taint problem over a hand-made supergraph, so each
//! expectation can be checked against the paper's definitions by hand.
//!
//! Variables are single letters; `Fact::Var(c)` means "variable `c` may be
//! tainted". Each procedure uses its own letters.

use super::*;
use std::cell::Cell;

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum Fact {
    Zero,
    Var(char),
}

#[derive(Clone, Debug)]
enum Stmt {
    Nop,
    /// `dst = <source of taint>`
    Source(char),
    /// `dst = src` (`None`: a constant, which kills `dst`).
    Copy(char, Option<char>),
    /// `dst = callee(actual)`, binding the callee's `formal`.
    Call {
        dst: char,
        callee: u32,
        actual: char,
        formal: char,
    },
    /// `return v`.
    Return(char),
}

/// Node `i` is `nodes[i]`: its procedure, statement and successors.
struct Program {
    nodes: Vec<(u32, Stmt, Vec<u32>)>,
    starts: Vec<u32>,
}

impl Supergraph for Program {
    type Node = u32;
    type Proc = u32;

    fn proc_of(&self, n: u32) -> u32 {
        self.nodes[n as usize].0
    }

    fn start_of(&self, p: u32) -> u32 {
        self.starts[p as usize]
    }

    fn successors(&self, n: u32, out: &mut Vec<u32>) {
        out.extend(&self.nodes[n as usize].2);
    }

    fn callees(&self, n: u32, out: &mut Vec<u32>) {
        if let Stmt::Call { callee, .. } = self.nodes[n as usize].1 {
            out.push(callee);
        }
    }

    fn is_exit(&self, n: u32) -> bool {
        matches!(self.nodes[n as usize].1, Stmt::Return(_))
    }
}

struct Taint {
    program: Program,
    /// How many times a normal flow function ran, per node.
    visits: Vec<Cell<u32>>,
    /// A source learnt late: `Λ` at this node generates this variable.
    late_source: Cell<Option<(u32, char)>>,
}

impl Taint {
    fn new(program: Program) -> Self {
        let visits = program.nodes.iter().map(|_| Cell::new(0)).collect();
        Taint {
            program,
            visits,
            late_source: Cell::new(None),
        }
    }

    fn stmt(&self, n: u32) -> &Stmt {
        &self.program.nodes[n as usize].1
    }
}

impl IfdsProblem for Taint {
    type Graph = Program;
    type Fact = Fact;

    fn graph(&self) -> &Program {
        &self.program
    }

    fn zero(&self) -> Fact {
        Fact::Zero
    }

    fn entry_points(&self) -> Vec<u32> {
        vec![self.program.starts[0]]
    }

    fn normal_flow(&self, n: u32, _succ: u32, d: Fact, out: &mut Vec<Fact>) {
        let visits = &self.visits[n as usize];
        visits.set(visits.get() + 1);
        if let (Some((at, v)), Fact::Zero) = (self.late_source.get(), d) {
            if at == n {
                out.push(Fact::Var(v));
            }
        }
        match (self.stmt(n), d) {
            (Stmt::Source(dst), Fact::Zero) => out.push(Fact::Var(*dst)),
            (Stmt::Source(dst) | Stmt::Copy(dst, _), Fact::Var(v)) if v == *dst => {}
            (Stmt::Copy(dst, Some(src)), Fact::Var(v)) if v == *src => {
                out.extend([d, Fact::Var(*dst)]);
            }
            (_, Fact::Var(_)) => out.push(d),
            (_, Fact::Zero) => {}
        }
    }

    fn call_flow(&self, call: u32, _callee: u32, d: Fact, out: &mut Vec<Fact>) {
        if let (Stmt::Call { actual, formal, .. }, Fact::Var(v)) = (self.stmt(call), d) {
            if v == *actual {
                out.push(Fact::Var(*formal));
            }
        }
    }

    fn return_flow(
        &self,
        call: u32,
        _callee: u32,
        exit: u32,
        _ret_site: u32,
        d: Fact,
        out: &mut Vec<Fact>,
    ) {
        if let (Stmt::Call { dst, .. }, Stmt::Return(r), Fact::Var(v)) =
            (self.stmt(call), self.stmt(exit), d)
        {
            if v == *r {
                out.push(Fact::Var(*dst));
            }
        }
    }

    fn call_to_return_flow(&self, call: u32, _ret_site: u32, d: Fact, out: &mut Vec<Fact>) {
        if let (Stmt::Call { dst, .. }, Fact::Var(v)) = (self.stmt(call), d) {
            if v != *dst {
                out.push(d);
            }
        }
    }
}

fn call(dst: char, callee: u32, actual: char, formal: char) -> Stmt {
    Stmt::Call {
        dst,
        callee,
        actual,
        formal,
    }
}

/// `main` calls `id` twice, once with a tainted and once with a clean
/// argument:
///
/// ```text
/// main: 0 nop; 1 a = src; 2 r = id(a); 3 b = 0; 4 s = id(b); 5 return r
/// id:   6 nop; 7 y = x; 8 return y
/// ```
fn two_calls() -> Program {
    Program {
        nodes: vec![
            (0, Stmt::Nop, vec![1]),
            (0, Stmt::Source('a'), vec![2]),
            (0, call('r', 1, 'a', 'x'), vec![3]),
            (0, Stmt::Copy('b', None), vec![4]),
            (0, call('s', 1, 'b', 'x'), vec![5]),
            (0, Stmt::Return('r'), vec![]),
            (1, Stmt::Nop, vec![7]),
            (1, Stmt::Copy('y', Some('x')), vec![8]),
            (1, Stmt::Return('y'), vec![]),
        ],
        starts: vec![0, 6],
    }
}

fn facts_at(s: &Solution<u32, Fact>, n: u32) -> Vec<Fact> {
    let mut v = s.facts_by_node().remove(&n).unwrap_or_default();
    v.sort_by_key(|f| format!("{f:?}"));
    v
}

#[test]
fn returns_only_flow_back_along_valid_paths() {
    let problem = Taint::new(two_calls());
    let s = Solver::new(&problem).solve();
    // After the first call r is tainted; b = 0 and s = id(b) are clean:
    // the tainted return of id(a) does not leak into id(b)'s return site.
    assert_eq!(
        facts_at(&s, 3),
        [Fact::Var('a'), Fact::Var('r'), Fact::Zero]
    );
    assert_eq!(
        facts_at(&s, 5),
        [Fact::Var('a'), Fact::Var('r'), Fact::Zero]
    );
    // Inside id, x is tainted in the context entered with x.
    assert!(s.holds(8, Fact::Var('y'), &[Fact::Var('x')]));
    assert!(!s.holds(8, Fact::Var('y'), &[Fact::Zero]));
}

#[test]
fn callee_is_tabulated_once_per_entry_fact() {
    let problem = Taint::new(two_calls());
    let s = Solver::new(&problem).solve();
    // id is entered with Λ (at both calls) and with x (at the first): two
    // tabulations. Its copy node runs once for each: (Λ, Λ) and (x, x).
    assert_eq!(problem.visits[7].get(), 2);
    assert_eq!(s.stats().procedure_entries, 2);
    // One summary edge per (call, fact at call, return-site fact):
    // id(a): Λ→Λ, a→r; id(b): Λ→Λ.
    assert_eq!(s.stats().summary_edges, 3);
}

#[test]
fn provenance_names_the_generating_step() {
    let problem = Taint::new(two_calls());
    let s = Solver::new(&problem).solve();
    // r appears at the return site 3 from y at id's exit 8.
    assert_eq!(
        s.generated_from(3, Fact::Var('r')),
        Some((8, Fact::Var('y')))
    );
    // x appears at id's start 6 from a at the call 2.
    assert_eq!(
        s.generated_from(6, Fact::Var('x')),
        Some((2, Fact::Var('a')))
    );
    // a is generated from Λ at the source 1.
    assert_eq!(s.generated_from(2, Fact::Var('a')), Some((1, Fact::Zero)));
    // Pass-throughs are not generations.
    assert_eq!(s.generated_from(4, Fact::Var('a')), None);
}

/// `main: 0 a = src; 1 r = rec(a); 2 c = 0; 3 t = rec(c); 4 return r`
/// `rec: 5 nop -> {6, 8}; 6 q = rec(p); 7 return q; 8 return p`
fn recursion() -> Program {
    Program {
        nodes: vec![
            (0, Stmt::Source('a'), vec![1]),
            (0, call('r', 1, 'a', 'p'), vec![2]),
            (0, Stmt::Copy('c', None), vec![3]),
            (0, call('t', 1, 'c', 'p'), vec![4]),
            (0, Stmt::Return('r'), vec![]),
            (1, Stmt::Nop, vec![6, 8]),
            (1, call('q', 1, 'p', 'p'), vec![7]),
            (1, Stmt::Return('q'), vec![]),
            (1, Stmt::Return('p'), vec![]),
        ],
        starts: vec![0, 5],
    }
}

#[test]
fn recursion_terminates_with_context_sensitive_summaries() {
    let problem = Taint::new(recursion());
    let s = Solver::new(&problem).solve();
    // rec returns its argument, directly or through itself.
    assert!(facts_at(&s, 2).contains(&Fact::Var('r')));
    assert!(!facts_at(&s, 4).contains(&Fact::Var('t')));
    // Inside rec, q is tainted only in the context entered with p.
    assert!(s.holds(7, Fact::Var('q'), &[Fact::Var('p')]));
    assert!(!s.holds(7, Fact::Var('q'), &[Fact::Zero]));
}

#[test]
fn zero_reaches_every_node_of_the_program() {
    let problem = Taint::new(two_calls());
    let s = Solver::new(&problem).solve();
    for n in 0..9 {
        assert!(facts_at(&s, n).contains(&Fact::Zero), "node {n}");
    }
}

#[test]
fn revisiting_a_node_extends_the_fixpoint() {
    // After a first fixpoint, node 3 (b = 0) learns to generate z from Λ;
    // revisiting it carries z on to the end without starting over.
    let problem = Taint::new(two_calls());
    let mut solver = Solver::new(&problem);
    solver.run();
    assert!(!facts_at(solver.solution(), 5).contains(&Fact::Var('z')));
    let before = problem.visits[1].get();
    problem.late_source.set(Some((3, 'z')));
    solver.revisit(|n| n == 3);
    solver.run();
    let s = solver.into_solution();
    assert!(facts_at(&s, 4).contains(&Fact::Var('z')));
    assert!(facts_at(&s, 5).contains(&Fact::Var('z')));
    assert_eq!(s.generated_from(4, Fact::Var('z')), Some((3, Fact::Zero)));
    assert_eq!(problem.visits[1].get(), before, "node 1 was not run again");
}
