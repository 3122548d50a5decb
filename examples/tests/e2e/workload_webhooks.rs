//! The defaulting and validating webhooks of the workload kinds on the real API server (kruise-manager as a
//! child process, real HTTPS): for CloneSet and Advanced StatefulSet (v1alpha1 and v1beta1), Advanced
//! DaemonSet, BroadcastJob, AdvancedCronJob and ImagePullJob, a create is stored with upstream's defaults
//! (read back), an invalid create is refused with the field and the value named, and an update of an
//! immutable field is refused. BroadcastJob and ImagePullJob have no immutable field upstream: their refused
//! update is one that makes the object invalid.
//!
//! The objects are made not to run anything: CloneSets and StatefulSets with 0 replicas, paused jobs, an
//! ImagePullJob on a node that does not exist.

use anyhow::{Context as _, Result, bail, ensure};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::sidecarset::{wait_for_manager, with_manager};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-workload-webhooks";
const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub async fn workload_webhooks_default_and_validate(cluster: &Cluster) -> Result<()> {
    with_manager(
        cluster,
        NAMESPACE,
        "e2e-workload-webhooks-none",
        |client, port| Box::pin(scenario(client, port)),
    )
    .await
}

/// One kind's checks.
struct Case {
    kind: &'static str,
    plural: &'static str,
    version: &'static str,
    /// A valid object (name and namespace added).
    object: Value,
    /// JSON pointers into the stored object and the defaults expected there.
    defaults: Vec<(&'static str, Value)>,
    /// Merged into `object`: a create the validating webhook refuses, and what the message must contain.
    invalid: (Value, &'static str),
    /// A merge patch of the stored object the validating webhook refuses, and what the message must contain.
    refused_update: (Value, &'static str),
}

fn pod_template(app: &str, restart_policy: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
        "spec": {"restartPolicy": restart_policy, "containers": [{"name": "main", "image": "busybox:1.36"}]}})
}

fn cases() -> Vec<Case> {
    let moved_selector = |app: &str| {
        json!({"spec": {"selector": {"matchLabels": {"app": app, "moved": "yes"}},
            "template": {"metadata": {"labels": {"app": app, "moved": "yes"}}}}})
    };
    vec![
        Case {
            kind: "CloneSet",
            plural: "clonesets",
            version: "v1alpha1",
            object: json!({"spec": {"replicas": 0, "selector": {"matchLabels": {"app": "ww-cs"}},
                "template": pod_template("ww-cs", "Always")}}),
            defaults: vec![
                ("/spec/revisionHistoryLimit", json!(10)),
                ("/spec/updateStrategy/type", json!("ReCreate")),
                ("/spec/updateStrategy/maxUnavailable", json!("20%")),
                (
                    "/spec/template/spec/containers/0/imagePullPolicy",
                    json!("Always"),
                ),
            ],
            invalid: (
                json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 1}}}),
                "spec.updateStrategy.maxSurge: Invalid value: 1: can not use maxSurge with strategy type InPlaceOnly",
            ),
            refused_update: (
                moved_selector("ww-cs"),
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"ww-cs\",\"moved\":\"yes\"}}: field is immutable",
            ),
        },
        Case {
            kind: "CloneSet",
            plural: "clonesets",
            version: "v1beta1",
            object: json!({"spec": {"replicas": 0, "selector": {"matchLabels": {"app": "ww-csb"}},
                "template": pod_template("ww-csb", "Always")}}),
            defaults: vec![
                ("/spec/updateStrategy/type", json!("RollingUpdate")),
                (
                    "/spec/updateStrategy/rollingUpdate/podUpdatePolicy",
                    json!("ReCreate"),
                ),
                (
                    "/spec/updateStrategy/rollingUpdate/maxUnavailable",
                    json!("20%"),
                ),
            ],
            // Validated as v1alpha1 (upstream's version): the v1alpha1 field is named.
            invalid: (
                json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "abc"}}}}),
                "spec.updateStrategy.partition: Invalid value: \"abc\"",
            ),
            refused_update: (moved_selector("ww-csb"), "spec.selector: Invalid value: "),
        },
        Case {
            kind: "StatefulSet",
            plural: "statefulsets",
            version: "v1beta1",
            object: json!({"spec": {"replicas": 0, "serviceName": "ww-sts",
                "selector": {"matchLabels": {"app": "ww-sts"}}, "template": pod_template("ww-sts", "Always")}}),
            defaults: vec![
                ("/spec/podManagementPolicy", json!("OrderedReady")),
                (
                    "/spec/updateStrategy/rollingUpdate/maxUnavailable",
                    json!(1),
                ),
                (
                    "/spec/updateStrategy/rollingUpdate/podUpdatePolicy",
                    json!("ReCreate"),
                ),
                (
                    "/spec/persistentVolumeClaimRetentionPolicy/whenDeleted",
                    json!("Retain"),
                ),
            ],
            invalid: (
                json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}}}),
                "spec.template.spec.readinessGates: Invalid value: null: must contain InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible",
            ),
            refused_update: (
                json!({"spec": {"serviceName": "ww-other"}}),
                "spec.serviceName: Invalid value: \"ww-other\": field is immutable",
            ),
        },
        Case {
            kind: "StatefulSet",
            plural: "statefulsets",
            version: "v1alpha1",
            object: json!({"spec": {"replicas": 0, "serviceName": "ww-stsa",
                "selector": {"matchLabels": {"app": "ww-stsa"}}, "template": pod_template("ww-stsa", "Always")}}),
            defaults: vec![
                ("/spec/podManagementPolicy", json!("OrderedReady")),
                ("/spec/updateStrategy/rollingUpdate/partition", json!(0)),
                ("/spec/revisionHistoryLimit", json!(10)),
            ],
            // Validated as v1beta1 (upstream's version), reached converted.
            invalid: (
                json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}}),
                "spec.template.spec.readinessGates: Invalid value: null: must contain InPlaceUpdateReady when podUpdatePolicy is InPlaceOnly",
            ),
            refused_update: (
                moved_selector("ww-stsa"),
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"ww-stsa\",\"moved\":\"yes\"}}: field is immutable",
            ),
        },
        Case {
            kind: "DaemonSet",
            plural: "daemonsets",
            version: "v1alpha1",
            object: json!({"spec": {"selector": {"matchLabels": {"app": "ww-ds"}},
                "template": pod_template("ww-ds", "Always")}}),
            defaults: vec![
                ("/spec/updateStrategy/type", json!("RollingUpdate")),
                (
                    "/spec/updateStrategy/rollingUpdate/maxUnavailable",
                    json!(1),
                ),
                ("/spec/revisionHistoryLimit", json!(10)),
            ],
            invalid: (
                json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "150%"}}}}),
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%",
            ),
            refused_update: (
                moved_selector("ww-ds"),
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"ww-ds\",\"moved\":\"yes\"}}: field is immutable",
            ),
        },
        Case {
            kind: "BroadcastJob",
            plural: "broadcastjobs",
            version: "v1alpha1",
            object: json!({"spec": {"paused": true, "template": pod_template("ww-bj", "Never")}}),
            defaults: vec![
                ("/spec/completionPolicy/type", json!("Always")),
                ("/spec/parallelism", json!(i32::MAX)),
                ("/spec/failurePolicy/type", json!("FailFast")),
            ],
            invalid: (
                json!({"spec": {"template": {"spec": {"restartPolicy": "Always"}}}}),
                "spec.template.spec.restartPolicy: Invalid value: \"Always\": pod restartPolicy can only be Never or OnFailure",
            ),
            refused_update: (
                json!({"spec": {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 30}}}),
                "spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 30",
            ),
        },
        Case {
            kind: "AdvancedCronJob",
            plural: "advancedcronjobs",
            version: "v1alpha1",
            object: json!({"spec": {"schedule": "0 0 1 1 *", "paused": true,
                "template": {"broadcastJobTemplate": {"spec": {"template": pod_template("ww-acj", "Never")}}}}}),
            defaults: vec![
                ("/spec/concurrencyPolicy", json!("Allow")),
                ("/spec/successfulJobsHistoryLimit", json!(3)),
                ("/spec/failedJobsHistoryLimit", json!(1)),
            ],
            invalid: (
                json!({"spec": {"schedule": "61 * * * *"}}),
                "spec.schedule: Invalid value: \"61 * * * *\"",
            ),
            refused_update: (
                json!({"spec": {"template": {"broadcastJobTemplate": {"spec": {"template": pod_template("ww-acj", "OnFailure")}}}}}),
                "spec.template: Forbidden: updates to advancedcronjob spec for fields other than",
            ),
        },
        Case {
            kind: "ImagePullJob",
            plural: "imagepulljobs",
            version: "v1alpha1",
            object: json!({"spec": {"image": "busybox:1.36", "parallelism": 0,
                "selector": {"names": ["ww-no-such-node"]}, "completionPolicy": {"type": "Always"}}}),
            defaults: vec![
                ("/spec/pullPolicy/timeoutSeconds", json!(600)),
                ("/spec/pullPolicy/backoffLimit", json!(3)),
                ("/spec/imagePullPolicy", json!("IfNotPresent")),
            ],
            invalid: (
                json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 60}}}),
                "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 60: must be greater than pullPolicy.timeoutSeconds (600)",
            ),
            refused_update: (
                json!({"spec": {"image": "busybox:1.36:latest"}}),
                "spec.image: Invalid value: \"busybox:1.36:latest\": not a valid image reference",
            ),
        },
    ]
}

