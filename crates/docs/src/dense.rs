//! Semantic matching (seed 002, phase 2): texts as sentence vectors of the operator's embedding
//! model, compared by cosine, so that a question finds the chunk that means what it asks even
//! when they share no word ("revenue" and `Invoice.Total`). The model is the caller's (an
//! [`Encoder`]): this crate stays pure.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use schemascope_core::cancel::{self, Cancelled};
use schemascope_core::parallel::on_all_cores;
use schemascope_core::sync::lock;

use crate::chunk::{Chunk, ChunkKind};
use schemascope_core::Catalog;

/// A sentence-embedding model.
pub trait Encoder: Send + Sync + fmt::Debug {
    /// The vector of `text`, of unit length (the model's first tokens of a long text).
    fn encode(&self, text: &str) -> Vec<f32>;
}

/// How many recent questions' vectors are kept: one question is ranked several times in one
/// call (search, retrieval, the budget's table order), and a model call costs milliseconds.
const RECENT_QUESTIONS: usize = 8;
/// Most phrase vectors remembered (questions share their words: "customers", "how many
/// tracks"); past it the memory starts again.
const REMEMBERED_PHRASES: usize = 4_096;

/// The vectors of a fixed list of texts.
#[derive(Clone, Default)]
pub struct Vectors {
    dim: usize,
    data: Vec<f32>,
}

impl fmt::Debug for Vectors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vectors").field("dim", &self.dim).field("len", &self.len()).finish()
    }
}

impl Vectors {
    /// Encodes `texts` (as the model reads them: see [`natural`]) on all cores, in order;
    /// stops early when the current call is cancelled.
    pub fn encode(encoder: &dyn Encoder, texts: &[String]) -> Result<Self, Cancelled> {
        let token = cancel::current();
        let encoded = on_all_cores(texts.len(), |i| {
            if token.is_cancelled() { None } else { Some(unit(encoder.encode(&texts[i]))) }
        });
        token.check()?;
        let dim = encoded.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let mut data = Vec::with_capacity(dim * texts.len());
        for vector in encoded {
            let vector = vector.unwrap_or_default();
            // A vector of another length (a model that misbehaves) matches nothing.
            if vector.len() == dim {
                data.extend_from_slice(&vector);
            } else {
                data.resize(data.len() + dim, 0.0);
            }
        }
        Ok(Self { dim, data })
    }

    /// Vectors given as rows (each of unit length already), in order; a row of another length
    /// than the first matches nothing.
    fn from_rows(rows: &[Arc<[f32]>]) -> Self {
        let dim = rows.first().map_or(0, |r| r.len());
        let mut data = Vec::with_capacity(dim * rows.len());
        for row in rows {
            if row.len() == dim {
                data.extend_from_slice(row);
            } else {
                data.resize(data.len() + dim, 0.0);
            }
        }
        Self { dim, data }
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th vector (empty past the end).
    pub fn get(&self, i: usize) -> &[f32] {
        self.data.get(i * self.dim..(i + 1) * self.dim).unwrap_or_default()
    }

    /// The cosine of `query` with each vector, in order (both of unit length; 0 for a query of
    /// another length).
    pub fn similarities(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dim || self.dim == 0 {
            return vec![0.0; self.len()];
        }
        self.data.chunks_exact(self.dim).map(|v| dot(v, query)).collect()
    }
}

/// `vector` scaled to unit length, so that a dot product is a cosine whatever the model's own
/// normalisation; a vector with a non-finite or no length (a broken model) becomes zeros, which
/// match nothing.
pub(crate) fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm.is_finite() && norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    } else {
        vector.iter_mut().for_each(|x| *x = 0.0);
    }
    vector
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Questions just asked, with their vectors, oldest first.
type RecentQuestions = Vec<(String, Arc<[f32]>)>;

/// The model and the vectors of one index's chunks, examples and stored values.
#[derive(Clone)]
pub(crate) struct Dense {
    encoder: Arc<dyn Encoder>,
    pub(crate) chunks: Vectors,
    pub(crate) examples: Vectors,
    /// The stored values matched by meaning ([`crate::value_meaning::meaning_entries`]).
    pub(crate) values: Vectors,
    recent: Arc<Mutex<RecentQuestions>>,
    /// Phrases of questions (see `value_meaning`) with their vectors.
    phrases: Arc<Mutex<HashMap<String, Arc<[f32]>>>>,
}

impl fmt::Debug for Dense {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dense")
            .field("encoder", &self.encoder)
            .field("chunks", &self.chunks)
            .field("examples", &self.examples)
            .field("values", &self.values)
            .finish_non_exhaustive()
    }
}

impl Dense {
    pub(crate) fn new(
        encoder: Arc<dyn Encoder>,
        chunks: Vectors,
        examples: Vectors,
        values: Vectors,
    ) -> Self {
        Self { encoder, chunks, examples, values, recent: Arc::default(), phrases: Arc::default() }
    }

