//! The SidecarSet validating webhook: AdmissionReview bytes in, AdmissionReview bytes out, at
//! [`VALIDATE_SIDECARSET_PATH`]. It decodes the SidecarSet of a CREATE or UPDATE (v1alpha1 objects are
//! converted to v1beta1), applies the defaults upstream's mutating webhook would have stored, and checks it
//! with [`kruise_sidecar::validation::validate`] against the other SidecarSets and the `patchPodMetadata`
//! whitelist, both read from in-memory stores (no API call on the request path).
//!
//! The whitelist is the `SidecarSet_PatchPodMetadata_WhiteList` key of the ConfigMap
//! `kruise-configuration` in the manager's namespace. A whitelist that does not parse rejects every
//! SidecarSet that patches pod annotations, naming the ConfigMap and key.
//!
//! Answers: no violation: `allowed: true`; violations: `allowed: false`, `status.code: 422`, reason
//! `Invalid` and a message listing each `field: problem` (what `kubectl` prints). An UPDATE is rejected only
//! for problems it introduces: problems the stored object already had (say, created before the webhook was
//! registered) do not block later writes, such as the controller's hash annotations. A SidecarSet that
//! does not decode gets `code: 400`; a body that is not a review gets HTTP 400 (as the pod webhook).
//!
//! ```
//! use kruise_manager::webhook::sidecarset_admission::SidecarSetValidator;
//!
//! let validator = SidecarSetValidator::empty(false);
//! let body = serde_json::json!({
//!     "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//!     "request": {
//!         "uid": "1", "operation": "CREATE", "name": "s",
//!         "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": "SidecarSet"},
//!         "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": "sidecarsets"},
//!         "userInfo": {},
//!         "object": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "s"},
//!             "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
//!     }
//! });
//! let answer = validator.review(&serde_json::to_vec(&body).unwrap());
//! let response: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
//! assert_eq!(response["response"]["allowed"], false);
//! assert!(response["response"]["status"]["message"].as_str().unwrap().contains("spec.selector"));
//! ```

use std::sync::Arc;

use axum::Router;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use k8s_openapi::api::core::v1::ConfigMap;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_api::keys::sidecarset::{CONFIGURATION_CONFIG_MAP, PATCH_POD_METADATA_WHITELIST_KEY};
use kruise_sidecar::metadata::PatchMetadataWhitelist;
use kruise_sidecar::validation::{Violation, validate};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Client};

use super::admission::{Answer, answer, parse_request};
use super::review_body::ReviewBody;
use super::server::respond;
use kruise_runtime::shutdown::Shutdown;

/// The path of the SidecarSet validating webhook (upstream's, for the v1beta1 resource).
pub const VALIDATE_SIDECARSET_PATH: &str = "/validate-apps-kruise-io-v1beta1-sidecarset";

/// What the SidecarSet validating webhook reads.
#[derive(Clone)]
pub struct SidecarSetValidator {
    sidecarsets: Store<SidecarSet>,
    configuration: Store<ConfigMap>,
    /// Where `kruise-configuration` lives.
    namespace: String,
    /// Gate `SidecarSetPatchPodMetadataDefaultsAllowed`.
    defaults_allowed: bool,
}

impl std::fmt::Debug for SidecarSetValidator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SidecarSetValidator")
            .field("sidecarsets", &self.sidecarsets.len())
            .field("namespace", &self.namespace)
            .field("defaults_allowed", &self.defaults_allowed)
            .finish_non_exhaustive()
    }
}

impl SidecarSetValidator {
    /// A validator with no other SidecarSets and no whitelist.
    #[must_use]
    pub fn empty(defaults_allowed: bool) -> Self {
        Self::from_stores(
            reflector::store().0,
            reflector::store().0,
            "kruise-system",
            defaults_allowed,
        )
    }

    /// A validator reading the caller's stores: every SidecarSet, and the ConfigMaps of `namespace` (only
    /// `kruise-configuration` is read).
    #[must_use]
    pub fn from_stores(
        sidecarsets: Store<SidecarSet>,
        configuration: Store<ConfigMap>,
        namespace: &str,
        defaults_allowed: bool,
    ) -> Self {
        Self {
            sidecarsets,
            configuration,
            namespace: namespace.to_owned(),
            defaults_allowed,
        }
    }

    /// Starts a reflector of `kruise-configuration` in `namespace` (until `shutdown`) and validates against
    /// `sidecarsets` (the pod webhook's store).
    #[must_use]
    pub fn start(
        client: &Client,
        namespace: &str,
        sidecarsets: Store<SidecarSet>,
        defaults_allowed: bool,
        shutdown: &Shutdown,
    ) -> Self {
        let configuration = reflect(
            Api::<ConfigMap>::namespaced(client.clone(), namespace),
            watcher::Config::default().fields(&format!("metadata.name={CONFIGURATION_CONFIG_MAP}")),
            shutdown,
        );
        Self::from_stores(sidecarsets, configuration, namespace, defaults_allowed)
    }

    /// Waits until both stores have received their first list; `false` when a reflector stopped first.
    pub async fn wait_until_ready(&self) -> bool {
        self.sidecarsets.wait_until_ready().await.is_ok()
            && self.configuration.wait_until_ready().await.is_ok()
    }

