#![allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values

use k8s_openapi::ByteString;
use serde_json::{Value, json};

use super::*;

fn job(namespace: &str, name: &str, secrets: &[&str], status: Value) -> ImagePullJob {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"image": "registry.local/app:v1", "pullSecrets": secrets, "completionPolicy": {}},
        "status": status,
    }))
    .unwrap()
}

fn source(data: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some("regcred".into()),
            namespace: Some("team".into()),
            uid: Some("source-uid".into()),
            annotations: Some(BTreeMap::from([(
                "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
                "{}".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        type_: Some("kubernetes.io/dockerconfigjson".into()),
        data: Some(BTreeMap::from([(
            ".dockerconfigjson".to_owned(),
            ByteString(data.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    }
}

fn copy(name: &str, source: &str, references: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(DAEMON_CONFIG_NAMESPACE.into()),
            annotations: Some(BTreeMap::from([
                (SECRET_SOURCE_KEY_ANNOTATION.to_owned(), source.to_owned()),
                (
                    SECRET_REFERENCES_ANNOTATION.to_owned(),
                    references.to_owned(),
                ),
                (
                    SECRET_MODE_ANNOTATION.to_owned(),
                    SECRET_MODE_BATCH.to_owned(),
                ),
            ])),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

#[test]
fn a_new_copy_lives_in_the_daemon_namespace_with_its_source_and_job() {
    let copy = new_copy(&source("auth"), "team/pull");
    let metadata = &copy.metadata;
    assert_eq!(metadata.namespace.as_deref(), Some(DAEMON_CONFIG_NAMESPACE));
    assert_eq!(metadata.generate_name.as_deref(), Some("regcred-"));
    assert_eq!(metadata.name, None);
    let annotations = metadata.annotations.clone().unwrap();
    assert_eq!(annotations[SECRET_SOURCE_KEY_ANNOTATION], "team/regcred");
    assert_eq!(annotations[SECRET_REFERENCES_ANNOTATION], "team/pull");
    assert_eq!(annotations[SECRET_MODE_ANNOTATION], "batch");
    // The source's own annotations (kubectl's copy of the object among them) are not carried over.
    assert_eq!(annotations.len(), 3);
    assert_eq!(
        metadata.labels.clone().unwrap()[SECRET_SOURCE_UID_LABEL],
        "source-uid"
    );
    assert_eq!(copy.data, source("auth").data);
    assert_eq!(
        copy.type_.as_deref(),
        Some("kubernetes.io/dockerconfigjson")
    );
    let named = Secret {
        metadata: ObjectMeta {
            name: Some("regcred-x7k2p".into()),
            ..copy.metadata.clone()
        },
        ..copy
    };
    assert_eq!(
        copy_reference(&named),
        ReferenceObject {
            namespace: DAEMON_CONFIG_NAMESPACE.into(),
            name: "regcred-x7k2p".into(),
            mode: "batch".into(),
        }
    );
}

#[test]
fn a_job_reuses_the_copy_it_already_references_else_the_first_of_its_source() {
    let copies = [
        copy("regcred-b", "team/regcred", "team/other"),
        copy("regcred-a", "team/regcred", "team/third"),
        copy("regcred-c", "team/regcred", "team/other,team/pull"),
        copy("token-a", "team/token", "team/pull"),
    ];
    let chosen = copy_for(&copies, "team/regcred", "team/pull").unwrap();
    assert_eq!(chosen.metadata.name.as_deref(), Some("regcred-c"));
    let chosen = copy_for(&copies, "team/regcred", "team/new").unwrap();
    assert_eq!(chosen.metadata.name.as_deref(), Some("regcred-a"));
    assert!(copy_for(&copies, "other/regcred", "team/pull").is_none());
}

#[test]
fn claiming_adds_the_job_and_refreshes_the_data_only_when_needed() {
    let mut current = copy("regcred-a", "team/regcred", "team/other");
    current.data = source("old").data;
    current.type_ = source("old").type_;
    let claimed = claimed_copy(&current, &source("new"), "team/pull").unwrap();
    assert_eq!(
        claimed.metadata.annotations.clone().unwrap()[SECRET_REFERENCES_ANNOTATION],
        "team/other,team/pull"
    );
    assert_eq!(claimed.data, source("new").data);
    assert_eq!(claimed_copy(&claimed, &source("new"), "team/pull"), None);
    // The source changed: the copy follows.
    let refreshed = claimed_copy(&claimed, &source("rotated"), "team/pull").unwrap();
    assert_eq!(refreshed.data, source("rotated").data);
}

#[test]
fn the_sweep_keeps_copies_of_running_jobs_that_still_name_the_source() {
    let running = job("team", "pull", &["regcred"], json!({}));
    let other = job("team", "other", &["regcred"], json!({}));
    let jobs = [&running, &other];
    let shared = copy("regcred-a", "team/regcred", "team/other,team/pull");
    assert_eq!(sweep(&shared, &jobs), Sweep::Keep);
    // A job that finished (or is gone) lets go.
    let finished = job(
        "team",
        "pull",
        &["regcred"],
        json!({"completionTime": "2024-05-01T10:00:00Z"}),
    );
    assert_eq!(
        sweep(&shared, &[&finished, &other]),
        Sweep::Release(BTreeSet::from(["team/other".to_owned()]))
    );
    assert_eq!(
        sweep(&shared, &[&other]),
        Sweep::Release(BTreeSet::from(["team/other".to_owned()]))
    );
    let released = released_copy(&shared, &BTreeSet::from(["team/other".to_owned()]));
    assert_eq!(
        referencing_jobs(&released).into_iter().collect::<Vec<_>>(),
        ["team/other"]
    );
    // Nobody needs it any more: deleted.
    assert_eq!(sweep(&shared, &[&finished]), Sweep::Delete);
    assert_eq!(sweep(&shared, &[]), Sweep::Delete);
    // A running job whose spec no longer names the source, or a job of the same name elsewhere.
    let changed = job("team", "pull", &["token"], json!({}));
    assert_eq!(
        sweep(&copy("regcred-b", "team/regcred", "team/pull"), &[&changed]),
        Sweep::Delete
    );
    let elsewhere = job("other-team", "pull", &["regcred"], json!({}));
    assert_eq!(
        sweep(
            &copy("regcred-b", "team/regcred", "team/pull"),
            &[&elsewhere]
        ),
        Sweep::Delete
    );
}

#[test]
fn secrets_that_are_not_copies_are_never_swept() {
    let mut own = copy("daemon-settings", "", "");
    own.metadata.annotations = None;
    assert_eq!(sweep(&own, &[]), Sweep::Keep);
    assert_eq!(source_key(&copy("x", "", "")), None);
}

#[test]
fn jobs_in_the_daemon_namespace_use_their_secrets_in_place() {
    assert!(uses_secrets_in_place(&job(
        DAEMON_CONFIG_NAMESPACE,
        "pull",
        &["regcred"],
        json!({})
    )));
    assert!(!uses_secrets_in_place(&job(
        "team",
        "pull",
        &["regcred"],
        json!({})
    )));
    assert_eq!(job_key(&job("team", "pull", &[], json!({}))), "team/pull");
}
