//! The ResourceDistribution validating webhook (gate `ResourceDistributionGate`): a CREATE or UPDATE of a
//! ResourceDistribution (either served version; the configuration names v1alpha1 with `matchPolicy:
//! Equivalent`, and a v1beta1 object is converted here if it arrives as one) is checked by
//! [`kruise_schedule::resource_distribution::validation`]'s rules, then, when those pass, for conflicts: the
//! target namespaces are worked out from the shared Namespace informer and the objects of the resource's
//! kind and name are listed from the API server (metadata only, one request, field selector on the name);
//! one in a target namespace whose `kruise.io/resourcedistribution.resource.from` annotation does not name
//! this distributor refuses the request.
//!
//! A refusal is `allowed: false`, `code: 422`, reason `Invalid`, and the message
//! `ResourceDistribution.apps.kruise.io "NAME" is invalid: <field>: <problem>; ...`, what `kubectl` prints.
//! When the conflict check cannot list, the request is refused with `code: 500` and the error. An UPDATE that
//! leaves `spec` unchanged (labels, finalizers) and any write of an object being deleted are allowed without
//! a check, so a conflict that appeared later never blocks them. With the gate off every request is allowed
//! (a configuration left from a run with the gate on must not refuse).
//!
//! ```
//! use kruise_manager::webhook::admission::parse_request;
//! use kruise_manager::webhook::resource_distribution::{Judgement, judge};
//!
//! let body = serde_json::json!({
//!     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//!     "request": {
//!         "uid": "1", "operation": "CREATE", "name": "shared",
//!         "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "ResourceDistribution"},
//!         "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "resourcedistributions"},
//!         "userInfo": {},
//!         "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ResourceDistribution",
//!             "metadata": {"name": "shared"},
//!             "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
//!                 "targets": {"allNamespaces": true}}}
//!     }
//! });
//! let request = parse_request(&serde_json::to_vec(&body).unwrap()).unwrap();
//! let Judgement::Answer(response) = judge(&request) else { panic!("an invalid object needs no lookup") };
//! assert!(!response.allowed);
//! assert_eq!(
//!     response.result.message,
//!     "ResourceDistribution.apps.kruise.io \"shared\" is invalid: spec.resource.kind: Unsupported value: \
//!      \"Pod\": supported values: \"Secret\", \"ConfigMap\""
//! );
//! ```

use std::collections::BTreeMap;

use axum::Router;
use axum::routing::post;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhook;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kruise_api::apps::v1alpha1::ResourceDistribution;
use kruise_runtime::Informer;
use kruise_schedule::resource_distribution::copy::CopyMeta;
use kruise_schedule::resource_distribution::targets::{NamespaceView, target_namespaces};
use kruise_schedule::resource_distribution::validation::{
    conflict_error, resource_identity, validate,
};
use kruise_schedule::validation::FieldError;
use kube::api::{Api, ListParams};
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::core::{DynamicObject, PartialObjectMeta};
use kube::{Client, Resource};
use serde_json::Value;

use super::admission::{answer, parse_request, refuse};
use super::configuration::WebhookOptions;
use super::review_body::ReviewBody;
use super::server::respond;

/// The path of the webhook (upstream's).
pub const VALIDATE_RESOURCE_DISTRIBUTION_PATH: &str =
    "/validate-apps-kruise-io-v1alpha1-resourcedistribution";
/// The name of the webhook in the ValidatingWebhookConfiguration (upstream's).
pub const RESOURCE_DISTRIBUTION_WEBHOOK_NAME: &str = "vresourcedistribution.kb.io";

/// How long a request waits for the Namespace informer's first list.
const NAMESPACES_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// The objects of the distributed kind listed per request in the conflict check.
const LIST_PAGE: u32 = 500;

/// What the webhook decided from the request alone.
#[derive(Debug)]
pub enum Judgement {
    /// The answer.
    Answer(AdmissionResponse),
    /// The object passes the rules: look for conflicts, then [`Pending::finish`].
    Conflicts(Pending),
}

