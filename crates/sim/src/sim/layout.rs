//! Where a module's global variables live during a launch: `__shared__`
//! arrays at offsets of the per-block shared window, `__device__` and
//! `__constant__` variables (and string literals) as objects of their own.

use super::addr;
use crate::ir::{addrspace, GlobalId, Module};

/// A shared variable's place in the block's window.
#[derive(Clone, Debug)]
pub struct SharedVar {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

/// A module variable that becomes a memory object.
#[derive(Clone, Debug)]
pub struct ModuleVar {
    pub global: GlobalId,
    pub object: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// The encoded address of every global.
    pub global_addr: Vec<u64>,
    pub shared: Vec<SharedVar>,
    /// Where dynamic shared memory (`extern __shared__ T x[]`) starts.
    pub dynamic_shared: u64,
    pub vars: Vec<ModuleVar>,
    /// The first object number free for kernel arguments.
    pub next_object: u32,
}

/// Dynamic shared memory and every shared variable start 16-byte aligned,
/// enough for the widest vector access.
const SHARED_ALIGN: u64 = 16;

impl Layout {
    pub fn new(m: &Module) -> Layout {
        let mut layout = Layout {
            // Object 0 stays unused so a null pointer never names an object.
            next_object: 1,
            ..Layout::default()
        };
        let mut shared_end = 0u64;
        let mut dynamic = Vec::new();
        for (i, g) in m.globals.iter().enumerate() {
            let id = GlobalId::new(i);
            let size = m.types.size(g.value_ty);
            if g.addrspace == addrspace::SHARED {
                if size == 0 {
                    // `extern __shared__` arrays all alias the dynamic region.
                    dynamic.push(i);
                    layout.global_addr.push(0);
                    continue;
                }
                let align = m.types.get(g.value_ty).align.max(SHARED_ALIGN);
                let offset = shared_end.div_ceil(align) * align;
                shared_end = offset + size;
                layout.shared.push(SharedVar {
                    name: g.demangled.clone(),
                    offset,
                    size,
                });
                // The object number names the variable, so running off its
                // end into a neighbour is caught.
                let object = layout.shared.len() as u32;
                layout
                    .global_addr
                    .push(addr::encode(addr::SHARED, object, offset));
            } else {
                let object = layout.next_object;
                layout.next_object += 1;
                let tag = if g.addrspace == addrspace::CONSTANT {
                    addr::CONSTANT
                } else {
                    addr::GLOBAL
                };
                layout.vars.push(ModuleVar { global: id, object });
                layout.global_addr.push(addr::encode(tag, object, 0));
            }
        }
        layout.dynamic_shared = shared_end.div_ceil(SHARED_ALIGN) * SHARED_ALIGN;
        for i in dynamic {
            layout.global_addr[i] = addr::encode(addr::SHARED, 0, layout.dynamic_shared);
        }
        layout
    }

    /// Bytes of shared memory a block needs, with `dynamic` extra bytes.
    pub fn shared_bytes(&self, dynamic: u64) -> u64 {
        self.dynamic_shared.saturating_add(dynamic)
    }

    /// The shared variable a shared address's object number names (0 is
    /// the whole window: dynamic shared memory, or a cast integer).
    pub fn shared_var(&self, object: u32) -> Option<&SharedVar> {
        object
            .checked_sub(1)
            .and_then(|i| self.shared.get(i as usize))
    }
}
