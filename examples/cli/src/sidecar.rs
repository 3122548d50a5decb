//! `kruise sidecar`: what the SidecarSet webhook does to a pod (`inject`), and the hashes of a SidecarSet
//! (`hash`).
//!
//! SidecarSets may be `apps.kruise.io/v1alpha1` or `v1beta1`. `inject` treats them as stored in a cluster:
//! upstream's defaults applied and, when missing, the hash annotations the SidecarSet webhook writes. `hash`
//! hashes the object as given (or defaulted with `--apply-defaults`).

use std::collections::BTreeMap;
use std::io::Write;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::ApplyDefaults;
use kruise_sidecar::{InjectRequest, Options, SeededChance};
use serde_json::Value;

use super::CliError;
use super::input::read_objects;

/// Output format of `kruise sidecar inject`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum InjectFormat {
    /// The pod after injection, as YAML.
    #[default]
    Yaml,
    /// `{"sidecarSets": [...], "patch": [RFC 6902 ops], "pod": {...}}`.
    Json,
}

/// Arguments of `kruise sidecar inject`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct InjectArgs {
    /// SidecarSet files (YAML/JSON, one object, a stream or a List; `-` for standard input).
    #[arg(short = 'f', long = "filename", value_name = "SIDECARSET", required = true, num_args = 1..)]
    pub sidecarsets: Vec<String>,
    /// The pod being admitted.
    #[arg(long, value_name = "POD")]
    pub pod: String,
    /// The pod before the change: makes the request an UPDATE (upstream injects nothing on update).
    #[arg(long, value_name = "POD")]
    pub old_pod: Option<String>,
    /// ControllerRevisions of the SidecarSets (for `injectionStrategy.revision`).
    #[arg(long, value_name = "REVISIONS")]
    pub revisions: Option<String>,
    /// Labels of the pod's Namespace, `k=v,...`.
    #[arg(long, value_name = "LABELS", default_value = "")]
    pub namespace_labels: String,
    /// The time written into the annotations (RFC 3339; default: now).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Seed of the draw the `Partial` revision policy makes (default: from the time).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Upstream feature gates, `Name=true|false,...` (EnableSortSidecarContainerByName,
    /// SidecarSetPatchPodMetadataDefaultsAllowed).
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: InjectFormat,
}

/// Output format of `kruise sidecar hash`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HashFormat {
    /// `<name> <hash> <hash-without-image>`, one line per SidecarSet.
    #[default]
    Text,
    /// `{"name": ..., "hash": ..., "hashWithoutImage": ...}`, one line per SidecarSet.
    Json,
}

/// Arguments of `kruise sidecar hash`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct HashArgs {
    /// SidecarSet files (`-` for standard input).
    #[arg(short = 'f', long = "filename", value_name = "SIDECARSET", required = true, num_args = 1..)]
    pub sidecarsets: Vec<String>,
    /// Apply upstream's defaults first (what the SidecarSet webhook hashes).
    #[arg(long)]
    pub apply_defaults: bool,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: HashFormat,
}

/// Subcommands of `kruise sidecar`.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum SidecarCommand {
    /// Inject SidecarSets into a pod as the pod webhook would (CREATE, or UPDATE with --old-pod).
    Inject(InjectArgs),
    /// Print the hash and hash-without-image of SidecarSets.
    Hash(HashArgs),
}

/// Runs a `kruise sidecar` subcommand; `now` is used when `--now` is not given.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn run(command: &SidecarCommand, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    match command {
        SidecarCommand::Inject(args) => inject(args, now, out),
        SidecarCommand::Hash(args) => hash(args, out),
    }
}

/// Reads SidecarSets of either version as hub objects.
fn read_sidecarsets(
    paths: &[String],
    apply_defaults: bool,
) -> Result<Vec<v1beta1::SidecarSet>, CliError> {
    let mut sets = Vec::new();
    for path in paths {
        for (index, object) in read_objects(std::slice::from_ref(path))?
            .into_iter()
            .enumerate()
        {
            let invalid =
                |message: String| CliError::Invalid(format!("{path}: object {index}: {message}"));
            let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
            let api_version = object
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            if kind != "SidecarSet" {
                return Err(invalid(format!("kind {kind:?} is not SidecarSet")));
            }
            let mut set = match api_version {
                "apps.kruise.io/v1alpha1" => {
                    let mut alpha: v1alpha1::SidecarSet = serde_json::from_value(object)
                        .map_err(|error| invalid(error.to_string()))?;
                    if apply_defaults {
                        alpha.apply_defaults();
                    }
                    v1beta1::SidecarSet::from(&alpha)
                }
                "apps.kruise.io/v1beta1" => {
                    let mut beta: v1beta1::SidecarSet = serde_json::from_value(object)
                        .map_err(|error| invalid(error.to_string()))?;
                    if apply_defaults {
                        beta.apply_defaults();
                    }
                    beta
                }
                other => {
                    return Err(invalid(format!(
                        "apiVersion {other:?} is not apps.kruise.io/v1alpha1 or v1beta1"
                    )));
                }
            };
            if set.metadata.name.as_deref().unwrap_or("").is_empty() {
                return Err(invalid("metadata.name is empty".to_owned()));
            }
            set.metadata.namespace = None;
            sets.push(set);
        }
    }
    Ok(sets)
}

