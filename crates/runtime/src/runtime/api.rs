//! The C entry points: the CUDA runtime functions a program's host code
//! calls, and the registration hooks clang's generated code calls before
//! `main`. Each takes the runtime's lock, converts its pointers and hands
//! the work to [`Runtime`]. warpcheck's own failures end the program with
//! exit code 2 and a message naming the call; a panic ends it with 3.
//!
//! Device pointers are the simulator's encoded addresses (a space tag in
//! the top byte, never set in a host pointer): the program may add to
//! them but never dereference them, as on a GPU.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

use super::container;
use super::errors as e;
use super::state::{CallResult, Fatal, Runtime, Shape};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, MutexGuard};

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// `dim3`, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dim3 {
    x: c_uint,
    y: c_uint,
    z: c_uint,
}

impl Dim3 {
    fn array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// What clang's `__cuda_fatbin_wrapper` holds.
#[repr(C)]
pub struct FatbinWrapper {
    magic: c_int,
    version: c_int,
    data: *const u8,
    unused: *const c_void,
}

/// The fields of `cudaDeviceProp` in warpcheck's header, in its order.
#[repr(C)]
pub struct DeviceProp {
    name: [c_char; 256],
    total_global_mem: usize,
    shared_mem_per_block: usize,
    regs_per_block: c_int,
    warp_size: c_int,
    mem_pitch: usize,
    max_threads_per_block: c_int,
    max_threads_dim: [c_int; 3],
    max_grid_size: [c_int; 3],
    clock_rate: c_int,
    total_const_mem: usize,
    major: c_int,
    minor: c_int,
    multi_processor_count: c_int,
    memory_clock_rate: c_int,
    memory_bus_width: c_int,
    l2_cache_size: c_int,
    max_threads_per_multi_processor: c_int,
    shared_mem_per_multiprocessor: usize,
    regs_per_multiprocessor: c_int,
    concurrent_kernels: c_int,
    unified_addressing: c_int,
    managed_memory: c_int,
    texture_alignment: usize,
    device_overlap: c_int,
}

const MEMCPY_HOST_TO_HOST: c_int = 0;
const MEMCPY_HOST_TO_DEVICE: c_int = 1;
const MEMCPY_DEVICE_TO_HOST: c_int = 2;
const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
const MEMCPY_DEFAULT: c_int = 4;
const MEM_ATTACH_GLOBAL: c_uint = 1;
const MEM_ATTACH_HOST: c_uint = 2;
/// `cudaCpuDeviceId`: the host, as a prefetch's destination.
const CPU_DEVICE_ID: c_int = -1;

fn lock() -> MutexGuard<'static, Option<Runtime>> {
    RUNTIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on the runtime (made on first use). After a kernel fault,
/// `sticky` calls return its error without doing anything, as CUDA's do.
fn enter(call: &str, sticky: bool, f: impl FnOnce(&mut Runtime) -> CallResult) -> c_int {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut guard = lock();
        if guard.is_none() {
            *guard = Some(Runtime::new()?);
        }
        let rt = guard.as_mut().expect("made above");
        if let Some(code) = rt.sticky().filter(|_| sticky) {
            return Ok(code);
        }
        let r = f(rt);
        if let Err(Fatal(m)) = &r {
            rt.fatal = Some(format!("{call}: {m}"));
        }
        r
    }));
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(Fatal(message))) => {
            eprintln!("warpcheck run: error: {call}: {message}");
            // The lock is free again.
            if let Some(rt) = lock().as_ref() {
                rt.write_report();
            }
            std::process::exit(2)
        }
        Err(_) => {
            eprintln!("warpcheck run: internal error in {call} (a bug in warpcheck)");
            std::process::exit(3)
        }
    }
}

/// A CUDA call: `f` gives its error code, which becomes the last error.
fn call(name: &str, f: impl FnOnce(&mut Runtime) -> CallResult) -> c_int {
    enter(name, true, |rt| {
        let code = f(rt)?;
        Ok(rt.fail(code))
    })
}

