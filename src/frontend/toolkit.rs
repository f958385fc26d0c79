//! Finding a CUDA toolkit, and the clang flags it needs.

use std::path::{Path, PathBuf};

/// The newest CUDA version clang 19 knows; newer toolkits are analysed as this.
const NEWEST_KNOWN: (u32, u32) = (12, 5);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolkit {
    pub root: PathBuf,
    /// `(major, minor)` from `CUDA_VERSION` in `include/cuda.h`.
    pub version: (u32, u32),
}

impl Toolkit {
    /// Reads a toolkit root; `None` if it lacks `include/cuda.h`.
    pub fn at(root: &Path) -> Option<Toolkit> {
        let header = std::fs::read_to_string(root.join("include/cuda.h")).ok()?;
        let version = header.lines().find_map(|l| {
            let rest = l.trim().strip_prefix("#define CUDA_VERSION")?;
            let n: u32 = rest.trim().parse().ok()?;
            Some((n / 1000, (n % 1000) / 10))
        })?;
        Some(Toolkit {
            root: root.to_path_buf(),
            version,
        })
    }

    /// `$CUDA_PATH`, `$CUDA_HOME`, then the usual install places.
    pub fn discover() -> Option<Toolkit> {
        let env = ["CUDA_PATH", "CUDA_HOME"]
            .iter()
            .filter_map(|v| std::env::var_os(v).map(PathBuf::from));
        let usual = ["/usr/local/cuda", "/opt/cuda"].iter().map(PathBuf::from);
        env.chain(usual).find_map(|p| Toolkit::at(&p))
    }

    /// Flags for a device-only compile without libdevice. Without libdevice
    /// the driver stops telling the front end the SDK version, and host-side
    /// `<<<...>>>` launches then fail to parse; so we pass it ourselves.
    pub fn clang_flags(&self) -> Vec<String> {
        let (major, minor) = self.version.min(NEWEST_KNOWN);
        vec![
            format!("--cuda-path={}", self.root.display()),
            "-nocudalib".into(),
            "-Xclang".into(),
            format!("-target-sdk-version={major}.{minor}"),
            "-Wno-unknown-cuda-version".into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_and_caps_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("include")).unwrap();
        std::fs::write(
            dir.path().join("include/cuda.h"),
            "#define CUDA_VERSION 12080\n",
        )
        .unwrap();
        let tk = Toolkit::at(dir.path()).unwrap();
        assert_eq!(tk.version, (12, 8));
        assert!(tk
            .clang_flags()
            .contains(&"-target-sdk-version=12.5".to_string()));
        assert!(Toolkit::at(&dir.path().join("missing")).is_none());
    }
}
