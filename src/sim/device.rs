//! Device memory that outlives a launch, for whole programs: the module's
//! `__device__` and `__constant__` variables and the program's
//! allocations, which every launch runs against and the host reads and
//! writes between launches. A released allocation keeps its object
//! number, so a later access through a stale pointer is a use after free,
//! never an access to whatever was allocated next.

use super::error::SimError;
use super::exec::Program;
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

    /// A new zeroed allocation of `bytes`, named for reports.
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
        let data =
            memory::zeroed(bytes).ok_or_else(|| fault(format!("cannot allocate {bytes} bytes")))?;
        self.objects.push(Buffer {
            name,
            space: crate::memory::Space::Global,
            data,
            writable: true,
            released: None,
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
        Ok(())
    }

    /// The bytes `[address, address + len)` for the host to read or write.
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
