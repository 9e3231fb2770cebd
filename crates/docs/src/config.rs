//! Retrieval settings: defaults from the design (top-K 5, relevance 0.3, 10 tables), overridable by
//! a config file (serde), the seed's environment variables, and CLI flags (the caller's).

use serde::{Deserialize, Serialize};

use crate::bm25::{Bm25Params, Scoring};

/// Environment variable: `true`/`false`, retrieval on or off.
pub const ENV_ENABLED: &str = "ENABLE_DOC_RETRIEVAL";
/// Environment variable: chunks to retrieve.
pub const ENV_TOP_K: &str = "DOC_RETRIEVAL_TOP_K";
/// Environment variable: minimum normalised relevance of a kept chunk, 0–1.
pub const ENV_RELEVANCE_THRESHOLD: &str = "DOC_RELEVANCE_THRESHOLD";
/// Environment variable: schemas with fewer tables get the full schema.
pub const ENV_TABLE_THRESHOLD: &str = "RETRIEVAL_TABLE_THRESHOLD";

/// A bad setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// An environment variable whose value does not parse or is out of range.
    #[error("environment variable {variable}={value:?} is invalid: {expected}")]
    InvalidEnv {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A setting out of its range (from a file or a flag).
    #[error("retrieval setting {key} = {value} is invalid: {expected}")]
    OutOfRange {
        /// The setting.
        key: &'static str,
        /// Its value.
        value: f64,
        /// What was expected.
        expected: &'static str,
    },
}

/// How retrieval behaves. `Default` is the design's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case", deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Retrieval on; when off every question gets the full schema.
    pub enabled: bool,
    /// Chunks to retrieve (5).
    pub top_k: usize,
    /// Chunks whose relevance (score over the question's weight, see `SchemaIndex::retrieve`)
    /// is below this are dropped (0.2).
    pub relevance_threshold: f64,
    /// Schemas with fewer tables than this get the full schema (10).
    pub table_threshold: usize,
    /// Questions with fewer content terms (after stopwords) get the full schema (1).
    pub min_question_terms: usize,
    /// When the retrieval's confidence (the share of the question's known terms the kept chunks
    /// cover, each weighted by its specificity, see `SchemaIndex::retrieve`) is below this,
    /// retrieval is weak and the full schema is used instead (0.3).
    pub min_confidence: f64,
    /// A focused context taking this share of the full schema's tokens or more gets the full
    /// schema instead (0.8): leaving tables out must save at least a fifth.
    pub max_focused_share: f64,
    /// At most this many of the top-K chunks come from one table (2), so that five column chunks
    /// of one wide table cannot crowd out every other table.
    pub max_chunks_per_table: usize,
    /// BM25 term-frequency saturation (1.5).
    pub k1: f64,
    /// BM25 length normalisation (0.75).
    pub b: f64,
    /// IDF flavour.
    pub scoring: Scoring,
    /// With an embedding model: what the cosine of a chunk with the question adds to its score
    /// for ranking, on the scale of a chunk matching every term of the question (6: a cosine of
    /// 1 counts six times that; chosen on the tuning halves of Spider and BIRD).
    pub semantic_weight: f64,
    /// With an embedding model: a chunk whose words' relevance is below `relevance_threshold`
    /// is kept when its cosine with the question reaches this (0.2); the best kept cosine above
    /// it, rescaled to 0–1, counts as confidence.
    pub semantic_floor: f64,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            top_k: 5,
            relevance_threshold: 0.2,
            table_threshold: 10,
            min_question_terms: 1,
            min_confidence: 0.3,
            max_focused_share: 0.8,
            max_chunks_per_table: 1,
            k1: 1.5,
            b: 0.75,
            scoring: Scoring::Standard,
            semantic_weight: 6.0,
            semantic_floor: 0.2,
        }
    }
}

impl RetrievalConfig {
    /// The BM25 parameters.
    pub fn bm25(&self) -> Bm25Params {
        Bm25Params { k1: self.k1, b: self.b, scoring: self.scoring }
    }

