//! Pipeline metrics in Prometheus text format (`/metrics`): node durations, retries per node,
//! error types, success and first-try success, schema cache hits.

use schemascope_core::sync::lock;
use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry as MetricRegistry;
use schemascope_agent::graph::{AskOutcome, Phase};

type Labels = Vec<(String, String)>;

/// The metrics of every `ask` run.
pub struct Metrics {
    registry: Mutex<MetricRegistry>,
    node_seconds: Family<Labels, Histogram>,
    node_retries: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    asks: Family<Labels, Counter>,
    schema_cache: Family<Labels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn histogram() -> Histogram {
    // 0.1 ms to about 100 s.
    Histogram::new(exponential_buckets(0.000_1, 4.0, 11))
}

impl Default for Metrics {
    fn default() -> Self {
        let node_seconds =
            Family::<Labels, Histogram>::new_with_constructor(histogram as fn() -> Histogram);
        let node_retries = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let asks = Family::<Labels, Counter>::default();
        let schema_cache = Family::<Labels, Counter>::default();
        let mut registry = MetricRegistry::with_prefix("schemascope");
        registry.register(
            "ask_node_duration_seconds",
            "Time spent in each node of the ask pipeline",
            node_seconds.clone(),
        );
        registry.register(
            "ask_node_retries",
            "Times a node ran again within one question (retries)",
            node_retries.clone(),
        );
        registry.register(
            "ask_errors",
            "Failures by node and class (validation, syntax, timeout, auth, resource, llm, schema)",
            errors.clone(),
        );
        registry.register(
            "asks",
            "Questions answered, by outcome: success (first_try or retried) or failure",
            asks.clone(),
        );
        registry.register(
            "schema_cache",
            "Schema lookups of the ask pipeline, by result (hit or miss)",
            schema_cache.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            node_seconds,
            node_retries,
            errors,
            asks,
            schema_cache,
        }
    }
}

fn label(key: &str, value: &str) -> Labels {
    vec![(key.to_string(), value.to_string())]
}

impl Metrics {
    /// Records one finished run.
    pub fn record(&self, outcome: &AskOutcome) {
        let mut runs: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
        for event in outcome.trace.iter().filter(|e| e.phase == Phase::Exit) {
            let node = event.node.name();
            self.node_seconds
                .get_or_create(&label("node", node))
                .observe(event.duration_ms.unwrap_or(0.0) / 1000.0);
            let count = runs.entry(node).or_default();
            *count += 1;
            if *count > 1 {
                self.node_retries.get_or_create(&label("node", node)).inc();
            }
            if event.error.is_some() {
                let class = match event.node.name() {
                    "validate_query" => "validation".to_string(),
                    "execute_query" => outcome
                        .state
                        .execution_errors
                        .last()
                        .map_or_else(|| "execution".to_string(), |f| f.class.clone()),
                    "get_schema" => "schema".to_string(),
                    _ => "llm".to_string(),
                };
                self.errors
                    .get_or_create(&vec![
                        ("node".to_string(), node.to_string()),
                        ("class".to_string(), class),
                    ])
                    .inc();
            }
        }
        let result = match (outcome.success, outcome.state.build_attempts) {
            (true, 1) => "first_try",
            (true, _) => "retried",
            (false, _) => "failure",
        };
        self.asks.get_or_create(&label("result", result)).inc();
        if let Some(schema) = &outcome.state.schema {
            self.schema_cache
                .get_or_create(&label("result", if schema.cached { "hit" } else { "miss" }))
                .inc();
        }
    }

    /// Everything, in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        {
            let registry = lock(&self.registry);
            let _ = encode(&mut text, &registry);
        }
        text
    }
}
