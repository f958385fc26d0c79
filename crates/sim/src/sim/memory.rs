//! The memory a launch runs against: global and constant objects for the
//! whole grid, a shared window per block, a local stack per thread.

use super::addr;
use super::initcheck::Unwritten;
use super::layout::Layout;
pub use super::lazy_copy::zeroed;
use super::lazy_copy::{Lazy, PAGE, PAGE_BITS};
use crate::memory::Space;

/// A global or constant memory object: a kernel argument's buffer or a
/// module variable.
#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: String,
    pub space: Space,
    pub data: Vec<u8>,
    pub writable: bool,
    /// The size the buffer had when the program released it
    /// (`cudaFree`): its bytes are gone, and any access is a use after
    /// free.
    pub released: Option<u64>,
    /// The bytes nothing has written yet (an allocation's, for the
    /// sanitizer); `None` once every byte has been.
    pub unwritten: Option<Unwritten>,
    /// A fork's buffer: the pages it has not touched are still the
    /// launch's (see [`Lazy`]).
    pub lazy: Option<Lazy>,
}

/// Why an access could not be performed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// No object: null or a wild pointer.
    Invalid,
    OutOfBounds,
    ReadOnly,
    /// Inside a buffer the program has released.
    Released,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub addr: u64,
    pub len: usize,
    pub write: bool,
}

/// The memory one warp can see.
pub struct View<'a> {
    pub objects: &'a mut [Buffer],
    pub shared: &'a mut [u8],
    /// One stack per lane.
    pub local: &'a mut [Vec<u8>],
    pub layout: &'a Layout,
}

impl View<'_> {
    /// The bytes of the one object every lane of `mask` reads `len` bytes
    /// of at `a[lane]`, indexed by the lanes' offsets, when those accesses
    /// all lie in it: a warp's access is then checked once, not per lane.
    /// `None` sends the warp lane by lane (local memory, several objects,
    /// or a fault to report).
    #[inline]
    pub fn span_read(&mut self, a: &[u64; 32], mask: u32, len: usize) -> Option<&[u8]> {
        let (address, lo, end) = span(a, mask, len)?;
        let tag = addr::tag(address);
        if tag == addr::GLOBAL || tag == addr::CONSTANT {
            let object = addr::object(address) as usize;
            if clean_lazy(self.objects, object).is_some_and(|l| l.clean(lo, end).is_some()) {
                return clean_lazy(self.objects, object).and_then(|l| l.whole());
            }
        }
        self.span_bytes(address, lo, end, false).map(|b| &*b)
    }

    /// [`View::span_read`] for writes.
    #[inline]
    pub fn span_write(&mut self, a: &[u64; 32], mask: u32, len: usize) -> Option<&mut [u8]> {
        let (address, lo, end) = span(a, mask, len)?;
        self.span_bytes(address, lo, end, true)
    }

    /// The whole of the object `address` is in (a fork's copy made good
    /// over `[lo, end)`), if `[lo, end)` is inside it and may be accessed.
    #[inline(always)]
    fn span_bytes(
        &mut self,
        address: u64,
        lo: usize,
        end: usize,
        write: bool,
    ) -> Option<&mut [u8]> {
        let object = addr::object(address);
        let data: &mut [u8] = match addr::tag(address) {
            addr::GLOBAL | addr::CONSTANT => self.global(object, (lo, end), write).ok()?,
            addr::SHARED if self.shared_fits(object, (lo, end)) => &mut *self.shared,
            _ => return None,
        };
        (end <= data.len()).then_some(data)
    }

    /// The bytes `[addr, addr + len)` as lane `lane` reads them: in a fork,
    /// the launch's own where the fork has not written them, uncopied.
    #[inline(always)]
    pub fn read(&mut self, address: u64, len: usize, lane: usize) -> Result<&[u8], Fault> {
        let tag = addr::tag(address);
        if tag == addr::GLOBAL || tag == addr::CONSTANT {
            let object = addr::object(address) as usize;
            let off = addr::offset(address) as usize;
            let end = off.saturating_add(len);
            // Looked up twice: a borrow returned on one branch only would
            // hold `self` on the other.
            if clean_lazy(self.objects, object).is_some_and(|l| l.clean(off, end).is_some()) {
                let l = clean_lazy(self.objects, object).expect("just seen");
                return Ok(l.clean(off, end).expect("just seen"));
            }
        }
        self.bytes(address, len, lane, false).map(|b| &*b)
    }

    /// The bytes `[addr, addr + len)` as lane `lane` sees them.
    #[inline(always)]
    pub fn bytes(
        &mut self,
        address: u64,
        len: usize,
        lane: usize,
        write: bool,
    ) -> Result<&mut [u8], Fault> {
        let fault = |kind| Fault {
            kind,
            addr: address,
            len,
            write,
        };
        let off = addr::offset(address) as usize;
        let end = off.saturating_add(len);
        let object = addr::object(address);
        let data: &mut [u8] = match addr::tag(address) {
            addr::GLOBAL | addr::CONSTANT => {
                self.global(object, (off, end), write).map_err(fault)?
            }
            addr::SHARED if self.shared_fits(object, (off, end)) => &mut *self.shared,
            addr::SHARED => return Err(fault(FaultKind::OutOfBounds)),
            addr::LOCAL => &mut self.local[lane],
            _ => return Err(fault(FaultKind::Invalid)),
        };
        data.get_mut(off..end)
            .ok_or_else(|| fault(FaultKind::OutOfBounds))
    }

    /// The bytes of global or constant object `object`, if the program
    /// has it and may access it so (a fork's copy made good over
    /// `[off, end)`).
    #[inline(always)]
    fn global(
        &mut self,
        object: u32,
        (off, end): (usize, usize),
        write: bool,
    ) -> Result<&mut [u8], FaultKind> {
        let buf = self
            .objects
            .get_mut(object as usize)
            .filter(|_| object != 0)
            .ok_or(FaultKind::Invalid)?;
        if buf.released.is_some() {
            return Err(FaultKind::Released);
        }
        if write && !buf.writable {
            return Err(FaultKind::ReadOnly);
        }
        if let Some(lazy) = &mut buf.lazy {
            lazy.fetch(&mut buf.data, off, end, write);
        }
        Ok(&mut buf.data)
    }

    /// Whether `[off, end)` of the block's shared window lies in shared
    /// variable `object` (any of the window for 0, the window as a whole).
    #[inline(always)]
    fn shared_fits(&self, object: u32, (off, end): (usize, usize)) -> bool {
        object == 0
            || self
                .layout
                .shared_var(object)
                .is_some_and(|v| (off as u64) >= v.offset && end as u64 <= v.offset + v.size)
    }
}

