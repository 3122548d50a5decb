//! `kruise rollout plan`: what the CloneSet controller would do next to a CloneSet and its pods.
//!
//! The CloneSet may be `apps.kruise.io/v1alpha1` or `v1beta1` (converted to v1beta1, the hub). The pods file
//! holds pods as a YAML/JSON stream or a `List`; it may also hold the CloneSet's PersistentVolumeClaims
//! (instance-id reuse), ControllerRevisions (in-place updates need the pods' revision data) and Nodes (the
//! topology-spread ranker), as `kubectl get pods,pvc,controllerrevisions -o yaml` prints them. Revisions come
//! from `status.currentRevision` / `status.updateRevision` unless the flags give them; without either, the
//! update revision is computed from the template as the controller names it, and the current revision is the
//! update revision.

use std::collections::BTreeMap;
use std::io::Write;

use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod, PodTemplateSpec};
use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::pod::{PodDefaultsOptions, apply_pod_spec_defaults};
use kruise_inplace::calculate::RevisionRef;
use kruise_inplace::{go_json, revision};
use kruise_schedule::cloneset::{
    Action, ActionKind, Options, Plan, PlanInput, PlanRule, Revisions, SeededIds, SpecificKind,
    plan,
};
use serde_json::{Value, json};

use super::CliError;
use super::input::read_objects;

/// Output format of `kruise rollout plan`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    /// One line per action with the rule that chose it, then the diff and the status.
    #[default]
    Text,
    /// `{cloneset, step, diff, actions, status, requeueAfterSeconds, invalid, error, skipped}`;
    /// `invalid` lists the spec values the planner cannot use as written, each with how it read them.
    Json,
}

/// Arguments of `kruise rollout plan`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct PlanArgs {
    /// The CloneSet (v1alpha1 or v1beta1): a YAML/JSON file, or `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "CLONESET")]
    pub cloneset: String,
    /// Its pods (and optionally claims, ControllerRevisions, nodes): a YAML/JSON stream or List, or `-`.
    #[arg(long, value_name = "PODS")]
    pub pods: String,
    /// The current revision (default: `status.currentRevision`).
    #[arg(long, value_name = "R")]
    pub current_revision: Option<String>,
    /// The update revision (default: `status.updateRevision`, else computed from the template).
    #[arg(long, value_name = "R")]
    pub update_revision: Option<String>,
    /// The time of the decision, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Leave `PreparingDelete` pods out when counting pods for scaling (the controller flag
    /// `--cloneset-scaling-exclude-preparing-delete`).
    #[arg(long)]
    pub exclude_preparing_delete: bool,
    /// Upstream feature gates, `Name=true|false,...` (CloneSetPartitionRollback, PreparingUpdateAsUpdate,
    /// CloneSetShortHash, InPlaceUpdateEnvFromMetadata, InPlaceWorkloadVerticalScaling,
    /// RecreatePodWhenChangeVCTInCloneSetGate); upstream's defaults otherwise.
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// Seed of the instance-id generator for new pods (upstream draws them at random).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: PlanFormat,
}

/// Subcommands of `kruise rollout`.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum RolloutCommand {
    /// Print what the CloneSet controller would do next: the diff, each action with its rule, the status.
    Plan(PlanArgs),
}

/// Runs a `kruise rollout` subcommand at `now` (used when `--now` is not given).
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn run(command: &RolloutCommand, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    match command {
        RolloutCommand::Plan(args) => plan_command(args, now, out),
    }
}

/// A ControllerRevision read from the pods file.
struct KnownRevision {
    name: String,
    data: Value,
    annotations: Option<BTreeMap<String, String>>,
}

/// Everything the pods file holds.
#[derive(Default)]
struct Owned {
    pods: Vec<Pod>,
    claims: Vec<PersistentVolumeClaim>,
    revisions: Vec<KnownRevision>,
    nodes: Vec<Node>,
}

