//! Deletion protection on the real API server (kruise-manager as a child process, real HTTPS, gate
//! `ResourcesDeletionProtection` on by default): for each protected kind, a labelled object's deletion is
//! refused with the object and the rule named, and allowed once the rule no longer holds: `Always` until the
//! label is removed, `Cascading` until a workload is scaled to 0, a Namespace has no active pod, a
//! CustomResourceDefinition has no custom resource. A label value other than the two protects nothing.
//!
//! Refusals are checked with dry-run deletions (the webhook is called for them too), so an object is never
//! deleted by accident while the webhook is being registered; the allowed deletions are real.

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::sidecarset::{wait_for_manager, with_manager};
use crate::support::wait_for;

const NAMESPACE: &str = "e2e-deletion-protection";
const PROTECTED_NAMESPACE: &str = "e2e-deletion-protection-cascading";
const LABEL: &str = "policy.kruise.io/delete-protection";
const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub async fn deletion_protection_refuses_protected_deletes(
    cluster: &crate::support::Cluster,
) -> Result<()> {
    with_manager(
        cluster,
        NAMESPACE,
        "e2e-deletion-protection-none",
        |client, port| Box::pin(scenario(client, port)),
    )
    .await
}

/// One workload kind's check.
struct Workload {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    protection: &'static str,
    /// The object (name, namespace, apiVersion, kind and the label are added).
    object: Value,
    /// The end of the refusal message.
    refusal: &'static str,
    /// The merge patch after which the deletion is allowed.
    release: Value,
}

fn pod_template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}})
}

fn selector(app: &str) -> Value {
    json!({"matchLabels": {"app": app}})
}

