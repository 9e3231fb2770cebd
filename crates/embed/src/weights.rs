//! The tensors of a `.safetensors` file: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the data. Only `F32` tensors are read
//! (what sentence-transformers ships); each is checked against its shape before use.

use std::collections::HashMap;

use serde::Deserialize;

use crate::EmbedError;

/// The largest header read (a model's is a few kilobytes).
const MAX_HEADER_BYTES: u64 = 16 << 20;

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// The `F32` tensors of one file, by name.
pub(crate) struct Weights {
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
    /// Tensors of another dtype, with it: named when one of them is asked for.
    other_dtypes: HashMap<String, String>,
}

impl Weights {
    /// Reads `bytes` (a whole `.safetensors` file).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, EmbedError> {
        let bad = |why: &str| EmbedError::Model(format!("not a safetensors file: {why}"));
        let head: [u8; 8] =
            bytes.get(..8).and_then(|b| b.try_into().ok()).ok_or_else(|| bad("too short"))?;
        let length = u64::from_le_bytes(head);
        if length > MAX_HEADER_BYTES {
            return Err(bad("header too large"));
        }
        let end = 8 + length as usize;
        let header = bytes.get(8..end).ok_or_else(|| bad("header cut short"))?;
        let entries: HashMap<String, serde_json::Value> =
            serde_json::from_slice(header).map_err(|e| bad(&e.to_string()))?;
        let data = &bytes[end..];
        let mut tensors = HashMap::new();
        let mut other_dtypes = HashMap::new();
        for (name, value) in entries {
            if name == "__metadata__" {
                continue;
            }
            let entry: Entry = serde_json::from_value(value).map_err(|e| bad(&e.to_string()))?;
            if entry.dtype != "F32" {
                other_dtypes.insert(name, entry.dtype);
                continue;
            }
            let [from, to] = entry.data_offsets;
            let count: usize = entry.shape.iter().product();
            let raw = data.get(from..to).filter(|raw| raw.len() == count * 4).ok_or_else(|| {
                bad(&format!("tensor `{name}` outside the file or of the wrong size"))
            })?;
            let values =
                raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            tensors.insert(name, (entry.shape, values));
        }
        Ok(Self { tensors, other_dtypes })
    }

    /// The tensor `name` (or `bert.{name}`, as some exports prefix them), which must have
    /// `shape`: the configuration and the weights must agree.
    pub(crate) fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let prefixed = format!("bert.{name}");
        let key = [name, prefixed.as_str()]
            .into_iter()
            .find(|k| self.tensors.contains_key(*k) || self.other_dtypes.contains_key(*k))
            .ok_or_else(|| EmbedError::Model(format!("the model has no tensor `{name}`")))?;
        if let Some(dtype) = self.other_dtypes.get(key) {
            return Err(EmbedError::Model(format!(
                "tensor `{key}` is {dtype}: only F32 weights are read (save the model in float32)"
            )));
        }
        let found = self.tensors.get(key).map(|(shape, _)| shape.clone()).unwrap_or_default();
        if found != shape {
            return Err(EmbedError::Model(format!(
                "tensor `{key}` is {found:?} but config.json makes it {shape:?}: the configuration does not describe these weights"
            )));
        }
        Ok(self.tensors.remove(key).map(|(_, values)| values).unwrap_or_default())
    }
}
