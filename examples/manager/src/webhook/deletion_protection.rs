//! The deletion protection webhook (gate `ResourcesDeletionProtection`, on by default as upstream): a DELETE
//! of a Namespace, CustomResourceDefinition, Deployment, ReplicaSet, StatefulSet, CloneSet, Advanced
//! StatefulSet, Advanced DaemonSet or UnitedDeployment labelled `policy.kruise.io/delete-protection` is
//! judged by [`kruise_schedule::protection::deletion`]:
//!
//! * `Always`: refused;
//! * `Cascading`: refused while a workload has replicas, a Namespace has active pods (listed from the API
//!   server, metadata only, without terminated pods), or a CustomResourceDefinition has custom resources
//!   (listed, metadata only, in its storage version).
//!
//! A refusal is `allowed: false`, `code: 403`, reason `Forbidden`, and a message naming the object and the
//! rule, e.g. `Deployment default/web: forbidden by ResourcesProtectionDeletion for
//! policy.kruise.io/delete-protection=Cascading and replicas 3>0` (`kubectl delete` prints it after the
//! webhook's name). When the count cannot be made, the deletion is refused with `code: 500` and the error:
//! the object is protected, so an unknown answer keeps it. Only labelled objects reach the webhook (the
//! configuration's object selector, [`deletion_protection_webhook`]).
//!
//! ```
//! use kruise_manager::webhook::deletion_protection::{Judgement, judge};
//! use kruise_manager::webhook::admission::parse_request;
//!
//! let body = serde_json::json!({
//!     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//!     "request": {
//!         "uid": "1", "operation": "DELETE", "name": "web", "namespace": "default",
//!         "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
//!         "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
//!         "userInfo": {},
//!         "oldObject": {"apiVersion": "apps/v1", "kind": "Deployment",
//!             "metadata": {"name": "web", "namespace": "default",
//!                 "labels": {"policy.kruise.io/delete-protection": "Cascading"}},
//!             "spec": {"replicas": 3}}
//!     }
//! });
//! let request = parse_request(&serde_json::to_vec(&body).unwrap()).unwrap();
//! let Judgement::Answer(response) = judge(&request) else { panic!("a workload needs no count") };
//! assert!(!response.allowed);
//! assert_eq!(
//!     response.result.message,
//!     "Deployment default/web: forbidden by ResourcesProtectionDeletion for \
//!      policy.kruise.io/delete-protection=Cascading and replicas 3>0"
//! );
//! ```

use axum::Router;
use axum::routing::post;
use k8s_openapi::api::admissionregistration::v1::{RuleWithOperations, ValidatingWebhook};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kruise_api::keys::pub_policy::{
    DELETE_PROTECTION_ALWAYS, DELETE_PROTECTION_CASCADING, DELETE_PROTECTION_LABEL,
};
use kruise_schedule::protection::deletion::{
    DeletionProtection, DeletionRefused, Dependents, ProtectedKind,
};
use kube::api::{Api, ListParams};
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::core::{ApiResource, DynamicObject};
use kube::{Client, Resource as _};
use serde_json::Value;

use super::admission::{answer, parse_request, refuse};
use super::configuration::{WebhookOptions, client_config};
use super::review_body::ReviewBody;
use super::server::respond;

/// The path of the webhook.
pub const DELETION_PROTECTION_PATH: &str = "/validate-deletion-protection";
/// The name of the webhook in the ValidatingWebhookConfiguration.
pub const DELETION_PROTECTION_WEBHOOK_NAME: &str = "vdeletionprotection.kruise.io";

/// Pods listed per request when counting a Namespace's active pods (and custom resources per request).
const LIST_PAGE: u32 = 500;

/// What the webhook decided from the request alone.
#[derive(Debug)]
pub enum Judgement {
    /// The answer.
    Answer(AdmissionResponse),
    /// A `Cascading` Namespace or CustomResourceDefinition: count, then [`Pending::finish`].
    Count(Pending),
}

/// A judgement waiting for a count of dependents in the cluster.
#[derive(Debug)]
pub struct Pending {
    allowed: AdmissionResponse,
    subject: String,
    /// What to count.
    pub count: Count,
}

/// The dependents to count.
#[derive(Clone, Debug, PartialEq)]
pub enum Count {
    /// The active pods of the namespace.
    ActivePods {
        /// The namespace.
        namespace: String,
    },
    /// The custom resources of a CustomResourceDefinition, in every namespace.
    CustomResources {
        /// Their API resource (the storage version, else the first served one).
        resource: ApiResource,
    },
}

