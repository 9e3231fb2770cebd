//! Sources that failed to load while serving: listed with their error, retried with backoff,
//! and served (subscribers told) once they load.
//!
//! A server does not refuse to start because one of its sources is missing, unreadable or
//! unreachable: it serves the others (or none) and keeps trying, because the file may appear,
//! the database may come back and the instance may be restarted. One-shot commands load with
//! [`Sources::load`] and still fail on the first bad source.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use schemascope_sources::{Progress, ReadMode, SourceSpec};
use serde_json::{Value, json};

use schemascope_core::sync::lock;

use super::Sources;
use crate::result::ToolError;

/// The first retry of a failed source waits this long; each failure doubles it.
pub const RETRY_FIRST: Duration = Duration::from_secs(1);

/// The longest wait between two retries of a failed source.
pub const RETRY_MAX: Duration = Duration::from_secs(60);

/// How often the retry thread looks for a failed source that is due.
const RETRY_TICK: Duration = Duration::from_millis(100);

/// A source being served that could not be loaded (yet).
#[derive(Debug, Clone)]
pub struct FailedSource {
    /// What to load.
    pub spec: SourceSpec,
    /// Why the last attempt failed.
    pub error: String,
    /// The machine-readable kind of that failure (as tool errors name it).
    pub kind: &'static str,
    /// When the source first failed.
    pub since: DateTime<Utc>,
    /// Attempts so far (the first load included).
    pub attempts: u32,
    /// When it is tried next.
    pub next_retry: Instant,
}

impl FailedSource {
    /// Seconds until the next attempt (0 when it is due).
    pub fn retry_in(&self) -> f64 {
        let left = self.next_retry.saturating_duration_since(Instant::now()).as_secs_f64();
        (left * 10.0).ceil() / 10.0
    }

    /// The entry `list_sources` shows.
    pub fn describe(&self) -> Value {
        json!({
            "name": self.spec.name,
            "description": self.spec.description,
            "uri": self.spec.display_text(),
            "status": "failed",
            "error": self.error,
            "errorKind": self.kind,
            "failingSince": self.since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "attempts": self.attempts,
            "nextRetryInSeconds": self.retry_in(),
        })
    }

    /// The error a tool call on this source gets.
    pub fn tool_error(&self) -> ToolError {
        ToolError::SourceUnavailable(format!(
            "Source `{}` is not available: it failed to load ({}); {} attempt(s) since {}, next retry in {:.1} s.",
            self.spec.name,
            self.error,
            self.attempts,
            self.since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            self.retry_in()
        ))
    }
}

/// The wait after `attempts` failed attempts: [`RETRY_FIRST`] doubled each time, at most [`RETRY_MAX`].
fn backoff(first: Duration, attempts: u32) -> Duration {
    let doublings = attempts.saturating_sub(1).min(16);
    first.saturating_mul(1 << doublings).min(RETRY_MAX.max(first))
}

impl Sources {
    /// Loads every spec for serving: a source that fails is listed as failed and retried with
    /// backoff (see [`FailedSource`]) instead of failing the whole server. Returns the sources
    /// that failed; only a repeated name is an error.
    pub fn load_serving(
        self: &Arc<Self>,
        specs: &[SourceSpec],
        progress: &dyn Progress,
    ) -> Result<Vec<FailedSource>, ToolError> {
        let mut failures = Vec::new();
        for spec in specs {
            if self.names().contains(&spec.name) || lock(&self.failed).contains_key(&spec.name) {
                return Err(ToolError::InvalidParams(format!(
                    "two sources are named `{}`; name them apart with NAME=PATH",
                    spec.name
                )));
            }
            match self.load_spec(spec, progress, ReadMode::COPY) {
                Ok(source) => self.insert(source),
                Err(error) => {
                    let error = ToolError::from(error);
                    let failed = FailedSource {
                        spec: spec.clone(),
                        kind: error.kind(),
                        error: error.to_string(),
                        since: Utc::now(),
                        attempts: 1,
                        next_retry: Instant::now() + self.retry_first(),
                    };
                    lock(&self.failed).insert(spec.name.clone(), failed.clone());
                    failures.push(failed);
                }
            }
        }
        if !failures.is_empty() {
            self.start_retrying();
        }
        Ok(failures)
    }

