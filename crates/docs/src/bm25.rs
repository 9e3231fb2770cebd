//! BM25 ranking over an inverted index: build once from tokenized documents, then answer top-k
//! queries without allocating (the caller keeps a [`Scratch`]).
//!
//! Each posting stores its *impact* `tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`, computed once at
//! build time, so a query costs one multiply-add per posting. The impact is computed with the same
//! operations, in the same order, as rank_bm25 computes it, which is what lets [`Scoring::Okapi`]
//! reproduce its scores to the last bits.

use foldhash::HashMap;
use serde::{Deserialize, Serialize};

/// How term rarity (IDF) is computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "mode")]
pub enum Scoring {
    /// `ln(1 + (N − df + 0.5) / (df + 0.5))` (Lucene's form): never negative, so a term that
    /// occurs in most chunks still counts a little instead of pushing matches down.
    Standard,
    /// rank_bm25's `BM25Okapi`: `ln(N − df + 0.5) − ln(df + 0.5)`, with negative values replaced
    /// by `epsilon · mean idf` over the vocabulary.
    Okapi {
        /// rank_bm25's `epsilon` (0.25 there).
        epsilon: f64,
    },
}

impl Scoring {
    /// Okapi mode with rank_bm25's default epsilon.
    pub const OKAPI: Scoring = Scoring::Okapi { epsilon: 0.25 };
}

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Bm25Params {
    /// Term-frequency saturation (1.5).
    pub k1: f64,
    /// Length normalisation (0.75).
    pub b: f64,
    /// IDF flavour.
    pub scoring: Scoring,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.5, b: 0.75, scoring: Scoring::Standard }
    }
}

/// One ranked document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The document's position in the corpus given to [`Bm25Index::build`].
    pub doc: u32,
    /// Its BM25 score.
    pub score: f64,
}

/// Reusable buffers for queries; one per thread. Grows to the corpus size on first use.
#[derive(Debug, Default)]
pub struct Scratch {
    scores: Vec<f64>,
    touched: Vec<u32>,
    terms: Vec<(u32, f64)>,
    top: Vec<Hit>,
}

impl Scratch {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

/// True when `a` ranks before `b`: higher score, then earlier document. Plain float
/// comparisons (scores are never NaN), cheaper than `total_cmp` in the selection loop.
#[inline(always)]
fn ranks_before(a: &Hit, b: &Hit) -> bool {
    a.score > b.score || (a.score == b.score && a.doc < b.doc)
}

/// `Less` when `a` ranks before `b` (see [`ranks_before`]).
#[cfg(test)]
fn better(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc))
}

/// Bounded selection of the best `k` hits, kept sorted best first. For the small `k` of
/// retrieval a sorted array beats a heap: most candidates are rejected by one comparison with the
/// last entry, and an insertion moves a few cache-resident entries.
struct Select<'a> {
    k: usize,
    top: &'a mut Vec<Hit>,
}

impl<'a> Select<'a> {
    fn new(k: usize, top: &'a mut Vec<Hit>) -> Self {
        top.clear();
        Self { k, top }
    }

    #[inline(always)]
    fn offer(&mut self, doc: u32, score: f64) {
        // Documents without a positive score are not matches.
        if score <= 0.0 {
            return;
        }
        if self.top.len() == self.k {
            match self.top.last() {
                Some(worst) if ranks_before(&Hit { doc, score }, worst) => {}
                _ => return,
            }
            self.top.pop();
        }
        self.insert(Hit { doc, score });
    }

    #[inline(always)]
    fn insert(&mut self, hit: Hit) {
        // Shift worse entries up by one, from the end: for ten entries a few moves in registers
        // beat a binary search and a memmove call.
        self.top.push(hit);
        let top = &mut self.top[..];
        let mut i = top.len() - 1;
        while i > 0 && ranks_before(&hit, &top[i - 1]) {
            top[i] = top[i - 1];
            i -= 1;
        }
        top[i] = hit;
    }
}

