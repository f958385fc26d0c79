//! The linear programs behind the bounds. The stage builds an [`Lp`] and
//! asks a [`Solver`] (CBC, in `cbc.rs`, is the one the bounds use), so it
//! is tested without CBC, and a failed solve is "no bound", never an
//! error.

use crate::ir::entity::entity;

entity!(
    /// A nonnegative LP variable: one potential coefficient.
    VarId
);

/// `Σ coeff·var ≥ lo`.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub terms: Vec<(VarId, f64)>,
    pub lo: f64,
}

/// Variables (all nonnegative) and rows.
#[derive(Clone, Debug, Default)]
pub struct Lp {
    pub vars: usize,
    pub rows: Vec<Row>,
}

impl Lp {
    pub fn var(&mut self) -> VarId {
        self.vars += 1;
        VarId::new(self.vars - 1)
    }
}

/// Minimises a linear objective over an [`Lp`].
pub trait Solver {
    fn minimize(&self, lp: &Lp, objective: &[(VarId, f64)]) -> Result<Vec<f64>, String>;
}

/// Absynth's rounds: minimise the first objective, keep it at its
/// optimum, minimise the next, and so on (the caller orders them: highest
/// degree first never trades a smaller constant for a larger leading
/// term, lowest first is tight where the parameters are small).
pub fn lexicographic(
    solver: &dyn Solver,
    lp: &Lp,
    rounds: &[Vec<(VarId, f64)>],
) -> Result<Vec<f64>, String> {
    let mut lp = lp.clone();
    let mut last = Vec::new();
    for obj in rounds {
        if obj.is_empty() {
            continue;
        }
        let x = solver.minimize(&lp, obj)?;
        let opt: f64 = obj.iter().map(|&(v, c)| c * x[v.index()]).sum();
        // Keep the optimum (as `-obj ≥ -opt`), with room for round-off.
        lp.rows.push(Row {
            terms: obj.iter().map(|&(v, c)| (v, -c)).collect(),
            lo: -(opt + 1e-7 * opt.abs().max(1.0)),
        });
        last = x;
    }
    if last.is_empty() {
        last = solver.minimize(&lp, &[])?;
    }
    Ok(last)
}
