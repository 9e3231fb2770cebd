//! Semantic retrieval (seed 002, phase 2): the question's vector and every chunk's fused with
//! BM25. A toy encoder whose concepts are spelled out shows the fusion itself; the real
//! all-MiniLM-L6-v2 (installed by scripts/test, named by SCHEMASCOPE_TEST_EMBED_MODEL) shows
//! what it buys on Chinook questions worded unlike the schema.

use std::sync::Arc;

use schemascope_docs::examples::parse_examples;
use schemascope_docs::generate::{TableData, generate_docs};
use schemascope_docs::{
    Catalog, ColumnNotes, Encoder, FullReason, RetrievalConfig, SchemaIndex, Strategy, parse_docs,
};

fn catalog() -> Catalog {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/docs/chinook_catalog.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Chinook with the docs a fresh source gets (generated: names and types, no prose) and one
/// verified example; a focused context may take up to `max_focused_share` of the full one.
fn index(max_focused_share: f64) -> SchemaIndex {
    let catalog = catalog();
    let files = generate_docs(&catalog, "chinook", |_| TableData::default());
    let pairs: Vec<(&str, &str)> =
        files.iter().map(|f| (f.name.as_str(), f.text.as_str())).collect();
    let (mut docs, warnings) = parse_docs(&pairs);
    assert!(warnings.is_empty(), "{warnings:?}");
    let (examples, problems) = parse_examples(
        "_examples.toml",
        "[[example]]\nquestion = \"Revenue per billing country\"\nsql = \"SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY 1\"\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    docs.examples = examples;
    let config =
        RetrievalConfig { table_threshold: 0, max_focused_share, ..RetrievalConfig::default() };
    SchemaIndex::build(catalog, docs, &ColumnNotes::new(), config).0
}

/// Words grouped into concepts: a text's vector counts its words per concept.
#[derive(Debug)]
struct Concepts;

const CONCEPTS: [&[&str]; 4] = [
    &["revenue", "income", "money", "total", "invoice"],
    &["nation", "country"],
    &["song", "songs", "track"],
    &["musician", "artist"],
];

impl Encoder for Concepts {
    fn encode(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.05f32; CONCEPTS.len() + 1];
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            let word = word.to_lowercase();
            // Identifier parts as the model is shown them (`BillingCountry` → `Billing Country`).
            if let Some(i) = CONCEPTS.iter().position(|c| c.contains(&word.as_str())) {
                v[i] += 1.0;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }
}

#[test]
fn a_question_in_other_words_finds_its_table_and_example_by_meaning() {
    // Eleven small tables: five retrieved and their neighbours are most of the schema.
    let words_only = index(1.0);
    let question = "income by nation";
    let retrieval = words_only.retrieve(question, None);
    assert_eq!(retrieval.strategy, Strategy::Full(FullReason::NoMatches), "{retrieval:?}");
    assert!(retrieval.examples.is_empty(), "{:?}", retrieval.examples);
    assert!(!words_only.is_semantic());

    let semantic = index(1.0).with_encoder(Arc::new(Concepts)).unwrap();
    assert!(semantic.is_semantic());
    let retrieval = semantic.retrieve(question, None);
    assert_eq!(retrieval.strategy, Strategy::Focused, "{retrieval:?}");
    assert_eq!(retrieval.tables.first(), Some(&"Invoice"), "{retrieval:?}");
    assert_eq!(retrieval.examples.len(), 1, "{:?}", retrieval.examples);
    assert_eq!(retrieval.examples[0].example.question, "Revenue per billing country");
    let context = semantic.render(&retrieval, None);
    assert!(context.text.contains("Revenue per billing country"), "{}", context.text);
    // A word the question shares with the schema still counts: the fusion adds, never replaces.
    let ranked: Vec<&str> =
        semantic.search("artist names", 5).iter().map(|c| c.chunk.table.as_str()).collect();
    assert_eq!(ranked.first(), Some(&"Artist"), "{ranked:?}");
}

fn model() -> Arc<dyn Encoder> {
    #[derive(Debug)]
    struct Model(schemascope_embed::Embedder);
    impl Encoder for Model {
        fn encode(&self, text: &str) -> Vec<f32> {
            self.0.embed(text)
        }
    }
    let dir = std::env::var("SCHEMASCOPE_TEST_EMBED_MODEL").expect(
        "SCHEMASCOPE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 directory (scripts/test installs tests/embed/requirements.txt and sets it)",
    );
    Arc::new(Model(schemascope_embed::Embedder::load(std::path::Path::new(&dir)).unwrap()))
}

#[test]
fn the_real_model_ranks_tables_named_in_other_words() {
    let words_only = index(0.8);
    let semantic = index(0.8).with_encoder(model()).unwrap();
    let first = |index: &SchemaIndex, question: &str| {
        index.search(question, 5).first().map(|c| c.chunk.table.clone())
    };
    for (question, table) in [
        ("which songs last longest", "Track"),
        ("how much money came in from each nation", "Invoice"),
        ("which musicians released the most records", "Artist"),
    ] {
        assert_eq!(first(&semantic, question).as_deref(), Some(table), "{question}");
    }
    // Without the model, words alone miss at least one of them.
    assert_ne!(first(&words_only, "which songs last longest").as_deref(), Some("Track"));
    // A question that means nothing here matches nothing, and gets the full schema: the model
    // ranks, it does not make every chunk relevant.
    for nonsense in ["xyzzy", "weather on mars"] {
        assert!(semantic.search(nonsense, 5).is_empty(), "{nonsense}");
        let retrieval = semantic.retrieve(nonsense, None);
        assert!(matches!(retrieval.strategy, Strategy::Full(_)), "{nonsense}: {retrieval:?}");
    }
    // Each kept chunk says its cosine beside its words' relevance.
    let hits = semantic.search("which songs last longest", 5);
    assert!(hits.iter().all(|c| c.similarity.is_some_and(|s| (-1.0..=1.0).contains(&s))));
    assert!(words_only.search("track names", 5).iter().all(|c| c.similarity.is_none()));
}

/// Chinook's countries and genres, as stored.
fn chinook_values() -> Arc<schemascope_core::value_index::ValueIndex> {
    use schemascope_core::value_index::{ColumnValues, ValueIndex};
    let column = |table: &str, column: &str, values: &[&str]| ColumnValues {
        table: table.into(),
        column: column.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
        complete: true,
    };
    let countries = [
        "Brazil",
        "Germany",
        "Canada",
        "Norway",
        "Czech Republic",
        "Austria",
        "Belgium",
        "Denmark",
        "USA",
        "Portugal",
        "France",
        "Finland",
        "Hungary",
        "Ireland",
        "Italy",
        "Netherlands",
        "Poland",
        "Spain",
        "Sweden",
        "United Kingdom",
        "Australia",
        "Argentina",
        "Chile",
        "India",
    ];
    let genres = [
        "Rock",
        "Jazz",
        "Metal",
        "Alternative & Punk",
        "Rock And Roll",
        "Blues",
        "Latin",
        "Reggae",
        "Pop",
        "Soundtrack",
        "Bossa Nova",
        "Easy Listening",
        "Heavy Metal",
        "R&B/Soul",
        "Electronica/Dance",
        "World",
        "Hip Hop/Rap",
        "Science Fiction",
        "TV Shows",
        "Sci Fi & Fantasy",
        "Drama",
        "Comedy",
        "Alternative",
        "Classical",
        "Opera",
    ];
    let playlists = [
        "Music",
        "Movies",
        "TV Shows",
        "Audiobooks",
        "90’s Music",
        "Music Videos",
        "Brazilian Music",
        "Classical",
        "Grunge",
        "Heavy Metal Classic",
        "On-The-Go 1",
    ];
    Arc::new(ValueIndex::new(vec![
        column("Customer", "Country", &countries),
        column("Invoice", "BillingCountry", &countries),
        column("Genre", "Name", &genres),
        column("Playlist", "Name", &playlists),
    ]))
}

#[test]
fn the_real_model_finds_values_named_by_meaning_beside_those_named_by_words() {
    let semantic = index(0.8).with_values(chinook_values()).with_encoder(model()).unwrap();
    let values = |question: &str| {
        let retrieval = semantic.retrieve(question, None);
        retrieval
            .values
            .iter()
            .map(|v| {
                let how = v.meant_by.as_deref().map_or("words".to_string(), |m| format!("~{m}"));
                format!("{}.{}={} {how}", v.table, v.column, v.value)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        values("Total billed to customers in Deutschland"),
        ["Customer.Country=Germany ~Deutschland", "Invoice.BillingCountry=Germany ~Deutschland"]
    );
    // Spelled out, a value is the words' find, once.
    assert_eq!(
        values("Total billed to customers in Germany"),
        ["Customer.Country=Germany words", "Invoice.BillingCountry=Germany words"]
    );
    // Nothing in the question means a stored value: none is named.
    assert!(values("weather on mars").is_empty());
    assert!(values("how many invoices were there in 2010").is_empty());
    // A phrase whose nearest value shares its words is the words' to name, never a neighbour's
    // by meaning ("latin music" is no `Brazilian Music`, "metal" no `Heavy Metal Classic`).
    for (question, phrase) in [
        ("latin music tracks", "~latin"),
        ("heavy metal tracks", "~heavy metal"),
        ("customers in Germany Germany", "~Germany"),
    ] {
        let found = values(question);
        assert!(!found.iter().any(|v| v.contains(phrase)), "{question}: {found:?}");
    }
    // The context says how the value was found.
    let context = semantic.context("Total billed to customers in Deutschland", None);
    assert!(
        context.text.contains("have 'Germany' (by meaning: \"Deutschland\")"),
        "{}",
        context.text
    );
    // Values attached after encoding have no vectors: named by words only until encoded.
    let reattached = index(0.8).with_encoder(model()).unwrap().with_values(chinook_values());
    assert!(reattached.retrieve("customers in Deutschland", None).values.is_empty());
}
