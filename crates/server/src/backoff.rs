//! Token guessing: every token is checked, and a right one is served at once, whoever else
//! shares its address — on loopback every local process does, the guesser and the user alike.
//! A wrong token counts as a failure of its address only when the address is due: each counted
//! failure pushes the next due time back by a delay that doubles (250 ms, 500 ms, … 8 s) and is
//! answered 401 with that delay; a wrong token before then is answered at once with 429 and
//! `Retry-After`, uncounted. Nothing waits and no connection is held: a refusal costs the server
//! what any answer costs, whatever the number of guessers, so a flood of wrong tokens never
//! takes the connection slots a right token needs (it did when refusals were delayed).
//!
//! What this does not do is slow a determined guesser: since a right token is answered at once,
//! any answer that is not a success tells its sender the token was wrong, whether it comes at
//! once or late. Holding wrong answers back only limited guessing by the connection slots the
//! held answers occupied — the very slots the right token needed. Against guessing, the guard is
//! the token's strength (at least 64 bits, checked at start: at a million guesses a second, half
//! a million years); the doubling delay tells clients that retry by the book when to come back.
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
    /// When this address's next token is checked.
    due: Instant,
    last: Instant,
}

/// What the check of the presented token found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// One of the presented credentials is the token.
    Right,
    /// None is; `guesses` distinct wrong values were presented (a bearer header, a cookie and
    /// the login address may each carry one), each counted as a failure of its own.
    Wrong {
        /// How many distinct wrong values.
        guesses: u32,
    },
}

/// What became of a request presenting a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Checked, and right.
    Accepted,
    /// Checked, and wrong: counted.
    Refused(Penalty),
    /// Not checked: the address's next token is not due yet.
    Throttled {
        /// Failures from this address (or the shared entry) remembered.
        failures: u32,
        /// How long until its next token is checked.
        retry_after: Duration,
    },
}

/// What a failure costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Penalty {
    /// Failures from this address (or the shared entry) remembered, this one included.
    pub failures: u32,
    /// How long until the address's next token is checked (doubling with `failures`, at most
    /// [`MAX_DELAY`]).
    pub backoff: Duration,
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
    /// Decides a request presenting a token from `client` (`None` when the address is not
    /// known) at `now`: `check` compares the token; a wrong one counts only when the address is
    /// due or the request comes on a connection that already authenticated (`trusted`).
    /// Deciding and counting happen under one lock, so parallel wrong tokens cannot both count
    /// within one delay.
    pub(crate) fn attempt(
        &self,
        client: Option<IpAddr>,
        now: Instant,
        trusted: bool,
        check: impl FnOnce() -> Check,
    ) -> Attempt {
        let guesses = match check() {
            Check::Right => return Attempt::Accepted,
            Check::Wrong { guesses } => guesses.max(1),
        };
        let mut state = lock(&self.state);
        let key = client.map(key);
        if !trusted
            && let Some(entry) = state.current(key, now)
            && now < entry.due
        {
            return Attempt::Throttled {
                failures: entry.failures,
                retry_after: entry.due.saturating_duration_since(now),
            };
        }
        let entry = state.entry_for(key, now);
        if now.saturating_duration_since(entry.last) >= FORGET_AFTER {
            *entry = Entry { failures: 0, due: now, last: now };
        }
        // Several wrong values in one request cost what as many requests in a row would.
        let mut failures = entry.failures;
        let mut step = Duration::ZERO;
        for _ in 0..guesses {
            failures = failures.saturating_add(1);
            step = step.saturating_add(backoff(failures));
        }
        // A trusted connection may be checked before the due time: it never brings it closer.
        let due = entry.due.max(now + step);
        *entry = Entry { failures, due, last: now };
        Attempt::Refused(Penalty { failures, backoff: due.saturating_duration_since(now) })
    }

    /// How many addresses are remembered one by one.
    #[cfg(test)]
    pub(crate) fn remembered(&self) -> usize {
        lock(&self.state).clients.len()
    }
}

impl State {
    /// The entry `key` counts in now, if any: its own, or the shared one when the table is full
    /// of addresses not yet forgotten. A right token adds nothing to remember.
    fn current(&mut self, key: Option<ClientKey>, now: Instant) -> Option<Entry> {
        let Some(key) = key else { return Some(self.shared) };
        if let Some(entry) = self.clients.get(&key) {
            return Some(*entry);
        }
        if self.clients.len() >= MAX_CLIENTS {
            self.clients.retain(|_, e| now.saturating_duration_since(e.last) < FORGET_AFTER);
        }
        (self.clients.len() >= MAX_CLIENTS).then_some(self.shared)
    }

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

    const WRONG: Check = Check::Wrong { guesses: 1 };

    fn wrong(logins: &FailedLogins, ip: &str, at: Instant) -> Attempt {
        logins.attempt(ip.parse().ok(), at, false, || WRONG)
    }

