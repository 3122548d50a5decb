//! `kruise set env`, `kruise set resources` and `kruise create job --from=advancedcronjob/NAME`, run as the
//! binary against the real API server: `set env` adds, replaces and removes variables of a CloneSet (its
//! `valueFrom` entries kept, `--from=configmap/NAME` adding references) and kruise-manager gives the pods
//! the new environment; `--list` prints it as kubectl does; `set resources` changes an Advanced
//! StatefulSet's template; `create job` makes the Job of a `jobTemplate` and the BroadcastJob of a
//! `broadcastJobTemplate`, owned by the AdvancedCronJob and marked as a manual run. Bad input exits 2 with
//! a one-line error, a cluster-side failure exits 1.

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, EnvVar, Pod};
use kruise_api::apps::v1beta1::{AdvancedCronJob, BroadcastJob};
use kube::api::PostParams;
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use crate::asts_env;
use crate::cloneset_env::Env;
use crate::kruise_binary;
use crate::support::Cluster;

const NAMESPACE: &str = "e2e-kruise-set-verbs";

/// Runs `kruise args... -n NAMESPACE` and expects exit 0 and `expected` as its output.
async fn succeeds(cluster: &Cluster, args: &[&str], expected: &str) -> Result<()> {
    let stdout = kruise_binary::run(&cluster.kubeconfig, Some(NAMESPACE), args)
        .await?
        .succeeded(args)?;
    ensure!(
        stdout.trim_end() == expected.trim_end(),
        "kruise {args:?}: stdout {stdout:?}, expected {expected:?}"
    );
    Ok(())
}

/// Runs `kruise args... -n NAMESPACE` and expects exit `code` with one error line containing `words`.
async fn refused(cluster: &Cluster, args: &[&str], code: i32, words: &str) -> Result<()> {
    kruise_binary::run(&cluster.kubeconfig, Some(NAMESPACE), args)
        .await?
        .refused(args, code, &[words])
}

pub async fn kruise_set_env_resources_and_create_job(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, NAMESPACE).await?;
    let result = scenario(cluster, &env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn scenario(cluster: &Cluster, env: &Env) -> Result<()> {
    set_env(cluster, env).await?;
    set_resources(cluster, env).await?;
    create_job(cluster, env).await
}

/// `(name, value or the valueFrom as JSON)` of each variable, in order.
fn variables(env: &[EnvVar]) -> Vec<(String, String)> {
    env.iter()
        .map(|var| {
            // The API server defaults `fieldRef.apiVersion` in pods: compare what the verb wrote.
            let value = match &var.value_from {
                Some(from) => match (&from.field_ref, &from.config_map_key_ref) {
                    (Some(field), _) => format!("field {}", field.field_path),
                    (None, Some(key)) => format!("configmap {} key {}", key.name, key.key),
                    (None, None) => format!("{from:?}"),
                },
                None => var.value.clone().unwrap_or_default(),
            };
            (var.name.clone(), value)
        })
        .collect()
}

fn main_env(pod: &Pod) -> Vec<(String, String)> {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.containers.iter().find(|c| c.name == "main"))
        .and_then(|container| container.env.as_deref())
        .map(variables)
        .unwrap_or_default()
}