impl Pending {
    /// The answer, given the count (or why it could not be made).
    #[must_use]
    pub fn finish(self, counted: Result<u64, String>) -> AdmissionResponse {
        let dependents = match (&self.count, counted) {
            (_, Err(error)) => {
                return refuse(
                    self.allowed,
                    500,
                    "InternalError",
                    format!(
                        "{}: counting what {DELETE_PROTECTION_LABEL}={DELETE_PROTECTION_CASCADING} \
                         protects: {error}",
                        self.subject
                    ),
                );
            }
            (Count::ActivePods { .. }, Ok(count)) => Dependents::ActivePods(count),
            (Count::CustomResources { .. }, Ok(count)) => Dependents::CustomResources(count),
        };
        judged(
            self.allowed,
            &self.subject,
            DeletionProtection::Cascading.judge(Some(dependents)),
        )
    }
}

/// Judges one admission request: anything but the DELETE of a protected object is allowed.
#[must_use]
pub fn judge(request: &AdmissionRequest<DynamicObject>) -> Judgement {
    let allowed = AdmissionResponse::from(request);
    let is_delete = matches!(request.operation, Operation::Delete)
        && request.sub_resource.as_deref().is_none_or(str::is_empty);
    let kind = ProtectedKind::of_resource(&request.resource.group, &request.resource.resource);
    let (Some(kind), Some(old), true) = (kind, request.old_object.as_ref(), is_delete) else {
        return Judgement::Answer(allowed);
    };
    let Some(protection) = DeletionProtection::of(old.meta()) else {
        return Judgement::Answer(allowed);
    };
    let subject = subject(kind, request);
    if protection == DeletionProtection::Always {
        return Judgement::Answer(judged(allowed, &subject, protection.judge(None)));
    }
    let object = match serde_json::to_value(old) {
        Ok(object) => object,
        Err(error) => {
            return Judgement::Answer(refuse(
                allowed,
                400,
                "BadRequest",
                format!("{subject}: reading the object: {error}"),
            ));
        }
    };
    let count = match kind {
        ProtectedKind::Namespace => Count::ActivePods {
            namespace: request.name.clone(),
        },
        ProtectedKind::CustomResourceDefinition => match custom_resource_of(&object) {
            Ok(resource) => Count::CustomResources { resource },
            Err(problem) => {
                return Judgement::Answer(refuse(
                    allowed,
                    400,
                    "BadRequest",
                    format!("{subject}: {problem}"),
                ));
            }
        },
        _ => {
            let dependents = kind.dependents_of(&object);
            return Judgement::Answer(judged(allowed, &subject, protection.judge(dependents)));
        }
    };
    Judgement::Count(Pending {
        allowed,
        subject,
        count,
    })
}

/// `Kind namespace/name` or `Kind name`.
fn subject(kind: ProtectedKind, request: &AdmissionRequest<DynamicObject>) -> String {
    let namespace = request
        .namespace
        .as_deref()
        .filter(|namespace| !namespace.is_empty());
    // The API server also fills `namespace` for a Namespace itself (with its name).
    match namespace.filter(|_| kind.is_namespaced()) {
        Some(namespace) => format!("{} {namespace}/{}", kind.kind(), request.name),
        None => format!("{} {}", kind.kind(), request.name),
    }
}

/// The API resource of a CustomResourceDefinition's objects (`v1` or `v1beta1` CRD).
fn custom_resource_of(crd: &Value) -> Result<ApiResource, String> {
    let text = |pointer: &str| {
        crd.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .ok_or_else(|| {
                format!(
                    "{} is missing",
                    pointer.trim_start_matches('/').replace('/', ".")
                )
            })
    };
    let group = text("/spec/group")?;
    let plural = text("/spec/names/plural")?;
    let kind = text("/spec/names/kind")?;
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let flag =
        |version: &Value, name: &str| version.get(name).and_then(Value::as_bool) == Some(true);
    let chosen = versions
        .iter()
        .find(|version| flag(version, "served") && flag(version, "storage"))
        .or_else(|| versions.iter().find(|version| flag(version, "served")))
        .and_then(|version| version.get("name").and_then(Value::as_str));
    let version = match chosen {
        Some(version) => version,
        // A v1beta1 CRD may name its one version in spec.version only.
        None => text("/spec/version")?,
    };
    Ok(ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: format!("{group}/{version}"),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    })
}

