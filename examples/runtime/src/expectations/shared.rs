//! [`Expectations`] as a controller holds them: behind a lock, so that its reconciles and its watches
//! share one copy, and timed by a monotonic clock started with them, so that callers need not pass `now`.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Expectations, Operation};

/// One controller's expectations, shared by its concurrent reconciles and the watches that satisfy them.
///
/// ```
/// use std::time::Duration;
/// use kruise_runtime::expectations::{Operation, SharedExpectations};
///
/// let expectations = SharedExpectations::new(Duration::from_secs(300));
/// expectations.expect("owner-uid", Operation::Create, "pod/default/web-1");
/// assert_eq!(expectations.satisfied("owner-uid"), (false, 1));
/// expectations.observe_all(&[(
///     "owner-uid".to_owned(),
///     Operation::Create,
///     "pod/default/web-1".to_owned(),
/// )]);
/// assert_eq!(expectations.satisfied("owner-uid"), (true, 0));
/// ```
#[derive(Debug)]
pub struct SharedExpectations {
    expectations: Mutex<Expectations>,
    started: Instant,
}

impl SharedExpectations {
    /// No expectations yet; pending ones are given up `timeout` after an owner's first (see
    /// [`Expectations::new`]).
    #[must_use]
    pub fn new(timeout: Duration) -> Self {
        Self {
            expectations: Mutex::new(Expectations::new(timeout)),
            started: Instant::now(),
        }
    }

    fn with_expectations<T>(&self, f: impl FnOnce(&mut Expectations, Duration) -> T) -> T {
        let now = self.started.elapsed();
        let mut expectations = self
            .expectations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut expectations, now)
    }

    /// Records that `object` is being created or deleted for the owner `uid`.
    pub fn expect(&self, uid: &str, operation: Operation, object: &str) {
        self.with_expectations(|e, now| e.expect(uid, operation, object, now));
    }

    /// The result of `operation` on `object` was seen (or the operation failed).
    pub fn observe(&self, uid: &str, operation: Operation, object: &str) {
        self.with_expectations(|e, _| e.observe(uid, operation, object));
    }

    /// [`Self::observe`] for each `(uid, operation, object)`, under one lock.
    pub fn observe_all(&self, seen: &[(String, Operation, String)]) {
        if seen.is_empty() {
            return;
        }
        self.with_expectations(|e, _| {
            for (uid, operation, object) in seen {
                e.observe(uid, *operation, object);
            }
        });
    }

    /// Whether the owner `uid` may act on the cache, and how many operations are still unobserved.
    pub fn satisfied(&self, uid: &str) -> (bool, usize) {
        self.with_expectations(|e, now| (e.satisfied(uid, now), e.pending(uid)))
    }

    /// Forgets the owner `uid` (it is gone).
    pub fn forget(&self, uid: &str) {
        self.with_expectations(|e, _| e.forget(uid));
    }

    /// After a write returned `resource_version`, the cache must reach it before `object` is trusted.
    pub fn expect_version(&self, object: &str, resource_version: &str) {
        self.with_expectations(|e, _| e.expect_version(object, resource_version));
    }

    /// Whether the cached `object` at `resource_version` is as new as the last write.
    pub fn version_satisfied(&self, object: &str, resource_version: &str) -> bool {
        self.with_expectations(|e, _| e.version_satisfied(object, resource_version))
    }

    /// Drops the version expectation of a deleted object.
    pub fn forget_version(&self, object: &str) {
        self.with_expectations(|e, _| e.forget_version(object));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn reconciles_and_watches_share_one_copy() {
        let expectations = Arc::new(SharedExpectations::new(Duration::from_secs(300)));
        expectations.expect("a", Operation::Create, "pod/ns/a-1");
        expectations.expect("a", Operation::Delete, "pod/ns/a-0");
        let watch = Arc::clone(&expectations);
        std::thread::spawn(move || {
            watch.observe_all(&[("a".to_owned(), Operation::Create, "pod/ns/a-1".to_owned())]);
        })
        .join()
        .unwrap();
        assert_eq!(expectations.satisfied("a"), (false, 1));
        expectations.observe("a", Operation::Delete, "pod/ns/a-0");
        assert_eq!(expectations.satisfied("a"), (true, 0));
        expectations.expect("a", Operation::Create, "pod/ns/a-2");
        expectations.forget("a");
        assert_eq!(expectations.satisfied("a"), (true, 0), "a forgotten owner");
    }

    #[test]
    fn versions_are_kept_until_seen_or_forgotten() {
        let expectations = SharedExpectations::new(Duration::from_secs(300));
        expectations.expect_version("pod/ns/a", "12");
        assert!(!expectations.version_satisfied("pod/ns/a", "11"));
        assert!(expectations.version_satisfied("pod/ns/a", "12"));
        expectations.expect_version("pod/ns/b", "5");
        expectations.forget_version("pod/ns/b");
        assert!(expectations.version_satisfied("pod/ns/b", "1"));
    }
}