    /// Refuses settings outside their range (non-finite numbers among them), which would
    /// otherwise switch a part of the ranking off silently or make every score meaningless.
    pub fn check(&self) -> Result<(), ConfigError> {
        let ranges: [(&'static str, f64, bool, &'static str); 7] = [
            (
                "relevance_threshold",
                self.relevance_threshold,
                (0.0..=1.0).contains(&self.relevance_threshold),
                "between 0 and 1",
            ),
            (
                "min_confidence",
                self.min_confidence,
                (0.0..=1.0).contains(&self.min_confidence),
                "between 0 and 1",
            ),
            (
                "max_focused_share",
                self.max_focused_share,
                (0.0..=1.0).contains(&self.max_focused_share),
                "between 0 and 1",
            ),
            ("k1", self.k1, self.k1.is_finite() && self.k1 >= 0.0, "a finite number, 0 or more"),
            ("b", self.b, (0.0..=1.0).contains(&self.b), "between 0 and 1"),
            (
                "semantic_weight",
                self.semantic_weight,
                (0.0..=1000.0).contains(&self.semantic_weight),
                "between 0 and 1000",
            ),
            (
                "semantic_floor",
                self.semantic_floor,
                (0.0..1.0).contains(&self.semantic_floor),
                "0 or more and below 1",
            ),
        ];
        match ranges.into_iter().find(|(_, _, ok, _)| !ok) {
            Some((key, value, _, expected)) => {
                Err(ConfigError::OutOfRange { key, value, expected })
            }
            None => Ok(()),
        }
    }

    /// `self` with the seed's environment variables applied, read through `lookup` (pass
    /// `|k| std::env::var(k).ok()`; tests pass a map). Unset variables leave values as they are.
    pub fn from_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        if let Some(value) = lookup(ENV_ENABLED) {
            self.enabled = match value.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => true,
                "false" | "0" | "no" | "off" => false,
                _ => return Err(invalid(ENV_ENABLED, value, "true or false")),
            };
        }
        if let Some(value) = lookup(ENV_TOP_K) {
            self.top_k = match value.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => return Err(invalid(ENV_TOP_K, value, "a positive integer")),
            };
        }
        if let Some(value) = lookup(ENV_RELEVANCE_THRESHOLD) {
            self.relevance_threshold = match value.trim().parse::<f64>() {
                Ok(x) if (0.0..=1.0).contains(&x) => x,
                _ => return Err(invalid(ENV_RELEVANCE_THRESHOLD, value, "a number from 0 to 1")),
            };
        }
        if let Some(value) = lookup(ENV_TABLE_THRESHOLD) {
            self.table_threshold = match value.trim().parse::<usize>() {
                Ok(n) => n,
                _ => return Err(invalid(ENV_TABLE_THRESHOLD, value, "a non-negative integer")),
            };
        }
        Ok(self)
    }
}

fn invalid(variable: &'static str, value: String, expected: &'static str) -> ConfigError {
    ConfigError::InvalidEnv { variable, value, expected }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_defaults_and_bad_values_name_the_variable() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let config = RetrievalConfig::default()
            .from_env(env(&[
                (ENV_ENABLED, "false"),
                (ENV_TOP_K, "8"),
                (ENV_RELEVANCE_THRESHOLD, "0.5"),
                (ENV_TABLE_THRESHOLD, "20"),
            ]))
            .expect("valid");
        assert!(!config.enabled);
        assert_eq!(
            (config.top_k, config.relevance_threshold, config.table_threshold),
            (8, 0.5, 20)
        );
        let error = RetrievalConfig::default().from_env(env(&[(ENV_TOP_K, "five")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "environment variable DOC_RETRIEVAL_TOP_K=\"five\" is invalid: a positive integer"
        );
        assert!(
            RetrievalConfig::default().from_env(env(&[(ENV_RELEVANCE_THRESHOLD, "1.5")])).is_err()
        );
        assert!(RetrievalConfig::default().from_env(env(&[(ENV_ENABLED, "maybe")])).is_err());
        assert!(RetrievalConfig::default().check().is_ok());
        for bad in [
            RetrievalConfig { semantic_weight: f64::INFINITY, ..RetrievalConfig::default() },
            RetrievalConfig { semantic_weight: -6.0, ..RetrievalConfig::default() },
            RetrievalConfig { semantic_weight: f64::NAN, ..RetrievalConfig::default() },
            RetrievalConfig { semantic_floor: 1.0, ..RetrievalConfig::default() },
            RetrievalConfig { semantic_floor: -0.1, ..RetrievalConfig::default() },
            RetrievalConfig { k1: f64::NAN, ..RetrievalConfig::default() },
            RetrievalConfig { min_confidence: 2.0, ..RetrievalConfig::default() },
        ] {
            let error = bad.check().unwrap_err().to_string();
            assert!(error.starts_with("retrieval setting "), "{error}");
        }
    }

    #[test]
    fn config_file_fields_are_optional() {
        let config: RetrievalConfig =
            serde_json::from_str(r#"{"top_k": 3, "scoring": {"mode": "okapi", "epsilon": 0.25}}"#)
                .expect("parses");
        assert_eq!(config.top_k, 3);
        assert_eq!(config.scoring, Scoring::OKAPI);
        assert_eq!(config.table_threshold, 10);
    }
}
