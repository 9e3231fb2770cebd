//! Okapi mode reproduces rank_bm25's BM25Okapi scores (values computed with rank_bm25 0.2.2 on
//! the same tokens), including a zero IDF, negative IDFs replaced by epsilon × mean IDF, repeated
//! query terms and unknown terms.

use schemascope_docs::{Bm25Index, Bm25Params, Scoring};

#[test]
fn okapi_scores_equal_rank_bm25_within_1e_9() {
    let corpus: Vec<Vec<&str>> = vec![
        vec!["customer", "name", "email", "customer", "id"],
        vec!["invoice", "customer", "id", "total"],
        vec!["track", "name", "genre", "id"],
        vec!["genre", "name", "id"],
        vec!["invoice", "line", "track", "id", "unit", "price", "quantity"],
        vec!["album", "title", "artist", "id"],
    ];
    let index =
        Bm25Index::build(&corpus, Bm25Params { scoring: Scoring::OKAPI, ..Bm25Params::default() });
    // rank_bm25: BM25Okapi(corpus).get_scores(query)
    let expected: [(&[&str], [f64; 6]); 3] = [
        (
            &["customer", "id"],
            [
                0.9929583887102351,
                0.8201218254990602,
                0.2013990203389349,
                0.22509302273175077,
                0.15306325545759053,
                0.2013990203389349,
            ],
        ),
        (&["name", "genre", "genre"], [0.0, 0.0, 1.2374456103202507, 1.3830274468285155, 0.0, 0.0]),
        (
            &["invoice", "track", "unknown"],
            [0.0, 0.6187228051601253, 0.6187228051601253, 0.0, 0.9404586638433905, 0.0],
        ),
    ];
    for (query, want) in expected {
        let got = index.scores(query);
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "{query:?}: {got:?} vs {want:?}");
        }
    }
    // rank_bm25's idf table: "name" (df 3 of 6) is exactly 0; "id" (in every doc) is negative and
    // replaced by 0.25 × average_idf (0.7653162772879526).
    assert_eq!(index.idf("name"), Some(0.0));
    assert!((index.idf("id").unwrap_or_default() - 0.19132906932198815).abs() < 1e-15);
}
