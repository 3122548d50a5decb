//! ResourceDistribution on the real API server: kruise-manager as a child process with
//! `--feature-gates=ResourceDistributionGate=true` (controller and validating webhook over real HTTPS), as
//! the manifests' ServiceAccount with the roles of `rbac.yaml` and `resource-distribution.yaml`, with
//! kube-controller-manager's garbage collector.
//!
//! `resource_distribution_distributes_a_secret`, with namespaces and names unique to the run:
//!
//! * the webhook refuses a distributor of a Pod, and one whose target namespace already holds a Secret of
//!   the same name that no distributor wrote (`conflict`, the namespace named);
//! * a distributor of a Secret to namespaces by label selector, plus an included namespace without the
//!   label, minus an excluded labelled one: copies in the three targets (annotations `from` and
//!   `hashcode`, controller owner reference), none in the excluded one; status desired 3, succeeded 3,
//!   failed 0, every condition `False`;
//! * a new labelled namespace receives its copy within 10 s (the time is printed);
//! * a change of `spec.resource` updates every copy (data and hash);
//! * a second distributor of a ConfigMap to a list of namespaces: copies with the data, then updated data;
//! * removing a namespace's label deletes its copy;
//! * labelling the namespace with the foreign Secret reports `ConflictOccurred` (that namespace in
//!   `failedNamespace`), failed 1, and leaves the foreign Secret alone;
//! * deleting the distributor lets the garbage collector delete every copy (the foreign Secret stays).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kruise_api::apps::v1alpha1::ResourceDistribution;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, wait_for};

const FROM: &str = "kruise.io/resourcedistribution.resource.from";
const HASH: &str = "kruise.io/resourcedistribution.resource.hashcode";
const WAIT: Duration = Duration::from_secs(60);
/// How long the garbage collector may take: on a fresh control plane kube-controller-manager learns of the
/// ResourceDistribution kind (installed by the manager moments before) at its next discovery sync (every
/// 30 s), then deletes the copies of the deleted owner (about 40 s in this scenario).
const GARBAGE_COLLECTION_WAIT: Duration = Duration::from_secs(150);
/// How soon a new labelled namespace must hold its copy.
const NEW_NAMESPACE_WITHIN: Duration = Duration::from_secs(10);

pub async fn resource_distribution_distributes_a_secret(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let run = Names::new();
    let args = crate::manager_process::scenario_args(
        &run.manager_namespace(),
        &run.prefix,
        &["--feature-gates=ResourceDistributionGate=true".to_owned()],
    );
    // The gate's rights, apart from rbac.yaml, as an operator turning the gate on applies them.
    crate::identities::grant_manager(
        cluster,
        "resource-distribution.yaml",
        &run.manager_namespace(),
        "kruise-manager",
    )
    .await?;
    let mut manager =
        ManagerProcess::spawn(cluster, &run.prefix, &args, Webhooks::Served, &[]).await?;
    let result = async {
        crate::manager_process::wait_ready(manager.metrics_port).await?;
        scenario(&cluster.client, &run).await
    }
    .await;
    let cleaned = cleanup(&cluster.client, &run).await;
    let stopped = manager.terminate().await;
    result
        .and(cleaned)
        .and(stopped)
        .with_context(|| manager.log_tail())
}

/// The names of one run (a suffix from the clock, so a run never meets a namespace of an earlier run that
/// is still terminating).
struct Names {
    prefix: String,
}

impl Names {
    fn new() -> Self {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_millis() % 1_000_000_000)
            .unwrap_or_default();
        Self {
            prefix: format!("e2e-rd-{millis}"),
        }
    }

    fn namespace(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    fn manager_namespace(&self) -> String {
        self.namespace("system")
    }

    fn distributor(&self) -> String {
        self.prefix.clone()
    }

    fn conflicting(&self) -> String {
        format!("{}-conflicting", self.prefix)
    }

    fn config_distributor(&self) -> String {
        format!("{}-config", self.prefix)
    }

    fn label(&self) -> (String, String) {
        (
            "e2e.kruise.io/resource-distribution".to_owned(),
            self.prefix.clone(),
        )
    }

    /// Every namespace the scenario creates.
    fn namespaces(&self) -> Vec<String> {
        ["a1", "a2", "inc", "exc", "foreign", "new"]
            .iter()
            .map(|name| self.namespace(name))
            .collect()
    }
}

const SECRET: &str = "e2e-shared";

async fn create_namespace(client: &Client, name: &str, labels: &[(String, String)]) -> Result<()> {
    let labels: BTreeMap<String, String> = labels.iter().cloned().collect();
    let namespace: Namespace = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels}
    }))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .with_context(|| format!("creating namespace {name}"))?;
    Ok(())
}

