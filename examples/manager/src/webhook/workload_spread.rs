//! The WorkloadSpread pod webhooks (gate `WorkloadSpread`, on by default as upstream since v1.5), over
//! [`kruise_schedule::spread::workload_spread`]:
//!
//! * pod CREATE (mutating, [`WORKLOAD_SPREAD_MUTATING_PATH`], after the pod webhook): the WorkloadSpread of
//!   the pod's namespace whose `targetRef` is the pod's workload (its controller owner; for a Deployment's
//!   pod, its ReplicaSet's owner) spends one missing replica of its first suitable subset, recording the pod
//!   in `creatingPods` with a status write conditional on the `resourceVersion` it decided on (on a
//!   conflict it reads the WorkloadSpread again and decides again, up to [`WRITE_ATTEMPTS`] times). The pod
//!   then gets the subset's node affinity, tolerations and patch, and the
//!   `apps.kruise.io/matched-workloadspread` annotation. No suitable subset: the pod is left alone. The
//!   status could not be written: the pod is refused (code 500), so its workload creates it again.
//! * pod DELETE (validating, [`WORKLOAD_SPREAD_VALIDATING_PATH`]): an active pod carrying the annotation
//!   gives its subset the replica back (`deletingPods`, conditional write). The deletion is always allowed;
//!   a status that cannot be written is logged, and the controller recounts anyway.
//!
//! Dry-run requests are decided the same way, without writing the status (`sideEffects: NoneOnDryRun`).
//! Pods whose workload has no WorkloadSpread are allowed unchanged without any API call; only a pod owned
//! by a ReplicaSet, in a namespace with a WorkloadSpread of a Deployment, costs one read of the ReplicaSet.
//!
//! ```
//! use kruise_api::apps::v1beta1::TargetReference;
//! use kruise_manager::webhook::workload_spread::{Workload, targets};
//!
//! let target = TargetReference {
//!     api_version: "apps.kruise.io/v1alpha1".into(), kind: "CloneSet".into(), name: "web".into(),
//! };
//! let workload = Workload { api_version: "apps.kruise.io/v1beta1".into(), kind: "CloneSet".into(), name: "web".into() };
//! assert!(targets(&target, &workload), "any version of the same group");
//! ```

use std::sync::Arc;

use axum::Router;
use axum::routing::post;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, RuleWithOperations, ValidatingWebhook,
};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{TargetReference, WorkloadSpread, WorkloadSpreadStatus};
use kruise_runtime::Informers;
use kruise_runtime::actions::{self, ActionError};
use kruise_schedule::spread::workload_spread::admission::{admit_create, admit_delete, spread_key};
use kruise_schedule::spread::workload_spread::injection::inject;
use kruise_schedule::spread::workload_spread::matched::{matched_of, pod_key};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::runtime::reflector::Store;
use kube::{Api, Client, ResourceExt};

use super::admission::{answer, parse_request};
use super::configuration::{WebhookOptions, client_config};
use super::review_body::ReviewBody;
use super::server::respond;

/// The path of the pod CREATE webhook.
pub const WORKLOAD_SPREAD_MUTATING_PATH: &str = "/mutate-pod-workloadspread";
/// The path of the pod DELETE webhook.
pub const WORKLOAD_SPREAD_VALIDATING_PATH: &str = "/validate-pod-workloadspread";
/// The name of the pod CREATE webhook in the MutatingWebhookConfiguration.
pub const WORKLOAD_SPREAD_MUTATING_WEBHOOK_NAME: &str = "mworkloadspread.kruise.io";
/// The name of the pod DELETE webhook in the ValidatingWebhookConfiguration.
pub const WORKLOAD_SPREAD_VALIDATING_WEBHOOK_NAME: &str = "vworkloadspread.kruise.io";
/// How many times a status write is decided and tried (conflicts with other admissions or the controller).
pub const WRITE_ATTEMPTS: usize = 5;

/// A pod's workload: its controller owner (for a Deployment's pod, the Deployment).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Its `apiVersion`.
    pub api_version: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
}

impl From<&OwnerReference> for Workload {
    fn from(owner: &OwnerReference) -> Self {
        Self {
            api_version: owner.api_version.clone(),
            kind: owner.kind.clone(),
            name: owner.name.clone(),
        }
    }
}

/// The API group of an `apiVersion` (`""` for the core group).
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

/// Whether `target` names `workload` (same group, kind and name; any version).
#[must_use]
pub fn targets(target: &TargetReference, workload: &Workload) -> bool {
    target.kind == workload.kind
        && target.name == workload.name
        && group_of(&target.api_version) == group_of(&workload.api_version)
}

