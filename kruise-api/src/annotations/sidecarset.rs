//! The SidecarSet bookkeeping annotations on pods.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::{AnnotationError, parse, to_value};
use crate::inplace::InPlaceUpdateState;
use crate::keys::sidecarset as keys;
use crate::omitempty::is_zero;

/// What a pod records about one SidecarSet injected into it: one value of the map in the
/// `kruise.io/sidecarset-hash` (or `-hash-without-image`) pod annotation.
///
/// The legacy form of an entry, a bare hash string, is still read (as an entry with only `hash` set).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetHashEntry {
    /// When the entry was written.
    pub update_timestamp: Option<Time>,
    /// The SidecarSet hash (or hash without image) the pod's sidecars correspond to.
    pub hash: String,
    /// The SidecarSet's name.
    pub sidecar_set_name: String,
    /// The names of the containers the SidecarSet injected, sorted.
    pub sidecar_list: Vec<String>,
    /// The ControllerRevision the sidecars came from (only in the hash annotation).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub controller_revision: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HashEntryFields {
    #[serde(default)]
    update_timestamp: Option<Time>,
    #[serde(default)]
    hash: String,
    #[serde(default)]
    sidecar_set_name: String,
    #[serde(default)]
    sidecar_list: Option<Vec<String>>,
    #[serde(default)]
    controller_revision: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum HashEntryForm {
    Legacy(String),
    Current(HashEntryFields),
}

impl<'de> Deserialize<'de> for SidecarSetHashEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match HashEntryForm::deserialize(deserializer)? {
            HashEntryForm::Legacy(hash) => Self {
                update_timestamp: None,
                hash,
                sidecar_set_name: String::new(),
                sidecar_list: Vec::new(),
                controller_revision: String::new(),
            },
            HashEntryForm::Current(fields) => Self {
                update_timestamp: fields.update_timestamp,
                hash: fields.hash,
                sidecar_set_name: fields.sidecar_set_name,
                sidecar_list: fields.sidecar_list.unwrap_or_default(),
                controller_revision: fields.controller_revision,
            },
        })
    }
}

/// The map SidecarSet name → entry held by the pod hash annotations.
pub type SidecarSetHashes = BTreeMap<String, SidecarSetHashEntry>;

/// The map held by `kruise.io/sidecarset-inplace-update-state`: SidecarSet name → in-place state (only
/// `revision`, `updateTimestamp` and `lastContainerStatuses` are used).
pub type SidecarSetInPlaceUpdateStates = BTreeMap<String, InPlaceUpdateState>;

/// The `SidecarSetUpgradable` pod condition message: SidecarSet name → whether it can upgrade the pod.
pub type SidecarSetUpgradableMessage = BTreeMap<String, bool>;

/// Parses a pod's `kruise.io/sidecarset-hash` annotation (current or legacy form).
///
/// # Errors
/// The value is not a JSON object of entries.
pub fn parse_hashes(value: &str) -> Result<SidecarSetHashes, AnnotationError> {
    parse(keys::HASH_ANNOTATION, value)
}

/// Parses a pod's `kruise.io/sidecarset-hash-without-image` annotation (current or legacy form).
///
/// # Errors
/// The value is not a JSON object of entries.
pub fn parse_hashes_without_image(value: &str) -> Result<SidecarSetHashes, AnnotationError> {
    parse(keys::HASH_WITHOUT_IMAGE_ANNOTATION, value)
}

/// The value of the `kruise.io/sidecarset-injected-list` pod annotation: SidecarSet names, sorted and
/// de-duplicated, joined with commas.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InjectedSidecarSets(std::collections::BTreeSet<String>);

impl InjectedSidecarSets {
    /// Reads the annotation value; empty items are ignored.
    #[must_use]
    pub fn parse(value: &str) -> Self {
        Self(
            value
                .split(',')
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    /// Adds a SidecarSet name.
    pub fn insert(&mut self, name: impl Into<String>) {
        self.0.insert(name.into());
    }

    /// Whether the list names this SidecarSet.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// The annotation value.
    #[must_use]
    pub fn to_value(&self) -> String {
        self.iter().collect::<Vec<_>>().join(",")
    }
}

/// The value of `kruise.io/sidecarset-working-hotupgrade-container`: sidecar container name → the name of
/// the hot-upgrade container (`<name>-1` or `<name>-2`) that currently works.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkingHotUpgradeContainers(pub BTreeMap<String, String>);

impl WorkingHotUpgradeContainers {
    /// Parses the annotation value.
    ///
    /// # Errors
    /// The value is not a JSON object of strings.
    pub fn parse(value: &str) -> Result<Self, AnnotationError> {
        parse(keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION, value)
    }

    /// The annotation value.
    #[must_use]
    pub fn to_value(&self) -> String {
        to_value(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UPSTREAM_VALUE: &str = r#"{"demo-sidecarset":{"updateTimestamp":"2023-07-01T06:38:17Z","hash":"6wxw44dw4555d6b5c5cf5vf6d844bw948ddw5bv7zw5955c4x47vbf6fbc2v484z","sidecarSetName":"demo-sidecarset","sidecarList":["nginx-sidecar"],"controllerRevision":"demo-sidecarset-575984d5d8"}}"#;

    #[test]
    fn hash_annotation_round_trips_byte_for_byte() {
        let hashes = parse_hashes(UPSTREAM_VALUE).unwrap();
        let entry = &hashes["demo-sidecarset"];
        assert_eq!(entry.sidecar_list, vec!["nginx-sidecar"]);
        assert_eq!(entry.controller_revision, "demo-sidecarset-575984d5d8");
        assert_eq!(to_value(&hashes), UPSTREAM_VALUE);
    }

    #[test]
    fn without_image_entry_omits_controller_revision() {
        let entry = SidecarSetHashEntry {
            update_timestamp: Some(Time("2023-07-01T06:38:17Z".parse().unwrap())),
            hash: "h".into(),
            sidecar_set_name: "s".into(),
            sidecar_list: vec!["a".into(), "b".into()],
            controller_revision: String::new(),
        };
        assert_eq!(
            to_value(&entry),
            r#"{"updateTimestamp":"2023-07-01T06:38:17Z","hash":"h","sidecarSetName":"s","sidecarList":["a","b"]}"#
        );
    }

    #[test]
    fn legacy_hash_strings_are_read() {
        let hashes = parse_hashes(r#"{"old":"abc"}"#).unwrap();
        assert_eq!(hashes["old"].hash, "abc");
        assert!(hashes["old"].update_timestamp.is_none());
        assert!(parse_hashes("[1]").is_err());
    }

    #[test]
    fn injected_list_is_sorted_and_unique() {
        let mut list = InjectedSidecarSets::parse("b,a,,b");
        assert_eq!(list.to_value(), "a,b");
        list.insert("0");
        assert!(list.contains("0"));
        assert_eq!(list.to_value(), "0,a,b");
        assert_eq!(InjectedSidecarSets::parse("").to_value(), "");
    }

    #[test]
    fn working_containers() {
        let working = WorkingHotUpgradeContainers::parse(r#"{"envoy":"envoy-2"}"#).unwrap();
        assert_eq!(working.0["envoy"], "envoy-2");
        assert_eq!(working.to_value(), r#"{"envoy":"envoy-2"}"#);
    }
}