async fn label_namespace(
    client: &Client,
    name: &str,
    label: &(String, String),
    on: bool,
) -> Result<()> {
    let value = if on { json!(label.1) } else { Value::Null };
    Api::<Namespace>::all(client.clone())
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {&label.0: value}}})),
        )
        .await
        .with_context(|| format!("labelling namespace {name}"))?;
    Ok(())
}

fn distributor(
    run: &Names,
    data: &str,
    included: &[String],
    excluded: &[String],
) -> Result<ResourceDistribution> {
    let (key, value) = run.label();
    let list = |names: &[String]| -> Vec<Value> {
        names.iter().map(|name| json!({"name": name})).collect()
    };
    Ok(serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ResourceDistribution",
        "metadata": {"name": run.distributor()},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": SECRET, "labels": {"app": "e2e"}},
                "type": "Opaque", "stringData": {"token": data}},
            "targets": {
                "namespaceLabelSelector": {"matchLabels": {key: value}},
                "includedNamespaces": {"list": list(included)},
                "excludedNamespaces": {"list": list(excluded)}
            }
        }
    }))?)
}

/// The refusal message of a create (dry run: nothing is stored even when the webhook is not yet there).
async fn refusal(
    api: &Api<ResourceDistribution>,
    object: &ResourceDistribution,
) -> Result<Option<String>> {
    let params = PostParams {
        dry_run: true,
        field_manager: None,
    };
    match api.create(&params, object).await {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(status)) => Ok(Some(status.message)),
        Err(error) => Err(error.into()),
    }
}

async fn copy(client: &Client, namespace: &str) -> Result<Option<Secret>> {
    Ok(Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(SECRET)
        .await?)
}

fn annotation<'a>(secret: &'a Secret, key: &str) -> Option<&'a str> {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(key))
        .map(String::as_str)
}

/// The decoded `token` of a copy distributed by `distributor`, `None` when there is none.
fn token_of(secret: &Secret, distributor: &str) -> Option<String> {
    (annotation(secret, FROM) == Some(distributor)).then_some(())?;
    let data = secret.data.as_ref()?.get("token")?;
    String::from_utf8(data.0.clone()).ok()
}

/// Waits until the namespaces `with` hold copies whose token is `token` and the namespaces `without`
/// hold no copy of the distributor.
async fn wait_copies(
    client: &Client,
    run: &Names,
    with: &[String],
    without: &[String],
    token: &str,
    within: Duration,
) -> Result<()> {
    let distributor = run.distributor();
    wait_for(
        &format!("copies with token {token:?} in {with:?} and none in {without:?}"),
        within,
        || async {
            for namespace in with {
                let Some(secret) = copy(client, namespace).await? else {
                    bail!("no copy in {namespace}");
                };
                if token_of(&secret, &distributor).as_deref() != Some(token) {
                    bail!(
                        "the copy in {namespace} is {:?}",
                        secret.metadata.annotations
                    );
                }
            }
            for namespace in without {
                if let Some(secret) = copy(client, namespace).await?
                    && annotation(&secret, FROM) == Some(distributor.as_str())
                {
                    bail!("a copy is still in {namespace}");
                }
            }
            Ok(Some(()))
        },
    )
    .await
}

/// Waits for a status with these counts whose generation is the distributor's, and returns it.
async fn wait_status(
    api: &Api<ResourceDistribution>,
    name: &str,
    counts: (i32, i32, i32),
) -> Result<ResourceDistribution> {
    wait_for(
        &format!("status desired/succeeded/failed {counts:?}"),
        WAIT,
        || async {
            let object = api.get(name).await?;
            let status = object.status.clone().unwrap_or_default();
            let observed = (status.desired, status.succeeded, status.failed);
            let current =
                status.observed_generation == object.metadata.generation.unwrap_or_default();
            if observed == counts && current {
                return Ok(Some(object));
            }
            bail!(
                "status is {observed:?}, observedGeneration {}",
                status.observed_generation
            )
        },
    )
    .await
}