fn api(client: &Client, case: &Case) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", case.version, case.kind),
        case.plural,
    );
    Api::namespaced_with(client.clone(), NAMESPACE, &resource)
}

/// `base` with `patch` merged in (RFC 7386).
fn merged(base: &Value, patch: &Value) -> Value {
    let mut value = base.clone();
    json_patch::merge(&mut value, patch);
    value
}

/// The refusal of `result` by the validating webhook `webhook`: its message.
fn refusal<T>(result: kube::Result<T>, webhook: &str) -> Result<Option<String>> {
    match result {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(status)) if status.message.contains(webhook) => {
            ensure!(status.code == 422, "unexpected code: {status:?}");
            Ok(Some(status.message))
        }
        Err(error) => bail!("{error}"),
    }
}

async fn scenario(client: &Client, metrics_port: u16) -> Result<()> {
    wait_for_manager(client, metrics_port).await?;
    for case in cases() {
        check_case(client, &case)
            .await
            .with_context(|| format!("{} {}", case.kind, case.version))?;
    }
    Ok(())
}

async fn check_case(client: &Client, case: &Case) -> Result<()> {
    let api = api(client, case);
    let webhook = format!("v{}.kb.io", case.kind.to_lowercase());
    let name = format!("ww-{}-{}", case.kind.to_lowercase(), case.version);
    let mut object = case.object.clone();
    object["apiVersion"] = json!(format!("apps.kruise.io/{}", case.version));
    object["kind"] = json!(case.kind);
    object["metadata"] = json!({"name": name, "namespace": NAMESPACE});
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };

    // Refused create (the API server picks the configurations up asynchronously: retried until refused).
    let invalid: DynamicObject = serde_json::from_value(merged(&object, &case.invalid.0))?;
    let message = wait_for(
        &format!("{webhook} to refuse an invalid create"),
        WAIT,
        || async { refusal(api.create(&dry_run, &invalid).await, &webhook) },
    )
    .await?;
    ensure!(
        message.contains(case.invalid.1),
        "refusal of the create: {message}"
    );
    ensure!(
        message.contains(&format!(
            "{}.apps.kruise.io \"{name}\" is invalid",
            case.kind
        )),
        "{message}"
    );

    // Defaulted create, read back.
    let _ = api.delete(&name, &DeleteParams::default()).await;
    wait_for(&format!("{name} gone"), WAIT, || async {
        Ok(api.get_opt(&name).await?.is_none().then_some(()))
    })
    .await?;
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object.clone())?,
    )
    .await
    .context("creating the valid object")?;
    let stored = serde_json::to_value(api.get(&name).await?)?;
    for (pointer, expected) in &case.defaults {
        ensure!(
            stored.pointer(pointer) == Some(expected),
            "stored {pointer} is {:?}, expected {expected}: {stored}",
            stored.pointer(pointer)
        );
    }

    // Refused update.
    let message = refusal(
        api.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&case.refused_update.0),
        )
        .await,
        &webhook,
    )?;
    ensure!(
        message
            .as_deref()
            .is_some_and(|m| m.contains(case.refused_update.1)),
        "refusal of the update: {message:?}"
    );
    api.delete(&name, &DeleteParams::default()).await?;
    Ok(())
}
