//! The runtime's state between calls: the device module and memory, the
//! kernels and variables by the host addresses the program uses, the
//! error state, and a simulated clock for events. Every call is run to
//! its end here before it returns (there is one device and it is
//! synchronous); what CUDA would report later, at a synchronisation, is
//! kept as the sticky error.

use super::errors as e;
use super::managed::Managed;
use super::report::{Measured, Passed};
use super::sanitize::Reported;
use crate::ir::{FuncId, GlobalId, Module, TypeKind};
use crate::machine::Machine;
use crate::sim::device::HostFault;
use crate::sim::{offset_in_object, Budget, Device, ErrorKind, LaunchConfig, SimError};
use std::collections::HashMap;

/// A call that cannot go on: warpcheck's own failure, not the program's
/// (exit code 2 with the message).
#[derive(Debug)]
pub struct Fatal(pub String);

/// What one call returns: CUDA's code, or a fatal stop.
pub type CallResult = Result<i32, Fatal>;

/// `<<<grid, block, bytes, stream>>>` between its push and its launch.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u64,
}

/// Bandwidth of host-device copies for the simulated clock, bytes per
/// microsecond: some 25 GB/s, what a PCIe 4.0 x16 link moves in practice.
const COPY_BYTES_PER_US: f64 = 25_000.0;

pub struct Runtime {
    module: Option<Module>,
    /// The bitcode the module was read from: every translation unit of a
    /// program carries the same (linked) module.
    bitcode: Vec<u8>,
    device: Option<Device>,
    machine: Machine,
    /// Host stub address → kernel.
    kernels: HashMap<usize, FuncId>,
    /// Host shadow address → variable.
    variables: HashMap<usize, GlobalId>,
    /// Fat binaries registered and not yet unregistered.
    pub registered: usize,
    /// The error `cudaGetLastError` returns and resets.
    last: i32,
    /// A kernel fault: every later call returns it (as on a GPU, the
    /// context is lost).
    sticky: Option<i32>,
    /// Launch shapes pushed and not yet popped.
    configs: Vec<Shape>,
    /// `cudaSetupArgument`'s bytes for the next `cudaLaunch`, by offset.
    setup: Vec<(usize, Vec<u8>)>,
    allocations: u64,
    managed_allocations: u64,
    /// Each live allocation's size by its device address, for
    /// `cudaMemGetInfo`.
    sizes: HashMap<u64, u64>,
    /// `cudaMallocManaged`'s allocations.
    managed: Managed,
    /// Simulated microseconds since the start.
    pub clock_us: f64,
    /// Event handle → the clock when it was last recorded.
    events: HashMap<usize, Option<f64>>,
    next_handle: usize,
    /// The object each structure parameter's bytes go to.
    byval: HashMap<(FuncId, usize), u64>,
    pub measured: Measured,
    /// The sanitizer's findings reported so far.
    reported: Reported,
    pub arch: (i32, i32),
    /// Threads a launch's blocks run on (0: every core).
    threads: usize,
    /// warpcheck's own failure that stopped the run, for the report.
    pub fatal: Option<String>,
}

