//! Device memory that outlives a launch, for whole programs: the module's
//! `__device__` and `__constant__` variables and the program's
//! allocations, which every launch runs against and the host reads and
//! writes between launches. A released allocation keeps its object
//! number, so a later access through a stale pointer is a use after free,
//! never an access to whatever was allocated next.

use super::error::SimError;
use super::exec::Program;
use super::initcheck::Unwritten;
use super::layout::Layout;
use super::memory::{self, Buffer};
use super::{addr, launch, LaunchConfig, Outcome};
use crate::ir::{FuncId, GlobalId, Module};
use std::collections::HashMap;

/// What a host-side access or release of device memory got wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFault {
    pub message: String,
}

/// The device memory of one program, and its kernels decoded once.
pub struct Device {
    objects: Vec<Buffer>,
    layout: Layout,
    programs: HashMap<FuncId, Program>,
}

impl Device {
    /// The module's variables with their initial values, and no allocation.
    pub fn new(m: &Module) -> Result<Device, SimError> {
        let layout = Layout::new(m);
        let objects = launch::module_objects(m, &layout)?;
        Ok(Device {
            objects,
            layout,
            programs: HashMap::new(),
        })
    }

    /// The address of a module variable in global or constant memory
    /// (none for a `__shared__` one, which has no address outside a block).
    pub fn variable(&self, g: GlobalId) -> Option<u64> {
        let a = *self.layout.global_addr.get(g.index())?;
        matches!(addr::tag(a), addr::GLOBAL | addr::CONSTANT).then_some(a)
    }

    /// A new allocation of `bytes`, named for reports: zeroed, and every
    /// byte unwritten for the sanitizer until the host or a kernel writes
    /// it.
    pub fn allocate(&mut self, name: String, bytes: u64) -> Result<u64, HostFault> {
        let object = self.objects.len();
        if object >= addr::MAX_OBJECTS {
            return Err(fault(format!(
                "more than {} allocations at once",
                addr::MAX_OBJECTS
            )));
        }
        if bytes > addr::OFFSET_MASK {
            return Err(fault(format!(
                "{bytes} bytes is more than one allocation may hold"
            )));
        }
        let cannot = || fault(format!("cannot allocate {bytes} bytes"));
        let data = memory::zeroed(bytes).ok_or_else(cannot)?;
        let unwritten = match bytes {
            0 => None,
            _ => Some(Unwritten::all(bytes).ok_or_else(cannot)?),
        };
        self.objects.push(Buffer {
            name,
            space: crate::memory::Space::Global,
            data,
            writable: true,
            released: None,
            unwritten,
            lazy: None,
        });
        Ok(addr::encode(addr::GLOBAL, object as u32, 0))
    }

    /// Releases the allocation that starts at `address`.
    pub fn release(&mut self, address: u64) -> Result<(), HostFault> {
        let object = addr::object(address) as usize;
        let first_allocation = self.layout.next_object as usize;
        let buf = self
            .objects
            .get_mut(object)
            .filter(|_| addr::tag(address) == addr::GLOBAL && object >= first_allocation)
            .ok_or_else(|| fault(format!("{address:#x} is not an allocation")))?;
        if buf.released.is_some() {
            return Err(fault(format!("'{}' was freed already", buf.name)));
        }
        if addr::offset(address) != 0 {
            return Err(fault(format!(
                "{address:#x} is inside '{}', not its start",
                buf.name
            )));
        }
        buf.released = Some(buf.data.len() as u64);
        buf.data = Vec::new();
        buf.unwritten = None;
        Ok(())
    }

    /// The bytes `[address, address + len)` for the host to write (a
    /// copy or a fill): from now on they are written.
    pub fn write(&mut self, address: u64, len: u64) -> Result<&mut [u8], HostFault> {
        self.bytes(address, len)?;
        memory::written(&mut self.objects, address, len);
        self.bytes(address, len)
    }

