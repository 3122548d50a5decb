//! The PodUnavailableBudget validating webhook (upstream `pkg/webhook/pod/validating/pod_unavailable_budget.go`):
//! a request that would take a pod covered by a budget away, while it is available, must spend one unit of
//! the budget ([`crate::unavailable_budget::spend()`], a conditional status write), or is refused.
//!
//! * gate `PodUnavailableBudgetDeleteGate` (on by default): `DELETE` of a pod (operation `DELETE`) and
//!   `CREATE` of `pods/eviction` (operation `EVICT`; the pod is the request's `name`, read from the shared
//!   pod informer, else from the API server);
//! * gate `PodUnavailableBudgetUpdateGate` (off by default): `UPDATE` of a pod whose spec changes
//!   ([`update_operation`]: `UPDATE`, or `RESIZE` when only container resources change), judged on the pod
//!   as it is before the update.
//!
//! A refusal is `allowed: false`, `code: 429`, reason `TooManyRequests` (what `kubectl drain` and other
//! eviction clients wait on and retry), with a message such as `pod default/web-3 may not be evicted:
//! PodUnavailableBudget default/web-pub allows no more unavailable pods (currentAvailable 8,
//! desiredAvailable 8)`. A dry run (`dryRun: true`) is decided the same way and writes nothing (the
//! configuration says `sideEffects: NoneOnDryRun`). When the budget cannot be read or written the request
//! is refused with code 500 and the error, and after [`crate::unavailable_budget::spend::ATTEMPTS`]
//! conflicting writes with 429 (try again); so is a protected request that arrives before the budget
//! informer has its first list (it waits up to 5 s for it).

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use k8s_openapi::api::admissionregistration::v1::{RuleWithOperations, ValidatingWebhook};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::policy::v1beta1::PubOperation;
use kruise_runtime::Informer;
use kruise_schedule::protection::unavailable_budget::update_operation;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client};

use super::admission::{answer, parse_request, refuse};
use super::configuration::{WebhookOptions, client_config};
use super::review_body::ReviewBody;
use super::server::respond;
use crate::unavailable_budget::spend::SpendError;
use crate::unavailable_budget::{BudgetStores, Spent, spend};

/// The path of the webhook.
pub const POD_UNAVAILABLE_BUDGET_PATH: &str = "/validate-pod-unavailable-budget";
/// The name of the webhook in the ValidatingWebhookConfiguration.
pub const POD_UNAVAILABLE_BUDGET_WEBHOOK_NAME: &str = "vpodunavailablebudget.kruise.io";

/// How long a request waits for the budget informer's first list before it is refused (429, try again).
const SYNC_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What the webhook reads and writes with, and which operations its gates turn on.
#[derive(Clone)]
pub struct BudgetGuard {
    /// Reads pods missing from the informer, reads and writes budgets.
    pub client: Client,
    /// The budgets.
    pub budgets: BudgetStores,
    /// The shared pod informer (the pod of an eviction).
    pub pods: Informer<Pod>,
    /// Gate `PodUnavailableBudgetDeleteGate`: deletions and evictions.
    pub delete_gate: bool,
    /// Gate `PodUnavailableBudgetUpdateGate`: updates.
    pub update_gate: bool,
}

/// What a request asks for, as far as budgets go.
#[derive(Debug, PartialEq)]
pub enum Request {
    /// Nothing a budget protects (another resource, an update that keeps the spec, a gate off).
    Unprotected,
    /// `operation` on the pod given.
    Pod(PubOperation, Box<Pod>),
    /// An eviction of the pod named (namespace, name), to be looked up.
    Eviction(String, String),
}

/// Reads what `request` asks for, with the gates `delete_gate` and `update_gate`.
///
/// # Errors
/// A pod in the request does not decode: the message.
pub fn classify(
    request: &AdmissionRequest<DynamicObject>,
    delete_gate: bool,
    update_gate: bool,
) -> Result<Request, String> {
    let is_pods = request.resource.group.is_empty() && request.resource.resource == "pods";
    let sub_resource = request.sub_resource.as_deref().unwrap_or_default();
    if !is_pods {
        return Ok(Request::Unprotected);
    }
    let namespace = request.namespace.clone().unwrap_or_default();
    match (&request.operation, sub_resource) {
        (Operation::Delete, "") if delete_gate => {
            let pod = decode(request.old_object.as_ref(), "old")?;
            Ok(Request::Pod(PubOperation::Delete, Box::new(pod)))
        }
        (Operation::Create, "eviction") if delete_gate => {
            Ok(Request::Eviction(namespace, request.name.clone()))
        }
        (Operation::Update, "") if update_gate => {
            let old = decode(request.old_object.as_ref(), "old")?;
            let new = decode(request.object.as_ref(), "new")?;
            Ok(match update_operation(&old, &new) {
                Some(operation) => Request::Pod(operation, Box::new(old)),
                None => Request::Unprotected,
            })
        }
        _ => Ok(Request::Unprotected),
    }
}