fn workloads() -> Vec<Workload> {
    let unlabel = json!({"metadata": {"labels": {LABEL: null}}});
    let scale_to_zero = json!({"spec": {"replicas": 0}});
    let cascading_two = "=Cascading and replicas 2>0";
    let always = "=Always";
    let replicated = |app: &str| json!({"spec": {"replicas": 2, "selector": selector(app), "template": pod_template(app)}});
    let stateful = |app: &str| {
        json!({"spec": {"replicas": 2, "serviceName": app, "selector": selector(app),
            "template": pod_template(app)}})
    };
    vec![
        Workload {
            group: "apps",
            version: "v1",
            kind: "Deployment",
            plural: "deployments",
            protection: "Cascading",
            object: replicated("dp-deploy"),
            refusal: cascading_two,
            release: scale_to_zero.clone(),
        },
        Workload {
            group: "apps",
            version: "v1",
            kind: "ReplicaSet",
            plural: "replicasets",
            protection: "Always",
            object: replicated("dp-rs"),
            refusal: always,
            release: unlabel.clone(),
        },
        Workload {
            group: "apps",
            version: "v1",
            kind: "StatefulSet",
            plural: "statefulsets",
            protection: "Cascading",
            object: stateful("dp-sts"),
            refusal: cascading_two,
            release: scale_to_zero.clone(),
        },
        Workload {
            group: "apps.kruise.io",
            version: "v1alpha1",
            kind: "CloneSet",
            plural: "clonesets",
            protection: "Cascading",
            object: replicated("dp-cs"),
            refusal: cascading_two,
            release: scale_to_zero.clone(),
        },
        Workload {
            group: "apps.kruise.io",
            version: "v1beta1",
            kind: "StatefulSet",
            plural: "statefulsets",
            protection: "Always",
            object: stateful("dp-asts"),
            refusal: always,
            release: unlabel.clone(),
        },
        Workload {
            group: "apps.kruise.io",
            version: "v1alpha1",
            kind: "StatefulSet",
            plural: "statefulsets",
            protection: "Cascading",
            object: stateful("dp-asts-alpha"),
            refusal: cascading_two,
            release: scale_to_zero.clone(),
        },
        Workload {
            group: "apps.kruise.io",
            version: "v1alpha1",
            kind: "DaemonSet",
            plural: "daemonsets",
            protection: "Always",
            // On no node: an Advanced DaemonSet's dependents are the pods it should run.
            object: json!({"spec": {"selector": selector("dp-ads"), "template": {
                "metadata": {"labels": {"app": "dp-ads"}},
                "spec": {"nodeSelector": {"e2e-deletion-protection": "nowhere"},
                    "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}),
            refusal: always,
            release: json!({"metadata": {"labels": {LABEL: "Cascading"}}}),
        },
        Workload {
            group: "apps.kruise.io",
            version: "v1alpha1",
            kind: "UnitedDeployment",
            plural: "uniteddeployments",
            protection: "Cascading",
            object: json!({"spec": {"replicas": 2, "selector": selector("dp-ud"),
                "template": {"cloneSetTemplate": {"metadata": {"labels": {"app": "dp-ud"}},
                    "spec": {"selector": selector("dp-ud"), "template": pod_template("dp-ud")}}},
                "topology": {"subsets": [{"name": "a"}]}}}),
            refusal: cascading_two,
            release: scale_to_zero,
        },
    ]
}

fn dynamic_api(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::namespaced_with(client.clone(), NAMESPACE, &resource)
}

fn dry_run() -> DeleteParams {
    DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    }
}

/// The message of a deletion refused by the deletion protection webhook; `None` when it was allowed.
fn refusal<T>(result: kube::Result<T>) -> Result<Option<String>> {
    match result {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(status))
            if status.message.contains("vdeletionprotection.kruise.io") =>
        {
            ensure!(status.code == 403, "unexpected code: {status:?}");
            Ok(Some(status.message))
        }
        Err(error) => bail!("{error}"),
    }
}

/// Waits for a dry-run deletion to be refused (the webhook may still be registering) and checks the message.
async fn expect_refused<F, Fut, T>(what: &str, expected: &str, mut delete: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = kube::Result<T>>,
{
    let message = wait_for(&format!("the deletion of {what} refused"), WAIT, || {
        let attempt = delete();
        async move { refusal(attempt.await) }
    })
    .await?;
    ensure!(message.contains(expected), "refusal of {what}: {message}");
    Ok(())
}

async fn scenario(client: &Client, metrics_port: u16) -> Result<()> {
    wait_for_manager(client, metrics_port).await?;
    for workload in workloads() {
        check_workload(client, &workload).await.with_context(|| {
            format!("{} {}/{}", workload.kind, workload.group, workload.version)
        })?;
    }
    check_other_values(client)
        .await
        .context("a label value other than Always and Cascading")?;
    check_namespace(client)
        .await
        .context("a Cascading Namespace")?;
    check_crd(client)
        .await
        .context("a Cascading CustomResourceDefinition")?;
    Ok(())
}

async fn check_workload(client: &Client, workload: &Workload) -> Result<()> {
    let api = dynamic_api(
        client,
        workload.group,
        workload.version,
        workload.kind,
        workload.plural,
    );
    let name = format!("dp-{}-{}", workload.kind.to_lowercase(), workload.version);
    let mut object = workload.object.clone();
    object["apiVersion"] = json!(if workload.group == "apps" {
        format!("apps/{}", workload.version)
    } else {
        format!("{}/{}", workload.group, workload.version)
    });
    object["kind"] = json!(workload.kind);
    object["metadata"] =
        json!({"name": name, "namespace": NAMESPACE, "labels": {LABEL: workload.protection}});
    api.create(&PostParams::default(), &serde_json::from_value(object)?)
        .await
        .context("creating")?;
    let expected = format!(
        "{} {NAMESPACE}/{name}: forbidden by ResourcesProtectionDeletion for {LABEL}{}",
        workload.kind, workload.refusal
    );
    let dry_run = dry_run();
    expect_refused(&name, &expected, || api.delete(&name, &dry_run)).await?;
    // Still there after the refusal of a real deletion, too.
    ensure!(
        refusal(api.delete(&name, &DeleteParams::default()).await)?.is_some(),
        "a real deletion of {name} was allowed"
    );
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(&workload.release),
    )
    .await
    .context("releasing the protection")?;
    wait_for(&format!("the deletion of {name} allowed"), WAIT, || async {
        match refusal(api.delete(&name, &DeleteParams::default()).await)? {
            None => Ok(Some(())),
            Some(_) => Ok(None),
        }
    })
    .await?;
    Ok(())
}

async fn check_other_values(client: &Client) -> Result<()> {
    let api = dynamic_api(client, "apps", "v1", "Deployment", "deployments");
    for (index, value) in ["always", "Never"].into_iter().enumerate() {
        let name = format!("dp-other-{index}");
        let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LABEL: value}}});
        json_patch::merge(
            &mut object,
            &json!({"spec": {"replicas": 2, "selector": selector("dp-other"), "template": pod_template("dp-other")}}),
        );
        api.create(&PostParams::default(), &serde_json::from_value(object)?)
            .await?;
        api.delete(&name, &DeleteParams::default())
            .await
            .with_context(|| format!("deleting a Deployment labelled {value:?}"))?;
    }
    Ok(())
}

