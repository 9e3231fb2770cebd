//! Following an instance's records in the background: connections subscribed to every record
//! (at most [`SUBSCRIPTIONS_PER_CONNECTION`] each, one thread each), handing the values over in
//! batches, and reconnecting (with backoff) when the instance goes away, so a restarted instance
//! is followed again without a restart of ours. A flooding instance is read no faster than the
//! byte-rate bound (the socket then fills and the instance's own queues take the excess), and
//! what waits for the next batch stays within the per-source byte bound.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::{AimxClient, DEFAULT_TIMEOUT, Event};
use super::error::AimxError;
use super::limits::limits;
use schemascope_core::sync::lock;

/// The longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How often the thread looks at its stop flag while idle.
const TICK: Duration = Duration::from_millis(50);

/// Subscriptions opened on one connection: `aimdb-core` 2.x refuses more than 32 per connection
/// by default (`max_subs_per_connection`), 1.x more than 100.
pub const SUBSCRIPTIONS_PER_CONNECTION: usize = 32;

/// What a feed says besides values and failures.
#[derive(Debug)]
pub enum FeedNotice {
    /// The instance sent more than the byte-rate bound allows: reading was paused for a while.
    Throttled {
        /// The bound, in bytes per second (`--aimdb-bytes-per-second`).
        bytes_per_second: u64,
    },
    /// A value or line was refused or dropped (too large, or more waiting than the bound).
    Refused(AimxError),
}

/// The byte-rate bound shared by a source's connections: a token bucket holding at most one
/// second of the rate.
struct Bucket {
    rate: f64,
    allowance: f64,
    last: Instant,
}

impl Bucket {
    /// Takes `bytes`; returns how long to pause reading before the debt is repaid.
    fn take(&mut self, bytes: u64) -> Duration {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * self.rate;
        self.allowance = (self.allowance + refill).min(self.rate) - bytes as f64;
        self.last = now;
        if self.allowance >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.allowance / self.rate)
        }
    }
}

/// What a feed calls back.
struct Handlers<V, E, C, N> {
    on_values: V,
    on_error: E,
    on_connected: C,
    on_notice: N,
}

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
        Self::start_with(socket, keys, batch, on_values, on_error, || {}, |_| {})
    }

    /// As [`Feed::start`]; `on_connected` is called each time a connection has subscribed to
    /// its records (first and after every reconnection), so a caller can tell the data is live
    /// again even when no value has changed since; `on_notice` hears of throttling and of
    /// values refused for their size.
    pub fn start_with<V, E, C, N>(
        socket: PathBuf,
        keys: Vec<String>,
        batch: Duration,
        on_values: V,
        on_error: E,
        on_connected: C,
        on_notice: N,
    ) -> Self
    where
        V: Fn(Vec<Event>) + Send + Sync + 'static,
        E: Fn(AimxError) + Send + Sync + 'static,
        C: Fn() + Send + Sync + 'static,
        N: Fn(FeedNotice) + Send + Sync + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let handlers = Arc::new(Handlers { on_values, on_error, on_connected, on_notice });
        let rate = limits().bytes_per_second as f64;
        let bucket = Arc::new(Mutex::new(Bucket { rate, allowance: rate, last: Instant::now() }));
        let threads = keys
            .chunks(SUBSCRIPTIONS_PER_CONNECTION)
            .map(|chunk| {
                let (stop, socket, keys) = (stop.clone(), socket.clone(), chunk.to_vec());
                let (handlers, bucket) = (handlers.clone(), bucket.clone());
                std::thread::spawn(move || {
                    let mut backoff = Duration::from_millis(200);
                    while !stop.load(Ordering::SeqCst) {
                        let link = Link { socket: &socket, keys: &keys, batch, stop: &stop };
                        if let Err(error) = follow(&link, &*handlers, &bucket, &mut backoff) {
                            (handlers.on_error)(error);
                            pause_for(&stop, backoff);
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

fn pause_for(stop: &AtomicBool, total: Duration) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(TICK);
    }
}

/// What one connection follows.
struct Link<'a> {
    socket: &'a Path,
    keys: &'a [String],
    batch: Duration,
    stop: &'a AtomicBool,
}

/// One connection's life: subscribe, then batch events until stopped or the connection fails.
/// Every byte read is charged to the source's rate bound, and reading pauses while it is over;
/// what waits for the batch is held within the per-source byte bound, the oldest dropped first.
fn follow<V, E, C, N>(
    link: &Link<'_>,
    handlers: &Handlers<V, E, C, N>,
    bucket: &Mutex<Bucket>,
    backoff: &mut Duration,
) -> Result<(), AimxError>
where
    V: Fn(Vec<Event>),
    C: Fn(),
    N: Fn(FeedNotice),
{
    let mut client = AimxClient::connect(link.socket, DEFAULT_TIMEOUT)?;
    for key in link.keys {
        client.subscribe(key)?;
    }
    *backoff = Duration::from_millis(200);
    (handlers.on_connected)();
    let bound = limits().source_bytes;
    let mut pending: VecDeque<Event> = VecDeque::new();
    let mut pending_bytes = 0u64;
    let mut charged = client.bytes_read();
    let mut last_flush = Instant::now();
    while !link.stop.load(Ordering::SeqCst) {
        if let Some(event) = client.next_event(Instant::now() + TICK)? {
            pending_bytes += event.data.len() as u64;
            pending.push_back(event);
            while pending_bytes > bound
                && let Some(old) = pending.pop_front()
            {
                pending_bytes -= old.data.len() as u64;
                (handlers.on_notice)(FeedNotice::Refused(AimxError::QueueFull {
                    socket: link.socket.to_path_buf(),
                    record: old.key,
                    limit: bound,
                }));
            }
        }
        for refusal in client.take_refusals() {
            (handlers.on_notice)(FeedNotice::Refused(refusal));
        }
        let read = client.bytes_read();
        let pause = lock(bucket).take(read - charged);
        charged = read;
        if !pause.is_zero() {
            let bytes_per_second = limits().bytes_per_second;
            (handlers.on_notice)(FeedNotice::Throttled { bytes_per_second });
            pause_for(link.stop, pause);
        }
        if !pending.is_empty() && last_flush.elapsed() >= link.batch {
            pending_bytes = 0;
            (handlers.on_values)(std::mem::take(&mut pending).into());
            last_flush = Instant::now();
        }
    }
    Ok(())
}
