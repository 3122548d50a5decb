//! What a pod records about the SidecarSets injected into it (upstream `pkg/control/sidecarcontrol/util.go`): the
//! hash and hash-without-image entries, the injected list, the working hot-upgrade containers and the in-place
//! update states.
//!
//! Readers follow upstream's tolerance: where upstream logs a value that does not parse and goes on with an
//! empty one, so do the `recorded_*` readers here; writers (injection, upgrades) report it as an error instead.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::annotations::{
    self, AnnotationError, InjectedSidecarSets, SidecarSetHashEntry, SidecarSetHashes,
    SidecarSetInPlaceUpdateStates, WorkingHotUpgradeContainers,
};
use kruise_api::keys::sidecarset as keys;

use crate::pod_view::PodView;

/// `namespace/name` of a pod, for messages.
#[must_use]
pub fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

/// Second precision, as `metav1.Now()` is written.
#[must_use]
pub fn to_time(now: Timestamp) -> Time {
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// The entries of a hash annotation (`kruise.io/sidecarset-hash` or `-hash-without-image`); empty when the
/// annotation is absent or empty.
///
/// # Errors
/// The annotation is neither the current nor the legacy form.
pub fn hash_entries(
    pod: &(impl PodView + ?Sized),
    key: &'static str,
) -> Result<SidecarSetHashes, AnnotationError> {
    match pod.annotation(key) {
        Some(value) if !value.is_empty() => annotations::parse(key, value),
        _ => Ok(SidecarSetHashes::new()),
    }
}

/// The pod's entry for a SidecarSet in a hash annotation, if it has one (unparsable annotations read as
/// empty, as upstream).
#[must_use]
pub fn recorded_entry(
    pod: &(impl PodView + ?Sized),
    key: &'static str,
    sidecarset: &str,
) -> Option<SidecarSetHashEntry> {
    hash_entries(pod, key).ok()?.remove(sidecarset)
}

/// The SidecarSet hash the pod's sidecars were last written from (`""` when none).
#[must_use]
pub fn recorded_hash(pod: &(impl PodView + ?Sized), sidecarset: &str) -> String {
    recorded_entry(pod, keys::HASH_ANNOTATION, sidecarset)
        .map(|entry| entry.hash)
        .unwrap_or_default()
}

/// The SidecarSet hash without image the pod's sidecars were last written from (`""` when none).
#[must_use]
pub fn recorded_hash_without_image(pod: &(impl PodView + ?Sized), sidecarset: &str) -> String {
    recorded_entry(pod, keys::HASH_WITHOUT_IMAGE_ANNOTATION, sidecarset)
        .map(|entry| entry.hash)
        .unwrap_or_default()
}

/// The ControllerRevision the pod's sidecars came from (`""` when none).
#[must_use]
pub fn recorded_controller_revision(pod: &(impl PodView + ?Sized), sidecarset: &str) -> String {
    recorded_entry(pod, keys::HASH_ANNOTATION, sidecarset)
        .map(|entry| entry.controller_revision)
        .unwrap_or_default()
}

/// The SidecarSets listed in `kruise.io/sidecarset-injected-list`.
#[must_use]
pub fn injected_list(pod: &(impl PodView + ?Sized)) -> InjectedSidecarSets {
    InjectedSidecarSets::parse(pod.annotation(keys::INJECTED_LIST_ANNOTATION).unwrap_or(""))
}

/// Whether the pod lists the SidecarSet as injected.
#[must_use]
pub fn is_injected(pod: &(impl PodView + ?Sized), sidecarset: &str) -> bool {
    injected_list(pod).contains(sidecarset)
}

/// The working hot-upgrade containers (empty when absent or unparsable, as upstream).
#[must_use]
pub fn working_containers(pod: &(impl PodView + ?Sized)) -> WorkingHotUpgradeContainers {
    pod.annotation(keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION)
        .and_then(|value| WorkingHotUpgradeContainers::parse(value).ok())
        .unwrap_or_default()
}

/// The sidecar in-place update states; `None` when the annotation is absent.
///
/// # Errors
/// The annotation does not parse.
pub fn inplace_states(
    pod: &(impl PodView + ?Sized),
) -> Result<Option<SidecarSetInPlaceUpdateStates>, AnnotationError> {
    pod.annotation(keys::INPLACE_UPDATE_STATE_ANNOTATION)
        .map(|value| annotations::parse(keys::INPLACE_UPDATE_STATE_ANNOTATION, value))
        .transpose()
}

/// Serialises a map of entries as upstream's `json.Marshal` does (sorted keys, Go escaping).
#[must_use]
pub fn to_annotation_value<T: serde::Serialize>(value: &T) -> String {
    kruise_inplace::go_json::to_string_like_go(value)
}

/// The value of a hash annotation, byte for byte what [`to_annotation_value`] writes for the map, written
/// directly (each distinct timestamp is formatted once).
#[must_use]
pub fn hash_annotation_value(entries: &SidecarSetHashes) -> String {
    let mut last_time = None;
    hash_annotation_from(
        entries
            .iter()
            .map(|(name, entry)| (name.as_str(), HashEntryRef::from(entry))),
        &mut last_time,
    )
}

/// The names of a hash entry's sidecars.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SidecarNames<'a> {
    Owned(&'a [String]),
    Borrowed(&'a [&'a str]),
}

