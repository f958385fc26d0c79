//! One measured site against the static claims of its key.

use super::tally::Claim;
use super::{MeasuredSite, Static, Tally};
use crate::hw::WARP_SIZE;

/// One site's comparison.
#[derive(Debug, Default, Clone)]
pub struct Verdict {
    /// Each claim the measured figures contradict, named with the kernel
    /// and the site: a bug in the analysis.
    pub contradictions: Vec<String>,
}

/// Compares one measured site with the static figures of its key, adding
/// to `t`. `int(name)`: the least value integer parameter `name` had in
/// the launches measured.
pub fn compare(
    kernel: &str,
    st: &Static,
    s: &MeasuredSite,
    int: &dyn Fn(&str) -> i128,
    t: &mut Tally,
) -> Verdict {
    let whole = s.lanes_max == WARP_SIZE;
    let site = s.place();
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
    t.disagreements.extend(found.iter().cloned());
    Verdict {
        contradictions: found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agreement::{MinMax, WarpSite};

    fn access(excess: u64, lanes: u32) -> MeasuredSite {
        MeasuredSite {
            kind: "load".into(),
            file: "k.cu".into(),
            line: 3,
            column: 9,
            space: Some("global".into()),
            executions: 4,
            lanes_max: lanes,
            sectors: Some(MinMax {
                min: 4 + excess,
                max: 4 + excess,
            }),
            excess_at_max: Some(MinMax {
                min: excess,
                max: excess,
            }),
            ..MeasuredSite::default()
        }
    }

    fn coalesced() -> Static {
        Static {
            sectors: Some((4, 12, 4, Some("coalesced".into()))),
            ..Static::default()
        }
    }

    fn no_int(_: &str) -> i128 {
        0
    }

    #[test]
    fn a_whole_warp_over_its_ideal_contradicts_coalesced() {
        let mut t = Tally::default();
        let v = compare("k", &coalesced(), &access(8, 32), &no_int, &mut t);
        assert_eq!(v.contradictions.len(), 1, "{:?}", v.contradictions);
        assert!(v.contradictions[0].contains("k.cu:3:9 load"));
        assert_eq!(t.disagreements, v.contradictions);
        // One sector over the ideal is still coalesced (a misaligned warp).
        let v = compare("k", &coalesced(), &access(1, 32), &no_int, &mut t);
        assert!(v.contradictions.is_empty());
        // A class is a claim about whole warps: 31 lanes cannot break it.
        let v = compare("k", &coalesced(), &access(8, 31), &no_int, &mut t);
        assert!(v.contradictions.is_empty());
    }

    #[test]
    fn sectors_outside_the_static_range_contradict_it() {
        let mut t = Tally::default();
        let st = Static {
            sectors: Some((4, 8, 4, Some("unknown".into()))),
            ..Static::default()
        };
        let v = compare("k", &st, &access(5, 32), &no_int, &mut t);
        assert!(v.contradictions[0].contains("sectors 9..9 outside static 4..8"));
    }

    #[test]
    fn a_uniform_claim_breaks_when_lanes_disagree() {
        let mut t = Tally::default();
        let st = Static {
            uniform: true,
            ..Static::default()
        };
        let mut s = access(0, 32);
        s.nonuniform = 1;
        let v = compare("k", &st, &s, &no_int, &mut t);
        assert!(v.contradictions[0].contains("lanes disagreed in 1 of 4"));
    }

    #[test]
    fn a_warp_said_to_split_must_not_run_whole() {
        let mut t = Tally::default();
        let st = Static {
            by_warp: vec!["split", "uniform"],
            ..Static::default()
        };
        let mut s = access(0, 32);
        s.kind = "branch".into();
        s.by_warp = Some(vec![
            WarpSite {
                executed: 2,
                diverged: 0,
                whole: 2,
            },
            WarpSite {
                executed: 2,
                diverged: 1,
                whole: 2,
            },
        ]);
        let v = compare("k", &st, &s, &no_int, &mut t);
        assert_eq!(v.contradictions.len(), 2, "{:?}", v.contradictions);
        assert!(v.contradictions[0].contains("warp 0 said to split"));
        assert!(v.contradictions[1].contains("warp 1 said uniform, but split in 1 of 2"));
    }
}
