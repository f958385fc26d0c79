//! The sanitizer of a launch, for `warpcheck run`: shared-memory races
//! (`race`) and reads of device memory nothing wrote (`initcheck`),
//! checked at every access the interpreter performs, beside the bounds
//! checks that always run. Neither stops the launch: what they find is
//! reported with the launch's outcome, once per pair of accesses or per
//! access, with source lines, threads and the block.

use super::addr;
use super::code::Requests;
use super::initcheck::{self, RawRead};
use super::memory::{self, Buffer};
use super::race::{self, AccessKind, Me, RawRace, WarpSyncs};
use crate::ir::{Module, Position};

/// What the running launch checks, and what it found.
#[derive(Default, Debug)]
pub struct Sanitizer {
    pub on: bool,
    /// Some buffer had unwritten bytes when the launch began (a store
    /// only ever writes more).
    unwritten: bool,
    /// The last barrier phase handed out in the launch.
    phase: u32,
    /// The running block's shared-memory shadow.
    pub shadow: race::Shadow,
    races: race::Log,
    reads: initcheck::Log,
    block: [u32; 3],
}

impl Sanitizer {
    pub fn new(on: bool, objects: &[Buffer]) -> Sanitizer {
        Sanitizer {
            on,
            unwritten: on && objects.iter().any(|b| b.unwritten.is_some()),
            ..Sanitizer::default()
        }
    }

    /// The same checks for blocks run on another thread, with nothing
    /// found yet.
    pub fn fork(&self) -> Sanitizer {
        Sanitizer {
            on: self.on,
            unwritten: self.unwritten,
            phase: self.phase,
            ..Sanitizer::default()
        }
    }

    /// Adds what a fork found, after what this one found (forks absorbed
    /// in the order of their blocks), each pair or place still once.
    pub fn absorb(&mut self, fork: Sanitizer) {
        self.races.absorb(fork.races);
        self.reads.absorb(fork.reads);
    }

    /// A block starts with `shared` bytes of shared memory.
    pub fn start_block(&mut self, block: [u32; 3], shared: usize) {
        if self.on {
            self.block = block;
            self.races.block = block;
            let phase = self.next_phase();
            self.shadow.start(shared, phase);
        }
    }

    /// The running block passed a barrier.
    pub fn barrier(&mut self) {
        if self.on {
            let phase = self.next_phase();
            self.shadow.next_phase(phase);
        }
    }

    /// A block set aside runs again, with its shadow.
    pub fn resume(&mut self, block: [u32; 3], shadow: race::Shadow) {
        self.block = block;
        self.races.block = block;
        self.shadow = shadow;
    }

    fn next_phase(&mut self) -> u32 {
        // 2^32 barrier phases in one launch would take days; were they
        // reached, race checking stops rather than mistaking old phases
        // for new ones.
        match self.phase.checked_add(1) {
            Some(p) => self.phase = p,
            None => self.on = false,
        }
        self.phase
    }

    /// Whether an access at `address` has anything to check: shared
    /// memory, or a global buffer with unwritten bytes.
    #[inline]
    /// Whether no access of the launch needs looking at (the fast paths
    /// then skip [`Sanitizer::wants`] lane by lane).
    pub fn idle(&self) -> bool {
        !self.on && !self.unwritten
    }

    pub fn wants(&self, objects: &[Buffer], address: u64) -> bool {
        match addr::tag(address) {
            addr::SHARED => self.on,
            addr::GLOBAL if self.unwritten => objects
                .get(addr::object(address) as usize)
                .is_some_and(|b| b.unwritten.is_some()),
            _ => false,
        }
    }

    /// Lane `me` read `len` bytes at `address`. Returns whether the same
    /// read by further lanes of the warp needs applying for its last lane
    /// only (see [`race::Shadow::access`]; elsewhere than shared memory a
    /// repeat finds what the first lane found).
    #[inline]
    pub fn read(
        &mut self,
        objects: &[Buffer],
        address: u64,
        len: usize,
        me: &Me,
        syncs: &WarpSyncs,
    ) -> bool {
        match addr::tag(address) {
            addr::SHARED => {
                let off = addr::offset(address);
                self.shadow.access(off, len, me, syncs, &mut self.races)
            }
            addr::GLOBAL if self.unwritten => {
                self.global_read(objects, address, len, me);
                true
            }
            _ => true,
        }
    }

