//! The PodProbeMarker validating webhook (gate `PodProbeMarkerGate`, upstream's
//! `pkg/webhook/podprobemarker/validating`): a CREATE or UPDATE of a PodProbeMarker is checked by
//! [`kruise_schedule::pod_probe::validation`]'s rules (the selector immutable on UPDATE). A refusal is
//! `allowed: false`, `code: 422`, reason `Invalid`, and the message
//! `PodProbeMarker.apps.kruise.io "NAME" is invalid: <field>: <problem>; ...`, what `kubectl` prints. An
//! UPDATE that leaves `spec` unchanged (labels, the controller's finalizer) and any write of a marker
//! being deleted are allowed without a check. With the gate off every request is allowed (a
//! configuration left from a run with the gate on must not refuse).
//!
//! ```
//! use kruise_manager::webhook::admission::parse_request;
//! use kruise_manager::webhook::pod_probe_marker::judge;
//!
//! let body = serde_json::json!({
//!     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//!     "request": {
//!         "uid": "1", "operation": "CREATE", "name": "healthy", "namespace": "web",
//!         "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "PodProbeMarker"},
//!         "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "podprobemarkers"},
//!         "userInfo": {},
//!         "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
//!             "metadata": {"name": "healthy", "namespace": "web"},
//!             "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
//!                 "name": "idle", "containerName": "", "podConditionType": "game.io/idle",
//!                 "probe": {"exec": {"command": ["true"]}}}]}}
//!     }
//! });
//! let request = parse_request(&serde_json::to_vec(&body).unwrap()).unwrap();
//! let response = judge(&request);
//! assert!(!response.allowed);
//! assert_eq!(
//!     response.result.message,
//!     "PodProbeMarker.apps.kruise.io \"healthy\" is invalid: spec.probes[0].containerName: Required \
//!      value: the container the probe runs in"
//! );
//! ```

use axum::Router;
use axum::routing::post;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhook;
use kruise_api::apps::v1alpha1::PodProbeMarker;
use kruise_schedule::pod_probe::validation::validate;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};

use super::admission::{answer, parse_request, refuse};
use super::configuration::WebhookOptions;
use super::review_body::ReviewBody;
use super::server::respond;

/// The path of the webhook (upstream's).
pub const VALIDATE_POD_PROBE_MARKER_PATH: &str = "/validate-apps-kruise-io-v1alpha1-podprobemarker";
/// The name of the webhook in the ValidatingWebhookConfiguration (upstream's).
pub const POD_PROBE_MARKER_WEBHOOK_NAME: &str = "vpodprobemarker.kb.io";

/// Judges one admission request: CREATE and UPDATE of podprobemarkers are checked, anything else is
/// allowed.
#[must_use]
pub fn judge(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    let allowed = AdmissionResponse::from(request);
    let is_write = matches!(request.operation, Operation::Create | Operation::Update)
        && request.sub_resource.as_deref().is_none_or(str::is_empty)
        && request.resource.resource == "podprobemarkers";
    let Some(object) = request.object.as_ref().filter(|_| is_write) else {
        return allowed;
    };
    let name = request.name.clone();
    let bad = |allowed, message: String| {
        refuse(
            allowed,
            400,
            "BadRequest",
            format!("PodProbeMarker {name}: {message}"),
        )
    };
    let marker = match decoded(object, "new") {
        Ok(marker) => marker,
        Err(message) => return bad(allowed, message),
    };
    let old = match request.old_object.as_ref().map(|old| decoded(old, "old")) {
        None => None,
        Some(Ok(old)) => Some(old),
        Some(Err(message)) => return bad(allowed, message),
    };
    if marker.metadata.deletion_timestamp.is_some()
        || old.as_ref().is_some_and(|old| old.spec == marker.spec)
    {
        return allowed;
    }
    let errors = validate(&marker, old.as_ref());
    if errors.is_empty() {
        return allowed;
    }
    let problems: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let name = marker.metadata.name.clone().unwrap_or(name);
    refuse(
        allowed,
        422,
        "Invalid",
        format!(
            "PodProbeMarker.apps.kruise.io {name:?} is invalid: {}",
            problems.join("; ")
        ),
    )
}

