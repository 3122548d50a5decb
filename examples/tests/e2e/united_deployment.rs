//! UnitedDeployment on the real API server: kruise-manager as a child process (webhooks served, so both
//! API versions convert), the node simulator with one node per zone (`--node-label`
//! `topology.kubernetes.io/zone` = zone-a, zone-b, zone-c), honouring the required node affinity each
//! subset adds to its pod template.
//!
//! `united_deployment_spreads_subsets_over_zones`:
//! * a v1beta1 UnitedDeployment `web` of 6 with a CloneSet template and three subsets, zone-a fixed at 1,
//!   zone-b at "50%" and zone-c taking the rest: three CloneSets of 1, 3 and 2, owned by it, each pod on a
//!   node of its subset's zone; the status says 6 ready, subset replicas 1/3/2;
//! * scaled to 10 through the `scale` subresource: the CloneSets become 1/5/4 and 10 pods run;
//! * a new image with a manual partition of 2 for zone-b: zone-a and zone-c run only the new image,
//!   zone-b runs 3 new and 2 old pods, the status says updated 8 and partition 2 and keeps the old
//!   current revision; without the partition every pod runs the new image and the current revision moves;
//! * zone-a removed from the topology: its CloneSet is deleted (its pod is left to the garbage
//!   collector), zone-b and zone-c run 5 pods each;
//! * a UnitedDeployment `native` with a Deployment template: two Deployments of 1 and 2, each pinned to
//!   its zone by the node affinity of its pod template, and the status says 1/2. (The harness's
//!   kube-controller-manager runs no Deployment controller, so no pods are checked there.)
//!
//! `united_deployment_adapts_to_unschedulable_subsets`: a UnitedDeployment `adaptive` of 3 with the
//! `Adaptive` schedule strategy (`rescheduleCriticalSeconds` 2, `unschedulableDuration` 10) and three
//! subsets: `nowhere` (a zone no node is in, at most 3), zone-a (at most 2) and zone-b. The 3 pods of
//! `nowhere` are marked unschedulable by the node simulator; 2 s after their creation the subset is
//! marked unschedulable (`Schedulable=False`, reason `reschedule`) and its replicas move on: CloneSets of
//! 0/2/1 and 3 ready pods in zone-a and zone-b. 10 s later the subset is schedulable again (`recover`)
//! and the running pods stay where they are.
//!
//! `united_deployment_reserves_unschedulable_pods`: nodes of at most 2 pods, the zone-c one filled by 2
//! plain pods; a UnitedDeployment `reserve` of 2 with the `Adaptive` strategy reserving unschedulable pods
//! (`rescheduleCriticalSeconds` 2) and subsets zone-c then zone-b. The 2 pods of zone-c cannot be placed:
//! 2 s after their creation they are labelled `apps.kruise.io/united-deployment-reserved-pod: "true"` and
//! kept (CloneSet zone-c stays at 2) while 2 temporary pods run in zone-b; the status says 2 reserved
//! pods (`Schedulable=False` for zone-c). Once the plain pods are deleted the reserved pods are placed and
//! become ready, their label turns `"false"`, the temporary pods go (CloneSets 2/0) and the status says
//! none reserved. (The node simulator reads node labels only at start, so room on the node, not a new
//! node label, is what makes the subset schedulable.)

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::{CloneSet, UnitedDeployment};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};

use crate::cloneset_env::{
    Env, ZONE_LABEL, is_ready, running_image, simulator_config, zoned_simulator_config,
};
use crate::manager_process::ManagerProcess;
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-uniteddeployment";
const MANAGER_NAMESPACE: &str = "e2e-uniteddeployment-system";
const SUBSET: &str = "apps.kruise.io/subset-name";
const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];
const WAIT: Duration = Duration::from_secs(60);
const OLD_IMAGE: &str = "nginx:1.25";
const NEW_IMAGE: &str = "nginx:1.26";