async fn check_namespace(client: &Client) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": PROTECTED_NAMESPACE,
                "labels": {LABEL: "Cascading"}}}))?,
        )
        .await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), PROTECTED_NAMESPACE);
    // No node runs it: Pending, so active.
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "active"},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}))?,
    )
    .await
    .context("creating a pod in the protected namespace")?;
    let dry_run = dry_run();
    expect_refused(
        PROTECTED_NAMESPACE,
        &format!(
            "Namespace {PROTECTED_NAMESPACE}: forbidden by ResourcesProtectionDeletion for \
             {LABEL}=Cascading and active pods 1>0"
        ),
        || namespaces.delete(PROTECTED_NAMESPACE, &dry_run),
    )
    .await?;
    pods.delete("active", &DeleteParams::default().grace_period(0))
        .await?;
    wait_for("the pod gone", WAIT, || async {
        Ok(pods.get_opt("active").await?.is_none().then_some(()))
    })
    .await?;
    namespaces
        .delete(PROTECTED_NAMESPACE, &DeleteParams::default())
        .await
        .context("deleting the namespace without active pods")?;
    Ok(())
}

async fn check_crd(client: &Client) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = "widgets.deletion-protection.e2e.kruise.io";
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {LABEL: "Cascading"}},
            "spec": {"group": "deletion-protection.e2e.kruise.io", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
        }))?,
    )
    .await?;
    let widgets = dynamic_api(
        client,
        "deletion-protection.e2e.kruise.io",
        "v1",
        "Widget",
        "widgets",
    );
    let widget: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "deletion-protection.e2e.kruise.io/v1", "kind": "Widget",
        "metadata": {"name": "one", "namespace": NAMESPACE}}))?;
    wait_for("the Widget created (CRD established)", WAIT, || async {
        Ok(widgets
            .create(&PostParams::default(), &widget)
            .await
            .ok()
            .map(|_| ()))
    })
    .await?;
    let dry_run = dry_run();
    expect_refused(
        name,
        &format!(
            "CustomResourceDefinition {name}: forbidden by ResourcesProtectionDeletion for \
             {LABEL}=Cascading and active CRs 1>0"
        ),
        || crds.delete(name, &dry_run),
    )
    .await?;
    widgets.delete("one", &DeleteParams::default()).await?;
    wait_for("the Widget gone", WAIT, || async {
        Ok(widgets.get_opt("one").await?.is_none().then_some(()))
    })
    .await?;
    crds.delete(name, &DeleteParams::default())
        .await
        .context("deleting the CRD without custom resources")?;
    Ok(())
}
