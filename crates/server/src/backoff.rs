//! Slowing down token guessing: each wrong token from a client address is answered
//! only after a delay that doubles with every failure (250 ms, 500 ms, … 8 s), and failures from
//! one address are answered one slot after another, so opening more connections does not guess
//! faster. A correct token is never delayed, whatever failed before from its address.
//!
//! Memory is bounded: at most [`MAX_CLIENTS`] addresses are remembered (IPv6 by /64, what one
//! host usually holds); past that, addresses not seen before share one entry, so spreading
//! guesses over many addresses buys nothing. An address is forgotten after [`FORGET_AFTER`]
//! without failures. Time is passed in, so the policy is tested without waiting.

use schemascope_core::sync::lock;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The delay of the first failure; each further one doubles it.
pub(crate) const FIRST_DELAY: Duration = Duration::from_millis(250);
/// The longest delay of one failure.
pub(crate) const MAX_DELAY: Duration = Duration::from_secs(8);
/// The longest a refusal is held, however many failures queue before it: a connection is not
/// kept for minutes.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(10);
/// How long an address is remembered after its last failure.
pub(crate) const FORGET_AFTER: Duration = Duration::from_secs(600);
/// The most addresses remembered one by one.
pub(crate) const MAX_CLIENTS: usize = 4096;

/// Who failed: an IPv4 address, or an IPv6 /64 network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ClientKey {
    V4([u8; 4]),
    V6Net([u8; 8]),
}

fn key(ip: IpAddr) -> ClientKey {
    match ip {
        IpAddr::V4(v4) => ClientKey::V4(v4.octets()),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => ClientKey::V4(v4.octets()),
            None => {
                let octets = v6.octets();
                let mut net = [0u8; 8];
                net.copy_from_slice(&octets[..8]);
                ClientKey::V6Net(net)
            }
        },
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    /// When the latest failure's answer is due: the next one is answered after it.
    due: Instant,
    last: Instant,
}

/// What one failure costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Penalty {
    /// Failures from this address (or the shared entry) remembered, this one included.
    pub failures: u32,
    /// This failure's own delay (doubling with `failures`, at most [`MAX_DELAY`]).
    pub backoff: Duration,
    /// How long to hold the answer: the backoff after the earlier failures' answers, at most
    /// [`MAX_WAIT`].
    pub wait: Duration,
}

#[derive(Debug)]
struct State {
    clients: HashMap<ClientKey, Entry>,
    /// Shared by addresses not remembered one by one (the table was full, or the address unknown).
    shared: Entry,
}

/// Failed authentications by client address.
#[derive(Debug)]
pub(crate) struct FailedLogins {
    state: Mutex<State>,
}

impl Default for FailedLogins {
    fn default() -> Self {
        let now = Instant::now();
        Self {
            state: Mutex::new(State {
                clients: HashMap::new(),
                shared: Entry { failures: 0, due: now, last: now },
            }),
        }
    }
}

fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_DELAY.saturating_mul(1u32 << doublings).min(MAX_DELAY)
}

impl FailedLogins {
    /// Records a failed authentication from `client` (`None` when the address is not known) at
    /// `now`, and says how long to hold its refusal.
    pub(crate) fn failed(&self, client: Option<IpAddr>, now: Instant) -> Penalty {
        let mut state = lock(&self.state);
        let entry = state.entry_for(client.map(key), now);
        if now.saturating_duration_since(entry.last) >= FORGET_AFTER {
            *entry = Entry { failures: 0, due: now, last: now };
        }
        let failures = entry.failures.saturating_add(1);
        let step = backoff(failures);
        let start = entry.due.max(now);
        // The queue of answers is never pushed further than one wait ahead.
        let due = (start + step).min(now + MAX_WAIT);
        *entry = Entry { failures, due, last: now };
        Penalty { failures, backoff: step, wait: due.saturating_duration_since(now) }
    }

    /// How many addresses are remembered one by one.
    #[cfg(test)]
    pub(crate) fn remembered(&self) -> usize {
        lock(&self.state).clients.len()
    }
}

