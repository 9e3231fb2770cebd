//! BERT's uncased tokenizer, as Hugging Face's `BertTokenizer` runs it for all-MiniLM-L6-v2 and
//! bge-small: text cleaned (controls dropped, whitespace unified), CJK ideographs split apart,
//! lower-cased with accents stripped, split at whitespace and punctuation, then each word cut
//! into the longest vocabulary pieces (`##` marking a continuation), `[UNK]` for a word that
//! cannot be cut.

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// Words longer than this many characters are `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// A WordPiece vocabulary and its special tokens.
#[derive(Debug, Clone)]
pub struct WordPiece {
    ids: HashMap<String, u32>,
    /// `[CLS]`, `[SEP]`, `[UNK]`.
    pub(crate) cls: u32,
    pub(crate) sep: u32,
    unk: u32,
}

impl WordPiece {
    /// From `vocab.txt`: one token per line, its id its line number.
    pub fn from_vocab(text: &str) -> Option<Self> {
        let ids: HashMap<String, u32> =
            text.lines().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        let id = |t: &str| ids.get(t).copied();
        Some(Self { cls: id("[CLS]")?, sep: id("[SEP]")?, unk: id("[UNK]")?, ids })
    }

    /// The ids of `text`, `[CLS]` first and `[SEP]` last, at most `max_len` in all (the words
    /// past it are cut, as the model reads no further).
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut out = vec![self.cls];
        let room = max_len.saturating_sub(1).max(1);
        'words: for word in basic_tokens(text) {
            for id in self.pieces(&word) {
                if out.len() == room {
                    break 'words;
                }
                out.push(id);
            }
        }
        out.push(self.sep);
        out
    }

    /// The longest-match pieces of one word.
    fn pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while end > start {
                let from = chars[start].0;
                let to = chars.get(end).map_or(word.len(), |(i, _)| *i);
                let piece = &word[from..to];
                let id = if start > 0 {
                    self.ids.get(&format!("##{piece}"))
                } else {
                    self.ids.get(piece)
                };
                if let Some(&id) = id {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => pieces.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        pieces
    }
}

/// The words of `text` as BERT's basic tokenizer splits them (uncased, accents stripped).
fn basic_tokens(text: &str) -> Vec<String> {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || (is_control(c) && !c.is_whitespace()) {
            continue;
        }
        if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else if is_whitespace(c) {
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let mut words = Vec::new();
    for token in cleaned.split(' ').filter(|t| !t.is_empty()) {
        let lowered: String = token
            .to_lowercase()
            .nfd()
            .filter(|c| get_general_category(*c) != GeneralCategory::NonspacingMark)
            .collect();
        let mut word = String::new();
        for c in lowered.chars() {
            if is_punctuation(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// BERT's whitespace: space, tab, newline, carriage return, and Unicode space separators.
fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
        || get_general_category(c) == GeneralCategory::SpaceSeparator
}

/// BERT's control characters (tab, newline and carriage return count as whitespace instead).
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Unassigned
                | GeneralCategory::PrivateUse
                | GeneralCategory::Surrogate
        )
}

/// BERT's punctuation: every non-alphanumeric ASCII character, and Unicode's punctuation.
fn is_punctuation(c: char) -> bool {
    let code = c as u32;
    if (33..=47).contains(&code)
        || (58..=64).contains(&code)
        || (91..=96).contains(&code)
        || (123..=126).contains(&code)
    {
        return true;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::ConnectorPunctuation
            | GeneralCategory::DashPunctuation
            | GeneralCategory::OpenPunctuation
            | GeneralCategory::ClosePunctuation
            | GeneralCategory::InitialPunctuation
            | GeneralCategory::FinalPunctuation
            | GeneralCategory::OtherPunctuation
    )
}

/// The CJK Unified Ideographs blocks BERT splits character by character.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::{WordPiece, basic_tokens};

    #[test]
    fn words_are_split_as_bert_splits_them() {
        assert_eq!(
            basic_tokens("Héllo,  WORLD!\tcafé\u{200b}x 你好"),
            ["hello", ",", "world", "!", "cafex", "你", "好"]
        );
    }

    #[test]
    fn words_are_cut_into_the_longest_pieces() {
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\nrun\n##ning\n,\n";
        let wp = WordPiece::from_vocab(vocab).expect("vocab");
        assert_eq!(wp.encode("unaffable, running xyz", 64), [2, 4, 5, 6, 9, 7, 8, 1, 3]);
        assert_eq!(wp.encode("unaffable running", 4), [2, 4, 5, 3], "cut to the length");
    }
}