/// A request whose object passed the rules, waiting for the conflict check.
#[derive(Debug)]
pub struct Pending {
    allowed: AdmissionResponse,
    /// The object, in v1alpha1.
    pub distributor: Box<ResourceDistribution>,
}

impl Pending {
    /// The answer, given the target namespaces holding a conflicting object (or why they could not be
    /// found).
    #[must_use]
    pub fn finish(self, conflicting: Result<Vec<String>, String>) -> AdmissionResponse {
        let name = self.distributor.metadata.name.clone().unwrap_or_default();
        match conflicting {
            Err(error) => refuse(
                self.allowed,
                500,
                "InternalError",
                format!("ResourceDistribution {name}: looking for conflicting resources: {error}"),
            ),
            Ok(namespaces) => {
                match conflict_error(&name, &self.distributor.spec.resource, &namespaces) {
                    None => self.allowed,
                    Some(error) => invalid(self.allowed, &name, &[error]),
                }
            }
        }
    }
}

/// Judges one admission request: CREATE and UPDATE of resourcedistributions are checked, anything else is
/// allowed.
#[must_use]
pub fn judge(request: &AdmissionRequest<DynamicObject>) -> Judgement {
    let allowed = AdmissionResponse::from(request);
    let is_write = matches!(request.operation, Operation::Create | Operation::Update)
        && request.sub_resource.as_deref().is_none_or(str::is_empty)
        && request.resource.resource == "resourcedistributions";
    let Some(object) = request.object.as_ref().filter(|_| is_write) else {
        return Judgement::Answer(allowed);
    };
    let name = request.name.clone();
    let bad = |allowed, message: String| {
        Judgement::Answer(refuse(
            allowed,
            400,
            "BadRequest",
            format!("ResourceDistribution {name}: {message}"),
        ))
    };
    let distributor = match decoded(object, "new") {
        Ok(distributor) => distributor,
        Err(message) => return bad(allowed, message),
    };
    let old = match request.old_object.as_ref().map(|old| decoded(old, "old")) {
        None => None,
        Some(Ok(old)) => Some(old),
        Some(Err(message)) => return bad(allowed, message),
    };
    // A write that leaves the spec as it is (labels, finalizers, the garbage collector's foreground
    // deletion) or touches an object being deleted is not judged: it must not be held up by a conflict that
    // appeared since.
    if distributor.metadata.deletion_timestamp.is_some()
        || old.as_ref().is_some_and(|old| old.spec == distributor.spec)
    {
        return Judgement::Answer(allowed);
    }
    let errors = validate(&distributor, old.as_ref());
    if !errors.is_empty() {
        let name = distributor.metadata.name.clone().unwrap_or(name);
        return Judgement::Answer(invalid(allowed, &name, &errors));
    }
    Judgement::Conflicts(Pending {
        allowed,
        distributor: Box::new(distributor),
    })
}

/// The object in v1alpha1 (converted from v1beta1 if it came as that).
fn decoded(object: &DynamicObject, which: &str) -> Result<ResourceDistribution, String> {
    let mut value = serde_json::to_value(object)
        .map_err(|error| format!("reading the {which} object: {error}"))?;
    let target = ResourceDistribution::api_version(&()).into_owned();
    if value.get("apiVersion").and_then(Value::as_str) != Some(target.as_str()) {
        value = kruise_api::convert::convert_object(value, &target)
            .map_err(|error| format!("converting the {which} object to {target}: {error}"))?;
    }
    serde_json::from_value(value).map_err(|error| format!("decoding the {which} object: {error}"))
}

fn invalid(allowed: AdmissionResponse, name: &str, errors: &[FieldError]) -> AdmissionResponse {
    let problems: Vec<String> = errors.iter().map(ToString::to_string).collect();
    refuse(
        allowed,
        422,
        "Invalid",
        format!(
            "ResourceDistribution.apps.kruise.io {name:?} is invalid: {}",
            problems.join("; ")
        ),
    )
}

