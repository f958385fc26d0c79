//! What a check is: one type in one file that says which sites it
//! measures, how, how it judges the figure and how it ranks it. The
//! registry holds checks as [`DynCheck`]s, their figure types erased.

use super::figures::{Figure, SiteFigures};
use super::fix::{Fix, SourceReader};
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::finding::{Finding, Kind, Severity};
use crate::ir::Module;

/// One check. Its file holds all of it; adding a check is that file and
/// its line in the registry (`CHECKS` in `checks/mod.rs`).
pub trait Check: Sync + 'static {
    /// Its name, summary and explanation (the `.md` beside its file).
    const KIND: Kind;
    /// A retired name the check took over: disabling it still silences
    /// this check's notes.
    const RETIRED_NAME: Option<&'static str> = None;
    /// What it measures at a site.
    type Figure: Figure;
    /// Whether it measures site `s`.
    fn applies(s: &Site) -> bool;
    /// Its figure at a site it applies to.
    fn measure(m: &Module, k: &KernelAnalysis, s: &Site) -> Self::Figure;
    /// Its figure with the module's graphs at hand (what the idioms of a
    /// branch's sides need); by default [`Check::measure`].
    fn measure_in(a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &Site) -> Self::Figure {
        Self::measure(a.module, k, s)
    }
    /// The verdict on a thread-dependent site with its figure, if the
    /// check has one.
    fn judge(s: &Site, fig: &Self::Figure) -> Option<Verdict>;
    /// How bad a figure is: of the findings that unrolled or inlined
    /// copies make at one position, the one of the worst severity and
    /// then the highest rank is kept.
    fn rank(fig: &Self::Figure) -> i64;
    /// Whether its warnings of one cause are one warning ([`super::group`]):
    /// the access checks, whose cause is the address's shape.
    const GROUPED: bool = false;
    /// The mechanical fix of one of its findings, if it has one
    /// (`--export-fixes`); `source` reads the files the finding names.
    fn fix(_m: &Module, _f: &Finding, _source: SourceReader<'_>) -> Option<Fix> {
        None
    }
}

/// What a check says of one site.
pub struct Verdict {
    pub severity: Severity,
    pub message: String,
    /// Shown with warnings, as a `hint:` note.
    pub hint: Option<String>,
}

/// What a check sees: the module's analyses, one kernel's results and
/// that kernel's site figures.
pub struct CheckContext<'a, 'm> {
    pub analysis: &'a ModuleAnalysis<'m>,
    pub kernel: &'a KernelAnalysis,
    pub figures: &'a [SiteFigures],
}

/// A finding and its rank.
pub type Ranked = (Finding, i64);

/// A [`Check`] as the registry holds it.
pub trait DynCheck: Sync {
    fn kind(&self) -> Kind;
    fn retired_name(&self) -> Option<&'static str>;
    /// Whether the check measures site `s`.
    fn applies_to(&self, s: &Site) -> bool;
    /// Adds the check's figure to `fig` if it applies to site `s`.
    fn measure(&self, a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &Site, fig: &mut SiteFigures);
    /// Findings, ranked, for every thread-dependent site the check judges.
    fn run(&self, cx: &CheckContext<'_, '_>) -> Vec<Ranked>;
    /// [`Check::GROUPED`].
    fn grouped(&self) -> bool;
    /// [`Check::fix`].
    fn fix(&self, m: &Module, f: &Finding, source: SourceReader<'_>) -> Option<Fix>;

    fn name(&self) -> &'static str {
        self.kind().name
    }
}

impl<C: Check> DynCheck for C {
    fn kind(&self) -> Kind {
        C::KIND
    }

    fn retired_name(&self) -> Option<&'static str> {
        C::RETIRED_NAME
    }

    fn applies_to(&self, s: &Site) -> bool {
        C::applies(s)
    }

    fn grouped(&self) -> bool {
        C::GROUPED
    }

    fn fix(&self, m: &Module, f: &Finding, source: SourceReader<'_>) -> Option<Fix> {
        C::fix(m, f, source)
    }

    fn measure(&self, a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &Site, fig: &mut SiteFigures) {
        if C::applies(s) {
            fig.push(C::measure_in(a, k, s));
        }
    }

    fn run(&self, cx: &CheckContext<'_, '_>) -> Vec<Ranked> {
        let m = cx.analysis.module;
        let kernel = &m.func(cx.kernel.kernel).demangled;
        cx.kernel
            .sites
            .iter()
            .zip(cx.figures)
            // A kernel over budget gets one note, not one per site. A
            // uniform access is judged only as an atomic (its lanes on one
            // address serialise).
            .filter(|(s, fig)| {
                (s.thread_dependent || s.kind == crate::ir::SiteKind::Atomic)
                    && fig.reason.is_none()
            })
            .filter_map(|(s, fig)| {
                let fig = fig.get::<C::Figure>()?;
                let v = C::judge(s, fig)?;
                let mut notes = Vec::new();
                if let (Severity::Warning, Some(h)) = (v.severity, &v.hint) {
                    notes.push(format!("hint: {h}"));
                }
                notes.extend(explanation_notes(cx, s));
                let finding = Finding {
                    check: C::KIND.name,
                    severity: v.severity,
                    func: s.func,
                    inst: Some(s.inst),
                    pos: s.pos.as_ref().map(|p| crate::ir::Position::resolve(m, p)),
                    kernel: kernel.clone(),
                    function: m.func(s.func).demangled.clone(),
                    message: v.message,
                    notes,
                    data: serde_json::to_value(fig).ok(),
                    impact: None,
                };
                Some((finding, C::rank(fig)))
            })
            .collect()
    }
}

/// The `--explain` notes of a finding at site `s`: the dependence chain
/// and the site's value per lane as its ACF.
fn explanation_notes(cx: &CheckContext<'_, '_>, s: &Site) -> Vec<String> {
    // Explanations left out (text without --explain, the plugin).
    if s.why.is_empty() {
        return Vec::new();
    }
    let mut notes = vec![format!("dependence: {}", s.why.join(" → "))];
    if let Some(acf) = cx.kernel.acf.render(cx.analysis.module, s.func, s.value) {
        notes.push(format!("per lane: {acf}"));
    }
    notes
}
