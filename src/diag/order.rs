//! The order findings are shown in: worst first within a file, by the
//! share of its kernel's time each is estimated to cost
//! (`finding::Impact`). Files keep the order they first appear in;
//! findings without an estimate (a kernel's notes) follow those with
//! one, in their own order.

use crate::finding::Finding;

/// The indices of `findings` in the order to show them.
pub fn by_impact(findings: &[Finding]) -> Vec<usize> {
    let mut files: Vec<&str> = Vec::new();
    let mut keys: Vec<(usize, f64)> = Vec::with_capacity(findings.len());
    for f in findings {
        let name = f.pos.as_ref().map_or("", |p| p.file.as_str());
        let rank = files.iter().position(|x| *x == name).unwrap_or_else(|| {
            files.push(name);
            files.len() - 1
        });
        let share = f.impact.as_ref().and_then(|i| i.share).unwrap_or(-1.0);
        keys.push((rank, share));
    }
    let mut order: Vec<usize> = (0..findings.len()).collect();
    // Stable: equal shares keep their file order.
    order.sort_by(|&a, &b| {
        keys[a]
            .0
            .cmp(&keys[b].0)
            .then(keys[b].1.total_cmp(&keys[a].1))
    });
    order
}

/// `items` in `order` (a permutation of their indices).
pub fn permute<T>(items: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Impact, Severity};
    use crate::ir::{FuncId, Position};

    fn finding(file: &str, share: Option<f64>) -> Finding {
        Finding {
            check: "divergent-branch",
            severity: Severity::Warning,
            func: FuncId(0),
            inst: None,
            pos: Some(Position {
                path: file.into(),
                file: file.into(),
                line: 1,
                col: 1,
            }),
            kernel: "k".into(),
            function: "k".into(),
            message: String::new(),
            notes: Vec::new(),
            data: None,
            impact: Some(Impact {
                share,
                ..Impact::default()
            }),
        }
    }

    #[test]
    fn worst_first_within_each_file() {
        let fs = [
            finding("a.cu", Some(0.01)),
            finding("b.cu", Some(0.9)),
            finding("a.cu", None),
            finding("a.cu", Some(0.5)),
            finding("a.cu", Some(0.01)),
        ];
        // a.cu first (it appears first): 0.5, then the two 0.01 in their
        // order, then the one without an estimate; then b.cu.
        assert_eq!(by_impact(&fs), [3, 0, 4, 2, 1]);
        assert_eq!(permute(vec!['a', 'b', 'c'], &[2, 0, 1]), ['c', 'a', 'b']);
    }
}
