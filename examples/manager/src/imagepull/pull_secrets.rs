//! kruise-manager's side of ImagePullJob pull secrets: kruise-daemon may read Secrets only in the
//! `kruise-daemon-config` namespace, so a running job's pull secrets are copied there and its NodeImages
//! reference the copies ([`kruise_schedule::image_pull::pull_secret_copies`] decides). [`sync`] runs in every
//! pass of a running job: it creates the missing copies, brings the others up to date with their sources (the
//! job is looked at every few seconds while it runs, so a rotated source reaches the nodes that pull after),
//! and answers the references. [`sweep`] runs every [`SWEEP_INTERVAL`]: it drops the references of jobs that
//! are gone, finished or no longer name the source, and deletes copies no job needs.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kruise_api::apps::v1beta1::{ImagePullJob, ReferenceObject};
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;
use kruise_runtime::harness::object_key;
use kruise_runtime::shutdown::Shutdown;
use kruise_schedule::image_pull::job::source_secrets;
use kruise_schedule::image_pull::pull_secret_copies::{
    self as copies, Sweep, claimed_copy, copy_for, copy_reference, job_key, new_copy,
    released_copy, secret_key, uses_secrets_in_place,
};
use kube::api::ListParams;
use kube::runtime::reflector::Store;
use kube::{Api, Client, ResourceExt};

use crate::actions::{self, ActionError};

/// How often copies no job needs any more are looked for.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(15);

/// Why a job's pull secrets could not be copied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PullSecretError {
    /// A read or write failed.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The namespace the copies go to does not exist (the manifests create it).
    #[error(
        "ImagePullJob {job}: its pull secrets are copied into the namespace {namespace} for kruise-daemon, \
         and that namespace does not exist"
    )]
    NoNamespace {
        /// `namespace/name` of the job.
        job: String,
        /// The missing namespace.
        namespace: &'static str,
    },
}

fn list_error(error: kube::Error) -> ActionError {
    ActionError::from_kube(format!("{DAEMON_CONFIG_NAMESPACE}/secrets"), error)
}

/// The pull secrets the NodeImages of running `job` reference: copies in `kruise-daemon-config`, created or
/// brought up to date here, or the job's own secrets when it is in that namespace. A pull secret that does
/// not exist is left out (and logged).
///
/// # Errors
/// See [`PullSecretError`].
pub async fn sync(
    client: &Client,
    job: &ImagePullJob,
) -> Result<Vec<ReferenceObject>, PullSecretError> {
    if job.spec.template.pull_secrets.is_empty() {
        return Ok(Vec::new());
    }
    if uses_secrets_in_place(job) {
        return Ok(source_secrets(job));
    }
    let namespace = job.namespace().unwrap_or_default();
    let sources: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    let copies_api: Api<Secret> = Api::namespaced(client.clone(), DAEMON_CONFIG_NAMESPACE);
    let existing = copies_api
        .list(&ListParams::default())
        .await
        .map_err(list_error)?
        .items;
    let key = job_key(job);
    let mut seen = BTreeSet::new();
    let mut references = Vec::new();
    for name in &job.spec.template.pull_secrets {
        if !seen.insert(name.as_str()) {
            continue;
        }
        let Some(source) = sources
            .get_opt(name)
            .await
            .map_err(|error| ActionError::from_kube(secret_key(&namespace, name), error))?
        else {
            tracing::warn!(job = %key, secret = %secret_key(&namespace, name), "pull secret not found");
            continue;
        };
        let copy = match copy_for(&existing, &secret_key(&namespace, name), &key) {
            Some(current) => match claimed_copy(current, &source, &key) {
                Some(claimed) => actions::replace(&copies_api, &claimed).await?,
                None => current.clone(),
            },
            None => match actions::create(&copies_api, &new_copy(&source, &key)).await {
                Ok(created) => {
                    tracing::info!(job = %key, source = %secret_key(&namespace, name),
                        copy = %object_key(&created), "copied a pull secret for kruise-daemon");
                    created
                }
                Err(ActionError::NotFound { .. }) => {
                    return Err(PullSecretError::NoNamespace {
                        job: key,
                        namespace: DAEMON_CONFIG_NAMESPACE,
                    });
                }
                Err(error) => return Err(error.into()),
            },
        };
        references.push(copy_reference(&copy));
    }
    Ok(references)
}

/// Every [`SWEEP_INTERVAL`] until `shutdown`: [`sweep_once`] against the jobs in `jobs`.
pub async fn sweep(client: Client, jobs: Store<ImagePullJob>, shutdown: Shutdown) {
    loop {
        tokio::select! {
            () = shutdown.clone().wait() => return,
            () = tokio::time::sleep(SWEEP_INTERVAL) => {}
        }
        if let Err(error) = sweep_once(&client, || jobs.state()).await {
            tracing::warn!(%error, "sweeping pull secret copies failed; trying again later");
        }
    }
}

/// Releases the copies in `kruise-daemon-config` of the jobs that no longer need them and deletes the copies
/// no job needs. The copies are listed before the jobs are looked at (`jobs`), so a copy a job created or
/// claimed after that listing is never deleted on a stale view: its write changed its `resourceVersion`, which
/// every write here is conditional on.
///
/// # Errors
/// The copies could not be listed, or a write failed on something else than a conflict.
pub async fn sweep_once<F>(client: &Client, jobs: F) -> Result<(), ActionError>
where
    F: FnOnce() -> Vec<Arc<ImagePullJob>>,
{
    let api: Api<Secret> = Api::namespaced(client.clone(), DAEMON_CONFIG_NAMESPACE);
    let listed = api
        .list(&ListParams::default())
        .await
        .map_err(list_error)?
        .items;
    let jobs = jobs();
    let jobs: Vec<&ImagePullJob> = jobs.iter().map(AsRef::as_ref).collect();
    for copy in &listed {
        let outcome = match copies::sweep(copy, &jobs) {
            Sweep::Keep => continue,
            Sweep::Release(kept) => actions::replace(&api, &released_copy(copy, &kept))
                .await
                .map(|_| tracing::info!(copy = %object_key(copy), ?kept, "released a pull secret copy")),
            Sweep::Delete => actions::delete(&api, copy)
                .await
                .map(|()| tracing::info!(copy = %object_key(copy), "deleted a pull secret copy no job needs")),
        };
        match outcome {
            Ok(()) | Err(ActionError::Conflict { .. } | ActionError::NotFound { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