async fn set_env(cluster: &Cluster, env: &Env) -> Result<()> {
    let configs: Api<ConfigMap> = Api::namespaced(env.client.clone(), NAMESPACE);
    configs
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "settings"},
                "data": {"log-level": "debug", "unused": "x"}
            }))?,
        )
        .await?;
    let containers = json!([{"name": "main", "image": "nginx:1.24", "env": [
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "MODE", "value": "slow"},
        {"name": "OLD", "value": "x"},
    ]}]);
    env.create(
        "web",
        2,
        "nginx:1.24",
        json!({"template": {"spec": {"containers": containers}}}),
    )
    .await?;
    let before = env.wait_rolled_out("web", 2, "nginx:1.24").await?;

    succeeds(
        cluster,
        &[
            "set",
            "env",
            "cloneset/web",
            "MODE=fast",
            "OLD-",
            "NEW=a=b",
            "--from=configmap/settings",
            "--keys=log-level",
        ],
        "cloneset.apps.kruise.io/web env updated",
    )
    .await?;
    let pod_name = "field metadata.name";
    let log_level = "configmap settings key log-level";
    let expected: Vec<(String, String)> = [
        ("POD", pod_name),
        ("MODE", "fast"),
        ("NEW", "a=b"),
        ("LOG_LEVEL", log_level),
    ]
    .iter()
    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
    .collect();
    let template = env.clonesets().get("web").await?.spec.template;
    let template_env = template
        .spec
        .as_ref()
        .and_then(|spec| spec.containers.first())
        .and_then(|container| container.env.as_deref())
        .map(variables)
        .unwrap_or_default();
    ensure!(
        template_env == expected,
        "the template's env after set env: {template_env:?}, expected {expected:?}"
    );

    // An env change is not in-place updatable: kruise-manager recreates the pods with the new env.
    let after = env.wait_rolled_out("web", 2, "nginx:1.24").await?;
    for pod in &after {
        ensure!(
            !before.iter().any(|old| old.name_any() == pod.name_any()),
            "pod {} was not replaced",
            pod.name_any()
        );
        ensure!(
            main_env(pod) == expected,
            "pod {} env {:?}, expected {expected:?}",
            pod.name_any(),
            main_env(pod)
        );
    }

    succeeds(
        cluster,
        &["set", "env", "cloneset/web", "--list"],
        "# CloneSet web, container main\n# POD from field path metadata.name\nMODE=fast\nNEW=a=b\n\
         # LOG_LEVEL from configmap settings, key log-level\n",
    )
    .await?;
    succeeds(
        cluster,
        &["set", "env", "cloneset/web", "-c", "m*", "MODE=fast"],
        "cloneset.apps.kruise.io/web env unchanged",
    )
    .await?;

    refused(
        cluster,
        &["set", "env", "cloneset/web", "-c", "nope", "A=1"],
        2,
        "unable to find container named \"nope\"",
    )
    .await?;
    refused(
        cluster,
        &["set", "env", "cloneset/web", "1BAD=x"],
        2,
        "not a valid environment variable name",
    )
    .await?;
    refused(
        cluster,
        &["set", "env", "cloneset/web", "A=1", "A-"],
        2,
        "A is both set and removed",
    )
    .await?;
    refused(
        cluster,
        &["set", "env", "cloneset/missing", "A=1"],
        1,
        "cloneset.apps.kruise.io/missing not found",
    )
    .await
}

async fn set_resources(cluster: &Cluster, env: &Env) -> Result<()> {
    // No Advanced StatefulSet controller runs here: the template is what is checked.
    asts_env::create(env, asts_env::statefulset("db", 0, "mysql:8", json!({}))).await?;
    succeeds(
        cluster,
        &[
            "set",
            "resources",
            "asts/db",
            "-c",
            "main",
            "--limits",
            "cpu=200m,memory=512Mi",
            "--requests=cpu=0.1",
        ],
        "statefulset.apps.kruise.io/db resource requirements updated",
    )
    .await?;
    let set = asts_env::sets(env).get("db").await?;
    let resources = set
        .spec
        .template
        .spec
        .as_ref()
        .and_then(|spec| spec.containers.first())
        .and_then(|container| container.resources.clone())
        .context("no resources on the template")?;
    let resources = serde_json::to_value(resources)?;
    ensure!(
        resources
            == json!({"limits": {"cpu": "200m", "memory": "512Mi"}, "requests": {"cpu": "100m"}}),
        "the template's resources: {resources}"
    );
    refused(
        cluster,
        &["set", "resources", "asts/db", "--limits", "cpu=abc"],
        2,
        "\"abc\" is not a quantity",
    )
    .await?;
    refused(
        cluster,
        &["set", "resources", "asts/db", "--requests", "cpu=2"],
        2,
        "requests.cpu 2 would exceed limits.cpu 200m",
    )
    .await?;
    refused(
        cluster,
        &["set", "resources", "asts/db"],
        2,
        "give --limits or --requests",
    )
    .await
}

