//! Leader election on a `coordination.k8s.io/v1` Lease, as decisions (client-go's `leaderelection`
//! semantics, without I/O): given the Lease as read and two clocks, what to write, if anything.
//!
//! * No Lease: create it, holding it.
//! * Held by someone else: it stays theirs until `leaseDurationSeconds` have passed **on our monotonic
//!   clock** since we last saw the record change (never comparing our wall clock with theirs).
//! * Held by nobody (released), expired, or ours: write it with us as holder (`renewTime` = now;
//!   `acquireTime` and `leaseTransitions + 1` when the holder changes).
//!
//! ```
//! use std::time::Duration;
//! use kruise_manager::leader::decision::{Attempt, Candidate};
//!
//! let wall = "2024-05-01T10:00:00Z".parse().unwrap();
//! let mut a = Candidate::new("a", Duration::from_secs(15));
//! let Attempt::Write(lease) = a.attempt(None, Duration::ZERO, wall) else { unreachable!() };
//! assert_eq!(lease.holder_identity.as_deref(), Some("a"));
//!
//! let mut b = Candidate::new("b", Duration::from_secs(15));
//! assert_eq!(b.attempt(Some(&lease), Duration::from_secs(1), wall), Attempt::Held { holder: "a".into() });
//! // a stops renewing; 15 s after b first saw the record, b takes over.
//! assert!(matches!(b.attempt(Some(&lease), Duration::from_secs(16), wall), Attempt::Write(_)));
//! ```

use std::time::Duration;

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

/// The timing of an election, with client-go's defaults (15 s, 10 s, 2 s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderTiming {
    /// How long a lease is valid after its last renewal; what a standby waits before taking over.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leading.
    pub renew_deadline: Duration,
    /// Time between attempts (to acquire, and to renew).
    pub retry_period: Duration,
}

impl Default for LeaderTiming {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl LeaderTiming {
    /// client-go's sanity rules: lease duration > renew deadline > 1.2 × retry period > 0.
    ///
    /// # Errors
    /// Which rule is broken.
    pub fn validate(&self) -> Result<(), String> {
        if self.retry_period.is_zero() {
            return Err("the retry period must be positive".into());
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(format!(
                "the lease duration ({:?}) must be longer than the renew deadline ({:?})",
                self.lease_duration, self.renew_deadline
            ));
        }
        if self.renew_deadline.as_secs_f64() <= 1.2 * self.retry_period.as_secs_f64() {
            return Err(format!(
                "the renew deadline ({:?}) must be longer than 1.2 x the retry period ({:?})",
                self.renew_deadline, self.retry_period
            ));
        }
        Ok(())
    }
}

/// What to do after reading the Lease.
#[derive(Clone, Debug, PartialEq)]
pub enum Attempt {
    /// Write this spec: create the Lease if it did not exist, else update it (with the `resourceVersion`
    /// that was read, so a concurrent writer makes this fail with 409).
    Write(LeaseSpec),
    /// Someone else validly holds the lease.
    Held {
        /// Their identity.
        holder: String,
    },
}

/// One participant of the election, with what it has observed.
#[derive(Clone, Debug)]
pub struct Candidate {
    identity: String,
    lease_duration: Duration,
    observed: Option<(LeaseSpec, Duration)>,
}

impl Candidate {
    /// A participant called `identity` that writes leases valid for `lease_duration`.
    #[must_use]
    pub fn new(identity: impl Into<String>, lease_duration: Duration) -> Self {
        Self {
            identity: identity.into(),
            lease_duration,
            observed: None,
        }
    }

    /// Its identity.
    #[must_use]
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Whether `lease` names this participant as holder.
    #[must_use]
    pub fn holds(&self, lease: &LeaseSpec) -> bool {
        lease.holder_identity.as_deref() == Some(self.identity.as_str())
    }

    /// Decides from the Lease as read (`None`: it does not exist). `monotonic` is a clock that only moves
    /// forward (time since some fixed instant), `wall` the time written into the Lease.
    pub fn attempt(
        &mut self,
        current: Option<&LeaseSpec>,
        monotonic: Duration,
        wall: Timestamp,
    ) -> Attempt {
        let Some(current) = current else {
            return Attempt::Write(self.acquired(None, wall));
        };
        if self
            .observed
            .as_ref()
            .is_none_or(|(seen, _)| seen != current)
        {
            self.observed = Some((current.clone(), monotonic));
        }
        let holder = current.holder_identity.as_deref().unwrap_or_default();
        if !holder.is_empty() && holder != self.identity {
            let duration = current
                .lease_duration_seconds
                .and_then(|seconds| u64::try_from(seconds).ok())
                .map_or(self.lease_duration, Duration::from_secs);
            let seen_at = self.observed.as_ref().map_or(monotonic, |(_, at)| *at);
            if seen_at.saturating_add(duration) > monotonic {
                return Attempt::Held {
                    holder: holder.to_owned(),
                };
            }
        }
        if holder == self.identity {
            let mut renewed = current.clone();
            renewed.renew_time = Some(MicroTime(wall));
            renewed.lease_duration_seconds = Some(seconds(self.lease_duration));
            return Attempt::Write(renewed);
        }
        Attempt::Write(self.acquired(Some(current), wall))
    }

