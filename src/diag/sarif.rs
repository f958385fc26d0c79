//! SARIF 2.1.0 (`check --format sarif`), for code-scanning services: one
//! run, a rule per check with a stable id (`warpcheck-<check>`), and each
//! finding as a result at its region with a `partialFingerprints` entry
//! that survives edits moving the line.

use super::json::{FindingJson, Report};
use serde_json::{json, Value};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF's level of a finding: `error` for a warning the configuration
/// promoted, `warning`, else `note`.
fn level(severity: &str) -> &'static str {
    match severity {
        "error" => "error",
        "warning" => "warning",
        _ => "note",
    }
}

fn result(f: &FindingJson, rule_index: Option<usize>) -> Value {
    let mut text = f.message.clone();
    for n in &f.notes {
        text.push('\n');
        text.push_str(n);
    }
    let mut r = json!({
        "ruleId": format!("warpcheck-{}", f.check),
        "level": level(f.severity),
        "message": {"text": text},
        "partialFingerprints": {super::fingerprint::SARIF_KEY: f.fingerprint},
        "properties": {"kernel": f.kernel, "function": f.function, "impact": f.impact},
    });
    if let Some(i) = rule_index {
        r["ruleIndex"] = json!(i);
    }
    if !f.file.is_empty() && f.line > 0 {
        let mut region = json!({"startLine": f.line});
        if f.column > 0 {
            region["startColumn"] = json!(f.column);
        }
        r["locations"] = json!([{
            "physicalLocation": {
                "artifactLocation": {"uri": uri(&f.file)},
                "region": region,
            }
        }]);
    }
    if let Some(d) = &f.data {
        r["properties"]["data"] = d.clone();
    }
    r
}

/// A relative path stays relative (SARIF resolves it against the run's
/// base); an absolute one becomes a `file://` URI. Spaces and other
/// characters URIs do not allow are escaped.
pub fn uri(path: &str) -> String {
    let escaped: String = path
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    if path.starts_with('/') {
        format!("file://{escaped}")
    } else {
        escaped
    }
}

/// The SARIF log of a report.
pub fn render(report: &Report) -> Value {
    // A rule per check and per note.
    let rules = super::kinds::all();
    let descriptors: Vec<Value> = rules
        .iter()
        .map(|k| {
            json!({
                "id": k.tag(),
                "name": k.name,
                "shortDescription": {"text": k.summary},
                "fullDescription": {"text": k.summary},
                "help": {"text": k.explanation},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| result(f, rules.iter().position(|k| k.name == f.check)))
        .collect();
    log(report.version, descriptors, results)
}

/// A SARIF log of one warpcheck run with these rules and results.
pub fn log(version: &str, rules: Vec<Value>, results: Vec<Value>) -> Value {
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "warpcheck",
                "version": version,
                "rules": rules,
            }},
            "results": results,
            "columnKind": "unicodeCodePoints",
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(uri("src/a b.cu"), "src/a%20b.cu");
        assert_eq!(uri("/abs/k.cu"), "file:///abs/k.cu");
    }
}
