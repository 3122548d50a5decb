//! The `SidecarSetUpgradable` pod condition: its message is a JSON object SidecarSet name → whether that
//! SidecarSet can upgrade the pod; the status is `True` (reason `AllSidecarsetUpgradable`) only when every
//! entry is true, else `False` (reason `UpdateImmutableField`). Written like Kubernetes' `UpdatePodCondition`:
//! the transition time moves only when the status changes, and nothing is written when nothing changed.

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::jiff::Timestamp;
use kruise_api::annotations::{self, AnnotationError, SidecarSetUpgradableMessage};
use kruise_api::keys::sidecarset as keys;

use crate::records;

/// Records in the pod's `SidecarSetUpgradable` condition whether `sidecarset` can upgrade it. Returns whether
/// the condition changed.
///
/// # Errors
/// The existing condition's message is not the JSON object upstream writes.
pub fn set_upgradable(
    pod: &mut Pod,
    sidecarset: &str,
    upgradable: bool,
    now: Timestamp,
) -> Result<bool, AnnotationError> {
    let status = pod.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let existing = conditions
        .iter()
        .position(|condition| condition.type_ == keys::UPGRADABLE_CONDITION);
    let mut condition = existing
        .and_then(|index| conditions.get(index))
        .cloned()
        .unwrap_or_else(|| PodCondition {
            type_: keys::UPGRADABLE_CONDITION.to_owned(),
            ..PodCondition::default()
        });
    let mut message: SidecarSetUpgradableMessage = match condition.message.as_deref() {
        None | Some("") => SidecarSetUpgradableMessage::new(),
        Some(text) => annotations::parse(keys::UPGRADABLE_CONDITION, text)?,
    };
    message.insert(sidecarset.to_owned(), upgradable);
    let all = message.values().all(|value| *value);
    condition.status = if all { "True" } else { "False" }.to_owned();
    condition.reason = Some(
        if all {
            keys::ALL_UPGRADABLE_REASON
        } else {
            keys::UPDATE_IMMUTABLE_FIELD_REASON
        }
        .to_owned(),
    );
    condition.message = Some(records::to_annotation_value(&message));
    let Some(index) = existing else {
        condition.last_transition_time = Some(records::to_time(now));
        conditions.push(condition);
        return Ok(true);
    };
    let Some(old) = conditions.get_mut(index) else {
        return Ok(false);
    };
    if condition.status == old.status {
        condition
            .last_transition_time
            .clone_from(&old.last_transition_time);
    } else {
        condition.last_transition_time = Some(records::to_time(now));
    }
    let changed = *old != condition;
    *old = condition;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_true_or_false_with_reasons() {
        let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
        let later: Timestamp = "2024-05-01T11:00:00Z".parse().unwrap();
        let mut pod = Pod::default();
        assert!(set_upgradable(&mut pod, "b", true, now).unwrap());
        assert!(!set_upgradable(&mut pod, "b", true, later).unwrap());
        assert!(set_upgradable(&mut pod, "a", false, later).unwrap());
        let condition = &pod.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
        assert_eq!(condition.status, "False");
        assert_eq!(condition.reason.as_deref(), Some("UpdateImmutableField"));
        assert_eq!(
            condition.message.as_deref(),
            Some(r#"{"a":false,"b":true}"#)
        );
        assert_eq!(condition.last_transition_time.as_ref().unwrap().0, later);
        assert!(set_upgradable(&mut pod, "a", true, later).unwrap());
        let condition = &pod.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
        assert_eq!(condition.reason.as_deref(), Some("AllSidecarsetUpgradable"));
        let mut bad = Pod {
            status: Some(k8s_openapi::api::core::v1::PodStatus {
                conditions: Some(vec![PodCondition {
                    type_: keys::UPGRADABLE_CONDITION.into(),
                    message: Some("nope".into()),
                    ..PodCondition::default()
                }]),
                ..Default::default()
            }),
            ..Pod::default()
        };
        assert!(set_upgradable(&mut bad, "a", true, now).is_err());
    }
}