    fn failures(attempt: Attempt) -> u32 {
        match attempt {
            Attempt::Refused(penalty) => penalty.failures,
            Attempt::Throttled { failures, .. } => failures,
            Attempt::Accepted => 0,
        }
    }

    #[test]
    fn each_failure_doubles_the_delay_up_to_the_cap_and_nothing_counts_before_it() {
        let logins = FailedLogins::default();
        let t0 = Instant::now();
        // One guess each time the address is due: the delay doubles up to the cap.
        let mut at = t0;
        let mut seen = Vec::new();
        for _ in 0..8 {
            let Attempt::Refused(penalty) = wrong(&logins, "192.0.2.7", at) else {
                panic!("a due guess is checked")
            };
            seen.push((penalty.failures, penalty.backoff.as_millis()));
            at += penalty.backoff;
        }
        assert_eq!(
            seen,
            [(1, 250), (2, 500), (3, 1000), (4, 2000), (5, 4000), (6, 8000), (7, 8000), (8, 8000)]
        );
        // Parallel guesses: only the first counts; the rest say when to retry.
        let attempts: Vec<Attempt> = (0..48)
            .map(|_| logins.attempt("192.0.2.8".parse().ok(), t0, false, || WRONG))
            .collect();
        assert!(matches!(attempts[0], Attempt::Refused(Penalty { failures: 1, .. })));
        assert!(
            attempts[1..]
                .iter()
                .all(|a| *a == Attempt::Throttled { failures: 1, retry_after: ms(250) })
        );
        // The right token from the same address is served at once, on any connection.
        let right = logins.attempt("192.0.2.8".parse().ok(), t0 + ms(100), false, || Check::Right);
        assert_eq!(right, Attempt::Accepted);
        assert_eq!(
            logins.attempt("192.0.2.8".parse().ok(), t0 + ms(100), true, || Check::Right),
            Attempt::Accepted
        );
        assert_eq!(
            logins.attempt("192.0.2.8".parse().ok(), t0 + ms(250), false, || Check::Right),
            Attempt::Accepted
        );
        // A wrong token on a trusted connection counts and never brings the due time closer.
        let trusted = logins.attempt("192.0.2.8".parse().ok(), t0 + ms(260), true, || WRONG);
        assert_eq!(trusted, Attempt::Refused(Penalty { failures: 2, backoff: ms(500) }));
        // Every wrong value presented counts.
        let many =
            logins.attempt("192.0.2.9".parse().ok(), t0, false, || Check::Wrong { guesses: 3 });
        assert_eq!(many, Attempt::Refused(Penalty { failures: 3, backoff: ms(1750) }));
        // Forgotten after a quiet while.
        assert_eq!(failures(wrong(&logins, "192.0.2.7", at + FORGET_AFTER)), 1);
    }

    #[test]
    fn an_ipv6_network_counts_as_one_client_and_mapped_ipv4_as_its_ipv4() {
        let logins = FailedLogins::default();
        let t = Instant::now();
        wrong(&logins, "2001:db8:1:2::1", t);
        assert_eq!(failures(wrong(&logins, "2001:db8:1:2:ffff::9", t + ms(1000))), 2);
        assert_eq!(failures(wrong(&logins, "2001:db8:1:3::1", t)), 1, "another /64");
        wrong(&logins, "192.0.2.1", t);
        assert_eq!(failures(wrong(&logins, "::ffff:192.0.2.1", t + ms(1000))), 2);
        assert_eq!(logins.remembered(), 3);
    }

    #[test]
    fn memory_is_bounded_and_new_addresses_past_the_bound_share_one_entry() {
        let logins = FailedLogins::default();
        let t = Instant::now();
        for i in 0..MAX_CLIENTS as u32 {
            let ip = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            logins.attempt(Some(ip), t, false, || WRONG);
        }
        assert_eq!(logins.remembered(), MAX_CLIENTS);
        // A right token from a new address adds no entry.
        assert_eq!(
            logins.attempt("198.51.100.9".parse().ok(), t, false, || Check::Right),
            Attempt::Accepted
        );
        let first = wrong(&logins, "198.51.100.1", t);
        let second = wrong(&logins, "198.51.100.2", t);
        assert_eq!(
            (failures(first), failures(second)),
            (1, 1),
            "two new addresses, one shared entry"
        );
        assert!(
            matches!(second, Attempt::Throttled { .. }),
            "the shared entry is not due: {second:?}"
        );
        assert_eq!(logins.remembered(), MAX_CLIENTS);
        assert_eq!(
            failures(logins.attempt(None, t + ms(250), false, || WRONG)),
            2,
            "an unknown address shares it too"
        );
        // Once the old ones are forgotten, a new address gets its own entry again.
        let later = t + FORGET_AFTER;
        assert_eq!(failures(wrong(&logins, "198.51.100.3", later)), 1);
        assert_eq!(logins.remembered(), 1);
    }
}
