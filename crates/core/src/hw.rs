//! The hardware model, in one place. Current NVIDIA GPUs (Volta and later)
//! serve global memory in 32-byte sectors of 128-byte lines, and shared
//! memory from 32 banks of 4-byte words, a warp's access in phases of
//! consecutive lanes that move at most one word per bank each.

/// Threads per warp.
pub const WARP_SIZE: u32 = 32;
/// The most threads a block may have along x, y and z (every CUDA
/// architecture since sm_20).
pub const MAX_BLOCK_DIM: [u32; 3] = [1024, 1024, 64];
/// The most threads a block may have in all (sm_20 and later).
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// The most blocks a grid may have along x, y and z (sm_30 and later).
pub const MAX_GRID_DIM: [u32; 3] = [(1 << 31) - 1, 65535, 65535];
/// Bytes per global-memory sector (the unit of DRAM/L2 traffic).
pub const SECTOR_BYTES: u64 = 32;
/// Bytes per cache line (four sectors).
pub const LINE_BYTES: u64 = 128;
/// Shared-memory banks.
pub const SHARED_BANKS: u64 = 32;
/// Bytes per shared-memory bank word.
pub const BANK_WIDTH_BYTES: u64 = 4;
/// The most shared memory one block can have on any CUDA GPU (227 KiB,
/// sm_90's opt-in maximum; sm_80 has 163 KiB).
pub const MAX_SHARED_PER_BLOCK: u64 = 227 << 10;
/// Alignment `cudaMalloc` guarantees for buffers.
pub const MALLOC_ALIGN: u64 = 256;
/// How a warp's shared-memory access is split into phases of consecutive
/// lanes, by bytes per lane: `(most bytes per lane, lanes per phase)`. Up
/// to 4 bytes all 32 lanes are one phase; 8 bytes take two phases (lanes
/// 0-15, 16-31); 16 bytes four (0-7, 8-15, 16-23, 24-31). Each phase moves
/// at most 128 bytes, one 4-byte word from each bank.
pub const SHARED_PHASES: [(u32, u32); 3] = [(4, 32), (8, 16), (16, 8)];

/// Lanes per shared-memory phase for an access of `bytes` per lane;
/// accesses wider than 16 bytes are split as 16-byte ones.
pub const fn shared_phase_lanes(bytes: u32) -> u32 {
    let mut i = 0;
    while i < SHARED_PHASES.len() {
        if bytes <= SHARED_PHASES[i].0 {
            return SHARED_PHASES[i].1;
        }
        i += 1;
    }
    SHARED_PHASES[SHARED_PHASES.len() - 1].1
}
