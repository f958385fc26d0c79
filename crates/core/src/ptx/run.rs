//! Runs an asm body for one thread, when it needs neither memory nor
//! other lanes: special-register reads, `cvta` and the forms of
//! [`super::eval`]. Most asm in CUDA headers is of this kind (`%laneid`,
//! `%lanemask_lt`, the reserved shared-memory window, funnel shifts).

use super::eval::{self, truth, EvalError};
use super::inst::{Op, Operand, Reg};
use super::space::Windows;
use super::sreg::Special;
use super::Body;

/// The results of one register-to-register instruction (a `cvta` or a
/// form of [`eval::alu`]) from the values of its [`Op::reads`].
pub fn step(op: &Op, inputs: &[u64], windows: &Windows) -> Result<Vec<u64>, EvalError> {
    match op {
        Op::Cvta { .. } => Ok(windows.cvta(op, inputs[0]).into_iter().collect()),
        op => eval::alu(op, inputs),
    }
}

/// Runs `body`. `operands[n]` is the value of input `$n` (entries of
/// outputs are ignored); `special` reads a special register for this
/// thread. Returns the value of every operand after the body, outputs
/// included, masked to their register widths.
pub fn run(
    body: &Body,
    operands: &[u64],
    special: &mut dyn FnMut(Special) -> u64,
    windows: &Windows,
) -> Result<Vec<u64>, EvalError> {
    let c = &body.constraints;
    let n = c.operands.len();
    let input = |k: usize| operands.get(k).copied().unwrap_or(0);
    let mut args: Vec<u64> = (0..n as u32)
        .map(|k| match (c.is_output(k), c.tied_input(k)) {
            (false, _) => input(k as usize),
            (true, Some(tied)) => input(tied as usize),
            (true, None) => 0,
        })
        .collect();
    let mut locals = vec![0u64; body.locals.len()];
    for inst in &body.insts {
        let mut value = |o: Operand| match o {
            Operand::Reg(Reg::Arg(k)) => args[k as usize],
            Operand::Reg(Reg::Local(l)) => locals[l as usize],
            Operand::Imm(v) => v,
            Operand::Special(s) => special(s),
            Operand::Sink => 0,
        };
        if let Some(g) = inst.guard {
            if !truth(&g, value(g.value)) {
                continue;
            }
        }
        let inputs: Vec<u64> = inst.op.reads().into_iter().map(&mut value).collect();
        let results = step(&inst.op, &inputs, windows).map_err(|e| EvalError {
            message: format!(
                "`{}` (asm line {}) needs the simulator: {}",
                inst.opcode, inst.line, e.message
            ),
        })?;
        for (dst, v) in inst.op.writes().into_iter().zip(results) {
            let Operand::Reg(r) = dst else { continue };
            let v = v & eval::mask(body.reg_bits(r));
            match r {
                Reg::Arg(k) => args[k as usize] = v,
                Reg::Local(l) => locals[l as usize] = v,
            }
        }
    }
    Ok(args)
}