fn judged(
    allowed: AdmissionResponse,
    subject: &str,
    judgement: Result<(), DeletionRefused>,
) -> AdmissionResponse {
    match judgement {
        Ok(()) => allowed,
        Err(refused) => refuse(allowed, 403, "Forbidden", format!("{subject}: {refused}")),
    }
}

/// Counts what [`Count`] asks for through the API server.
///
/// # Errors
/// The API server's error, as text.
pub async fn count(client: &Client, count: &Count) -> Result<u64, String> {
    match count {
        Count::ActivePods { namespace } => {
            let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
            let params = ListParams::default()
                .fields("status.phase!=Succeeded,status.phase!=Failed")
                .limit(LIST_PAGE);
            count_pages(params, |params| {
                let api = api.clone();
                async move {
                    let page = api.list_metadata(&params).await?;
                    let active = page
                        .items
                        .iter()
                        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
                        .count();
                    Ok((active, page.metadata.continue_))
                }
            })
            .await
        }
        Count::CustomResources { resource } => {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), resource);
            count_pages(ListParams::default().limit(LIST_PAGE), |params| {
                let api = api.clone();
                async move {
                    let page = api.list_metadata(&params).await?;
                    Ok((page.items.len(), page.metadata.continue_))
                }
            })
            .await
        }
    }
}

/// Sums the counts of every page of a list.
async fn count_pages<F, Fut>(mut params: ListParams, mut page: F) -> Result<u64, String>
where
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = kube::Result<(usize, Option<String>)>>,
{
    let mut total: u64 = 0;
    loop {
        let (counted, next) = page(params.clone())
            .await
            .map_err(|error| error.to_string())?;
        total = total.saturating_add(u64::try_from(counted).unwrap_or(u64::MAX));
        match next.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(total),
        }
    }
}

/// The route of the webhook. With the gate off (`enabled: false`) every request is allowed: a configuration
/// left from a run with the gate on must not keep protecting.
pub fn router(client: Client, enabled: bool) -> Router {
    Router::new().route(
        DELETION_PROTECTION_PATH,
        post(move |ReviewBody(body): ReviewBody| {
            let client = client.clone();
            async move {
                let request = match parse_request(&body) {
                    Ok(request) => request,
                    Err(answer) => return respond(answer),
                };
                let response = match (enabled, judge(&request)) {
                    (false, _) => AdmissionResponse::from(&request),
                    (true, Judgement::Answer(response)) => response,
                    (true, Judgement::Count(pending)) => {
                        let counted = count(&client, &pending.count).await;
                        pending.finish(counted)
                    }
                };
                respond(answer(200, &response))
            }
        }),
    )
}

/// The webhook's entry in the ValidatingWebhookConfiguration: DELETE of every protected kind, for objects
/// labelled `Always` or `Cascading` only.
#[must_use]
pub fn deletion_protection_webhook(
    options: &WebhookOptions,
    ca_bundle: &[u8],
) -> ValidatingWebhook {
    let rules = ProtectedKind::ALL
        .into_iter()
        .map(|kind| RuleWithOperations {
            api_groups: Some(vec![kind.group().to_owned()]),
            api_versions: Some(kind.versions().iter().map(|&v| v.to_owned()).collect()),
            operations: Some(vec!["DELETE".to_owned()]),
            resources: Some(vec![kind.resource().to_owned()]),
            scope: Some(
                if kind.is_namespaced() {
                    "Namespaced"
                } else {
                    "Cluster"
                }
                .to_owned(),
            ),
        })
        .collect();
    ValidatingWebhook {
        name: DELETION_PROTECTION_WEBHOOK_NAME.to_owned(),
        admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
        client_config: client_config(&options.target, ca_bundle, DELETION_PROTECTION_PATH),
        failure_policy: Some(options.failure_policy.as_str().to_owned()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector: None,
        object_selector: Some(LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: DELETE_PROTECTION_LABEL.to_owned(),
                operator: "In".to_owned(),
                values: Some(vec![
                    DELETE_PROTECTION_ALWAYS.to_owned(),
                    DELETE_PROTECTION_CASCADING.to_owned(),
                ]),
            }]),
            match_labels: None,
        }),
        rules: Some(rules),
        side_effects: "None".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        match_conditions: None,
    }
}

#[cfg(test)]
mod tests;