async fn scenario(client: &Client, run: &Names) -> Result<()> {
    let label = run.label();
    let labelled = std::slice::from_ref(&label);
    let [a1, a2, inc, exc, foreign, new] =
        <[String; 6]>::try_from(run.namespaces()).map_err(|_| anyhow::anyhow!("six namespaces"))?;
    create_namespace(client, &a1, labelled).await?;
    create_namespace(client, &a2, labelled).await?;
    create_namespace(client, &inc, &[]).await?;
    create_namespace(client, &exc, labelled).await?;
    create_namespace(client, &foreign, &[]).await?;
    let foreign_secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": SECRET}, "stringData": {"token": "mine"}
    }))?;
    Api::<Secret>::namespaced(client.clone(), &foreign)
        .create(&PostParams::default(), &foreign_secret)
        .await
        .context("creating the foreign Secret")?;
    let api: Api<ResourceDistribution> = Api::all(client.clone());

    let mut phase = Instant::now();
    // The webhook: an unsupported kind, then a conflict with the foreign Secret.
    let mut pod = distributor(run, "v1", &[], &[])?;
    pod.spec.resource["kind"] = json!("Pod");
    let message = wait_for("the webhook to refuse a distributor of a Pod", WAIT, || {
        refusal(&api, &pod)
    })
    .await?;
    ensure!(
        message.contains("spec.resource.kind: Unsupported value: \"Pod\""),
        "refusal of a Pod: {message}"
    );
    // A real create this time (the webhook is known to be called): nothing may be stored.
    let mut conflicting = distributor(run, "v1", std::slice::from_ref(&foreign), &[])?;
    conflicting.metadata.name = Some(run.conflicting());
    let message = match api.create(&PostParams::default(), &conflicting).await {
        Ok(_) => bail!("a conflicting distributor was admitted"),
        Err(kube::Error::Api(status)) => status.message,
        Err(error) => return Err(error.into()),
    };
    ensure!(
        message.contains("spec.targets: Invalid value: [\"")
            && message.contains(&foreign)
            && message.contains("conflict"),
        "refusal of a conflict: {message}"
    );

    phase = lap(phase, "webhook refusals");
    // Distribute: label selector + included - excluded.
    let name = run.distributor();
    let started = distributor(
        run,
        "v1",
        std::slice::from_ref(&inc),
        std::slice::from_ref(&exc),
    )?;
    api.create(&PostParams::default(), &started)
        .await
        .context("creating the distributor")?;
    let targets = [a1.clone(), a2.clone(), inc.clone()];
    wait_copies(
        client,
        run,
        &targets,
        std::slice::from_ref(&exc),
        "v1",
        WAIT,
    )
    .await?;
    let settled = wait_status(&api, &name, (3, 3, 0)).await?;
    let status = settled.status.unwrap_or_default();
    ensure!(
        status.conditions.len() == 6 && status.conditions.iter().all(|c| c.status == "False"),
        "conditions: {:?}",
        status.conditions
    );
    let first = copy(client, &a1).await?.context("copy in a1")?;
    let owner = first.metadata.owner_references.clone().unwrap_or_default();
    ensure!(
        owner.len() == 1
            && owner[0].kind == "ResourceDistribution"
            && owner[0].name == name
            && owner[0].controller == Some(true),
        "owner references: {owner:?}"
    );
    ensure!(
        annotation(&first, HASH).is_some_and(|hash| hash.len() == 64),
        "hash: {:?}",
        first.metadata.annotations
    );
    ensure!(
        first
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get("app"))
            .map(String::as_str)
            == Some("e2e"),
        "labels: {:?}",
        first.metadata.labels
    );

    phase = lap(phase, "first distribution");
    // A new labelled namespace gets its copy within seconds.
    let created = Instant::now();
    create_namespace(client, &new, labelled).await?;
    wait_copies(
        client,
        run,
        std::slice::from_ref(&new),
        &[],
        "v1",
        NEW_NAMESPACE_WITHIN,
    )
    .await?;
    eprintln!(
        "    a new labelled namespace held its copy after {:?}",
        created.elapsed()
    );
    wait_status(&api, &name, (4, 4, 0)).await?;

    phase = lap(phase, "new namespace");
    // A new resource updates every copy.
    let old_hash = annotation(&first, HASH).unwrap_or_default().to_owned();
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"resource": {"stringData": {"token": "v2"}}}})),
    )
    .await
    .context("changing spec.resource")?;
    let four = [a1.clone(), a2.clone(), inc.clone(), new.clone()];
    wait_copies(client, run, &four, &[], "v2", WAIT).await?;
    let updated = copy(client, &a1).await?.context("copy in a1")?;
    ensure!(
        annotation(&updated, HASH).is_some_and(|hash| hash != old_hash),
        "the hash did not change"
    );

    phase = lap(phase, "resource update");
    // A ConfigMap, distributed to a list of namespaces, and kept in step with its source.
    distribute_config_map(client, run, &[a1.clone(), inc.clone()]).await?;

    phase = lap(phase, "ConfigMap distribution");
    // Removing a label deletes that copy.
    label_namespace(client, &a2, &label, false).await?;
    wait_copies(
        client,
        run,
        &[a1.clone(), inc.clone(), new.clone()],
        std::slice::from_ref(&a2),
        "v2",
        WAIT,
    )
    .await?;
    wait_status(&api, &name, (3, 3, 0)).await?;

    phase = lap(phase, "label removal");
    // A conflict that appears later: the namespace with the foreign Secret becomes a target.
    label_namespace(client, &foreign, &label, true).await?;
    let conflicted = wait_status(&api, &name, (4, 3, 1)).await?;
    let conditions = conflicted.status.unwrap_or_default().conditions;
    let conflict = conditions
        .iter()
        .find(|condition| condition.type_.as_str() == "ConflictOccurred")
        .context("no ConflictOccurred condition")?;
    ensure!(
        conflict.status == "True"
            && conflict.failed_namespaces == [foreign.clone()]
            && conflict.last_transition_time.is_some(),
        "ConflictOccurred: {conflict:?}"
    );
    let untouched = copy(client, &foreign)
        .await?
        .context("the foreign Secret is gone")?;
    ensure!(
        annotation(&untouched, FROM).is_none(),
        "the foreign Secret was overwritten: {:?}",
        untouched.metadata
    );

    phase = lap(phase, "late conflict");
    // Deleting the distributor: the garbage collector deletes the copies, the foreign Secret stays.
    api.delete(&name, &DeleteParams::default())
        .await
        .context("deleting the distributor")?;
    wait_copies(
        client,
        run,
        &[],
        &[a1.clone(), inc.clone(), new.clone()],
        "",
        GARBAGE_COLLECTION_WAIT,
    )
    .await?;
    ensure!(
        copy(client, &foreign).await?.is_some(),
        "the foreign Secret was deleted"
    );
    lap(phase, "garbage collection");
    Ok(())
}

