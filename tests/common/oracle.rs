//! The simulator as the oracle of the static analysis, shared by
//! `acf_oracle.rs` (fixtures and examples) and `random_kernels.rs`
//! (generated kernels). Included next to `common/sim.rs`, which the test
//! must include as `mod helpers`.
//!
//! Per site (joined on kind, file, line and column), a simulated launch
//! contradicts the analysis when:
//!
//! * the analysis calls the site uniform (not thread-dependent, or
//!   dependent but one value per warp) and the lanes of a simulated warp
//!   disagreed on its condition or address;
//! * a warp the analysis says splits ran the branch with all its lanes
//!   and undivided in some block (a bounds check such as `n > 32 * tid`
//!   may leave that warp fewer lanes, which the claim does not cover:
//!   checked per warp, since other warps may run it whole), or one it
//!   says is uniform split;
//! * a simulated request's sectors or conflict degree lies outside the
//!   static [min, max], or outside every per-iteration row's (a loop
//!   whose counter the launch fixes: the hull of the rows); or, in executions with the whole warp active,
//!   `coalesced` has more than one sector over the request's own ideal,
//!   `uncoalesced` at most one, `none` a degree above 1 and `conflict` a degree of 1
//!   (classes are claims about whole warps: a site that only ever ran
//!   with some lanes, say under a data-dependent test, cannot contradict
//!   one);
//! * an atomic request had more lanes on one address than the static
//!   contention allows;
//! * a simulated site has no static site at all.
//!
//! Soundness alone passes an analysis that knows nothing (every class
//! unknown, every range 0..10^6), so the comparison also measures
//! precision, per site of a kernel and block shape over all its runs
//! ([`Precision`]): how many of the claims are definite (a class, a warp
//! said to split or to stay whole, a site uniform per warp) rather than
//! undecided, how many definite claims some simulated warp showed, and
//! how many ends of the static `[min, max]` ranges some simulated request
//! met. The tests hold these above floors.
#![allow(dead_code)]

use super::helpers::{iota_arguments, sim_key, static_key, SiteKey};
use serde_json::Value;
use std::collections::BTreeMap;
use warpcheck::diag::json::Report;
use warpcheck::hw::WARP_SIZE;
use warpcheck::ir::{FuncId, Module};
use warpcheck::sim::report::{self, SiteJson};
use warpcheck::sim::{self, ArgValue, LaunchConfig, SimError};

/// The static figures merged per key: the union of the ranges; a class
/// only when every site of the key agrees.
#[derive(Default, Debug)]
pub struct Static {
    /// Every site of the key is uniform per warp: not thread-dependent,
    /// or dependent with `warp_uniform`.
    pub uniform: bool,
    /// Per warp: "split" if any site splits it, "uniform" if all are
    /// uniform, else "maybe".
    pub by_warp: Vec<&'static str>,
    pub sectors: Option<(u64, u64, u64, Option<String>)>,
    /// The sectors' figures hold only where each named integer parameter
    /// is at least its bound (a class that depends on a stride parameter:
    /// `condition.param` and `condition.from`).
    pub sectors_from: Vec<(String, i64)>,
    pub conflict: Option<(u64, u64, Option<String>)>,
    /// The hull of the per-iteration rows' `[min, max]` (a site's own
    /// range where it has no rows), for the sectors and the conflict
    /// degree: the counter takes only the rows' values, so every request
    /// lies within one row's range.
    pub sector_rows: Option<(u64, u64)>,
    pub conflict_rows: Option<(u64, u64)>,
    /// An atomic's most lanes on one address, over its sites.
    pub contention: Option<u64>,
}

/// The hull of a figure's per-iteration rows, else of the figure itself.
fn rows_hull(v: &Value) -> (u64, u64) {
    let own = (v["min"].as_u64().unwrap(), v["max"].as_u64().unwrap());
    let Some(rows) = v["iterations"]["rows"].as_array().filter(|r| !r.is_empty()) else {
        return own;
    };
    rows.iter().fold((u64::MAX, 0), |(lo, hi), r| {
        (
            lo.min(r["min"].as_u64().unwrap_or(own.0)),
            hi.max(r["max"].as_u64().unwrap_or(own.1)),
        )
    })
}

fn hull(a: Option<(u64, u64)>, b: (u64, u64)) -> Option<(u64, u64)> {
    Some(a.map_or(b, |(lo, hi)| (lo.min(b.0), hi.max(b.1))))
}

