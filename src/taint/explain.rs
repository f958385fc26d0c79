//! Turns [`Why`] edges into a readable chain: `threadIdx.x → %i → %cmp`.

use super::{KernelDeps, Why};
use crate::ir::{FuncId, Module, Value};
use std::collections::HashSet;

/// The chain from a source to `v`, source first. Empty if `v` is uniform.
pub fn explain(deps: &KernelDeps, m: &Module, f: FuncId, v: Value) -> Vec<String> {
    let mut steps = Vec::new();
    let mut seen = HashSet::new();
    let (mut f, mut v) = (f, v);
    while seen.insert((f, v)) && steps.len() < 64 {
        let Some(why) = deps.why(f, v) else { break };
        let func = m.func(f);
        steps.push(m.value_label(func, v));
        match why {
            Why::Source(s) => {
                // The source call itself is labelled by what it reads.
                steps.pop();
                steps.push(s.describe().to_string());
                break;
            }
            Why::Operand(o) => v = o,
            Why::Join { branch } | Why::LoopExit { branch } => {
                let cond = func.inst(branch).operands.first().copied();
                match cond {
                    Some(c) => v = c,
                    None => break,
                }
            }
            Why::Memory { func: sf, store } => {
                let stored = m.func(sf).inst(store);
                let value = match stored.op {
                    crate::ir::Opcode::Store => stored.operands[0],
                    _ => stored.operands.get(1).copied().unwrap_or(Value::Opaque),
                };
                steps.push(format!(
                    "memory via {}",
                    m.value_label(m.func(sf), Value::Inst(store))
                ));
                f = sf;
                v = value;
            }
            Why::Arg { caller, call } => {
                let Value::Arg(i) = v else { break };
                let call_inst = m.func(caller).inst(call);
                f = caller;
                v = call_inst.operands[i as usize];
            }
            Why::Return { callee, ret } => {
                let r = m.func(callee).inst(ret);
                f = callee;
                v = r.operands.first().copied().unwrap_or(Value::Opaque);
            }
        }
    }
    steps.reverse();
    steps
}