    /// Copies `len` bytes from `src` to `dst`, both device memory, with
    /// what was never written of them.
    pub fn copy(&mut self, dst: u64, src: u64, len: u64) -> Result<(), HostFault> {
        let data = self.bytes(src, len)?.to_vec();
        self.bytes(dst, len)?.copy_from_slice(&data);
        let from = addr::object(src) as usize;
        let to = addr::object(dst) as usize;
        let (at, into) = (addr::offset(src), addr::offset(dst));
        let unwritten: Option<Vec<bool>> = self.objects[from]
            .unwritten
            .as_ref()
            .filter(|u| u.first(at, len).is_some())
            .map(|u| (0..len).map(|k| u.first(at + k, 1).is_some()).collect());
        match unwritten {
            None => memory::written(&mut self.objects, dst, len),
            Some(flags) => {
                let b = &mut self.objects[to];
                let size = b.data.len() as u64;
                let u = b
                    .unwritten
                    .get_or_insert_with(|| Unwritten::none(size).expect("a non-empty buffer"));
                u.copy(into, len, |k| flags[k as usize]);
                if u.is_empty() {
                    b.unwritten = None;
                }
            }
        }
        Ok(())
    }

    /// The bytes `[address, address + len)` for the host to read.
    pub fn bytes(&mut self, address: u64, len: u64) -> Result<&mut [u8], HostFault> {
        let len = usize::try_from(len).map_err(|_| fault(format!("{len} bytes")))?;
        let mut shared = Vec::new();
        let mut local = Vec::new();
        let mut view = memory::View {
            objects: &mut self.objects,
            shared: &mut shared,
            local: &mut local,
            layout: &self.layout,
        };
        if !matches!(addr::tag(address), addr::GLOBAL | addr::CONSTANT) {
            return Err(fault(format!("{address:#x} is not device memory")));
        }
        match view.bytes(address, len, 0, false) {
            Ok(_) => {}
            Err(f) => {
                let why = memory::describe(&f, &self.objects, &self.layout, 0);
                return Err(fault(why));
            }
        }
        // The same lookup again, now that no error needs the table.
        let object = addr::object(address) as usize;
        let off = addr::offset(address) as usize;
        Ok(&mut self.objects[object].data[off..off + len])
    }

    /// Runs `kernel` with its parameters' words (a pointer is an address
    /// this device handed out) against this memory.
    pub fn launch(
        &mut self,
        m: &Module,
        kernel: FuncId,
        config: &LaunchConfig,
        words: &[u64],
    ) -> Result<Outcome, SimError> {
        super::check_launch(m, kernel, config)?;
        let program = self
            .programs
            .entry(kernel)
            .or_insert_with(|| super::decode_program(m, kernel));
        super::execute(
            m,
            kernel,
            config,
            program,
            &mut self.objects,
            words,
            Vec::new(),
        )
    }
}