fn read_pod(path: &str, flag: &str) -> Result<Pod, CliError> {
    let mut objects = read_objects(&[path.to_owned()])?;
    if objects.len() != 1 {
        return Err(CliError::Invalid(format!(
            "--{flag} {path}: expected one Pod, found {} objects",
            objects.len()
        )));
    }
    let object = objects.pop().unwrap_or(Value::Null);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("Pod");
    if kind != "Pod" {
        return Err(CliError::Invalid(format!(
            "--{flag} {path}: kind {kind:?} is not Pod"
        )));
    }
    serde_json::from_value(object)
        .map_err(|error| CliError::Invalid(format!("--{flag} {path}: {error}")))
}

fn parse_labels(text: &str) -> Result<Option<BTreeMap<String, String>>, CliError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let mut labels = BTreeMap::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('=').ok_or_else(|| {
            CliError::Invalid(format!("--namespace-labels: {entry:?} is not key=value"))
        })?;
        kruise_api::label_selector::validate_key(key.trim())
            .map_err(|error| CliError::Invalid(format!("--namespace-labels: {error}")))?;
        labels.insert(key.trim().to_owned(), value.trim().to_owned());
    }
    Ok(Some(labels))
}

/// `kruise sidecar inject`.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn inject(args: &InjectArgs, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    let options = Options::default()
        .with_feature_gates(&args.feature_gates)
        .map_err(|error| CliError::Invalid(format!("--feature-gates: {error}")))?;
    let now = match &args.now {
        Some(text) => text
            .parse::<Timestamp>()
            .map_err(|error| CliError::Invalid(format!("--now {text:?}: {error}")))?,
        None => now,
    };
    let namespace_labels = parse_labels(&args.namespace_labels)?;
    let mut sets = read_sidecarsets(&args.sidecarsets, true)?;
    for set in &mut sets {
        let hashes = kruise_sidecar::hash::recorded_or_computed(set)
            .map_err(|error| CliError::Invalid(error.to_string()))?;
        let annotations = set.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(
            kruise_api::keys::sidecarset::HASH_ANNOTATION.to_owned(),
            hashes.hash,
        );
        annotations.insert(
            kruise_api::keys::sidecarset::HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(),
            hashes.without_image,
        );
    }
    let pod = read_pod(&args.pod, "pod")?;
    let old_pod = args
        .old_pod
        .as_deref()
        .map(|path| read_pod(path, "old-pod"))
        .transpose()?;
    let revisions: Vec<ControllerRevision> = match &args.revisions {
        None => Vec::new(),
        Some(path) => read_objects(std::slice::from_ref(path))?
            .into_iter()
            .enumerate()
            .map(|(index, object)| {
                serde_json::from_value(object).map_err(|error| {
                    CliError::Invalid(format!("--revisions {path}: object {index}: {error}"))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let seed = args
        .seed
        .unwrap_or_else(|| u64::try_from(now.as_nanosecond()).unwrap_or(0));
    let request = InjectRequest {
        pod: &pod,
        old_pod: old_pod.as_ref(),
        sidecarsets: &sets,
        revisions: &revisions,
        namespace_labels: namespace_labels.as_ref(),
        now,
        options,
    };
    let injection = kruise_sidecar::inject(&request, &mut SeededChance::new(seed))
        .map_err(|error| CliError::Invalid(error.to_string()))?;
    match args.output {
        InjectFormat::Yaml => {
            let text = serde_saphyr::to_string(&injection.pod).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())?;
        }
        InjectFormat::Json => {
            let value = serde_json::json!({
                "sidecarSets": injection.sidecarsets,
                "patch": injection.patch,
                "pod": injection.pod,
            });
            serde_json::to_writer_pretty(&mut *out, &value).map_err(std::io::Error::other)?;
            writeln!(out)?;
        }
    }
    Ok(())
}

/// `kruise sidecar hash`.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn hash(args: &HashArgs, out: &mut impl Write) -> Result<(), CliError> {
    let sets = read_sidecarsets(&args.sidecarsets, args.apply_defaults)?;
    for set in &sets {
        let hashes = kruise_sidecar::hash::compute(set)
            .map_err(|error| CliError::Invalid(error.to_string()))?;
        let name = set.metadata.name.as_deref().unwrap_or("");
        match args.output {
            HashFormat::Text => writeln!(out, "{name} {} {}", hashes.hash, hashes.without_image)?,
            HashFormat::Json => writeln!(
                out,
                "{}",
                serde_json::json!({"name": name, "hash": hashes.hash, "hashWithoutImage": hashes.without_image})
            )?,
        }
    }
    Ok(())
}