/// An inverted index with BM25 scoring.
#[derive(Debug, Clone)]
pub struct Bm25Index {
    params: Bm25Params,
    vocab: HashMap<String, u32>,
    idf: Vec<f64>,
    /// Postings of term `t` are `offsets[t]..offsets[t + 1]`.
    offsets: Vec<u32>,
    post_doc: Vec<u32>,
    post_impact: Vec<f64>,
    doc_len: Vec<u32>,
    avgdl: f64,
}

impl Bm25Index {
    /// Indexes `docs` (each a list of terms). Document ids are positions in `docs`.
    pub fn build<D, T>(docs: &[D], params: Bm25Params) -> Self
    where
        D: AsRef<[T]>,
        T: AsRef<str>,
    {
        let mut vocab: HashMap<String, u32> = HashMap::default();
        // Per term, its (doc, tf) pairs in doc order; terms numbered in first-seen order, as
        // rank_bm25's `nd` dict is, so IDF sums add up in the same order.
        let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        let mut total_len: u64 = 0;
        for (doc_id, doc) in docs.iter().enumerate() {
            let doc_id = doc_id as u32;
            let terms = doc.as_ref();
            doc_len.push(terms.len() as u32);
            total_len += terms.len() as u64;
            for term in terms {
                let term = term.as_ref();
                let id = match vocab.get(term) {
                    Some(&id) => id,
                    None => {
                        let id = postings.len() as u32;
                        vocab.insert(term.to_string(), id);
                        postings.push(Vec::new());
                        id
                    }
                };
                let list = &mut postings[id as usize];
                match list.last_mut() {
                    Some((d, tf)) if *d == doc_id => *tf += 1,
                    _ => list.push((doc_id, 1)),
                }
            }
        }
        let n = docs.len() as f64;
        let avgdl = if docs.is_empty() { 0.0 } else { total_len as f64 / n };
        let idf = compute_idf(&postings, n, params.scoring);
        let (k1, b) = (params.k1, params.b);
        // rank_bm25: k1 * (1 - b + b * doc_len / avgdl), evaluated left to right.
        let norms: Vec<f64> = doc_len
            .iter()
            .map(|&dl| if avgdl > 0.0 { k1 * (1.0 - b + b * f64::from(dl) / avgdl) } else { k1 })
            .collect();
        let mut offsets = Vec::with_capacity(postings.len() + 1);
        let total: usize = postings.iter().map(Vec::len).sum();
        let mut post_doc = Vec::with_capacity(total);
        let mut post_impact = Vec::with_capacity(total);
        offsets.push(0);
        for list in &postings {
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                post_doc.push(doc);
                post_impact.push(tf * (k1 + 1.0) / (tf + norms[doc as usize]));
            }
            offsets.push(post_doc.len() as u32);
        }
        Self { params, vocab, idf, offsets, post_doc, post_impact, doc_len, avgdl }
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// True when the corpus is empty.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Mean document length, in terms.
    pub fn avgdl(&self) -> f64 {
        self.avgdl
    }

