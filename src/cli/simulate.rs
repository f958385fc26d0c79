//! `warpcheck simulate`: run one kernel launch on the CPU and report its
//! cost under the lock-step semantics, per warp, block and source site.

use super::check::{CompileArgs, Format};
use super::exit;
use super::kernel::{machine_for, LaunchArgs, SimBudgetArgs};
use crate::analysis::BlockDim;
use crate::ir::{FuncId, Module};
use crate::sim::{self, report, Elem, LaunchConfig};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The .cu, .ll or .bc file.
    pub file: PathBuf,
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Run only these blocks, by linear id (x fastest): 0,3-5.
    #[arg(long, value_name = "IDS")]
    pub blocks: Option<String>,
    /// Seed for random buffer contents.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Threads to run blocks on (default: one per core); the results are
    /// the same for any number.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Print a buffer's contents after the run, as NAME or NAME:TYPE. Repeatable.
    #[arg(long, value_name = "NAME[:TYPE]")]
    pub dump: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Report the simulation speed on stderr: of the launch itself, and
    /// with decoding the kernel and making the arguments' buffers.
    #[arg(long)]
    pub timing: bool,
    /// Also time the launch in cycles on the machine model (round-robin
    /// warp scheduling, latencies, barriers, waves of blocks on SMs).
    #[arg(long)]
    pub cycles: bool,
    /// A machine-model constant for --cycles, KEY=VALUE (repeatable; after
    /// the Machine: of .warpcheck.yaml), e.g. preset=paper or issue_rate=2.
    #[arg(long = "machine", value_name = "KEY=VALUE")]
    pub machine: Vec<String>,
    #[command(flatten)]
    pub budget: SimBudgetArgs,
    #[command(flatten)]
    pub compile: CompileArgs,
}

fn usage(message: String) -> i32 {
    eprintln!("warpcheck: error: {message}");
    exit::INPUT
}

pub fn run(args: &SimulateArgs) -> i32 {
    if let Err(e) = args.launch.validate() {
        return usage(e);
    }
    let (m, kernel) = match args.launch.load(&args.file, &args.compile) {
        Ok(k) => k,
        Err(e) => return usage(e),
    };
    let mut config = match launch_config(&m, kernel, args) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    if args.cycles {
        match machine_for(&args.file, &args.machine) {
            Ok(machine) => config.machine = Some(machine),
            Err(e) => return usage(e),
        }
    } else if !args.machine.is_empty() {
        return usage("--machine needs --cycles".into());
    }
    let arguments = match args.launch.arguments() {
        Ok(a) => a,
        Err(e) => return usage(e),
    };
    let dumps = match args
        .dump
        .iter()
        .map(|d| parse_dump(d))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    let params = sim::params(&m, kernel);
    if params.iter().any(|p| !p.named) {
        eprintln!(
            "warpcheck: note: {} has unnamed parameters in the IR; name them arg0..arg{} (or compile with -g)",
            m.func(kernel).demangled,
            params.len().saturating_sub(1)
        );
    }
    let started = Instant::now();
    let (result, launch_time) = sim::simulate_timed(&m, kernel, &config, &arguments);
    let (outcome, stop) = match result {
        Ok(o) => (o, None),
        Err(mut e) => {
            eprintln!("warpcheck: error: {e}");
            match e.details.partial.take() {
                Some(partial) if e.kind.is_kernel_fault() => (partial, Some(e)),
                _ if e.kind.is_kernel_fault() => return exit::WARNINGS,
                _ => return exit::INPUT,
            }
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    let report = match report::build(&m, &outcome, stop.as_ref(), &dumps) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    match args.format {
        Format::Json => match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("warpcheck: internal error: {e}");
                return exit::INTERNAL;
            }
        },
        Format::Text => {
            for line in &outcome.output {
                print!("{line}");
            }
            print!("{}", report::text(&report));
        }
    }
    if args.timing {
        let n = outcome.totals.thread_instructions;
        let rate = |seconds: f64| n as f64 / seconds.max(1e-9) / 1e6;
        let launch = launch_time.map_or(elapsed, |d| d.as_secs_f64());
        eprintln!(
            "with decoding and the arguments' buffers: {elapsed:.3} s, {:.1} M thread-instructions/s",
            rate(elapsed)
        );
        eprintln!(
            "simulated {n} thread-instructions in {launch:.3} s on {} thread{}: {:.1} M thread-instructions/s",
            outcome.threads,
            if outcome.threads == 1 { "" } else { "s" },
            rate(launch)
        );
    }
    // A run the kernel stopped (a fault, a deadlock, a spent budget): 1.
    match stop {
        Some(_) => exit::WARNINGS,
        None => exit::OK,
    }
}

fn launch_config(m: &Module, kernel: FuncId, args: &SimulateArgs) -> Result<LaunchConfig, String> {
    let grid = args.launch.grid()?;
    // A shape asked for runs as asked (the bounds keep a reqntid over it).
    let block = match args.launch.block_dim()? {
        Some(b) => b.dims,
        None => BlockDim::resolve(m.func(kernel), None).dims,
    };
    let blocks = args.blocks.as_deref().map(parse_ids).transpose()?;
    Ok(LaunchConfig {
        grid,
        block,
        blocks,
        dynamic_shared: args.launch.shared_bytes()?,
        seed: args.seed,
        budget: args.budget.budget()?,
        machine: None,
        sanitize: false,
        threads: args.jobs,
    })
}

/// `0,3-5` → `[0..=0, 3..=5]`: ranges, never the ids they hold (a range
/// of 300 million blocks is two numbers, run as they are reached).
fn parse_ids(text: &str) -> Result<Vec<std::ops::RangeInclusive<u64>>, String> {
    use super::params::shown;
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let num = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("--blocks: '{}' is not a block id", shown(s.trim())))
        };
        let range = match part.split_once('-') {
            Some((a, b)) => num(a)?..=num(b)?,
            None => num(part)?..=num(part)?,
        };
        if range.is_empty() {
            return Err(format!(
                "--blocks: '{}' is an empty range (the first id is the larger)",
                shown(part)
            ));
        }
        out.push(range);
    }
    Ok(out)
}

fn parse_dump(text: &str) -> Result<(String, Option<Elem>), String> {
    match text.split_once(':') {
        Some((name, ty)) => {
            let elem =
                Elem::parse(ty).ok_or_else(|| format!("--dump {text}: unknown type '{ty}'"))?;
            Ok((name.to_string(), Some(elem)))
        }
        None => Ok((text.to_string(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_ids() {
        assert_eq!(parse_ids("0,3-5").unwrap(), vec![0..=0, 3..=5]);
        assert_eq!(
            parse_ids("0-18446744073709551615").unwrap(),
            vec![0..=u64::MAX]
        );
        assert!(parse_ids("x").is_err());
        assert!(parse_ids("5-3").is_err());
        assert!(parse_ids("0-18446744073709551616").is_err());
        assert_eq!(parse_dump("c:f32").unwrap(), ("c".into(), Some(Elem::F32)));
        assert!(parse_dump("c:nope").is_err());
    }
}
