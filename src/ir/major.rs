//! The LLVM major this build reads and plugs into, chosen by the cargo
//! feature `llvm19` (the default) or `llvm22`, and the one thing outside
//! the IR that follows from it: the layout of the plugin entry point's
//! answer. Every other version difference is the loader's to absorb.

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
