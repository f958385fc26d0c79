//! The host side of a `.cu` file, compiled only for its kernel launches
//! (`ir::launch`): the shapes `<<<grid, block>>>` asks for. Cheap by
//! design: `-O1` (enough to fold a launch's local arithmetic), line tables
//! only, and no compile at all for a file that launches nothing.

use super::clang::{side_arguments, Setup, Side};
use super::{CompileOptions, InputError};
use crate::ir::launch::{self, HostLaunch};
use std::path::Path;

/// The launches in `src`'s host code. A file whose text, and that of the
/// files it `#include "…"`s, has no `<<<` and no `cudaLaunch` has none and
/// is not compiled. Any failure is an `InputError` the caller may ignore:
/// the device analysis never needs the host side.
pub fn launches(src: &Path, opts: &CompileOptions) -> Result<Vec<HostLaunch>, InputError> {
    if !may_launch(src, &include_dirs(opts)) {
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

/// Compiles `src`'s host side to the object `out` for a program that runs
/// on warpcheck's runtime (`warpcheck run`): the same setup as the device
/// compile, with `device` (the device module, wrapped) embedded as the GPU
/// binary that clang's registration code hands the runtime. A `.cpp` file
/// is compiled the same way, for the runtime's declarations.
pub fn program_object(
    src: &Path,
    opts: &CompileOptions,
    device: &Path,
    out: &Path,
) -> Result<(), InputError> {
    let setup = Setup::new(src, opts)?;
    let mut args: Vec<String> = side_arguments(
        Side::Host,
        &["-gline-tables-only".to_string()],
        &setup.header,
        setup.tk.as_ref(),
        opts,
    )
    .into_iter()
    .filter(|a| a != "-emit-llvm")
    .collect();
    args.extend(
        ["-Xclang", "-fcuda-include-gpubinary", "-Xclang"]
            .map(String::from)
            .into_iter()
            .chain([device.display().to_string()]),
    );
    args.extend(opts.extra.iter().cloned());
    args.extend(["-o".into(), out.display().to_string()]);
    args.push(src.display().to_string());
    let output = setup.run(args, out, src)?;
    if !output.status.success() {
        return Err(InputError {
            message: format!(
                "{}: the host-side compile failed ({}):\n{}",
                src.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            ),
        });
    }
    Ok(())
}

/// The launches of `src`: those the frontend action `recorded` from the
/// device compile's AST when it ran and saw any, else [`launches`]. A file
/// whose AST shows none although its text has `<<<` (host code the device
/// compile skips, under `#ifndef __CUDA_ARCH__`) is compiled for its host
/// side after all.
pub fn launches_unless_recorded(
    src: &Path,
    opts: &CompileOptions,
    recorded: Option<Vec<HostLaunch>>,
) -> Result<Vec<HostLaunch>, InputError> {
    match recorded {
        Some(r) if !r.is_empty() => Ok(r),
        _ => launches(src, opts),
    }
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

/// Files read looking for a launch, at most (a project's own headers).
const SCAN_FILES: usize = 64;

/// Whether `src` or a file it includes with quotes (found beside the
/// includer or in `includes`, as the preprocessor would) has `<<<` or
/// `cudaLaunch` in its text: Rodinia's `3D.cu` launches from the
/// `opt1.cu` it includes.
fn may_launch(src: &Path, includes: &[std::path::PathBuf]) -> bool {
    let mut todo = vec![src.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    while let Some(file) = todo.pop() {
        if seen.len() >= SCAN_FILES || !seen.insert(file.clone()) {
            continue;
        }
        // Never a FIFO or a device: the device compile says what is wrong.
        let Ok(text) = crate::files::read(&file, "source", super::MAX_SOURCE_BYTES) else {
            continue;
        };
        if contains(&text, b"<<<") || contains(&text, b"cudaLaunch") {
            return true;
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for name in quoted_includes(&text) {
            let found = std::iter::once(&dir)
                .chain(includes)
                .map(|d| d.join(&name))
                .find(|p| p.is_file());
            todo.extend(found);
        }
    }
    false
}

/// `-I` directories: the options' own and those among the extra flags
/// (a compile database's), joined or not.
fn include_dirs(opts: &CompileOptions) -> Vec<std::path::PathBuf> {
    let mut dirs = opts.includes.clone();
    let mut flags = opts.extra.iter();
    while let Some(f) = flags.next() {
        match f.strip_prefix("-I") {
            Some("") => dirs.extend(flags.next().map(Into::into)),
            Some(d) => dirs.push(d.into()),
            None => {}
        }
    }
    dirs
}

/// The names of `#include "name"` lines.
fn quoted_includes(text: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let name = rest.strip_prefix('"')?;
            Some(name[..name.find('"')?].to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{keeps, may_launch, quoted_includes};

    #[test]
    fn a_launch_in_an_included_file_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let inc = dir.path().join("inc");
        std::fs::create_dir_all(&inc).unwrap();
        std::fs::write(
            dir.path().join("main.cu"),
            "#include \"a.cu\"\n#include <b.h>\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("a.cu"), "  #  include \"kern.cuh\" // x\n").unwrap();
        std::fs::write(inc.join("kern.cuh"), "void f() { k<<<1, 32>>>(); }\n").unwrap();
        std::fs::write(dir.path().join("none.cu"), "#include \"a.cu\"\n").unwrap();
        let main = dir.path().join("main.cu");
        // kern.cuh is found only through the include path.
        assert!(!may_launch(&main, &[]));
        assert!(may_launch(&main, std::slice::from_ref(&inc)));
        std::fs::write(dir.path().join("loop.cu"), "#include \"loop.cu\"\n").unwrap();
        assert!(!may_launch(&dir.path().join("loop.cu"), &[inc]));
        assert_eq!(
            quoted_includes(b"#include \"x.h\"\n# include <y.h>\n#define Z\n"),
            ["x.h"]
        );
    }

    #[test]
    fn the_host_compile_keeps_its_side_and_level() {
        assert!(keeps("-std=c++17"));
        assert!(keeps("-DN=4"));
        assert!(!keeps("--cuda-device-only"));
        assert!(!keeps("-O0"));
        assert!(!keeps("-O3"));
    }
}
