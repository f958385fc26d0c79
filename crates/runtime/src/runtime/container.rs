//! The device module as clang embeds it in a host object: the file given
//! to `-fcuda-include-gpubinary` becomes the data the fat-binary wrapper
//! points to. Ours is a header (a magic string and the length, since the
//! wrapper records no size) followed by the module's bitcode.

/// Marks a warpcheck device module (a real fat binary starts otherwise).
pub const MAGIC: &[u8; 16] = b"WARPCHECK-DEVMOD";
/// Bytes before the bitcode: the magic and a little-endian `u64` length.
pub const HEADER_BYTES: usize = MAGIC.len() + 8;

/// `bitcode` with the header in front.
pub fn wrap(bitcode: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + bitcode.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(bitcode.len() as u64).to_le_bytes());
    out.extend_from_slice(bitcode);
    out
}

/// The bitcode's length, when `header` (the first [`HEADER_BYTES`]) is ours.
pub fn length(header: &[u8]) -> Option<u64> {
    let rest = header.strip_prefix(MAGIC.as_slice())?;
    Some(u64::from_le_bytes(rest.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_gives_the_length_back() {
        let w = wrap(b"BC\xc0\xde12");
        assert_eq!(w.len(), HEADER_BYTES + 6);
        assert_eq!(length(&w[..HEADER_BYTES]), Some(6));
        assert_eq!(&w[HEADER_BYTES..], b"BC\xc0\xde12");
        // A real fat binary's header is not ours.
        assert_eq!(length(&[0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0][..]), None);
    }
}
