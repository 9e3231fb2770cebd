//! The text a collection's items live in: a string the collection owns, or bytes held elsewhere
//! (a file mapped into memory by a source) that were checked to be UTF-8 once.
//!
//! Items are byte ranges into this text, so it is shared (`Arc`) and never copied.

// Holding checked bytes outside Rust's `String` is this module's purpose; each unsafe site
// states what makes it sound.
#![allow(unsafe_code)]

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Bytes owned outside the core, such as a memory-mapped file.
pub trait ExternalBytes: Send + Sync + fmt::Debug {
    /// The bytes; the same slice on every call.
    fn bytes(&self) -> &[u8];
}

#[derive(Debug)]
enum Storage {
    Owned(String),
    External(Box<dyn ExternalBytes>),
}

/// UTF-8 text, owned or external; dereferences to `str`.
#[derive(Debug)]
pub struct Text {
    storage: Storage,
    /// Bytes skipped at the front (a byte-order mark), so the text starts at its first character.
    start: usize,
}

/// The shared text of a collection's items.
pub type SharedText = Arc<Text>;

impl Text {
    /// Text held in `bytes`, starting at byte `start`.
    ///
    /// # Safety
    /// `bytes.bytes()[start..]` must be valid UTF-8 and must not change while the `Text` lives.
    /// For a mapped file this is the usual caveat of mapping: another process must not rewrite
    /// the file meanwhile (see `schemascope-sources`, which maps only for one-shot commands).
    pub unsafe fn from_external_unchecked(bytes: Box<dyn ExternalBytes>, start: usize) -> Self {
        Self { storage: Storage::External(bytes), start }
    }

    /// The same text with its first `skip` bytes left out; unchanged if `skip` does not fall on
    /// a character boundary.
    pub fn skip_prefix(mut self, skip: usize) -> Self {
        if self.is_char_boundary(skip) {
            self.start += skip;
        }
        self
    }
}

impl Default for Text {
    fn default() -> Self {
        Self::from(String::new())
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self { storage: Storage::Owned(text), start: 0 }
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self::from(text.to_string())
    }
}

impl Deref for Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        match &self.storage {
            Storage::Owned(text) => text.get(self.start..).unwrap_or_default(),
            // SAFETY: `from_external_unchecked`'s contract: valid UTF-8 from `start`, unchanging.
            Storage::External(bytes) => unsafe {
                std::str::from_utf8_unchecked(bytes.bytes().get(self.start..).unwrap_or_default())
            },
        }
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Held(Vec<u8>);

    impl ExternalBytes for Held {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
    }

    #[test]
    fn owned_and_external_text_read_the_same() {
        let owned = Text::from("\u{feff}{\"a\":1}".to_string()).skip_prefix(3);
        // SAFETY: the bytes are UTF-8 and never change.
        let external =
            unsafe { Text::from_external_unchecked(Box::new(Held("\u{feff}{\"a\":1}".into())), 0) }
                .skip_prefix(3);
        assert_eq!(&*owned, "{\"a\":1}");
        assert_eq!(&*external, "{\"a\":1}");
        assert_eq!(&*Text::default(), "");
    }

    #[test]
    fn a_skip_inside_a_character_keeps_the_whole_text() {
        assert_eq!(&*Text::from("é".to_string()).skip_prefix(1), "é");
        assert_eq!(&*Text::from("é!".to_string()).skip_prefix(2), "!");
    }
}