/// For the lanes of `mask` accessing `len` bytes at `a[lane]`, all in one
/// object of one space: an address of it, and the offsets `[lo, end)`
/// the accesses cover.
#[inline(always)]
fn span(a: &[u64; 32], mask: u32, len: usize) -> Option<(u64, usize, usize)> {
    if mask == 0 {
        return None;
    }
    let first = a[mask.trailing_zeros() as usize];
    let key = first >> addr::OBJECT_SHIFT;
    let (mut other, mut lo, mut hi) = (0u64, u64::MAX, 0u64);
    for (l, &x) in a.iter().enumerate() {
        if mask >> l & 1 != 0 {
            other |= (x >> addr::OBJECT_SHIFT) ^ key;
            let off = x & addr::OFFSET_MASK;
            lo = lo.min(off);
            hi = hi.max(off);
        }
    }
    if other != 0 {
        return None;
    }
    let end = usize::try_from(hi).ok()?.checked_add(len)?;
    Some((first, lo as usize, end))
}

/// A fork's buffer `object`, while the program has it.
#[inline(always)]
fn clean_lazy(objects: &[Buffer], object: usize) -> Option<&Lazy> {
    match objects.get(object) {
        Some(Buffer {
            lazy: Some(l),
            released: None,
            ..
        }) => Some(l),
        _ => None,
    }
}

/// Reads a little-endian scalar of `n` (1..=8) bytes. The usual widths
/// are fixed-size loads (a slice copy of unknown length is a libc call).
#[inline]
pub fn read_le(bytes: &[u8]) -> u64 {
    match *bytes {
        [a] => u64::from(a),
        [a, b] => u64::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let mut w = [0u8; 8];
            w[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(w)
        }
    }
}

#[inline]
pub fn write_le(bytes: &mut [u8], v: u64) {
    let n = bytes.len();
    match n {
        1 => bytes[0] = v as u8,
        2 => bytes.copy_from_slice(&(v as u16).to_le_bytes()),
        4 => bytes.copy_from_slice(&(v as u32).to_le_bytes()),
        8 => bytes.copy_from_slice(&v.to_le_bytes()),
        _ => bytes.copy_from_slice(&v.to_le_bytes()[..n]),
    }
}