/// Stores an out-parameter: `cudaErrorInvalidValue` for a null one.
unsafe fn put<T>(out: *mut T, v: T) -> i32 {
    match out.as_mut() {
        Some(o) => {
            *o = v;
            e::SUCCESS
        }
        None => e::INVALID_VALUE,
    }
}

fn device_ptr(p: *const c_void) -> bool {
    (p as u64) >> 56 != 0
}

unsafe fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

// ---------------------------------------------------------------------------
// Registration, called by clang's module constructor and destructor.

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(
    wrapper: *const FatbinWrapper,
) -> *mut *mut c_void {
    enter("__cudaRegisterFatBinary", false, |rt| {
        let data = wrapper.as_ref().map_or(std::ptr::null(), |w| w.data);
        if data.is_null() {
            return Err(Fatal("no device module in the program".into()));
        }
        let header = std::slice::from_raw_parts(data, container::HEADER_BYTES);
        let Some(len) = container::length(header) else {
            return Err(Fatal(
                "the program carries a GPU binary, not a warpcheck device module: \
                 build it with `warpcheck run`"
                    .into(),
            ));
        };
        let bitcode = std::slice::from_raw_parts(data.add(container::HEADER_BYTES), len as usize);
        rt.register_module(bitcode)?;
        Ok(0)
    });
    wrapper as *mut *mut c_void
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {
    let mut guard = lock();
    let Some(rt) = guard.as_mut() else { return };
    rt.registered = rt.registered.saturating_sub(1);
    if rt.registered == 0 {
        rt.write_report();
    }
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFunction(
    _handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _bdim: *mut c_void,
    _gdim: *mut c_void,
    _wsize: *mut c_int,
) -> c_int {
    let name = c_str(device_name);
    enter("__cudaRegisterFunction", false, |rt| {
        rt.register_kernel(host_fun as usize, &name)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterVar(
    _handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    _size: c_int,
    _constant: c_int,
    _global: c_int,
) {
    let name = c_str(device_name);
    enter("__cudaRegisterVar", false, |rt| {
        rt.register_variable(host_var as usize, &name)?;
        Ok(0)
    });
}

// ---------------------------------------------------------------------------
// Launches.

#[no_mangle]
pub unsafe extern "C" fn __cudaPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    _stream: *mut c_void,
) -> c_uint {
    enter("__cudaPushCallConfiguration", false, |rt| {
        rt.push_config(shape(grid, block, shared));
        Ok(0)
    }) as c_uint
}

#[no_mangle]
pub unsafe extern "C" fn __cudaPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared: *mut usize,
    stream: *mut *mut c_void,
) -> c_int {
    enter("__cudaPopCallConfiguration", false, |rt| {
        let Some(s) = rt.pop_config() else {
            return Ok(e::INVALID_CONFIGURATION);
        };
        let dim = |a: [u32; 3]| Dim3 {
            x: a[0],
            y: a[1],
            z: a[2],
        };
        *grid = dim(s.grid);
        *block = dim(s.block);
        *shared = s.shared as usize;
        if !stream.is_null() {
            *stream = std::ptr::null_mut();
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaConfigureCall(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    _stream: *mut c_void,
) -> c_int {
    call("cudaConfigureCall", |rt| {
        rt.push_config(shape(grid, block, shared));
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaSetupArgument(
    arg: *const c_void,
    size: usize,
    offset: usize,
) -> c_int {
    call("cudaSetupArgument", |rt| {
        let bytes = std::slice::from_raw_parts(arg as *const u8, size).to_vec();
        rt.setup_argument(bytes, offset);
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaLaunch(func: *const c_void) -> c_int {
    call("cudaLaunch", |rt| {
        let args = rt.take_setup();
        let Some(s) = rt.pop_config() else {
            return Ok(e::INVALID_CONFIGURATION);
        };
        match rt.kernel(func as usize) {
            Some(k) => rt.launch(k, s, &args),
            None => Ok(e::INVALID_DEVICE_FUNCTION),
        }
    })
}

unsafe fn launch_kernel(
    name: &str,
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
) -> c_int {
    call(name, |rt| {
        let Some(k) = rt.kernel(func as usize) else {
            return Ok(e::INVALID_DEVICE_FUNCTION);
        };
        let sizes = rt.param_sizes(k);
        if !sizes.is_empty() && args.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        let bytes: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| std::slice::from_raw_parts(*args.add(i) as *const u8, n).to_vec())
            .collect();
        rt.launch(k, shape(grid, block, shared), &bytes)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    _stream: *mut c_void,
) -> c_int {
    launch_kernel("cudaLaunchKernel", func, grid, block, args, shared)
}

/// Blocks run one after another until each reaches the grid barrier, so a
/// cooperative launch needs nothing more.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchCooperativeKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    _stream: *mut c_void,
) -> c_int {
    launch_kernel(
        "cudaLaunchCooperativeKernel",
        func,
        grid,
        block,
        args,
        shared,
    )
}

fn shape(grid: Dim3, block: Dim3, shared: usize) -> Shape {
    Shape {
        grid: grid.array(),
        block: block.array(),
        shared: shared as u64,
    }
}

// ---------------------------------------------------------------------------
// Memory.

#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> c_int {
    call("cudaMalloc", |rt| {
        if ptr.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        Ok(match rt.allocate(size as u64) {
            Ok(a) => {
                *ptr = a as *mut c_void;
                e::SUCCESS
            }
            Err(code) => code,
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> c_int {
    // Rows start 512-byte aligned, as the texture alignment of current
    // GPUs has them.
    let row = width.div_ceil(512).max(1) * 512;
    if !pitch.is_null() {
        *pitch = row;
    }
    cudaMalloc(ptr, row.saturating_mul(height))
}

#[no_mangle]
pub unsafe extern "C" fn cudaFree(ptr: *mut c_void) -> c_int {
    call("cudaFree", |rt| {
        Ok(if ptr.is_null() {
            e::SUCCESS
        } else {
            rt.release(ptr as u64)
        })
    })
}

/// `cudaMallocManaged`: a pointer the host code uses directly and
/// kernels through the simulator (`managed`). Both attach flags give the
/// same memory: every launch here runs to its end before the host goes on.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> c_int {
    call("cudaMallocManaged", |rt| {
        if ptr.is_null() || size == 0 || !matches!(flags, MEM_ATTACH_GLOBAL | MEM_ATTACH_HOST) {
            return Ok(e::INVALID_VALUE);
        }
        Ok(match rt.allocate_managed(size as u64) {
            Ok(a) => {
                *ptr = a as *mut c_void;
                e::SUCCESS
            }
            Err(code) => code,
        })
    })
}

/// `cudaMemPrefetchAsync` and `cudaMemAdvise` only check their range:
/// where managed memory lives decides nothing here but time, and copies
/// in and out of launches are not timed.
fn managed_hint(name: &str, p: *const c_void, n: usize, device: c_int) -> c_int {
    call(name, |rt| {
        Ok(if device != 0 && device != CPU_DEVICE_ID {
            e::INVALID_DEVICE
        } else if rt.managed(p as u64, n as u64) {
            e::SUCCESS
        } else {
            e::INVALID_VALUE
        })
    })
}

#[no_mangle]
pub extern "C" fn cudaMemPrefetchAsync(
    p: *const c_void,
    n: usize,
    device: c_int,
    _stream: *mut c_void,
) -> c_int {
    managed_hint("cudaMemPrefetchAsync", p, n, device)
}

#[no_mangle]
pub extern "C" fn cudaMemAdvise(p: *const c_void, n: usize, advice: c_int, device: c_int) -> c_int {
    // cudaMemAdviseSetReadMostly (1) to cudaMemAdviseUnsetAccessedBy (6).
    if !(1..=6).contains(&advice) {
        return call("cudaMemAdvise", |_| Ok(e::INVALID_VALUE));
    }
    managed_hint("cudaMemAdvise", p, n, device)
}

/// `cudaMemGetInfo`: the machine's global memory (as the properties
/// report it), less what the program's live allocations hold.
#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> c_int {
    call("cudaMemGetInfo", |rt| {
        let all = properties(rt).total_global_mem;
        let used = usize::try_from(rt.allocated()).unwrap_or(usize::MAX);
        if free.is_null() || total.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        *free = all.saturating_sub(used);
        *total = all;
        Ok(e::SUCCESS)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> c_int {
    call("cudaMallocHost", |_| {
        if ptr.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        let p = libc::malloc(size.max(1));
        if p.is_null() {
            return Ok(e::MEMORY_ALLOCATION);
        }
        *ptr = p;
        Ok(e::SUCCESS)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaHostAlloc(
    ptr: *mut *mut c_void,
    size: usize,
    _flags: c_uint,
) -> c_int {
    cudaMallocHost(ptr, size)
}

#[no_mangle]
pub unsafe extern "C" fn cudaFreeHost(ptr: *mut c_void) -> c_int {
    call("cudaFreeHost", |_| {
        libc::free(ptr);
        Ok(e::SUCCESS)
    })
}

/// One copy of `n` bytes; `kind` as `cudaMemcpyKind`.
unsafe fn copy(
    rt: &mut Runtime,
    call: &str,
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: c_int,
) -> i32 {
    let (to_dev, from_dev) = (device_ptr(dst), device_ptr(src));
    // Managed memory is host memory to the copy, and either side to its
    // direction.
    let dev_side = |dev: bool, p: *const c_void| dev || rt.managed(p as u64, n as u64);
    let (dst_dev_side, src_dev_side) = (dev_side(to_dev, dst), dev_side(from_dev, src));
    let agrees = match kind {
        MEMCPY_HOST_TO_HOST => !to_dev && !from_dev,
        MEMCPY_HOST_TO_DEVICE => dst_dev_side && !from_dev,
        MEMCPY_DEVICE_TO_HOST => !to_dev && src_dev_side,
        MEMCPY_DEVICE_TO_DEVICE => dst_dev_side && src_dev_side,
        MEMCPY_DEFAULT => true,
        _ => return e::INVALID_MEMCPY_DIRECTION,
    };
    if !agrees {
        eprintln!("warpcheck run: {call}: the pointers do not match the copy's direction ({kind})");
        return e::INVALID_VALUE;
    }
    if n == 0 {
        return e::SUCCESS;
    }
    if (!to_dev && dst.is_null()) || (!from_dev && src.is_null()) {
        return e::INVALID_VALUE;
    }
    match (to_dev, from_dev) {
        (false, false) => std::ptr::copy(src as *const u8, dst as *mut u8, n),
        (true, false) => {
            let host = std::slice::from_raw_parts(src as *const u8, n);
            match rt.device_write(call, dst as u64, n as u64) {
                Ok(d) => d.copy_from_slice(host),
                Err(code) => return code,
            }
            rt.copied(n as u64);
        }
        (false, true) => {
            let host = std::slice::from_raw_parts_mut(dst as *mut u8, n);
            match rt.device_bytes(call, src as u64, n as u64) {
                Ok(d) => host.copy_from_slice(d),
                Err(code) => return code,
            }
            rt.copied(n as u64);
        }
        (true, true) => {
            let code = rt.device_copy(call, dst as u64, src as u64, n as u64);
            if code != e::SUCCESS {
                return code;
            }
        }
    }
    e::SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: c_int,
) -> c_int {
    call("cudaMemcpy", |rt| {
        Ok(copy(rt, "cudaMemcpy", dst, src, n, kind))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: c_int,
    _stream: *mut c_void,
) -> c_int {
    call("cudaMemcpyAsync", |rt| {
        Ok(copy(rt, "cudaMemcpyAsync", dst, src, n, kind))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> c_int {
    call("cudaMemcpy2D", |rt| {
        if width > dpitch || width > spitch {
            return Ok(e::INVALID_VALUE);
        }
        Ok(copy_rows(rt, "cudaMemcpy2D", height, width, kind, |row| {
            (offset(dst, row * dpitch), offset(src, row * spitch))
        }))
    })
}

/// `rows` copies of `width` bytes, row `r` from `at(r).1` to `at(r).0`;
/// the first that fails decides the result.
unsafe fn copy_rows(
    rt: &mut Runtime,
    name: &str,
    rows: usize,
    width: usize,
    kind: c_int,
    at: impl Fn(usize) -> (*mut c_void, *mut c_void),
) -> i32 {
    for row in 0..rows {
        let (d, s) = at(row);
        let code = copy(rt, name, d, s, width, kind);
        if code != e::SUCCESS {
            return code;
        }
    }
    e::SUCCESS
}

fn offset(p: *const c_void, bytes: usize) -> *mut c_void {
    (p as *const u8).wrapping_add(bytes) as *mut c_void
}

/// `cudaPos`, `cudaExtent` and `cudaPitchedPtr` of warpcheck's header.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Pos {
    x: usize,
    y: usize,
    z: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Extent {
    width: usize,
    height: usize,
    depth: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PitchedPtr {
    ptr: *mut c_void,
    pitch: usize,
    xsize: usize,
    ysize: usize,
}

/// `cudaMemcpy3DParms`.
#[repr(C)]
pub struct Memcpy3DParms {
    src_array: *mut c_void,
    src_pos: Pos,
    src_ptr: PitchedPtr,
    dst_array: *mut c_void,
    dst_pos: Pos,
    dst_ptr: PitchedPtr,
    extent: Extent,
    kind: c_int,
}

/// `cudaMalloc3D`: rows padded as `cudaMallocPitch` pads them, `height`
/// of them per slice.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3D(out: *mut PitchedPtr, extent: Extent) -> c_int {
    let Some(out) = out.as_mut() else {
        return call("cudaMalloc3D", |_| Ok(e::INVALID_VALUE));
    };
    let mut ptr = std::ptr::null_mut();
    let mut pitch = 0;
    let rows = extent.height.saturating_mul(extent.depth);
    let code = cudaMallocPitch(&mut ptr, &mut pitch, extent.width, rows);
    if code == e::SUCCESS {
        *out = PitchedPtr {
            ptr,
            pitch,
            xsize: extent.width,
            ysize: extent.height,
        };
    }
    code
}

/// `cudaMemcpy3D` between linear memory: the extent's `width` bytes of
/// each of its `height * depth` rows, each side's rows `pitch` apart and
/// its slices `ysize` rows apart, from each side's position (`x` in
/// bytes). CUDA arrays are not provided.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy3D(p: *const Memcpy3DParms) -> c_int {
    call("cudaMemcpy3D", |rt| {
        let Some(p) = p.as_ref() else {
            return Ok(e::INVALID_VALUE);
        };
        if !p.src_array.is_null() || !p.dst_array.is_null() {
            return Err(Fatal(
                "copies to or from CUDA arrays are not provided by warpcheck's runtime".into(),
            ));
        }
        let (ext, s, d) = (p.extent, p.src_ptr, p.dst_ptr);
        let fits = |ptr: &PitchedPtr, pos: &Pos| {
            pos.x + ext.width <= ptr.pitch && (ext.depth <= 1 || pos.y + ext.height <= ptr.ysize)
        };
        if !fits(&s, &p.src_pos) || !fits(&d, &p.dst_pos) {
            return Ok(e::INVALID_VALUE);
        }
        let start = |ptr: &PitchedPtr, pos: &Pos, row: usize| {
            let (y, z) = (row % ext.height.max(1), row / ext.height.max(1));
            ((pos.z + z) * ptr.ysize + pos.y + y) * ptr.pitch + pos.x
        };
        let rows = ext.height * ext.depth;
        Ok(copy_rows(
            rt,
            "cudaMemcpy3D",
            rows,
            ext.width,
            p.kind,
            |row| {
                (
                    offset(d.ptr, start(&d, &p.dst_pos, row)),
                    offset(s.ptr, start(&s, &p.src_pos, row)),
                )
            },
        ))
    })
}

/// A copy to or from a `__device__`/`__constant__` variable.
unsafe fn symbol_copy(
    name: &str,
    symbol: *const c_void,
    host: *mut c_void,
    n: usize,
    offset: usize,
    to_symbol: bool,
) -> c_int {
    call(name, |rt| {
        let Some((at, size)) = rt.symbol(symbol as usize) else {
            return Ok(e::INVALID_SYMBOL);
        };
        if offset.saturating_add(n) as u64 > size {
            return Ok(e::INVALID_VALUE);
        }
        let dev = (at + offset as u64) as *mut c_void;
        Ok(if to_symbol {
            copy(rt, name, dev, host, n, MEMCPY_DEFAULT)
        } else {
            copy(rt, name, host, dev, n, MEMCPY_DEFAULT)
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    _kind: c_int,
) -> c_int {
    symbol_copy(
        "cudaMemcpyToSymbol",
        symbol,
        src as *mut c_void,
        n,
        offset,
        true,
    )
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    _kind: c_int,
) -> c_int {
    symbol_copy("cudaMemcpyFromSymbol", symbol, dst, n, offset, false)
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(
    ptr: *mut *mut c_void,
    symbol: *const c_void,
) -> c_int {
    call("cudaGetSymbolAddress", |rt| {
        let Some((at, _)) = rt.symbol(symbol as usize) else {
            return Ok(e::INVALID_SYMBOL);
        };
        Ok(put(ptr, at as *mut c_void))
    })
}

unsafe fn fill(name: &str, dst: *mut c_void, value: c_int, n: usize) -> c_int {
    call(name, |rt| {
        if n == 0 {
            return Ok(e::SUCCESS);
        }
        if rt.managed(dst as u64, n as u64) {
            std::ptr::write_bytes(dst as *mut u8, value as u8, n);
            return Ok(e::SUCCESS);
        }
        Ok(match rt.device_write(name, dst as u64, n as u64) {
            Ok(d) => {
                d.fill(value as u8);
                e::SUCCESS
            }
            Err(code) => code,
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset(dst: *mut c_void, value: c_int, n: usize) -> c_int {
    fill("cudaMemset", dst, value, n)
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    n: usize,
    _stream: *mut c_void,
) -> c_int {
    fill("cudaMemsetAsync", dst, value, n)
}

// ---------------------------------------------------------------------------
// The device, errors, streams and events.

#[no_mangle]
pub extern "C" fn cudaDeviceSynchronize() -> c_int {
    call("cudaDeviceSynchronize", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaThreadSynchronize() -> c_int {
    cudaDeviceSynchronize()
}

/// Keeps the memory: a program that resets the device before exit has
/// freed what it needs, and one that goes on after a reset is rare.
#[no_mangle]
pub extern "C" fn cudaDeviceReset() -> c_int {
    enter("cudaDeviceReset", false, |rt| {
        rt.reset();
        Ok(e::SUCCESS)
    })
}

/// The old name of `cudaDeviceReset`.
#[no_mangle]
pub extern "C" fn cudaThreadExit() -> c_int {
    cudaDeviceReset()
}

#[no_mangle]
pub extern "C" fn cudaGetLastError() -> c_int {
    enter("cudaGetLastError", false, |rt| Ok(rt.last_error(true)))
}

#[no_mangle]
pub extern "C" fn cudaPeekAtLastError() -> c_int {
    enter("cudaPeekAtLastError", false, |rt| Ok(rt.last_error(false)))
}

#[no_mangle]
pub extern "C" fn cudaGetErrorString(code: c_int) -> *const c_char {
    e::message(code).as_ptr() as *const c_char
}

#[no_mangle]
pub extern "C" fn cudaGetErrorName(code: c_int) -> *const c_char {
    e::name(code).as_ptr() as *const c_char
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceCount(count: *mut c_int) -> c_int {
    call("cudaGetDeviceCount", |_| Ok(put(count, 1)))
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDevice(device: *mut c_int) -> c_int {
    call("cudaGetDevice", |_| Ok(put(device, 0)))
}

#[no_mangle]
pub extern "C" fn cudaSetDevice(device: c_int) -> c_int {
    call("cudaSetDevice", |_| {
        Ok(if device == 0 {
            e::SUCCESS
        } else {
            e::INVALID_DEVICE
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties(prop: *mut DeviceProp, device: c_int) -> c_int {
    call("cudaGetDeviceProperties", |rt| {
        if prop.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        if device != 0 {
            return Ok(e::INVALID_DEVICE);
        }
        *prop = properties(rt);
        Ok(e::SUCCESS)
    })
}

/// The machine model as `cudaDeviceProp` describes a GPU.
fn properties(rt: &Runtime) -> DeviceProp {
    let m = rt.machine();
    let mut name = [0 as c_char; 256];
    let text = format!("warpcheck simulator: {}", m.name);
    for (d, s) in name.iter_mut().zip(text.bytes().take(255)) {
        *d = s as c_char;
    }
    let int = |v: u64| c_int::try_from(v).unwrap_or(c_int::MAX);
    DeviceProp {
        name,
        total_global_mem: 40 << 30,
        shared_mem_per_block: 48 << 10,
        regs_per_block: 65536,
        warp_size: crate::hw::WARP_SIZE as c_int,
        mem_pitch: c_int::MAX as usize,
        max_threads_per_block: 1024,
        max_threads_dim: [1024, 1024, 64],
        max_grid_size: [c_int::MAX, 65535, 65535],
        clock_rate: int(u64::from(m.clock_mhz) * 1000),
        total_const_mem: 64 << 10,
        major: rt.arch.0,
        minor: rt.arch.1,
        multi_processor_count: int(u64::from(m.sms)),
        memory_clock_rate: 1_215_000,
        memory_bus_width: 5120,
        l2_cache_size: 40 << 20,
        max_threads_per_multi_processor: int(u64::from(m.max_threads_per_sm)),
        shared_mem_per_multiprocessor: m.shared_bytes_per_sm as usize,
        regs_per_multiprocessor: int(u64::from(m.registers_per_sm)),
        concurrent_kernels: 1,
        unified_addressing: 1,
        managed_memory: 1,
        texture_alignment: 512,
        device_overlap: 1,
    }
}

/// `cudaDeviceGetAttribute`: the same figures as the properties, by the
/// toolkit's attribute numbers.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetAttribute(
    value: *mut c_int,
    attr: c_int,
    device: c_int,
) -> c_int {
    call("cudaDeviceGetAttribute", |rt| {
        if value.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        if device != 0 {
            return Ok(e::INVALID_DEVICE);
        }
        let p = properties(rt);
        let int = |v: usize| c_int::try_from(v).unwrap_or(c_int::MAX);
        let v = match attr {
            1 => p.max_threads_per_block,
            2..=4 => p.max_threads_dim[(attr - 2) as usize],
            5..=7 => p.max_grid_size[(attr - 5) as usize],
            8 => int(p.shared_mem_per_block),
            9 => int(p.total_const_mem),
            10 => p.warp_size,
            12 => p.regs_per_block,
            13 => p.clock_rate,
            16 => p.multi_processor_count,
            // Not integrated; compute mode default.
            18 | 20 => 0,
            31 => p.concurrent_kernels,
            36 => p.memory_clock_rate,
            37 => p.memory_bus_width,
            38 => p.l2_cache_size,
            39 => p.max_threads_per_multi_processor,
            41 => p.unified_addressing,
            75 => p.major,
            76 => p.minor,
            81 => int(p.shared_mem_per_multiprocessor),
            82 => p.regs_per_multiprocessor,
            83 => p.managed_memory,
            // Concurrent managed access: the host may touch managed memory
            // at any time, since no launch is ever still running.
            89 => 1,
            95 => 1,
            97 => int(crate::hw::MAX_SHARED_PER_BLOCK as usize),
            _ => {
                return Err(Fatal(format!(
                    "device attribute {attr} is not one warpcheck's runtime reports"
                )))
            }
        };
        *value = v;
        Ok(e::SUCCESS)
    })
}

/// The profiler's range: nothing to profile on the CPU.
#[no_mangle]
pub extern "C" fn cudaProfilerStart() -> c_int {
    call("cudaProfilerStart", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaProfilerStop() -> c_int {
    call("cudaProfilerStop", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaDeviceSetCacheConfig(_config: c_int) -> c_int {
    call("cudaDeviceSetCacheConfig", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaFuncSetCacheConfig(_func: *const c_void, _config: c_int) -> c_int {
    call("cudaFuncSetCacheConfig", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreate(stream: *mut *mut c_void) -> c_int {
    call("cudaStreamCreate", |rt| {
        Ok(put(stream, rt.handle() as *mut c_void))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(
    stream: *mut *mut c_void,
    _flags: c_uint,
) -> c_int {
    cudaStreamCreate(stream)
}

/// Every call runs to its end before it returns: streams have nothing to
/// wait for.
#[no_mangle]
pub extern "C" fn cudaStreamDestroy(_stream: *mut c_void) -> c_int {
    call("cudaStreamDestroy", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaStreamSynchronize(_stream: *mut c_void) -> c_int {
    call("cudaStreamSynchronize", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub extern "C" fn cudaStreamWaitEvent(
    _stream: *mut c_void,
    _event: *mut c_void,
    _flags: c_uint,
) -> c_int {
    call("cudaStreamWaitEvent", |_| Ok(e::SUCCESS))
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreate(event: *mut *mut c_void) -> c_int {
    call("cudaEventCreate", |rt| {
        if event.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        Ok(put(event, rt.create_event() as *mut c_void))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventCreateWithFlags(
    event: *mut *mut c_void,
    _flags: c_uint,
) -> c_int {
    cudaEventCreate(event)
}

#[no_mangle]
pub extern "C" fn cudaEventRecord(event: *mut c_void, _stream: *mut c_void) -> c_int {
    call("cudaEventRecord", |rt| Ok(rt.record_event(event as usize)))
}

#[no_mangle]
pub extern "C" fn cudaEventSynchronize(event: *mut c_void) -> c_int {
    call("cudaEventSynchronize", |rt| {
        Ok(if rt.event_known(event as usize) {
            e::SUCCESS
        } else {
            e::INVALID_RESOURCE_HANDLE
        })
    })
}

#[no_mangle]
pub extern "C" fn cudaEventQuery(event: *mut c_void) -> c_int {
    cudaEventSynchronize(event)
}

#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> c_int {
    call("cudaEventElapsedTime", |rt| {
        if ms.is_null() {
            return Ok(e::INVALID_VALUE);
        }
        Ok(match rt.elapsed(start as usize, end as usize) {
            Ok(t) => {
                *ms = t;
                e::SUCCESS
            }
            Err(code) => code,
        })
    })
}

#[no_mangle]
pub extern "C" fn cudaEventDestroy(event: *mut c_void) -> c_int {
    call(
        "cudaEventDestroy",
        |rt| Ok(rt.destroy_event(event as usize)),
    )
}
