//! Digests as text: the one way a hash becomes hex here (file keys, fingerprints, shard and
//! cache keys, the Hub's ETags), lower-case as Python's `hexdigest()` writes it.

use sha2::{Digest, Sha256};

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    ::hex::encode(bytes)
}

/// Lower-case hex of the SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn as_python_hexdigest_writes_it() {
        // hashlib.sha256(b"abc").hexdigest()
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(super::hex(&[0, 15, 255]), "000fff");
    }
}
