//! The pod mutating webhook as a pure function: AdmissionReview bytes in, AdmissionReview bytes (and the
//! HTTP status) out. No API calls and no randomness: names for `generateName` pods come from the request
//! UID. With [`Mutator::sidecarsets`] set, pod CREATEs first get the matching SidecarSets injected (read
//! from in-memory stores; the clock gives the hash annotations' timestamp), then the readiness gates and
//! launch priority of the injected pod: one RFC 6902 patch whose later operations address the pod as the
//! earlier ones left it.
//!
//! Answers, and why:
//! * a review the API server could have sent, with a pod that decodes: `allowed: true`, with an RFC 6902
//!   patch (`patchType: JSONPatch`, base64 on the wire) when something was injected;
//! * a review whose pod does not decode, or whose `KRUISE_CONTAINER_PRIORITY` is not an integer: HTTP 200
//!   with `allowed: false` and `status.code: 400` and a message naming the problem. This is what
//!   upstream's webhook (controller-runtime `admission.Errored`) answers; kube-apiserver rejects the pod
//!   with that message whatever the failure policy, which is right since retrying cannot help;
//! * a body that is not an AdmissionReview at all (not JSON, no `request`, no `uid`): HTTP 400 with an
//!   AdmissionReview-shaped body saying why. kube-apiserver never sends that; for it a non-200 answer is a
//!   failed call, decided by `failurePolicy`, and there is no UID to answer to anyway;
//! * a pod CREATE while a cache the mutations read has not received its first list (the SidecarSets, the
//!   PodUnavailableBudgets when a budget gate is on, and for pods of a StatefulSet the
//!   PersistentPodStates): HTTP 503 naming the caches, so the API server applies `failurePolicy` instead
//!   of admitting a pod without its sidecars, budget annotation or recorded placement.
//!
//! ```
//! use kruise_manager::webhook::admission::{Mutator, review};
//!
//! let body = serde_json::json!({
//!     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//!     "request": {
//!         "uid": "1", "operation": "CREATE", "name": "p", "namespace": "default",
//!         "kind": {"group": "", "version": "v1", "kind": "Pod"},
//!         "resource": {"group": "", "version": "v1", "resource": "pods"},
//!         "userInfo": {},
//!         "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": [
//!             {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "c", "uid": "u", "controller": true}]},
//!             "spec": {"containers": [{"name": "main", "image": "nginx"}]}}
//!     }
//! });
//! let answer = review(&serde_json::to_vec(&body).unwrap(), &Mutator::default());
//! assert_eq!(answer.http_status, 200);
//! let response: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
//! assert_eq!(response["response"]["allowed"], true);
//! assert_eq!(response["response"]["patchType"], "JSONPatch");
//! ```

use base64::Engine;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::launch_priority;
use super::readiness_gates::{self, GateOptions};
use super::sidecarset_injection::SidecarSetStores;
use crate::unavailable_budget::BudgetStores;

/// The HTTP answer to one review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// 200 for every review the API server could have sent; 400 for bodies that are not reviews.
    pub http_status: u16,
    /// The AdmissionReview JSON.
    pub body: Vec<u8>,
}

/// What the pod webhook does.
#[derive(Clone, Debug, Default)]
pub struct Mutator {
    /// Readiness gate switches.
    pub gates: GateOptions,
    /// The SidecarSet stores; `None` injects no SidecarSet.
    pub sidecarsets: Option<SidecarSetStores>,
    /// The PodUnavailableBudgets (a PodUnavailableBudget gate is on); `None` writes no
    /// `pub.kruise.io/related-pub` annotation.
    pub budgets: Option<BudgetStores>,
    /// The PersistentPodStates; `None` gives no pod its recorded placement back.
    pub persistent_pod_states: Option<super::persistent_pod_state::PersistentPodStateStores>,
}

impl Mutator {
    /// The caches a pod CREATE reads that have not received their first lists yet (by kind). The
    /// PersistentPodStates are read only for the pods of StatefulSets (`statefulset_pod`), so other pods
    /// do not wait for them.
    #[must_use]
    pub fn unsynced_caches(&self, statefulset_pod: bool) -> Vec<&'static str> {
        let mut unsynced = Vec::new();
        if self
            .sidecarsets
            .as_ref()
            .is_some_and(|stores| !stores.is_synced())
        {
            unsynced.push("SidecarSet");
        }
        if self
            .budgets
            .as_ref()
            .is_some_and(|budgets| !budgets.informer().is_synced())
        {
            unsynced.push("PodUnavailableBudget");
        }
        if statefulset_pod
            && self
                .persistent_pod_states
                .as_ref()
                .is_some_and(|states| !states.informer().is_synced())
        {
            unsynced.push("PersistentPodState");
        }
        unsynced
    }
}

