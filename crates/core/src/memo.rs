//! Answers kept in memory: a sharded map for lookups many threads read at once, and [`AsJson`], an
//! answer kept as its JSON text.
//!
//! Used by the families that serve reference data (the address register, the council tax list)
//! from memory, with the store as the source of truth; when to empty a map is the caller's rule.

use schemars::JsonSchema;
use serde::Serialize;
use std::sync::{Arc, RwLock};

/// A map split in [`SHARDS`] maps by the key's hash, each behind its own lock, with a fast
/// non-cryptographic hash (the keys are UPRNs and postcodes, not a caller's choosing to collide
/// with: an attacker gains nothing from a slow bucket but their own wait). One lock for every
/// call was a cache line both worker threads took in turn (issue 20).
pub struct Shards<K, V> {
    hasher: foldhash::fast::RandomState,
    shards: [RwLock<std::collections::HashMap<K, V, foldhash::fast::RandomState>>; SHARDS],
}

/// A power of two, so that the hash's top bits pick a shard evenly.
const SHARDS: usize = 16;

impl<K: std::hash::Hash + Eq, V> Default for Shards<K, V> {
    fn default() -> Self {
        let hasher = foldhash::fast::RandomState::default();
        Shards {
            shards: std::array::from_fn(|_| {
                RwLock::new(std::collections::HashMap::with_hasher(hasher.clone()))
            }),
            hasher,
        }
    }
}

impl<K: std::hash::Hash + Eq, V> Shards<K, V> {
    fn shard<Q: std::hash::Hash + ?Sized>(
        &self,
        key: &Q,
    ) -> &RwLock<std::collections::HashMap<K, V, foldhash::fast::RandomState>> {
        use std::hash::BuildHasher;
        let h = self.hasher.hash_one(key) as usize;
        // The top bits pick the shard; the map inside uses the low ones.
        &self.shards[(h >> (usize::BITS - SHARDS.trailing_zeros())) % SHARDS]
    }

    /// What `f` makes of the value held for `key`, under the shard's read lock.
    pub fn get_with<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R) -> Option<R>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.shard(key).read().ok()?.get(key).map(f)
    }

    /// Holds `value` for `key`; a shard holding `max / SHARDS` entries is emptied first.
    pub fn put(&self, max: usize, key: K, value: V) {
        self.put_if(max, key, value, || true);
    }

    /// Holds `value` for `key` if `still` says so when the key's shard is locked (a caller that
    /// empties the map after changing what `still` reads can then never see an older value put
    /// back after its [`Shards::clear`]).
    pub fn put_if(&self, max: usize, key: K, value: V, still: impl FnOnce() -> bool) {
        if let Ok(mut m) = self.shard(&key).write()
            && still()
        {
            if m.len() >= max / SHARDS {
                m.clear();
            }
            m.insert(key, value);
        }
    }

    pub fn clear(&self) {
        for shard in &self.shards {
            if let Ok(mut m) = shard.write() {
                m.clear();
            }
        }
    }
}

/// An answer kept as its JSON text: it serialises as that text, unchanged, and its schema is the
/// schema of `T`, so the operation's declared output (OpenAPI, the MCP tool's output schema) is
/// the same as when it answered a `T`. Cheap to clone (one reference count).
pub struct AsJson<T> {
    text: Arc<serde_json::value::RawValue>,
    of: std::marker::PhantomData<fn() -> T>,
}

impl<T: Serialize> AsJson<T> {
    pub fn new(value: &T) -> Result<AsJson<T>, serde_json::Error> {
        let text = serde_json::value::RawValue::from_string(serde_json::to_string(value)?)?;
        Ok(AsJson {
            text: Arc::from(text),
            of: std::marker::PhantomData,
        })
    }
}

impl<T> AsJson<T> {
    /// The answer's JSON text.
    pub fn text(&self) -> &str {
        self.text.get()
    }
}

impl<T> Clone for AsJson<T> {
    fn clone(&self) -> Self {
        AsJson {
            text: self.text.clone(),
            of: std::marker::PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for AsJson<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AsJson").field(&self.text()).finish()
    }
}

impl<T> Serialize for AsJson<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.text.serialize(s)
    }
}

impl<T: JsonSchema> JsonSchema for AsJson<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}
