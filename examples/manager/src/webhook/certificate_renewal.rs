//! When the webhook's generated certificates are renewed (pure: `now` is an argument).
//!
//! The manager keeps a CA and rotates the serving certificate it signs, so a renewed serving certificate
//! is trusted by the caBundle already written everywhere. Both are renewed once less than a third of their
//! validity remains. A CA is replaced in two steps, so no replica ever serves a certificate the API server
//! does not trust yet: the new CA first joins the bundle (next to the old one, which signed the serving
//! certificate still in use) and becomes the signing CA; only once it has been in the bundle for
//! [`RenewalPolicy::ca_propagation`] (time for the leader to write the bundle into the webhook
//! configurations and CRDs) is a serving certificate signed by it.
//!
//! ```
//! use chrono::{TimeDelta, TimeZone, Utc};
//! use kruise_manager::webhook::certificate_renewal::{Inspection, Renewal, RenewalPolicy, Validity, decide};
//!
//! let issued = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
//! let policy = RenewalPolicy::default();
//! let inspection = Inspection {
//!     serving: Some(Validity::starting(issued, policy.serving_validity)),
//!     hosts_fit: true,
//!     signing_ca: Some(Validity::starting(issued, policy.ca_validity)),
//!     issued_by_signing_ca: true,
//! };
//! assert_eq!(decide(issued + TimeDelta::days(200), &inspection, &policy), Renewal::Keep);
//! assert_eq!(decide(issued + TimeDelta::days(250), &inspection, &policy), Renewal::RenewServing);
//! ```

use chrono::{DateTime, TimeDelta, Utc};

/// How far back generated certificates start (clocks of replicas and the API server differ a little).
pub const BACKDATE: TimeDelta = TimeDelta::hours(1);

/// How long generated certificates live and when a new CA may sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenewalPolicy {
    /// The CA's validity.
    pub ca_validity: TimeDelta,
    /// The serving certificate's validity (never beyond its CA's).
    pub serving_validity: TimeDelta,
    /// How long a new CA is in the bundle before it signs the serving certificate.
    pub ca_propagation: TimeDelta,
}

impl Default for RenewalPolicy {
    /// A CA of two years, a serving certificate of one year, one hour for a new CA to reach every caBundle.
    fn default() -> Self {
        Self {
            ca_validity: TimeDelta::days(730),
            serving_validity: TimeDelta::days(365),
            ca_propagation: TimeDelta::hours(1),
        }
    }
}

/// When a certificate is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validity {
    /// Not valid before.
    pub not_before: DateTime<Utc>,
    /// Not valid after.
    pub not_after: DateTime<Utc>,
}

impl Validity {
    /// The validity of a certificate generated at `issued` for `length` (starting [`BACKDATE`] earlier).
    #[must_use]
    pub fn starting(issued: DateTime<Utc>, length: TimeDelta) -> Self {
        Self {
            not_before: issued - BACKDATE,
            not_after: issued + length,
        }
    }

    /// Whether the certificate is valid at `now`.
    #[must_use]
    pub fn contains(&self, now: DateTime<Utc>) -> bool {
        self.not_before <= now && now < self.not_after
    }

    /// Whether less than a third of the validity remains at `now`.
    #[must_use]
    pub fn renewal_due(&self, now: DateTime<Utc>) -> bool {
        let length = self.not_after - self.not_before;
        now >= self.not_after - length / 3
    }

    /// How long ago the certificate was generated (`not_before` plus [`BACKDATE`]).
    #[must_use]
    pub fn age(&self, now: DateTime<Utc>) -> TimeDelta {
        now - (self.not_before + BACKDATE)
    }
}

/// What is known about the current material.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inspection {
    /// The serving certificate's validity (`None`: missing or unreadable).
    pub serving: Option<Validity>,
    /// Whether the serving certificate was made for the host names wanted now.
    pub hosts_fit: bool,
    /// The validity of the CA that signs (the first of the bundle, whose key is kept); `None` when there is
    /// none or its key is missing (material written by an older manager).
    pub signing_ca: Option<Validity>,
    /// Whether the signing CA issued the serving certificate.
    pub issued_by_signing_ca: bool,
}

/// What to do with the material.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Nothing.
    Keep,
    /// A new serving certificate from the signing CA; the bundle stays.
    RenewServing,
    /// A new signing CA joins the bundle (the old CAs stay); the serving certificate stays for now.
    RotateCa,
    /// The serving certificate is unusable (missing, expired, other host names): a new CA and serving
    /// certificate at once (the old CAs stay in the bundle).
    Regenerate,
}

