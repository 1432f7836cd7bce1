//! Resource limits that keep unauthenticated and abusive traffic from exhausting the service:
//! the bounded password-hashing pool and the sign-in throttle, the body-read cap and deadline,
//! per-source rates (OAuth registration), and the cache of fetched client metadata documents.
//!
//! All of it is in memory, per process: a limit here bounds what one gateway spends, and a
//! deployment of N gateways allows N times the per-source rates (documented in
//! `docs/API-DESIGN.md`, "Limits").

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The limits of a running gateway (defaults in [`Limits::default`]).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Password hashes computed at once (argon2id, 19 MiB each): the number of cores.
    pub hash_workers: usize,
    /// Sign-in attempts waiting for a hashing slot before new ones are refused with 503.
    pub hash_queue: usize,
    /// How long a sign-in attempt waits for a hashing slot before 503.
    pub hash_wait: Duration,
    /// Failed sign-ins per account (email) before the back-off starts.
    pub free_failures_account: u32,
    /// Failed sign-ins per source address before the back-off starts.
    pub free_failures_source: u32,
    /// The first back-off; it doubles with each further failure, up to [`Limits::max_backoff`].
    pub first_backoff: Duration,
    pub max_backoff: Duration,
    /// Request bodies being read at once (each up to 1 MiB) before new ones are refused with 503.
    pub body_reads: usize,
    /// The time a request body may take to arrive, from the end of the headers.
    pub body_deadline: Duration,
    /// Dynamic client registrations per source address per hour.
    pub registrations_per_hour: u32,
}

impl Default for Limits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        Limits {
            hash_workers: cores,
            hash_queue: cores * 8,
            hash_wait: Duration::from_secs(2),
            free_failures_account: 5,
            free_failures_source: 20,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(15 * 60),
            body_reads: 128,
            body_deadline: Duration::from_secs(10),
            registrations_per_hour: 20,
        }
    }
}

/// Why a limited thing was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Too many at once: 503 with `Retry-After`.
    Busy { retry_after_secs: u64 },
    /// Back off: 429 with `Retry-After`.
    Throttled { retry_after_secs: u64 },
}

fn secs_ceil(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}

/// The password-hashing pool: at most `hash_workers` hashes at once, a bounded queue with a
/// timeout in front of it.
pub struct HashPool {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    running: AtomicUsize,
    peak: AtomicUsize,
    queue: usize,
    wait: Duration,
}

/// A hashing slot; dropping it frees the slot.
pub struct HashSlot<'a> {
    _permit: OwnedSemaphorePermit,
    pool: &'a HashPool,
}

impl Drop for HashSlot<'_> {
    fn drop(&mut self) {
        self.pool.running.fetch_sub(1, Ordering::SeqCst);
    }
}

impl HashPool {
    pub fn new(limits: &Limits) -> HashPool {
        HashPool {
            slots: Arc::new(Semaphore::new(limits.hash_workers.max(1))),
            waiting: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            queue: limits.hash_queue,
            wait: limits.hash_wait,
        }
    }

    /// A slot, or `Busy` when the queue is full or the wait ran out.
    pub async fn slot(&self) -> Result<HashSlot<'_>, Refused> {
        let busy = Refused::Busy {
            retry_after_secs: secs_ceil(self.wait),
        };
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(busy);
        }
        let permit = tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        match permit {
            Ok(Ok(p)) => {
                let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                self.peak.fetch_max(now, Ordering::SeqCst);
                Ok(HashSlot {
                    _permit: p,
                    pool: self,
                })
            }
            Ok(Err(_)) | Err(_) => Err(busy),
        }
    }

    /// The most hashes that ever ran at once (for tests and metrics).
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

#[derive(Debug, Clone, Copy)]
struct Backoff {
    failures: u32,
    until: Instant,
    last: Instant,
}

/// Failed sign-ins per account and per source, with exponential back-off.
pub struct SignInThrottle {
    entries: Mutex<HashMap<String, Backoff>>,
    limits: Limits,
}

impl SignInThrottle {
    const MAX_ENTRIES: usize = 100_000;

    pub fn new(limits: &Limits) -> SignInThrottle {
        SignInThrottle {
            entries: Mutex::new(HashMap::new()),
            limits: limits.clone(),
        }
    }

    fn keys(email: &str, source: Option<IpAddr>) -> [String; 2] {
        [
            format!("a:{}", email.trim().to_lowercase()),
            format!(
                "s:{}",
                source.map_or_else(|| "unknown".into(), |s| s.to_string())
            ),
        ]
    }

    /// Ok, or how long this account or source must wait before the next attempt.
    pub fn check(&self, email: &str, source: Option<IpAddr>) -> Result<(), Refused> {
        let now = Instant::now();
        let Ok(map) = self.entries.lock() else {
            return Ok(());
        };
        let wait = Self::keys(email, source)
            .iter()
            .filter_map(|k| map.get(k))
            .filter(|b| b.until > now)
            .map(|b| b.until - now)
            .max();
        match wait {
            Some(w) => Err(Refused::Throttled {
                retry_after_secs: secs_ceil(w),
            }),
            None => Ok(()),
        }
    }

