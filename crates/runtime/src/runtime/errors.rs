//! CUDA's error codes, as `cudaError_t` numbers them, with the names and
//! messages `cudaGetErrorName`/`cudaGetErrorString` give.

pub const SUCCESS: i32 = 0;
pub const INVALID_VALUE: i32 = 1;
pub const MEMORY_ALLOCATION: i32 = 2;
pub const INVALID_CONFIGURATION: i32 = 9;
pub const INVALID_SYMBOL: i32 = 13;
pub const INVALID_DEVICE_POINTER: i32 = 17;
pub const INVALID_MEMCPY_DIRECTION: i32 = 21;
pub const INVALID_DEVICE_FUNCTION: i32 = 98;
pub const INVALID_DEVICE: i32 = 101;
pub const INVALID_RESOURCE_HANDLE: i32 = 400;
pub const NOT_READY: i32 = 600;
pub const ILLEGAL_ADDRESS: i32 = 700;
pub const LAUNCH_TIMEOUT: i32 = 702;
pub const ASSERT: i32 = 710;
pub const LAUNCH_FAILURE: i32 = 719;

/// `(code, name, message)`, the messages as the CUDA runtime words them.
const TABLE: &[(i32, &str, &str)] = &[
    (SUCCESS, "cudaSuccess\0", "no error\0"),
    (
        INVALID_VALUE,
        "cudaErrorInvalidValue\0",
        "invalid argument\0",
    ),
    (
        MEMORY_ALLOCATION,
        "cudaErrorMemoryAllocation\0",
        "out of memory\0",
    ),
    (
        INVALID_CONFIGURATION,
        "cudaErrorInvalidConfiguration\0",
        "invalid configuration argument\0",
    ),
    (
        INVALID_SYMBOL,
        "cudaErrorInvalidSymbol\0",
        "invalid device symbol\0",
    ),
    (
        INVALID_DEVICE_POINTER,
        "cudaErrorInvalidDevicePointer\0",
        "invalid device pointer\0",
    ),
    (
        INVALID_MEMCPY_DIRECTION,
        "cudaErrorInvalidMemcpyDirection\0",
        "invalid copy direction for memcpy\0",
    ),
    (
        INVALID_DEVICE_FUNCTION,
        "cudaErrorInvalidDeviceFunction\0",
        "invalid device function\0",
    ),
    (
        INVALID_DEVICE,
        "cudaErrorInvalidDevice\0",
        "invalid device ordinal\0",
    ),
    (
        INVALID_RESOURCE_HANDLE,
        "cudaErrorInvalidResourceHandle\0",
        "invalid resource handle\0",
    ),
    (NOT_READY, "cudaErrorNotReady\0", "device not ready\0"),
    (
        ILLEGAL_ADDRESS,
        "cudaErrorIllegalAddress\0",
        "an illegal memory access was encountered\0",
    ),
    (
        LAUNCH_TIMEOUT,
        "cudaErrorLaunchTimeout\0",
        "the launch timed out and was terminated\0",
    ),
    (
        ASSERT,
        "cudaErrorAssert\0",
        "device-side assert triggered\0",
    ),
    (
        LAUNCH_FAILURE,
        "cudaErrorLaunchFailure\0",
        "unspecified launch failure\0",
    ),
];

/// The error's name, NUL-terminated.
pub fn name(code: i32) -> &'static str {
    entry(code).map_or("cudaErrorUnknown\0", |e| e.1)
}

/// The error's message, NUL-terminated.
pub fn message(code: i32) -> &'static str {
    entry(code).map_or("unrecognized error code\0", |e| e.2)
}

fn entry(code: i32) -> Option<&'static (i32, &'static str, &'static str)> {
    TABLE.iter().find(|e| e.0 == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_messages_are_c_strings() {
        for (code, n, m) in TABLE {
            assert!(n.ends_with('\0') && m.ends_with('\0'), "{code}");
        }
        assert_eq!(
            message(ILLEGAL_ADDRESS),
            "an illegal memory access was encountered\0"
        );
        assert_eq!(name(12345), "cudaErrorUnknown\0");
    }
}
