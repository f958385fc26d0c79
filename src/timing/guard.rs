//! A kernel's time bound with a panic caught: it costs that kernel's
//! bound only (`check --bounds` and the plugin keep every other finding,
//! `warpcheck time` exits 3).

use super::bounds::{time_kernel, Request, TimeBound};
use crate::analysis::KernelAnalysis;
use crate::budget::Meter;
use crate::checks::SiteFigures;
use crate::graph::FunctionGraphs;
use crate::ir::Module;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// [`time_kernel`], or the panic's message.
pub fn time_kernel_caught(
    m: &Module,
    g: &FunctionGraphs,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    req: &Request<'_>,
    meter: &Meter,
) -> Result<TimeBound, String> {
    catch_unwind(AssertUnwindSafe(|| {
        time_kernel(m, g, k, figures, req, meter)
    }))
    .map_err(|p| crate::cost::panic_message(p.as_ref()))
}
