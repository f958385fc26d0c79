//! One warning for several accesses with one cause, as clang groups notes
//! under a warning. `p[i].x += p[i].vx * dt` loads `x` and `vx` and
//! stores `x` with the same stride between lanes, and so do the next
//! lines for `y` and `z`: the fix (a structure of arrays) is one. Accesses
//! of one kernel are one cause when they reach the same array (a kernel
//! parameter, a global, a local array: `memory::origin`'s root) with the
//! same lane stride and hint; where the array is not known, only the
//! accesses of one line with the same worst figure are. The first access
//! (by line, column, then order) keeps its place, fingerprint and NOLINT;
//! its message lists the accesses, its data holds each one's line, column
//! and figures under `accesses`, its impact is their sum.

use crate::analysis::{KernelAnalysis, ModuleAnalysis};
use crate::dataflow::FastMap as HashMap;
use crate::finding::{Finding, Impact, Severity};
use crate::ir::{FuncId, InstId, SiteKind};
use crate::memory::Root;

/// What one access site is, for grouping: its kind, and the array its
/// address reaches when that is known.
#[derive(Clone, Copy)]
struct SiteInfo {
    kind: SiteKind,
    root: Option<Root>,
}

/// What makes two findings one cause.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Cause {
    /// One array, one stride between lanes, one hint, in one kernel.
    Array {
        check: &'static str,
        kernel: String,
        root: Root,
        stride: String,
        hint: String,
    },
    /// One line, one hint, one stride and worst figure, in one kernel.
    Line {
        check: &'static str,
        kernel: String,
        file: String,
        line: u32,
        hint: String,
        shape: String,
    },
}

/// Groups warnings of one cause ([`Cause`]) of the checks that say their
/// findings group ([`super::Check::GROUPED`]); the others keep their order.
pub fn group(a: &ModuleAnalysis<'_>, findings: Vec<Finding>) -> Vec<Finding> {
    let sites = site_infos(a);
    let info = |f: &Finding| {
        f.inst
            .and_then(|i| sites.get(&(f.kernel.as_str(), f.func, i)).copied())
    };
    let cause = |f: &Finding| -> Option<Cause> {
        let p = f.pos.as_ref()?;
        let hint = f.notes.iter().find(|n| n.starts_with("hint:"))?.clone();
        let grouped = super::find(f.check).is_some_and(|c| c.grouped());
        if !(grouped && f.severity == Severity::Warning && p.line > 0) {
            return None;
        }
        let field = |k: &str| f.data.as_ref().map_or(String::new(), |d| d[k].to_string());
        Some(match info(f).and_then(|i| i.root) {
            Some(root) => Cause::Array {
                check: f.check,
                kernel: f.kernel.clone(),
                root,
                stride: field("stride"),
                hint,
            },
            None => Cause::Line {
                check: f.check,
                kernel: f.kernel.clone(),
                file: p.file.clone(),
                line: p.line,
                hint,
                shape: format!("{} {}", field("stride"), field("full_max")),
            },
        })
    };
    let mut members: HashMap<Cause, Vec<usize>> = HashMap::default();
    for (i, f) in findings.iter().enumerate() {
        if let Some(k) = cause(f) {
            members.entry(k).or_default().push(i);
        }
    }
    let mut lead: HashMap<usize, (Option<Root>, Vec<usize>)> = HashMap::default();
    let mut dropped = vec![false; findings.len()];
    for (cause, mut group) in members.into_iter().filter(|(_, g)| g.len() > 1) {
        let at = |i: &usize| {
            let p = findings[*i].pos.as_ref();
            (p.map_or(0, |p| p.line), p.map_or(0, |p| p.col), *i)
        };
        group.sort_by_key(at);
        for &i in &group[1..] {
            dropped[i] = true;
        }
        let root = match cause {
            Cause::Array { root, .. } => Some(root),
            Cause::Line { .. } => None,
        };
        lead.insert(group[0], (root, group));
    }
    let kind = |f: &Finding| info(f).map_or("access", |i| i.kind.name());
    let mut out = Vec::with_capacity(findings.len());
    for (i, f) in findings.iter().enumerate() {
        if dropped[i] {
            continue;
        }
        let Some((root, group)) = lead.get(&i) else {
            out.push(f.clone());
            continue;
        };
        let parts: Vec<&Finding> = group.iter().map(|&j| &findings[j]).collect();
        let array = root.and_then(|r| array_name(a, f, r));
        out.push(merged(&parts, &kind, array.as_deref()));
    }
    out
}