/// Writes the low `bytes.len()` bytes of `v`; returns whether that changed
/// them.
#[inline]
pub fn put_le(bytes: &mut [u8], v: u64) -> bool {
    let m = match bytes.len() {
        n @ 1..=7 => (1u64 << (8 * n)) - 1,
        _ => u64::MAX,
    };
    let changed = read_le(bytes) != v & m;
    write_le(bytes, v);
    changed
}

/// A compute-sanitizer style description of a fault's address.
pub fn describe(f: &Fault, objects: &[Buffer], layout: &Layout, shared_len: usize) -> String {
    let a = f.addr;
    let off = addr::offset(a);
    let what = match addr::tag(a) {
        addr::GLOBAL | addr::CONSTANT => {
            let named = |o: u32| objects.get(o as usize).filter(|_| o != 0);
            if let Some((o, before)) = addr::underflow(a).filter(|&(o, _)| named(o).is_some()) {
                let b = &objects[o as usize];
                format!(
                    "{before} bytes before the start of '{}' ({} bytes)",
                    b.name,
                    b.data.len()
                )
            } else if let Some(b) = named(addr::object(a)) {
                if let Some(size) = b.released {
                    format!(
                        "at offset {off} of '{}' ({size} bytes), which the program has freed",
                        b.name
                    )
                } else if f.kind == FaultKind::ReadOnly {
                    format!("'{}' is read-only ({} memory)", b.name, b.space.name())
                } else if off >= b.data.len() as u64 {
                    format!(
                        "{} bytes after the end of '{}' ({} bytes)",
                        off - b.data.len() as u64,
                        b.name,
                        b.data.len()
                    )
                } else {
                    format!(
                        "at offset {off} of '{}' ({} bytes): the access runs past its end",
                        b.name,
                        b.data.len()
                    )
                }
            } else {
                "not inside any buffer".to_string()
            }
        }
        addr::SHARED => match layout.shared_var(addr::object(a)) {
            Some(v) if off < v.offset => format!(
                "{} bytes before the start of shared '{}' ({} bytes)",
                v.offset - off,
                v.name,
                v.size
            ),
            Some(v) => format!(
                "outside shared '{}' ({} bytes, access at offset {} of it)",
                v.name,
                v.size,
                off as i64 - v.offset as i64
            ),
            None => format!("outside the block's {shared_len} bytes of shared memory"),
        },
        addr::LOCAL => "outside the thread's local stack".to_string(),
        addr::FUNCTION => "a function address".to_string(),
        _ if a < 4096 => "a null pointer".to_string(),
        _ => "not a pointer warpcheck handed out".to_string(),
    };
    format!("address {a:#x} is {what}")
}

/// Marks `[address, address + len)` of a global buffer written, for the
/// sanitizer's check of unwritten reads.
pub fn written(objects: &mut [Buffer], address: u64, len: u64) {
    if addr::tag(address) != addr::GLOBAL {
        return;
    }
    if let Some(b) = objects.get_mut(addr::object(address) as usize) {
        if let Some(u) = &mut b.unwritten {
            if u.write(addr::offset(address), len) {
                b.unwritten = None;
            }
        }
    }
}

/// The offset of the first byte of `[address, address + len)` that was
/// never written, in a global buffer.
pub fn unwritten(objects: &[Buffer], address: u64, len: u64) -> Option<u64> {
    if addr::tag(address) != addr::GLOBAL {
        return None;
    }
    let b = objects.get(addr::object(address) as usize)?;
    b.unwritten.as_ref()?.first(addr::offset(address), len)
}

