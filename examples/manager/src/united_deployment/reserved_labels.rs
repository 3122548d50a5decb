//! Writes the `apps.kruise.io/united-deployment-reserved-pod` label the `Adaptive` strategy with
//! `reserveUnschedulablePods` decided ([`kruise_schedule::united_deployment::reservation`]): a merge patch
//! of the label alone per pod (upstream `patchReservedStatusChangedPods`). A pod already gone is skipped.

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::united_deployment::RESERVED_POD_LABEL;
use kruise_runtime::actions::is_not_found;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::json;

/// Labels each pod of `relabel` (`(name, reserved)`) in `namespace`; returns a message per failed write.
pub async fn write_reserved_labels(
    client: &Client,
    namespace: &str,
    relabel: &[(String, bool)],
) -> Vec<String> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut failures = Vec::new();
    for (name, reserved) in relabel {
        let value = if *reserved { "true" } else { "false" };
        let patch = json!({"metadata": {"labels": {RESERVED_POD_LABEL: value}}});
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(error) if is_not_found(&error) => {}
            Err(error) => failures.push(format!(
                "labelling pod {namespace}/{name} {RESERVED_POD_LABEL}={value}: {error}"
            )),
        }
    }
    failures
}