/// The sites of one kernel of a `check --format json` report, by key.
pub fn static_sites(kernel: &Value) -> BTreeMap<SiteKey, Static> {
    let mut out: BTreeMap<SiteKey, Static> = BTreeMap::new();
    for s in kernel["sites"].as_array().unwrap() {
        let key = static_key(s);
        let first = !out.contains_key(&key);
        let e = out.entry(key).or_default();
        let uniform = s["thread_dependent"] == false || s["warp_uniform"] == true;
        e.uniform = uniform && (first || e.uniform);
        if let Some(w) = s["divergence"]["by_warp"].as_array() {
            let merged: Vec<&'static str> = w
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let x = match x.as_str().unwrap() {
                        "split" => "split",
                        "uniform" => "uniform",
                        _ => "maybe",
                    };
                    match (e.by_warp.get(i).copied(), x) {
                        (None, x) => x,
                        (Some("split"), _) | (_, "split") => "split",
                        (Some("uniform"), "uniform") => "uniform",
                        _ => "maybe",
                    }
                })
                .collect();
            e.by_warp = merged;
        }
        let class = |v: &Value| v["class"].as_str().map(str::to_string);
        // A uniform global access (clang may give it the position of a
        // dependent one: `B[j * w + i] += A[i]`) is one request of the
        // sectors its bytes span, coalesced.
        let one_address = uniform && s["kind"] != "branch" && s["space"] == "global";
        if one_address && !s["sectors"].is_object() {
            let bytes = s["bytes"].as_u64().unwrap_or(4).max(1);
            let (lo, hi, ideal) = (
                bytes.div_ceil(32),
                bytes.div_ceil(32) + 1,
                bytes.div_ceil(32),
            );
            e.sector_rows = hull(e.sector_rows, (lo, hi));
            e.sectors = Some(match e.sectors.take() {
                None => (lo, hi, ideal, Some("coalesced".to_string())),
                Some((a, b, i, c)) => (
                    a.min(lo),
                    b.max(hi),
                    i.max(ideal),
                    c.filter(|c| c == "coalesced"),
                ),
            });
        }
        if s["sectors"].is_object() {
            let v = &s["sectors"];
            let (lo, hi, ideal) = (
                v["min"].as_u64().unwrap(),
                v["max"].as_u64().unwrap(),
                v["ideal"].as_u64().unwrap(),
            );
            e.sector_rows = hull(e.sector_rows, rows_hull(v));
            if let Some(from) = v["condition"]["from"].as_i64() {
                let param = v["condition"]["param"].as_str().unwrap_or_default();
                e.sectors_from.push((param.to_string(), from));
            }
            e.sectors = Some(match e.sectors.take() {
                None => (lo, hi, ideal, class(v)),
                Some((a, b, i, c)) => (
                    a.min(lo),
                    b.max(hi),
                    i.max(ideal),
                    c.filter(|c| Some(c) == class(v).as_ref()),
                ),
            });
        }
        for fig in ["sectors", "conflict"] {
            if let Some(most) = s[fig]["contention"]["max"].as_u64() {
                e.contention = Some(e.contention.map_or(most, |c| c.max(most)));
            }
        }
        if s["conflict"].is_object() {
            let v = &s["conflict"];
            let (lo, hi) = (v["min"].as_u64().unwrap(), v["max"].as_u64().unwrap());
            e.conflict_rows = hull(e.conflict_rows, rows_hull(v));
            e.conflict = Some(match e.conflict.take() {
                None => (lo, hi, class(v)),
                Some((a, b, c)) => (
                    a.min(lo),
                    b.max(hi),
                    c.filter(|c| Some(c) == class(v).as_ref()),
                ),
            });
        }
    }
    out
}

/// One claim of a site, for [`Precision`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Claim {
    /// A definite class or outcome; met once a simulated warp showed it
    /// (ran the site whole, split as said, ...).
    Definite,
    /// A class or outcome the analysis left open.
    Undecided,
    /// An end of a static `[min, max]`; met once a request reached it.
    End,
}

/// How precise the static claims were, over the sites compared.
#[derive(Debug, Default, Clone, Copy)]
pub struct Precision {
    pub definite: usize,
    pub shown: usize,
    pub undecided: usize,
    pub ends: usize,
    pub ends_met: usize,
}