/// A hash annotation entry to write, borrowed (recorded on the pod or being injected).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HashEntryRef<'a> {
    pub(crate) update_timestamp: Option<&'a Time>,
    pub(crate) hash: &'a str,
    pub(crate) sidecar_set_name: &'a str,
    pub(crate) sidecar_list: SidecarNames<'a>,
    pub(crate) controller_revision: &'a str,
}

impl<'a> From<&'a SidecarSetHashEntry> for HashEntryRef<'a> {
    fn from(entry: &'a SidecarSetHashEntry) -> Self {
        Self {
            update_timestamp: entry.update_timestamp.as_ref(),
            hash: &entry.hash,
            sidecar_set_name: &entry.sidecar_set_name,
            sidecar_list: SidecarNames::Owned(&entry.sidecar_list),
            controller_revision: &entry.controller_revision,
        }
    }
}

/// The value of a hash annotation: the pod's `recorded` entries, each replaced by the `new` entry of its name
/// (a later one of a name wins).
pub(crate) fn hash_annotation_with<'a>(
    recorded: &'a SidecarSetHashes,
    new: impl Iterator<Item = (&'a str, HashEntryRef<'a>)>,
    last_time: &mut Option<(Time, String)>,
) -> String {
    if recorded.is_empty() {
        let mut entries: Vec<(&str, HashEntryRef<'_>)> = new.collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        // Of equal names (adjacent, in their order) keep the last.
        entries.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                *earlier = *later;
            }
            same
        });
        return hash_annotation_from(entries.into_iter(), last_time);
    }
    let mut entries: BTreeMap<&str, HashEntryRef<'_>> = recorded
        .iter()
        .map(|(name, entry)| (name.as_str(), HashEntryRef::from(entry)))
        .collect();
    entries.extend(new);
    hash_annotation_from(entries.into_iter(), last_time)
}

/// The value of `kruise.io/sidecarset-working-hotupgrade-container` after injecting hot-upgrade sidecars
/// named `injected`: the pod's entries, with `<name>-1` working for each injected one. Byte for byte what
/// [`to_annotation_value`] writes for that map.
pub(crate) fn working_annotation_value(
    recorded: &WorkingHotUpgradeContainers,
    injected: &[&str],
) -> String {
    let mut names: Vec<&str> = injected.to_vec();
    names.sort_unstable();
    names.dedup();
    let mut out = String::with_capacity(16 + 32 * (names.len() + recorded.0.len()));
    out.push('{');
    let write_entry = |out: &mut String, name: &str, working: Option<&str>| {
        if out.len() > 1 {
            out.push(',');
        }
        write_json_str(out, name);
        out.push(':');
        match working {
            Some(working) => write_json_str(out, working),
            // `<name>-1`, the working container of a newly injected hot-upgrade sidecar.
            None if is_plain(name) => {
                out.push('"');
                out.push_str(name);
                out.push_str("-1\"");
            }
            None => write_json_str(out, &crate::hot_upgrade::container_names(name).0),
        }
    };
    let mut new = names.iter().peekable();
    for (name, working) in &recorded.0 {
        while let Some(injected) = new.next_if(|injected| **injected < name.as_str()) {
            write_entry(&mut out, injected, None);
        }
        if new
            .next_if(|injected| **injected == name.as_str())
            .is_some()
        {
            write_entry(&mut out, name, None);
        } else {
            write_entry(&mut out, name, Some(working));
        }
    }
    for injected in new {
        write_entry(&mut out, injected, None);
    }
    out.push('}');
    out
}