const CONFIG_MAP: &str = "e2e-settings";

/// The `mode` of the ConfigMap copy in `namespace` made by `distributor`, `None` when there is none.
async fn config_copy(
    client: &Client,
    namespace: &str,
    distributor: &str,
) -> Result<Option<String>> {
    let copy = Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .get_opt(CONFIG_MAP)
        .await?;
    Ok(copy.and_then(|copy| {
        let from = copy.metadata.annotations.as_ref()?.get(FROM)?.clone();
        (from == distributor).then_some(())?;
        copy.data?.get("mode").cloned()
    }))
}

/// A distributor of a ConfigMap to `namespaces` (a list, no selector): every namespace gets the data, and a
/// change of the source's data reaches every copy.
async fn distribute_config_map(client: &Client, run: &Names, namespaces: &[String]) -> Result<()> {
    let name = run.config_distributor();
    let list: Vec<Value> = namespaces
        .iter()
        .map(|namespace| json!({"name": namespace}))
        .collect();
    let object: ResourceDistribution = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ResourceDistribution",
        "metadata": {"name": name},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": CONFIG_MAP}, "data": {"mode": "blue"}},
            "targets": {"includedNamespaces": {"list": list}}
        }
    }))?;
    let api: Api<ResourceDistribution> = Api::all(client.clone());
    api.create(&PostParams::default(), &object)
        .await
        .context("creating the ConfigMap distributor")?;
    for mode in ["blue", "green"] {
        if mode == "green" {
            api.patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"resource": {"data": {"mode": "green"}}}})),
            )
            .await
            .context("changing the ConfigMap's data")?;
        }
        wait_for(
            &format!("ConfigMap copies with mode {mode:?} in {namespaces:?}"),
            WAIT,
            || async {
                for namespace in namespaces {
                    let found = config_copy(client, namespace, &name).await?;
                    if found.as_deref() != Some(mode) {
                        bail!("the ConfigMap in {namespace} has mode {found:?}");
                    }
                }
                Ok(Some(()))
            },
        )
        .await?;
    }
    wait_status(&api, &name, (2, 2, 0)).await?;
    Ok(())
}

/// Prints how long a phase took; returns the start of the next.
fn lap(started: Instant, phase: &str) -> Instant {
    eprintln!("    {phase}: {:?}", started.elapsed());
    Instant::now()
}

async fn cleanup(client: &Client, run: &Names) -> Result<()> {
    for name in [
        run.distributor(),
        run.conflicting(),
        run.config_distributor(),
    ] {
        let _ = Api::<ResourceDistribution>::all(client.clone())
            .delete(&name, &DeleteParams::default())
            .await;
    }
    let namespaces = Api::<Namespace>::all(client.clone());
    for namespace in run
        .namespaces()
        .into_iter()
        .chain([run.manager_namespace()])
    {
        let _ = namespaces
            .delete(&namespace, &DeleteParams::default())
            .await;
    }
    Ok(())
}
