//! What inline asm decodes to beyond the interpreter's other ops: PTX
//! register-to-register instructions lane by lane, and the special
//! registers no NVVM intrinsic reads.

use super::diagnose::Stop;
use super::lanes::{each, row, row_mut, try_each};
use super::{Machine, Warp};
use crate::ptx::run::step;
use crate::ptx::space::Windows;
use crate::ptx::sreg::ReservedSmem;
use crate::ptx::Special;
use crate::sim::code::{PtxAlu, Slot};
use crate::sim::error::ErrorKind;
use crate::sim::scalar::mask as bits_mask;

/// Most registers one PTX instruction reads (`bfi`'s four, a `mov` packing
/// eight bytes).
pub const MAX_PTX_READS: usize = 8;

/// Bytes of shared memory reserved per block for the asm that reads
/// `%reserved_smem_offset_*` (cooperative groups' scratch for tiles
/// larger than a warp), placed after the block's own shared memory: two
/// slots of 512 bytes, `%reserved_smem_offset_0` and `_1`.
pub const RESERVED_SMEM: u64 = 1024;

/// Where an asm body's environment lies in a launch.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsmEnv {
    /// `%dynamic_smem_size`.
    pub dynamic_smem: u64,
    /// The reserved region's first byte in the shared window, if asm
    /// reads it.
    pub reserved_smem: Option<u64>,
    /// The address `%envreg1:%envreg2` give: the grid-barrier workspace
    /// of a cooperative launch (0 when no asm reads them).
    pub workspace: u64,
}

/// Runs `x` in the lanes of `mask`.
pub(super) fn alu(x: &PtxAlu, regs: &mut [u64], mask: u32) -> Result<(), Stop> {
    let windows = Windows::default();
    let mut inputs = [0u64; MAX_PTX_READS];
    let n = x.reads.len();
    try_each(mask, |l| {
        for (v, &s) in inputs.iter_mut().zip(&x.reads) {
            *v = row(regs, s)[l];
        }
        let out = step(&x.op, &inputs[..n], &windows).map_err(|e| {
            let msg = format!(
                "inline asm line {}: `{}` cannot be simulated: {}",
                x.line, x.opcode, e.message
            );
            Stop::Error(ErrorKind::Unsupported, Some(l), msg)
        })?;
        for (&(slot, bits), v) in x.writes.iter().zip(out) {
            row_mut(regs, slot)[l] = v & bits_mask(bits);
        }
        Ok(())
    })
}

impl Machine<'_> {
    /// Reads a special register of [`Special`] other than the NVVM ones.
    pub(super) fn asm_special(&self, w: &mut Warp, reg: Special, dst: Slot, mask: u32) {
        let env = self.asm_env;
        let reserved = env.reserved_smem.unwrap_or(self.shared_bytes);
        let value = match reg {
            Special::ReservedSmem(r) => match r {
                ReservedSmem::Begin | ReservedSmem::Slot(0) => reserved,
                ReservedSmem::Slot(_) => reserved + RESERVED_SMEM / 2,
                ReservedSmem::End | ReservedSmem::Cap => reserved + RESERVED_SMEM,
            },
            Special::DynamicSmemSize => env.dynamic_smem,
            Special::TotalSmemSize => self.shared_bytes,
            Special::EnvReg(1) => env.workspace >> 32,
            Special::EnvReg(2) => env.workspace & 0xffff_ffff,
            Special::EnvReg(_) => 0,
            Special::Sreg(_) => unreachable!("decoded as Op::Special"),
        };
        let regs = &mut w.frames.last_mut().expect("running").regs;
        each(mask, |l| row_mut(regs, dst)[l] = value);
    }
}
