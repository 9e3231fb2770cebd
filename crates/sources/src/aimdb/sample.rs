//! Sampling one record over a bounded window: its current value (`record.get`), then the values
//! produced after it, drained (`record.drain`) every few milliseconds until enough were seen or
//! the window closed. Draining rather than subscribing here, because a drain cursor loses nothing
//! between polls and needs no event demultiplexing.

use std::path::Path;
use std::time::{Duration, Instant};

use super::client::AimxClient;
use super::error::AimxError;
use super::value_text::ValueText;

/// How often the drain cursor is read during the window.
const POLL: Duration = Duration::from_millis(25);

/// What to sample.
#[derive(Debug, Clone, Copy)]
pub struct SampleOptions {
    /// Stop once this many values were seen (at least 1).
    pub samples: usize,
    /// Wait at most this long for more values after the current one.
    pub window: Duration,
    /// The deadline of each request.
    pub timeout: Duration,
}

/// The values seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The current value, when the record has one.
    pub current: Option<ValueText>,
    /// The values produced during the window, oldest first.
    pub drained: Vec<ValueText>,
    /// How long the window stayed open.
    pub waited: Duration,
}

impl Sampled {
    /// Every value, oldest first.
    pub fn values(&self) -> impl Iterator<Item = &ValueText> + '_ {
        self.current.iter().chain(&self.drained)
    }
}

/// Samples record `key` of the instance at `socket`.
pub fn sample(socket: &Path, key: &str, options: SampleOptions) -> Result<Sampled, AimxError> {
    let wanted = options.samples.max(1);
    let mut client = AimxClient::connect(socket, options.timeout)?;
    let current = client.get(key)?;
    let started = Instant::now();
    // The first drain opens the cursor (and returns nothing on a fresh connection).
    let mut drained = client.drain(key, None)?;
    let have = |drained: &Vec<ValueText>| usize::from(current.is_some()) + drained.len();
    while have(&drained) < wanted {
        let left = options.window.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(POLL.min(left));
        let limit = u64::try_from(wanted - have(&drained)).unwrap_or(u64::MAX);
        drained.extend(client.drain(key, Some(limit))?);
    }
    Ok(Sampled { current, drained, waited: started.elapsed() })
}
