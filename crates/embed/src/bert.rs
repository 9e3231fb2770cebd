//! A BERT encoder's forward pass (the architecture of all-MiniLM-L6-v2 and bge-small): token,
//! position and segment embeddings, then per layer self-attention and a GELU feed-forward, each
//! with a residual and a layer norm. One sequence at a time, on the CPU, in `f32`.

use serde::Deserialize;

use crate::EmbedError;
use crate::weights::Weights;

/// `config.json`, the fields the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "two")]
    type_vocab_size: usize,
    vocab_size: usize,
    #[serde(default = "eps")]
    layer_norm_eps: f32,
    #[serde(default = "gelu")]
    hidden_act: String,
    #[serde(default = "absolute")]
    position_embedding_type: String,
    #[serde(default)]
    model_type: Option<String>,
}

fn absolute() -> String {
    "absolute".into()
}

fn two() -> usize {
    2
}
fn eps() -> f32 {
    1e-12
}
fn gelu() -> String {
    "gelu".into()
}

/// A linear layer: `weight` is `out × in`, row-major.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// The encoder with its weights.
pub(crate) struct Bert {
    config: Config,
    words: Vec<f32>,
    positions: Vec<f32>,
    segments: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

impl Bert {
    /// The encoder `config` describes, its tensors taken from `weights` (Hugging Face's names,
    /// with or without a `bert.` prefix).
    pub(crate) fn new(config: Config, weights: &mut Weights) -> Result<Self, EmbedError> {
        let (h, i) = (config.hidden_size, config.intermediate_size);
        if config.num_attention_heads == 0 || h % config.num_attention_heads != 0 {
            return Err(EmbedError::Model(
                "hidden size not divisible by the attention heads".into(),
            ));
        }
        if config.model_type.as_deref().is_some_and(|t| t != "bert") {
            return Err(EmbedError::Model(format!(
                "model type `{}` is not supported: BERT encoders only (all-MiniLM, bge-small, …)",
                config.model_type.as_deref().unwrap_or_default()
            )));
        }
        if config.position_embedding_type != "absolute" {
            return Err(EmbedError::Model(format!(
                "position embeddings `{}` are not supported (absolute only)",
                config.position_embedding_type
            )));
        }
        if !(config.layer_norm_eps.is_finite() && config.layer_norm_eps > 0.0) {
            return Err(EmbedError::Model(format!(
                "layer_norm_eps {} is not a small positive number",
                config.layer_norm_eps
            )));
        }
        if !matches!(config.hidden_act.as_str(), "gelu" | "gelu_new" | "gelu_pytorch_tanh") {
            return Err(EmbedError::Model(format!(
                "activation `{}` is not supported",
                config.hidden_act
            )));
        }
        let mut take = |name: &str, shape: &[usize]| weights.take(name, shape);
        let mut linear =
            |name: &str, outputs: usize, inputs: usize| -> Result<Linear, EmbedError> {
                Ok(Linear {
                    weight: take(&format!("{name}.weight"), &[outputs, inputs])?,
                    bias: take(&format!("{name}.bias"), &[outputs])?,
                    inputs,
                    outputs,
                })
            };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for n in 0..config.num_hidden_layers {
            let at = |part: &str| format!("encoder.layer.{n}.{part}");
            layers.push(Layer {
                query: linear(&at("attention.self.query"), h, h)?,
                key: linear(&at("attention.self.key"), h, h)?,
                value: linear(&at("attention.self.value"), h, h)?,
                attention_out: linear(&at("attention.output.dense"), h, h)?,
                attention_norm: Norm { weight: Vec::new(), bias: Vec::new() },
                intermediate: linear(&at("intermediate.dense"), i, h)?,
                output: linear(&at("output.dense"), h, i)?,
                output_norm: Norm { weight: Vec::new(), bias: Vec::new() },
            });
        }
        let mut take = |name: &str, shape: &[usize]| weights.take(name, shape);
        let mut norm = |name: &str| -> Result<Norm, EmbedError> {
            Ok(Norm {
                weight: take(&format!("{name}.weight"), &[h])?,
                bias: take(&format!("{name}.bias"), &[h])?,
            })
        };
        for (n, layer) in layers.iter_mut().enumerate() {
            layer.attention_norm = norm(&format!("encoder.layer.{n}.attention.output.LayerNorm"))?;
            layer.output_norm = norm(&format!("encoder.layer.{n}.output.LayerNorm"))?;
        }
        let embedding_norm = norm("embeddings.LayerNorm")?;
        Ok(Self {
            words: take("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            positions: take(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            segments: take(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, h],
            )?,
            embedding_norm,
            layers,
            config,
        })
    }

