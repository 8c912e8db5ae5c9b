//! Deterministic UUID-shaped ids for frames that must carry a unique id (agentloop).
//!
//! The crate holds no randomness, and a replayed frame should carry the id it had live, so ids
//! are derived from (salt, scope, counter) instead of drawn. They have the version-4 layout
//! clients validate against; uniqueness is what matters, not unpredictability.

use alloc::string::String;
use core::fmt::Write;

/// FNV-1a over the bytes, seeded.
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ seed;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One step of splitmix64: a good 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A UUID v4-formatted id for the `n`th frame of `scope` under `salt`.
pub(crate) fn derive(salt: u64, scope: &[u8], n: u64) -> String {
    let base = fnv1a(salt, scope);
    let hi = mix(base ^ mix(n));
    let lo = mix(hi ^ n.rotate_left(32) ^ salt);
    let hi = (hi & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000; // version 4
    let lo = (lo & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000; // RFC 4122 variant
    let mut s = String::with_capacity(36);
    let _ = write!(
        s,
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuid_v4_shaped_and_distinct() {
        let a = derive(1, b"run-1", 1);
        let b = derive(1, b"run-1", 2);
        let c = derive(2, b"run-1", 1);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, derive(1, b"run-1", 1));
    }
}
