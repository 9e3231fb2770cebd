//! Stable content hashes: the marker in generated docs (to tell untouched files from edited ones)
//! and the fingerprint of an index's inputs (to know when to rebuild it).
//!
//! FNV-1a (64 bit) is used because the value is written into files and compared across runs,
//! versions and platforms: it must never change, which rules out std's and foldhash's seeded
//! hashers, and it is a few lines with no collision-resistance needs (nobody forges a docs file
//! to be overwritten).

use schemascope_core::Catalog;

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// An FNV-1a hasher.
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Self(OFFSET)
    }
}

impl Fnv64 {
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(PRIME);
        }
    }

    /// Feeds a string followed by a separator, so that ("ab", "c") and ("a", "bc") differ.
    pub fn write_str(&mut self, text: &str) {
        self.write(text.as_bytes());
        self.write(&[0xff]);
    }

    /// The hash.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// The FNV-1a hash of `text`.
pub fn hash_text(text: &str) -> u64 {
    let mut h = Fnv64::default();
    h.write(text.as_bytes());
    h.finish()
}

/// A fingerprint of everything an index is built from: the catalog and the docs files (in any
/// order). Equal fingerprints mean the index need not be rebuilt.
pub fn input_fingerprint<N: AsRef<str>, T: AsRef<str>>(catalog: &Catalog, files: &[(N, T)]) -> u64 {
    let mut h = Fnv64::default();
    // Debug output covers every field of the catalog and is stable for equal values.
    h.write_str(&format!("{catalog:?}"));
    let mut sorted: Vec<(&str, &str)> =
        files.iter().map(|(n, t)| (n.as_ref(), t.as_ref())).collect();
    sorted.sort_unstable();
    for (name, text) in sorted {
        h.write_str(name);
        h.write_str(text);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        assert_eq!(hash_text(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash_text("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash_text("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn fingerprint_ignores_file_order_but_not_content() {
        let catalog = Catalog::default();
        let a = input_fingerprint(&catalog, &[("a.md", "x"), ("b.md", "y")]);
        assert_eq!(a, input_fingerprint(&catalog, &[("b.md", "y"), ("a.md", "x")]));
        assert_ne!(a, input_fingerprint(&catalog, &[("a.md", "x"), ("b.md", "z")]));
    }
}
