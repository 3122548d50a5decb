//! The defaulting (mutating) and validating webhooks of the workload kinds ([`WorkloadKind`]): CloneSet,
//! Advanced StatefulSet, Advanced DaemonSet, BroadcastJob, AdvancedCronJob and ImagePullJob. AdmissionReview
//! bytes in, AdmissionReview bytes out; nothing is read from the cluster.
//!
//! * **Defaulting** ([`mutate`], at [`WorkloadKind::mutate_path`]): a CREATE or UPDATE of either served
//!   version gets upstream's defaults ([`super::workload_defaulting`]) as an RFC 6902 patch between the
//!   object as sent and the defaulted object; nothing to add: no patch.
//! * **Validating** ([`validate`], at [`WorkloadKind::validate_path`]): a CREATE or UPDATE is checked by the
//!   kind's rules ([`super::workload_validation`]). Refused: `allowed: false`, `status.code: 422`, reason
//!   `Invalid`, and the message `CloneSet.apps.kruise.io "demo" is invalid: <field>: <problem>; ...`, what
//!   `kubectl` prints.
//!
//! An object that does not decode gets `code: 400` and the reason; a body that is not a review gets HTTP 400
//! (as the pod webhook). Requests for other resources, subresources and other operations are allowed
//! unchanged.
//!
//! ```
//! use kruise_manager::webhook::workload_admission::validate;
//! use kruise_manager::webhook::workload_kind::WorkloadKind;
//!
//! let body = serde_json::json!({
//!     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//!     "request": {
//!         "uid": "1", "operation": "CREATE", "name": "demo", "namespace": "default",
//!         "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "CloneSet"},
//!         "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "clonesets"},
//!         "userInfo": {},
//!         "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
//!             "metadata": {"name": "demo", "namespace": "default"},
//!             "spec": {"selector": {"matchLabels": {"app": "demo"}},
//!                 "template": {"metadata": {"labels": {"app": "demo"}},
//!                     "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
//!                 "updateStrategy": {"type": "InPlaceOnly", "maxSurge": 1}}}
//!     }
//! });
//! let answer = validate(WorkloadKind::CloneSet, &serde_json::to_vec(&body).unwrap());
//! let response: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
//! assert_eq!(response["response"]["allowed"], false);
//! assert_eq!(
//!     response["response"]["status"]["message"],
//!     "CloneSet.apps.kruise.io \"demo\" is invalid: spec.updateStrategy.maxSurge: Invalid value: 1: \
//!      can not use maxSurge with strategy type InPlaceOnly"
//! );
//! ```

use axum::Router;
use axum::routing::post;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde_json::Value;

use super::admission::{Answer, answer, parse_request};
use super::review_body::ReviewBody;
use super::server::respond;
use super::workload_defaulting::defaulted;
use super::workload_kind::{GROUP, WorkloadKind};
use super::workload_validation::violations;

/// Answers one AdmissionReview body of the defaulting webhook of `kind`.
#[must_use]
pub fn mutate(kind: WorkloadKind, body: &[u8]) -> Answer {
    let request = match parse_request(body) {
        Ok(request) => request,
        Err(answer) => return answer,
    };
    let response = match defaults_patch(kind, &request) {
        Ok(None) => AdmissionResponse::from(&request),
        Ok(Some(patch)) => AdmissionResponse::from(&request)
            .with_patch(patch)
            .unwrap_or_else(|error| {
                refuse(
                    &request,
                    500,
                    "InternalError",
                    format!("encoding the patch: {error}"),
                )
            }),
        Err(message) => refuse(&request, 400, "BadRequest", message),
    };
    answer(200, &response)
}

/// Answers one AdmissionReview body of the validating webhook of `kind`.
#[must_use]
pub fn validate(kind: WorkloadKind, body: &[u8]) -> Answer {
    let request = match parse_request(body) {
        Ok(request) => request,
        Err(answer) => return answer,
    };
    let response = match problems(kind, &request) {
        Ok(None) => AdmissionResponse::from(&request),
        Ok(Some(message)) => refuse(&request, 422, "Invalid", message),
        Err(message) => refuse(&request, 400, "BadRequest", message),
    };
    answer(200, &response)
}

/// The object of a CREATE or UPDATE of `kind` itself (not a subresource), as JSON; `None` for anything
/// else, which is allowed unchanged.
fn object_of(
    kind: WorkloadKind,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<Option<Value>, String> {
    let ours = request.resource.group == GROUP
        && WorkloadKind::of_resource(&request.resource.resource) == Some(kind)
        && request.sub_resource.as_deref().is_none_or(str::is_empty)
        && matches!(request.operation, Operation::Create | Operation::Update);
    if !ours {
        return Ok(None);
    }
    json_of(request.object.as_ref(), kind, "new").map(Some)
}

fn json_of(
    object: Option<&DynamicObject>,
    kind: WorkloadKind,
    which: &str,
) -> Result<Value, String> {
    let object = object.ok_or_else(|| format!("the request has no {which} {}", kind.kind()))?;
    serde_json::to_value(object)
        .map_err(|error| format!("reading the {which} {}: {error}", kind.kind()))
}

/// The patch adding the defaults, if any are missing.
fn defaults_patch(
    kind: WorkloadKind,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<Option<json_patch::Patch>, String> {
    let Some(before) = object_of(kind, request)? else {
        return Ok(None);
    };
    // The object's own apiVersion says which version's defaults apply; the request's kind agrees.
    let version = before
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|api_version| api_version.strip_prefix("apps.kruise.io/"))
        .unwrap_or(request.kind.version.as_str())
        .to_owned();
    let after = defaulted(kind, &version, &before)?;
    let patch = json_patch::diff(&before, &after);
    Ok((!patch.0.is_empty()).then_some(patch))
}

/// The message refusing the request, if it breaks a rule.
fn problems(
    kind: WorkloadKind,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<Option<String>, String> {
    let Some(object) = object_of(kind, request)? else {
        return Ok(None);
    };
    let old = match request.operation {
        Operation::Update => Some(json_of(request.old_object.as_ref(), kind, "old")?),
        _ => None,
    };
    let found = violations(kind, &object, old.as_ref())?;
    if found.is_empty() {
        return Ok(None);
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .unwrap_or(request.name.as_str());
    let listed: Vec<String> = found.iter().map(ToString::to_string).collect();
    Ok(Some(format!(
        "{}.{GROUP} {name:?} is invalid: {}",
        kind.kind(),
        listed.join("; ")
    )))
}

fn refuse(
    request: &AdmissionRequest<DynamicObject>,
    code: u16,
    reason: &str,
    message: String,
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(message);
    response.result.code = code;
    reason.clone_into(&mut response.result.reason);
    response
}

/// The routes of both webhooks of every workload kind.
pub fn router() -> Router {
    WorkloadKind::ALL
        .into_iter()
        .fold(Router::new(), |router, kind| {
            router
                .route(
                    &kind.mutate_path(),
                    post(move |ReviewBody(body): ReviewBody| async move {
                        respond(mutate(kind, &body))
                    }),
                )
                .route(
                    &kind.validate_path(),
                    post(move |ReviewBody(body): ReviewBody| async move {
                        respond(validate(kind, &body))
                    }),
                )
        })
}

#[cfg(test)]
mod tests;
