//! The one merge every dataset uses: key the chunk's rows, fetch the stored rows of those keys,
//! map each input row onto the stored row of its key (as staged so far, in file order), then
//! replace (and delete) what changed in one write, counting every input row.

use chrono::NaiveDateTime;
use std::collections::HashMap;
use std::hash::Hash;
use terrace_geo::PolygonIndex;
use terrace_store::loads::RowCounts;
use terrace_store::{Db, StoreError, StoreResult};

/// What a loader sees while it applies a chunk.
pub struct LoadCtx<'a> {
    pub(crate) db: &'a Db,
    /// The provenance every row of this load carries.
    pub(crate) source: &'a str,
    pub(crate) now: NaiveDateTime,
    /// Things a loader reports about rows it loaded (an unreadable lease term, say); printed
    /// with the progress after each chunk.
    pub(crate) notes: std::sync::Mutex<Vec<String>>,
    /// The local authority boundaries, read once per load by the spatial loaders.
    pub(crate) lads: tokio::sync::OnceCell<PolygonIndex<String>>,
}

impl LoadCtx<'_> {
    pub(crate) fn note(&self, s: String) {
        if let Ok(mut n) = self.notes.lock() {
            n.push(s);
        }
    }

    pub(crate) fn take_notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}

/// A stored row type a loader merges into: its key, how the store fetches and replaces it, and
/// content equality (equal in every column but `updated_at`, so loading a file again counts its
/// rows as unchanged). Implemented with [`stored!`].
pub(crate) trait Stored: Clone + PartialEq + Send + Sync + 'static {
    type Key: Hash + Eq + Clone + Send + Sync + 'static;
    fn key(&self) -> Self::Key;
    fn same_content(&self, other: &Self) -> bool;
    fn fetch(db: &Db, keys: &[Self::Key]) -> impl Future<Output = StoreResult<Vec<Self>>> + Send;
    fn replace(db: &Db, rows: Vec<Self>) -> impl Future<Output = StoreResult<()>> + Send;
    /// Rows a load never deletes refuse a delete (no loader maps their rows to [`Change::Delete`]).
    fn delete(_db: &Db, keys: &[Self::Key]) -> impl Future<Output = StoreResult<()>> + Send {
        let refused = (!keys.is_empty()).then(|| {
            StoreError::Setup(format!(
                "{} rows are never deleted by a load",
                std::any::type_name::<Self>()
            ))
        });
        async move { refused.map_or(Ok(()), Err) }
    }
}

/// `stored!(Row, Key, |r| key, fetch, replace[, delete])`: a row type the merge writes.
macro_rules! stored {
    ($row:ty, $kty:ty, |$r:ident| $key:expr, $fetch:path, $replace:path $(, $delete:path)?) => {
        impl $crate::merge::Stored for $row {
            type Key = $kty;
            fn key(&self) -> $kty {
                let $r = self;
                $key
            }
            fn same_content(&self, other: &Self) -> bool {
                Self {
                    updated_at: other.updated_at,
                    ..self.clone()
                } == *other
            }
            async fn fetch(
                db: &terrace_store::Db,
                keys: &[$kty],
            ) -> terrace_store::StoreResult<Vec<Self>> {
                $fetch(db, keys).await
            }
            async fn replace(
                db: &terrace_store::Db,
                rows: Vec<Self>,
            ) -> terrace_store::StoreResult<()> {
                $replace(db, rows).await?;
                Ok(())
            }
            $(
                async fn delete(
                    db: &terrace_store::Db,
                    keys: &[$kty],
                ) -> terrace_store::StoreResult<()> {
                    $delete(db, keys).await?;
                    Ok(())
                }
            )?
        }
    };
}
pub(crate) use stored;

/// What a loader makes of one input row, given the stored row of its key.
pub(crate) enum Change<R> {
    /// Store this row (counted loaded, updated or unchanged).
    Put(R),
    /// Delete the stored row (counted deleted, or unchanged when there is none).
    Delete,
    /// Leave the stored row as it is, uncounted.
    Skip,
}

/// The keys a merge wrote.
pub(crate) struct Written<K> {
    pub(crate) put: Vec<K>,
}

impl<K> Written<K> {
    pub(crate) fn changed(&self) -> bool {
        !self.put.is_empty()
    }
}

/// Key, fetch existing, map, replace: `map(row, stored)` says what becomes of each input row, in
/// file order (a later row of the same key sees the earlier one's result); every row is counted.
pub(crate) async fn merge<In, R: Stored>(
    db: &Db,
    rows: Vec<In>,
    counts: &mut RowCounts,
    key: impl Fn(&In) -> R::Key,
    mut map: impl FnMut(In, Option<&R>) -> Change<R>,
) -> Result<Written<R::Key>, StoreError> {
    let keys: Vec<R::Key> = rows.iter().map(&key).collect();
    let existing = R::fetch(db, &keys).await?;
    let mut st = Staged::new(&keys, existing);
    for r in rows {
        let k = key(&r);
        match map(r, st.prev(&k)) {
            Change::Put(new) => st.set(k, Some(new), counts),
            Change::Delete => st.set(k, None, counts),
            Change::Skip => {}
        }
    }
    let (up, del) = st.into_writes();
    if !del.is_empty() {
        R::delete(db, &del).await?;
    }
    let put: Vec<R::Key> = up.iter().map(Stored::key).collect();
    R::replace(db, up).await?;
    Ok(Written { put })
}

/// The in-memory state of one chunk: the stored row (or none) for every key the chunk touches,
/// updated row by row in file order, then written once.
struct Staged<K, R> {
    current: HashMap<K, Option<R>>,
    touched: Vec<K>,
    stored: HashMap<K, bool>,
}

impl<R: Stored> Staged<R::Key, R> {
    fn new(keys: &[R::Key], existing: Vec<R>) -> Self {
        let mut current: HashMap<R::Key, Option<R>> =
            keys.iter().map(|k| (k.clone(), None)).collect();
        let mut stored = HashMap::new();
        for r in existing {
            stored.insert(r.key(), true);
            current.insert(r.key(), Some(r));
        }
        Staged {
            current,
            touched: Vec::new(),
            stored,
        }
    }

    fn prev(&self, k: &R::Key) -> Option<&R> {
        self.current.get(k).and_then(Option::as_ref)
    }

    /// Sets the row of `k` (or deletes it with None), counting the input row's effect.
    fn set(&mut self, k: R::Key, new: Option<R>, counts: &mut RowCounts) {
        let prev = self.current.get(&k).cloned().flatten();
        match (&prev, &new) {
            (None, Some(_)) => counts.loaded += 1,
            (Some(p), Some(n)) if p.same_content(n) => {
                counts.unchanged += 1;
                return;
            }
            (Some(_), Some(_)) => counts.updated += 1,
            (Some(_), None) => counts.deleted += 1,
            (None, None) => {
                counts.unchanged += 1;
                return;
            }
        }
        self.current.insert(k.clone(), new);
        self.touched.push(k);
    }

    /// (rows to write, keys to delete).
    fn into_writes(mut self) -> (Vec<R>, Vec<R::Key>) {
        let mut seen = std::collections::HashSet::new();
        let (mut up, mut del) = (Vec::new(), Vec::new());
        for k in self.touched {
            if !seen.insert(k.clone()) {
                continue;
            }
            match self.current.remove(&k).flatten() {
                Some(r) => up.push(r),
                None if self.stored.contains_key(&k) => del.push(k),
                None => {}
            }
        }
        (up, del)
    }
}