impl State {
    /// The entry `key` counts in: its own when remembered or when there is room (after
    /// forgetting old ones), else the shared one.
    fn entry_for(&mut self, key: Option<ClientKey>, now: Instant) -> &mut Entry {
        let Some(key) = key else { return &mut self.shared };
        if !self.clients.contains_key(&key) && self.clients.len() >= MAX_CLIENTS {
            self.clients.retain(|_, e| now.saturating_duration_since(e.last) < FORGET_AFTER);
        }
        if self.clients.contains_key(&key) || self.clients.len() < MAX_CLIENTS {
            return self.clients.entry(key).or_insert(Entry { failures: 0, due: now, last: now });
        }
        &mut self.shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn each_failure_doubles_the_delay_up_to_the_cap_and_answers_queue() {
        let logins = FailedLogins::default();
        let t0 = Instant::now();
        let ip: IpAddr = "192.0.2.7".parse().expect("ip");
        // One failure at a time, each after the previous answer: the wait is the backoff.
        let mut at = t0;
        let mut seen = Vec::new();
        for _ in 0..8 {
            let penalty = logins.failed(Some(ip), at);
            assert_eq!(penalty.wait, penalty.backoff);
            seen.push((penalty.failures, penalty.backoff.as_millis()));
            at += penalty.wait;
        }
        assert_eq!(
            seen,
            [(1, 250), (2, 500), (3, 1000), (4, 2000), (5, 4000), (6, 8000), (7, 8000), (8, 8000)]
        );
        // Parallel guesses: each is answered after the one before, at most MAX_WAIT ahead.
        let other: IpAddr = "192.0.2.8".parse().expect("ip");
        let waits: Vec<u128> =
            (0..5).map(|_| logins.failed(Some(other), t0).wait.as_millis()).collect();
        assert_eq!(waits, [250, 750, 1750, 3750, 7750]);
        assert_eq!(
            logins.failed(Some(other), t0).wait,
            MAX_WAIT,
            "never held longer than MAX_WAIT"
        );
        // Forgotten after a quiet while.
        assert_eq!(logins.failed(Some(ip), at + FORGET_AFTER).failures, 1);
    }

    #[test]
    fn an_ipv6_network_counts_as_one_client_and_mapped_ipv4_as_its_ipv4() {
        let logins = FailedLogins::default();
        let t = Instant::now();
        logins.failed(Some("2001:db8:1:2::1".parse().expect("ip")), t);
        let same_net =
            logins.failed(Some("2001:db8:1:2:ffff::9".parse().expect("ip")), t + ms(1000));
        assert_eq!(same_net.failures, 2);
        assert_eq!(
            logins.failed(Some("2001:db8:1:3::1".parse().expect("ip")), t).failures,
            1,
            "another /64"
        );
        logins.failed(Some("192.0.2.1".parse().expect("ip")), t);
        assert_eq!(
            logins.failed(Some("::ffff:192.0.2.1".parse().expect("ip")), t + ms(1000)).failures,
            2
        );
        assert_eq!(logins.remembered(), 3);
    }

    #[test]
    fn memory_is_bounded_and_new_addresses_past_the_bound_share_one_entry() {
        let logins = FailedLogins::default();
        let t = Instant::now();
        for i in 0..MAX_CLIENTS as u32 {
            logins.failed(Some(IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i))), t);
        }
        assert_eq!(logins.remembered(), MAX_CLIENTS);
        let first = logins.failed(Some("198.51.100.1".parse().expect("ip")), t);
        let second = logins.failed(Some("198.51.100.2".parse().expect("ip")), t);
        assert_eq!(
            (first.failures, second.failures),
            (1, 2),
            "two new addresses, one shared count"
        );
        assert_eq!(logins.remembered(), MAX_CLIENTS);
        assert_eq!(logins.failed(None, t).failures, 3, "an unknown address shares it too");
        // Once the old ones are forgotten, a new address gets its own entry again.
        let later = t + FORGET_AFTER;
        assert_eq!(logins.failed(Some("198.51.100.3".parse().expect("ip")), later).failures, 1);
        assert_eq!(logins.remembered(), 1);
    }
}