/// `kruise rollout plan`.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn plan_command(args: &PlanArgs, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    let mut options = Options::default()
        .with_feature_gates(&args.feature_gates)
        .map_err(|error| CliError::Invalid(format!("--feature-gates: {error}")))?;
    options.exclude_preparing_delete = args.exclude_preparing_delete;
    if args.cloneset == "-" && args.pods == "-" {
        return Err(CliError::Invalid(
            "-f and --pods cannot both read standard input".to_owned(),
        ));
    }
    let now = match &args.now {
        Some(text) => text
            .parse::<Timestamp>()
            .map_err(|error| CliError::Invalid(format!("--now {text:?}: {error}")))?,
        None => now,
    };
    let cloneset = read_cloneset(&args.cloneset)?;
    let owned = read_owned(&args.pods)?;
    let status = cloneset.status.clone().unwrap_or_default();
    let update = match (&args.update_revision, status.update_revision.as_str()) {
        (Some(given), _) => given.clone(),
        (None, "") => template_revision(&cloneset, &args.cloneset)?,
        (None, name) => name.to_owned(),
    };
    let current = match (&args.current_revision, status.current_revision.as_str()) {
        (Some(given), _) => given.clone(),
        (None, "") => update.clone(),
        (None, name) => name.to_owned(),
    };
    let known: Vec<RevisionRef<'_>> = owned
        .revisions
        .iter()
        .map(|r| RevisionRef {
            name: &r.name,
            data: Some(&r.data),
            annotations: r.annotations.as_ref(),
        })
        .collect();
    let revisions = Revisions {
        current: &current,
        update: &update,
        known: &known,
    };
    let zoned = now.to_zoned(TimeZone::UTC);
    let ids = SeededIds::new(args.seed);
    let input = PlanInput::new(&cloneset, &owned.pods, revisions, &zoned, &options, &ids)
        .with_claims(&owned.claims)
        .with_nodes(&owned.nodes);
    let result = plan(&input);
    let view = PlanView {
        cloneset: &cloneset,
        owned: &owned,
        plan: &result,
    };
    match args.output {
        PlanFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &view.json()).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        PlanFormat::Text => view.write_text(out)?,
    }
    Ok(())
}

fn invalid(path: &str, message: impl std::fmt::Display) -> CliError {
    CliError::Invalid(format!("{path}: {message}"))
}

/// Reads the one CloneSet of `path`, converting v1alpha1 to v1beta1.
fn read_cloneset(path: &str) -> Result<v1beta1::CloneSet, CliError> {
    let mut objects = read_objects(&[path.to_owned()])?;
    if objects.len() != 1 {
        return Err(invalid(
            path,
            format!("expected one CloneSet, found {} objects", objects.len()),
        ));
    }
    let object = objects.pop().unwrap_or(Value::Null);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != "CloneSet" {
        return Err(invalid(
            path,
            format!("kind: expected CloneSet, found {kind:?}"),
        ));
    }
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    match api_version {
        "apps.kruise.io/v1beta1" => decode::<v1beta1::CloneSet>(path, &object),
        "apps.kruise.io/v1alpha1" => {
            decode::<v1alpha1::CloneSet>(path, &object).map(|alpha| v1beta1::CloneSet::from(&alpha))
        }
        other => Err(invalid(
            path,
            format!(
                "apiVersion: expected apps.kruise.io/v1alpha1 or apps.kruise.io/v1beta1, found {other:?}"
            ),
        )),
    }
}

/// Decodes `object`; on failure, names the first top-level field (or `spec`/`status` field) that fails.
fn decode<T: serde::de::DeserializeOwned>(path: &str, object: &Value) -> Result<T, CliError> {
    serde_json::from_value::<T>(object.clone())
        .map_err(|error| invalid(path, format!("{}: {error}", failing_field::<T>(object))))
}

/// The path of the first field (two levels deep, e.g. `spec.replicas`, or one, e.g. `metadata`) without
/// which the object decodes; `(root)` when no single field is to blame.
fn failing_field<T: serde::de::DeserializeOwned>(object: &Value) -> String {
    let Some(fields) = object.as_object() else {
        return "(root)".to_owned();
    };
    let decodes = |candidate: serde_json::Map<String, Value>| {
        serde_json::from_value::<T>(Value::Object(candidate)).is_ok()
    };
    for (key, value) in fields {
        let Some(inner) = value.as_object() else {
            continue;
        };
        for inner_key in inner.keys() {
            let mut without = inner.clone();
            without.remove(inner_key);
            let mut candidate = fields.clone();
            candidate.insert(key.clone(), Value::Object(without));
            if decodes(candidate) {
                return format!("{key}.{inner_key}");
            }
        }
    }
    for key in fields.keys() {
        let mut candidate = fields.clone();
        candidate.remove(key);
        if decodes(candidate) {
            return key.clone();
        }
    }
    "(root)".to_owned()
}

