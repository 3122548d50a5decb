//! The request that adds the job's ephemeral containers to one pod, in the shape the API server serving
//! `pods/ephemeralcontainers` expects, and what a refused request means.
//!
//! Every container is the template's, under the template's name, with `KRUISE_EJOB_ID=<job uid>` appended
//! to its env (upstream `CreateEphemeralContainer`, `econtainer/econtainer_k8s.go`): the marking both
//! implementations use to recognise their containers ([`super::containers::is_marked_by`]).
//!
//! - Kubernetes v1.23 and later ([`EphemeralApi::Pod`]): the subresource reads and writes a `Pod`; the
//!   request is a strategic merge patch adding the containers to `spec.ephemeralContainers` (merged by
//!   name, so the pod's other ephemeral containers stay).
//! - Kubernetes v1.16 to v1.22 ([`EphemeralApi::Alpha`], feature gate `EphemeralContainers`): the
//!   subresource reads and writes the `EphemeralContainers` kind (`v1`); the request is a strategic merge
//!   patch of its top-level `ephemeralContainers` list.

use k8s_openapi::api::core::v1::{EnvVar, EphemeralContainer};
use kruise_api::apps::v1alpha1::EphemeralJob;
use kruise_api::keys::sidecar_terminator::EPHEMERAL_JOB_ID_ENV;
use serde_json::{Value, json};

/// The shape of the `pods/ephemeralcontainers` subresource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EphemeralApi {
    /// v1.23 and later: a `Pod` (patch `spec.ephemeralContainers`).
    Pod,
    /// v1.16 to v1.22 (alpha, behind the `EphemeralContainers` gate): the `EphemeralContainers` kind.
    Alpha,
}

impl EphemeralApi {
    /// The shape served by Kubernetes `major.minor` (as `/version` reports them, a trailing `+` allowed),
    /// or `None` before v1.16 (no such subresource) or when the version does not parse.
    #[must_use]
    pub fn for_server(major: &str, minor: &str) -> Option<Self> {
        let number = |text: &str| {
            let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        };
        match (number(major)?, number(minor)?) {
            (1, 0..=15) | (0, _) => None,
            (1, 16..=22) => Some(Self::Alpha),
            _ => Some(Self::Pod),
        }
    }
}

/// The job's template containers, each with `KRUISE_EJOB_ID` set to the job's uid (replacing an entry of
/// that name the template may carry).
#[must_use]
pub fn marked_containers(job: &EphemeralJob) -> Vec<EphemeralContainer> {
    let uid = job.metadata.uid.clone().unwrap_or_default();
    job.spec
        .template
        .ephemeral_containers
        .iter()
        .map(|template| {
            let mut container = template.clone();
            let mut env: Vec<EnvVar> = container
                .env
                .take()
                .unwrap_or_default()
                .into_iter()
                .filter(|env| env.name != EPHEMERAL_JOB_ID_ENV)
                .collect();
            env.push(EnvVar {
                name: EPHEMERAL_JOB_ID_ENV.to_owned(),
                value: Some(uid.clone()),
                value_from: None,
            });
            container.env = Some(env);
            container
        })
        .collect()
}

/// The strategic merge patch body that adds `containers` through the subresource of shape `api`.
#[must_use]
pub fn patch_body(api: EphemeralApi, containers: &[EphemeralContainer]) -> Value {
    match api {
        EphemeralApi::Pod => json!({"spec": {"ephemeralContainers": containers}}),
        EphemeralApi::Alpha => json!({"ephemeralContainers": containers}),
    }
}

/// What a refused request to `pods/ephemeralcontainers` means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The subresource is not served (404, 405): ephemeral containers are not enabled on the cluster (on
    /// v1.16 to v1.22 the `EphemeralContainers` feature gate is off, before v1.16 they do not exist).
    NotEnabled,
    /// The server expects the other shape (a 400 saying a body cannot be handled as the kind it serves):
    /// send the request again in the other [`EphemeralApi`].
    OtherShape,
    /// Anything else (RBAC, validation of the container, a conflict, a server error): retry later.
    Other,
}

/// Classifies a refusal from its HTTP `code` and the server's `message`.
#[must_use]
pub fn classify_refusal(code: u16, message: &str) -> Refusal {
    match code {
        404 | 405 => Refusal::NotEnabled,
        400 if message.contains("cannot be handled as") => Refusal::OtherShape,
        _ => Refusal::Other,
    }
}

/// The message of the `JobError` condition when the cluster does not serve ephemeral containers.
pub const NOT_ENABLED_MESSAGE: &str = "ephemeral containers are not enabled on this cluster: the API server does not serve pods/ephemeralcontainers (Kubernetes v1.16 to v1.22 need the EphemeralContainers feature gate on the API server and the kubelets; v1.23 and later serve it by default)";

/// The reason of the `JobError` condition when the cluster does not serve ephemeral containers.
pub const NOT_ENABLED_REASON: &str = "EphemeralContainersNotEnabled";