    /// Records a Lease this participant just wrote successfully.
    pub fn written(&mut self, lease: &LeaseSpec, monotonic: Duration) {
        self.observed = Some((lease.clone(), monotonic));
    }

    /// The spec that gives the lease up (holder cleared, valid for 1 s, so others take over at once), or
    /// `None` when it is not ours.
    #[must_use]
    pub fn release(&self, current: &LeaseSpec, wall: Timestamp) -> Option<LeaseSpec> {
        self.holds(current).then(|| LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            acquire_time: Some(MicroTime(wall)),
            renew_time: Some(MicroTime(wall)),
            lease_transitions: current.lease_transitions,
            ..LeaseSpec::default()
        })
    }

    fn acquired(&self, previous: Option<&LeaseSpec>, wall: Timestamp) -> LeaseSpec {
        let transitions = previous.map_or(0, |lease| {
            lease
                .lease_transitions
                .unwrap_or_default()
                .saturating_add(1)
        });
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(seconds(self.lease_duration)),
            acquire_time: Some(MicroTime(wall)),
            renew_time: Some(MicroTime(wall)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}

fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(10);

    fn wall(second: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    fn secs(value: u64) -> Duration {
        Duration::from_secs(value)
    }

    fn written(candidate: &mut Candidate, current: Option<&LeaseSpec>, at: u64) -> LeaseSpec {
        match candidate.attempt(current, secs(at), wall(at as i64)) {
            Attempt::Write(lease) => {
                candidate.written(&lease, secs(at));
                lease
            }
            Attempt::Held { holder } => panic!("held by {holder}"),
        }
    }

    #[test]
    fn the_first_candidate_creates_and_renews() {
        let mut a = Candidate::new("a", LEASE);
        let created = written(&mut a, None, 0);
        assert_eq!(created.lease_transitions, Some(0));
        assert_eq!(created.lease_duration_seconds, Some(10));
        let renewed = written(&mut a, Some(&created), 2);
        assert_eq!(renewed.acquire_time, created.acquire_time);
        assert_eq!(renewed.renew_time, Some(MicroTime(wall(2))));
        assert_eq!(renewed.lease_transitions, Some(0));
    }

    #[test]
    fn a_standby_waits_while_the_leader_renews_then_takes_over() {
        let mut a = Candidate::new("a", LEASE);
        let mut b = Candidate::new("b", LEASE);
        let mut lease = written(&mut a, None, 0);
        for t in (2..30).step_by(2) {
            assert_eq!(
                b.attempt(Some(&lease), secs(t), wall(t as i64)),
                Attempt::Held { holder: "a".into() }
            );
            lease = written(&mut a, Some(&lease), t);
        }
        // a dies after its renewal at 28; b first sees that record at 30 (on its own clock).
        assert!(matches!(
            b.attempt(Some(&lease), secs(30), wall(30)),
            Attempt::Held { .. }
        ));
        assert!(matches!(
            b.attempt(Some(&lease), secs(39), wall(39)),
            Attempt::Held { .. }
        ));
        let taken = written(&mut b, Some(&lease), 40);
        assert_eq!(taken.holder_identity.as_deref(), Some("b"));
        assert_eq!(taken.lease_transitions, Some(1));
        assert_eq!(taken.acquire_time, Some(MicroTime(wall(40))));
        // a comes back and finds the lease held by b.
        assert_eq!(
            a.attempt(Some(&taken), secs(41), wall(41)),
            Attempt::Held { holder: "b".into() }
        );
    }

    #[test]
    fn expiry_uses_our_clock_not_the_holders() {
        let mut b = Candidate::new("b", LEASE);
        // A record renewed "long ago" by a skewed clock is still fresh for us when we first see it.
        let mut stale = Candidate::new("a", LEASE).acquired(None, wall(-1000));
        stale.renew_time = Some(MicroTime(wall(-1000)));
        assert!(matches!(
            b.attempt(Some(&stale), secs(100), wall(100)),
            Attempt::Held { .. }
        ));
        assert!(matches!(
            b.attempt(Some(&stale), secs(110), wall(110)),
            Attempt::Write(_)
        ));
    }

    #[test]
    fn a_released_lease_is_taken_at_once() {
        let mut a = Candidate::new("a", LEASE);
        let mut b = Candidate::new("b", LEASE);
        let lease = written(&mut a, None, 0);
        assert!(matches!(
            b.attempt(Some(&lease), secs(1), wall(1)),
            Attempt::Held { .. }
        ));
        let released = a.release(&lease, wall(2)).unwrap();
        assert_eq!(released.holder_identity, None);
        assert_eq!(released.lease_duration_seconds, Some(1));
        assert!(
            b.release(&lease, wall(2)).is_none(),
            "only the holder releases"
        );
        let taken = written(&mut b, Some(&released), 2);
        assert_eq!(taken.holder_identity.as_deref(), Some("b"));
        assert_eq!(taken.lease_transitions, Some(1));
    }

    #[test]
    fn timing_rules() {
        assert!(LeaderTiming::default().validate().is_ok());
        let bad = [(10, 10, 2), (10, 2, 2), (10, 5, 0)];
        for (lease, renew, retry) in bad {
            let timing = LeaderTiming {
                lease_duration: secs(lease),
                renew_deadline: secs(renew),
                retry_period: secs(retry),
            };
            assert!(timing.validate().is_err(), "{timing:?}");
        }
    }
}
