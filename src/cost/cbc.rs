//! COIN-OR CBC's C API, opened with `dlopen` the first time a bound is
//! asked for. Linking it would load CBC, Clp, CoinUtils, LAPACK and
//! gfortran into every compile that loads the plugin (about 3 ms each,
//! measured with `scripts/bench-plugin.sh`), though a build asks for
//! bounds only when configured to.
//!
//! The problem is handed over exactly as good_lp's CBC backend did before
//! (columns `[0, ∞)`, rows `-Σ c·x ≤ -lo`, duplicate terms summed, zero
//! weights dropped, parameters in name order), so the solutions, and the
//! bounds printed from them, did not change.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

use super::lp::{Lp, Solver, VarId};

/// Where to look, in order, unless `WARPCHECK_CBC` names the library file.
const NAMES: &[&str] = &["libCbcSolver.so.3", "libCbcSolver.so"];

type Model = *mut c_void;

/// The entry points we call, resolved once.
struct Api {
    new_model: unsafe extern "C" fn() -> Model,
    delete_model: unsafe extern "C" fn(Model),
    #[allow(clippy::type_complexity)]
    load_problem: unsafe extern "C" fn(
        Model,
        c_int,
        c_int,
        *const c_int,
        *const c_int,
        *const f64,
        *const f64,
        *const f64,
        *const f64,
        *const f64,
        *const f64,
    ),
    set_continuous: unsafe extern "C" fn(Model, c_int),
    set_obj_sense: unsafe extern "C" fn(Model, f64),
    set_parameter: unsafe extern "C" fn(Model, *const c_char, *const c_char),
    set_log_level: unsafe extern "C" fn(Model, c_int),
    solve: unsafe extern "C" fn(Model) -> c_int,
    status: unsafe extern "C" fn(Model) -> c_int,
    secondary_status: unsafe extern "C" fn(Model) -> c_int,
    is_continuous_unbounded: unsafe extern "C" fn(Model) -> c_int,
    is_proven_infeasible: unsafe extern "C" fn(Model) -> c_int,
    get_num_cols: unsafe extern "C" fn(Model) -> c_int,
    get_col_solution: unsafe extern "C" fn(Model) -> *const f64,
}

/// CBC's own statuses (`Cbc_status`, `Cbc_secondaryStatus`).
const STOPPED: c_int = 1;
const STOPPED_ON_TIME: c_int = 4;
const FINISHED: c_int = 0;
const UNLAUNCHED: c_int = -1;

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".to_string()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn open() -> Result<*mut c_void, String> {
    let names: Vec<String> = match std::env::var("WARPCHECK_CBC") {
        Ok(path) => vec![path],
        Err(_) => NAMES.iter().map(|s| s.to_string()).collect(),
    };
    let mut last = String::new();
    for name in &names {
        let c = CString::new(name.as_str()).map_err(|_| format!("bad library name {name:?}"))?;
        // SAFETY: a plain dlopen of a C library; the handle is kept for
        // the life of the process.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !h.is_null() {
            return Ok(h);
        }
        last = dl_error();
    }
    Err(format!(
        "COIN-OR CBC could not be loaded ({last}); install it (Debian: apt install \
         coinor-libcbc3) or name the library in WARPCHECK_CBC"
    ))
}

fn symbol(h: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    let c = CString::new(name).expect("symbol names have no NUL");
    // SAFETY: looks a name up in a handle that stays open.
    let p = unsafe { libc::dlsym(h, c.as_ptr()) };
    if p.is_null() {
        Err(format!("COIN-OR CBC lacks {name} ({})", dl_error()))
    } else {
        Ok(p)
    }
}

/// A symbol as the function type of the field it fills.
fn function<F: Copy>(p: *mut c_void) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: F is the function-pointer type of CBC's C function of that
    // name (Cbc_C_Interface.h, stable since CBC 2.8).
    unsafe { std::mem::transmute_copy(&p) }
}

impl Api {
    fn load() -> Result<Api, String> {
        let h = open()?;
        macro_rules! f {
            ($name:literal) => {
                function(symbol(h, $name)?)
            };
        }
        Ok(Api {
            new_model: f!("Cbc_newModel"),
            delete_model: f!("Cbc_deleteModel"),
            load_problem: f!("Cbc_loadProblem"),
            set_continuous: f!("Cbc_setContinuous"),
            set_obj_sense: f!("Cbc_setObjSense"),
            set_parameter: f!("Cbc_setParameter"),
            set_log_level: f!("Cbc_setLogLevel"),
            solve: f!("Cbc_solve"),
            status: f!("Cbc_status"),
            secondary_status: f!("Cbc_secondaryStatus"),
            is_continuous_unbounded: f!("Cbc_isContinuousUnbounded"),
            is_proven_infeasible: f!("Cbc_isProvenInfeasible"),
            get_num_cols: f!("Cbc_getNumCols"),
            get_col_solution: f!("Cbc_getColSolution"),
        })
    }
}

// SAFETY: the table holds plain function pointers.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(Api::load).as_ref().map_err(Clone::clone)
}