/// Reads the pods file: pods, claims, ControllerRevisions and nodes.
fn read_owned(path: &str) -> Result<Owned, CliError> {
    let mut owned = Owned::default();
    for (index, object) in read_objects(&[path.to_owned()])?.into_iter().enumerate() {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("Pod");
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let at = format!("{path}: object {index} ({kind} {name:?})");
        match kind {
            "Pod" => owned.pods.push(decode(&at, &object)?),
            "PersistentVolumeClaim" => owned.claims.push(decode(&at, &object)?),
            "Node" => owned.nodes.push(decode(&at, &object)?),
            "ControllerRevision" => {
                let data = object
                    .get("data")
                    .cloned()
                    .filter(|data| !data.is_null())
                    .ok_or_else(|| invalid(&at, "data: missing"))?;
                let annotations = match object.pointer("/metadata/annotations") {
                    None | Some(Value::Null) => None,
                    Some(value) => {
                        Some(serde_json::from_value(value.clone()).map_err(|error| {
                            invalid(&at, format!("metadata.annotations: {error}"))
                        })?)
                    }
                };
                owned.revisions.push(KnownRevision {
                    name,
                    data,
                    annotations,
                });
            }
            other => {
                return Err(invalid(
                    &at,
                    format!(
                        "kind: expected Pod, PersistentVolumeClaim, ControllerRevision or Node, found {other:?}"
                    ),
                ));
            }
        }
    }
    Ok(owned)
}

/// The update revision's name as the controller computes it: the defaulted template's revision hash (with
/// `status.collisionCount`) under the CloneSet's name.
fn template_revision(cloneset: &v1beta1::CloneSet, path: &str) -> Result<String, CliError> {
    let mut template: PodTemplateSpec = cloneset.spec.template.clone();
    apply_pod_spec_defaults(
        template.spec.get_or_insert_with(Default::default),
        PodDefaultsOptions::default(),
    );
    let data = revision::template_data_value(&template)
        .map_err(|error| invalid(path, format!("spec.template: {error}")))?;
    let collisions = cloneset
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let hash = revision::hash(
        go_json::to_string_sorted(&data).as_bytes(),
        Some(collisions),
    );
    let name = cloneset.metadata.name.as_deref().unwrap_or("");
    Ok(revision::name(name, &hash))
}

/// A plan with what it needs to name things.
struct PlanView<'a> {
    cloneset: &'a v1beta1::CloneSet,
    owned: &'a Owned,
    plan: &'a Plan,
}