/// The controller owner of an object.
fn controller_of(owners: Option<&Vec<OwnerReference>>) -> Option<&OwnerReference> {
    owners?.iter().find(|owner| owner.controller == Some(true))
}

/// The WorkloadSpread webhooks: the API client for status writes and the shared WorkloadSpread store.
#[derive(Clone)]
pub struct SpreadWebhook {
    client: Client,
    spreads: Store<WorkloadSpread>,
    enabled: bool,
}

impl SpreadWebhook {
    /// The webhooks reading WorkloadSpreads from the process's shared informer; with `enabled` false
    /// (gate off) every request is allowed unchanged.
    #[must_use]
    pub fn new(client: Client, informers: &Informers, enabled: bool) -> Self {
        let spreads = if enabled {
            informers.get::<WorkloadSpread>().store()
        } else {
            kube::runtime::reflector::store().0
        };
        Self {
            client,
            spreads,
            enabled,
        }
    }

    /// The webhooks reading WorkloadSpreads from `spreads` (a store fed by the caller).
    #[must_use]
    pub fn from_store(client: Client, spreads: Store<WorkloadSpread>, enabled: bool) -> Self {
        Self {
            client,
            spreads,
            enabled,
        }
    }

    /// The WorkloadSpreads of `namespace` (not being deleted), by name.
    fn spreads_in(&self, namespace: &str) -> Vec<Arc<WorkloadSpread>> {
        let mut spreads: Vec<_> = self
            .spreads
            .state()
            .into_iter()
            .filter(|spread| {
                spread.namespace().as_deref() == Some(namespace)
                    && spread.metadata.deletion_timestamp.is_none()
            })
            .collect();
        spreads.sort_by_key(|spread| spread.name_any());
        spreads
    }

    /// The WorkloadSpread of the pod's workload, if any.
    async fn spread_of(&self, pod: &Pod, namespace: &str) -> Option<Arc<WorkloadSpread>> {
        let owner = controller_of(pod.metadata.owner_references.as_ref())?;
        let spreads = self.spreads_in(namespace);
        if spreads.is_empty() {
            return None;
        }
        let owner = Workload::from(owner);
        if let Some(spread) = spreads
            .iter()
            .find(|spread| targets(&spread.spec.target_reference, &owner))
        {
            return Some(Arc::clone(spread));
        }
        // A Deployment's pods are owned by its ReplicaSets.
        let wants_deployment = spreads.iter().any(|spread| {
            spread.spec.target_reference.kind == "Deployment"
                && group_of(&spread.spec.target_reference.api_version) == "apps"
        });
        if !(owner.kind == "ReplicaSet"
            && group_of(&owner.api_version) == "apps"
            && wants_deployment)
        {
            return None;
        }
        let replica_sets: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let replica_set = match replica_sets.get_metadata_opt(&owner.name).await {
            Ok(found) => found?,
            Err(error) => {
                tracing::warn!(namespace, replicaset = %owner.name, %error, "cannot read the ReplicaSet of a pod; no WorkloadSpread applied");
                return None;
            }
        };
        let deployment = Workload::from(controller_of(
            replica_set.metadata.owner_references.as_ref(),
        )?);
        spreads
            .into_iter()
            .find(|spread| targets(&spread.spec.target_reference, &deployment))
    }

    /// Reads the WorkloadSpread again (after a conflict).
    async fn fresh(&self, spread: &WorkloadSpread) -> Result<WorkloadSpread, kube::Error> {
        let api: Api<WorkloadSpread> =
            Api::namespaced(self.client.clone(), &spread.namespace().unwrap_or_default());
        api.get(&spread.name_any()).await
    }

    /// Writes `status` on `spread` conditionally.
    async fn write(
        &self,
        spread: &WorkloadSpread,
        status: &WorkloadSpreadStatus,
    ) -> Result<(), ActionError> {
        let api: Api<WorkloadSpread> =
            Api::namespaced(self.client.clone(), &spread.namespace().unwrap_or_default());
        actions::replace_status(&api, spread, status)
            .await
            .map(|_| ())
    }