pub async fn united_deployment_spreads_subsets_over_zones(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let (env, manager) = start(cluster, "uniteddeployment").await?;
    let result = async {
        crate::manager_process::wait_ready(manager.metrics_port).await?;
        env.wait_for_api().await?;
        let started = std::time::Instant::now();
        cloneset_subsets(&env).await?;
        eprintln!("    CloneSet subsets in {:.1?}", started.elapsed());
        deployment_subsets(&env).await?;
        // The controller shares the process's watches (CloneSets it lists: their controller holds the
        // one watch of that kind).
        manager
            .expect_one_watch_each(&[
                "uniteddeployments.apps.kruise.io",
                "clonesets.apps.kruise.io",
                "deployments.apps",
                "controllerrevisions.apps",
                "pods",
            ])
            .await
    }
    .await;
    stop(env, manager, result).await
}

pub async fn united_deployment_adapts_to_unschedulable_subsets(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let (env, manager) = start(cluster, "uniteddeployment-adaptive").await?;
    let result = async {
        crate::manager_process::wait_ready(manager.metrics_port).await?;
        env.wait_for_api().await?;
        adaptive_subsets(&env).await
    }
    .await;
    stop(env, manager, result).await
}

pub async fn united_deployment_reserves_unschedulable_pods(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let (env, manager) = start_with(cluster, "uniteddeployment-reserve", RESERVE_MAX_PODS).await?;
    let result = async {
        crate::manager_process::wait_ready(manager.metrics_port).await?;
        env.wait_for_api().await?;
        reserved_subsets(&env).await
    }
    .await;
    stop(env, manager, result).await
}

/// The node simulator (one node per zone) and kruise-manager with its webhooks.
async fn start(cluster: &Cluster, log_name: &str) -> Result<(Env, ManagerProcess)> {
    let max_pods = simulator_config(NAMESPACE).max_pods;
    start_with(cluster, log_name, max_pods).await
}

/// [`start`] with nodes of at most `max_pods` pods.
async fn start_with(
    cluster: &Cluster,
    log_name: &str,
    max_pods: usize,
) -> Result<(Env, ManagerProcess)> {
    let mut config = zoned_simulator_config(NAMESPACE, &ZONES);
    config.max_pods = max_pods;
    crate::manager_process::with_served_manager(
        cluster,
        NAMESPACE,
        MANAGER_NAMESPACE,
        log_name,
        config,
        &[format!("--cloneset-namespace={NAMESPACE}")],
    )
    .await
}

/// Cleans up, stops the manager and the simulator, and returns `result` (with the manager's log on
/// failure).
async fn stop(env: Env, mut manager: ManagerProcess, result: Result<()>) -> Result<()> {
    let cleaned = cleanup(&env.client).await;
    let stopped = manager.terminate().await;
    let env_stopped = env.stop().await;
    result
        .and(cleaned)
        .and(stopped)
        .and(env_stopped)
        .with_context(|| manager.log_tail())
}

async fn cleanup(client: &Client) -> Result<()> {
    let all = ListParams::default();
    let _ = uds(client)
        .delete_collection(&DeleteParams::default(), &all)
        .await;
    let _ = Api::<CloneSet>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(&DeleteParams::default(), &all)
        .await;
    let _ = Api::<Deployment>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(&DeleteParams::background(), &all)
        .await;
    Api::<Pod>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(&DeleteParams::default().grace_period(0), &all)
        .await?;
    Ok(())
}

fn uds(client: &Client) -> Api<UnitedDeployment> {
    Api::namespaced(client.clone(), NAMESPACE)
}

/// A subset per zone, each pinned to its zone by `nodeSelectorTerm`, with the given `replicas` (`null`:
/// none).
fn subsets(replicas: &[(&str, Value)]) -> Value {
    replicas
        .iter()
        .map(|(zone, replicas)| {
            let mut subset = json!({"name": zone, "nodeSelectorTerm": {"matchExpressions": [
                {"key": ZONE_LABEL, "operator": "In", "values": [zone]}]}});
            if !replicas.is_null() {
                subset["replicas"] = replicas.clone();
            }
            subset
        })
        .collect()
}

fn pod_template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": OLD_IMAGE}]}})
}

