//! Turning questions and documentation into index terms: identifier-aware splitting, stopwords and
//! plural stemming, the same for both sides so that "customer orders" meets `CustomerOrders`.

use std::borrow::Cow;

/// English function words and question phrasing that carry no schema meaning. Kept short on
/// purpose: words such as `name`, `number`, `count`, `date` or `type` are real column names and
/// must stay searchable.
const STOPWORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "being",
    "both", "but", "by", "called", "can", "could", "did", "do", "does", "doing", "each", "either",
    "for", "from", "give", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "list", "many",
    "me", "much", "my", "named", "no", "nor", "not", "of", "on", "or", "our", "ours", "out",
    "over", "per", "please", "return", "same", "she", "should", "show", "so", "such", "than",
    "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "us", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your", "yours",
];

/// Words ending in `s` that are not plurals (or whose singular is the same word).
const NOT_PLURAL: &[&str] =
    &["series", "species", "news", "always", "perhaps", "whereas", "physics", "mathematics"];

/// Question words that say how to query (count, rank, compare, aggregate) rather than what to
/// query, and generic nouns for "the data" itself (`data`, `table`, `record`, `information`).
/// They are not dropped — `count` or `total` can be real columns — but weigh less
/// ([`QUESTION_PHRASING_WEIGHT`]), so "the number of employees" is about employees, not about
/// every `*_number` column; and they are not *content* ([`is_content_term`]): a question made
/// only of them ("show me the data") says nothing about where to look. Singular forms, as the
/// tokenizer emits them.
const QUESTION_PHRASING: &[&str] = &[
    "after",
    "amount",
    "ascending",
    "average",
    "before",
    "between",
    "biggest",
    "cheapest",
    "count",
    "data",
    "database",
    "descending",
    "detail",
    "different",
    "distinct",
    "earliest",
    "entry",
    "every",
    "everything",
    "fewer",
    "find",
    "greater",
    "greatest",
    "highest",
    "info",
    "information",
    "larger",
    "largest",
    "latest",
    "least",
    "less",
    "longest",
    "lowest",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "more",
    "most",
    "newest",
    "number",
    "oldest",
    "one",
    "only",
    "order",
    "ordered",
    "record",
    "row",
    "shortest",
    "smaller",
    "smallest",
    "sort",
    "sorted",
    "stuff",
    "sum",
    "table",
    "thing",
    "top",
    "total",
    "unique",
    "youngest",
];

/// The weight of a phrasing word in a question (see [`question_weight`]).
pub const QUESTION_PHRASING_WEIGHT: f64 = 0.25;

/// The query weight of a question term: [`QUESTION_PHRASING_WEIGHT`] for words such as
/// `number`, `most` or `average`, 1 otherwise.
pub fn question_weight(term: &str) -> f64 {
    if QUESTION_PHRASING.binary_search(&term).is_ok() { QUESTION_PHRASING_WEIGHT } else { 1.0 }
}

/// True for a question term that says what to look for (not phrasing or a generic noun, see
/// [`question_weight`]).
pub fn is_content_term(term: &str) -> bool {
    question_weight(term) == 1.0
}

/// Scaffolding words of the docs format and of the text generated from the catalog and the
/// profiles (section labels, "primary key", "references", "integers from 1 to 59", "one row
/// per …", SQL keywords of query patterns). They are indexed when they are part of a name (a
/// `Type` column, a `Reference` table: names are indexed apart, see [`crate::Chunk::keywords`])
/// but never from prose, where they appear in most chunks of a kind and would let a question's
/// "type" or "rows" match every overview. Singular forms, sorted.
const PROSE_BOILERPLATE: &[&str] = &[
    "business",
    "case",
    "character",
    "column",
    "context",
    "database",
    "description",
    "detail",
    "distinct",
    "doc",
    "domain",
    "example",
    "generated",
    "integer",
    "join",
    "key",
    "matching",
    "note",
    "null",
    "nullable",
    "number",
    "one",
    "pattern",
    "primary",
    "profile",
    "purpose",
    "query",
    "refer",
    "reference",
    "referenced",
    "related",
    "relationship",
    "row",
    "select",
    "table",
    "text",
    "type",
    "unique",
    "use",
    "value",
    "view",
    "yes",
];

/// Appends the terms of documentation prose to `out`: [`tokenize_into`] without the
/// `PROSE_BOILERPLATE` words.
pub fn tokenize_prose_into(text: &str, out: &mut Vec<String>) {
    for_each_part(text, |part| {
        let before = out.len();
        push_term(part, out);
        if out.len() > before
            && out.last().is_some_and(|t| PROSE_BOILERPLATE.binary_search(&t.as_str()).is_ok())
        {
            out.pop();
        }
    });
}

/// The two known words a joined identifier is made of (`countrylanguage` → `country`,
/// `language`), when `known` accepts both halves, each at least three letters; the split that
/// leaves the longest first word wins.
pub fn compound_parts(term: &str, known: impl Fn(&str) -> bool) -> Option<(&str, &str)> {
    if term.len() < 6 || !term.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    (3..=term.len() - 3).rev().map(|i| term.split_at(i)).find(|(a, b)| known(a) && known(b))
}

