//! A server's allow-list, as its catalog gave it, shared by the database's connections and read
//! again when old: functions, domains and casts created after it was read are judged by the
//! catalog within [`MAX_AGE`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemascope_core::sync::lock;
use schemascope_query::Callables;

/// How long an allow-list is used before it is read again.
const MAX_AGE: Duration = Duration::from_secs(60);

/// The allow-list a database's connections share, and when it was read.
#[derive(Debug, Default)]
pub(crate) struct SharedAllowList(Mutex<Option<(Arc<Callables>, Instant)>>);

impl SharedAllowList {
    /// The list, unless none was read or it is older than [`MAX_AGE`].
    pub(crate) fn current(&self) -> Option<Arc<Callables>> {
        lock(&self.0)
            .as_ref()
            .filter(|(_, read)| read.elapsed() < MAX_AGE)
            .map(|(callables, _)| Arc::clone(callables))
    }

    /// Shares `read`, read from the catalog now.
    pub(crate) fn store(&self, read: Callables) -> Arc<Callables> {
        let read = Arc::new(read);
        *lock(&self.0) = Some((Arc::clone(&read), Instant::now()));
        read
    }
}
