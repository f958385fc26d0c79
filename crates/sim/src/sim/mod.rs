//! Evaluation mode: runs a kernel's IR on the CPU under the lock-step cost
//! semantics of RaCuda (§3, Fig. 3), so a launch's exact cost is known
//! without a GPU and every static result can be checked on concrete runs.
//!
//! The kernel and the functions it calls are pre-decoded (`decode`) into a
//! compact form with operands resolved to register slots; warps of 32
//! consecutive threads run it in lock-step with an active mask (`exec`),
//! reconverging at immediate post-dominators; the warps of a block meet at
//! `__syncthreads()` (`block`, `barrier`). Every branch and memory access
//! adds to the counters of `cost`, per warp and per source site. A launch
//! runs within a `budget` of instructions and time; a kernel that stops
//! (a fault, a deadlock, a livelock, a spent budget) returns the costs
//! counted until then in its [`SimError`].

mod addr;
pub mod args;
mod barrier;
mod block;
pub mod budget;
pub mod code;
pub mod cost;
pub mod cycles;
mod decode;
pub mod device;
pub mod error;
mod exec;
mod fp16;
mod grid;
pub mod initcheck;
mod launch;
mod layout;
mod lazy_copy;
mod math;
pub mod memory;
mod parallel;
mod printf;
pub mod race;
pub mod report;
pub mod sanitize;
mod scalar;
pub mod stop_report;
#[cfg(test)]
mod tests;

/// A device address's byte offset within its object (allocation or
/// variable): what alignment a pointer argument really has.
pub use addr::offset as offset_in_object;
pub use args::{ArgValue, BufferSpec, Elem, Init};
pub use budget::Budget;
pub use code::SiteInfo;
pub use cost::{Counters, SiteStats};
pub use device::Device;
pub use error::{Details, ErrorKind, LaneGroup, LaneState, SimError};

use crate::hw;
use crate::ir::{FuncId, Module, TypeKind};
use block::{Block, Step};
use exec::{Machine, Program};
use layout::Layout;
use memory::Buffer;

/// The shape of a launch and which blocks to run.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Ranges of linear block ids (x fastest) to run, in order; every
    /// block when `None`.
    pub blocks: Option<Vec<std::ops::RangeInclusive<u64>>>,
    /// Bytes of dynamic shared memory (`<<<g, b, bytes>>>`).
    pub dynamic_shared: u64,
    /// Seed for `random` buffer fills.
    pub seed: u64,
    /// How long the launch may run.
    pub budget: Budget,
    /// Cycle mode: time the launch on this machine model.
    pub machine: Option<crate::machine::Machine>,
    /// Check shared-memory races and reads of unwritten device memory
    /// (`warpcheck run`); what they find is in [`Outcome::sanitizer`].
    pub sanitize: bool,
    /// Threads to run blocks on (0: one per core). The outcome is the
    /// same whatever the number (see `parallel`).
    pub threads: usize,
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: [1, 1, 1],
            block: [256, 1, 1],
            blocks: None,
            dynamic_shared: 0,
            seed: 0,
            budget: Budget::default(),
            machine: None,
            sanitize: false,
            threads: 0,
        }
    }
}

/// A kernel parameter as the user names it.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    /// Whether `name` came from the IR or debug info (else `argN`).
    pub named: bool,
    pub is_pointer: bool,
    /// The C++ type from the demangled signature, when there is one.
    pub cpp_type: Option<String>,
}

/// The parameters of a kernel, in order.
pub fn params(m: &Module, kernel: FuncId) -> Vec<ParamInfo> {
    let f = m.func(kernel);
    let cpp = args::signature_params(&f.demangled);
    f.params
        .iter()
        .enumerate()
        .map(|(i, p)| ParamInfo {
            name: p.name.clone().unwrap_or_else(|| format!("arg{i}")),
            named: p.name.is_some(),
            is_pointer: matches!(m.types.kind(p.ty), TypeKind::Ptr(_)),
            cpp_type: (cpp.len() == f.params.len()).then(|| cpp[i].clone()),
        })
        .collect()
}

