//! The linear programs behind the bounds, and the one place that knows the
//! solver. The rest of the stage builds an [`Lp`] and asks a [`Solver`],
//! so it is tested without CBC, and a failed solve is "no bound", never an
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
/// optimum, minimise the next, and so on (highest degree first, so a bound
/// never trades a smaller constant for a larger leading term).
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

/// COIN-OR CBC (loaded on first use, see [`super::cbc`]), with a time
/// limit.
pub struct Cbc {
    pub seconds: f64,
}

impl Solver for Cbc {
    fn minimize(&self, lp: &Lp, objective: &[(VarId, f64)]) -> Result<Vec<f64>, String> {
        super::cbc::solve(lp, objective, self.seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
