//! Token counting with a real tokenizer (OpenAI's o200k_base via tiktoken-rs), so budgets given in
//! tokens mean what the model will see.

/// Number of tokens `text` encodes to.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_tokens_not_characters() {
        assert_eq!(super::count(""), 0);
        let n = super::count("Nodes have the following properties");
        assert!((4..=8).contains(&n), "{n}");
    }
}
