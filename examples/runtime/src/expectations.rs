//! Expectations: what a controller has just done and not yet seen in its cache, so it never acts twice
//! on a stale cache (Kubernetes' `ControllerExpectations`, upstream's scale and resourceVersion
//! expectations). Pure state: the caller passes the time.
//!
//! * Scale: after creating or deleting a pod for an owner, expect to observe it; until every expectation
//!   of an owner is observed (or has timed out), the owner's next reconcile must not scale again.
//! * Resource versions: after updating an object, expect the cache to reach at least that
//!   `resourceVersion` before trusting the cached copy.
//!
//! ```
//! use std::time::Duration;
//! use kruise_runtime::expectations::{Expectations, Operation};
//!
//! let mut expectations = Expectations::new(Duration::from_secs(300));
//! let now = Duration::ZERO;
//! expectations.expect("default/demo", Operation::Create, "demo-abcde", now);
//! assert!(!expectations.satisfied("default/demo", now));
//! expectations.observe("default/demo", Operation::Create, "demo-abcde");
//! assert!(expectations.satisfied("default/demo", now));
//! ```
//!
//! A controller holds them as [`SharedExpectations`]: one copy behind a lock for its reconciles and
//! watches, on a monotonic clock of its own.

mod shared;

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

pub use self::shared::SharedExpectations;

/// How long an owner's unobserved creates and deletes block it before they are given up: 5 minutes, as
/// Kubernetes' `ControllerExpectations` (`ExpectationsTimeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// What was done to an owned object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// It was created (expect to see it appear).
    Create,
    /// It was deleted (expect to see it disappear, or get a deletion timestamp).
    Delete,
}

#[derive(Clone, Debug, Default)]
struct Pending {
    objects: BTreeSet<(Operation, String)>,
    since: Duration,
}

/// Per-owner scale expectations and per-object resourceVersion expectations.
#[derive(Clone, Debug)]
pub struct Expectations {
    timeout: Duration,
    scale: HashMap<String, Pending>,
    versions: HashMap<String, u64>,
}

impl Expectations {
    /// Expectations that are given up `timeout` after the owner's first pending one (Kubernetes uses 5
    /// minutes): a lost watch event must not block an owner forever.
    #[must_use]
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            scale: HashMap::new(),
            versions: HashMap::new(),
        }
    }

    /// Records that `operation` was done to `object` for `owner` at `now` (a monotonic clock).
    pub fn expect(&mut self, owner: &str, operation: Operation, object: &str, now: Duration) {
        let pending = self.scale.entry(owner.to_owned()).or_default();
        if pending.objects.is_empty() {
            pending.since = now;
        }
        pending.objects.insert((operation, object.to_owned()));
    }

    /// The cache showed the result of `operation` on `object` (or the operation failed, so it never will).
    pub fn observe(&mut self, owner: &str, operation: Operation, object: &str) {
        if let Some(pending) = self.scale.get_mut(owner) {
            pending.objects.remove(&(operation, object.to_owned()));
            if pending.objects.is_empty() {
                self.scale.remove(owner);
            }
        }
    }

    /// Whether the owner may act on its cache: nothing pending, or the pending ones timed out (then they
    /// are dropped).
    pub fn satisfied(&mut self, owner: &str, now: Duration) -> bool {
        let Some(pending) = self.scale.get(owner) else {
            return true;
        };
        if now.saturating_sub(pending.since) >= self.timeout {
            tracing::warn!(%owner, pending = pending.objects.len(), "expectations timed out; trusting the cache");
            self.scale.remove(owner);
            return true;
        }
        false
    }

    /// How many operations of `owner` are still unobserved.
    #[must_use]
    pub fn pending(&self, owner: &str) -> usize {
        self.scale
            .get(owner)
            .map_or(0, |pending| pending.objects.len())
    }

    /// Forgets an owner (it was deleted).
    pub fn forget(&mut self, owner: &str) {
        self.scale.remove(owner);
    }

    /// After writing `object`, the cache must reach `resource_version` before its copy is trusted. Versions
    /// that are not decimal integers (opaque to clients in theory, integers in practice) are ignored.
    pub fn expect_version(&mut self, object: &str, resource_version: &str) {
        if let Ok(version) = resource_version.parse::<u64>() {
            let entry = self.versions.entry(object.to_owned()).or_default();
            *entry = (*entry).max(version);
        }
    }

    /// Drops the resourceVersion expectation of `object` (it was deleted: no newer copy will come).
    pub fn forget_version(&mut self, object: &str) {
        self.versions.remove(object);
    }

    /// Whether the cached copy at `resource_version` is at least as new as the last write; a satisfied
    /// expectation is dropped.
    pub fn version_satisfied(&mut self, object: &str, resource_version: &str) -> bool {
        let Some(&expected) = self.versions.get(object) else {
            return true;
        };
        let fresh = resource_version
            .parse::<u64>()
            .is_ok_and(|seen| seen >= expected);
        if fresh {
            self.versions.remove(object);
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(300);

    #[test]
    fn an_owner_waits_for_every_operation() {
        let mut expectations = Expectations::new(TIMEOUT);
        let now = Duration::from_secs(10);
        expectations.expect("ns/a", Operation::Create, "a-1", now);
        expectations.expect("ns/a", Operation::Create, "a-2", now);
        expectations.expect("ns/a", Operation::Delete, "a-0", now);
        assert_eq!(expectations.pending("ns/a"), 3);
        assert!(expectations.satisfied("ns/b", now), "other owners are free");
        expectations.observe("ns/a", Operation::Create, "a-1");
        expectations.observe("ns/a", Operation::Delete, "a-1");
        expectations.observe("ns/a", Operation::Create, "a-2");
        assert!(!expectations.satisfied("ns/a", now));
        expectations.observe("ns/a", Operation::Delete, "a-0");
        assert!(expectations.satisfied("ns/a", now));
    }

    #[test]
    fn expectations_time_out() {
        let mut expectations = Expectations::new(TIMEOUT);
        expectations.expect("ns/a", Operation::Create, "a-1", Duration::from_secs(1));
        assert!(!expectations.satisfied("ns/a", Duration::from_secs(300)));
        assert!(expectations.satisfied("ns/a", Duration::from_secs(301)));
        assert_eq!(expectations.pending("ns/a"), 0);
        expectations.expect("ns/a", Operation::Create, "a-2", Duration::from_secs(400));
        expectations.forget("ns/a");
        assert!(expectations.satisfied("ns/a", Duration::from_secs(400)));
    }

    #[test]
    fn resource_versions_must_catch_up() {
        let mut expectations = Expectations::new(TIMEOUT);
        expectations.expect_version("ns/a", "120");
        expectations.expect_version("ns/a", "100");
        assert!(!expectations.version_satisfied("ns/a", "119"));
        assert!(!expectations.version_satisfied("ns/a", "garbage"));
        assert!(expectations.version_satisfied("ns/a", "120"));
        assert!(
            expectations.version_satisfied("ns/a", "1"),
            "satisfied expectations are dropped"
        );
        expectations.expect_version("ns/c", "7");
        expectations.forget_version("ns/c");
        assert!(expectations.version_satisfied("ns/c", "1"));
        expectations.expect_version("ns/b", "opaque");
        assert!(expectations.version_satisfied("ns/b", "1"));
    }
}