    /// The vectors of `phrases`, in order: those encoded before from memory, the others on all
    /// cores (stopping when the current call is cancelled).
    pub(crate) fn phrase_vectors(&self, phrases: &[String]) -> Result<Vectors, Cancelled> {
        let known: Vec<Option<Arc<[f32]>>> = {
            let memory = lock(&self.phrases);
            phrases.iter().map(|p| memory.get(p).cloned()).collect()
        };
        let missing: Vec<String> = phrases
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(p, _)| p.clone())
            .collect();
        let encoded = Vectors::encode(self.encoder.as_ref(), &missing)?;
        let mut fresh = (0..encoded.len()).map(|i| Arc::<[f32]>::from(encoded.get(i)));
        let rows: Vec<Arc<[f32]>> = known
            .into_iter()
            .map(|k| k.or_else(|| fresh.next()).unwrap_or_else(|| Arc::from(Vec::new())))
            .collect();
        let mut memory = lock(&self.phrases);
        if memory.len() + missing.len() > REMEMBERED_PHRASES {
            memory.clear();
        }
        for (phrase, row) in phrases.iter().zip(&rows) {
            if !memory.contains_key(phrase) && !row.is_empty() {
                memory.insert(phrase.clone(), row.clone());
            }
        }
        Ok(Vectors::from_rows(&rows))
    }

    /// The vector of `question`, from the recent ones when it was just asked.
    pub(crate) fn question(&self, question: &str) -> Arc<[f32]> {
        if let Some((_, v)) = lock(&self.recent).iter().find(|(q, _)| q == question) {
            return v.clone();
        }
        let vector: Arc<[f32]> = unit(self.encoder.encode(&natural(question))).into();
        let mut recent = lock(&self.recent);
        if recent.len() == RECENT_QUESTIONS {
            recent.remove(0);
        }
        recent.push((question.to_string(), vector.clone()));
        vector
    }
}

/// What the model reads of `chunk`: its table's name and its column's (the chunk's text may not
/// repeat them: a column chunk holds the column's notes), the names of the table's columns for
/// its overview, then the text.
pub(crate) fn chunk_text(chunk: &Chunk, catalog: &Catalog) -> String {
    let table = chunk.table.replace('.', " ");
    let content = &chunk.content;
    let text = match (&chunk.column, chunk.kind) {
        (Some(column), _) => format!("{table} {column}: {content}"),
        (None, ChunkKind::Overview) => {
            let columns = catalog
                .table(&chunk.table)
                .map(|t| t.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            format!("{table} ({columns}): {content}")
        }
        _ => format!("{table}: {content}"),
    };
    natural(&text)
}

/// `text` as the model reads prose: identifiers split into words (`InvoiceLine` → `Invoice
/// Line`, `hair_colour_id` → `hair colour id`) and markdown's marks dropped, since the model
/// learnt its words from sentences, not from code.
pub fn natural(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut previous: Option<char> = None;
    for c in text.chars() {
        match c {
            '_' | '`' | '#' | '|' | '*' => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
                previous = Some(' ');
                continue;
            }
            _ => {}
        }
        // A capital after a lower-case letter or a digit starts a word (`ArtistId`); a capital
        // followed by lower case after capitals ends an acronym (`HTMLPage` stays one word here:
        // the model's tokenizer splits it as well as this could).
        if c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_become_words() {
        assert_eq!(natural("`InvoiceLine`.`UnitPrice`"), "Invoice Line . Unit Price");
        assert_eq!(natural("hair_colour_id of ## superhero"), "hair colour id of superhero");
        assert_eq!(natural("Track2Name ÉtéAB"), "Track2 Name Été AB");
    }

    #[derive(Debug)]
    struct Letters;

    impl Encoder for Letters {
        fn encode(&self, text: &str) -> Vec<f32> {
            let mut v = [0f32; 26];
            for b in text.to_ascii_lowercase().bytes().filter(u8::is_ascii_lowercase) {
                v[usize::from(b - b'a')] += 1.0;
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter().map(|x| x / norm).collect()
        }
    }

    #[test]
    fn similarities_follow_the_encoder_and_a_wrong_length_matches_nothing() {
        let texts = vec!["aaa".to_string(), "bbb".to_string()];
        // A model's vector is scaled to unit length here; a broken one matches nothing.
        assert_eq!(unit(vec![3.0, 4.0]), vec![0.6, 0.8]);
        assert_eq!(unit(vec![f32::NAN, 1.0]), vec![0.0, 0.0]);
        assert_eq!(unit(vec![0.0, 0.0]), vec![0.0, 0.0]);
        let vectors = Vectors::encode(&Letters, &texts).unwrap();
        assert_eq!(vectors.len(), 2);
        let q = Letters.encode("a");
        let sims = vectors.similarities(&q);
        assert!((sims[0] - 1.0).abs() < 1e-6 && sims[1].abs() < 1e-6, "{sims:?}");
        assert_eq!(vectors.similarities(&[1.0]), vec![0.0, 0.0]);
        let dense = Dense::new(Arc::new(Letters), vectors, Vectors::default(), Vectors::default());
        assert_eq!(&*dense.question("ab"), &*dense.question("ab"));
    }

    #[test]
    fn a_cancelled_call_stops_encoding() {
        let token = cancel::Cancel::new();
        token.cancel();
        let texts = vec!["a".to_string(); 100];
        assert!(cancel::with(&token, || Vectors::encode(&Letters, &texts)).is_err());
    }
}
