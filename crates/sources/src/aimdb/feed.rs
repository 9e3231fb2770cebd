//! Following an instance's records in the background: connections subscribed to every record
//! (at most [`SUBSCRIPTIONS_PER_CONNECTION`] each, one thread each), handing the values over in
//! batches, and reconnecting (with backoff) when the instance goes away, so a restarted instance
//! is followed again without a restart of ours.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::{AimxClient, DEFAULT_TIMEOUT, Event};
use super::error::AimxError;

/// The longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How often the thread looks at its stop flag while idle.
const TICK: Duration = Duration::from_millis(50);

/// Subscriptions opened on one connection: `aimdb-core` 2.x refuses more than 32 per connection
/// by default (`max_subs_per_connection`), 1.x more than 100.
pub const SUBSCRIPTIONS_PER_CONNECTION: usize = 32;

/// A running feed; dropping it stops its threads.
pub struct Feed {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Feed")
    }
}

impl Feed {
    /// Subscribes to `keys` at `socket`; `on_values` gets the values received, at most once per
    /// `batch`, and `on_error` each failure (after which the feed reconnects).
    pub fn start<V, E>(
        socket: PathBuf,
        keys: Vec<String>,
        batch: Duration,
        on_values: V,
        on_error: E,
    ) -> Self
    where
        V: Fn(Vec<Event>) + Send + Sync + 'static,
        E: Fn(AimxError) + Send + Sync + 'static,
    {
        Self::start_with(socket, keys, batch, on_values, on_error, || {})
    }

    /// As [`Feed::start`]; `on_connected` is called each time a connection has subscribed to
    /// its records (first and after every reconnection), so a caller can tell the data is live
    /// again even when no value has changed since.
    pub fn start_with<V, E, C>(
        socket: PathBuf,
        keys: Vec<String>,
        batch: Duration,
        on_values: V,
        on_error: E,
        on_connected: C,
    ) -> Self
    where
        V: Fn(Vec<Event>) + Send + Sync + 'static,
        E: Fn(AimxError) + Send + Sync + 'static,
        C: Fn() + Send + Sync + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let (on_values, on_error, on_connected) =
            (Arc::new(on_values), Arc::new(on_error), Arc::new(on_connected));
        let threads = keys
            .chunks(SUBSCRIPTIONS_PER_CONNECTION)
            .map(|chunk| {
                let (stop, socket, keys) = (stop.clone(), socket.clone(), chunk.to_vec());
                let (on_values, on_error, on_connected) =
                    (on_values.clone(), on_error.clone(), on_connected.clone());
                std::thread::spawn(move || {
                    let mut backoff = Duration::from_millis(200);
                    while !stop.load(Ordering::SeqCst) {
                        if let Err(error) = follow(
                            &socket,
                            &keys,
                            batch,
                            &stop,
                            &*on_values,
                            &*on_connected,
                            &mut backoff,
                        ) {
                            on_error(error);
                            pause(&stop, backoff);
                            backoff = (backoff * 2).min(MAX_BACKOFF);
                        }
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for thread in self.threads.drain(..) {
            // The feed's own callback may hold the last owner of the feed; a thread cannot join
            // itself, and it ends on its own once it sees the flag. A thread that panicked (in a
            // callback) is resumed here (schemascope_core::sync's policy).
            if thread.thread().id() != std::thread::current().id() {
                schemascope_core::sync::joined_in_drop(thread.join());
            }
        }
    }
}

fn pause(stop: &AtomicBool, total: Duration) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(TICK);
    }
}

/// One connection's life: subscribe, then batch events until stopped or the connection fails.
fn follow<V: Fn(Vec<Event>), C: Fn()>(
    socket: &Path,
    keys: &[String],
    batch: Duration,
    stop: &AtomicBool,
    on_values: &V,
    on_connected: &C,
    backoff: &mut Duration,
) -> Result<(), AimxError> {
    let mut client = AimxClient::connect(socket, DEFAULT_TIMEOUT)?;
    for key in keys {
        client.subscribe(key)?;
    }
    *backoff = Duration::from_millis(200);
    on_connected();
    let mut pending = Vec::new();
    let mut last_flush = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        if let Some(event) = client.next_event(Instant::now() + TICK)? {
            pending.push(event);
        }
        if !pending.is_empty() && last_flush.elapsed() >= batch {
            on_values(std::mem::take(&mut pending));
            last_flush = Instant::now();
        }
    }
    Ok(())
}
