//! The memory a launch runs against: global and constant objects for the
//! whole grid, a shared window per block, a local stack per thread.

use super::addr;
use super::initcheck::Unwritten;
use super::layout::Layout;
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
    /// The bytes `[addr, addr + len)` as lane `lane` sees them.
    #[inline]
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
                let buf = self
                    .objects
                    .get_mut(object as usize)
                    .filter(|_| object != 0)
                    .ok_or_else(|| fault(FaultKind::Invalid))?;
                if buf.released.is_some() {
                    return Err(fault(FaultKind::Released));
                }
                if write && !buf.writable {
                    return Err(fault(FaultKind::ReadOnly));
                }
                &mut buf.data
            }
            addr::SHARED => {
                if object != 0 {
                    let v = self
                        .layout
                        .shared_var(object)
                        .ok_or_else(|| fault(FaultKind::OutOfBounds))?;
                    if (off as u64) < v.offset || end as u64 > v.offset + v.size {
                        return Err(fault(FaultKind::OutOfBounds));
                    }
                }
                &mut *self.shared
            }
            addr::LOCAL => &mut self.local[lane],
            _ => return Err(fault(FaultKind::Invalid)),
        };
        data.get_mut(off..end)
            .ok_or_else(|| fault(FaultKind::OutOfBounds))
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
/// same byte (two blocks writing one place without order). A byte is left
/// unwritten only where every fork left it so.
pub fn merge(base: &mut [Buffer], forks: &[&[Buffer]]) {
    const CHUNK: usize = 4096;
    let mut before = [0u8; CHUNK];
    for (i, b) in base.iter_mut().enumerate() {
        let copies: Vec<&Buffer> = forks.iter().filter_map(|f| f.get(i)).collect();
        let len = b.data.len();
        if copies.iter().all(|c| c.data.len() == len) {
            for start in (0..len).step_by(CHUNK) {
                let end = (start + CHUNK).min(len);
                let was = &mut before[..end - start];
                was.copy_from_slice(&b.data[start..end]);
                for c in &copies {
                    let now = &c.data[start..end];
                    if now != was {
                        let out = &mut b.data[start..end];
                        for ((o, &n), &w) in out.iter_mut().zip(now).zip(was.iter()) {
                            if n != w {
                                *o = n;
                            }
                        }
                    }
                }
            }
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

/// `bytes` zero bytes, or `None` where this process cannot have them
/// (a limit on its memory, or more than the machine has): a buffer the
/// user sized is an error naming the size, never an abort.
pub fn zeroed(bytes: u64) -> Option<Vec<u8>> {
    let n = usize::try_from(bytes).ok()?;
    let mut data = Vec::new();
    data.try_reserve_exact(n).ok()?;
    data.resize(n, 0);
    Some(data)
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
        };
        vec![b("<null>", 0), b("a", 16), b("b", 8)]
    }

    #[test]
    fn checks_bounds_per_object() {
        let mut objects = buffers();
        let layout = Layout::default();
        let mut shared = vec![0u8; 32];
        let mut local = vec![Vec::new(); 32];
        let mut v = View {
            objects: &mut objects,
            shared: &mut shared,
            local: &mut local,
            layout: &layout,
        };
        let a = addr::encode(addr::GLOBAL, 1, 0);
        v.bytes(a + 12, 4, 0, true)
            .unwrap()
            .copy_from_slice(&[1, 2, 3, 4]);
        let f = v.bytes(a + 14, 4, 0, false).unwrap_err();
        assert_eq!(f.kind, FaultKind::OutOfBounds);
        assert!(v.bytes(0, 4, 0, false).is_err());
        assert_eq!(read_le(v.bytes(a + 12, 4, 0, false).unwrap()), 0x0403_0201);
        let text = describe(&f, &objects, &layout, 32);
        assert!(text.contains("at offset 14 of 'a' (16 bytes)"), "{text}");
        let after = Fault {
            addr: a + 20,
            ..f.clone()
        };
        let text = describe(&after, &objects, &layout, 32);
        assert!(text.contains("4 bytes after the end of 'a'"), "{text}");
        let before = describe(
            &Fault {
                kind: FaultKind::OutOfBounds,
                addr: addr::encode(addr::GLOBAL, 2, 0) - 4,
                len: 4,
                write: false,
            },
            &objects,
            &layout,
            32,
        );
        assert!(
            before.contains("4 bytes before the start of 'b'"),
            "{before}"
        );
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
        merge(&mut base, &[&one, &two]);
        let want: Vec<u8> = vec![
            100, 101, 202, 103, 204, 205, 6, 7, 108, 9, 10, 11, 12, 13, 14, 15,
        ];
        assert_eq!(base[1].data, want);
        assert_eq!(base[2].data, [0, 0, 0, 0, 0, 0, 0, 9]);
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