/// Each access site of each kernel, by kernel name, function and
/// instruction.
fn site_infos<'a>(a: &'a ModuleAnalysis<'_>) -> HashMap<(&'a str, FuncId, InstId), SiteInfo> {
    let m = a.module;
    let mut out = HashMap::default();
    for k in &a.kernels {
        let name = m.func(k.kernel).demangled.as_str();
        for s in k.sites.iter().filter(|s| s.kind != SiteKind::Branch) {
            out.entry((name, s.func, s.inst))
                .or_insert_with(|| SiteInfo {
                    kind: s.kind,
                    root: root_of(a, k, s),
                });
        }
    }
    out
}

/// The array an access's address reaches, when one is known.
fn root_of(a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &crate::analysis::Site) -> Option<Root> {
    match k.spaces.origin(a.module, s.func, s.value).root {
        Root::Unknown => None,
        r => Some(r),
    }
}

/// The array's name as the source calls it (`p`, `the shared array tile`).
fn array_name(a: &ModuleAnalysis<'_>, f: &Finding, root: Root) -> Option<String> {
    let m = a.module;
    let k = a
        .kernels
        .iter()
        .find(|k| m.func(k.kernel).demangled == f.kernel)?;
    let kernel = m.func(k.kernel);
    let label = match root {
        Root::KernelParam(i) => m.value_label(kernel, crate::ir::Value::Arg(i)),
        Root::Global(g) => m.value_label(kernel, crate::ir::Value::Global(g)),
        Root::Alloca(func, inst) => m.value_label(m.func(func), crate::ir::Value::Inst(inst)),
        Root::Unknown => return None,
    };
    Some(label)
}

/// Ranges of lines shown in a message; the rest are counted (every line
/// is in the data's `lines`).
const SHOWN_RANGES: usize = 6;

/// Lines as ranges: `13-15, 20`, at most [`SHOWN_RANGES`] of them.
fn line_ranges(lines: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", lines[i], lines[j])
        } else {
            lines[i].to_string()
        });
        i = j + 1;
    }
    if out.len() > SHOWN_RANGES {
        let rest = out.len() - SHOWN_RANGES;
        out.truncate(SHOWN_RANGES);
        out.push(format!("and {rest} more"));
    }
    out.join(", ")
}

/// The group's one finding, led by `parts[0]`; `array` names the array
/// they share, when known.
fn merged(
    parts: &[&Finding],
    kind: &dyn Fn(&Finding) -> &'static str,
    array: Option<&str>,
) -> Finding {
    let lead = parts[0];
    let line = |f: &Finding| f.pos.as_ref().map_or(0, |p| p.line);
    let col = |f: &Finding| f.pos.as_ref().map_or(0, |p| p.col);
    let mut lines: Vec<u32> = parts.iter().map(|f| line(f)).collect();
    lines.dedup();
    let one_line = lines.len() == 1;
    let where_ = |f: &Finding| match one_line {
        true => format!("{} at column {}", kind(f), col(f)),
        false => format!("{} at {}:{}", kind(f), line(f), col(f)),
    };
    let mut notes = lead.notes.clone();
    for f in &parts[1..] {
        notes.push(format!("also the {}: {}", where_(f), f.message));
    }
    let accesses: Vec<serde_json::Value> = parts
        .iter()
        .map(|f| {
            serde_json::json!({
                "kind": kind(f),
                "line": line(f),
                "column": col(f),
                "message": f.message,
                "data": f.data,
            })
        })
        .collect();
    let mut data = lead.data.clone().unwrap_or_else(|| serde_json::json!({}));
    if let Some(obj) = data.as_object_mut() {
        obj.insert("accesses".into(), serde_json::Value::Array(accesses));
        obj.insert("lines".into(), serde_json::json!(lines));
    }
    let of = array.map_or(String::new(), |a| format!(" of {a}"));
    let message = if one_line {
        let list: Vec<String> = parts.iter().map(|f| where_(f)).collect();
        format!(
            "{} ({} accesses{of} on this line, one cause: {})",
            lead.message,
            parts.len(),
            list.join(", ")
        )
    } else {
        format!(
            "{} ({} accesses{of} on lines {}, one cause)",
            lead.message,
            parts.len(),
            line_ranges(&lines)
        )
    };
    Finding {
        message,
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
    for key in Impact::SUMMED {
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

    #[test]
    fn lines_read_as_ranges() {
        assert_eq!(line_ranges(&[13, 14, 15, 20]), "13-15, 20");
        assert_eq!(line_ranges(&[7]), "7");
        let many: Vec<u32> = (0..10).map(|i| 10 * i).collect();
        assert_eq!(line_ranges(&many), "0, 10, 20, 30, 40, 50, and 4 more");
    }
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