/// CBC keeps global state while it solves; one solve at a time.
static SOLVING: Mutex<()> = Mutex::new(());

/// Frees the model however the solve ends.
struct Owned<'a>(&'a Api, Model);

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        // SAFETY: the model came from Cbc_newModel and is freed once.
        unsafe { (self.0.delete_model)(self.1) }
    }
}

/// COIN-OR CBC, loaded on first use, with a time limit.
pub struct Cbc {
    pub seconds: f64,
}

impl Solver for Cbc {
    fn minimize(&self, lp: &Lp, objective: &[(VarId, f64)]) -> Result<Vec<f64>, String> {
        solve(lp, objective, self.seconds)
    }
}

/// Minimises `objective` over `lp` (rows `Σ c·x ≥ lo`, `x ≥ 0`) within
/// `seconds`; the column values, or why there are none.
fn solve(lp: &Lp, objective: &[(VarId, f64)], seconds: f64) -> Result<Vec<f64>, String> {
    let api = api()?;
    // Each column's weights by row, as rows `-Σ c·x ≤ -lo`.
    let mut cols: Vec<BTreeMap<c_int, f64>> = vec![BTreeMap::new(); lp.vars];
    for (r, row) in lp.rows.iter().enumerate() {
        for &(v, c) in &row.terms {
            *cols[v.index()].entry(r as c_int).or_insert(0.0) -= c;
        }
    }
    let (mut start, mut index, mut value) = (vec![0 as c_int], Vec::new(), Vec::new());
    for col in &cols {
        for (&r, &w) in col {
            if w != 0.0 {
                index.push(r);
                value.push(w);
            }
        }
        start.push(index.len() as c_int);
    }
    let mut obj = vec![0.0; lp.vars];
    for &(v, c) in objective {
        obj[v.index()] += c;
    }
    let col_lower = vec![0.0; lp.vars];
    let col_upper = vec![f64::INFINITY; lp.vars];
    let row_lower = vec![f64::NEG_INFINITY; lp.rows.len()];
    let row_upper: Vec<f64> = lp.rows.iter().map(|r| -r.lo).collect();
    let sec = (seconds.max(0.01).ceil() as usize).to_string();
    let params = [("log", "0"), ("sec", sec.as_str()), ("slogLevel", "0")];

    let _one = SOLVING.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: every array has the length CBC reads from the counts given.
    let m = Owned(api, unsafe { (api.new_model)() });
    unsafe {
        (api.load_problem)(
            m.1,
            lp.vars as c_int,
            lp.rows.len() as c_int,
            start.as_ptr(),
            index.as_ptr(),
            value.as_ptr(),
            col_lower.as_ptr(),
            col_upper.as_ptr(),
            obj.as_ptr(),
            row_lower.as_ptr(),
            row_upper.as_ptr(),
        );
        for c in 0..lp.vars {
            (api.set_continuous)(m.1, c as c_int);
        }
        (api.set_obj_sense)(m.1, 1.0);
        for (k, v) in params {
            let (k, v) = (CString::new(k).unwrap(), CString::new(v).unwrap());
            (api.set_parameter)(m.1, k.as_ptr(), v.as_ptr());
        }
        (api.set_log_level)(m.1, 0);
        (api.solve)(m.1);
    }
    // SAFETY: status queries on a solved model.
    let (status, secondary) = unsafe { ((api.status)(m.1), (api.secondary_status)(m.1)) };
    match status {
        STOPPED if secondary == STOPPED_ON_TIME => {}
        FINISHED | UNLAUNCHED => {
            if unsafe { (api.is_continuous_unbounded)(m.1) } != 0 {
                return Err("the LP has no solution (unbounded)".into());
            }
            if unsafe { (api.is_proven_infeasible)(m.1) } != 0 {
                return Err("the LP has no solution (infeasible)".into());
            }
        }
        other => return Err(format!("the LP has no solution (CBC status {other})")),
    }
    // SAFETY: CBC's solution has one value per column.
    let n = unsafe { (api.get_num_cols)(m.1) } as usize;
    let x = unsafe { (api.get_col_solution)(m.1) };
    if x.is_null() || n < lp.vars {
        return Err("the LP has no solution (CBC returned none)".into());
    }
    Ok(unsafe { std::slice::from_raw_parts(x, lp.vars) }.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::lp::{lexicographic, Row};

    #[test]
    fn rounds_keep_earlier_optima() {
        // x + y ≥ 2, x ≥ 0.5: minimise y first (0, with x ≥ 2), then x.
        let mut lp = Lp::default();
        let (x, y) = (lp.var(), lp.var());
        lp.rows.push(Row {
            terms: vec![(x, 1.0), (y, 1.0)],
            lo: 2.0,
        });
        lp.rows.push(Row {
            terms: vec![(x, 1.0)],
            lo: 0.5,
        });
        let sol = lexicographic(
            &Cbc { seconds: 5.0 },
            &lp,
            &[vec![(y, 1.0)], vec![(x, 1.0)]],
        )
        .unwrap();
        assert!(
            (sol[0] - 2.0).abs() < 1e-6 && sol[1].abs() < 1e-6,
            "{sol:?}"
        );
    }
}