/// The renewal the material needs at `now`.
#[must_use]
pub fn decide(now: DateTime<Utc>, inspection: &Inspection, policy: &RenewalPolicy) -> Renewal {
    let Some(serving) = inspection.serving.filter(|serving| serving.contains(now)) else {
        return Renewal::Regenerate;
    };
    if !inspection.hosts_fit {
        return Renewal::Regenerate;
    }
    let Some(ca) = inspection
        .signing_ca
        .filter(|ca| ca.contains(now) && !ca.renewal_due(now))
    else {
        return Renewal::RotateCa;
    };
    let serving_due = serving.renewal_due(now) || !inspection.issued_by_signing_ca;
    if serving_due && ca.age(now) >= policy.ca_propagation {
        Renewal::RenewServing
    } else {
        Renewal::Keep
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
    }

    fn healthy(policy: &RenewalPolicy) -> Inspection {
        Inspection {
            serving: Some(Validity::starting(start(), policy.serving_validity)),
            hosts_fit: true,
            signing_ca: Some(Validity::starting(start(), policy.ca_validity)),
            issued_by_signing_ca: true,
        }
    }

    #[test]
    fn renewal_is_due_when_a_third_remains() {
        let validity = Validity {
            not_before: start(),
            not_after: start() + TimeDelta::days(300),
        };
        assert!(!validity.renewal_due(start() + TimeDelta::days(199)));
        assert!(validity.renewal_due(start() + TimeDelta::days(200)));
        assert!(validity.contains(start()));
        assert!(!validity.contains(start() + TimeDelta::days(300)));
        assert_eq!(
            Validity::starting(start(), TimeDelta::days(1)).age(start() + TimeDelta::hours(2)),
            TimeDelta::hours(2)
        );
    }

    #[test]
    fn the_serving_certificate_is_renewed_before_it_expires() {
        let policy = RenewalPolicy::default();
        let inspection = healthy(&policy);
        assert_eq!(decide(start(), &inspection, &policy), Renewal::Keep);
        assert_eq!(
            decide(start() + TimeDelta::days(240), &inspection, &policy),
            Renewal::Keep
        );
        assert_eq!(
            decide(start() + TimeDelta::days(245), &inspection, &policy),
            Renewal::RenewServing
        );
    }

    #[test]
    fn unusable_serving_certificates_are_regenerated() {
        let policy = RenewalPolicy::default();
        let expired = start() + TimeDelta::days(366);
        assert_eq!(
            decide(expired, &healthy(&policy), &policy),
            Renewal::Regenerate
        );
        let other_hosts = Inspection {
            hosts_fit: false,
            ..healthy(&policy)
        };
        assert_eq!(decide(start(), &other_hosts, &policy), Renewal::Regenerate);
        let missing = Inspection {
            serving: None,
            ..healthy(&policy)
        };
        assert_eq!(decide(start(), &missing, &policy), Renewal::Regenerate);
    }

    #[test]
    fn a_new_ca_signs_only_after_it_reached_the_bundles() {
        let policy = RenewalPolicy::default();
        // The CA is due (a third of two years left) while the serving certificate of the old CA is fine.
        let rotation = start() + TimeDelta::days(490);
        let old = Inspection {
            serving: Some(Validity::starting(
                start() + TimeDelta::days(400),
                policy.serving_validity,
            )),
            ..healthy(&policy)
        };
        assert_eq!(decide(rotation, &old, &policy), Renewal::RotateCa);
        // After the rotation the serving certificate is not the new CA's, but the CA is too young to sign.
        let rotated = Inspection {
            signing_ca: Some(Validity::starting(rotation, policy.ca_validity)),
            issued_by_signing_ca: false,
            ..old
        };
        assert_eq!(
            decide(rotation + TimeDelta::minutes(59), &rotated, &policy),
            Renewal::Keep
        );
        assert_eq!(
            decide(rotation + TimeDelta::hours(1), &rotated, &policy),
            Renewal::RenewServing
        );
    }

    #[test]
    fn material_without_a_ca_key_gets_a_signing_ca_first() {
        // What an older manager wrote: a CA until year 4096 whose key was never kept.
        let policy = RenewalPolicy::default();
        let legacy = Inspection {
            serving: Some(Validity {
                not_before: start() - TimeDelta::days(10_000),
                not_after: Utc.with_ymd_and_hms(4096, 1, 1, 0, 0, 0).unwrap(),
            }),
            hosts_fit: true,
            signing_ca: None,
            issued_by_signing_ca: false,
        };
        assert_eq!(decide(start(), &legacy, &policy), Renewal::RotateCa);
        let expired_ca = Inspection {
            signing_ca: Some(Validity::starting(
                start() - TimeDelta::days(800),
                policy.ca_validity,
            )),
            ..healthy(&policy)
        };
        assert_eq!(decide(start(), &expired_ca, &policy), Renewal::RotateCa);
    }
}