fn decoded(object: &DynamicObject, which: &str) -> Result<PodProbeMarker, String> {
    let value = serde_json::to_value(object)
        .map_err(|error| format!("reading the {which} object: {error}"))?;
    serde_json::from_value(value).map_err(|error| format!("decoding the {which} object: {error}"))
}

/// The route of the webhook; with `enabled` false (the gate off) every request is allowed.
pub fn router(enabled: bool) -> Router {
    Router::new().route(
        VALIDATE_POD_PROBE_MARKER_PATH,
        post(move |ReviewBody(body): ReviewBody| async move {
            let request = match parse_request(&body) {
                Ok(request) => request,
                Err(answer) => return respond(answer),
            };
            let response = if enabled {
                judge(&request)
            } else {
                AdmissionResponse::from(&request)
            };
            respond(answer(200, &response))
        }),
    )
}

/// The webhook's entry in the ValidatingWebhookConfiguration: CREATE and UPDATE of podprobemarkers
/// (namespaced, every namespace).
#[must_use]
pub fn validating_webhook(options: &WebhookOptions, ca_bundle: &[u8]) -> ValidatingWebhook {
    let mut webhook = super::validating_configuration::cluster_kind_webhook(
        POD_PROBE_MARKER_WEBHOOK_NAME,
        VALIDATE_POD_PROBE_MARKER_PATH,
        ("v1alpha1", "podprobemarkers"),
        options,
        ca_bundle,
    );
    for rule in webhook.rules.iter_mut().flatten() {
        rule.scope = Some("Namespaced".to_owned());
    }
    webhook
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(
        operation: &str,
        object: serde_json::Value,
        old: Option<serde_json::Value>,
    ) -> AdmissionRequest<DynamicObject> {
        let mut review = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "1", "operation": operation, "name": "m", "namespace": "web",
                "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "PodProbeMarker"},
                "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "podprobemarkers"},
                "userInfo": {}
            }
        });
        review["request"]["object"] = object;
        if let Some(old) = old {
            review["request"]["oldObject"] = old;
        }
        parse_request(&serde_json::to_vec(&review).unwrap()).unwrap()
    }

    fn marker(app: &str, container: &str) -> serde_json::Value {
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
            "metadata": {"name": "m", "namespace": "web"},
            "spec": {"selector": {"matchLabels": {"app": app}}, "probes": [{
                "name": "idle", "containerName": container, "podConditionType": "game.io/idle",
                "probe": {"exec": {"command": ["true"]}}}]}})
    }

    #[test]
    fn admission_table() {
        let rows = [
            (
                "valid create",
                request("CREATE", marker("web", "main"), None),
                true,
            ),
            (
                "invalid create",
                request("CREATE", marker("web", ""), None),
                false,
            ),
            (
                "selector changed",
                request("UPDATE", marker("db", "main"), Some(marker("web", "main"))),
                false,
            ),
            (
                "invalid but spec unchanged",
                request("UPDATE", marker("web", ""), Some(marker("web", ""))),
                true,
            ),
            (
                "delete",
                request("DELETE", serde_json::Value::Null, Some(marker("web", ""))),
                true,
            ),
        ];
        for (case, request, allowed) in rows {
            assert_eq!(judge(&request).allowed, allowed, "{case}");
        }
    }

    #[test]
    fn the_entry_is_namespaced() {
        let webhook = validating_webhook(&WebhookOptions::default(), b"");
        let rule = &webhook.rules.unwrap()[0];
        assert_eq!(rule.scope.as_deref(), Some("Namespaced"));
        assert_eq!(
            rule.resources.as_deref(),
            Some(&["podprobemarkers".to_owned()][..])
        );
        assert_eq!(webhook.name, POD_PROBE_MARKER_WEBHOOK_NAME);
    }
}