    /// Records a failed attempt: past the free failures, each one doubles the wait.
    pub fn failed(&self, email: &str, source: Option<IpAddr>) {
        let now = Instant::now();
        let Ok(mut map) = self.entries.lock() else {
            return;
        };
        if map.len() >= Self::MAX_ENTRIES {
            let stale = self.limits.max_backoff;
            map.retain(|_, b| b.until > now || now - b.last < stale);
            if map.len() >= Self::MAX_ENTRIES {
                map.clear();
            }
        }
        let [account, src] = Self::keys(email, source);
        for (key, free) in [
            (account, self.limits.free_failures_account),
            (src, self.limits.free_failures_source),
        ] {
            let b = map.entry(key).or_insert(Backoff {
                failures: 0,
                until: now,
                last: now,
            });
            // A quiet spell as long as the longest back-off forgives the past failures.
            if now - b.last > self.limits.max_backoff {
                b.failures = 0;
            }
            b.failures += 1;
            b.last = now;
            if b.failures > free {
                let doublings = (b.failures - free - 1).min(20);
                let wait = self
                    .limits
                    .first_backoff
                    .saturating_mul(1u32 << doublings)
                    .min(self.limits.max_backoff);
                b.until = now + wait;
            }
        }
    }

    /// A successful sign-in clears the account's failures (the source's stay).
    pub fn succeeded(&self, email: &str) {
        if let Ok(mut map) = self.entries.lock() {
            map.remove(&format!("a:{}", email.trim().to_lowercase()));
        }
    }
}

/// The cap on request bodies being read at once.
pub struct BodyReads {
    slots: Arc<Semaphore>,
}

impl BodyReads {
    pub fn new(limits: &Limits) -> BodyReads {
        BodyReads {
            slots: Arc::new(Semaphore::new(limits.body_reads.max(1))),
        }
    }

    /// A slot for one body read, or None when every slot is taken (answer 503).
    pub fn try_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.slots.clone().try_acquire_owned().ok()
    }
}

/// A fixed-window counter per source address (dynamic client registration).
pub struct PerSource {
    window: Duration,
    max: u32,
    counts: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl PerSource {
    pub fn new(max: u32, window: Duration) -> PerSource {
        PerSource {
            window,
            max,
            counts: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one request from `source`; `Throttled` past the limit of the window.
    pub fn hit(&self, source: Option<IpAddr>) -> Result<(), Refused> {
        let source = source.unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let now = Instant::now();
        let Ok(mut map) = self.counts.lock() else {
            return Ok(());
        };
        if map.len() >= 100_000 {
            map.retain(|_, (start, _)| now - *start < self.window);
        }
        let (start, n) = map.entry(source).or_insert((now, 0));
        if now - *start >= self.window {
            *start = now;
            *n = 0;
        }
        if *n >= self.max {
            return Err(Refused::Throttled {
                retry_after_secs: secs_ceil(self.window - (now - *start)),
            });
        }
        *n += 1;
        Ok(())
    }
}

/// Fetched client ID metadata documents, kept for [`MetadataCache::TTL`] so a burst of
/// authorization requests naming one URL fetches it once.
#[derive(Default)]
pub struct MetadataCache {
    docs: Mutex<HashMap<String, (Instant, Fetched)>>,
}

/// A fetched document's body, or why it could not be used.
type Fetched = Result<Vec<u8>, String>;

impl MetadataCache {
    pub const TTL: Duration = Duration::from_secs(300);
    const MAX: usize = 1_000;

    /// The cached outcome of fetching `url`: its body, or why it could not be used.
    pub fn get(&self, url: &str) -> Option<Result<Vec<u8>, String>> {
        let map = self.docs.lock().ok()?;
        let (at, doc) = map.get(url)?;
        (at.elapsed() < Self::TTL).then(|| doc.clone())
    }

    pub fn put(&self, url: &str, doc: Result<Vec<u8>, String>) {
        if let Ok(mut map) = self.docs.lock() {
            if map.len() >= Self::MAX {
                map.retain(|_, (at, _)| at.elapsed() < Self::TTL);
                if map.len() >= Self::MAX {
                    map.clear();
                }
            }
            map.insert(url.to_string(), (Instant::now(), doc));
        }
    }
}

/// Whether an address is one the public internet can route to: not loopback, private (RFC
/// 1918), carrier-grade NAT, link-local, unique-local (fc00::/7), multicast, documentation,
/// benchmarking, unspecified or reserved; IPv4-mapped and NAT64 addresses judged by their IPv4.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
                || v4.is_multicast()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 198 && (o[1] & 0xfe) == 18)
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if s[0] == 0x64 && s[1] == 0xff9b {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return is_public(IpAddr::from([a, b, c, d]));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] & 0xffc0) == 0xfec0
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || s[0] == 0x0100
                || (s[0] == 0 && s[1] == 0 && s[2] == 0 && s[3] == 0 && s[4] == 0))
        }
    }
}

/// The DNS resolver of outbound fetches: the system resolver, keeping only public addresses, so
/// a host name that resolves to loopback or a private network is refused before any connection
/// (and again on every redirect, each of which resolves its host here).
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| is_public(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(format!("{host} does not resolve to a public address").into());
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn back_off_doubles_after_the_free_failures() {
        let limits = Limits {
            free_failures_account: 2,
            free_failures_source: 100,
            ..Limits::default()
        };
        let t = SignInThrottle::new(&limits);
        let ip = Some(IpAddr::from([1, 2, 3, 4]));
        t.failed("a@x", ip);
        t.failed("a@x", ip);
        assert_eq!(t.check("a@x", ip), Ok(()));
        t.failed("a@x", ip);
        assert_eq!(
            t.check("A@X ", ip),
            Err(Refused::Throttled {
                retry_after_secs: 1
            })
        );
        t.failed("a@x", ip);
        assert_eq!(
            t.check("a@x", ip),
            Err(Refused::Throttled {
                retry_after_secs: 2
            })
        );
        // Another account from the same source is not held back by this one's failures.
        assert_eq!(t.check("b@x", ip), Ok(()));
        t.succeeded("a@x");
        assert_eq!(t.check("a@x", ip), Ok(()));
    }
}
