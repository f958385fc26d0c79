//! The plugin's settings: clang does not hand `-mllvm` options to pass
//! plugins, so they come from the environment, a `key = value` file or a
//! `.warpcheck.yaml` named by `WARPCHECK_CONFIG` (see the module above).

use crate::analysis::{BlockDim, BlockDimSource, Options};
use crate::budget::Budget;
use crate::config::{Config, Selection};

/// `on`/`off` (also `1`/`0`, `true`/`false`, `yes`/`no`).
fn on_off(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Ok(true),
        "off" | "0" | "false" | "no" | "" => Ok(false),
        other => Err(format!("bounds: expected on or off, got '{other}'")),
    }
}

/// Whether the build asked for cost bounds: `WARPCHECK_BOUNDS=1`, or
/// `bounds = on` in a `key = value` `WARPCHECK_CONFIG` file.
pub fn bounds_requested() -> Result<bool, String> {
    if let Ok(v) = std::env::var("WARPCHECK_BOUNDS") {
        return on_off(&v).map_err(|e| format!("WARPCHECK_BOUNDS: {e}"));
    }
    let Ok(path) = std::env::var("WARPCHECK_CONFIG") else {
        return Ok(false);
    };
    if yaml_config_in_env() {
        return Ok(false);
    }
    let text = env_config_text(&path)?;
    let mut on = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == "bounds" {
                on = on_off(v)?;
            }
        }
    }
    Ok(on)
}

/// The text of a `key = value` `WARPCHECK_CONFIG` file: a regular file
/// within the configuration's size limit (a FIFO would block the compile).
fn env_config_text(path: &str) -> Result<String, String> {
    crate::files::read_text(
        std::path::Path::new(path),
        "configuration",
        crate::config::MAX_BYTES,
    )
    .map_err(|e| format!("WARPCHECK_CONFIG={e}"))
}

/// Whether `WARPCHECK_CONFIG` names a `.warpcheck.yaml`-style file
/// (`.yaml`/`.yml`) rather than the `key = value` form.
pub(super) fn yaml_config_in_env() -> bool {
    yaml_config_path().is_some()
}

/// The `.warpcheck.yaml`-style file `WARPCHECK_CONFIG` names, if it names
/// one.
pub(super) fn yaml_config_path() -> Option<std::path::PathBuf> {
    std::env::var("WARPCHECK_CONFIG")
        .ok()
        .filter(|p| p.ends_with(".yaml") || p.ends_with(".yml"))
        .map(Into::into)
}

/// Reads the plugin's options and what it reports from the environment or
/// a config file.
pub fn options_from_env() -> Result<(Options, Selection), String> {
    let mut sel = Selection::default();
    let mut opts = Options {
        // Diagnostics carry the message only.
        no_explanations: true,
        budget: Budget::plugin(),
        // One thread: measured on the templated reduction, two threads
        // took 12 ms off the compile's wall time but added 30 ms of CPU
        // (fresh thread heaps), a bad trade in a `make -j` build.
        jobs: 1,
        ..Options::default()
    };
    let mut apply = |key: &str, value: &str, source| -> Result<(), String> {
        match key {
            "block-dim" | "block_dim" => opts.block_dim = Some(BlockDim::parse(value, source)?),
            // Read by `bounds_requested`.
            "bounds" => {
                on_off(value)?;
            }
            "disable" => sel.disabled.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            ),
            "min-impact" | "min_impact" => {
                sel.min_impact = Some(
                    crate::config::parse_min_impact(value)
                        .map_err(|e| format!("min-impact: {e}"))?,
                )
            }
            "jobs" => {
                opts.jobs = value
                    .parse()
                    .map_err(|_| format!("jobs: expected a thread count, got '{value}'"))?
            }
            "budget" => {
                for kv in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let (k, v) = kv
                        .split_once('=')
                        .ok_or_else(|| format!("budget: expected KEY=VALUE, got '{kv}'"))?;
                    opts.budget.set(k.trim(), v)?;
                }
            }
            other => match other.strip_prefix("budget-") {
                Some(k) => opts.budget.set(k, value)?,
                None => return Err(format!("unknown configuration key '{other}'")),
            },
        }
        Ok(())
    };
    let yaml = match std::env::var("WARPCHECK_CONFIG") {
        Ok(path) if yaml_config_in_env() => Some(Config::read(std::path::Path::new(&path))?),
        _ => None,
    };
    if let (Ok(path), None) = (std::env::var("WARPCHECK_CONFIG"), &yaml) {
        let text = env_config_text(&path)?;
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("{path}:{}: expected 'key = value'", n + 1))?;
            apply(k.trim(), v.trim(), BlockDimSource::Config)
                .map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        }
    }
    if let Ok(v) = std::env::var("WARPCHECK_BLOCK_DIM") {
        apply("block-dim", &v, BlockDimSource::Config)
            .map_err(|e| format!("WARPCHECK_BLOCK_DIM: {e}"))?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_DISABLE") {
        apply("disable", &v, BlockDimSource::Config)?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_MIN_IMPACT") {
        apply("min-impact", &v, BlockDimSource::Config)
            .map_err(|e| format!("WARPCHECK_MIN_IMPACT: {e}"))?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_JOBS") {
        apply("jobs", &v, BlockDimSource::Config).map_err(|e| format!("WARPCHECK_JOBS: {e}"))?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_BUDGET") {
        apply("budget", &v, BlockDimSource::Config)
            .map_err(|e| format!("WARPCHECK_BUDGET: {e}"))?;
    }
    if let Some(c) = yaml {
        c.apply(&mut opts, &mut sel);
    }
    Ok((opts, sel))
}