async fn create_ud(
    env: &Env,
    name: &str,
    replicas: i32,
    template: Value,
    subsets: Value,
) -> Result<()> {
    let object: UnitedDeployment = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": template, "topology": {"subsets": subsets}}
    }))?;
    uds(&env.client)
        .create(&PostParams::default(), &object)
        .await
        .with_context(|| format!("creating UnitedDeployment {name}"))?;
    Ok(())
}

async fn patch_ud(env: &Env, name: &str, patch: Value) -> Result<()> {
    uds(&env.client)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .with_context(|| format!("patching UnitedDeployment {name} with {patch}"))?;
    Ok(())
}

/// The pods of `app` by subset label: `(zone of its node, image, ready)` each.
async fn pods_by_subset(
    env: &Env,
    app: &str,
) -> Result<BTreeMap<String, Vec<(String, String, bool)>>> {
    let pods = env
        .pods_api()
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await?;
    let mut found: BTreeMap<String, Vec<(String, String, bool)>> = BTreeMap::new();
    for pod in pods
        .items
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
    {
        let subset = pod.labels().get(SUBSET).cloned().unwrap_or_default();
        let zone = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.node_name.as_deref())
            .and_then(|node| node.rsplit('-').next())
            .and_then(|index| index.parse::<usize>().ok())
            .and_then(|index| ZONES.get(index))
            .map_or_else(|| "unscheduled".to_owned(), |zone| (*zone).to_owned());
        let image = running_image(pod).unwrap_or_default().to_owned();
        found
            .entry(subset)
            .or_default()
            .push((zone, image, is_ready(pod)));
    }
    Ok(found)
}

/// Whether pods of subsets not named may exist.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OtherSubsets {
    /// No other subset has pods.
    Absent,
    /// Pods of other subsets are not looked at (those of a removed subset go with the garbage
    /// collector, which learns of a new kind only at its next 30 s discovery sync).
    Ignored,
}

/// Waits until every subset named in `expected` has exactly that many ready pods, all on nodes of its
/// own zone, and the third number says how many run the new image (`None`: any).
async fn wait_pods(
    env: &Env,
    app: &str,
    what: &str,
    expected: &[(&str, usize, Option<usize>)],
    others: OtherSubsets,
) -> Result<()> {
    wait_for(what, WAIT, || async {
        let found = pods_by_subset(env, app).await?;
        let summary = format!("{found:?}");
        let subsets_match = (others == OtherSubsets::Ignored || found.len() == expected.len())
            && expected.iter().all(|(zone, count, new)| {
                found.get(*zone).is_some_and(|pods| {
                    pods.len() == *count
                        && pods
                            .iter()
                            .all(|(node_zone, _, ready)| node_zone == zone && *ready)
                        && new.is_none_or(|new| {
                            pods.iter()
                                .filter(|(_, image, _)| image == NEW_IMAGE)
                                .count()
                                == new
                        })
                })
            });
        if subsets_match {
            Ok(Some(()))
        } else {
            Err(anyhow!("pods by subset: {summary}"))
        }
    })
    .await
}

/// The replicas of the CloneSets owned by `ud`, by subset.
async fn cloneset_replicas(env: &Env, ud: &UnitedDeployment) -> Result<BTreeMap<String, i32>> {
    let sets = env.clonesets().list(&ListParams::default()).await?;
    Ok(sets
        .items
        .iter()
        .filter(|set| set.metadata.deletion_timestamp.is_none())
        .filter(|set| {
            set.owner_references()
                .iter()
                .any(|owner| Some(&owner.uid) == ud.metadata.uid.as_ref())
        })
        .map(|set| {
            (
                set.labels().get(SUBSET).cloned().unwrap_or_default(),
                set.spec.replicas.unwrap_or(1),
            )
        })
        .collect())
}