    /// Answers a pod CREATE.
    pub async fn on_create(&self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let allowed = AdmissionResponse::from(request);
        let Some(pod) = pod_of(request.object.as_ref()) else {
            return allowed;
        };
        let namespace = request
            .namespace
            .clone()
            .or_else(|| pod.namespace())
            .unwrap_or_default();
        let Some(found) = self.spread_of(&pod, &namespace).await else {
            return allowed;
        };
        // A pod with only a generateName is recorded under the request's UID (unique per admission).
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = name.is_empty().then(|| request.uid.clone());
        let key = uid.clone().unwrap_or(name);
        let mut spread = (*found).clone();
        for attempt in 1..=WRITE_ATTEMPTS {
            let admitted = match admit_create(&spread, &key, Timestamp::now()) {
                Ok(Some(admitted)) => admitted,
                Ok(None) => return allowed,
                Err(error) => return refuse(allowed, 400, &error.to_string()),
            };
            if admitted.changed && !request.dry_run {
                match self.write(&spread, &admitted.status).await {
                    Ok(()) => {}
                    Err(ActionError::Conflict { .. } | ActionError::NoResourceVersion { .. })
                        if attempt < WRITE_ATTEMPTS =>
                    {
                        match self.fresh(&spread).await {
                            Ok(newer) => spread = newer,
                            Err(error) => {
                                return refuse(
                                    allowed,
                                    500,
                                    &format!(
                                        "WorkloadSpread {}: reading it again: {error}",
                                        spread_key(&spread)
                                    ),
                                );
                            }
                        }
                        continue;
                    }
                    Err(error) => {
                        return refuse(
                            allowed,
                            500,
                            &format!(
                                "WorkloadSpread {}: recording pod {key} in subset {}: {error}",
                                spread_key(&spread),
                                admitted.subset.name
                            ),
                        );
                    }
                }
            }
            let mut injected = pod.clone();
            if let Err(error) = inject(
                &mut injected,
                &spread_key(&spread),
                &spread.name_any(),
                admitted.subset,
                uid.as_deref(),
            ) {
                return refuse(allowed, 400, &error.to_string());
            }
            tracing::info!(workloadspread = %spread_key(&spread), subset = %admitted.subset.name, pod = %key, dry_run = request.dry_run, "pod admitted into a subset");
            return with_patch(allowed, &pod, &injected);
        }
        refuse(
            allowed,
            500,
            &format!(
                "WorkloadSpread {}: the status kept changing while pod {key} was admitted",
                spread_key(&spread)
            ),
        )
    }

    /// Answers a pod DELETE: always allowed.
    pub async fn on_delete(&self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let allowed = AdmissionResponse::from(request);
        let Some(pod) = pod_of(request.old_object.as_ref()) else {
            return allowed;
        };
        if !kruise_api::pod::is_active(&pod) {
            return allowed;
        }
        let matched = match matched_of(&pod) {
            Ok(Some(matched)) => matched,
            Ok(None) => return allowed,
            Err(error) => {
                tracing::warn!(%error, "pod deletion not counted by its WorkloadSpread");
                return allowed;
            }
        };
        let namespace = pod
            .namespace()
            .or_else(|| request.namespace.clone())
            .unwrap_or_default();
        let Some(found) = self
            .spreads_in(&namespace)
            .into_iter()
            .find(|spread| spread.name_any() == matched.name)
        else {
            return allowed;
        };
        let key = pod_key(&pod, Some(&matched)).to_owned();
        let mut spread = (*found).clone();
        for attempt in 1..=WRITE_ATTEMPTS {
            let Some(status) = admit_delete(&spread, &matched.subset, &key, Timestamp::now())
            else {
                return allowed;
            };
            if request.dry_run {
                return allowed;
            }
            match self.write(&spread, &status).await {
                Ok(()) => {
                    tracing::info!(workloadspread = %spread_key(&spread), subset = %matched.subset, pod = %key, "pod deletion counted");
                    return allowed;
                }
                Err(ActionError::Conflict { .. }) if attempt < WRITE_ATTEMPTS => {
                    match self.fresh(&spread).await {
                        Ok(newer) => spread = newer,
                        Err(error) => {
                            tracing::warn!(workloadspread = %spread_key(&spread), %error, "pod deletion not counted");
                            return allowed;
                        }
                    }
                }
                Err(error) => {
                    tracing::warn!(workloadspread = %spread_key(&spread), %error, "pod deletion not counted");
                    return allowed;
                }
            }
        }
        allowed
    }
}

/// The pod of a request's object, when it decodes.
fn pod_of(object: Option<&DynamicObject>) -> Option<Pod> {
    let value = serde_json::to_value(object?).ok()?;
    serde_json::from_value(value).ok()
}

/// `allowed` with the JSON patch from `before` to `after`.
fn with_patch(allowed: AdmissionResponse, before: &Pod, after: &Pod) -> AdmissionResponse {
    let (Ok(before_value), Ok(after_value)) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return refuse(allowed, 500, "encoding the pod");
    };
    let patch = json_patch::diff(&before_value, &after_value);
    let fallback = allowed.clone();
    allowed
        .with_patch(patch)
        .unwrap_or_else(|error| refuse(fallback, 500, &format!("encoding the patch: {error}")))
}

