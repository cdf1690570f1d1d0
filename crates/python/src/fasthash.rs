//! A fast non-cryptographic hash for caches keyed by source text: FxHash-style
//! multiply-rotate over 8-byte words. Collisions only cost a comparison, since every
//! cache using it compares texts before use; SipHash's flood resistance buys nothing here.

use std::hash::Hasher;

/// The hash of `text`, mixed with `seed` (e.g. a node kind and a column).
pub fn of(text: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let mut h = mix(0, seed);
    let mut words = text.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
    }
    for &b in words.remainder() {
        h = mix(h, b as u64);
    }
    mix(h, text.len() as u64)
}

/// For maps whose keys are such hashes already.
#[derive(Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn texts_and_seeds_change_the_hash() {
        assert_eq!(
            super::of(b"def f(): pass", 1),
            super::of(b"def f(): pass", 1)
        );
        assert_ne!(
            super::of(b"def f(): pass", 1),
            super::of(b"def f(): pas", 1)
        );
        assert_ne!(super::of(b"x", 1), super::of(b"x", 2));
        assert_ne!(super::of(b"", 0), super::of(b"\0", 0));
    }
}