/// Whether the pod's controller is a StatefulSet (Kubernetes' or the Advanced one): the pods a
/// PersistentPodState can record.
fn is_statefulset_pod(meta: &ObjectMeta) -> bool {
    meta.owner_references
        .iter()
        .flatten()
        .any(|owner| owner.controller == Some(true) && owner.kind == "StatefulSet")
}

/// The characters of generated name suffixes (Kubernetes' `SimpleNameGenerator` alphabet).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Answers one AdmissionReview body.
#[must_use]
pub fn review(body: &[u8], mutator: &Mutator) -> Answer {
    let request = match parse_request(body) {
        Ok(request) => request,
        Err(answer) => return answer,
    };
    if is_pod_create(&request) {
        let statefulset_pod = request
            .object
            .as_ref()
            .is_some_and(|pod| is_statefulset_pod(&pod.metadata));
        let unsynced = mutator.unsynced_caches(statefulset_pod);
        if !unsynced.is_empty() {
            return not_synced(&unsynced);
        }
    }
    let response = match mutate(&request, mutator) {
        Ok(ops) if ops.is_empty() => AdmissionResponse::from(&request),
        Ok(ops) => match serde_json::from_value::<json_patch::Patch>(Value::Array(ops)) {
            Ok(patch) => AdmissionResponse::from(&request)
                .with_patch(patch)
                .unwrap_or_else(|error| deny(&request, &format!("encoding the patch: {error}"))),
            Err(error) => deny(&request, &format!("building the patch: {error}")),
        },
        Err(message) => deny(&request, &message),
    };
    answer(200, &response)
}

/// The request of an AdmissionReview body, or the answer to a body that is not one (see the module doc).
///
/// # Errors
/// The answer to send instead.
pub fn parse_request(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, Answer> {
    let parsed: AdmissionReview<DynamicObject> =
        serde_json::from_slice(body).map_err(|error| unreadable(body, &error))?;
    let request: AdmissionRequest<DynamicObject> = parsed
        .try_into()
        .map_err(|_| not_a_review("the AdmissionReview has no request"))?;
    if request.uid.is_empty() {
        return Err(not_a_review("the AdmissionReview request has no uid"));
    }
    Ok(request)
}

/// A pod CREATE (not of a subresource): what the webhook mutates.
fn is_pod_create(request: &AdmissionRequest<DynamicObject>) -> bool {
    let is_pod = request.resource.group.is_empty() && request.resource.resource == "pods";
    let has_subresource = request
        .sub_resource
        .as_deref()
        .is_some_and(|sub| !sub.is_empty());
    is_pod && !has_subresource && matches!(request.operation, Operation::Create)
}

/// The answer while some caches the mutations read (`unsynced`, by kind) have not received their first
/// lists: an HTTP error, so the API server applies the webhook's failure policy instead of admitting the pod
/// without its sidecars, its budget annotation or its recorded placement.
fn not_synced(unsynced: &[&str]) -> Answer {
    let message = format!(
        "the {} caches of the pod webhook are not synced yet; retry shortly",
        unsynced.join(", ")
    );
    Answer {
        http_status: 503,
        body: serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 503,
            "reason": "ServiceUnavailable",
            "message": message,
        })
        .to_string()
        .into_bytes(),
    }
}