fn decode(object: Option<&DynamicObject>, which: &str) -> Result<Pod, String> {
    let object = object.ok_or_else(|| format!("the request has no {which} pod"))?;
    let value = serde_json::to_value(object)
        .map_err(|error| format!("reading the {which} pod: {error}"))?;
    serde_json::from_value(value).map_err(|error| format!("decoding the {which} pod: {error}"))
}

/// The route of the webhook.
pub fn router(guard: BudgetGuard) -> Router {
    Router::new()
        .route(POD_UNAVAILABLE_BUDGET_PATH, post(validate))
        .with_state(guard)
}

async fn validate(
    State(guard): State<BudgetGuard>,
    ReviewBody(body): ReviewBody,
) -> impl axum::response::IntoResponse {
    let request = match parse_request(&body) {
        Ok(request) => request,
        Err(answer) => return respond(answer),
    };
    let response = judge(&guard, &request).await;
    respond(answer(200, &response))
}

/// The answer to one request.
pub async fn judge(
    guard: &BudgetGuard,
    request: &AdmissionRequest<DynamicObject>,
) -> AdmissionResponse {
    let allowed = AdmissionResponse::from(request);
    let (operation, pod) = match classify(request, guard.delete_gate, guard.update_gate) {
        Ok(Request::Unprotected) => return allowed,
        Ok(Request::Pod(operation, pod)) => (operation, *pod),
        Ok(Request::Eviction(namespace, name)) => {
            match eviction_pod(guard, &namespace, &name).await {
                Ok(Some(pod)) => (PubOperation::Evict, pod),
                // The API server answers 404 itself.
                Ok(None) => return allowed,
                Err(message) => return refuse(allowed, 500, "InternalError", message),
            }
        }
        Err(message) => return refuse(allowed, 400, "BadRequest", message),
    };
    // Just after start the budgets may still be listing (the CRD was being installed): wait a little.
    let synced = guard.budgets.informer().wait_synced();
    if tokio::time::timeout(SYNC_WAIT, synced).await.is_err() {
        return refuse(
            allowed,
            429,
            "TooManyRequests",
            "the PodUnavailableBudget cache of the webhook is not synced yet; retry shortly"
                .to_owned(),
        );
    }
    match spend(
        &guard.client,
        &guard.budgets,
        &pod,
        &operation,
        request.dry_run,
    )
    .await
    {
        Ok(Spent::Free) => allowed,
        Ok(Spent::Unit(budget)) => {
            tracing::info!(pod = %format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(),
                pod.metadata.name.as_deref().unwrap_or_default()), %budget, operation = operation.as_str(),
                dry_run = request.dry_run, "PodUnavailableBudget unit spent");
            allowed
        }
        Ok(Spent::Refused(message)) => refuse(allowed, 429, "TooManyRequests", message),
        Err(error @ SpendError::Contended { .. }) => {
            refuse(allowed, 429, "TooManyRequests", error.to_string())
        }
        Err(error) => refuse(allowed, 500, "InternalError", error.to_string()),
    }
}

/// The pod of an eviction: from the informer, else from the API server.
async fn eviction_pod(
    guard: &BudgetGuard,
    namespace: &str,
    name: &str,
) -> Result<Option<Pod>, String> {
    if let Some(pod) = guard.pods.get(&ObjectRef::new(name).within(namespace)) {
        return Ok(Some(pod.as_ref().clone()));
    }
    Api::<Pod>::namespaced(guard.client.clone(), namespace)
        .get_opt(name)
        .await
        .map_err(|error| format!("reading pod {namespace}/{name}: {error}"))
}

/// The webhook's entry in the ValidatingWebhookConfiguration: `DELETE` of pods and `CREATE` of
/// `pods/eviction` (delete gate), `UPDATE` of pods (update gate); `None` with both gates off.
#[must_use]
pub fn pod_unavailable_budget_webhook(
    options: &WebhookOptions,
    ca_bundle: &[u8],
) -> Option<ValidatingWebhook> {
    let rule = |operation: &str, resource: &str| RuleWithOperations {
        api_groups: Some(vec![String::new()]),
        api_versions: Some(vec!["v1".to_owned()]),
        operations: Some(vec![operation.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        scope: Some("Namespaced".to_owned()),
    };
    let mut rules = Vec::new();
    if options.pod_unavailable_budget_delete {
        rules.push(rule("DELETE", "pods"));
        rules.push(rule("CREATE", "pods/eviction"));
    }
    if options.pod_unavailable_budget_update {
        rules.push(rule("UPDATE", "pods"));
    }
    if rules.is_empty() {
        return None;
    }
    Some(ValidatingWebhook {
        name: POD_UNAVAILABLE_BUDGET_WEBHOOK_NAME.to_owned(),
        admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
        client_config: client_config(&options.target, ca_bundle, POD_UNAVAILABLE_BUDGET_PATH),
        failure_policy: Some(options.failure_policy.as_str().to_owned()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector: super::configuration::excluded_namespace_selector(options),
        object_selector: None,
        rules: Some(rules),
        side_effects: "NoneOnDryRun".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        match_conditions: None,
    })
}

#[cfg(test)]
mod tests;
