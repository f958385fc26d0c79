//! What a comparison covered: counts, contradictions and the precision of
//! the claims.

/// One claim of a site, for [`Precision`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Claim {
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

    pub(super) fn claim(&mut self, site: &str, what: &str, claim: Claim, met: bool) {
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
