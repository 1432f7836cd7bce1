//! Answers kept in memory for as long as the store's versions they were read under stand.
//!
//! A [`Memo`] holds answers computed from reference data (loaded files, not calls), keyed by what
//! was asked. It watches a few `meta` version keys, the ones the loaders and derived steps bump
//! when they change the rows its answers read ([`meta::Key::DataVersion`],
//! [`meta::Key::AddressRegisterVersion`]), reading them at most once per `every`, in one query,
//! on the path of the call that finds them due. When one has changed, it empties itself.
//!
//! Invariant: an answer from memory is the store's answer under versions at most `every` older
//! than the newest committed (plus the one call's own time). A fill that read the store before a
//! change is never kept after the memo has seen the change: each fill is tagged with the
//! generation it started in, and kept only if that generation still stands when the key's shard
//! is locked, while a change moves the generation on before it empties the shards.

use crate::db::{Db, StoreError};
use crate::meta::{self, Key};
use std::hash::Hash;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use terrace_core::memo::Shards;

/// Answers keyed by `K`, dropped when a watched version key changes (see the module text).
pub struct Memo<K, V> {
    keys: &'static [Key],
    every: Duration,
    max: usize,
    /// When the memo was made: `checked` counts from it.
    born: Instant,
    /// When the versions were last read, in nanoseconds after `born` ([`NEVER`]: not yet). An
    /// atomic, so that a call within the period reads it without taking `watch`'s lock: one lock
    /// for every call is a cache line the worker threads take in turn.
    checked: AtomicU64,
    watch: Mutex<Watch>,
    generation: AtomicU64,
    map: Shards<K, V>,
}

/// `checked` before the first read of the versions.
const NEVER: u64 = u64::MAX;

#[derive(Default)]
struct Watch {
    /// A call is reading them now (the others go on with the answers held).
    checking: bool,
    /// The versions last read, in `keys` order.
    seen: Option<Vec<Option<String>>>,
}

/// Clears `checking` however the check ends (a cancelled call included), so the versions are
/// read again when next due rather than never.
struct Checking<'a>(&'a Mutex<Watch>);

impl Drop for Checking<'_> {
    fn drop(&mut self) {
        lock(self.0).checking = false;
    }
}

fn lock(m: &Mutex<Watch>) -> std::sync::MutexGuard<'_, Watch> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    /// A memo of at most about `max` answers, watching `keys` at most once per `every`.
    pub fn new(keys: &'static [Key], every: Duration, max: usize) -> Memo<K, V> {
        Memo {
            keys,
            every,
            max,
            born: Instant::now(),
            checked: AtomicU64::new(NEVER),
            watch: Mutex::new(Watch::default()),
            generation: AtomicU64::new(0),
            map: Shards::default(),
        }
    }

    /// The answer held for `key`, or `fill`'s, kept for the calls that follow.
    pub async fn get_or_fill<E, F, Fut>(&self, db: &Db, key: K, fill: F) -> Result<V, E>
    where
        E: From<StoreError>,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        self.check(db).await?;
        let generation = self.generation.load(Ordering::SeqCst);
        if let Some(v) = self.map.get_with(&key, V::clone) {
            return Ok(v);
        }
        let v = fill().await?;
        self.map.put_if(self.max, key, v.clone(), || {
            self.generation.load(Ordering::SeqCst) == generation
        });
        Ok(v)
    }

    /// Reads the watched versions when due, and empties the memo when one has changed (public for
    /// the store's tests, which interleave a change with a fill).
    #[doc(hidden)]
    pub async fn check(&self, db: &Db) -> Result<(), StoreError> {
        if self.fresh() {
            return Ok(());
        }
        {
            let mut w = lock(&self.watch);
            // Read again under the lock: another call may have just read the versions.
            if self.fresh() || w.checking {
                return Ok(());
            }
            w.checking = true;
        }
        let _checking = Checking(&self.watch);
        let versions = meta::get_many(db, self.keys).await?;
        let mut w = lock(&self.watch);
        self.checked.store(self.since_born(), Ordering::SeqCst);
        if w.seen.as_ref() != Some(&versions) {
            if w.seen.is_some() {
                // The generation moves first: a fill that started before sees it when it locks
                // its shard, before or after that shard is emptied.
                self.generation.fetch_add(1, Ordering::SeqCst);
                self.map.clear();
            }
            w.seen = Some(versions);
        }
        Ok(())
    }

    /// Whether the versions were read less than `every` ago.
    fn fresh(&self) -> bool {
        let last = self.checked.load(Ordering::SeqCst);
        last != NEVER && u128::from(self.since_born().saturating_sub(last)) < self.every.as_nanos()
    }

    fn since_born(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(NEVER - 1)
    }
}