    /// The IDF of `term`, when it occurs in the corpus.
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.vocab.get(term).map(|&t| self.idf[t as usize])
    }

    /// Number of documents containing `term`.
    pub fn doc_freq(&self, term: &str) -> usize {
        self.vocab
            .get(term)
            .map_or(0, |&t| (self.offsets[t as usize + 1] - self.offsets[t as usize]) as usize)
    }

    /// The score of every document (0 for no match), as rank_bm25's `get_scores` returns them:
    /// a repeated query term counts each time it occurs.
    pub fn scores<T: AsRef<str>>(&self, query: &[T]) -> Vec<f64> {
        let mut scores = vec![0.0; self.len()];
        for term in query {
            if let Some(&t) = self.vocab.get(term.as_ref()) {
                let mut touched = vec![0; self.posting_range(t).len()];
                self.add_term(t, 1.0, &mut scores, &mut touched, 0);
            }
        }
        scores
    }

    /// The best `k` documents for `query` with a score above zero, best first (ties: earlier
    /// document first), written into `out`. Allocates nothing once `scratch` has grown.
    pub fn top_k<T: AsRef<str>>(
        &self,
        query: &[T],
        k: usize,
        scratch: &mut Scratch,
        out: &mut Vec<Hit>,
    ) {
        scratch.terms.clear();
        for term in query {
            if let Some(&t) = self.vocab.get(term.as_ref()) {
                scratch.terms.push((t, 1.0));
            }
        }
        self.top_k_ids(k, scratch, out);
    }

    /// Like [`Bm25Index::top_k`] with a weight per query term that multiplies its IDF (1.0 for
    /// plain BM25; less for words that say how to query rather than what).
    pub fn top_k_weighted<T: AsRef<str>>(
        &self,
        query: &[(T, f64)],
        k: usize,
        scratch: &mut Scratch,
        out: &mut Vec<Hit>,
    ) {
        self.weighted_terms(query, scratch);
        self.top_k_ids(k, scratch, out);
    }

    /// The known terms of `query`, with their weights, into `scratch`.
    fn weighted_terms<T: AsRef<str>>(&self, query: &[(T, f64)], scratch: &mut Scratch) {
        scratch.terms.clear();
        for (term, weight) in query {
            if let Some(&t) = self.vocab.get(term.as_ref()) {
                scratch.terms.push((t, *weight));
            }
        }
    }

    /// Like [`Bm25Index::top_k_weighted`] with `extra[doc]` added to every document's score
    /// (another ranking's evidence, such as a semantic match), so that a document the query's
    /// terms miss can still rank. Visits every document: for hybrid ranking, not plain BM25.
    pub fn top_k_weighted_plus<T: AsRef<str>>(
        &self,
        query: &[(T, f64)],
        extra: &[f64],
        k: usize,
        scratch: &mut Scratch,
        out: &mut Vec<Hit>,
    ) {
        self.weighted_terms(query, scratch);
        out.clear();
        self.accumulate(scratch);
        let Scratch { scores, top, .. } = scratch;
        let mut select = Select::new(k, top);
        for (doc, slot) in scores.iter_mut().enumerate() {
            select.offer(doc as u32, *slot + extra.get(doc).copied().unwrap_or(0.0));
            *slot = 0.0;
        }
        out.extend_from_slice(top);
    }

    /// True when document `doc` contains `term`.
    pub fn contains(&self, term: &str, doc: u32) -> bool {
        self.term_id(term)
            .is_some_and(|t| self.post_doc[self.posting_range(t)].binary_search(&doc).is_ok())
    }

    /// The highest IDF of any term in the corpus (a term found in the fewest documents): what a
    /// perfectly specific question term is worth, so that a term's IDF over it says how
    /// specific the term is in this corpus (0 when the corpus is empty).
    pub fn max_idf(&self) -> f64 {
        self.idf.iter().copied().fold(0.0, f64::max)
    }

    /// The id of `term` in this index.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.vocab.get(term).copied()
    }

    /// Adds every term of `scratch.terms` to `scratch.scores` (all zero before), recording the
    /// documents first touched in `scratch.touched`; returns how many there are.
    fn accumulate(&self, scratch: &mut Scratch) -> usize {
        if scratch.scores.len() != self.len() {
            scratch.scores.clear();
            scratch.scores.resize(self.len(), 0.0);
        }
        let Scratch { scores, touched, terms, .. } = scratch;
        let postings: usize = terms.iter().map(|&(t, _)| self.posting_range(t).len()).sum();
        if touched.len() < postings {
            touched.resize(postings, 0);
        }
        let mut len = 0;
        for &(t, weight) in terms.iter() {
            len = self.add_term(t, weight, scores, touched, len);
        }
        len
    }

    fn top_k_ids(&self, k: usize, scratch: &mut Scratch, out: &mut Vec<Hit>) {
        out.clear();
        let len = self.accumulate(scratch);
        let Scratch { scores, touched, top, .. } = scratch;
        // A document whose running score was exactly 0 after a term (an Okapi IDF of 0) is
        // recorded twice: its second visit sees the zeroed slot and is skipped.
        let mut select = Select::new(k, top);
        for &doc in &touched[..len] {
            let slot = &mut scores[doc as usize];
            select.offer(doc, *slot);
            *slot = 0.0;
        }
        out.extend_from_slice(top);
    }

    fn posting_range(&self, t: u32) -> std::ops::Range<usize> {
        self.offsets[t as usize] as usize..self.offsets[t as usize + 1] as usize
    }

    /// Adds term `t`'s contribution to `scores` and records first-touched documents in
    /// `touched[len..]`, returning the new length. `touched` must have room for every posting.
    ///
    /// The document is written unconditionally and the length advanced by 0 or 1: no branch to
    /// mispredict. (Measured on the bench corpus, this beats a branch per posting, scanning every
    /// score of a small corpus, and copying whole posting lists.)
    #[inline]
    fn add_term(
        &self,
        t: u32,
        weight: f64,
        scores: &mut [f64],
        touched: &mut [u32],
        mut len: usize,
    ) -> usize {
        // × 1.0 is exact, so unweighted queries score exactly as rank_bm25 does.
        let idf = self.idf[t as usize] * weight;
        let range = self.posting_range(t);
        for (&doc, &impact) in self.post_doc[range.clone()].iter().zip(&self.post_impact[range]) {
            let slot = &mut scores[doc as usize];
            touched[len] = doc;
            len += usize::from(*slot == 0.0);
            *slot += idf * impact;
        }
        len
    }

    /// What a document of average length gets from one occurrence of each known query term:
    /// `Σ weight·idf(t)` over the terms the corpus contains (each counted once). Used to express a
    /// score as the share of the question it answers.
    pub fn query_weight<T: AsRef<str>>(&self, query: &[(T, f64)]) -> f64 {
        let mut seen: Vec<u32> = Vec::new();
        let mut total = 0.0;
        for (term, weight) in query {
            if let Some(&t) = self.vocab.get(term.as_ref())
                && !seen.contains(&t)
            {
                seen.push(t);
                total += weight * self.idf[t as usize].max(0.0);
            }
        }
        total
    }
}

