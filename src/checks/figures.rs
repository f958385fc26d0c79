//! What the checks measure at a site, kept per site before any check
//! judges: each check's figure under its own type, so that the JSON report,
//! the cost stage and the time bounds read them without a list of checks.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

/// The least and the most of a figure over the executions the lanes allow
/// (bank-conflict ways, lanes contending for one address).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MinMax {
    pub min: u64,
    pub max: u64,
}

/// A site's figures per value of the loop counter that the launch fixes
/// (a branch's splits, an access's sectors or conflict degrees), one row
/// type per check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Iterations<Row> {
    /// The counter, as the source names it.
    pub counter: String,
    /// Whether the site runs on every one of these iterations (else the
    /// rows say what can happen, never what must).
    pub certain: bool,
    pub rows: Vec<Row>,
}

/// A check's measurement of one site. Each figure type belongs to one
/// check, whose JSON site shows it under `KEY` and whose findings carry
/// it as their `data`.
pub trait Figure: Serialize + Debug + Send + Sync + 'static {
    /// Its key in the JSON site (`divergence`, `sectors`, `conflict`).
    const KEY: &'static str;
}

/// A figure whose type only the check that made it knows.
trait AnyFigure: Debug + Send + Sync {
    fn key(&self) -> &'static str;
    fn json(&self) -> serde_json::Result<serde_json::Value>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<F: Figure> AnyFigure for F {
    fn key(&self) -> &'static str {
        F::KEY
    }

    fn json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// What warpcheck predicts for one site: the figures of the checks that
/// apply to it, in the checks' order.
#[derive(Clone, Debug, Default)]
pub struct SiteFigures {
    /// Shared, not copied, by the reports that show them.
    figures: Vec<Arc<dyn AnyFigure>>,
    /// Why the figures are unknown, when it is not the code: [`BUDGET`]
    /// when the kernel's analysis stopped on one.
    pub reason: Option<&'static str>,
}

/// [`SiteFigures::reason`] of a kernel over budget.
pub const BUDGET: &str = "budget";

impl SiteFigures {
    /// Keeps a check's figure, after those of the checks before it.
    pub(super) fn push<F: Figure>(&mut self, figure: F) {
        self.figures.push(Arc::new(figure));
    }

    /// The site's figure of type `F`, if the check that measures it applies.
    pub fn get<F: Figure>(&self) -> Option<&F> {
        self.figures.iter().find_map(|f| f.as_any().downcast_ref())
    }

    /// The figure of type `F` to complete, while the measuring stage still
    /// holds the only reference to it.
    pub(super) fn get_mut<F: Figure>(&mut self) -> Option<&mut F> {
        self.figures
            .iter_mut()
            .find_map(|f| Arc::get_mut(f)?.as_any_mut().downcast_mut())
    }
}

/// Each figure under its key, then the reason: the JSON site's fields.
impl Serialize for SiteFigures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for f in &self.figures {
            let json = f.json().map_err(serde::ser::Error::custom)?;
            map.serialize_entry(f.key(), &json)?;
        }
        if let Some(r) = self.reason {
            map.serialize_entry("reason", r)?;
        }
        map.end()
    }
}

/// A site's class from its warps' `(class, lanes that can be active)`:
/// the class they all have, `empty` when none runs it. Classes are claims
/// about warps running whole, so where the warps with the most lanes all
/// have the `worse` class and the others (fewer lanes, under a bound or a
/// partial loop) the `fine` one, the site has the `worse` class: a warp
/// left a few lanes does not undo its neighbours' conflict. Any other mix
/// is `unknown`.
pub fn site_class<C: Copy + PartialEq>(
    warps: &[(C, u32)],
    [fine, worse, unknown, empty]: [C; 4],
) -> C {
    let Some(&(first, _)) = warps.first() else {
        return empty;
    };
    if warps.iter().all(|&(c, _)| c == first) {
        return first;
    }
    let most = warps.iter().map(|&(_, n)| n).max().unwrap_or(0);
    let fullest_worse = warps.iter().all(|&(c, n)| {
        if n == most {
            c == worse
        } else {
            c == worse || c == fine
        }
    });
    if fullest_worse {
        worse
    } else {
        unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Debug, PartialEq)]
    struct Width {
        lanes: u32,
    }

    impl Figure for Width {
        const KEY: &'static str = "width";
    }

    #[test]
    fn figures_are_found_by_type_and_shown_under_their_key() {
        let mut fig = SiteFigures {
            reason: Some(BUDGET),
            ..SiteFigures::default()
        };
        fig.push(Width { lanes: 32 });
        assert_eq!(fig.get::<Width>(), Some(&Width { lanes: 32 }));
        assert_eq!(
            serde_json::to_string(&fig).unwrap(),
            r#"{"width":{"lanes":32},"reason":"budget"}"#
        );
        let none = SiteFigures::default();
        assert_eq!(none.get::<Width>(), None);
        assert_eq!(serde_json::to_string(&none).unwrap(), "{}");
    }

    const CLASSES: [char; 4] = ['n', 'c', '?', '-'];

    #[test]
    fn whole_warps_decide_the_class() {
        assert_eq!(site_class(&[], CLASSES), '-');
        assert_eq!(site_class(&[('n', 32), ('n', 4)], CLASSES), 'n');
        // Full warps conflict, a four-lane one cannot: a conflict.
        assert_eq!(site_class(&[('c', 32), ('c', 32), ('n', 4)], CLASSES), 'c');
        // A full warp without one: not every whole warp conflicts.
        assert_eq!(site_class(&[('c', 32), ('n', 32), ('n', 4)], CLASSES), '?');
        // Only the small warp conflicts: no claim.
        assert_eq!(site_class(&[('n', 32), ('c', 4)], CLASSES), '?');
        assert_eq!(site_class(&[('c', 32), ('?', 4)], CLASSES), '?');
    }
}