    /// Sources that failed to load and are being retried, by name.
    pub fn failed_sources(&self) -> Vec<FailedSource> {
        lock(&self.failed).values().cloned().collect()
    }

    /// The failure of source `name`, if it is one that failed to load.
    pub fn failed_source(&self, name: &str) -> Option<FailedSource> {
        lock(&self.failed).get(name).cloned()
    }

    /// Sets the first retry wait (tests use a short one).
    pub fn set_retry_first(&self, first: Duration) {
        self.retry_first_ms
            .store(u64::try_from(first.as_millis()).unwrap_or(u64::MAX).max(1), Ordering::Relaxed);
    }

    fn retry_first(&self) -> Duration {
        Duration::from_millis(self.retry_first_ms.load(Ordering::Relaxed))
    }

    /// Tries to load failed source `name` now. On success it is served, subscribers are told
    /// (the list of sources changed) and the hooks hear of it; on failure the error
    /// and the next retry are updated.
    pub(crate) fn retry_failed(self: &Arc<Self>, name: &str) -> Result<(), ToolError> {
        let Some(failed) = self.failed_source(name) else { return Ok(()) };
        match self.load_spec(&failed.spec, &schemascope_sources::NoProgress, ReadMode::COPY) {
            Ok(source) => {
                // Removed first, so nobody sees the source both failed and served.
                lock(&self.failed).remove(name);
                // Served like any other change: a live source is followed by its feed's hook.
                self.insert(source);
                tracing::info!(
                    source = name,
                    attempts = failed.attempts + 1,
                    "a source that failed to load is now served"
                );
                Ok(())
            }
            Err(error) => {
                let error = ToolError::from(error);
                if let Some(entry) = lock(&self.failed).get_mut(name) {
                    entry.attempts += 1;
                    entry.error = error.to_string();
                    entry.kind = error.kind();
                    entry.next_retry = Instant::now() + backoff(self.retry_first(), entry.attempts);
                }
                Err(error)
            }
        }
    }

    /// Schedules another reload of source `name`, whose reload just failed, after the backoff
    /// its failed reloads so far call for.
    pub(super) fn retry_reload_later(self: &Arc<Self>, name: &str) {
        {
            let mut retries = lock(&self.reload_retries);
            let (attempts, next) = retries.entry(name.to_string()).or_insert((0, Instant::now()));
            *attempts += 1;
            *next = Instant::now() + backoff(self.retry_first(), *attempts);
        }
        self.start_retrying();
    }

    /// Starts the thread that retries failed sources and failed reloads when due (once; it ends
    /// when the sources are dropped).
    fn start_retrying(self: &Arc<Self>) {
        if self.retrying.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(self);
        let spawned = std::thread::Builder::new().name("schemascope-retry".into()).spawn(move || {
            loop {
                std::thread::sleep(RETRY_TICK);
                let Some(sources) = weak.upgrade() else { return };
                let due: Vec<String> =
                    lock(&sources.failed).iter().filter(|(_, f)| f.next_retry <= Instant::now()).map(|(n, _)| n.clone()).collect();
                for name in due {
                    if let Err(error) = sources.retry_failed(&name) {
                        tracing::debug!(source = name, %error, "a failed source still does not load");
                    }
                }
                let reloads: Vec<String> = lock(&sources.reload_retries)
                    .iter()
                    .filter(|(_, (_, next))| *next <= Instant::now())
                    .map(|(n, _)| n.clone())
                    .collect();
                for name in reloads {
                    // A source removed meanwhile is not reloaded: its entry goes.
                    if sources.get(Some(&name)).is_err() {
                        lock(&sources.reload_retries).remove(&name);
                    } else if let Err(error) = sources.reload(&name) {
                        tracing::debug!(source = name, %error, "a failed reload still fails");
                    }
                }
            }
        });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start retrying failed sources");
            self.retrying.store(false, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_first_wait_up_to_the_cap() {
        let first = Duration::from_secs(1);
        let waits: Vec<u64> = (1..=9).map(|n| backoff(first, n).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(first, u32::MAX), RETRY_MAX);
        assert_eq!(backoff(Duration::from_millis(50), 2), Duration::from_millis(100));
    }
}
