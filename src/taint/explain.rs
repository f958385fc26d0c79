//! Turns [`Why`] edges into a readable chain: `threadIdx.x → %i → %cmp`.
//!
//! The walk alternates between values (dependent where defined, or only at
//! the use that asked) and effects (a store that made memory dependent, a
//! call that entered its callee with part of the warp, a `ret` merging
//! different values), following each one's reason back to a source.

use super::{KernelDeps, Why};
use crate::dataflow::FastSet as HashSet;
use crate::ir::{FuncId, InstId, Module, Opcode, Value};

/// What the walk is explaining at one step.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
enum Subject {
    /// Value `v` of `f`, as instruction `user` (if any) reads it.
    Value {
        f: FuncId,
        v: Value,
        user: Option<InstId>,
    },
    /// The effect of instruction `inst`; `memory` when reached as a write.
    Effect {
        f: FuncId,
        inst: InstId,
        memory: bool,
    },
}

/// The chain from a source to `v`, source first. Empty if `v` is uniform.
pub fn explain(deps: &KernelDeps, m: &Module, f: FuncId, v: Value) -> Vec<String> {
    labels(walk(deps, m, Subject::Value { f, v, user: None }))
}

/// The chain from a source to `v` as instruction `user` reads it (which
/// differs from [`explain`] for values leaving a loop).
pub fn explain_at(deps: &KernelDeps, m: &Module, f: FuncId, v: Value, user: InstId) -> Vec<String> {
    labels(walk(
        deps,
        m,
        Subject::Value {
            f,
            v,
            user: Some(user),
        },
    ))
}

/// The reasons along the same chain, from `v` back to the source: what
/// kind of step made each link dependent.
pub fn reasons_at(
    deps: &KernelDeps,
    m: &Module,
    f: FuncId,
    v: Value,
    user: Option<InstId>,
) -> Vec<Why> {
    let mut whys: Vec<Why> = walk(deps, m, Subject::Value { f, v, user })
        .into_iter()
        .filter_map(|(_, why)| why)
        .collect();
    whys.reverse();
    whys
}

/// The labels of the steps, a label repeated by the next step said once:
/// `i` and its widening `(long)i` are both `i` to the user.
fn labels(steps: Vec<(String, Option<Why>)>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(steps.len());
    for (label, _) in steps {
        if out.last() != Some(&label) {
            out.push(label);
        }
    }
    out
}

/// The steps, source first, each with the reason that made it dependent.
///
/// Every dependent value was first derived from a source, and the analysis
/// records that first derivation, so the walk back always ends at one: a
/// walk that comes back to a subject it has seen, or stops short, is a bug
/// in how the reasons were recorded (debug builds assert it). Subjects are
/// finite and never revisited, so the walk ends.
fn walk(deps: &KernelDeps, m: &Module, start: Subject) -> Vec<(String, Option<Why>)> {
    let mut steps: Vec<(String, Option<Why>)> = Vec::new();
    let mut seen = HashSet::default();
    let mut at = start;
    let mut sourced = false;
    while seen.insert(at) {
        let (why, f, here) = match at {
            Subject::Value { f, v, user } => {
                let why = match user {
                    Some(u) => deps.why_at(f, v, u),
                    None => deps.why(f, v),
                };
                let Some(why) = why else { break };
                steps.push((m.value_label(m.func(f), v), Some(why)));
                (why, f, at)
            }
            Subject::Effect { f, inst, memory } => {
                let Some(why) = deps.effect(f, inst) else {
                    break;
                };
                let label = m.value_label(m.func(f), Value::Inst(inst));
                let label = if memory {
                    format!("memory via {label}")
                } else {
                    label
                };
                steps.push((label, Some(why)));
                (why, f, at)
            }
        };
        match next(deps, m, why, f, here) {
            Step::To(s) => at = s,
            Step::Source(name) => {
                // A source value is labelled by what it reads.
                let why = if matches!(here, Subject::Value { .. }) {
                    steps.pop().and_then(|(_, why)| why)
                } else {
                    None
                };
                steps.push((name, why));
                sourced = true;
                break;
            }
            Step::Stop => break,
        }
    }
    debug_assert!(
        sourced || steps.is_empty(),
        "explanation without a source: {:?}",
        steps.iter().rev().map(|s| &s.0).collect::<Vec<_>>()
    );
    steps.reverse();
    steps
}

enum Step {
    To(Subject),
    Source(String),
    Stop,
}

fn next(deps: &KernelDeps, m: &Module, why: Why, f: FuncId, here: Subject) -> Step {
    let func = m.func(f);
    // The instruction the current subject is, when it is one.
    let this = match here {
        Subject::Value {
            v: Value::Inst(i), ..
        } => Some(i),
        Subject::Effect { inst, .. } => Some(inst),
        Subject::Value { .. } => None,
    };
    let condition = |branch: InstId| match func.inst(branch).operands.first() {
        Some(&c) => Step::To(Subject::Value {
            f,
            v: c,
            user: Some(branch),
        }),
        None => Step::Stop,
    };
    match why {
        Why::Source(s) => Step::Source(s.describe().to_string()),
        Why::Operand(o) => Step::To(Subject::Value {
            f,
            v: o,
            user: this,
        }),
        Why::Join { branch }
        | Why::LoopExit { branch }
        | Why::LoopSkew { branch }
        | Why::Control { branch } => condition(branch),
        Why::Memory { func, store } => Step::To(Subject::Effect {
            f: func,
            inst: store,
            memory: true,
        }),
        Why::Arg { caller, call } => {
            let Subject::Value {
                v: Value::Arg(a), ..
            } = here
            else {
                return Step::Stop;
            };
            match m.func(caller).inst(call).operands.get(a as usize) {
                Some(&v) => Step::To(Subject::Value {
                    f: caller,
                    v,
                    user: Some(call),
                }),
                None => Step::Stop,
            }
        }
        Why::Return { callee, ret } => {
            let r = m.func(callee).inst(ret);
            debug_assert_eq!(r.op, Opcode::Ret);
            match r.operands.first() {
                Some(&v) if deps.is_dependent_at(callee, v, ret) => Step::To(Subject::Value {
                    f: callee,
                    v,
                    user: Some(ret),
                }),
                _ => Step::To(Subject::Effect {
                    f: callee,
                    inst: ret,
                    memory: false,
                }),
            }
        }
        Why::Called { caller, call } => Step::To(Subject::Effect {
            f: caller,
            inst: call,
            memory: false,
        }),
    }
}
