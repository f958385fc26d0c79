//! Reading and evaluating asm bodies, with results worked out by hand from
//! the PTX ISA's definitions.

mod bodies;
mod eval;
mod read;

use super::run::run;
use super::space::Windows;
use super::*;

fn body(text: &str, constraints: &str) -> Body {
    Body::parse(text, constraints).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Runs a body with the given operand values; specials come from `sregs`.
fn exec(text: &str, constraints: &str, operands: &[u64], sregs: &[(Special, u64)]) -> Vec<u64> {
    let b = body(text, constraints);
    let mut special = |s: Special| sregs.iter().find(|r| r.0 == s).map_or(0, |r| r.1);
    run(&b, operands, &mut special, &Windows::default()).unwrap()
}