/// A buffer after the run.
#[derive(Clone, Debug)]
pub struct BufferResult {
    pub name: String,
    pub elem: Option<Elem>,
    pub data: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct WarpResult {
    pub block: [u32; 3],
    pub warp: u32,
    pub counters: Counters,
}

#[derive(Clone, Debug)]
pub struct BlockResult {
    pub block: [u32; 3],
    pub counters: Counters,
}

/// Everything a simulation measured.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub kernel: FuncId,
    pub config: LaunchConfig,
    pub totals: Counters,
    pub blocks: Vec<BlockResult>,
    pub warps: Vec<WarpResult>,
    /// Per instruction site (one IR instruction each), with its statistics.
    pub sites: Vec<(SiteInfo, SiteStats)>,
    /// Pointer arguments' buffers, in parameter order.
    pub buffers: Vec<BufferResult>,
    /// Warp-level runs of each asm body of the module's table
    /// ([`crate::ir::Module::asms`]), by index.
    pub asm_runs: Vec<u64>,
    /// Device `printf` output.
    pub output: Vec<String>,
    /// Cycle mode's timing, when the launch ran to its end.
    pub cycles: Option<cycles::CycleReport>,
    /// What the sanitizer found, when [`LaunchConfig::sanitize`] asked.
    pub sanitizer: sanitize::Findings,
    /// Threads the launch's blocks ran on (1 when they ran in order).
    pub threads: usize,
}

