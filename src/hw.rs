//! The hardware model, in one place. Current NVIDIA GPUs (Volta and later)
//! serve global memory in 32-byte sectors of 128-byte lines, and shared
//! memory from 32 banks of 4-byte words.

/// Threads per warp.
pub const WARP_SIZE: u32 = 32;
/// Bytes per global-memory sector (the unit of DRAM/L2 traffic).
pub const SECTOR_BYTES: u64 = 32;
/// Bytes per cache line (four sectors).
pub const LINE_BYTES: u64 = 128;
/// Shared-memory banks.
pub const SHARED_BANKS: u64 = 32;
/// Bytes per shared-memory bank word.
pub const BANK_WIDTH_BYTES: u64 = 4;
/// Alignment `cudaMalloc` guarantees for buffers.
pub const MALLOC_ALIGN: u64 = 256;