impl Runtime {
    pub fn new() -> Result<Runtime, Fatal> {
        let settings: Vec<String> = std::env::var(super::MACHINE_ENV)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(String::from)
            .collect();
        let machine = Machine::a100().with_settings(&settings).map_err(Fatal)?;
        let arch = std::env::var(super::ARCH_ENV)
            .ok()
            .and_then(|a| parse_arch(&a))
            .unwrap_or((8, 0));
        let threads = std::env::var(super::THREADS_ENV)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0);
        Ok(Runtime {
            module: None,
            bitcode: Vec::new(),
            device: None,
            machine,
            kernels: HashMap::new(),
            variables: HashMap::new(),
            registered: 0,
            last: e::SUCCESS,
            sticky: None,
            configs: Vec::new(),
            setup: Vec::new(),
            allocations: 0,
            managed_allocations: 0,
            sizes: HashMap::new(),
            managed: Managed::default(),
            clock_us: 0.0,
            events: HashMap::new(),
            next_handle: 1,
            byval: HashMap::new(),
            measured: Measured::default(),
            reported: Reported::default(),
            arch,
            threads,
            fatal: None,
        })
    }

    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// A translation unit's device module (the same bitcode for all of
    /// them), read on first sight.
    pub fn register_module(&mut self, bitcode: &[u8]) -> Result<(), Fatal> {
        self.registered += 1;
        if self.module.is_some() {
            return if bitcode == self.bitcode.as_slice() {
                Ok(())
            } else {
                Err(Fatal(
                    "the program's translation units carry different device modules \
                     (link them with `warpcheck run`, which gives each the same one)"
                        .into(),
                ))
            };
        }
        let m = crate::ir::llvm::load_bytes(bitcode, "device module")
            .map_err(|e| Fatal(format!("cannot read the device module: {}", e.message)))?;
        let device =
            Device::new(&m).map_err(|e| Fatal(format!("cannot set up device memory: {e}")))?;
        self.device = Some(device);
        self.module = Some(m);
        self.bitcode = bitcode.to_vec();
        Ok(())
    }

    /// `__cudaRegisterFunction`: the kernel named `name` is launched
    /// through the stub at `stub`.
    pub fn register_kernel(&mut self, stub: usize, name: &str) -> Result<(), Fatal> {
        let m = self.module.as_ref().ok_or_else(no_module)?;
        let id = m
            .funcs
            .iter()
            .position(|f| f.name == name && !f.is_declaration)
            .ok_or_else(|| Fatal(format!("the device module has no kernel {name}")))?;
        self.kernels.insert(stub, FuncId::new(id));
        Ok(())
    }

    /// `__cudaRegisterVar`: the variable named `name` is `shadow` on the
    /// host. One the module lacks (dropped as unused) stays unknown, and a
    /// copy to it fails as an invalid symbol.
    pub fn register_variable(&mut self, shadow: usize, name: &str) -> Result<(), Fatal> {
        let m = self.module.as_ref().ok_or_else(no_module)?;
        if let Some(i) = m.globals.iter().position(|g| g.name == name) {
            self.variables.insert(shadow, GlobalId::new(i));
        }
        Ok(())
    }

    /// The sticky error, if any: what every call returns after a fault.
    pub fn sticky(&self) -> Option<i32> {
        self.sticky
    }

    /// Records `code` as the last error and returns it.
    pub fn fail(&mut self, code: i32) -> i32 {
        if code != e::SUCCESS {
            self.last = code;
        }
        code
    }

    /// `cudaGetLastError` (`reset`) and `cudaPeekAtLastError`.
    pub fn last_error(&mut self, reset: bool) -> i32 {
        if let Some(s) = self.sticky {
            return s;
        }
        let code = self.last;
        if reset {
            self.last = e::SUCCESS;
        }
        code
    }

    pub fn reset(&mut self) {
        self.last = e::SUCCESS;
    }

    pub fn push_config(&mut self, shape: Shape) {
        self.configs.push(shape);
    }

    pub fn pop_config(&mut self) -> Option<Shape> {
        self.configs.pop()
    }

    pub fn setup_argument(&mut self, bytes: Vec<u8>, offset: usize) {
        self.setup.push((offset, bytes));
    }

    /// `cudaSetupArgument`'s arguments, in offset order, and forgotten.
    pub fn take_setup(&mut self) -> Vec<Vec<u8>> {
        let mut args = std::mem::take(&mut self.setup);
        args.sort_by_key(|a| a.0);
        args.into_iter().map(|a| a.1).collect()
    }

    /// The kernel a stub launches.
    pub fn kernel(&self, stub: usize) -> Option<FuncId> {
        self.kernels.get(&stub).copied()
    }

    /// Each parameter's size in bytes, in order.
    pub fn param_sizes(&self, kernel: FuncId) -> Vec<usize> {
        let Some(m) = &self.module else {
            return Vec::new();
        };
        m.func(kernel)
            .params
            .iter()
            .map(|p| m.types.size(p.byval.unwrap_or(p.ty)) as usize)
            .collect()
    }

    /// Runs a launch of `kernel` with its arguments' bytes, parameter by
    /// parameter. A fault is printed (as compute-sanitizer prints it) and
    /// becomes the sticky error; the launch itself succeeds, as an
    /// asynchronous launch does.
    pub fn launch(&mut self, kernel: FuncId, shape: Shape, args: &[Vec<u8>]) -> CallResult {
        if let Some(s) = self.sticky {
            return Ok(s);
        }
        let (Some(m), Some(device)) = (&self.module, &mut self.device) else {
            return Err(no_module());
        };
        let f = m.func(kernel);
        let mut words = Vec::with_capacity(f.params.len());
        let mut passed = Vec::with_capacity(f.params.len());
        for (i, (p, bytes)) in f.params.iter().zip(args).enumerate() {
            let name = p.name.clone().unwrap_or_else(|| format!("arg{i}"));
            if let Some(ty) = p.byval {
                // A structure argument: its bytes in an object of their
                // own, one per parameter, reused by later launches.
                let size = m.types.size(ty);
                let at = match self.byval.get(&(kernel, i)) {
                    Some(&a) => a,
                    None => {
                        let name = format!("parameter {i} of {}", f.demangled);
                        let a = device.allocate(name, size).map_err(|f| Fatal(f.message))?;
                        self.byval.insert((kernel, i), a);
                        a
                    }
                };
                let mut bytes = bytes.clone();
                self.managed.words_to_device(&mut bytes);
                let dst = device.write(at, size).map_err(|f| Fatal(f.message))?;
                let n = dst.len().min(bytes.len());
                dst[..n].copy_from_slice(&bytes[..n]);
                words.push(at);
                passed.push((name, Passed::Other));
                continue;
            }
            let mut w = [0u8; 8];
            let n = bytes.len().min(8);
            w[..n].copy_from_slice(&bytes[..n]);
            let word = u64::from_le_bytes(w);
            let (word, seen) = match m.types.kind(p.ty) {
                TypeKind::Int(bits) if *bits < 64 => {
                    let unused = 64 - bits;
                    let signed = ((word << unused) as i64) >> unused;
                    (word & ((1u64 << bits) - 1), Passed::Int(signed))
                }
                TypeKind::Int(_) => (word, Passed::Int(word as i64)),
                TypeKind::Ptr(_) => {
                    let word = self.managed.to_device(word);
                    (word, Passed::Offset(offset_in_object(word)))
                }
                _ => (word, Passed::Other),
            };
            words.push(word);
            passed.push((name, seen));
        }
        let config = LaunchConfig {
            grid: shape.grid,
            block: shape.block,
            dynamic_shared: shape.shared,
            budget: Budget {
                max_steps: None,
                ..Budget::default()
            },
            machine: Some(self.machine.clone()),
            sanitize: true,
            threads: self.threads,
            ..LaunchConfig::default()
        };
        let managed = |r: Result<(), HostFault>| {
            r.map_err(|f| Fatal(format!("managed memory: {}", f.message)))
        };
        managed(self.managed.before_launch(device))?;
        let result = device.launch(m, kernel, &config, &words);
        managed(self.managed.after_launch(device))?;
        let name = f.demangled.clone();
        match result {
            Ok(outcome) => {
                self.clock_us += outcome.cycles.as_ref().map_or(0.0, |c| c.microseconds);
                print_output(&outcome.output);
                self.measured.add(kernel, &outcome, &passed);
                (self.reported).launch(&name, &outcome.sanitizer, &mut self.measured);
                Ok(e::SUCCESS)
            }
            Err(err) => self.launch_failed(kernel, &name, err, &passed),
        }
    }

    fn launch_failed(
        &mut self,
        kernel: FuncId,
        name: &str,
        err: SimError,
        passed: &[(String, Passed)],
    ) -> CallResult {
        match err.kind {
            ErrorKind::Usage => {
                eprintln!("warpcheck run: cannot launch {name}: {}", err.message);
                Ok(self.fail(e::INVALID_CONFIGURATION))
            }
            ErrorKind::Unsupported => Err(Fatal(format!(
                "{name}: the simulator cannot run this kernel: {err}"
            ))),
            kind => {
                if let Some(partial) = &err.details.partial {
                    print_output(&partial.output);
                    self.measured.add(kernel, partial, passed);
                    (self.reported).launch(name, &partial.sanitizer, &mut self.measured);
                }
                eprintln!("========= warpcheck run: {} in {name}", kind.status());
                for line in err.to_string().lines() {
                    eprintln!("=========     {}", line.trim_start());
                }
                let code = match kind {
                    ErrorKind::Memory => e::ILLEGAL_ADDRESS,
                    ErrorKind::Trap if err.message.contains("assert") => e::ASSERT,
                    ErrorKind::Trap | ErrorKind::MemoryLimit => e::LAUNCH_FAILURE,
                    _ => e::LAUNCH_TIMEOUT,
                };
                self.measured.fault(name, &err);
                self.sticky = Some(code);
                Ok(e::SUCCESS)
            }
        }
    }

    pub fn allocate(&mut self, bytes: u64) -> Result<u64, i32> {
        let device = self.device.as_mut().ok_or(e::INVALID_VALUE)?;
        self.allocations += 1;
        let name = format!("cudaMalloc #{}", self.allocations);
        let at = device.allocate(name, bytes).map_err(|f| {
            eprintln!("warpcheck run: cudaMalloc({bytes}): {}", f.message);
            e::MEMORY_ALLOCATION
        })?;
        self.sizes.insert(at, bytes);
        Ok(at)
    }

    /// The bytes the program's live allocations hold.
    pub fn allocated(&self) -> u64 {
        self.sizes.values().sum()
    }

    /// `cudaMallocManaged`: a device object and the host pages the
    /// program gets, both zeroed. Its bytes count as written: a host
    /// store is not seen, so nothing of it is checked for uninitialized
    /// reads.
    pub fn allocate_managed(&mut self, bytes: u64) -> Result<u64, i32> {
        let device = self.device.as_mut().ok_or(e::INVALID_VALUE)?;
        self.managed_allocations += 1;
        let name = format!("cudaMallocManaged #{}", self.managed_allocations);
        let failed = |why: &str| {
            eprintln!("warpcheck run: cudaMallocManaged({bytes}): {why}");
            e::MEMORY_ALLOCATION
        };
        let at = device
            .allocate(name, bytes)
            .map_err(|f| failed(&f.message))?;
        device.write(at, bytes).map_err(|f| failed(&f.message))?;
        match self.managed.add(bytes, at) {
            Some(host) => {
                self.sizes.insert(at, bytes);
                Ok(host)
            }
            None => {
                let _ = device.release(at);
                Err(failed("cannot map host pages"))
            }
        }
    }

    /// Whether `[address, address + len)` is inside one live managed
    /// allocation (host memory to the runtime's copies and fills).
    pub fn managed(&self, address: u64, len: u64) -> bool {
        self.managed.holds(address, len)
    }

    pub fn release(&mut self, address: u64) -> i32 {
        let Some(device) = self.device.as_mut() else {
            return e::INVALID_VALUE;
        };
        let address = self.managed.remove(address).unwrap_or(address);
        match device.release(address) {
            Ok(()) => {
                self.sizes.remove(&address);
                e::SUCCESS
            }
            Err(f) => {
                eprintln!("warpcheck run: cudaFree: {}", f.message);
                self.fail(e::INVALID_DEVICE_POINTER)
            }
        }
    }

    /// Device bytes for a host-side copy from the device by `call`; an
    /// invalid range is reported and gives `cudaErrorInvalidValue`.
    pub fn device_bytes(&mut self, call: &str, address: u64, len: u64) -> Result<&mut [u8], i32> {
        self.device_access(call, |d| d.bytes(address, len))
    }

    /// Device bytes for a host-side copy or fill into the device by
    /// `call`: from now on they count as written.
    pub fn device_write(&mut self, call: &str, address: u64, len: u64) -> Result<&mut [u8], i32> {
        self.device_access(call, |d| d.write(address, len))
    }

    /// A copy within device memory by `call`, with what was never written
    /// of its source.
    pub fn device_copy(&mut self, call: &str, dst: u64, src: u64, len: u64) -> i32 {
        match self.device_access(call, |d| d.copy(dst, src, len)) {
            Ok(()) => e::SUCCESS,
            Err(code) => code,
        }
    }

    /// What `f` does to device memory for `call`; a fault is reported and
    /// gives `cudaErrorInvalidValue`.
    fn device_access<'a, T>(
        &'a mut self,
        call: &str,
        f: impl FnOnce(&'a mut Device) -> Result<T, HostFault>,
    ) -> Result<T, i32> {
        let device = self.device.as_mut().ok_or(e::INVALID_VALUE)?;
        match f(device) {
            Ok(b) => Ok(b),
            Err(fault) => {
                eprintln!("warpcheck run: {call}: {}", fault.message);
                self.last = e::INVALID_VALUE;
                Err(e::INVALID_VALUE)
            }
        }
    }

    /// The device address of the variable whose host shadow is `shadow`,
    /// with its size.
    pub fn symbol(&self, shadow: usize) -> Option<(u64, u64)> {
        let g = *self.variables.get(&shadow)?;
        let m = self.module.as_ref()?;
        let a = self.device.as_ref()?.variable(g)?;
        Some((a, m.types.size(m.global(g).value_ty)))
    }

    /// Moves the clock on by a copy of `bytes` between host and device.
    pub fn copied(&mut self, bytes: u64) {
        self.clock_us += bytes as f64 / COPY_BYTES_PER_US;
    }

    /// A fresh handle for a stream or event.
    pub fn handle(&mut self) -> usize {
        let h = self.next_handle;
        self.next_handle += 1;
        // Aligned like a pointer, and never null.
        h << 4
    }

    pub fn create_event(&mut self) -> usize {
        let h = self.handle();
        self.events.insert(h, None);
        h
    }

    pub fn record_event(&mut self, h: usize) -> i32 {
        match self.events.get_mut(&h) {
            Some(t) => {
                *t = Some(self.clock_us);
                e::SUCCESS
            }
            None => self.fail(e::INVALID_RESOURCE_HANDLE),
        }
    }

    pub fn destroy_event(&mut self, h: usize) -> i32 {
        match self.events.remove(&h) {
            Some(_) => e::SUCCESS,
            None => self.fail(e::INVALID_RESOURCE_HANDLE),
        }
    }

    /// Milliseconds from `start`'s recording to `end`'s.
    pub fn elapsed(&mut self, start: usize, end: usize) -> Result<f32, i32> {
        match (self.events.get(&start), self.events.get(&end)) {
            (Some(Some(a)), Some(Some(b))) => Ok(((b - a) / 1000.0) as f32),
            (Some(_), Some(_)) => Err(self.fail(e::NOT_READY)),
            _ => Err(self.fail(e::INVALID_RESOURCE_HANDLE)),
        }
    }

    /// Writes the report to the file `warpcheck run` named, if any. A
    /// report that cannot be written is said on stderr: the program's own
    /// results stand.
    pub fn write_report(&self) {
        let Some(path) = std::env::var_os(super::REPORT_ENV) else {
            return;
        };
        let json = self
            .measured
            .json(self.module.as_ref(), self.clock_us, self.fatal.clone());
        let text = serde_json::to_string(&json).unwrap_or_default();
        if let Err(err) = std::fs::write(&path, text) {
            eprintln!(
                "warpcheck run: cannot write the report to {}: {err}",
                std::path::Path::new(&path).display()
            );
        }
    }

    pub fn event_known(&self, h: usize) -> bool {
        self.events.contains_key(&h)
    }
}

fn no_module() -> Fatal {
    Fatal("no device module was registered (build the program with `warpcheck run`)".into())
}

/// Device `printf` lines go to the program's own output, as on a GPU.
fn print_output(lines: &[String]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for l in lines {
        let _ = out.write_all(l.as_bytes());
    }
    let _ = out.flush();
}

/// `sm_80` → `(8, 0)`.
fn parse_arch(arch: &str) -> Option<(i32, i32)> {
    let digits = arch.strip_prefix("sm_")?;
    let n: i32 = digits
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    Some((n / 10, n % 10))
}

#[cfg(test)]
mod tests {
    use super::parse_arch;

    #[test]
    fn reads_the_arch() {
        assert_eq!(parse_arch("sm_80"), Some((8, 0)));
        assert_eq!(parse_arch("sm_90a"), Some((9, 0)));
        assert_eq!(parse_arch("compute_75"), None);
    }
}
