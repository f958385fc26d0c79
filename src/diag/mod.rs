//! Findings and how they are shown: clang-style text, JSON, and (through the
//! plugin) LLVM diagnostics.

pub mod baseline;
pub mod fingerprint;
pub mod fold;
pub mod html;
pub mod json;
pub mod kinds;
pub mod order;
pub mod sarif;
pub mod summary;
pub mod suppress;
pub mod text;