/// True for a word dropped from queries and documents.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// The singular of an English plural (lowercase), by suffix rules; other words come back
/// unchanged.
///
/// `orders` → `order`, `categories` → `category`, `addresses` → `address`, `boxes` → `box`,
/// `ids` → `id`; `status`, `class`, `address`, `analysis` stay as they are.
pub fn singular(word: &str) -> Cow<'_, str> {
    let len = word.len();
    if !word.ends_with('s') || len < 3 || NOT_PLURAL.contains(&word) {
        return Cow::Borrowed(word);
    }
    // Latin and Greek singulars (status, campus, analysis, axis) and double s (class, address).
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return Cow::Borrowed(word);
    }
    if len > 4 && word.ends_with("ies") {
        return Cow::Owned(format!("{}y", &word[..len - 3]));
    }
    if word.ends_with("sses")
        || word.ends_with("xes")
        || word.ends_with("ches")
        || word.ends_with("shes")
    {
        return Cow::Borrowed(&word[..len - 2]);
    }
    if len == 3 && word != "ids" {
        // Three-letter words ending in s (gas, bus, has) are rarely plurals of two-letter words.
        return Cow::Borrowed(word);
    }
    Cow::Borrowed(&word[..len - 1])
}

/// Appends the terms of `text` to `out`: lowercase identifier parts (snake_case, camelCase,
/// `HTTPServer` → `http`, `server`; letters and digits apart), at least two characters long unless
/// part of a word, stopwords dropped, plurals singular. Numbers are values, not schema
/// vocabulary, and are never terms: otherwise the "5" of "top 5 customers" would match every
/// "5 rows", "integers 3, 4, 5" or "T2P 5M5" in generated text.
pub fn tokenize_into(text: &str, out: &mut Vec<String>) {
    for_each_part(text, |part| push_term(part, out));
}

/// The terms of `text` (see [`tokenize_into`]).
///
/// ```
/// use schemascope_core::terms::tokenize;
/// assert_eq!(tokenize("CustomerId of HTTPServer orders"), ["customer", "id", "http", "server", "order"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize_into(text, &mut out);
    out
}

fn push_term(part: &str, out: &mut Vec<String>) {
    let lower = part.to_ascii_lowercase();
    let numeric = lower.chars().all(char::is_numeric);
    // One-letter parts ("s" of "customer's", "t1" aliases) are noise.
    if numeric || lower.chars().count() < 2 || is_stopword(&lower) {
        return;
    }
    match singular(&lower) {
        Cow::Borrowed(stem) if stem.len() == lower.len() => out.push(lower),
        stem => out.push(stem.into_owned()),
    }
}

/// Calls `f` with every identifier part of `text`, in order, original case.
fn for_each_part(text: &str, mut f: impl FnMut(&str)) {
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            // "IDs", "URLs": a lone final s after capitals is a plural, not the start of a word.
            let plural_s = i + 2 == chars.len() && chars[i + 1].1 == 's';
            let next_lower = !plural_s && chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                // The last capital of an acronym starts the next word: HTTPServer → HTTP|Server.
                || (prev.is_uppercase() && c.is_uppercase() && next_lower)
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic());
            if boundary {
                f(&word[start..at]);
                start = at;
            }
        }
        f(&word[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(QUESTION_PHRASING.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn joined_identifiers_split_into_known_words() {
        let known = |w: &str| ["country", "language", "count", "try"].contains(&w);
        assert_eq!(compound_parts("countrylanguage", known), Some(("country", "language")));
        assert_eq!(compound_parts("country", known), None);
        assert_eq!(compound_parts("language", known), None);
        assert_eq!(question_weight("number"), QUESTION_PHRASING_WEIGHT);
        assert_eq!(question_weight("employee"), 1.0);
    }

    #[test]
    fn splits_snake_camel_and_acronyms() {
        assert_eq!(tokenize("customer_id"), ["customer", "id"]);
        assert_eq!(tokenize("CustomerId"), ["customer", "id"]);
        assert_eq!(tokenize("HTTPServer"), ["http", "server"]);
        assert_eq!(tokenize("document IDs and URLs"), ["document", "id", "url"]);
        assert_eq!(tokenize("invoiceLineItems"), ["invoice", "line", "item"]);
        assert_eq!(tokenize("Address1"), ["address"]);
        assert_eq!(
            tokenize("concert_singer.singer_in_concert"),
            ["concert", "singer", "singer", "concert"]
        );
    }

    #[test]
    fn stems_plurals_but_keeps_singular_words_ending_in_s() {
        assert_eq!(
            tokenize("orders categories addresses boxes ids"),
            ["order", "category", "address", "box", "id"]
        );
        assert_eq!(
            tokenize("status class address analysis series"),
            ["status", "class", "address", "analysis", "series"]
        );
        assert_eq!(tokenize("singers matches"), ["singer", "match"]);
    }

    #[test]
    fn drops_stopwords_single_letters_and_numbers_but_keeps_short_identifiers() {
        assert_eq!(tokenize("How many singers do we have?"), ["singer"]);
        assert_eq!(tokenize("What is the customer's id in 2009"), ["customer", "id"]);
        assert_eq!(tokenize("Show the name and count of T1"), ["name", "count"]);
        // Digits of every script are numbers too.
        assert_eq!(
            tokenize("top 5 customers, ٣ albums, 10e3 Ⅻ 0.99"),
            ["top", "customer", "album"]
        );
    }

    #[test]
    fn prose_drops_the_docs_scaffolding_but_names_keep_it() {
        let mut prose = Vec::new();
        tokenize_prose_into(
            "Table `Playlist` (5 rows). Primary key of Playlist. References Genre.GenreId; integers from 1 to 59",
            &mut prose,
        );
        assert_eq!(prose, ["playlist", "playlist", "genre", "genre", "id"]);
        assert_eq!(tokenize("MediaType"), ["media", "type"]);
        assert!(is_content_term("customer") && !is_content_term("data") && !is_content_term("top"));
        assert!(PROSE_BOILERPLATE.windows(2).all(|w| w[0] < w[1]));
    }
}
