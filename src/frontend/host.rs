//! The host side of a `.cu` file, compiled only for its kernel launches
//! (`ir::launch`): the shapes `<<<grid, block>>>` asks for. Cheap by
//! design: `-O1` (enough to fold a launch's local arithmetic), line tables
//! only, and no compile at all for a file that launches nothing.

use super::clang::{side_arguments, Setup, Side};
use super::{CompileOptions, InputError};
use crate::ir::launch::{self, HostLaunch};
use std::path::Path;

/// The launches in `src`'s host code. A file whose text has no `<<<` and
/// no `cudaLaunch` has none and is not compiled. Any failure is an
/// `InputError` the caller may ignore: the device analysis never needs
/// the host side.
pub fn launches(src: &Path, opts: &CompileOptions) -> Result<Vec<HostLaunch>, InputError> {
    let text = std::fs::read(src).map_err(|e| InputError {
        message: format!("{}: cannot read: {e}", src.display()),
    })?;
    if !contains(&text, b"<<<") && !contains(&text, b"cudaLaunch") {
        return Ok(Vec::new());
    }
    let setup = Setup::new(src, opts)?;
    let out = setup.dir.path().join("host.bc");
    let mut args = side_arguments(
        Side::Host,
        &["-gline-tables-only".to_string()],
        &setup.header,
        setup.tk.as_ref(),
        opts,
    );
    args.extend(opts.extra.iter().filter(|f| keeps(f)).cloned());
    args.extend(["-o".into(), out.display().to_string()]);
    args.push(src.display().to_string());
    let output = setup.run(args, &out, src)?;
    if !output.status.success() {
        return Err(InputError {
            message: format!(
                "{}: the host-side compile failed ({}): {}",
                src.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            ),
        });
    }
    Ok(launch::read_file(&out)?)
}

/// The user's flags the host compile keeps: not those that pick the other
/// side, or an optimisation level that would stop `-O1`'s folding.
fn keeps(flag: &str) -> bool {
    !(flag == "--cuda-device-only"
        || flag == "--cuda-host-only"
        || flag.starts_with("-O")
        || flag.starts_with("--offload-arch")
        || flag.starts_with("--cuda-gpu-arch"))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::keeps;

    #[test]
    fn the_host_compile_keeps_its_side_and_level() {
        assert!(keeps("-std=c++17"));
        assert!(keeps("-DN=4"));
        assert!(!keeps("--cuda-device-only"));
        assert!(!keeps("-O0"));
        assert!(!keeps("-O3"));
    }
}