    /// Lane `me` wrote (or, atomically, read and wrote) `len` bytes at
    /// `address`.
    #[inline]
    pub fn write(
        &mut self,
        objects: &mut [Buffer],
        address: u64,
        len: usize,
        me: &Me,
        syncs: &WarpSyncs,
    ) {
        match addr::tag(address) {
            addr::SHARED => {
                let off = addr::offset(address);
                self.shadow.access(off, len, me, syncs, &mut self.races);
            }
            addr::GLOBAL if self.unwritten => {
                if me.kind == AccessKind::Atomic {
                    self.global_read(objects, address, len, me);
                }
                memory::written(objects, address, len as u64);
            }
            _ => {}
        }
    }

    fn global_read(&mut self, objects: &[Buffer], address: u64, len: usize, me: &Me) {
        if let Some(first) = memory::unwritten(objects, address, len as u64) {
            self.reads.add(RawRead {
                access: me.access,
                thread: me.thread,
                block: self.block,
                address,
                bytes: len as u32,
                first,
                atomic: me.kind == AccessKind::Atomic,
            });
        }
    }

    /// What the launch found, placed in the source.
    pub fn findings(
        &mut self,
        m: &Module,
        requests: &[Requests],
        block_dim: [u32; 3],
        objects: &[Buffer],
    ) -> Findings {
        let place = |access: u32| {
            let (f, i) = requests.get(access as usize)?.inst?;
            let pos = m.inst_pos(m.func(f), i)?;
            Some(Position::resolve(m, &pos))
        };
        let thread = |linear: u32| {
            let [bx, by, _] = block_dim;
            [linear % bx, (linear / bx) % by, linear / (bx * by)]
        };
        let side = |s: race::Side| RaceSide {
            pos: place(s.access),
            thread: thread(s.thread),
            kind: s.kind,
        };
        let races = std::mem::take(&mut self.races.found)
            .into_iter()
            .map(|r: RawRace| Race {
                same_warp: r.same_warp(),
                first: side(r.first),
                second: side(r.second),
                block: r.block,
            })
            .collect();
        let reads = std::mem::take(&mut self.reads.found)
            .into_iter()
            .map(|r| {
                let b = &objects[addr::object(r.address) as usize];
                UnwrittenRead {
                    pos: place(r.access),
                    thread: thread(r.thread),
                    block: r.block,
                    bytes: r.bytes,
                    atomic: r.atomic,
                    buffer: b.name.clone(),
                    size: b.data.len() as u64,
                    offset: r.first,
                }
            })
            .collect();
        Findings { races, reads }
    }
}

/// What a launch's sanitizer found.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    pub races: Vec<Race>,
    pub reads: Vec<UnwrittenRead>,
}

/// One access of a race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceSide {
    pub pos: Option<Position>,
    pub thread: [u32; 3],
    pub kind: AccessKind,
}

/// Two accesses to the same shared byte that nothing orders: `first` ran
/// first in the simulation, and a GPU may run them either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    pub first: RaceSide,
    pub second: RaceSide,
    pub block: [u32; 3],
    /// Both threads are lanes of one warp (a `__syncwarp` would order
    /// them).
    pub same_warp: bool,
}

/// `file:line:col`, or `an unknown line` without debug information.
pub fn place(pos: &Option<Position>) -> String {
    pos.as_ref().map_or_else(
        || "an unknown line".to_string(),
        |p| format!("{}:{}:{}", p.file, p.line, p.col),
    )
}

fn dims(d: [u32; 3]) -> String {
    format!("({},{},{})", d[0], d[1], d[2])
}

impl Race {
    /// `a.cu:14:5 write by thread (3,0,0) and a.cu:15:9 read by thread
    /// (35,0,0) in block (0,0,0), with no barrier between`.
    pub fn describe(&self) -> String {
        format!("{} {}", place(&self.first.pos), self.describe_from_first())
    }