async fn wait_clonesets(env: &Env, name: &str, expected: &[(&str, i32)]) -> Result<()> {
    let expected: BTreeMap<String, i32> = expected
        .iter()
        .map(|(zone, n)| ((*zone).to_owned(), *n))
        .collect();
    wait_for("the subset CloneSets", WAIT, || async {
        let ud = uds(&env.client).get(name).await?;
        let found = cloneset_replicas(env, &ud).await?;
        if found == expected {
            Ok(Some(()))
        } else {
            Err(anyhow!("CloneSet replicas by subset: {found:?}"))
        }
    })
    .await
}

/// Waits for the status of `name` to satisfy `check`, which describes what it misses.
async fn wait_status(
    env: &Env,
    name: &str,
    what: &str,
    check: impl Fn(&kruise_api::apps::v1beta1::UnitedDeploymentStatus) -> Option<String>,
) -> Result<kruise_api::apps::v1beta1::UnitedDeploymentStatus> {
    wait_for(what, WAIT, || async {
        let ud = uds(&env.client).get(name).await?;
        let status = ud.status.clone().unwrap_or_default();
        if status.observed_generation < ud.metadata.generation.unwrap_or(0) {
            return Err(anyhow!(
                "status of generation {}",
                status.observed_generation
            ));
        }
        match check(&status) {
            None => Ok(Some(status)),
            Some(missing) => Err(anyhow!(
                "{missing}; status: {}",
                serde_json::to_string(&status)?
            )),
        }
    })
    .await
}

fn subset_replicas(
    status: &kruise_api::apps::v1beta1::UnitedDeploymentStatus,
) -> Vec<(String, i32)> {
    status
        .subset_statuses
        .iter()
        .map(|subset| (subset.name.clone(), subset.replicas))
        .collect()
}

fn owned(pairs: &[(&str, i32)]) -> Vec<(String, i32)> {
    pairs
        .iter()
        .map(|(name, n)| ((*name).to_owned(), *n))
        .collect()
}

