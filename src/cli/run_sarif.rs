//! `warpcheck run --format sarif`: what a run found, for code-scanning
//! services. Each fault the sanitizer reported (an access out of bounds,
//! a use after free, a race, ...) is a result of rule
//! `warpcheck-run-<kind>` at its line, with the thread and block; each
//! contradiction of `check`'s claims is a result of rule
//! `warpcheck-contradiction` at the site, for it is a bug in warpcheck.
//! The measured figures stay in the JSON form.

use crate::diag::sarif::{self, uri};
use serde_json::{json, Value};

/// The SARIF log of a run's report (its JSON form, with `check`'s claims).
pub fn render(report: &Value) -> Value {
    let mut rules: Vec<String> = Vec::new();
    let mut results = Vec::new();
    let mut add = |rule: String, text: String, at: Option<(&str, u64, u64)>, props: Value| {
        let index = rules.iter().position(|r| *r == rule).unwrap_or_else(|| {
            rules.push(rule.clone());
            rules.len() - 1
        });
        let mut r = json!({
            "ruleId": rule,
            "ruleIndex": index,
            "level": "error",
            "message": {"text": text},
            "properties": props,
        });
        if let Some((file, line, column)) = at.filter(|a| !a.0.is_empty() && a.1 > 0) {
            let mut region = json!({"startLine": line});
            if column > 0 {
                region["startColumn"] = json!(column);
            }
            r["locations"] = json!([{
                "physicalLocation": {"artifactLocation": {"uri": uri(file)}, "region": region}
            }]);
        }
        results.push(r);
    };
    for e in report["errors"].as_array().into_iter().flatten() {
        let kind = e["kind"].as_str().unwrap_or("error");
        let at = (
            e["file"].as_str().unwrap_or_default(),
            e["line"].as_u64().unwrap_or(0),
            e["column"].as_u64().unwrap_or(0),
        );
        let props = json!({"kernel": e["kernel"], "thread": e["thread"], "block": e["block"]});
        let text = e["message"].as_str().unwrap_or(kind).to_string();
        add(format!("warpcheck-run-{kind}"), text, Some(at), props);
    }
    for k in report["kernels"].as_array().into_iter().flatten() {
        for s in k["sites"].as_array().into_iter().flatten() {
            for c in s["static"]["contradictions"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let at = (
                    s["file"].as_str().unwrap_or_default(),
                    s["line"].as_u64().unwrap_or(0),
                    s["column"].as_u64().unwrap_or(0),
                );
                let text = format!(
                    "warpcheck's static claim ({}) was contradicted by this run: {}",
                    s["static"]["claim"].as_str().unwrap_or("no site"),
                    c.as_str().unwrap_or_default()
                );
                let props = json!({"kernel": k["kernel"], "block": k["block"]});
                add("warpcheck-contradiction".into(), text, Some(at), props);
            }
        }
    }
    let descriptors: Vec<Value> = rules
        .iter()
        .map(|id| json!({"id": id, "shortDescription": {"text": describe(id)}}))
        .collect();
    sarif::log(env!("CARGO_PKG_VERSION"), descriptors, results)
}

fn describe(rule: &str) -> String {
    match rule {
        "warpcheck-contradiction" => {
            "a launch measured what a definite claim of warpcheck check rules out (a bug in warpcheck)"
                .into()
        }
        _ => format!(
            "a kernel stopped or was reported by warpcheck run's sanitizer: {}",
            rule.trim_start_matches("warpcheck-run-")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fault and a contradiction, each a result at its place; rules once.
    #[test]
    fn faults_and_contradictions_are_results_at_their_lines() {
        let report = json!({
            "errors": [
                {"kernel": "k(float*)", "kind": "memory-error", "message": "invalid write",
                 "file": "a.cu", "line": 9, "column": 10, "thread": [1, 0, 0], "block": [3, 0, 0]},
                {"kernel": "k(float*)", "kind": "memory-error", "message": "invalid read",
                 "file": "a.cu", "line": 11, "column": 3, "thread": [2, 0, 0], "block": [0, 0, 0]},
            ],
            "kernels": [{"kernel": "k(float*)", "block": [256, 1, 1], "sites": [
                {"file": "a.cu", "line": 4, "column": 7, "static": {
                    "claim": "coalesced, 4..4 sectors per request", "verdict": "contradicted",
                    "contradictions": ["k: a.cu:4:7 load: coalesced, but ..."]}},
                {"file": "a.cu", "line": 5, "column": 1, "static": {
                    "claim": "no warp splits (8)", "verdict": "confirmed", "contradictions": []}},
            ]}],
        });
        let log = render(&report);
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 2);
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        assert_eq!(results[1]["ruleId"], "warpcheck-run-memory-error");
        assert_eq!(results[1]["ruleIndex"], 0);
        let region = &results[1]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            (region["startLine"].as_u64(), region["startColumn"].as_u64()),
            (Some(11), Some(3))
        );
        assert_eq!(results[2]["ruleId"], "warpcheck-contradiction");
        assert_eq!(results[2]["ruleIndex"], 1);
        assert_eq!(
            results[2]["locations"][0]["physicalLocation"]["region"]["startLine"],
            4
        );
    }
}