/// The value of a hash annotation holding `entries` (in name order): what [`hash_annotation_value`] writes for
/// the map of those entries. `last_time` is the last timestamp formatted and its text, shared between calls.
pub(crate) fn hash_annotation_from<'a>(
    entries: impl Iterator<Item = (&'a str, HashEntryRef<'a>)>,
    last_time: &mut Option<(Time, String)>,
) -> String {
    let mut out = String::with_capacity(512);
    out.push('{');
    for (index, (name, entry)) in entries.enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_json_str(&mut out, name);
        out.push_str(":{\"updateTimestamp\":");
        match entry.update_timestamp {
            None => out.push_str("null"),
            Some(time) => match last_time {
                Some((known, text)) if known == time => out.push_str(text),
                _ => {
                    let text = time_value(time);
                    out.push_str(&text);
                    *last_time = Some((time.clone(), text));
                }
            },
        }
        out.push_str(",\"hash\":");
        write_json_str(&mut out, entry.hash);
        out.push_str(",\"sidecarSetName\":");
        write_json_str(&mut out, entry.sidecar_set_name);
        out.push_str(",\"sidecarList\":");
        let mut position = 0;
        let mut write_sidecar = |sidecar: &str| {
            out.push(if position == 0 { '[' } else { ',' });
            position += 1;
            write_json_str(&mut out, sidecar);
        };
        match entry.sidecar_list {
            SidecarNames::Owned(names) => names.iter().for_each(|name| write_sidecar(name)),
            SidecarNames::Borrowed(names) => names.iter().for_each(|name| write_sidecar(name)),
        }
        out.push_str(if position == 0 { "[]" } else { "]" });
        if !entry.controller_revision.is_empty() {
            out.push_str(",\"controllerRevision\":");
            write_json_str(&mut out, entry.controller_revision);
        }
        out.push('}');
    }
    out.push('}');
    out
}

/// A JSON string as Go writes it: printable ASCII other than `"`, `\\`, `<`, `>` and `&` (names, hashes,
/// revisions) is copied as is, anything else goes through [`kruise_inplace::go_json::write_str`].
fn write_json_str(out: &mut String, text: &str) {
    if is_plain(text) {
        out.reserve(text.len() + 2);
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        kruise_inplace::go_json::write_str(out, text);
    }
}

/// Whether Go writes the text into a JSON string as it is.
fn is_plain(text: &str) -> bool {
    // No early exit: the check over the whole (short) text compiles to a branch-free loop.
    text.bytes().fold(true, |plain, byte| {
        plain & (0x20..0x7f).contains(&byte) & !matches!(byte, b'"' | b'\\' | b'<' | b'>' | b'&')
    })
}

/// A `Time` as [`to_annotation_value`] writes it (`"YYYY-MM-DDTHH:MM:SSZ"`, quoted), formatted directly (with
/// the lifecycle hooks' formatter, which writes the same text) for the years 0 to 9999.
fn time_value(time: &Time) -> String {
    let civil = time.0.to_zoned(k8s_openapi::jiff::tz::TimeZone::UTC);
    if !(0..=9999).contains(&civil.year()) {
        return to_annotation_value(time);
    }
    let text = kruise_lifecycle::timestamp::lifecycle_timestamp(&civil);
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    out.push_str(&text);
    out.push('"');
    out
}