async fn cloneset_subsets(env: &Env) -> Result<()> {
    let template = json!({"cloneSetTemplate": {"spec": {
        "selector": {"matchLabels": {"app": "web"}}, "template": pod_template("web")}}});
    let topology = subsets(&[
        ("zone-a", json!(1)),
        ("zone-b", json!("50%")),
        ("zone-c", Value::Null),
    ]);
    create_ud(env, "web", 6, template, topology).await?;
    wait_clonesets(env, "web", &[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)]).await?;
    wait_pods(
        env,
        "web",
        "6 ready pods in their zones",
        &[
            ("zone-a", 1, None),
            ("zone-b", 3, None),
            ("zone-c", 2, None),
        ],
        OtherSubsets::Absent,
    )
    .await?;
    let status = wait_status(env, "web", "the status of 6 ready pods", |status| {
        (status.ready_replicas != 6 || status.replicas != 6).then(|| "not 6 ready".to_owned())
    })
    .await?;
    ensure!(
        subset_replicas(&status) == owned(&[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)]),
        "subset replicas: {:?}",
        subset_replicas(&status)
    );
    ensure!(
        status.label_selector == "app=web",
        "labelSelector {:?}",
        status.label_selector
    );
    ensure!(
        status.current_revision == status.updated_revision && !status.current_revision.is_empty(),
        "revisions {:?} / {:?}",
        status.current_revision,
        status.updated_revision
    );
    let first_revision = status.current_revision.clone();

    // Scaled through the scale subresource.
    uds(&env.client)
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": 10}})),
        )
        .await
        .context("scaling UnitedDeployment web to 10")?;
    wait_clonesets(env, "web", &[("zone-a", 1), ("zone-b", 5), ("zone-c", 4)]).await?;
    wait_pods(
        env,
        "web",
        "10 ready pods in their zones",
        &[
            ("zone-a", 1, None),
            ("zone-b", 5, None),
            ("zone-c", 4, None),
        ],
        OtherSubsets::Absent,
    )
    .await?;
    let scale = uds(&env.client).get_scale("web").await?;
    ensure!(
        scale.spec.and_then(|spec| spec.replicas) == Some(10),
        "the scale subresource says {:?}",
        scale.status
    );

    // A new image, zone-b held back by a partition of 2.
    patch_ud(
        env,
        "web",
        json!({"spec": {
            "updateStrategy": {"manualUpdate": {"partitions": {"zone-b": 2}}},
            "template": {"cloneSetTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "main", "image": NEW_IMAGE}]}}}}}}}),
    )
    .await?;
    wait_pods(
        env,
        "web",
        "the new image everywhere but on 2 zone-b pods",
        &[
            ("zone-a", 1, Some(1)),
            ("zone-b", 5, Some(3)),
            ("zone-c", 4, Some(4)),
        ],
        OtherSubsets::Absent,
    )
    .await?;
    let status = wait_status(env, "web", "8 updated pods in the status", |status| {
        (status.updated_ready_replicas != 8).then(|| "not 8 updated and ready".to_owned())
    })
    .await?;
    let partition_b = status
        .subset_statuses
        .iter()
        .find(|subset| subset.name == "zone-b")
        .map(|subset| subset.partition);
    ensure!(partition_b == Some(2), "zone-b partition {partition_b:?}");
    ensure!(
        status.current_revision == first_revision && status.updated_revision != first_revision,
        "revisions during the partitioned rollout: {:?} / {:?}",
        status.current_revision,
        status.updated_revision
    );
    patch_ud(
        env,
        "web",
        json!({"spec": {"updateStrategy": {"manualUpdate": {"partitions": null}}}}),
    )
    .await?;
    wait_pods(
        env,
        "web",
        "the new image on every pod",
        &[
            ("zone-a", 1, Some(1)),
            ("zone-b", 5, Some(5)),
            ("zone-c", 4, Some(4)),
        ],
        OtherSubsets::Absent,
    )
    .await?;
    wait_status(env, "web", "the current revision to move", |status| {
        (status.current_revision != status.updated_revision || status.updated_ready_replicas != 10)
            .then(|| "the rollout is not over".to_owned())
    })
    .await?;

    // zone-a leaves the topology: its CloneSet and pod go.
    let topology = subsets(&[("zone-b", json!("50%")), ("zone-c", Value::Null)]);
    patch_ud(
        env,
        "web",
        json!({"spec": {"topology": {"subsets": topology}}}),
    )
    .await?;
    wait_clonesets(env, "web", &[("zone-b", 5), ("zone-c", 5)]).await?;
    wait_pods(
        env,
        "web",
        "zone-a gone, 5 and 5 pods",
        &[("zone-b", 5, Some(5)), ("zone-c", 5, Some(5))],
        OtherSubsets::Ignored,
    )
    .await?;
    // The allocation is written at once; `replicas` sums the CloneSets' statuses, which follow their pods.
    wait_status(
        env,
        "web",
        "two subsets and 10 replicas in the status",
        |status| {
            if subset_replicas(status) != owned(&[("zone-b", 5), ("zone-c", 5)]) {
                Some("not 5/5".to_owned())
            } else if status.replicas != 10 {
                Some(format!("replicas {}", status.replicas))
            } else {
                None
            }
        },
    )
    .await?;
    Ok(())
}

async fn deployment_subsets(env: &Env) -> Result<()> {
    let template = json!({"deploymentTemplate": {"spec": {
        "selector": {"matchLabels": {"app": "native"}}, "template": pod_template("native")}}});
    let topology = subsets(&[("zone-a", json!(1)), ("zone-b", Value::Null)]);
    create_ud(env, "native", 3, template, topology).await?;
    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), NAMESPACE);
    wait_for("the subset Deployments", WAIT, || async {
        let list = deployments
            .list(&ListParams::default().labels("app=native"))
            .await?;
        let found: BTreeMap<String, (i32, String)> = list
            .items
            .iter()
            .map(|deployment| {
                let zone = deployment
                    .spec
                    .template
                    .spec
                    .as_ref()
                    .and_then(|spec| spec.affinity.as_ref())
                    .and_then(|affinity| affinity.node_affinity.as_ref())
                    .and_then(|node| {
                        node.required_during_scheduling_ignored_during_execution
                            .as_ref()
                    })
                    .and_then(|required| required.node_selector_terms.first())
                    .and_then(|term| term.match_expressions.as_ref())
                    .and_then(|expressions| expressions.first())
                    .and_then(|expression| expression.values.as_ref())
                    .and_then(|values| values.first())
                    .cloned()
                    .unwrap_or_default();
                (
                    deployment.labels().get(SUBSET).cloned().unwrap_or_default(),
                    (deployment.spec.replicas.unwrap_or(1), zone),
                )
            })
            .collect();
        let expected = BTreeMap::from([
            ("zone-a".to_owned(), (1, "zone-a".to_owned())),
            ("zone-b".to_owned(), (2, "zone-b".to_owned())),
        ]);
        if found == expected {
            Ok(Some(()))
        } else {
            Err(anyhow!("Deployments by subset (replicas, zone): {found:?}"))
        }
    })
    .await?;
    let status = wait_status(
        env,
        "native",
        "the status of the Deployment subsets",
        |status| {
            (subset_replicas(status) != owned(&[("zone-a", 1), ("zone-b", 2)]))
                .then(|| "not 1/2".to_owned())
        },
    )
    .await?;
    ensure!(
        status.label_selector == "app=native",
        "labelSelector {:?}",
        status.label_selector
    );
    Ok(())
}

/// How long the pods of the subset that fits no node may stay unschedulable (the smallest whole number
/// of seconds that still leaves the pods time to be marked first).
const RESCHEDULE_CRITICAL_SECONDS: i32 = 2;

/// How long that subset stays marked unschedulable.
const UNSCHEDULABLE_SECONDS: i32 = 10;

/// The `Schedulable` condition of subset `name`: `(status, reason)`.
fn schedulable(
    status: &kruise_api::apps::v1beta1::UnitedDeploymentStatus,
    name: &str,
) -> Option<(String, String)> {
    status
        .subset_statuses
        .iter()
        .find(|subset| subset.name == name)?
        .conditions
        .iter()
        .find(|condition| condition.type_.as_ref() == "Schedulable")
        .map(|condition| (condition.status.clone(), condition.reason.clone()))
}

async fn adaptive_subsets(env: &Env) -> Result<()> {
    let started = std::time::Instant::now();
    let template = json!({"cloneSetTemplate": {"spec": {
        "selector": {"matchLabels": {"app": "adaptive"}}, "template": pod_template("adaptive")}}});
    // The first subset wants a zone no node is in; zone-a takes at most 2; zone-b the rest.
    let mut topology = subsets(&[
        ("nowhere", Value::Null),
        ("zone-a", Value::Null),
        ("zone-b", Value::Null),
    ]);
    topology[0]["maxReplicas"] = json!(3);
    topology[1]["maxReplicas"] = json!(2);
    create_ud(env, "adaptive", 3, template, topology).await?;
    patch_ud(
        env,
        "adaptive",
        json!({"spec": {"topology": {"scheduleStrategy": {"type": "Adaptive", "adaptive": {
            "rescheduleCriticalSeconds": RESCHEDULE_CRITICAL_SECONDS,
            "unschedulableDuration": UNSCHEDULABLE_SECONDS}}}}}),
    )
    .await?;
    // Its 3 replicas go to the first subset, whose pods the node simulator marks unschedulable ...
    wait_for(
        "pods of subset nowhere marked unschedulable",
        WAIT,
        || async {
            let pods = env
                .pods_api()
                .list(&ListParams::default().labels(&format!("{SUBSET}=nowhere")))
                .await?;
            let refused = pods
                .items
                .iter()
                .filter(|pod| {
                    kruise_api::pod::condition(pod, "PodScheduled").is_some_and(|condition| {
                        condition.status == "False"
                            && condition.reason.as_deref() == Some("Unschedulable")
                    })
                })
                .count();
            // (Once the subset is found unschedulable its pods go: seeing 0 then is too late to check.)
            if refused > 0 {
                Ok(Some(()))
            } else {
                Err(anyhow!(
                    "{} pods, {refused} unschedulable",
                    pods.items.len()
                ))
            }
        },
    )
    .await?;
    // ... and after the critical time they run in the next subsets: 2 in zone-a (its maximum), 1 in
    // zone-b.
    wait_clonesets(
        env,
        "adaptive",
        &[("nowhere", 0), ("zone-a", 2), ("zone-b", 1)],
    )
    .await?;
    wait_pods(
        env,
        "adaptive",
        "3 ready pods in zone-a and zone-b",
        &[("zone-a", 2, None), ("zone-b", 1, None)],
        OtherSubsets::Absent,
    )
    .await?;
    let status = wait_status(env, "adaptive", "subset nowhere unschedulable", |status| {
        let marked = schedulable(status, "nowhere");
        (marked != Some(("False".to_owned(), "reschedule".to_owned()))
            || status.ready_replicas != 3)
            .then(|| format!("nowhere Schedulable {marked:?}"))
    })
    .await?;
    ensure!(
        subset_replicas(&status) == owned(&[("nowhere", 0), ("zone-a", 2), ("zone-b", 1)]),
        "subset replicas {:?}",
        subset_replicas(&status)
    );
    eprintln!("    rescheduled in {:.1?}", started.elapsed());
    // After the unschedulable duration the subset is schedulable again, and the running pods stay where
    // they are.
    wait_status(env, "adaptive", "subset nowhere recovered", |status| {
        let marked = schedulable(status, "nowhere");
        (marked != Some(("True".to_owned(), "recover".to_owned())))
            .then(|| format!("nowhere Schedulable {marked:?}"))
    })
    .await?;
    wait_clonesets(
        env,
        "adaptive",
        &[("nowhere", 0), ("zone-a", 2), ("zone-b", 1)],
    )
    .await?;
    wait_pods(
        env,
        "adaptive",
        "the same 3 ready pods",
        &[("zone-a", 2, None), ("zone-b", 1, None)],
        OtherSubsets::Absent,
    )
    .await?;
    eprintln!("    recovered in {:.1?}", started.elapsed());
    Ok(())
}

/// The most pods a node holds in `united_deployment_reserves_unschedulable_pods`.
const RESERVE_MAX_PODS: usize = 2;

/// The label the controller puts on reserved pods.
const RESERVED: &str = "apps.kruise.io/united-deployment-reserved-pod";

/// The pods of subset `zone` of `app`: `(reserved label, placed, ready)` each, pods being deleted left
/// out.
async fn subset_pod_states(
    env: &Env,
    app: &str,
    zone: &str,
) -> Result<Vec<(Option<String>, bool, bool)>> {
    let pods = env
        .pods_api()
        .list(&ListParams::default().labels(&format!("app={app},{SUBSET}={zone}")))
        .await?;
    Ok(pods
        .items
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .map(|pod| {
            let placed = pod
                .spec
                .as_ref()
                .and_then(|spec| spec.node_name.as_deref())
                .is_some_and(|node| !node.is_empty());
            (pod.labels().get(RESERVED).cloned(), placed, is_ready(pod))
        })
        .collect())
}

/// The reserved pods of subset `name`, and its `Schedulable` status.
fn reserved_of(
    status: &kruise_api::apps::v1beta1::UnitedDeploymentStatus,
    name: &str,
) -> (i32, Option<String>) {
    let reserved = status
        .subset_statuses
        .iter()
        .find(|subset| subset.name == name)
        .map_or(0, |subset| subset.reserved_pods);
    (reserved, schedulable(status, name).map(|(value, _)| value))
}

async fn reserved_subsets(env: &Env) -> Result<()> {
    let started = std::time::Instant::now();
    // Two plain pods fill the zone-c node.
    let blockers: Vec<String> = (0..RESERVE_MAX_PODS)
        .map(|i| format!("blocker-{i}"))
        .collect();
    for name in &blockers {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "blocker"}},
            "spec": {"nodeSelector": {ZONE_LABEL: "zone-c"},
                "containers": [{"name": "main", "image": OLD_IMAGE}]}}))?;
        env.pods_api()
            .create(&PostParams::default(), &pod)
            .await
            .with_context(|| format!("creating pod {name}"))?;
    }
    wait_for("2 ready plain pods on the zone-c node", WAIT, || async {
        let pods = env
            .pods_api()
            .list(&ListParams::default().labels("app=blocker"))
            .await?;
        let ready = pods.items.iter().filter(|pod| is_ready(pod)).count();
        if ready == RESERVE_MAX_PODS {
            Ok(Some(()))
        } else {
            Err(anyhow!("{ready} ready"))
        }
    })
    .await?;
    let object: UnitedDeployment = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "reserve", "namespace": NAMESPACE},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "reserve"}},
            "template": {"cloneSetTemplate": {"spec": {
                "selector": {"matchLabels": {"app": "reserve"}}, "template": pod_template("reserve")}}},
            "topology": {
                "subsets": subsets(&[("zone-c", Value::Null), ("zone-b", Value::Null)]),
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {
                    "rescheduleCriticalSeconds": RESCHEDULE_CRITICAL_SECONDS,
                    "reserveUnschedulablePods": true}}}}
    }))?;
    uds(&env.client)
        .create(&PostParams::default(), &object)
        .await
        .context("creating UnitedDeployment reserve")?;
    // The zone-c pods cannot be placed: they are reserved and kept, and 2 temporary pods run in zone-b.
    wait_clonesets(env, "reserve", &[("zone-c", 2), ("zone-b", 2)]).await?;
    wait_for("2 reserved pods in zone-c", WAIT, || async {
        let found = subset_pod_states(env, "reserve", "zone-c").await?;
        let reserved = vec![(Some("true".to_owned()), false, false); 2];
        if found == reserved {
            Ok(Some(()))
        } else {
            Err(anyhow!("zone-c pods (label, placed, ready): {found:?}"))
        }
    })
    .await?;
    let temporary = subset_pod_states(env, "reserve", "zone-b").await?;
    ensure!(
        temporary.iter().all(|(label, _, _)| label.is_none()),
        "temporary pods labelled: {temporary:?}"
    );
    wait_pods(
        env,
        "reserve",
        "2 temporary pods ready in zone-b",
        &[("zone-b", 2, None)],
        OtherSubsets::Ignored,
    )
    .await?;
    wait_status(env, "reserve", "2 reserved pods", |status| {
        let zone_c = reserved_of(status, "zone-c");
        (status.reserved_pods != 2
            || zone_c != (2, Some("False".to_owned()))
            || status.replicas != 2
            || status.ready_replicas != 2)
            .then(|| format!("reservedPods {}, zone-c {zone_c:?}", status.reserved_pods))
    })
    .await?;
    eprintln!("    reserved in {:.1?}", started.elapsed());
    // Room on the zone-c node: the reserved pods are placed, and once ready the temporary pods go.
    for name in &blockers {
        env.pods_api()
            .delete(name, &DeleteParams::default().grace_period(0))
            .await
            .with_context(|| format!("deleting pod {name}"))?;
    }
    wait_clonesets(env, "reserve", &[("zone-c", 2), ("zone-b", 0)]).await?;
    wait_pods(
        env,
        "reserve",
        "2 ready pods in zone-c, none in zone-b",
        &[("zone-c", 2, None)],
        OtherSubsets::Absent,
    )
    .await?;
    wait_for("the zone-c pods no longer reserved", WAIT, || async {
        let found = subset_pod_states(env, "reserve", "zone-c").await?;
        let released = vec![(Some("false".to_owned()), true, true); 2];
        if found == released {
            Ok(Some(()))
        } else {
            Err(anyhow!("zone-c pods (label, placed, ready): {found:?}"))
        }
    })
    .await?;
    wait_status(env, "reserve", "no reserved pods", |status| {
        let zone_c = reserved_of(status, "zone-c");
        (status.reserved_pods != 0
            || zone_c != (0, Some("True".to_owned()))
            || status.replicas != 2
            || status.ready_replicas != 2)
            .then(|| format!("reservedPods {}, zone-c {zone_c:?}", status.reserved_pods))
    })
    .await?;
    eprintln!("    recovered in {:.1?}", started.elapsed());
    Ok(())
}
