//! `--param NAME=VALUE`: the parameter values `bound`, `time` and
//! `simulate` evaluate at, and the integer ones `check` pins.

use std::collections::BTreeMap;

/// `--param NAME=VALUE` values by name.
pub(super) fn parse_params(params: &[String]) -> Result<BTreeMap<String, f64>, String> {
    let mut values = BTreeMap::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| format!("--param: expected NAME=VALUE, got '{p}'"))?;
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("--param {p}: '{}' is not a number", v.trim()))?;
        values.insert(k.trim().to_string(), v);
    }
    Ok(values)
}

/// `--param NAME=VALUE` values that must be integers (what `check` pins
/// in the analysis), in the order given.
pub(super) fn integer_params(params: &[String]) -> Result<Vec<(String, i128)>, String> {
    let values = parse_params(params)?;
    let mut out = Vec::with_capacity(values.len());
    for (name, v) in values {
        if v.fract() != 0.0 || !v.is_finite() || v.abs() > 2f64.powi(63) {
            return Err(format!(
                "--param {name}={v}: check takes an integer (a value of an integer parameter)"
            ));
        }
        if name.is_empty() {
            return Err("--param: expected NAME=VALUE with a name".to_string());
        }
        out.push((name, v as i128));
    }
    Ok(out)
}