async fn create_job(cluster: &Cluster, env: &Env) -> Result<()> {
    let crons: Api<AdvancedCronJob> = Api::namespaced(env.client.clone(), NAMESPACE);
    let pod_spec =
        json!({"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]});
    // The schedule never fires during the test (and no AdvancedCronJob controller runs here).
    let report = crons
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
                "metadata": {"name": "report"},
                "spec": {"schedule": "0 0 1 1 *", "template": {"jobTemplate": {
                    "metadata": {"labels": {"task": "report"}, "annotations": {"team": "data"}},
                    "spec": {"backoffLimit": 1, "template": {"spec": pod_spec}}}}}
            }))?,
        )
        .await?;
    let spread = crons
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
                "metadata": {"name": "spread"},
                "spec": {"schedule": "0 0 1 1 *", "template": {"broadcastJobTemplate": {
                    "metadata": {"labels": {"task": "spread"}},
                    "spec": {"template": {"spec": pod_spec}}}}}
            }))?,
        )
        .await?;

    succeeds(
        cluster,
        &[
            "create",
            "job",
            "report-now",
            "--from=advancedcronjob/report",
        ],
        "job.batch/report-now created",
    )
    .await?;
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), NAMESPACE);
    let job = jobs.get("report-now").await?;
    check_manual_child(
        &job.metadata,
        report.uid().as_deref(),
        "report",
        Some("report"),
    )?;
    ensure!(
        job.annotations().get("team").map(String::as_str) == Some("data"),
        "the template's annotations are not on the Job: {:?}",
        job.annotations()
    );
    ensure!(
        job.spec.as_ref().and_then(|spec| spec.backoff_limit) == Some(1),
        "the template's spec is not the Job's: {:?}",
        job.spec
    );

    succeeds(
        cluster,
        &["create", "job", "spread-now", "--from=acj/spread"],
        "broadcastjob.apps.kruise.io/spread-now created",
    )
    .await?;
    let broadcasts: Api<BroadcastJob> = Api::namespaced(env.client.clone(), NAMESPACE);
    let broadcast = broadcasts.get("spread-now").await?;
    check_manual_child(
        &broadcast.metadata,
        spread.uid().as_deref(),
        "spread",
        Some("spread"),
    )?;

    // --dry-run=client prints the object and creates nothing.
    let args = [
        "create",
        "job",
        "report-dry",
        "--from=acj/report",
        "--dry-run=client",
        "-o",
        "json",
    ];
    let stdout = kruise_binary::run(&cluster.kubeconfig, Some(NAMESPACE), &args)
        .await?
        .succeeded(&args)?;
    let printed: Value = serde_json::from_str(&stdout).context("dry run output")?;
    ensure!(
        printed["kind"] == "Job"
            && printed["apiVersion"] == "batch/v1"
            && printed["metadata"]["name"] == "report-dry",
        "dry run printed {printed}"
    );
    ensure!(
        jobs.get_opt("report-dry").await?.is_none(),
        "--dry-run=client created the Job"
    );

    succeeds(
        cluster,
        &[
            "create",
            "job",
            "report-server",
            "--from=acj/report",
            "--dry-run=server",
        ],
        "job.batch/report-server created (server dry run)",
    )
    .await?;
    ensure!(
        jobs.get_opt("report-server").await?.is_none(),
        "--dry-run=server created the Job"
    );

    refused(
        cluster,
        &["create", "job", "report-now", "--from=acj/report"],
        1,
        "job.batch/report-now already exists",
    )
    .await?;
    refused(
        cluster,
        &["create", "job", "x", "--from=acj/missing"],
        1,
        "advancedcronjob.apps.kruise.io/missing not found",
    )
    .await?;
    refused(
        cluster,
        &["create", "job", "x", "--from=cronjob/report"],
        2,
        "expected advancedcronjob/NAME",
    )
    .await?;
    refused(
        cluster,
        &["create", "job", "Bad_Name", "--from=acj/report"],
        2,
        "not a valid name",
    )
    .await
}

/// The object is owned by the AdvancedCronJob `owner` (uid `uid`), marked as a manual run, with the
/// template's `task` label.
fn check_manual_child(
    metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    uid: Option<&str>,
    owner: &str,
    task: Option<&str>,
) -> Result<()> {
    let name = metadata.name.as_deref().unwrap_or_default();
    let owners = metadata.owner_references.clone().unwrap_or_default();
    ensure!(
        owners.len() == 1
            && owners
                .iter()
                .all(|reference| reference.kind == "AdvancedCronJob"
                    && reference.name == owner
                    && Some(reference.uid.as_str()) == uid
                    && reference.api_version == "apps.kruise.io/v1beta1"),
        "{name}: owner references {owners:?}, expected AdvancedCronJob {owner} ({uid:?})"
    );
    let annotations = metadata.annotations.clone().unwrap_or_default();
    ensure!(
        annotations
            .get("cronjob.kubernetes.io/instantiate")
            .map(String::as_str)
            == Some("manual"),
        "{name}: annotations {annotations:?}"
    );
    let labels = metadata.labels.clone().unwrap_or_default();
    ensure!(
        labels.get("task").map(String::as_str) == task,
        "{name}: labels {labels:?}"
    );
    Ok(())
}