    /// The same without the first access's place (where a report puts
    /// the finding): `write by thread (3,0,0) and a.cu:15:9 read …`.
    pub fn describe_from_first(&self) -> String {
        let who = |s: &RaceSide| format!("{} by thread {}", s.kind.name(), dims(s.thread));
        format!(
            "{} and {} {} in block {}, with no {} between",
            who(&self.first),
            place(&self.second.pos),
            who(&self.second),
            dims(self.block),
            if self.same_warp {
                "__syncwarp or barrier"
            } else {
                "barrier"
            }
        )
    }
}

/// A load or atomic of device memory that nothing had written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnwrittenRead {
    pub pos: Option<Position>,
    pub thread: [u32; 3],
    pub block: [u32; 3],
    pub bytes: u32,
    pub atomic: bool,
    /// The allocation, its size and the first unwritten byte's offset.
    pub buffer: String,
    pub size: u64,
    pub offset: u64,
}

impl UnwrittenRead {
    /// `uninitialized __global__ read of size 4 bytes: offset 4000 of
    /// 'cudaMalloc #1' (4004 bytes) was never written`.
    pub fn describe(&self) -> String {
        format!(
            "uninitialized __global__ {} of size {} bytes: offset {} of '{}' ({} bytes) was never written",
            if self.atomic { "atomic" } else { "read" },
            self.bytes,
            self.offset,
            self.buffer,
            self.size
        )
    }

