//! `warpcheck build` intercepts nvcc however the build names it: on
//! `PATH`, through `NVCC` or `CUDACXX`, or as `$(CUDA_HOME)/bin/nvcc` and
//! `$(CUDA_PATH)/bin/nvcc` (the CUDA samples' shape), as scan-build
//! exports `CC`.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// The samples-shaped Makefiles with the database project's `odd.cu`.
fn project(dir: &Path) {
    let src = fixture("projects/samples_make");
    for f in ["Makefile", "Makefile.samples"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::copy(fixture("projects/nvcc_db/src/odd.cu"), dir.join("odd.cu")).unwrap();
}

/// `odd.cu` line 6, `if (t % 2)` under -DODD_ONLY: odd and even lanes
/// part in all 4 warps of its 128 threads.
const ODD_WARNING: &str = "odd.cu:6:7: warning: branch diverges in 4 of 4 warps";

/// `warpcheck build` with `env` over a clean environment's `PATH` (no nvcc
/// anywhere, no toolkit variables).
fn build(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> std::process::Output {
    let mut cmd = warpcheck();
    for v in ["NVCC", "CUDACXX", "CUDA_HOME", "CUDA_PATH"] {
        cmd.env_remove(v);
    }
    run(cmd
        .current_dir(dir)
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .arg("build")
        .args(args))
}

#[test]
fn analyze_only_through_the_toolkit_root() {
    for makefile in ["Makefile", "Makefile.samples"] {
        let dir = tempfile::tempdir().unwrap();
        project(dir.path());
        // Neither root is set: the Makefiles default to /usr/local/cuda,
        // which the shim tree stands in for.
        let out = build(
            dir.path(),
            &[],
            &["--analyze-only", "--", "make", "-f", makefile],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{makefile}: {err}");
        assert!(err.contains(ODD_WARNING), "{makefile}: {err}");
        // One unit compiled (the link compiles none).
        assert!(
            err.contains("warpcheck: 1 translation unit analysed, 1 warning in 1"),
            "{makefile}: {err}"
        );
        assert!(dir.path().join("app").is_file());
    }
}

/// A toolkit whose `bin/nvcc` writes `compiled by the toolkit` to its
/// `-o` output, and an `include/` beside it.
fn fake_toolkit(root: &Path) {
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("include")).unwrap();
    std::fs::write(root.join("include/marker.h"), "").unwrap();
    let nvcc = root.join("bin/nvcc");
    std::fs::write(
        &nvcc,
        "#!/bin/sh\nout=\nfor a; do case \"$prev\" in -o) out=$a;; esac; prev=$a; done\n\
         [ -n \"$out\" ] && echo 'compiled by the toolkit' > \"$out\"\nexit 0\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_real_nvcc_under_the_root_compiles_and_is_analysed() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let toolkit = tempfile::tempdir().unwrap();
    fake_toolkit(toolkit.path());
    for var in ["CUDA_HOME", "NVCC"] {
        let value = match var {
            "NVCC" => toolkit.path().join("bin/nvcc"),
            _ => toolkit.path().to_path_buf(),
        };
        run(Command::new("make").arg("clean").current_dir(dir.path()));
        let out = build(dir.path(), &[(var, &value)], &["--", "make"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{var}: {err}");
        assert!(err.contains(ODD_WARNING), "{var}: {err}");
        // The toolkit's nvcc ran, for the compile and the link.
        for f in ["odd.o", "app"] {
            assert_eq!(
                std::fs::read_to_string(dir.path().join(f)).unwrap(),
                "compiled by the toolkit\n",
                "{var}: {f}"
            );
        }
    }
}

#[test]
fn the_shim_tree_keeps_the_toolkit_beside_nvcc() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = tempfile::tempdir().unwrap();
    fake_toolkit(toolkit.path());
    // A build that reads a header from the root it was given.
    std::fs::write(
        dir.path().join("Makefile"),
        "all:\n\ttest -f $(CUDA_PATH)/include/marker.h && test \"$(CUDA_PATH)\" != \"$(REAL)\"\n",
    )
    .unwrap();
    let real = toolkit.path().display().to_string();
    let out = build(
        dir.path(),
        &[("CUDA_PATH", toolkit.path())],
        &["--", "make", &format!("REAL={real}")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