    /// Answers one AdmissionReview body.
    #[must_use]
    pub fn review(&self, body: &[u8]) -> Answer {
        let request = match parse_request(body) {
            Ok(request) => request,
            Err(answer) => return answer,
        };
        let response = match self.check(&request) {
            Ok(()) => AdmissionResponse::from(&request),
            Err(rejection) => rejection.respond(&request),
        };
        answer(200, &response)
    }

    fn check(&self, request: &AdmissionRequest<DynamicObject>) -> Result<(), Rejection> {
        let is_sidecarset = request.resource.group == "apps.kruise.io"
            && request.resource.resource == "sidecarsets"
            && request.sub_resource.as_deref().is_none_or(str::is_empty);
        if !is_sidecarset {
            return Ok(());
        }
        let old = match request.operation {
            Operation::Create => None,
            Operation::Update => Some(decode(request.old_object.as_ref(), "old")?),
            _ => return Ok(()),
        };
        let sidecarset = decode(request.object.as_ref(), "new")?;
        let whitelist = self.whitelist()?;
        let others: Vec<Arc<SidecarSet>> = self.sidecarsets.state();
        let others = || others.iter().map(AsRef::as_ref);
        let check = |set: &SidecarSet, old: Option<&SidecarSet>| {
            validate(
                set,
                old,
                others(),
                whitelist.as_ref(),
                self.defaults_allowed,
            )
        };
        let mut violations = check(&sidecarset, old.as_ref());
        if let Some(old) = &old {
            let existing = check(old, None);
            violations.retain(|violation| !existing.contains(violation));
        }
        if violations.is_empty() {
            return Ok(());
        }
        let name = sidecarset.metadata.name.as_deref().unwrap_or_default();
        let problems: Vec<String> = violations.iter().map(Violation::to_string).collect();
        Err(Rejection {
            code: 422,
            reason: "Invalid",
            message: format!(
                "SidecarSet.apps.kruise.io {name:?} is invalid: {}",
                problems.join("; ")
            ),
        })
    }

    /// The whitelist of `kruise-configuration`, if the ConfigMap and key exist.
    fn whitelist(&self) -> Result<Option<PatchMetadataWhitelist>, Rejection> {
        let key = ObjectRef::new(CONFIGURATION_CONFIG_MAP).within(&self.namespace);
        let Some(config) = self.configuration.get(&key) else {
            return Ok(None);
        };
        let Some(value) = config
            .data
            .as_ref()
            .and_then(|data| data.get(PATCH_POD_METADATA_WHITELIST_KEY))
        else {
            return Ok(None);
        };
        PatchMetadataWhitelist::parse(value)
            .map(Some)
            .map_err(|error| Rejection {
                code: 400,
                reason: "BadRequest",
                message: format!(
                    "ConfigMap {}/{CONFIGURATION_CONFIG_MAP} key {PATCH_POD_METADATA_WHITELIST_KEY}: {error}",
                    self.namespace
                ),
            })
    }
}

/// Why a request is refused.
struct Rejection {
    code: u16,
    reason: &'static str,
    message: String,
}

impl Rejection {
    fn respond(self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let mut response = AdmissionResponse::from(request).deny(self.message);
        response.result.code = self.code;
        self.reason.clone_into(&mut response.result.reason);
        response
    }
}

/// The SidecarSet of a request (v1alpha1 converted to v1beta1), defaulted.
fn decode(object: Option<&DynamicObject>, which: &str) -> Result<SidecarSet, Rejection> {
    let bad = |message: String| Rejection {
        code: 400,
        reason: "BadRequest",
        message,
    };
    let object = object.ok_or_else(|| bad(format!("the request has no {which} object")))?;
    let mut value = serde_json::to_value(object)
        .map_err(|error| bad(format!("reading the {which} SidecarSet: {error}")))?;
    if value.get("apiVersion").and_then(|v| v.as_str()) == Some("apps.kruise.io/v1alpha1") {
        value = kruise_api::convert::convert_object(value, "apps.kruise.io/v1beta1")
            .map_err(|error| bad(format!("converting the {which} SidecarSet: {error}")))?;
    }
    let mut sidecarset: SidecarSet = serde_json::from_value(value)
        .map_err(|error| bad(format!("decoding the {which} SidecarSet: {error}")))?;
    sidecarset.apply_defaults();
    Ok(sidecarset)
}

/// The webhook route.
pub fn router(validator: SidecarSetValidator) -> Router {
    Router::new()
        .route(VALIDATE_SIDECARSET_PATH, post(validate_sidecarset))
        .with_state(validator)
}

async fn validate_sidecarset(
    State(validator): State<SidecarSetValidator>,
    ReviewBody(body): ReviewBody,
) -> impl IntoResponse {
    respond(validator.review(&body))
}

/// A reflector of `api` into a store, running until `shutdown`.
fn reflect<K>(api: Api<K>, config: watcher::Config, shutdown: &Shutdown) -> Store<K>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
{
    use futures::StreamExt;
    use kube::runtime::WatchStreamExt;
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(
        writer,
        watcher(api, config)
            .default_backoff()
            .modify(|object: &mut K| object.meta_mut().managed_fields = None),
    );
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        loop {
            tokio::select! {
                () = stop.clone().wait() => break,
                next = stream.next() => match next {
                    Some(Ok(_)) => {}
                    Some(Err(error)) => tracing::warn!(%error, "webhook store watch failed; retrying"),
                    None => break,
                },
            }
        }
    });
    reader
}

#[cfg(test)]
mod tests;