    /// The last layer's hidden states of `ids` (one sequence), `len(ids) × hidden`, row-major.
    pub(crate) fn forward(&self, ids: &[u32]) -> Vec<f32> {
        let h = self.config.hidden_size;
        let t = ids.len().min(self.config.max_position_embeddings);
        let mut x = vec![0f32; t * h];
        for (p, &id) in ids.iter().take(t).enumerate() {
            let id = (id as usize).min(self.config.vocab_size - 1);
            let row = &mut x[p * h..(p + 1) * h];
            for (k, v) in row.iter_mut().enumerate() {
                *v = self.words[id * h + k] + self.positions[p * h + k] + self.segments[k];
            }
        }
        layer_norm(&mut x, h, &self.embedding_norm, self.config.layer_norm_eps);
        for layer in &self.layers {
            let attended = self.attention(&x, t, layer);
            let mut y = linear(&attended, t, &layer.attention_out);
            add(&mut y, &x);
            layer_norm(&mut y, h, &layer.attention_norm, self.config.layer_norm_eps);
            let mut inner = linear(&y, t, &layer.intermediate);
            inner.iter_mut().for_each(|v| *v = gelu_erf(*v));
            let mut out = linear(&inner, t, &layer.output);
            add(&mut out, &y);
            layer_norm(&mut out, h, &layer.output_norm, self.config.layer_norm_eps);
            x = out;
        }
        x
    }

    /// Multi-head self-attention over all `t` positions (no padding: one sequence).
    fn attention(&self, x: &[f32], t: usize, layer: &Layer) -> Vec<f32> {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let (q, k, v) =
            (linear(x, t, &layer.query), linear(x, t, &layer.key), linear(x, t, &layer.value));
        let scale = 1.0 / (d as f32).sqrt();
        let mut out = vec![0f32; t * h];
        let mut scores = vec![0f32; t];
        for head in 0..heads {
            let at = head * d;
            for i in 0..t {
                let qi = &q[i * h + at..i * h + at + d];
                let mut max = f32::NEG_INFINITY;
                for (j, s) in scores.iter_mut().enumerate() {
                    let kj = &k[j * h + at..j * h + at + d];
                    *s = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale;
                    max = max.max(*s);
                }
                let mut total = 0.0;
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    total += *s;
                }
                let row = &mut out[i * h + at..i * h + at + d];
                for (j, s) in scores.iter().enumerate() {
                    let weight = s / total;
                    let vj = &v[j * h + at..j * h + at + d];
                    for (o, value) in row.iter_mut().zip(vj) {
                        *o += weight * value;
                    }
                }
            }
        }
        out
    }
}

/// `x` (`t × inputs`) through `layer`: `x Wᵀ + b`.
fn linear(x: &[f32], t: usize, layer: &Linear) -> Vec<f32> {
    let (i, o) = (layer.inputs, layer.outputs);
    let mut y: Vec<f32> = (0..t).flat_map(|_| layer.bias.iter().copied()).collect();
    debug_assert!(x.len() == t * i && layer.weight.len() == o * i);
    if x.len() != t * i || layer.weight.len() != o * i {
        return y;
    }
    // SAFETY: `x` holds `t × i` values read with row stride `i`, the weight `o × i` values read
    // transposed (row stride 1, column stride `i`), and `y` holds `t × o` values written with row
    // stride `o` — each checked above; the three do not overlap (`y` is a new vector).
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            t,
            i,
            o,
            1.0,
            x.as_ptr(),
            i as isize,
            1,
            layer.weight.as_ptr(),
            1,
            i as isize,
            1.0,
            y.as_mut_ptr(),
            o as isize,
            1,
        );
    }
    y
}

fn add(y: &mut [f32], x: &[f32]) {
    for (a, b) in y.iter_mut().zip(x) {
        *a += b;
    }
}

fn layer_norm(x: &mut [f32], h: usize, norm: &Norm, eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for (k, v) in row.iter_mut().enumerate() {
            *v = (*v - mean) * inv * norm.weight[k] + norm.bias[k];
        }
    }
}

/// GELU as BERT defines it, `x·Φ(x)` with the exact error function.
fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(f64::from(x) / std::f64::consts::SQRT_2) as f32)
}

/// The error function to within 1.2e-7 (Numerical Recipes' `erfc` by Chebyshev fit).
fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let erfc = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { 1.0 - erfc } else { erfc - 1.0 }
}

#[cfg(test)]
mod tests {
    use super::erf;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in
            [(0.0, 0.0), (0.5, 0.520_499_877_8), (1.0, 0.842_700_792_9), (-2.0, -0.995_322_265_0)]
        {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {}", erf(x));
        }
    }
}