/// Makes `base` what running its forks' blocks one after another would
/// have left: each fork ran on a copy of `base`, and the bytes a fork
/// changed take its value, a later fork's winning where two changed the
/// same byte (two blocks writing one place without order). Only pages a
/// fork wrote are looked at (all of a fork's buffer that is a full copy);
/// a large buffer is merged on up to `threads` threads, a range of pages
/// each. A byte is left unwritten only where every fork left it so.
pub fn merge(base: &mut [Buffer], forks: &[&[Buffer]], threads: usize) {
    /// Fewer bytes than this per thread are merged on one.
    const MIN_PART: usize = 1 << 20;
    for (i, b) in base.iter_mut().enumerate() {
        let copies: Vec<&Buffer> = forks.iter().filter_map(|f| f.get(i)).collect();
        let len = b.data.len();
        // A fork's buffer it never wrote may never have been made.
        let unmade = |c: &&Buffer| c.lazy.is_some() && c.data.is_empty();
        if copies.iter().all(|c| c.data.len() == len || unmade(c)) {
            let parts = threads.min(len / MIN_PART).max(1);
            let per = len.div_ceil(parts).next_multiple_of(PAGE).max(PAGE);
            let copies = &copies;
            std::thread::scope(|s| {
                let mut chunks = b.data.chunks_mut(per).enumerate();
                let first = chunks.next();
                for (k, chunk) in chunks {
                    s.spawn(move || merge_pages(chunk, k * per, copies));
                }
                if let Some((_, chunk)) = first {
                    merge_pages(chunk, 0, copies);
                }
            });
        }
        if let Some(u) = &mut b.unwritten {
            for c in &copies {
                match &c.unwritten {
                    None => {
                        b.unwritten = None;
                        break;
                    }
                    Some(cu) if u.keep_common(cu) => {
                        b.unwritten = None;
                        break;
                    }
                    Some(_) => {}
                }
            }
        }
    }
}

