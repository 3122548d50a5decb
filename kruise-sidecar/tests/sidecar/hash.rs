//! SidecarSet hashes (upstream `hash.go`): the four upstream vectors from typed SidecarSets, the init-container
//! rule, defaults, and the annotations.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys::sidecarset as keys;
use kruise_sidecar::hash::{self, SidecarSetHashes};

const WITH_IMAGE: &str = "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78";
const WITH_INIT: &str = "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w";
const WITHOUT_IMAGE: &str = "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759";
const WITH_INIT_WITHOUT_IMAGE: &str =
    "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8";

fn raw(json: serde_json::Value) -> SidecarSet {
    serde_json::from_value(json).unwrap()
}

fn container() -> serde_json::Value {
    serde_json::json!({"name": "container1", "image": "test-image"})
}

#[test]
fn upstream_vectors_from_typed_sidecarsets() {
    let containers_only = raw(serde_json::json!({
        "metadata": {"name": "s"}, "spec": {"containers": [container()]}
    }));
    assert_eq!(
        hash::compute(&containers_only).unwrap(),
        SidecarSetHashes {
            hash: WITH_IMAGE.into(),
            without_image: WITHOUT_IMAGE.into()
        }
    );

    let mut native = container();
    native["restartPolicy"] = "Always".into();
    let with_native = raw(serde_json::json!({
        "metadata": {"name": "s"}, "spec": {"containers": [container()], "initContainers": [native]}
    }));
    assert_eq!(
        hash::compute(&with_native).unwrap(),
        SidecarSetHashes {
            hash: WITH_INIT.into(),
            without_image: WITH_INIT_WITHOUT_IMAGE.into()
        }
    );
}

#[test]
fn plain_init_containers_do_not_count() {
    let with_plain_init = raw(serde_json::json!({
        "metadata": {"name": "s"},
        "spec": {"containers": [container()], "initContainers": [{"name": "init", "image": "x"}]}
    }));
    assert_eq!(hash::compute(&with_plain_init).unwrap().hash, WITH_IMAGE);
}

#[test]
fn all_init_containers_count_once_one_is_native() {
    let mut native = container();
    native["restartPolicy"] = "Always".into();
    let base = raw(serde_json::json!({
        "metadata": {"name": "s"}, "spec": {"containers": [container()], "initContainers": [native.clone()]}
    }));
    let plus_plain = raw(serde_json::json!({
        "metadata": {"name": "s"},
        "spec": {"containers": [container()], "initContainers": [native, {"name": "plain", "image": "y"}]}
    }));
    assert_ne!(
        hash::compute(&base).unwrap().hash,
        hash::compute(&plus_plain).unwrap().hash
    );
}

#[test]
fn image_changes_only_move_the_image_hash() {
    let a =
        raw(serde_json::json!({"metadata": {"name": "s"}, "spec": {"containers": [container()]}}));
    let b = raw(serde_json::json!({"metadata": {"name": "s"},
        "spec": {"containers": [{"name": "container1", "image": "other"}]}}));
    let (ha, hb) = (hash::compute(&a).unwrap(), hash::compute(&b).unwrap());
    assert_ne!(ha.hash, hb.hash);
    assert_eq!(ha.without_image, hb.without_image);
    let c = raw(serde_json::json!({"metadata": {"name": "s"},
        "spec": {"containers": [{"name": "container1", "image": "test-image", "args": ["x"]}]}}));
    assert_ne!(hash::compute(&c).unwrap().without_image, ha.without_image);
}

#[test]
fn defaults_are_part_of_the_hash() {
    let stored = support::sidecarset(serde_json::json!({
        "metadata": {"name": "s"}, "spec": {"containers": [container()]}
    }));
    let as_given =
        raw(serde_json::json!({"metadata": {"name": "s"}, "spec": {"containers": [container()]}}));
    assert_ne!(
        hash::compute(&stored).unwrap().hash,
        hash::compute(&as_given).unwrap().hash
    );
}

#[test]
fn annotations_are_read_before_computing() {
    let mut set =
        raw(serde_json::json!({"metadata": {"name": "s"}, "spec": {"containers": [container()]}}));
    let computed = hash::annotate(&mut set).unwrap();
    assert_eq!(computed.hash, WITH_IMAGE);
    assert_eq!(
        set.metadata.annotations.as_ref().unwrap()[keys::HASH_WITHOUT_IMAGE_ANNOTATION],
        WITHOUT_IMAGE
    );
    set.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(keys::HASH_ANNOTATION.into(), "recorded".into());
    let read = hash::recorded_or_computed(&set).unwrap();
    assert_eq!(read.hash, "recorded");
    assert_eq!(read.without_image, WITHOUT_IMAGE);
}

#[test]
fn invalid_quantities_are_named() {
    let set = raw(serde_json::json!({"metadata": {"name": "bad"},
        "spec": {"containers": [container(), {"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}}));
    let message = hash::compute(&set).unwrap_err().to_string();
    assert!(message.contains("SidecarSet bad"), "{message}");
    assert!(
        message.contains("/containers/1/resources/limits/cpu"),
        "{message}"
    );
}

#[test]
fn go_escaping_and_field_order_of_the_input() {
    let set = raw(
        serde_json::json!({"metadata": {"name": "s"}, "spec": {"containers": [
            {"name": "c", "image": "i", "command": ["a<b>&c"], "env": [{"name": "E", "value": "v"}],
             "shareVolumePolicy": {"type": "enabled"}}
        ]}}),
    );
    let input = hash::hash_input(&set.spec.containers, &set.spec.init_containers, false).unwrap();
    assert_eq!(
        input,
        r#"{"containers":[{"name":"c","image":"i","command":["a\u003cb\u003e\u0026c"],"env":[{"name":"E","value":"v"}],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{"type":"enabled"}}]}"#
    );
    let empty = raw(serde_json::json!({"metadata": {"name": "s"}, "spec": {}}));
    assert_eq!(
        hash::hash_input(&empty.spec.containers, &[], false).unwrap(),
        r#"{"containers":null}"#
    );
}
