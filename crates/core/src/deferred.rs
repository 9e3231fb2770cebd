//! Profiles computed after their collection exists (a database table's, scanned inside its
//! database): where one stands, what a computation has finished so far, and why it stopped.
//!
//! A table's profile can take minutes; until it is ready, what is shown is what is known — the
//! catalog, the row estimate and the columns already profiled — never a stand-in's zeros.

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::catalog::TableInfo;
use crate::profile::CollectionProfile;

/// Where a collection's profile stands ([`crate::Collection::profile_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ProfileState {
    /// Computed.
    Ready,
    /// A computation is under way (a database table's scan).
    Computing,
    /// Not computed yet: the first tool that needs it starts it.
    NotStarted,
    /// The last attempt failed for a cause that may pass (or was stopped); the next tool that
    /// needs it tries again.
    Retrying,
    /// The last attempt failed for a cause that would only repeat (a statement timed out, the
    /// role may not read the table): what was finished before is kept, and the error says why.
    Failed,
}

impl ProfileState {
    /// The state in a few words, for messages.
    pub fn words(self) -> &'static str {
        match self {
            Self::Ready => "profiled",
            Self::Computing => "profile being computed",
            Self::NotStarted => "not profiled yet",
            Self::Retrying => "profile to be retried",
            Self::Failed => "profile failed",
        }
    }
}

/// Computes a database table's profile when it is first needed. Sources implement it (it scans
/// the table inside its database); the core only decides when to call it.
pub trait DeferredProfile: Send + Sync + fmt::Debug {
    /// The profile of `table`, or why it could not be computed; what is finished on the way is
    /// reported to `progress`, so a computation that takes long (or stops) still shows it.
    fn compute(
        &self,
        table: &TableInfo,
        progress: &ProfileProgress,
    ) -> Result<CollectionProfile, ProfileFailure>;
}

/// Why a deferred profile could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileFailure {
    /// What went wrong, naming the table and what to try.
    pub message: String,
    /// True when the cause may pass by itself (the database was unreachable): the next use tries
    /// again instead of keeping the partial profile for the collection's lifetime.
    pub transient: bool,
}

/// What a computation of a deferred profile has finished, shared with the callers that show it
/// while it runs.
#[derive(Debug, Default)]
pub struct ProfileProgress {
    inner: Mutex<ProgressInner>,
}

#[derive(Debug, Default, Clone)]
struct ProgressInner {
    partial: Option<Arc<CollectionProfile>>,
    step: Option<String>,
}

/// A copy of a computation's progress at one moment.
#[derive(Debug, Clone, Default)]
pub struct ProgressSnapshot {
    /// The columns profiled so far, with every figure final, and the exact row count once the
    /// first scan has counted them; `None` before the first scan finished.
    pub partial: Option<Arc<CollectionProfile>>,
    /// What is being computed now ("distinct values and quartiles of `measure`").
    pub step: Option<String>,
}

impl ProfileProgress {
    /// Records the columns finished so far (each with all its figures final) and the exact row
    /// count.
    pub fn finished(&self, partial: CollectionProfile) {
        crate::sync::lock(&self.inner).partial = Some(Arc::new(partial));
    }

    /// Records what is being computed now.
    pub fn step(&self, step: impl Into<String>) {
        crate::sync::lock(&self.inner).step = Some(step.into());
    }

    /// Forgets what is under way (the computation ended); what was finished stays.
    pub(crate) fn ended(&self) {
        crate::sync::lock(&self.inner).step = None;
    }

    /// Starts over (a new attempt).
    pub(crate) fn reset(&self) {
        *crate::sync::lock(&self.inner) = ProgressInner::default();
    }

    /// The progress now.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let inner = crate::sync::lock(&self.inner).clone();
        ProgressSnapshot { partial: inner.partial, step: inner.step }
    }
}
