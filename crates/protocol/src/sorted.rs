//! Small ordered maps and sets on a sorted `Vec`.
//!
//! The reassembler and the SDK keep a handful of entries per map (runs, requests in flight,
//! frames held behind a gap), looked up by key and walked in key order. `BTreeMap` does that,
//! but each key and value type gets its own copy of the B-tree's node code — insertion,
//! removal, rebalancing, drop: in the browser SDK's wasm that code was 57 KB, a seventh of it
//! (measured 2026-11-22), and 6 KB (serde_json's own maps) is left with these. A sorted `Vec`
//! gives the same order and the part of the API these maps use. Lookups are a binary search over
//! contiguous keys and an insertion moves the entries after it: with the reassembler's run map
//! on it, the client benchmark's cost per frame did not change.

use alloc::vec::Vec;
use core::borrow::Borrow;
use core::fmt;

/// A map ordered by key, like `BTreeMap`, on a sorted `Vec` (see the module docs).
#[derive(Clone, PartialEq, Eq)]
pub struct SortedMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap {
            entries: Vec::new(),
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SortedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    /// An empty map.
    pub const fn new() -> Self {
        SortedMap {
            entries: Vec::new(),
        }
    }

    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// Sets `key` to `value`; the value it had, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(core::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// The value of `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    /// The value of `key`, to change.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    /// The value of `key`, set to `make()` first if the map has none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Whether the map has `key`.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// Takes `key` out; its value, if it had one.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }
}

impl<K, V> SortedMap<K, V> {
    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Keeps the entries for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter(self.entries.iter())
    }

    /// The keys in order.
    pub fn keys(&self) -> Keys<'_, K, V> {
        Keys(self.entries.iter())
    }

    /// The values in key order.
    pub fn values(&self) -> Values<'_, K, V> {
        Values(self.entries.iter())
    }

    /// The values in key order, to change in place.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }
}

/// Iterators over a [`SortedMap`], in key order. (Named types rather than `impl Iterator`: an
/// opaque type may run code when dropped, as far as the borrow checker knows, so a borrow of
/// the map would last to the end of the statement.)
macro_rules! iterator {
    ($doc:literal, $name:ident, $item:ty, |$e:ident| $map:expr) => {
        #[doc = $doc]
        #[derive(Debug)]
        pub struct $name<'a, K, V>(core::slice::Iter<'a, (K, V)>);

        impl<'a, K, V> Iterator for $name<'a, K, V> {
            type Item = $item;
            fn next(&mut self) -> Option<Self::Item> {
                self.0.next().map(|$e| $map)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<K, V> DoubleEndedIterator for $name<'_, K, V> {
            fn next_back(&mut self) -> Option<Self::Item> {
                self.0.next_back().map(|$e| $map)
            }
        }

        impl<K, V> ExactSizeIterator for $name<'_, K, V> {}
    };
}

iterator!(
    "The entries of a [`SortedMap`], in key order.",
    Iter,
    (&'a K, &'a V),
    |e| (&e.0, &e.1)
);
iterator!("The keys of a [`SortedMap`], in order.", Keys, &'a K, |e| {
    &e.0
});
iterator!(
    "The values of a [`SortedMap`], in key order.",
    Values,
    &'a V,
    |e| &e.1
);

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = alloc::vec::IntoIter<(K, V)>;

    /// The entries in key order.
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = SortedMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

/// A set ordered like `BTreeSet`, on a sorted `Vec` (see the module docs).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SortedSet<T> {
    map: SortedMap<T, ()>,
}

impl<T: fmt::Debug> fmt::Debug for SortedSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.map.keys()).finish()
    }
}

impl<T: Ord> SortedSet<T> {
    /// An empty set.
    pub const fn new() -> Self {
        SortedSet {
            map: SortedMap::new(),
        }
    }

    /// Adds `value`; false when it was there already.
    pub fn insert(&mut self, value: T) -> bool {
        self.map.insert(value, ()).is_none()
    }

    /// Whether the set has `value`.
    pub fn contains<Q>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.contains_key(value)
    }

    /// Takes `value` out; false when it was not there.
    pub fn remove<Q>(&mut self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.remove(value).is_some()
    }
}

impl<T> SortedSet<T> {
    /// How many values.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Removes every value.
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// The values in order.
    pub fn iter(&self) -> Keys<'_, T, ()> {
        self.map.keys()
    }
}

impl<T: Ord> Extend<T> for SortedSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for value in iter {
            self.insert(value);
        }
    }
}

impl<T: Ord> FromIterator<T> for SortedSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut set = SortedSet::new();
        set.extend(iter);
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};
    use alloc::vec;

    #[test]
    fn keeps_keys_in_order_like_a_btree_map() {
        let mut map = SortedMap::new();
        let mut reference = alloc::collections::BTreeMap::new();
        // A fixed shuffle with repeats: inserts, replacements and removals in mixed order.
        for (n, k) in [5u64, 1, 9, 1, 7, 3, 9, 0, 4, 8, 2, 6, 5]
            .into_iter()
            .enumerate()
        {
            assert_eq!(map.insert(k, n), reference.insert(k, n));
            if n % 4 == 3 {
                assert_eq!(map.remove(&(k + 1)), reference.remove(&(k + 1)));
            }
            assert!(map.iter().eq(reference.iter()));
        }
        assert_eq!(map.len(), reference.len());
        assert_eq!(map.get(&9), reference.get(&9));
        assert_eq!(map.get(&10), None);
        *map.get_mut(&9).unwrap() += 100;
        assert_eq!(map.get(&9), Some(&106));
        assert_eq!(*map.get_or_insert_with(10, || 1), 1);
        assert_eq!(*map.get_or_insert_with(10, || 2), 1);
        map.retain(|k, _| k % 2 == 0);
        assert_eq!(
            map.keys().copied().collect::<Vec<_>>(),
            vec![0, 2, 4, 6, 8, 10]
        );
        assert_eq!(map.iter().next_back(), Some((&10, &1)));
        assert_eq!(map.into_iter().map(|(k, _)| k).sum::<u64>(), 30);
    }

    #[test]
    fn looks_up_string_keys_by_str() {
        let mut map: SortedMap<String, u32> = ["b", "a", "c"]
            .iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), i as u32))
            .collect();
        assert_eq!(map.get("a"), Some(&1));
        assert!(map.contains_key("c"));
        assert_eq!(map.remove("b"), Some(0));
        assert_eq!(map.values().copied().collect::<Vec<_>>(), vec![1, 2]);

        let mut set: SortedSet<String> = SortedSet::new();
        assert!(set.insert("x".into()));
        assert!(!set.insert("x".into()));
        set.extend(["a".to_string(), "m".to_string()]);
        assert!(set.contains("m"));
        assert!(set.remove("a"));
        assert!(!set.remove("a"));
        assert_eq!(
            set.iter().map(String::as_str).collect::<Vec<_>>(),
            vec!["m", "x"]
        );
    }
}
