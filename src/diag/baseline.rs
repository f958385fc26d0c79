//! `check --baseline OLD`: report only findings that are new since `OLD`,
//! a JSON or SARIF report of an earlier run (for CI on pull requests).
//! Findings match by fingerprint, so moved code keeps its old findings
//! quiet.

use std::collections::HashSet;
use std::path::Path;

/// The fingerprints of the findings in a saved report.
pub fn read(path: &Path) -> Result<HashSet<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--baseline {}: {e}", path.display()))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "--baseline {}:{}:{}: not JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let from_json = doc["findings"].as_array().map(|fs| {
        fs.iter()
            .filter_map(|f| f["fingerprint"].as_str().map(String::from))
            .collect()
    });
    let from_sarif = || {
        doc["runs"].as_array().map(|runs| {
            runs.iter()
                .filter_map(|r| r["results"].as_array())
                .flatten()
                .filter_map(|r| r["partialFingerprints"][super::fingerprint::SARIF_KEY].as_str())
                .map(String::from)
                .collect()
        })
    };
    from_json.or_else(from_sarif).ok_or_else(|| {
        format!(
            "--baseline {}: neither a warpcheck JSON report (`findings`) nor SARIF (`runs`)",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_and_neither() {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("a.json");
        std::fs::write(
            &j,
            r#"{"findings": [{"fingerprint": "ab"}, {"fingerprint": "cd"}]}"#,
        )
        .unwrap();
        assert_eq!(read(&j).unwrap(), HashSet::from(["ab".into(), "cd".into()]));
        let s = dir.path().join("a.sarif");
        std::fs::write(
            &s,
            r#"{"runs": [{"results": [{"partialFingerprints": {"warpcheck/v2": "ef"}}]}]}"#,
        )
        .unwrap();
        assert_eq!(read(&s).unwrap(), HashSet::from(["ef".into()]));
        std::fs::write(&s, r#"{"x": 1}"#).unwrap();
        assert!(read(&s).unwrap_err().contains("neither"));
        std::fs::write(&s, "{").unwrap();
        assert!(read(&s).unwrap_err().contains("a.sarif:1:"));
    }
}