impl Precision {
    /// The share of claims that are definite.
    pub fn decided(&self) -> f64 {
        ratio(self.definite, self.definite + self.undecided)
    }

    /// The share of definite claims a simulated warp showed.
    pub fn shown_share(&self) -> f64 {
        ratio(self.shown, self.definite)
    }

    /// The share of range ends a simulated request met.
    pub fn ends_share(&self) -> f64 {
        ratio(self.ends_met, self.ends)
    }

    /// `Err` naming each share below its floor.
    pub fn at_least(&self, decided: f64, shown: f64, ends: f64) -> Result<(), String> {
        let mut low = Vec::new();
        for (what, got, floor) in [
            ("definite claims", self.decided(), decided),
            (
                "definite claims shown by a simulated warp",
                self.shown_share(),
                shown,
            ),
            (
                "range ends met by a simulated request",
                self.ends_share(),
                ends,
            ),
        ] {
            if got < floor {
                low.push(format!(
                    "{what}: {:.1}% < floor {:.1}%",
                    100.0 * got,
                    100.0 * floor
                ));
            }
        }
        low.is_empty().then_some(()).ok_or_else(|| low.join("; "))
    }
}

impl std::ops::AddAssign for Precision {
    fn add_assign(&mut self, o: Precision) {
        self.definite += o.definite;
        self.shown += o.shown;
        self.undecided += o.undecided;
        self.ends += o.ends;
        self.ends_met += o.ends_met;
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1}% of {} claims definite, {:.1}% of those shown, {:.1}% of {} range ends met",
            100.0 * self.decided(),
            self.definite + self.undecided,
            100.0 * self.shown_share(),
            100.0 * self.ends_share(),
            self.ends
        )
    }
}

/// What the comparisons covered, and every contradiction found.
#[derive(Default, Debug)]
pub struct Tally {
    /// Launches simulated and compared.
    pub runs: usize,
    /// Launches the simulator refused or stopped (the caller decides
    /// whether that is allowed).
    pub skipped: usize,
    pub branches: usize,
    pub warps: usize,
    pub global: usize,
    pub shared: usize,
    /// Executed sites the analysis calls uniform per warp.
    pub uniform: usize,
    pub disagreements: Vec<String>,
    /// The kernel and shape the static sites are of (claims of one site
    /// over several runs are one claim).
    pub scope: String,
    /// Each claim by site and what it is, met in some run or not.
    claims: std::collections::HashMap<String, (Claim, bool)>,
    /// The precision of tallies absorbed (other modules and programs).
    absorbed: Precision,
}

impl Tally {
    /// Every site compared, of any kind.
    pub fn sites(&self) -> usize {
        self.branches + self.global + self.shared + self.uniform
    }

    fn claim(&mut self, site: &str, what: &str, claim: Claim, met: bool) {
        let e = self
            .claims
            .entry(format!("{} {site} {what}", self.scope))
            .or_insert((claim, false));
        e.1 |= met;
    }

    /// The precision of the claims compared so far.
    pub fn precision(&self) -> Precision {
        let mut p = self.absorbed;
        for &(claim, met) in self.claims.values() {
            match claim {
                Claim::Definite => {
                    (p.definite, p.shown) = (p.definite + 1, p.shown + usize::from(met))
                }
                Claim::Undecided => p.undecided += 1,
                Claim::End => (p.ends, p.ends_met) = (p.ends + 1, p.ends_met + usize::from(met)),
            }
        }
        p
    }

    /// Adds another tally's counts and precision (of other kernels: its
    /// claims stay its own).
    pub fn absorb(&mut self, o: Tally) {
        self.absorbed += o.precision();
        self.runs += o.runs;
        self.skipped += o.skipped;
        self.branches += o.branches;
        self.warps += o.warps;
        self.global += o.global;
        self.shared += o.shared;
        self.uniform += o.uniform;
        self.disagreements.extend(o.disagreements);
    }
}

