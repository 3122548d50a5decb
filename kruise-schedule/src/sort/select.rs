//! Top-k selection: the first `k` items of an order without sorting everything (`O(n + k log k)`).
//!
//! ```
//! use kruise_schedule::sort::select::first_k;
//!
//! let values = [50, 10, 40, 20, 30];
//! assert_eq!(first_k(vec![0, 1, 2, 3, 4], 2, |&i| values[i]), [1, 3]);
//! ```

/// The first `k` of `items` in the order of `key` (ascending), sorted. Keys are computed once per item; with
/// keys that are unique (the planners' keys end with the pod name) the result does not depend on the input
/// order.
pub fn first_k<T, K: Ord>(items: Vec<T>, k: usize, mut key: impl FnMut(&T) -> K) -> Vec<T> {
    if k == 0 {
        return Vec::new();
    }
    let mut keyed: Vec<(K, T)> = items.into_iter().map(|item| (key(&item), item)).collect();
    if k < keyed.len() {
        keyed.select_nth_unstable_by(k - 1, |a, b| a.0.cmp(&b.0));
        keyed.truncate(k);
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, item)| item).collect()
}

/// The item with the largest key, if any.
pub fn last<T: Copy, K: Ord>(items: &[T], mut key: impl FnMut(&T) -> K) -> Option<T> {
    items
        .iter()
        .map(|item| (key(item), *item))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, item)| item)
}
