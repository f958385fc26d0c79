//! One warning for several accesses of one line with one cause, as clang
//! groups notes under a warning: `p[i].x += p[i].vx * dt` loads `x` and
//! `vx` and stores `x` with the same stride, and the fix (a structure of
//! arrays) is one. The first access (by column, then order) keeps its
//! place, fingerprint and NOLINT; its message lists the accesses, its data
//! holds each one's figures under `accesses`, its impact is their sum.

use crate::analysis::ModuleAnalysis;
use crate::dataflow::FastMap as HashMap;
use crate::finding::{Finding, Impact, Severity};
use crate::ir::{FuncId, InstId, SiteKind};

/// The checks whose findings are grouped: access checks, whose cause is
/// the address's shape (their hint names it).
const GROUPED: [&str; 2] = ["uncoalesced-access", "bank-conflict"];

/// Groups warnings of [`GROUPED`] checks at one kernel, file and line with
/// the same hint, stride and worst figure; the others keep their order.
pub fn group(a: &ModuleAnalysis<'_>, findings: Vec<Finding>) -> Vec<Finding> {
    let kinds: HashMap<(FuncId, InstId), SiteKind> = a
        .kernels
        .iter()
        .flat_map(|k| &k.sites)
        .map(|s| ((s.func, s.inst), s.kind))
        .collect();
    // The cause: the check, its hint, and the figure's shape (the stride
    // between lanes and the worst sectors or degree).
    type Key = (&'static str, String, String, u32, String, String);
    let key = |f: &Finding| -> Option<Key> {
        let p = f.pos.as_ref()?;
        let hint = f.notes.iter().find(|n| n.starts_with("hint:"))?;
        let shape = f.data.as_ref().map_or(String::new(), |d| {
            format!("{} {}", d["stride"], d["full_max"])
        });
        (GROUPED.contains(&f.check) && f.severity == Severity::Warning && p.line > 0).then(|| {
            (
                f.check,
                f.kernel.clone(),
                p.file.clone(),
                p.line,
                hint.clone(),
                shape,
            )
        })
    };
    let mut members: HashMap<Key, Vec<usize>> = HashMap::default();
    for (i, f) in findings.iter().enumerate() {
        if let Some(k) = key(f) {
            members.entry(k).or_default().push(i);
        }
    }
    let mut lead: HashMap<usize, Vec<usize>> = HashMap::default();
    let mut dropped = vec![false; findings.len()];
    for mut group in members.into_values().filter(|g| g.len() > 1) {
        let col = |i: &usize| findings[*i].pos.as_ref().map_or(0, |p| p.col);
        group.sort_by_key(|i| (col(i), *i));
        for &i in &group[1..] {
            dropped[i] = true;
        }
        lead.insert(group[0], group);
    }
    let kind = |f: &Finding| {
        f.inst
            .and_then(|i| kinds.get(&(f.func, i)))
            .map_or("access", |k| k.name())
    };
    let mut out = Vec::with_capacity(findings.len());
    for (i, f) in findings.iter().enumerate() {
        if dropped[i] {
            continue;
        }
        let Some(group) = lead.get(&i) else {
            out.push(f.clone());
            continue;
        };
        let parts: Vec<&Finding> = group.iter().map(|&j| &findings[j]).collect();
        out.push(merged(&parts, &kind));
    }
    out
}

/// The group's one finding, led by `parts[0]`.
fn merged(parts: &[&Finding], kind: &dyn Fn(&Finding) -> &'static str) -> Finding {
    let lead = parts[0];
    let where_ = |f: &Finding| {
        let col = f.pos.as_ref().map_or(0, |p| p.col);
        format!("{} at column {col}", kind(f))
    };
    let list: Vec<String> = parts.iter().map(|f| where_(f)).collect();
    let mut notes = lead.notes.clone();
    for f in &parts[1..] {
        notes.push(format!("also the {}: {}", where_(f), f.message));
    }
    let accesses: Vec<serde_json::Value> = parts
        .iter()
        .map(|f| {
            serde_json::json!({
                "kind": kind(f),
                "column": f.pos.as_ref().map_or(0, |p| p.col),
                "message": f.message,
                "data": f.data,
            })
        })
        .collect();
    let mut data = lead.data.clone().unwrap_or_else(|| serde_json::json!({}));
    if let Some(obj) = data.as_object_mut() {
        obj.insert("accesses".into(), serde_json::Value::Array(accesses));
    }
    Finding {
        message: format!(
            "{} ({} accesses of this line, one cause: {})",
            lead.message,
            parts.len(),
            list.join(", ")
        ),
        notes,
        data: Some(data),
        impact: summed(parts),
        ..lead.clone()
    }
}

/// The members' impacts added (unknown if one is).
fn summed(parts: &[&Finding]) -> Option<Impact> {
    let all: Option<Vec<&Impact>> = parts.iter().map(|f| f.impact.as_ref()).collect();
    let all = all?;
    let first = all[0].clone();
    let add = |get: fn(&Impact) -> Option<f64>| -> Option<f64> {
        all.iter().map(|i| get(i)).sum::<Option<f64>>()
    };
    let mut inputs = first.inputs.clone();
    inputs.insert("grouped_accesses", parts.len() as f64);
    for key in ["excess_sectors", "excess_wavefronts"] {
        if inputs.contains_key(key) {
            let total: f64 = all.iter().filter_map(|i| i.inputs.get(key)).sum();
            inputs.insert(key, total);
        }
    }
    Some(Impact {
        cycles: add(|i| i.cycles),
        share: add(|i| i.share).map(|s| s.min(1.0)),
        inputs,
        reason: first.reason.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::FuncId;

    fn access(cycles: f64, share: f64, excess: f64) -> Finding {
        Finding {
            check: "uncoalesced-access",
            severity: Severity::Warning,
            func: FuncId(0),
            inst: None,
            pos: None,
            kernel: "k".into(),
            function: "k".into(),
            message: String::new(),
            notes: Vec::new(),
            data: None,
            impact: Some(Impact {
                cycles: Some(cycles),
                share: Some(share),
                inputs: [("excess_sectors", excess), ("executions", 1.0)].into(),
                reason: None,
            }),
        }
    }

    #[test]
    fn a_group_costs_the_sum_of_its_accesses() {
        let (a, b) = (access(10.0, 0.25, 20.0), access(30.0, 0.5, 20.0));
        let i = summed(&[&a, &b]).unwrap();
        assert_eq!((i.cycles, i.share), (Some(40.0), Some(0.75)));
        assert_eq!(i.inputs["excess_sectors"], 40.0);
        assert_eq!(i.inputs["grouped_accesses"], 2.0);
        // Shares over the whole kernel are capped; one unknown: unknown.
        let c = access(10.0, 0.5, 1.0);
        assert_eq!(summed(&[&b, &c, &c]).unwrap().share, Some(1.0));
        let d = Finding { impact: None, ..a };
        assert!(summed(&[&b, &d]).is_none());
    }
}