fn fault(message: String) -> HostFault {
    HostFault { message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{addrspace, Opcode, Value};
    use crate::sim::ErrorKind;

    /// `p[t] += 1` for thread `t`: a kernel whose result depends on what
    /// the memory held before the launch.
    fn increment() -> Module {
        let mut mb = ModuleBuilder::new();
        let (i32t, i64t, void) = (mb.int(32), mb.int(64), mb.void());
        let generic = mb.ptr(addrspace::GENERIC);
        let one = mb.const_int(32, 1);
        let mut fb = mb.define("inc", &[generic], void);
        fb.kernel();
        let t = fb.sreg("tid.x");
        let t64 = fb.cast(Opcode::ZExt, t, i64t);
        let p = fb.gep(i32t, Value::Arg(0), &[t64]);
        let v = fb.load(i32t, p);
        let w = fb.binary(Opcode::Add, v, one);
        fb.store(w, p);
        fb.ret(None);
        mb.finish()
    }

    fn config(threads: u32) -> LaunchConfig {
        LaunchConfig {
            block: [threads, 1, 1],
            ..LaunchConfig::default()
        }
    }

    fn ints(d: &mut Device, at: u64, n: u64) -> Vec<i32> {
        d.bytes(at, 4 * n)
            .unwrap()
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn memory_outlives_launches() {
        let m = increment();
        let mut d = Device::new(&m).unwrap();
        let a = d.allocate("a".into(), 64).unwrap();
        d.bytes(a, 8)
            .unwrap()
            .copy_from_slice(&[5, 0, 0, 0, 7, 0, 0, 0]);
        for _ in 0..3 {
            d.launch(&m, FuncId(0), &config(16), &[a]).unwrap();
        }
        // Three launches of +1 on 16 ints: 5 + 3, 7 + 3, then 0 + 3.
        let v = ints(&mut d, a, 16);
        assert_eq!(&v[..3], &[8, 10, 3]);
        assert!(v[3..].iter().all(|&x| x == 3));
    }

    #[test]
    fn an_access_after_free_is_a_fault_naming_the_buffer() {
        let m = increment();
        let mut d = Device::new(&m).unwrap();
        let a = d.allocate("a".into(), 64).unwrap();
        let b = d.allocate("b".into(), 64).unwrap();
        d.release(a).unwrap();
        let e = d.launch(&m, FuncId(0), &config(16), &[a]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Memory);
        assert!(
            e.message
                .contains("'a' (64 bytes), which the program has freed"),
            "{}",
            e.message
        );
        // Thread 0 loads first.
        assert_eq!(e.thread, Some([0, 0, 0]));
        // The host cannot reach it either, nor free it twice; the other
        // allocation is untouched and the memory survives the fault.
        assert!(d.bytes(a, 4).is_err());
        assert!(d.release(a).unwrap_err().message.contains("freed already"));
        d.launch(&m, FuncId(0), &config(16), &[b]).unwrap();
        assert_eq!(ints(&mut d, b, 16), vec![1; 16]);
    }

    /// A device-to-device copy carries which bytes were never written; a
    /// fill writes them.
    #[test]
    fn copies_carry_unwritten_bytes() {
        let m = increment();
        let mut d = Device::new(&m).unwrap();
        let a = d.allocate("a".into(), 16).unwrap();
        let b = d.allocate("b".into(), 16).unwrap();
        d.write(a, 8).unwrap().fill(7);
        d.write(b, 16).unwrap().fill(1);
        let unwritten = |d: &Device, at: u64, n: u64| memory::unwritten(&d.objects, at, n);
        assert!(d.objects[2].unwritten.is_none(), "b is all written");
        // Bytes 4..12 of a: 4..8 written, 8..12 not.
        d.copy(b + 4, a + 4, 8).unwrap();
        let bytes = d.bytes(b, 16).unwrap().to_vec();
        assert_eq!(bytes, [1, 1, 1, 1, 7, 7, 7, 7, 0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(unwritten(&d, b, 16), Some(8));
        assert_eq!(unwritten(&d, b + 12, 4), None);
        d.copy(b + 8, b, 4).unwrap();
        assert!(d.objects[2].unwritten.is_none());
        assert_eq!(unwritten(&d, a, 16), Some(8));
    }

    #[test]
    fn the_host_side_is_held_to_the_allocations() {
        let m = increment();
        let mut d = Device::new(&m).unwrap();
        let a = d.allocate("a".into(), 16).unwrap();
        assert!(d.bytes(a + 12, 4).is_ok());
        let past = d.bytes(a + 12, 8).unwrap_err().message;
        assert!(past.contains("at offset 12 of 'a' (16 bytes)"), "{past}");
        assert!(d
            .release(a + 4)
            .unwrap_err()
            .message
            .contains("not its start"));
        assert!(d.bytes(0x1000, 4).is_err());
    }
}
