//! Model directories that must be refused when loaded, each with a message that says what is
//! wrong: weights that compute nothing (zeros, NaN), weights the configuration does not
//! describe, a dtype this encoder does not read, a pooling or an architecture it does not run,
//! and a file that is not a regular file. A tiny BERT (hidden size 4, one layer) written here is
//! the model; the same files with working weights load.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use schemascope_embed::Embedder;

const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhow\nmany\norders\nper\ncustomer\n";

fn config(extra: &str) -> String {
    format!(
        r#"{{"hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 8,
            "max_position_embeddings": 16, "type_vocab_size": 2, "vocab_size": 9, "hidden_act": "gelu"{extra}}}"#
    )
}

/// Every tensor of the tiny model with its shape.
fn tensors() -> Vec<(String, Vec<usize>)> {
    let mut out = vec![
        ("embeddings.word_embeddings.weight".to_string(), vec![9, 4]),
        ("embeddings.position_embeddings.weight".to_string(), vec![16, 4]),
        ("embeddings.token_type_embeddings.weight".to_string(), vec![2, 4]),
        ("embeddings.LayerNorm.weight".to_string(), vec![4]),
        ("embeddings.LayerNorm.bias".to_string(), vec![4]),
    ];
    let layer = "encoder.layer.0";
    for (part, outputs, inputs) in [
        ("attention.self.query", 4, 4),
        ("attention.self.key", 4, 4),
        ("attention.self.value", 4, 4),
        ("attention.output.dense", 4, 4),
        ("intermediate.dense", 8, 4),
        ("output.dense", 4, 8),
    ] {
        out.push((format!("{layer}.{part}.weight"), vec![outputs, inputs]));
        out.push((format!("{layer}.{part}.bias"), vec![outputs]));
    }
    for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
        out.push((format!("{layer}.{norm}.weight"), vec![4]));
        out.push((format!("{layer}.{norm}.bias"), vec![4]));
    }
    out
}

/// A safetensors file of the tiny model, each value from `value(tensor, index)`, `dtype` for
/// the tensor named `odd_dtype`.
fn safetensors(value: impl Fn(&str, usize) -> f32, odd_dtype: Option<&str>) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data: Vec<u8> = Vec::new();
    for (name, shape) in tensors() {
        let count: usize = shape.iter().product();
        let from = data.len();
        let dtype = if odd_dtype == Some(name.as_str()) { "F16" } else { "F32" };
        for i in 0..count {
            if dtype == "F16" {
                data.extend_from_slice(&[0, 0x3c]);
            } else {
                data.extend_from_slice(&value(&name, i).to_le_bytes());
            }
        }
        header.insert(
            name,
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [from, data.len()]}),
        );
    }
    let header = serde_json::to_vec(&header).unwrap();
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(&data);
    out
}

/// Working weights: small varied numbers, unit layer-norm scales.
fn working(name: &str, i: usize) -> f32 {
    if name.ends_with("LayerNorm.weight") {
        1.0
    } else {
        ((i * 7 + name.len()) % 11) as f32 / 10.0 - 0.5
    }
}

fn write_model(dir: &Path, config_text: &str, weights: &[u8], pooling: Option<&str>) {
    std::fs::write(dir.join("config.json"), config_text).unwrap();
    std::fs::write(dir.join("vocab.txt"), VOCAB).unwrap();
    std::fs::write(dir.join("model.safetensors"), weights).unwrap();
    if let Some(pooling) = pooling {
        std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
        std::fs::write(dir.join("1_Pooling/config.json"), pooling).unwrap();
    }
}

fn load_error(config_text: &str, weights: &[u8], pooling: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path(), config_text, weights, pooling);
    Embedder::load(dir.path()).map(|_| ()).unwrap_err().to_string()
}

#[test]
fn a_tiny_working_model_loads_and_embeds() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path(), &config(""), &safetensors(working, None), None);
    let model = Embedder::load(dir.path()).unwrap();
    let v = model.embed("how many orders per customer");
    assert_eq!(v.len(), 4);
    assert!(v.iter().all(|x| x.is_finite()) && v.iter().any(|x| *x != 0.0), "{v:?}");
}

#[test]
fn weights_that_compute_nothing_are_refused() {
    for value in [|_: &str, _: usize| 0.0f32, |_: &str, _: usize| f32::NAN] {
        let error = load_error(&config(""), &safetensors(value, None), None);
        assert!(error.contains("the weights are broken"), "{error}");
    }
}

#[test]
fn a_configuration_that_does_not_describe_the_weights_is_named_as_such() {
    let error = load_error(
        &config("").replace("\"vocab_size\": 9", "\"vocab_size\": 99999999"),
        &safetensors(working, None),
        None,
    );
    assert!(error.contains("tensor `embeddings.word_embeddings.weight` is [9, 4] but config.json makes it [99999999, 4]"), "{error}");
    let error =
        load_error(&config(""), &safetensors(working, Some("embeddings.LayerNorm.weight")), None);
    assert!(error.contains("is F16: only F32 weights are read"), "{error}");
}

#[test]
fn what_this_encoder_does_not_run_is_refused() {
    let weights = safetensors(working, None);
    for (config_text, pooling, expected) in [
        (config(""), Some(r#"{"pooling_mode_max_tokens": true}"#), "a pooling other than"),
        (
            config(""),
            Some(r#"{"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true}"#),
            "a pooling other than",
        ),
        (config(""), Some(r#"{"pooling_mode_cls_token": "yes"}"#), "1_Pooling/config.json"),
        (config(r#", "model_type": "gpt2""#), None, "model type `gpt2` is not supported"),
        (
            config(r#", "position_embedding_type": "relative_key""#),
            None,
            "position embeddings `relative_key`",
        ),
        (config(r#", "layer_norm_eps": -1"#), None, "layer_norm_eps -1"),
    ] {
        let error = load_error(&config_text, &weights, pooling);
        assert!(error.contains(expected), "{expected}: {error}");
    }
    // CLS pooling, asked for alone, is run.
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path(), &config(""), &weights, Some(r#"{"pooling_mode_cls_token": true}"#));
    assert!(Embedder::load(dir.path()).is_ok());
}

#[test]
fn a_missing_file_is_named_where_the_operator_pointed_and_a_fifo_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let error = Embedder::load(dir.path()).unwrap_err().to_string();
    assert!(error.contains(&dir.path().join("config.json").display().to_string()), "{error}");
    assert!(!error.contains("model/config.json"), "{error}");
    let status =
        std::process::Command::new("mkfifo").arg(dir.path().join("config.json")).status().unwrap();
    assert!(status.success());
    let error = Embedder::load(dir.path()).unwrap_err().to_string();
    assert!(error.contains("is not a regular file"), "{error}");
}