/// Compares one simulated site with the static figures of its key.
/// `int(name)`: the value integer parameter `name` had in the run.
pub fn compare(kernel: &str, st: &Static, s: &SiteJson, int: &dyn Fn(&str) -> i128, t: &mut Tally) {
    let whole = s.lanes_max == WARP_SIZE;
    let site = format!("{}:{}:{} {}", s.file, s.line, s.column, s.kind);
    let mut found = Vec::new();
    let mut bad = |what: String| found.push(format!("{kernel}: {site}: {what}"));
    if st.uniform && s.executions > 0 {
        t.uniform += 1;
        if s.nonuniform > 0 {
            bad(format!(
                "uniform per warp statically, but the lanes disagreed in {} of {} warp executions",
                s.nonuniform, s.executions
            ));
        }
    }
    // Precision: what the figures claim, and what some run showed.
    let mut claims: Vec<(String, Claim, bool)> = Vec::new();
    if s.executions > 0 && s.kind != "branch" {
        let claim = if st.uniform {
            Claim::Definite
        } else {
            Claim::Undecided
        };
        claims.push(("uniform".into(), claim, s.lanes_max > 1));
    }
    if let Some(by) = &s.by_warp {
        for (w, ws) in by.iter().enumerate().filter(|(_, ws)| ws.executed > 0) {
            let (claim, met) = match st.by_warp.get(w).copied() {
                Some("split") => (Claim::Definite, ws.diverged > 0),
                Some("uniform") => (Claim::Definite, ws.whole > 0),
                _ => (Claim::Undecided, false),
            };
            claims.push((format!("warp {w}"), claim, met));
        }
    }
    let ranges = [
        (
            s.sectors.as_ref().map(|r| (r.min, r.max)),
            st.sectors.as_ref().map(|x| (x.0, x.1, x.3.clone())),
            &s.excess_at_max,
        ),
        (
            s.conflict.map(|r| (r.min, r.max)),
            st.conflict.as_ref().map(|x| (x.0, x.1, x.2.clone())),
            &s.conflict_at_max,
        ),
    ];
    for (what, (sim, stat, at_max)) in ["sectors", "conflict"].iter().zip(ranges) {
        let (Some((smin, smax)), Some((lo, hi, class))) = (sim, stat) else {
            continue;
        };
        claims.push((format!("{what} min"), Claim::End, smin == lo));
        claims.push((format!("{what} max"), Claim::End, smax == hi));
        let claim = match class.as_deref() {
            Some("unknown") | None => Claim::Undecided,
            Some(_) => Claim::Definite,
        };
        claims.push((format!("{what} class"), claim, at_max.is_some() && whole));
    }
    for (what, claim, met) in claims {
        t.claim(&site, &what, claim, met);
    }
    let mut bad = |what: String| found.push(format!("{kernel}: {site}: {what}"));
    if let (Some(sim), Some(most)) = (s.contention, st.contention) {
        if sim.max > most {
            bad(format!(
                "{} lanes updated one address, over the static contention {most}",
                sim.max
            ));
        }
    }
    if let Some(by) = &s.by_warp {
        t.branches += 1;
        for (w, ws) in by.iter().enumerate() {
            if ws.executed == 0 {
                continue;
            }
            t.warps += 1;
            match st.by_warp.get(w).copied() {
                // More blocks ran it whole than split it: one ran whole
                // and never split.
                Some("split") if ws.whole > ws.diverged => bad(format!(
                    "warp {w} said to split, but ran whole and undivided in {} of {} blocks",
                    ws.whole - ws.diverged,
                    ws.executed
                )),
                Some("uniform") if ws.diverged > 0 => bad(format!(
                    "warp {w} said uniform, but split in {} of {} blocks",
                    ws.diverged, ws.executed
                )),
                None => bad(format!("warp {w} ran the branch but has no static outcome")),
                _ => {}
            }
        }
    }
    let below = st
        .sectors_from
        .iter()
        .any(|(param, from)| int(param) < i128::from(*from));
    if let (Some(sim), Some((lo, hi, ideal, class)), false) = (&s.sectors, &st.sectors, below) {
        t.global += 1;
        if sim.min < *lo || sim.max > *hi {
            bad(format!(
                "sectors {}..{} outside static {lo}..{hi}",
                sim.min, sim.max
            ));
        }
        if let Some((rlo, rhi)) = st.sector_rows {
            if sim.min < rlo || sim.max > rhi {
                bad(format!(
                    "sectors {}..{} outside the per-iteration rows' {rlo}..{rhi}",
                    sim.min, sim.max
                ));
            }
        }
        // Each request against its own ideal: warps of one site (or the
        // calling contexts of a device function) can have different ones.
        if let Some(ex) = s.excess_at_max.as_ref().filter(|_| whole) {
            match class.as_deref() {
                Some("coalesced") if ex.max > 1 => bad(format!(
                    "coalesced, but a request took {} sectors over its ideal (static ideal {ideal})",
                    ex.max
                )),
                Some("uncoalesced") if ex.min <= 1 => bad(format!(
                    "uncoalesced, but a request took only {} sectors over its ideal (static ideal {ideal})",
                    ex.min
                )),
                _ => {}
            }
        }
    }
    if let (Some(sim), Some((lo, hi, class))) = (&s.conflict, &st.conflict) {
        t.shared += 1;
        if sim.min < *lo || sim.max > *hi {
            bad(format!(
                "conflict degree {}..{} outside static {lo}..{hi}",
                sim.min, sim.max
            ));
        }
        if let Some((rlo, rhi)) = st.conflict_rows {
            if sim.min < rlo || sim.max > rhi {
                bad(format!(
                    "conflict degree {}..{} outside the per-iteration rows' {rlo}..{rhi}",
                    sim.min, sim.max
                ));
            }
        }
        if let Some(at) = s.conflict_at_max.as_ref().filter(|_| whole) {
            match class.as_deref() {
                Some("none") if at.max > 1 => bad(format!("conflict-free, but {}-way", at.max)),
                Some("conflict") if at.min <= 1 => bad("a conflict, but conflict-free".into()),
                _ => {}
            }
        }
    }
    t.disagreements.extend(found);
}

