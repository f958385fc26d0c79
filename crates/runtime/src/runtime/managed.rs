//! Managed memory (`cudaMallocManaged`): one allocation the host code
//! reads and writes through an ordinary pointer and kernels through the
//! simulator's checks. The simulator's addresses are not host addresses
//! (the space tag sits in the top byte), so each managed allocation is
//! two copies: host pages the program's pointer points into, and a device
//! object of the same size. The host copy is the allocation between
//! launches; a launch gets it before it starts and gives it back after
//! it ends (on a GPU, pages migrate the same way). Kernels see the device
//! object: a launch's pointer arguments (and pointer-sized words of its
//! structure arguments) that point into a managed allocation's host pages
//! are passed as the same offset into its device object, so every access
//! is held to the allocation's bounds.
//!
//! A freed allocation's host pages stay reserved but inaccessible, so a
//! host access after `cudaFree` faults as it does under CUDA and no later
//! allocation reuses the address: a kernel passed the stale pointer gets
//! the freed device object, a use after free the sanitizer names.

use crate::sim::device::HostFault;
use crate::sim::Device;
use std::collections::BTreeMap;

/// One managed allocation.
struct Block {
    len: u64,
    /// The device object's address.
    device: u64,
    /// Host pages mapped (a multiple of the page size, at least one).
    mapped: usize,
    freed: bool,
}

/// The managed allocations by the host address they start at.
#[derive(Default)]
pub struct Managed {
    blocks: BTreeMap<u64, Block>,
}

impl Managed {
    /// Host pages for a new allocation of `len` bytes, whose device object
    /// is `device`: zeroed, as the device object is.
    pub fn add(&mut self, len: u64, device: u64) -> Option<u64> {
        let mapped = usize::try_from(len.max(1))
            .ok()?
            .checked_next_multiple_of(page_size())?;
        // SAFETY: an anonymous private mapping at an address the kernel
        // picks; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let host = p as u64;
        let block = Block {
            len,
            device,
            mapped,
            freed: false,
        };
        self.blocks.insert(host, block);
        Some(host)
    }

    /// The device object of the live allocation that starts at `host`,
    /// which is freed: its pages become inaccessible (and their memory
    /// goes back to the system) but stay reserved.
    pub fn remove(&mut self, host: u64) -> Option<u64> {
        let b = self.blocks.get_mut(&host).filter(|b| !b.freed)?;
        b.freed = true;
        // SAFETY: the pages are this allocation's own mapping.
        unsafe {
            let p = host as *mut libc::c_void;
            libc::madvise(p, b.mapped, libc::MADV_DONTNEED);
            libc::mprotect(p, b.mapped, libc::PROT_NONE);
        }
        Some(b.device)
    }

    /// The allocation whose host bytes hold `address` (its end included,
    /// as a pointer one past the last element is still the allocation's):
    /// its start, and whether it is still live.
    fn find(&self, address: u64) -> Option<(u64, &Block)> {
        let (&start, b) = self.blocks.range(..=address).next_back()?;
        (address - start <= b.len).then_some((start, b))
    }

    /// Whether `[address, address + len)` lies inside one live managed
    /// allocation.
    pub fn holds(&self, address: u64, len: u64) -> bool {
        self.find(address)
            .is_some_and(|(start, b)| !b.freed && address.saturating_add(len) <= start + b.len)
    }

    /// The device address a kernel gets for `word`: the same offset into
    /// the device object where `word` points into a managed allocation's
    /// host pages (live or freed), else `word` itself.
    pub fn to_device(&self, word: u64) -> u64 {
        match self.find(word) {
            Some((start, b)) => b.device + (word - start),
            None => word,
        }
    }

    /// [`Managed::to_device`] on each aligned pointer-sized word of a
    /// structure argument's bytes.
    pub fn words_to_device(&self, bytes: &mut [u8]) {
        for w in bytes.chunks_exact_mut(8) {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            w.copy_from_slice(&self.to_device(v).to_le_bytes());
        }
    }

    /// Before a launch: each live allocation's host bytes into its device
    /// object.
    pub fn before_launch(&self, device: &mut Device) -> Result<(), HostFault> {
        for (&host, b) in self.live() {
            device
                .write(b.device, b.len)?
                .copy_from_slice(host_bytes(host, b));
        }
        Ok(())
    }

    /// After a launch: what the kernel left in each device object back in
    /// the host pages.
    pub fn after_launch(&self, device: &mut Device) -> Result<(), HostFault> {
        for (&host, b) in self.live() {
            let d = device.bytes(b.device, b.len)?;
            // SAFETY: the block's live mapping of `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), host as *mut u8, d.len()) };
        }
        Ok(())
    }

    fn live(&self) -> impl Iterator<Item = (&u64, &Block)> {
        self.blocks.iter().filter(|(_, b)| !b.freed && b.len > 0)
    }
}

fn host_bytes(host: u64, b: &Block) -> &[u8] {
    // SAFETY: a live block's host pages hold `len` readable bytes.
    unsafe { std::slice::from_raw_parts(host as *const u8, b.len as usize) }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).unwrap_or(4096).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_into_the_host_pages_map_to_the_device_object() {
        let mut m = Managed::default();
        let dev = 0x0100_0010_0000_0000;
        let host = m.add(100, dev).unwrap();
        assert_eq!(host % 4096, 0);
        assert_eq!(m.to_device(host), dev);
        assert_eq!(m.to_device(host + 40), dev + 40);
        // One past the end is still the allocation's.
        assert_eq!(m.to_device(host + 100), dev + 100);
        assert_eq!(m.to_device(host + 101), host + 101);
        assert_eq!(m.to_device(7), 7);
        assert!(m.holds(host + 96, 4));
        assert!(!m.holds(host + 97, 4));

        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&(host + 8).to_le_bytes());
        bytes[8..].copy_from_slice(&5u64.to_le_bytes());
        m.words_to_device(&mut bytes);
        assert_eq!(u64::from_le_bytes(bytes[..8].try_into().unwrap()), dev + 8);
        assert_eq!(u64::from_le_bytes(bytes[8..].try_into().unwrap()), 5);

        // Freed: no longer host memory the runtime copies, but a kernel
        // still gets the (freed) device object.
        assert_eq!(m.remove(host), Some(dev));
        assert_eq!(m.remove(host), None);
        assert!(!m.holds(host, 0));
        assert_eq!(m.to_device(host + 4), dev + 4);
    }
}
