//! Which revision of a SidecarSet a pod gets (upstream `getSuitableRevisionSidecarSet`).
//!
//! On **create**: without `injectionStrategy.revision` (or with neither `revisionName` nor
//! `customVersion`) the latest; otherwise the specific history SidecarSet — when `updateStrategy.paused`, or
//! with policy `Always`, or with policy `Partial` when `updateStrategy.selector` is set and does not match the
//! pod; with `Partial` otherwise a draw decides: no partition or an integer one → latest, a percentage `p` →
//! the specific revision when the draw is `<= p`.
//!
//! On **update**: the latest when the pod's recorded hash is the current one; else the revision whose name
//! the new pod (then the old pod) recorded; else the latest.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{SidecarSet, SidecarSetInjectRevisionPolicy};
use kruise_api::label_selector;

use crate::error::Error;
use crate::hash::{self, name_of};
use crate::random::Chance;
use crate::records;
use crate::revision;

/// The history SidecarSet named by `revisionName`, else the newest with `customVersion`; `Ok(None)` when
/// neither is set.
///
/// # Errors
/// [`Error::RevisionNotFound`] / [`Error::CustomVersionNotFound`] when the revision is not among
/// `revisions`; [`Error::RevisionData`] when it cannot be restored.
pub fn specific_history(
    sidecarset: &SidecarSet,
    revisions: &[ControllerRevision],
) -> Result<Option<SidecarSet>, Error> {
    let Some(info) = &sidecarset.spec.injection_strategy.revision else {
        return Ok(None);
    };
    let name = name_of(sidecarset);
    let found = if let Some(revision_name) = &info.revision_name {
        revisions
            .iter()
            .find(|revision| revision.metadata.name.as_deref() == Some(revision_name.as_str()))
            .ok_or_else(|| Error::RevisionNotFound {
                sidecarset: name.to_owned(),
                revision: revision_name.clone(),
            })?
    } else if let Some(version) = &info.custom_version {
        revision::newest_with_custom_version(revisions, name, version).ok_or_else(|| {
            Error::CustomVersionNotFound {
                sidecarset: name.to_owned(),
                custom_version: version.clone(),
            }
        })?
    } else {
        return Ok(None);
    };
    revision::restore(sidecarset, found).map(Some)
}

/// Go's `ParsePercentageAsFloat64`: `"<number>%"` as a fraction.
fn percentage(text: &str) -> Option<f64> {
    let number: f64 = text.strip_suffix('%')?.parse().ok()?;
    number.is_finite().then_some(number / 100.0)
}

/// The SidecarSet (latest or a restored history one) to inject into a pod being created.
///
/// # Errors
/// A revision lookup fails, the update selector is invalid, or a `Partial` percentage does not parse.
pub fn for_create<'a>(
    sidecarset: &'a SidecarSet,
    pod: &Pod,
    revisions: &[ControllerRevision],
    chance: &mut dyn Chance,
) -> Result<Cow<'a, SidecarSet>, Error> {
    let Some(info) = &sidecarset.spec.injection_strategy.revision else {
        return Ok(Cow::Borrowed(sidecarset));
    };
    if info.revision_name.is_none() && info.custom_version.is_none() {
        return Ok(Cow::Borrowed(sidecarset));
    }
    let specific = match specific_history(sidecarset, revisions)? {
        Some(history) => Cow::Owned(history),
        None => Cow::Borrowed(sidecarset),
    };
    let strategy = &sidecarset.spec.update_strategy;
    if strategy.paused {
        return Ok(specific);
    }
    if info.policy != Some(SidecarSetInjectRevisionPolicy::Partial) {
        return Ok(specific);
    }
    if let Some(selector) = &strategy.selector {
        let empty = BTreeMap::new();
        let matched =
            label_selector::matches(selector, pod.metadata.labels.as_ref().unwrap_or(&empty))
                .map_err(|source| Error::Selector {
                    sidecarset: name_of(sidecarset).to_owned(),
                    field: "spec.updateStrategy.selector",
                    source,
                })?;
        if !matched {
            return Ok(specific);
        }
    }
    match &strategy.partition {
        None | Some(IntOrString::Int(_)) => Ok(Cow::Borrowed(sidecarset)),
        Some(IntOrString::String(text)) => {
            let probability = percentage(text).ok_or_else(|| Error::Partition {
                sidecarset: name_of(sidecarset).to_owned(),
                value: text.clone(),
            })?;
            if chance.next_f64() <= probability {
                Ok(specific)
            } else {
                Ok(Cow::Borrowed(sidecarset))
            }
        }
    }
}

/// The SidecarSet to use for a pod being updated.
///
/// # Errors
/// [`Error::RevisionData`] when the recorded revision cannot be restored; [`Error::Encoding`] when the
/// SidecarSet hash must be computed and cannot.
pub fn for_update<'a>(
    sidecarset: &'a SidecarSet,
    pod: &Pod,
    old_pod: &Pod,
    revisions: &[ControllerRevision],
) -> Result<Cow<'a, SidecarSet>, Error> {
    let name = name_of(sidecarset);
    let current = hash::recorded_or_computed(sidecarset)?;
    if records::recorded_hash(pod, name) == current.hash {
        return Ok(Cow::Borrowed(sidecarset));
    }
    let own = revision::of_sidecarset(revisions, name);
    for candidate in [pod, old_pod] {
        let recorded = records::recorded_controller_revision(candidate, name);
        if let Some(found) = own
            .iter()
            .find(|revision| revision.metadata.name.as_deref() == Some(recorded.as_str()))
        {
            return revision::restore(sidecarset, found).map(Cow::Owned);
        }
    }
    Ok(Cow::Borrowed(sidecarset))
}

#[cfg(test)]
mod tests {
    use super::percentage;

    #[test]
    fn percentages() {
        assert_eq!(percentage("50%"), Some(0.5));
        assert_eq!(percentage("0.5%"), Some(0.005));
        assert_eq!(percentage("50"), None);
        assert_eq!(percentage("x%"), None);
    }
}
