//! Follow the rollout of one CloneSet with `kube::runtime::watcher`: one line per change of the CloneSet
//! (updated / ready / total pods), until every replica is updated and ready and the controller has observed
//! the latest generation, or until the timeout.
//!
//! ```text
//! kruise crds | kubectl apply -f -      # once: the OpenKruise CRDs; a CloneSet controller must run
//! cargo run -p kruise-examples --example watch_rollout -- NAMESPACE NAME [TIMEOUT_SECONDS]
//! ```
//!
//! The cluster is the one of `KUBECONFIG`; the timeout is 300 seconds unless given. Exits 0 once rolled out,
//! 1 with a one-line `error: ...` on a timeout, a missing CloneSet or a failing watch.

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use kruise_api::apps::v1beta1::CloneSet;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};

/// Runs the example; a failure ends it with exit code 1 and a one-line message on standard error.
#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn Error>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (namespace, name, timeout) = match arguments.as_slice() {
        [namespace, name] => (namespace, name, Duration::from_secs(300)),
        [namespace, name, seconds] => {
            let seconds = seconds
                .parse()
                .map_err(|error| format!("TIMEOUT_SECONDS {seconds:?}: {error}"))?;
            (namespace, name, Duration::from_secs(seconds))
        }
        _ => return Err("usage: watch_rollout NAMESPACE NAME [TIMEOUT_SECONDS]".into()),
    };
    let client = Client::try_default()
        .await
        .map_err(|error| format!("no cluster (KUBECONFIG): {error}"))?;
    let clonesets: Api<CloneSet> = Api::namespaced(client, namespace);
    // Fail at once on a CloneSet that does not exist, instead of watching nothing until the timeout.
    if clonesets.get_opt(name).await?.is_none() {
        return Err(format!("CloneSet {namespace}/{name} not found").into());
    }

    // The watcher lists, then watches, and re-lists on its own after a lost connection; a field selector keeps
    // it to the one object. `applied_objects` drops deletions; `default_backoff` retries failing requests.
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut events = watcher(clonesets, config)
        .default_backoff()
        .applied_objects()
        .boxed();
    let rolled_out = async {
        while let Some(cloneset) = events.try_next().await? {
            if report(&cloneset) {
                return Ok::<bool, watcher::Error>(true);
            }
        }
        Ok(false)
    };
    match tokio::time::timeout(timeout, rolled_out).await {
        Ok(Ok(true)) => {
            println!("CloneSet {namespace}/{name} is rolled out");
            Ok(())
        }
        Ok(Ok(false)) => Err(format!("the watch of CloneSet {namespace}/{name} ended").into()),
        Ok(Err(error)) => Err(format!("watching CloneSet {namespace}/{name}: {error}").into()),
        Err(_) => Err(format!(
            "CloneSet {namespace}/{name} not rolled out after {}s",
            timeout.as_secs()
        )
        .into()),
    }
}

/// Prints one line about `cloneset` and says whether its rollout is complete: the controller saw the latest
/// spec (`observedGeneration`) and every desired replica is of the update revision and ready.
fn report(cloneset: &CloneSet) -> bool {
    let generation = cloneset.metadata.generation.unwrap_or_default();
    let desired = cloneset.spec.replicas.unwrap_or(1);
    let status = cloneset.status.clone().unwrap_or_default();
    println!(
        "generation {generation} (observed {}): updated {}, ready {}, updated and ready {}, total {} of {desired}",
        status.observed_generation,
        status.updated_replicas,
        status.ready_replicas,
        status.updated_ready_replicas,
        status.replicas,
    );
    status.observed_generation == generation
        && status.updated_ready_replicas == desired
        && status.replicas == desired
}
