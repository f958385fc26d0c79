//! `--param NAME=VALUE`, the one reader of it: the integer parameter
//! values `check` and `report` pin in the analysis, and those `bound` and
//! `time` evaluate their bounds at, read alike so that a value one
//! command refuses every command refuses.

use std::collections::BTreeMap;

/// `--param NAME=VALUE` values in the order given (a later one for the
/// same name wins): a name, and a 64-bit integer written in decimal. A
/// fraction (`n=1.5`), an exponent (`n=1e400`), a missing name (`=5`) or
/// a number past 64 bits is a usage error naming the option.
pub(super) fn integer_params(params: &[String]) -> Result<Vec<(String, i128)>, String> {
    let mut out: Vec<(String, i128)> = Vec::with_capacity(params.len());
    for p in params {
        let (name, value) = p
            .split_once('=')
            .ok_or_else(|| format!("--param: expected NAME=VALUE, got '{}'", shown(p)))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!(
                "--param {}: expected NAME=VALUE with a name",
                shown(p)
            ));
        }
        let value = integer(value.trim()).ok_or_else(|| {
            format!(
                "--param {}: '{}' is not an integer of at most 64 bits (a kernel parameter's value)",
                shown(p),
                shown(value.trim())
            )
        })?;
        out.retain(|(n, _)| n != name);
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// The same values by name, as the bounds evaluate them.
pub(super) fn param_values(params: &[String]) -> Result<BTreeMap<String, f64>, String> {
    Ok(integer_params(params)?
        .into_iter()
        .map(|(n, v)| (n, v as f64))
        .collect())
}

/// A decimal integer within `i64`'s range or `u64`'s (a parameter of
/// either signedness), with an optional sign.
fn integer(text: &str) -> Option<i128> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 20 {
        return None;
    }
    let v: i128 = text.parse().ok()?;
    (i128::from(i64::MIN)..=i128::from(u64::MAX))
        .contains(&v)
        .then_some(v)
}

/// A piece of the command line for a message: at most 64 characters.
pub(super) fn shown(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((i, _)) => format!("{}… ({} bytes)", &text[..i], text.len()),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(p: &str) -> Result<Vec<(String, i128)>, String> {
        integer_params(&[p.to_string()])
    }

    #[test]
    fn only_named_integers() {
        assert_eq!(one("n=64").unwrap(), [("n".to_string(), 64)]);
        assert_eq!(one(" m = -3 ").unwrap(), [("m".to_string(), -3)]);
        assert_eq!(
            one("n=18446744073709551615").unwrap()[0].1,
            i128::from(u64::MAX)
        );
        for bad in [
            "n=1.5",
            "n=1e400",
            "n=1e3",
            "=5",
            " =5",
            "n",
            "n=",
            "n=inf",
            "n=NaN",
            "n=0x10",
            "n=18446744073709551616",
            "n=-9223372036854775809",
            "n=99999999999999999999999999999999999999999999",
        ] {
            assert!(one(bad).is_err(), "{bad}");
        }
        let e = one(&format!("n={}", "9".repeat(10_000))).unwrap_err();
        assert!(e.len() < 300, "{e}");
        // A later value for the same name wins.
        let both = integer_params(&["n=1".into(), "k=2".into(), "n=3".into()]).unwrap();
        assert_eq!(both, [("k".to_string(), 2), ("n".to_string(), 3)]);
        assert_eq!(param_values(&["n=3".into()]).unwrap()["n"], 3.0);
    }
}