/// [`merge`] of the bytes `out` of a buffer, from byte `start` (a page
/// boundary) on.
fn merge_pages(out: &mut [u8], start: usize, copies: &[&Buffer]) {
    let mut before = [0u8; PAGE];
    for (j, out) in out.chunks_mut(PAGE).enumerate() {
        let page = (start >> PAGE_BITS) + j;
        let wrote = |c: &&&Buffer| c.lazy.as_ref().is_none_or(|l| l.wrote(page));
        if !copies.iter().any(|c| wrote(&c)) {
            continue;
        }
        let at = page << PAGE_BITS;
        let was = &mut before[..out.len()];
        was.copy_from_slice(out);
        for c in copies.iter().filter(wrote) {
            let now = &c.data[at..at + out.len()];
            if now != was {
                for ((o, &n), &w) in out.iter_mut().zip(now).zip(was.iter()) {
                    if n != w {
                        *o = n;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffers() -> Vec<Buffer> {
        let b = |name: &str, n| Buffer {
            name: name.into(),
            space: Space::Global,
            data: vec![0; n],
            writable: true,
            released: None,
            unwritten: None,
            lazy: None,
        };
        vec![b("<null>", 0), b("a", 16), b("b", 8)]
    }

    /// What a test's [`View`] looks at: [`buffers`], a block's shared
    /// window and empty local stacks.
    struct Memory {
        objects: Vec<Buffer>,
        layout: Layout,
        shared: Vec<u8>,
        local: Vec<Vec<u8>>,
    }

    impl Memory {
        fn new(shared: usize) -> Memory {
            Memory {
                objects: buffers(),
                layout: Layout::default(),
                shared: vec![0; shared],
                local: vec![Vec::new(); 32],
            }
        }

        fn view(&mut self) -> View<'_> {
            View {
                objects: &mut self.objects,
                shared: &mut self.shared,
                local: &mut self.local,
                layout: &self.layout,
            }
        }
    }

    #[test]
    fn checks_bounds_per_object() {
        let mut m = Memory::new(32);
        let mut v = m.view();
        let a = addr::encode(addr::GLOBAL, 1, 0);
        v.bytes(a + 12, 4, 0, true)
            .unwrap()
            .copy_from_slice(&[1, 2, 3, 4]);
        let f = v.bytes(a + 14, 4, 0, false).unwrap_err();
        assert_eq!(f.kind, FaultKind::OutOfBounds);
        assert!(v.bytes(0, 4, 0, false).is_err());
        assert_eq!(read_le(v.bytes(a + 12, 4, 0, false).unwrap()), 0x0403_0201);
        let text = describe(&f, &m.objects, &m.layout, 32);
        assert!(text.contains("at offset 14 of 'a' (16 bytes)"), "{text}");
        let after = Fault {
            addr: a + 20,
            ..f.clone()
        };
        let text = describe(&after, &m.objects, &m.layout, 32);
        assert!(text.contains("4 bytes after the end of 'a'"), "{text}");
        let before = describe(
            &Fault {
                kind: FaultKind::OutOfBounds,
                addr: addr::encode(addr::GLOBAL, 2, 0) - 4,
                len: 4,
                write: false,
            },
            &m.objects,
            &m.layout,
            32,
        );
        assert!(
            before.contains("4 bytes before the start of 'b'"),
            "{before}"
        );
    }

    #[test]
    fn a_warp_is_checked_once_only_when_all_its_lanes_fit_one_object() {
        let mut m = Memory::new(64);
        let mut v = m.view();
        let a = addr::encode(addr::GLOBAL, 1, 0);
        // Lanes 0..4 read 4 bytes each of 'a' (16 bytes): all in bounds.
        let mut lanes = [0u64; 32];
        for (l, x) in lanes.iter_mut().enumerate() {
            *x = a + 4 * l as u64;
        }
        assert_eq!(v.span_read(&lanes, 0b1111, 4).map(<[u8]>::len), Some(16));
        // Lane 4 would read bytes 16..20, past the end: lane by lane.
        assert!(v.span_read(&lanes, 0b1_1111, 4).is_none());
        // A lane in another object: lane by lane.
        lanes[2] = addr::encode(addr::GLOBAL, 2, 0);
        assert!(v.span_write(&lanes, 0b111, 4).is_none());
        assert!(v.span_write(&lanes, 0b011, 4).is_some());
        // Shared memory: the block's window; local memory never.
        let s = [addr::encode(addr::SHARED, 0, 60); 32];
        assert_eq!(v.span_write(&s, u32::MAX, 4).map(|d| d.len()), Some(64));
        assert!(v.span_write(&s, u32::MAX, 8).is_none());
        let l = [addr::encode(addr::LOCAL, 0, 0); 32];
        assert!(v.span_read(&l, 1, 1).is_none());
    }

    #[test]
    fn forks_merge_in_order() {
        let mut base = buffers();
        base[1].data = (0..16).collect();
        let mut one = base.clone();
        let mut two = base.clone();
        // The first fork writes bytes 0..4 and 8; the second 2..6, with
        // byte 3 the value it already had.
        one[1].data[..4].copy_from_slice(&[100, 101, 102, 103]);
        one[1].data[8] = 108;
        two[1].data[2..6].copy_from_slice(&[202, 3, 204, 205]);
        two[2].data[7] = 9;
        merge(&mut base, &[&one, &two], 1);
        let want: Vec<u8> = vec![
            100, 101, 202, 103, 204, 205, 6, 7, 108, 9, 10, 11, 12, 13, 14, 15,
        ];
        assert_eq!(base[1].data, want);
        assert_eq!(base[2].data, [0, 0, 0, 0, 0, 0, 0, 9]);
    }

    #[test]
    fn lazy_forks_merge_the_same_on_several_threads() {
        use std::sync::Arc;
        let len = 3 * (1 << 20) + 100;
        let pattern: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
        let mut base = buffers();
        base[1].data = pattern.clone();
        // Each fork writes a byte at these offsets (page starts and ends,
        // the last short page, and one place both write).
        let one_at = [0, PAGE - 1, 1 << 20, 2 * (1 << 20) + 5, len - 1];
        let two_at = [PAGE, 2 * (1 << 20) + 5, len - 50];
        let fork = |at: &[usize], v: u8| {
            let mut f = base.clone();
            let mut data = Vec::new();
            let mut lazy = Lazy::new(Arc::new(pattern.clone()));
            for &o in at {
                lazy.fetch(&mut data, o, o + 1, true);
                data[o] = v;
            }
            f[1].data = data;
            f[1].lazy = Some(lazy);
            f
        };
        let (one, two) = (fork(&one_at, 200), fork(&two_at, 201));
        let mut want = pattern.clone();
        for &o in &one_at {
            want[o] = 200;
        }
        for &o in &two_at {
            want[o] = 201;
        }
        for threads in [1, 2, 3, 8] {
            let mut merged = base.clone();
            merge(&mut merged, &[&one, &two], threads);
            assert!(merged[1].data == want, "{threads} threads");
        }
    }

    #[test]
    fn buffers_drop_their_bitmap_once_written() {
        let mk = |unwritten| Buffer {
            name: "a".into(),
            space: crate::memory::Space::Global,
            data: vec![0; 8],
            writable: true,
            released: None,
            unwritten,
            lazy: None,
        };
        let mut objects = vec![mk(None), mk(Unwritten::all(8))];
        let a = addr::encode(addr::GLOBAL, 1, 0);
        assert_eq!(unwritten(&objects, a + 4, 4), Some(4));
        written(&mut objects, a, 6);
        assert_eq!(unwritten(&objects, a + 4, 4), Some(6));
        written(&mut objects, a + 6, 2);
        assert!(objects[1].unwritten.is_none());
        assert_eq!(unwritten(&objects, a, 8), None);
    }
}