impl PlanView<'_> {
    fn key(&self) -> String {
        format!(
            "{}/{}",
            self.cloneset
                .metadata
                .namespace
                .as_deref()
                .unwrap_or("default"),
            self.cloneset.metadata.name.as_deref().unwrap_or("")
        )
    }

    /// The pod an action is about: the pod acted on or created, or the pod a claim belongs to.
    fn pod_of(&self, action: &Action) -> String {
        let claim_pod = |claim: &PersistentVolumeClaim| {
            let id = claim
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(kruise_api::keys::cloneset::INSTANCE_ID_LABEL))
                .map_or("", String::as_str);
            format!(
                "{}-{id}",
                self.cloneset.metadata.name.as_deref().unwrap_or("")
            )
        };
        match &action.kind {
            ActionKind::CreateClaim { claim } => claim_pod(claim),
            ActionKind::Specific(SpecificKind::DeleteClaim { claim }) => self
                .owned
                .claims
                .get(*claim)
                .map(claim_pod)
                .unwrap_or_default(),
            _ => action.object_name(&self.owned.pods, &[]).to_owned(),
        }
    }

    fn action_json(&self, action: &Action) -> Value {
        let mut value = serde_json::Map::new();
        value.insert("kind".into(), json!(action.kind.name()));
        value.insert("pod".into(), json!(self.pod_of(action)));
        value.insert("rule".into(), json!(action.rule.id()));
        value.insert("reason".into(), json!(action.reason()));
        match &action.kind {
            ActionKind::CreateClaim { .. }
            | ActionKind::Specific(SpecificKind::DeleteClaim { .. }) => {
                let claim = action.object_name(&self.owned.pods, &self.owned.claims);
                value.insert("claim".into(), json!(claim));
            }
            ActionKind::CreatePod { pod, batch, .. } => {
                value.insert("batch".into(), json!(batch));
                let revision = pod.metadata.labels.as_ref().and_then(|labels| {
                    labels.get(kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL)
                });
                value.insert("revision".into(), json!(revision));
            }
            ActionKind::Lifecycle { transition, .. } => {
                let name = |state: &Option<kruise_api::lifecycle::LifecycleStateType>| {
                    state.as_ref().map(|state| state.as_str().to_owned())
                };
                value.insert(
                    "lifecycle".into(),
                    json!({"from": name(&transition.from), "to": name(&transition.to)}),
                );
            }
            _ => {}
        }
        Value::Object(value)
    }

    fn json(&self) -> Value {
        let diff: serde_json::Map<String, Value> = self
            .plan
            .diff
            .fields()
            .iter()
            .map(|(name, value)| ((*name).to_owned(), json!(value)))
            .collect();
        json!({
            "cloneset": self.key(),
            "step": self.plan.step.name(),
            "diff": diff,
            "actions": self.plan.actions.iter().map(|a| self.action_json(a)).collect::<Vec<_>>(),
            "status": self.plan.status,
            "requeueAfterSeconds": self.plan.requeue_after.map(|d| d.as_secs_f64()),
            "invalid": self.plan.invalid.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "error": self.plan.stopped.as_ref().map(ToString::to_string),
            "skipped": self.plan.skipped.iter().map(|skipped| json!({
                "pod": self.owned.pods.get(skipped.pod).and_then(|pod| pod.metadata.name.clone()),
                "error": skipped.error.to_string(),
            })).collect::<Vec<_>>(),
        })
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let plan = self.plan;
        writeln!(out, "CloneSet {}: step {}", self.key(), plan.step.name())?;
        writeln!(out, "diff: {}", plan.diff)?;
        for invalid in &plan.invalid {
            writeln!(out, "invalid: {invalid}")?;
        }
        if plan.actions.is_empty() {
            writeln!(out, "actions: none")?;
        } else {
            writeln!(out, "actions:")?;
        }
        for action in &plan.actions {
            let mut object = action
                .object_name(&self.owned.pods, &self.owned.claims)
                .to_owned();
            if let ActionKind::CreatePod { batch, .. } = &action.kind {
                object = format!("{object} (batch {batch})");
            }
            writeln!(
                out,
                "  {} {}: {}",
                action.kind.name(),
                object,
                action.reason()
            )?;
        }
        if let Some(error) = &plan.stopped {
            writeln!(out, "stopped: {error}")?;
        }
        for skipped in &plan.skipped {
            let name = self
                .owned
                .pods
                .get(skipped.pod)
                .and_then(|pod| pod.metadata.name.as_deref())
                .unwrap_or("?");
            writeln!(out, "skipped: pod {name}: {}", skipped.error)?;
        }
        let s = &plan.status;
        writeln!(
            out,
            "status: replicas {}, ready {}, available {}, updated {}, updatedReady {}, updatedAvailable {}, expectedUpdated {}",
            s.replicas,
            s.ready_replicas,
            s.available_replicas,
            s.updated_replicas,
            s.updated_ready_replicas,
            s.updated_available_replicas,
            s.expected_updated_replicas
        )?;
        writeln!(
            out,
            "revisions: current {}, update {}",
            s.current_revision, s.update_revision
        )?;
        for condition in &s.conditions {
            writeln!(
                out,
                "condition {:?}: {} {} {}",
                condition.type_, condition.status, condition.reason, condition.message
            )?;
        }
        if let Some(after) = plan.requeue_after {
            writeln!(out, "requeue after: {}s", after.as_secs_f64())?;
        }
        Ok(())
    }
}