fn refuse(allowed: AdmissionResponse, code: u16, message: &str) -> AdmissionResponse {
    let mut response = allowed.deny(message);
    response.result.code = code;
    response.result.reason = if code == 400 {
        "BadRequest"
    } else {
        "InternalError"
    }
    .to_owned();
    response
}

/// Whether the request is about a pod itself (not a subresource) with `operation`.
fn is_pod(request: &AdmissionRequest<DynamicObject>, operation: &Operation) -> bool {
    request.resource.group.is_empty()
        && request.resource.resource == "pods"
        && request.sub_resource.as_deref().is_none_or(str::is_empty)
        && std::mem::discriminant(&request.operation) == std::mem::discriminant(operation)
}

/// The routes of both webhooks.
pub fn router(webhook: SpreadWebhook) -> Router {
    let on_create = webhook.clone();
    Router::new()
        .route(
            WORKLOAD_SPREAD_MUTATING_PATH,
            post(move |ReviewBody(body): ReviewBody| {
                let webhook = on_create.clone();
                async move {
                    let request = match parse_request(&body) {
                        Ok(request) => request,
                        Err(answer) => return respond(answer),
                    };
                    let response = if webhook.enabled && is_pod(&request, &Operation::Create) {
                        webhook.on_create(&request).await
                    } else {
                        AdmissionResponse::from(&request)
                    };
                    respond(answer(200, &response))
                }
            }),
        )
        .route(
            WORKLOAD_SPREAD_VALIDATING_PATH,
            post(move |ReviewBody(body): ReviewBody| {
                let webhook = webhook.clone();
                async move {
                    let request = match parse_request(&body) {
                        Ok(request) => request,
                        Err(answer) => return respond(answer),
                    };
                    let response = if webhook.enabled && is_pod(&request, &Operation::Delete) {
                        webhook.on_delete(&request).await
                    } else {
                        AdmissionResponse::from(&request)
                    };
                    respond(answer(200, &response))
                }
            }),
        )
}

fn pod_rule(operation: &str) -> RuleWithOperations {
    RuleWithOperations {
        api_groups: Some(vec![String::new()]),
        api_versions: Some(vec!["v1".to_owned()]),
        operations: Some(vec![operation.to_owned()]),
        resources: Some(vec!["pods".to_owned()]),
        scope: Some("Namespaced".to_owned()),
    }
}

/// The pod CREATE webhook's entry in the MutatingWebhookConfiguration (with the namespace exclusions of the
/// pod webhook), when the gate is on.
#[must_use]
pub fn mutating_webhook(
    options: &WebhookOptions,
    ca_bundle: &[u8],
    namespace_selector: Option<LabelSelector>,
) -> Option<MutatingWebhook> {
    options.workload_spread.then(|| MutatingWebhook {
        name: WORKLOAD_SPREAD_MUTATING_WEBHOOK_NAME.to_owned(),
        admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
        client_config: client_config(&options.target, ca_bundle, WORKLOAD_SPREAD_MUTATING_PATH),
        failure_policy: Some(options.failure_policy.as_str().to_owned()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector,
        object_selector: Some(LabelSelector::default()),
        reinvocation_policy: Some("Never".to_owned()),
        rules: Some(vec![pod_rule("CREATE")]),
        side_effects: "NoneOnDryRun".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        match_conditions: None,
    })
}

/// The pod DELETE webhook's entry in the ValidatingWebhookConfiguration, when the gate is on. Its failure
/// policy is `Ignore`: it only counts, so a manager that cannot be reached must not block pod deletions.
#[must_use]
pub fn validating_webhook(
    options: &WebhookOptions,
    ca_bundle: &[u8],
    namespace_selector: Option<LabelSelector>,
) -> Option<ValidatingWebhook> {
    options.workload_spread.then(|| ValidatingWebhook {
        name: WORKLOAD_SPREAD_VALIDATING_WEBHOOK_NAME.to_owned(),
        admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
        client_config: client_config(&options.target, ca_bundle, WORKLOAD_SPREAD_VALIDATING_PATH),
        failure_policy: Some("Ignore".to_owned()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector,
        object_selector: Some(LabelSelector::default()),
        rules: Some(vec![pod_rule("DELETE")]),
        side_effects: "NoneOnDryRun".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        match_conditions: None,
    })
}

#[cfg(test)]
mod tests;