/// Sets a pod annotation.
pub fn set_annotation(pod: &mut Pod, key: &str, value: String) {
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_owned(), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(annotations: &[(&str, &str)]) -> Pod {
        Pod {
            metadata: ObjectMeta {
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        }
    }

    #[test]
    fn time_value_is_the_serialised_time() {
        for text in [
            "2024-05-01T10:00:00Z",
            "1970-01-01T00:00:00Z",
            "0001-02-03T04:05:06Z",
            "9999-12-30T12:34:56.999Z",
            "2024-02-29T23:59:59.5Z",
        ] {
            let time = Time(text.parse().unwrap());
            assert_eq!(time_value(&time), to_annotation_value(&time), "{text}");
        }
        for extreme in [Timestamp::MAX, Timestamp::MIN] {
            let time = Time(extreme);
            assert_eq!(time_value(&time), to_annotation_value(&time));
        }
    }

    #[test]
    fn readers_tolerate_bad_values_like_upstream() {
        let bad = pod(&[
            (keys::HASH_ANNOTATION, "{not json"),
            (keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION, "[]"),
        ]);
        assert_eq!(recorded_hash(&bad, "s"), "");
        assert!(working_containers(&bad).0.is_empty());
        assert!(hash_entries(&bad, keys::HASH_ANNOTATION).is_err());
    }

    #[test]
    fn current_and_legacy_entries() {
        let current = pod(&[(
            keys::HASH_ANNOTATION,
            r#"{"s":{"updateTimestamp":"2024-01-01T00:00:00Z","hash":"h1","sidecarSetName":"s","sidecarList":["c"],"controllerRevision":"s-1"}}"#,
        )]);
        assert_eq!(recorded_hash(&current, "s"), "h1");
        assert_eq!(recorded_controller_revision(&current, "s"), "s-1");
        let legacy = pod(&[(keys::HASH_WITHOUT_IMAGE_ANNOTATION, r#"{"s":"h2"}"#)]);
        assert_eq!(recorded_hash_without_image(&legacy, "s"), "h2");
        assert_eq!(recorded_hash(&legacy, "s"), "");
    }

    #[test]
    fn hash_annotation_value_is_the_serde_encoding() {
        let time = to_time("2024-05-01T10:00:00Z".parse().unwrap());
        let other = to_time("2023-01-02T03:04:05Z".parse().unwrap());
        let entry =
            |name: &str, time: Option<&Time>, list: &[&str], revision: &str| SidecarSetHashEntry {
                update_timestamp: time.cloned(),
                hash: format!("h<{name}>&\"x\"\u{2028}"),
                sidecar_set_name: name.to_owned(),
                sidecar_list: list.iter().map(|s| (*s).to_owned()).collect(),
                controller_revision: revision.to_owned(),
            };
        let mut entries = SidecarSetHashes::new();
        assert_eq!(
            hash_annotation_value(&entries),
            to_annotation_value(&entries)
        );
        entries.insert("a".into(), entry("a", Some(&time), &["c1", "c2"], "a-1"));
        entries.insert("b<".into(), entry("b<", None, &[], ""));
        entries.insert("c".into(), entry("c", Some(&other), &["x"], ""));
        entries.insert("d".into(), entry("d", Some(&time), &["y\n"], "d-7"));
        assert_eq!(
            hash_annotation_value(&entries),
            to_annotation_value(&entries)
        );
    }

    #[test]
    fn working_annotation_value_is_the_serde_encoding_of_the_merged_map() {
        let recorded = |pairs: &[(&str, &str)]| {
            WorkingHotUpgradeContainers(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        };
        for (pod, injected) in [
            (recorded(&[]), vec!["envoy"]),
            (recorded(&[]), vec!["b", "a", "b"]),
            (
                recorded(&[("a", "a-2"), ("c", "c-2"), ("e", "e-1")]),
                vec!["d", "c", "b"],
            ),
            (recorded(&[("x<", "x<-2")]), vec!["y&", "z\"quote"]),
            (recorded(&[("a", "a-2")]), vec![]),
        ] {
            let mut expected = pod.0.clone();
            for name in &injected {
                expected.insert((*name).to_owned(), format!("{name}-1"));
            }
            assert_eq!(
                working_annotation_value(&pod, &injected),
                to_annotation_value(&expected),
                "{injected:?}"
            );
        }
    }

    #[test]
    fn hash_annotation_with_replaces_recorded_entries_and_keeps_the_last_new_one() {
        let time = to_time("2024-05-01T10:00:00Z".parse().unwrap());
        let entry = |name: &str, hash: &str| SidecarSetHashEntry {
            update_timestamp: Some(time.clone()),
            hash: hash.to_owned(),
            sidecar_set_name: name.to_owned(),
            sidecar_list: vec!["c".to_owned()],
            controller_revision: String::new(),
        };
        let new = [entry("b", "1"), entry("a", "2"), entry("b", "3")];
        for recorded in [
            SidecarSetHashes::new(),
            [
                ("a".to_owned(), entry("a", "old")),
                ("c".to_owned(), entry("c", "old")),
            ]
            .into(),
        ] {
            let mut expected = recorded.clone();
            for entry in &new {
                expected.insert(entry.sidecar_set_name.clone(), entry.clone());
            }
            let value = hash_annotation_with(
                &recorded,
                new.iter()
                    .map(|entry| (entry.sidecar_set_name.as_str(), HashEntryRef::from(entry))),
                &mut None,
            );
            assert_eq!(value, to_annotation_value(&expected));
        }
    }

    #[test]
    fn timestamps_have_second_precision() {
        let now: Timestamp = "2024-05-01T10:00:00.750Z".parse().unwrap();
        assert_eq!(
            serde_json::to_string(&to_time(now)).unwrap(),
            "\"2024-05-01T10:00:00Z\""
        );
    }
}