    pub fn who(&self) -> String {
        format!(
            "by thread {} in block {}",
            dims(self.thread),
            dims(self.block)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{addrspace, FuncId, Opcode, TypeKind, Value};
    use crate::sim::{ArgValue, BufferSpec, Device, Init, LaunchConfig};

    /// `s[t] = t; <sync>; out[t] = s[t ^ other]` in a block of 64.
    fn exchange(sync: Option<&str>, other: i64) -> crate::ir::Module {
        let mut mb = ModuleBuilder::new();
        let (i32t, i64t, void) = (mb.int(32), mb.int(64), mb.void());
        let generic = mb.ptr(addrspace::GENERIC);
        let arr = mb.ty(TypeKind::Array(i32t, 64));
        let s = mb.global("s", arr, addrspace::SHARED);
        let s_generic = mb.const_expr(Opcode::AddrSpaceCast, generic, vec![s]);
        let (zero, flip, all) = (
            mb.const_int(64, 0),
            mb.const_int(64, other),
            mb.const_int(32, -1),
        );
        let mut fb = mb.define("k", &[generic], void);
        fb.kernel();
        let t = fb.sreg("tid.x");
        let t64 = fb.cast(Opcode::ZExt, t, i64t);
        let p = fb.gep(arr, s_generic, &[zero, t64]);
        fb.store(t, p);
        match sync {
            Some("llvm.nvvm.bar.warp.sync") => {
                fb.intrinsic("llvm.nvvm.bar.warp.sync", void, vec![all]);
            }
            Some(name) => {
                fb.intrinsic(name, void, vec![]);
            }
            None => {}
        }
        let u = fb.binary(Opcode::Xor, t64, flip);
        let q = fb.gep(arr, s_generic, &[zero, u]);
        let v = fb.load(i32t, q);
        let o = fb.gep(i32t, Value::Arg(0), &[t64]);
        fb.store(v, o);
        fb.ret(None);
        mb.finish()
    }

    fn races(sync: Option<&str>, other: i64, sanitize: bool) -> Vec<Race> {
        let m = exchange(sync, other);
        let config = LaunchConfig {
            block: [64, 1, 1],
            sanitize,
            ..LaunchConfig::default()
        };
        let out = (
            "arg0".to_string(),
            ArgValue::Buffer(BufferSpec {
                bytes: 256,
                init: Init::Zero,
                elem: None,
            }),
        );
        let o = crate::sim::simulate(&m, FuncId(0), &config, &[out]).unwrap();
        assert!(o.sanitizer.reads.is_empty());
        o.sanitizer.races
    }

    /// Lanes 2k and 2k + 1 swap through shared memory in one warp: every
    /// lane stores, then every lane loads, lowest first, so the first race
    /// met is thread 1's store of `s[1]` and thread 0's load of it (one
    /// pair of accesses, reported once).
    #[test]
    fn lanes_that_swap_race_unless_a_syncwarp_or_barrier_orders_them() {
        let found = races(None, 1, true);
        assert_eq!(found.len(), 1, "{found:?}");
        let r = &found[0];
        assert!(r.same_warp);
        assert_eq!(
            (r.first.kind, r.first.thread),
            (AccessKind::Write, [1, 0, 0])
        );
        assert_eq!(
            (r.second.kind, r.second.thread),
            (AccessKind::Read, [0, 0, 0])
        );
        assert!(r
            .describe()
            .ends_with("with no __syncwarp or barrier between"));
        assert!(races(Some("llvm.nvvm.bar.warp.sync"), 1, true).is_empty());
        assert!(races(Some("llvm.nvvm.barrier0"), 1, true).is_empty());
        // Not checked unless asked.
        assert!(races(None, 1, false).is_empty());
    }

    /// `t ^ 32` is a thread of the other warp: `__syncwarp` does not order
    /// it, a block barrier does. Warp 0 runs first: thread 32's store of
    /// `s[32]` comes after thread 0's read of it.
    #[test]
    fn a_syncwarp_does_not_order_two_warps() {
        let found = races(Some("llvm.nvvm.bar.warp.sync"), 32, true);
        assert_eq!(found.len(), 1, "{found:?}");
        let r = &found[0];
        assert!(!r.same_warp);
        assert_eq!(
            (r.first.kind, r.first.thread),
            (AccessKind::Read, [0, 0, 0])
        );
        assert_eq!(
            (r.second.kind, r.second.thread),
            (AccessKind::Write, [32, 0, 0])
        );
        assert!(r.describe().ends_with("with no barrier between"));
        assert!(races(Some("llvm.nvvm.barrier0"), 32, true).is_empty());
    }

    /// `out[t] = in[t]` for 16 threads, on a device where the host wrote
    /// only the first 10 ints of `in`: thread 10 is the first to read an
    /// unwritten byte (offset 40), reported once for the access.
    #[test]
    fn a_read_of_bytes_nothing_wrote_is_found_once() {
        let mut mb = ModuleBuilder::new();
        let (i32t, i64t, void) = (mb.int(32), mb.int(64), mb.void());
        let generic = mb.ptr(addrspace::GENERIC);
        let mut fb = mb.define("copy", &[generic, generic], void);
        fb.kernel();
        let t = fb.sreg("tid.x");
        let t64 = fb.cast(Opcode::ZExt, t, i64t);
        let p = fb.gep(i32t, Value::Arg(0), &[t64]);
        let v = fb.load(i32t, p);
        let q = fb.gep(i32t, Value::Arg(1), &[t64]);
        fb.store(v, q);
        fb.ret(None);
        let m = mb.finish();
        let mut d = Device::new(&m).unwrap();
        let input = d.allocate("in".into(), 64).unwrap();
        let output = d.allocate("out".into(), 64).unwrap();
        d.write(input, 40).unwrap().fill(1);
        let config = LaunchConfig {
            block: [16, 1, 1],
            sanitize: true,
            ..LaunchConfig::default()
        };
        let o = d.launch(&m, FuncId(0), &config, &[input, output]).unwrap();
        let reads = &o.sanitizer.reads;
        assert_eq!(reads.len(), 1, "{reads:?}");
        assert_eq!((reads[0].thread, reads[0].offset), ([10, 0, 0], 40));
        assert_eq!((reads[0].buffer.as_str(), reads[0].size), ("in", 64));
        // The kernel wrote all of `out`, which a second launch reads.
        let again = d.launch(&m, FuncId(0), &config, &[output, input]).unwrap();
        assert!(again.sanitizer.reads.is_empty());
    }
}