/// The patch operations for one request; `Err` is the message of a rejection.
fn mutate(
    request: &AdmissionRequest<DynamicObject>,
    mutator: &Mutator,
) -> Result<Vec<Value>, String> {
    if !is_pod_create(request) {
        return Ok(Vec::new());
    }
    let Some(object) = &request.object else {
        return Err("the CREATE request has no object".to_owned());
    };
    let value =
        serde_json::to_value(object).map_err(|error| format!("reading the pod: {error}"))?;
    let mut pod: Pod =
        serde_json::from_value(value).map_err(|error| format!("decoding the pod: {error}"))?;
    // A pod without a spec (absent or null) has nothing to mutate, and no patch could add to it; the API
    // server's validation refuses it after admission.
    if pod.spec.is_none() {
        return Ok(Vec::new());
    }
    // The object of a CREATE may lack its namespace; the request names it.
    if pod.metadata.namespace.as_deref().is_none_or(str::is_empty)
        && let Some(namespace) = request.namespace.as_deref().filter(|ns| !ns.is_empty())
    {
        pod.metadata.namespace = Some(namespace.to_owned());
    }
    let uid = request.uid.clone();
    // SidecarSet injection first; the other mutations are computed on the injected pod, so their
    // operations (container indexes included) apply after the injection's.
    let (mut ops, pod) = match &mutator.sidecarsets {
        Some(stores) => {
            // The patch as JSON text: its operations are read once, instead of building the typed patch
            // and copying it into values.
            let injection = stores
                .inject_json(&pod, &uid, k8s_openapi::jiff::Timestamp::now())
                .map_err(|error| format!("injecting SidecarSets: {error}"))?;
            let ops: Vec<Value> = serde_json::from_str(&injection.patch)
                .map_err(|error| format!("reading the injection's patch: {error}"))?;
            (ops, injection.pod)
        }
        None => (Vec::new(), pod),
    };
    // The operations after these are not in `pod` yet.
    let injected = ops.len();
    ops.extend(readiness_gates::patch(&pod, &mutator.gates));
    ops.extend(
        launch_priority::patch(&pod, |prefix| generated_name(prefix, &uid))
            .map_err(|error| error.to_string())?,
    );
    if let Some(budgets) = &mutator.budgets {
        ops.extend(super::related_budget::patch(&pod, budgets));
    }
    if let Some(states) = &mutator.persistent_pod_states {
        let pending = ops.get(injected..).unwrap_or_default();
        ops.extend(super::persistent_pod_state::patch(&pod, pending, states)?);
    }
    Ok(ops)
}

/// `generateName` + 5 characters derived from the request UID (the API server's own format: the prefix
/// cut to 58 characters, suffix from the same alphabet).
#[must_use]
pub fn generated_name(prefix: &str, uid: &str) -> String {
    let cut: String = prefix.chars().take(58).collect();
    let digest = Sha256::digest(uid.as_bytes());
    let suffix: String = digest
        .iter()
        .take(5)
        .map(|byte| {
            let index = usize::from(*byte) % NAME_ALPHABET.len();
            NAME_ALPHABET.get(index).map_or('x', |&c| char::from(c))
        })
        .collect();
    format!("{cut}{suffix}")
}

fn deny(request: &AdmissionRequest<DynamicObject>, message: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(message);
    response.result.code = 400;
    response.result.reason = "BadRequest".to_owned();
    response
}

/// A body that does not parse as a review: if it still carries a request UID, the API server sent it
/// (say, with a pod whose metadata has the wrong shape), so it gets a proper rejection.
fn unreadable(body: &[u8], error: &serde_json::Error) -> Answer {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let uid = value
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if uid.is_empty() {
        return not_a_review(&format!("the body is not an AdmissionReview: {error}"));
    }
    let mut response = AdmissionResponse::invalid(format!("decoding the AdmissionReview: {error}"));
    response.uid = uid.to_owned();
    response.result.code = 400;
    if let Some(api_version) = value.get("apiVersion").and_then(Value::as_str) {
        response.types.api_version = api_version.to_owned();
    }
    answer(200, &response)
}

fn not_a_review(message: &str) -> Answer {
    let mut response = AdmissionResponse::invalid(message);
    response.result.code = 400;
    answer(400, &response)
}

/// `allowed` turned into a refusal with `message`, the HTTP status `code` and its `reason` (e.g. 403
/// `Forbidden`, 429 `TooManyRequests`), which the API server passes on to the client.
#[must_use]
pub fn refuse(
    allowed: AdmissionResponse,
    code: u16,
    reason: &str,
    message: String,
) -> AdmissionResponse {
    let mut response = allowed.deny(message);
    response.result.code = code;
    reason.clone_into(&mut response.result.reason);
    response
}

/// Serialises the review; the patch goes out as a base64 string, the way `[]byte` is encoded in
/// Kubernetes' JSON (kube-core's type would write an array of numbers).
pub fn answer(http_status: u16, response: &AdmissionResponse) -> Answer {
    let review = response.clone().into_review();
    let mut value = match serde_json::to_value(&review) {
        Ok(value) => value,
        Err(error) => return internal_error(&error),
    };
    if let Some(patch) = value.pointer_mut("/response/patch") {
        let bytes: Option<Vec<u8>> = patch.as_array().map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect()
        });
        if let Some(bytes) = bytes {
            *patch = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
    match serde_json::to_vec(&value) {
        Ok(body) => Answer { http_status, body },
        Err(error) => internal_error(&error),
    }
}

fn internal_error(error: &serde_json::Error) -> Answer {
    Answer {
        http_status: 500,
        body: serde_json::json!({ "error": error.to_string() })
            .to_string()
            .into_bytes(),
    }
}

#[cfg(test)]
mod tests;