/// The static report of every kernel of `m`, analysed for `block`, as
/// `check --format json` prints it.
pub fn static_report(m: &Module, block: [u32; 3]) -> Value {
    let a = super::helpers::analyze_at(m, block);
    let figures = warpcheck::checks::measure_all(&a);
    let mut r = Report::new();
    r.add(&a, &figures, &[]);
    serde_json::to_value(&r).unwrap()
}

/// The static sites of kernel `k` in a report of [`static_report`].
pub fn kernel_sites(m: &Module, k: FuncId, report: &Value) -> BTreeMap<SiteKey, Static> {
    let name = &m.func(k).name;
    let kernel = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["mangled"] == name.as_str())
        .unwrap_or_else(|| panic!("no kernel {name} in the static report"));
    static_sites(kernel)
}

/// Simulates kernel `k` on `grid` blocks of `block` threads with
/// [`iota_arguments`] (`int` for integers) and compares every simulated
/// site with `statics`, which must come from the analysis at `block`.
pub fn simulate_and_compare(
    m: &Module,
    k: FuncId,
    statics: &BTreeMap<SiteKey, Static>,
    config: &LaunchConfig,
    int: i128,
    t: &mut Tally,
) -> Result<(), SimError> {
    let args = iota_arguments(m, k, int);
    simulate_args_and_compare(m, k, statics, config, &args, t)
}

/// [`simulate_and_compare`] with the arguments given.
pub fn simulate_args_and_compare(
    m: &Module,
    k: FuncId,
    statics: &BTreeMap<SiteKey, Static>,
    config: &LaunchConfig,
    args: &[(String, ArgValue)],
    t: &mut Tally,
) -> Result<(), SimError> {
    let o = sim::simulate(m, k, config, args)?;
    t.runs += 1;
    let ints: Vec<(&str, i128)> = args
        .iter()
        .filter_map(|(name, v)| match v {
            ArgValue::Int(i) => Some((name.as_str(), *i)),
            _ => None,
        })
        .collect();
    let shown: Vec<String> = ints.iter().map(|(n, i)| format!("{n}={i}")).collect();
    let label = format!("{} {:?} {}", m.func(k).name, config.block, shown.join(" "));
    // One site's claims over the runs of its kernel and shape.
    t.scope = format!("{} {:?}", m.func(k).name, config.block);
    // A parameter the report names but the arguments do not (a source
    // name): the lowest integer argument, the cautious reading.
    let lowest = ints.iter().map(|(_, i)| *i).min().unwrap_or(0);
    let int = |name: &str| {
        ints.iter()
            .find(|(n, _)| *n == name)
            .map_or(lowest, |(_, i)| *i)
    };
    for s in report::sites(m, &o) {
        let key = sim_key(&s);
        match statics.get(&key) {
            Some(st) => compare(&label, st, &s, &int, t),
            None => t.disagreements.push(format!(
                "{label}: simulated site {key:?} has no static site"
            )),
        }
    }
    Ok(())
}
