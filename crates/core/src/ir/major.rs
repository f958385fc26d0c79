//! The LLVM major this build reads and plugs into, chosen by the cargo
//! feature `llvm19` (the default) or `llvm22`, and the two things outside
//! the IR that follow from it: the layout of the plugin entry point's
//! answer, and what that major's backend does that the IR does not show
//! (`memory::lower` reads it). Every other version difference is the
//! loader's to absorb.

#[cfg(all(feature = "llvm19", feature = "llvm22"))]
compile_error!(
    "the features `llvm19` and `llvm22` are exclusive: build the LLVM 22 variant with \
     `--no-default-features --features llvm22`"
);
#[cfg(not(any(feature = "llvm19", feature = "llvm22")))]
compile_error!("choose an LLVM major: the feature `llvm19` (the default) or `llvm22`");

use std::ffi::{c_char, c_void};

/// The LLVM major of the linked LLVM, the plugin's host and the default clang.
pub const LLVM_MAJOR: u32 = if cfg!(feature = "llvm22") { 22 } else { 19 };

/// Whether this major's load/store vectoriser fills the gaps of a chain of
/// loads (LLVM 20 and later): loads at offsets 0, 4 and 12 of a 16-byte
/// aligned pointer are one `ld.v4` whose third element goes unused, where
/// llc-19 makes an 8-byte and a 4-byte load.
pub const VECTORISER_FILLS_LOAD_GAPS: bool = LLVM_MAJOR >= 20;

/// Every major some build of warpcheck supports.
pub const SUPPORTED_MAJORS: [u32; 2] = [19, 22];

/// `LLVM_PLUGIN_API_VERSION`: 2 since LLVM 22 added a pre-codegen hook.
const PLUGIN_API_VERSION: u32 = if cfg!(feature = "llvm22") { 2 } else { 1 };

/// `llvm::PassPluginLibraryInfo` as this major declares it. The host
/// reads it by value, so every field it has must be there.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_callbacks: unsafe extern "C" fn(*mut c_void),
    /// LLVM 22's `PreCodeGenCallback`; null: codegen as usual.
    #[cfg(feature = "llvm22")]
    pre_codegen: *const c_void,
}

impl PassPluginLibraryInfo {
    pub fn new(
        name: &'static std::ffi::CStr,
        version: *const c_char,
        register_callbacks: unsafe extern "C" fn(*mut c_void),
    ) -> Self {
        PassPluginLibraryInfo {
            api_version: PLUGIN_API_VERSION,
            plugin_name: name.as_ptr(),
            plugin_version: version,
            register_callbacks,
            #[cfg(feature = "llvm22")]
            pre_codegen: std::ptr::null(),
        }
    }
}
