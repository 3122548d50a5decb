//! ControllerRevision names (Kubernetes `controller/history`, spec 3.0).
//!
//! The hash is FNV-1 (not 1a), 32 bits, over the revision's raw data followed by the decimal collision count
//! (when one is given: Kruise always gives one, so `0` is appended). The `u32` is printed in decimal and every
//! character of that text is safe-encoded into the alphabet `bcdfghjklmnpqrstvwxz2456789` (so digits `0..9` become
//! `4 5 6 7 8 9 b c d f`). The name is `<parent>-<hash>`, the parent truncated to 223 bytes.

/// The alphabet Kubernetes' `rand.SafeEncodeString` maps bytes into (byte value modulo 27).
pub const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// The longest parent-name prefix kept in a revision name.
pub const MAX_PARENT_NAME_BYTES: usize = 223;

/// FNV-1 32-bit of `bytes`, continuing from `state` (start with [`FNV32_OFFSET_BASIS`]).
#[must_use]
pub fn fnv1_32(state: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(state, |hash, byte| {
        hash.wrapping_mul(FNV32_PRIME) ^ u32::from(*byte)
    })
}

/// The FNV 32-bit offset basis.
pub const FNV32_OFFSET_BASIS: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

/// Kubernetes' `rand.SafeEncodeString`: each byte `b` becomes `SAFE_ALPHABET[b % 27]`.
#[must_use]
pub fn safe_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            let index = usize::from(byte) % SAFE_ALPHABET.len();
            SAFE_ALPHABET
                .get(index)
                .map_or('b', |encoded| char::from(*encoded))
        })
        .collect()
}

/// The revision hash of `data` (the revision's `data` JSON bytes) with an optional collision count.
#[must_use]
pub fn hash(data: &[u8], collision_count: Option<i32>) -> String {
    let mut state = fnv1_32(FNV32_OFFSET_BASIS, data);
    if let Some(count) = collision_count {
        state = fnv1_32(state, count.to_string().as_bytes());
    }
    safe_encode(&state.to_string())
}

/// `<parent>-<hash>`, with the parent name cut to [`MAX_PARENT_NAME_BYTES`] bytes (at a character boundary).
#[must_use]
pub fn name(parent: &str, hash: &str) -> String {
    let mut end = parent.len().min(MAX_PARENT_NAME_BYTES);
    while !parent.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", parent.get(..end).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1_reference_values() {
        // FNV-1 32-bit test vectors (Fowler/Noll/Vo reference set).
        assert_eq!(fnv1_32(FNV32_OFFSET_BASIS, b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(FNV32_OFFSET_BASIS, b"a"), 0x050c_5d7e);
        assert_eq!(fnv1_32(FNV32_OFFSET_BASIS, b"foobar"), 0x31f0_b262);
    }

    #[test]
    fn safe_encoding_of_digits() {
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
        assert_eq!(safe_encode("abcdef"), "vwxz24");
    }

    #[test]
    fn hash_appends_the_collision_count() {
        let data = b"{}";
        let without = hash(data, None);
        assert_eq!(
            without,
            safe_encode(&fnv1_32(FNV32_OFFSET_BASIS, data).to_string())
        );
        let with_zero = hash(data, Some(0));
        assert_eq!(
            with_zero,
            safe_encode(&fnv1_32(FNV32_OFFSET_BASIS, b"{}0").to_string())
        );
        assert_ne!(with_zero, hash(data, Some(1)));
        assert!(with_zero.bytes().all(|b| SAFE_ALPHABET.contains(&b)));
    }

    #[test]
    fn names_truncate_the_parent() {
        assert_eq!(name("demo", "abc"), "demo-abc");
        let long = "x".repeat(300);
        assert_eq!(name(&long, "h").len(), MAX_PARENT_NAME_BYTES + 2);
        let multibyte = "é".repeat(150);
        assert!(name(&multibyte, "h").ends_with("-h"));
    }
}
