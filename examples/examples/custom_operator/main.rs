//! Embed the kruise-rs planners in your own controller: an operator for its own custom resource, a
//! `PodFleet` (group `demo.kruise-rs.io`), whose pods are scaled and rolled out by the CloneSet planner of
//! `kruise-schedule` — slow-start creation, scale-down ranking, `maxUnavailable`, `maxSurge`, `partition`,
//! recreate or in-place updates — without any OpenKruise CRD or kruise-manager.
//!
//! ```text
//! scripts/control-plane.sh start && eval "$(scripts/control-plane.sh env)"   # or any cluster with kubelets
//! cargo run -p kruise-examples --bin kruise-node-simulator -- --nodes 2 &      # only without kubelets
//! kubectl create namespace NAMESPACE
//! cargo run -p kruise-examples --example custom_operator -- NAMESPACE [--exit-when-rolled-out]
//! # in another shell:
//! kubectl -n NAMESPACE apply -f - <<'YAML'
//! apiVersion: demo.kruise-rs.io/v1
//! kind: PodFleet
//! metadata: {name: web}
//! spec: {replicas: 4, image: "nginx:1.24", maxUnavailable: 1, inPlace: true}
//! YAML
//! kubectl -n NAMESPACE patch podfleet web --type merge -p '{"spec": {"image": "nginx:1.25"}}'
//! ```
//!
//! The program installs the PodFleet CRD itself (server-side apply of `PodFleet::crd()`, then it waits until
//! the CRD is Established) and runs a `kube::runtime::Controller` for the PodFleets of NAMESPACE, which also
//! watches the pods they own. Each reconcile ([`reconcile`]):
//!
//! 1. lists the fleet's pods;
//! 2. builds an in-memory `CloneSet` from the fleet's spec ([`cloneset::as_cloneset`]) and the revisions of its
//!    pod template ([`revisions`], named by `kruise_inplace::revision::for_template`);
//! 3. plans with `kruise_schedule::cloneset::plan`, a pure function;
//! 4. executes the plan's actions ([`execute`]: create, delete, in-place update with `kruise_inplace::apply`,
//!    lifecycle and label patches), printing one line per action with the planner's rule for it;
//! 5. writes the planner's status as the fleet's.
//!
//! The pods are owned by their PodFleet (a controller ownerReference) and carry the `controller-revision-hash`
//! label the planner reads. Nothing else of OpenKruise is needed (no CRD, no kruise-manager), but the pods need
//! a kubelet: on a cluster without nodes, such as the local control plane of `scripts/control-plane.sh`, the
//! node simulator `kruise-node-simulator` plays kubelet and makes the pods Ready.
//!
//! Ctrl-C (or SIGTERM) stops the program after the running reconciles finish, with exit code 0. With
//! `--exit-when-rolled-out` it also exits 0 once every PodFleet of the namespace is rolled out (its status
//! describes its current generation with every replica updated and Ready). A failure to start (no cluster, the
//! CRD cannot be installed) ends it with exit code 1 and a one-line `error: ...`; a failed reconcile is printed
//! and retried.

mod cloneset;
mod error;
mod execute;
mod fleet;
mod reconcile;
mod revisions;

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::{Controller, watcher};
use kube::{Api, Client};

use crate::fleet::PodFleet;
use crate::reconcile::{Context, error_policy, reconcile};

/// The command line.
#[derive(Parser)]
#[command(about = "A PodFleet operator built on the kruise-rs CloneSet planner")]
struct Arguments {
    /// The namespace whose PodFleets are reconciled.
    namespace: String,
    /// Exit (with code 0) once every PodFleet of the namespace is rolled out.
    #[arg(long)]
    exit_when_rolled_out: bool,
}

/// Runs the operator until Ctrl-C (or until rolled out); a failure to start ends it with exit code 1.
#[tokio::main]
async fn main() -> ExitCode {
    let arguments = Arguments::parse();
    match run(&arguments).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(arguments: &Arguments) -> Result<(), String> {
    let client = Client::try_default()
        .await
        .map_err(|error| format!("no cluster (KUBECONFIG): {error}"))?;
    fleet::install_crd(&client).await?;
    let namespace = &arguments.namespace;
    println!("reconciling the PodFleets of namespace {namespace}");

    let fleets: Api<PodFleet> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let controller = Controller::new(fleets, watcher::Config::default())
        .owns(pods, watcher::Config::default())
        .shutdown_on_signal();
    let store = controller.store();
    let mut results = controller
        .run(reconcile, error_policy, Arc::new(Context::new(client)))
        .boxed();
    while let Some(result) = results.next().await {
        if let Err(error) = result {
            // Failed reconciles are printed by `error_policy`; this is the rest (a watch that failed, …).
            if !matches!(
                error,
                kube::runtime::controller::Error::ReconcilerFailed(..)
            ) {
                eprintln!("error: {error}");
            }
        }
        let fleets = store.state();
        if arguments.exit_when_rolled_out
            && !fleets.is_empty()
            && fleets.iter().all(|fleet| fleet.is_rolled_out())
        {
            println!("every PodFleet of namespace {namespace} is rolled out");
            return Ok(());
        }
    }
    println!("stopped");
    Ok(())
}