impl Outcome {
    pub fn buffer(&self, name: &str) -> Option<&BufferResult> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

/// Runs `kernel` with arguments given by parameter name (or `argN`). A
/// kernel fault (see [`ErrorKind::is_kernel_fault`]) carries the launch up
/// to the stop in [`Details::partial`].
pub fn simulate(
    m: &Module,
    kernel: FuncId,
    config: &LaunchConfig,
    arguments: &[(String, ArgValue)],
) -> Result<Outcome, SimError> {
    simulate_timed(m, kernel, config, arguments).0
}

/// [`simulate`], with the wall time the launch itself took: its blocks,
/// without decoding the kernel or making the arguments' buffers (`None`
/// when it never started).
pub fn simulate_timed(
    m: &Module,
    kernel: FuncId,
    config: &LaunchConfig,
    arguments: &[(String, ArgValue)],
) -> (Result<Outcome, SimError>, Option<std::time::Duration>) {
    let setup = prepare(m, kernel, config).and_then(|program| {
        let mut objects = launch::module_objects(m, &program.layout)?;
        let bound = launch::bind_arguments(m, kernel, config, arguments, &mut objects)?;
        Ok((program, objects, bound))
    });
    let (program, mut objects, (words, buffers)) = match setup {
        Ok(s) => s,
        Err(e) => return (Err(e), None),
    };
    let started = std::time::Instant::now();
    let outcome = execute(m, kernel, config, &program, &mut objects, &words, buffers);
    (outcome, Some(started.elapsed()))
}

/// Checks a launch's shape and decodes the kernel and what it calls.
fn prepare(m: &Module, kernel: FuncId, config: &LaunchConfig) -> Result<Program, SimError> {
    check_launch(m, kernel, config)?;
    Ok(decode_program(m, kernel))
}

/// Whether `kernel` can run with `config`'s shape.
fn check_launch(m: &Module, kernel: FuncId, config: &LaunchConfig) -> Result<(), SimError> {
    let f = m.func(kernel);
    if f.is_declaration {
        return Err(SimError::usage(format!(
            "{} has no body in this module",
            f.demangled
        )));
    }
    launch::check_shape(config)?;
    let [gx, gy, gz] = config.grid.map(u64::from);
    if let Some(linear) = blocks_to_run(config).last().filter(|&b| b >= gx * gy * gz) {
        return Err(SimError::usage(format!(
            "block {linear} is outside the grid of {} blocks",
            gx * gy * gz
        )));
    }
    Ok(())
}

/// The kernel and the functions it calls, decoded.
fn decode_program(m: &Module, kernel: FuncId) -> Program {
    let layout = Layout::new(m);
    let decoded = decode::decode(m, kernel, &layout);
    Program {
        funcs: decoded.funcs,
        sites: decoded.sites,
        requests: decoded.requests,
        layout,
    }
}

/// The blocks a launch runs. The whole grid is a range, never a list, and
/// so is each range of `--blocks`: a grid may have 2^63 blocks and the
/// budget stops long before most of them run. Blocks are made as they are
/// reached.
fn blocks_to_run(config: &LaunchConfig) -> cycles::Run {
    let [gx, gy, gz] = config.grid.map(u64::from);
    match &config.blocks {
        Some(list) => cycles::Run::Listed(list.clone()),
        None => cycles::Run::Whole(gx * gy * gz),
    }
}

/// Runs a prepared launch against `objects` (the module's variables and
/// the buffers its arguments `words` point to), which hold what the
/// kernel left in memory afterwards, whether it finished or stopped.
fn execute(
    m: &Module,
    kernel: FuncId,
    config: &LaunchConfig,
    program: &Program,
    objects: &mut Vec<Buffer>,
    words: &[u64],
    buffers: Vec<launch::Bound>,
) -> Result<Outcome, SimError> {
    let user_shared = program.layout.shared_bytes(config.dynamic_shared);
    if user_shared > crate::hw::MAX_SHARED_PER_BLOCK {
        return Err(SimError::usage(format!(
            "a block of this launch needs {user_shared} bytes of shared memory, more than any GPU gives one ({} KiB)",
            crate::hw::MAX_SHARED_PER_BLOCK >> 10
        )));
    }
    let env = launch::asm_env(program, config, user_shared, objects);
    let shared = env
        .reserved_smem
        .map_or(user_shared, |begin| begin + exec::asm::RESERVED_SMEM);

    let mut machine = Machine::new(
        m,
        program,
        config.grid,
        config.block,
        std::mem::take(objects),
        shared,
        config.budget,
    );
    machine.asm_env = env;
    machine.san = sanitize::Sanitizer::new(config.sanitize, &machine.objects);
    let result = run_blocks(m, kernel, config, program, &mut machine, words, buffers);
    *objects = std::mem::take(&mut machine.objects);
    result
}

/// The launch's blocks on `machine`, to the end or the first stop.
fn run_blocks(
    m: &Module,
    kernel: FuncId,
    config: &LaunchConfig,
    program: &Program,
    machine: &mut Machine,
    words: &[u64],
    buffers: Vec<launch::Bound>,
) -> Result<Outcome, SimError> {
    let [gx, gy, gz] = config.grid.map(u64::from);
    let all = blocks_to_run(config);
    let mut timing = match &config.machine {
        Some(model) => Some(cycle_collector(m, program, model, config, &all)?),
        None => None,
    };
    machine.cycles = timing.as_ref().map(|(t, _)| t.clone());
    let mut outcome = Outcome {
        kernel,
        config: config.clone(),
        totals: Counters::default(),
        blocks: Vec::new(),
        warps: Vec::new(),
        sites: Vec::new(),
        buffers: Vec::new(),
        asm_runs: Vec::new(),
        output: Vec::new(),
        cycles: None,
        sanitizer: sanitize::Findings::default(),
        threads: 1,
    };
    let budget = config
        .budget
        .max_memory
        .unwrap_or(budget::DEFAULT_MAX_MEMORY);
    reserve_records(
        (&mut outcome.blocks, &mut outcome.warps),
        config.block,
        all.len(),
        budget.min(RESERVED_RECORD_BYTES),
    );
    let partial_grid = all.len() != gx * gy * gz;
    let index =
        |linear: u64| [linear % gx, (linear / gx) % gy, linear / (gx * gy)].map(|v| v as u32);
    let mut fresh = all.iter().map(index);
    // Blocks taken from `fresh` so far.
    let mut taken = 0u64;
    let mut threads = parallel::threads(config.threads);
    // Blocks a parallel run gave back, to run in order first.
    let mut retry: std::collections::VecDeque<[u32; 3]> = Default::default();
    let grid_barrier = program
        .funcs
        .iter()
        .any(|f| f.code.iter().any(|op| matches!(op, code::Op::GridSync)));
    // Blocks run one after another. A block whose threads all reach the
    // grid barrier is set aside (`arrived`); once every block has, they
    // pass it and run again in order (`queue`), up to the next one. A
    // block whose warps spin is set aside too (`stalled`), and runs again
    // once the others have changed memory.
    let mut queue: std::collections::VecDeque<Block> = Default::default();
    let mut arrived: Vec<Block> = Vec::new();
    let mut stalled: Vec<Block> = Vec::new();
    let mut returned: Option<[u32; 3]> = None;
    loop {
        let next = match retry.pop_front() {
            Some(b) => Some(b),
            None => fresh.next().inspect(|_| taken += 1),
        };
        let mut block = match next {
            Some(b) => Block::new(machine, b, words),
            None => match queue.pop_front() {
                Some(b) => b,
                None => match stalled.iter().position(|b| b.may_wake(machine)) {
                    Some(k) => stalled.remove(k),
                    None if !stalled.is_empty() => {
                        let e = stalled[0].livelock(machine);
                        let aside: Vec<Block> = stalled.into_iter().chain(arrived).collect();
                        return Err(stop(e, outcome, &aside, machine, buffers));
                    }
                    None if arrived.is_empty() => break,
                    None => {
                        if let Some(gone) = returned {
                            let e = grid::deadlock(machine, &arrived[0], gone);
                            return Err(stop(e, outcome, &arrived, machine, buffers));
                        }
                        queue.extend(arrived.drain(..));
                        continue;
                    }
                },
            },
        };
        match block.run(machine) {
            Ok(Step::Done) => {
                returned.get_or_insert(block.index);
                record(&mut outcome, &block);
                if let Some(e) = over_memory(&outcome, config.budget.max_memory) {
                    let aside: Vec<Block> =
                        queue.into_iter().chain(arrived).chain(stalled).collect();
                    return Err(stop(e, outcome, &aside, machine, buffers));
                }
                if let Some((_, c)) = &mut timing {
                    let moved = block.moved();
                    c.add(block.index, block.take_timelines(), moved);
                }
                let quiet = queue.is_empty()
                    && arrived.is_empty()
                    && stalled.is_empty()
                    && retry.is_empty();
                let left = all.len() - taken;
                if quiet && !grid_barrier && parallel::worth(machine, threads, taken, left) {
                    let rest: Vec<[u32; 3]> = fresh.by_ref().take(left as usize).collect();
                    match parallel::run(machine, &rest, threads, words) {
                        Some(shares) => {
                            taken += left;
                            outcome.threads = shares.len();
                            parallel::merge_memory(machine, &shares);
                            for share in shares {
                                outcome.totals += share.totals;
                                outcome.blocks.extend(share.blocks);
                                outcome.warps.extend(share.warps);
                                if let Some((_, c)) = &mut timing {
                                    for (index, warps, moved) in share.timelines {
                                        c.add(index, warps, moved);
                                    }
                                }
                                machine.absorb(share.machine);
                            }
                            if let Some(e) = over_memory(&outcome, config.budget.max_memory) {
                                return Err(stop(e, outcome, &[], machine, buffers));
                            }
                        }
                        // Run them here, in order, as if never tried.
                        None => {
                            taken += left;
                            retry.extend(rest);
                            threads = 1;
                        }
                    }
                }
            }
            Ok(Step::AtGridBarrier) if partial_grid => {
                return Err(grid::needs_every_block(machine, &block, gx * gy * gz));
            }
            Ok(Step::AtGridBarrier) => arrived.push(block),
            Ok(Step::Stalled) => stalled.push(block),
            Err(e) => {
                let aside: Vec<Block> = queue.into_iter().chain(arrived).chain(stalled).collect();
                record(&mut outcome, &block);
                return Err(stop(e, outcome, &aside, machine, buffers));
            }
        }
    }
    outcome.cycles = timing.map(|(_, c)| c.finish(m));
    Ok(finish(outcome, machine, buffers))
}

/// Cycle mode's tables and the collector of finished blocks, for the
/// blocks `run` of the launch.
fn cycle_collector(
    m: &Module,
    program: &Program,
    model: &crate::machine::Machine,
    config: &LaunchConfig,
    run: &cycles::Run,
) -> Result<(std::sync::Arc<cycles::Tables>, cycles::Collector), SimError> {
    let threads: u32 = config.block.iter().product();
    let shared = crate::machine::static_shared_bytes(m) + config.dynamic_shared;
    let residency = model.residency(threads, shared).map_err(SimError::usage)?;
    let tables = std::sync::Arc::new(cycles::Tables::new(m, &program.funcs, model.clone()));
    let grid_barrier = program
        .funcs
        .iter()
        .any(|f| f.code.iter().any(|op| matches!(op, code::Op::GridSync)));
    let c = cycles::Collector::new(tables.clone(), residency, config.grid, run, grid_barrier);
    Ok((tables, c))
}

/// A stopped launch: a kernel fault carries the outcome so far, with the
/// blocks that were set aside.
fn stop(
    mut e: SimError,
    mut outcome: Outcome,
    waiting: &[Block],
    machine: &mut Machine,
    buffers: Vec<launch::Bound>,
) -> SimError {
    if e.kind.is_kernel_fault() {
        for b in waiting {
            record(&mut outcome, b);
        }
        e.details.partial = Some(finish(outcome, machine, buffers));
    }
    e
}

/// The stop once the outcome's per-block and per-warp records pass the
/// launch's memory budget: a grid of 2^47 one-instruction blocks would
/// otherwise fill memory with them long before its step budget is spent.
fn over_memory(outcome: &Outcome, max: Option<u64>) -> Option<SimError> {
    let held = outcome.blocks.len() * std::mem::size_of::<BlockResult>()
        + outcome.warps.len() * std::mem::size_of::<WarpResult>();
    let max = max?;
    (held as u64 > max).then(|| {
        SimError::new(
            ErrorKind::MemoryLimit,
            budget::Exhausted::Memory(max).describe(),
        )
    })
}

/// Most bytes of records reserved up front: a launch the budget stops
/// early (a grid of 2^47 blocks) should not claim its whole memory
/// budget.
const RESERVED_RECORD_BYTES: u64 = 64 << 20;

/// Room for the per-block and per-warp records of `count` blocks of
/// `block` threads, as far as `bytes` goes: growing a list of a million
/// warps by doubling copies it and faults in its pages twice.
fn reserve_records(
    (blocks, warps): (&mut Vec<BlockResult>, &mut Vec<WarpResult>),
    block: [u32; 3],
    count: u64,
    bytes: u64,
) {
    let threads: u64 = block.iter().map(|&d| u64::from(d)).product();
    let warp_count = count.saturating_mul(threads.div_ceil(u64::from(hw::WARP_SIZE)));
    let cap = |size: usize| bytes / size as u64;
    let count = count.min(cap(std::mem::size_of::<BlockResult>()));
    let warp_count = warp_count.min(cap(std::mem::size_of::<WarpResult>()));
    // A reservation the process cannot have is only a lost speed-up.
    let _ = blocks.try_reserve_exact(count as usize);
    let _ = warps.try_reserve_exact(warp_count as usize);
}

/// Adds a finished (or stopped) block's counters to the outcome.
fn record(outcome: &mut Outcome, block: &Block) {
    record_parts(
        &mut outcome.totals,
        &mut outcome.blocks,
        &mut outcome.warps,
        block,
    );
}

/// [`record`] into the outcome's parts.
fn record_parts(
    totals: &mut Counters,
    blocks: &mut Vec<BlockResult>,
    warps: &mut Vec<WarpResult>,
    block: &Block,
) {
    let mut sum = Counters::default();
    for (i, c) in block.counters().enumerate() {
        sum += c;
        warps.push(WarpResult {
            block: block.index,
            warp: i as u32,
            counters: c,
        });
    }
    *totals += sum;
    blocks.push(BlockResult {
        block: block.index,
        counters: sum,
    });
}

/// Adds what the machine holds at the end (or the stop) to the outcome.
fn finish(mut outcome: Outcome, machine: &mut Machine, buffers: Vec<launch::Bound>) -> Outcome {
    outcome.sanitizer = machine.san.findings(
        machine.module,
        &machine.program.requests,
        machine.block_dim,
        &machine.objects,
    );
    outcome.sites = machine
        .program
        .sites
        .iter()
        .cloned()
        .zip(std::mem::take(&mut machine.sites))
        .collect();
    outcome.output = std::mem::take(&mut machine.output);
    outcome.asm_runs = std::mem::take(&mut machine.asm_runs);
    outcome.buffers = buffers
        .into_iter()
        .map(|(object, name, elem)| BufferResult {
            name,
            elem,
            data: std::mem::take(&mut machine.objects[object as usize].data),
        })
        .collect();
    outcome
}