/// The target namespaces of `distributor` that hold an object of its resource's kind and name not
/// distributed by it (sorted).
///
/// # Errors
/// The targets cannot be worked out, or the API server's error listing the objects.
pub async fn conflicting_namespaces(
    client: &Client,
    namespaces: &Informer<Namespace>,
    distributor: &ResourceDistribution,
) -> Result<Vec<String>, String> {
    let name = distributor.metadata.name.clone().unwrap_or_default();
    let (_, kind, resource_name) = resource_identity(&distributor.spec.resource);
    let stored = tokio::time::timeout(NAMESPACES_WITHIN, namespaces.synced_store())
        .await
        .map_err(|_| "the namespaces are not listed yet".to_owned())?
        .state();
    let empty = BTreeMap::new();
    let views: Vec<NamespaceView<'_>> = stored
        .iter()
        .map(|namespace| NamespaceView::of(namespace, &empty))
        .collect();
    let targets =
        target_namespaces(&distributor.spec.targets, &views).map_err(|error| error.to_string())?;
    let mut params = ListParams::default()
        .fields(&format!("metadata.name={resource_name}"))
        .limit(LIST_PAGE);
    let mut conflicting = Vec::new();
    loop {
        let (items, next) = match kind {
            "Secret" => page::<Secret>(client, &params).await?,
            "ConfigMap" => page::<ConfigMap>(client, &params).await?,
            _ => return Ok(conflicting),
        };
        for (namespace, metadata) in items {
            if targets.contains(&namespace) && !CopyMeta::of(&metadata).is_from(&name) {
                conflicting.push(namespace);
            }
        }
        match next.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    conflicting.sort();
    Ok(conflicting)
}

type Page = (
    Vec<(
        String,
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    )>,
    Option<String>,
);

/// One page of the objects of kind `K`, metadata only.
async fn page<K>(client: &Client, params: &ListParams) -> Result<Page, String>
where
    K: Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let api: Api<PartialObjectMeta<K>> = Api::all(client.clone());
    let list = api
        .list_metadata(params)
        .await
        .map_err(|error| format!("listing {}: {error}", K::plural(&())))?;
    let items = list
        .items
        .into_iter()
        .map(|object| {
            (
                object.metadata.namespace.clone().unwrap_or_default(),
                object.metadata,
            )
        })
        .collect();
    Ok((items, list.metadata.continue_))
}

/// What the webhook reads: the client for the conflict listing and the shared Namespace informer.
#[derive(Clone)]
pub struct DistributionWebhook {
    /// The client.
    pub client: Client,
    /// The namespaces (started only with the gate on).
    pub namespaces: Option<Informer<Namespace>>,
}

/// The route of the webhook; with `webhook.namespaces` `None` (the gate off) every request is allowed.
pub fn router(webhook: DistributionWebhook) -> Router {
    Router::new().route(
        VALIDATE_RESOURCE_DISTRIBUTION_PATH,
        post(move |ReviewBody(body): ReviewBody| {
            let webhook = webhook.clone();
            async move {
                let request = match parse_request(&body) {
                    Ok(request) => request,
                    Err(answer) => return respond(answer),
                };
                let response = match (&webhook.namespaces, judge(&request)) {
                    (None, _) => AdmissionResponse::from(&request),
                    (Some(_), Judgement::Answer(response)) => response,
                    (Some(namespaces), Judgement::Conflicts(pending)) => {
                        let conflicting = conflicting_namespaces(
                            &webhook.client,
                            namespaces,
                            &pending.distributor,
                        )
                        .await;
                        pending.finish(conflicting)
                    }
                };
                respond(answer(200, &response))
            }
        }),
    )
}

/// The webhook's entry in the ValidatingWebhookConfiguration: CREATE and UPDATE of
/// resourcedistributions (cluster-scoped).
#[must_use]
pub fn resource_distribution_webhook(
    options: &WebhookOptions,
    ca_bundle: &[u8],
) -> ValidatingWebhook {
    super::validating_configuration::cluster_kind_webhook(
        RESOURCE_DISTRIBUTION_WEBHOOK_NAME,
        VALIDATE_RESOURCE_DISTRIBUTION_PATH,
        ("v1alpha1", "resourcedistributions"),
        options,
        ca_bundle,
    )
}

#[cfg(test)]
mod tests;