/// IDF per term id.
fn compute_idf(postings: &[Vec<(u32, u32)>], n: f64, scoring: Scoring) -> Vec<f64> {
    match scoring {
        Scoring::Standard => postings
            .iter()
            .map(|p| {
                let df = p.len() as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect(),
        Scoring::Okapi { epsilon } => {
            let mut idf: Vec<f64> = postings
                .iter()
                .map(|p| {
                    let df = p.len() as f64;
                    (n - df + 0.5).ln() - (df + 0.5).ln()
                })
                .collect();
            let sum: f64 = idf.iter().fold(0.0, |acc, x| acc + x);
            let average = if idf.is_empty() { 0.0 } else { sum / idf.len() as f64 };
            let eps = epsilon * average;
            for value in &mut idf {
                if *value < 0.0 {
                    *value = eps;
                }
            }
            idf
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<Vec<&'static str>> {
        vec![
            vec!["customer", "name", "email"],
            vec!["invoice", "customer", "id", "total"],
            vec!["track", "name", "genre", "id"],
            vec!["genre", "name"],
        ]
    }

    #[test]
    fn standard_scores_match_hand_computed_values() {
        let index = Bm25Index::build(&corpus(), Bm25Params::default());
        // N = 4, avgdl = 13/4 = 3.25. "customer": df = 2 → idf = ln(1 + 2.5/2.5) = ln 2.
        // Doc 0 (len 3): norm = 1.5·(0.25 + 0.75·3/3.25); impact = 2.5 / (1 + norm).
        let norm0 = 1.5 * (0.25 + 0.75 * 3.0 / 3.25);
        let expected0 = 2f64.ln() * 2.5 / (1.0 + norm0);
        let norm1 = 1.5 * (0.25 + 0.75 * 4.0 / 3.25);
        let expected1 = 2f64.ln() * 2.5 / (1.0 + norm1);
        let scores = index.scores(&["customer"]);
        assert!((scores[0] - expected0).abs() < 1e-12, "{scores:?}");
        assert!((scores[1] - expected1).abs() < 1e-12);
        assert_eq!(scores[2], 0.0);
        // "name": df = 3 of 4 → idf = ln(1 + 1.5/3.5) > 0: common terms never go negative.
        assert!((index.idf("name").unwrap() - (1.0f64 + 1.5 / 3.5).ln()).abs() < 1e-12);
    }

    #[test]
    fn top_k_is_ordered_bounded_and_reuses_scratch() {
        let index = Bm25Index::build(&corpus(), Bm25Params::default());
        let mut scratch = Scratch::new();
        let mut out = Vec::new();
        index.top_k(&["genre", "name"], 2, &mut scratch, &mut out);
        assert_eq!(out.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![3, 2]);
        assert!(out[0].score > out[1].score);
        // The scratch is clean for the next query.
        index.top_k(&["invoice"], 10, &mut scratch, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].doc, 1);
        index.top_k(&["unknown"], 10, &mut scratch, &mut out);
        assert!(out.is_empty());
        let full = index.scores(&["genre", "name"]);
        index.top_k(&["genre", "name"], 10, &mut scratch, &mut out);
        for hit in &out {
            assert_eq!(hit.score, full[hit.doc as usize]);
        }
    }

    #[test]
    fn top_k_equals_a_full_sort_of_the_scores() {
        let words = ["a1", "b2", "c3", "d4", "e5", "f6", "g7"];
        let mut rng = fastrand::Rng::with_seed(7);
        let docs: Vec<Vec<&str>> = (0..300)
            .map(|_| (0..rng.usize(1..12)).map(|_| words[rng.usize(..words.len())]).collect())
            .collect();
        let index = Bm25Index::build(&docs, Bm25Params::default());
        let (mut scratch, mut out) = (Scratch::new(), Vec::new());
        for _ in 0..50 {
            let query: Vec<&str> =
                (0..rng.usize(1..4)).map(|_| words[rng.usize(..words.len())]).collect();
            let k = rng.usize(1..40);
            let scores = index.scores(&query);
            let mut expected: Vec<Hit> = scores
                .iter()
                .enumerate()
                .filter(|(_, s)| **s > 0.0)
                .map(|(d, &score)| Hit { doc: d as u32, score })
                .collect();
            expected.sort_by(better);
            expected.truncate(k);
            index.top_k(&query, k, &mut scratch, &mut out);
            assert_eq!(out, expected, "{query:?} k={k}");
        }
    }

    #[test]
    fn okapi_replaces_negative_idf_with_epsilon_times_mean() {
        let index = Bm25Index::build(
            &corpus(),
            Bm25Params { scoring: Scoring::OKAPI, ..Default::default() },
        );
        // "name": df = 3, N = 4 → ln(1.5) − ln(3.5) < 0, replaced by 0.25 · mean idf.
        let raw = |df: f64| (4.0 - df + 0.5f64).ln() - (df + 0.5f64).ln();
        // Vocabulary in first-seen order: customer 2, name 3, email 1, invoice 1, id 2, total 1,
        // track 1, genre 2.
        let dfs = [2.0, 3.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0];
        let mean = dfs.iter().map(|&d| raw(d)).sum::<f64>() / 8.0;
        assert!((index.idf("name").unwrap() - 0.25 * mean).abs() < 1e-15);
        assert_eq!(index.idf("customer").unwrap(), raw(2.0));
    }
}
