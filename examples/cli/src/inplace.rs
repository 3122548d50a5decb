//! `kruise inplace diff`: whether a pod at one revision can move to another in place, and what the in-place
//! update would change.
//!
//! Inputs are ControllerRevision objects (as `kubectl get controllerrevision -o yaml` prints them), or pod
//! templates: a `PodTemplate`, any workload with `spec.template` (CloneSet, Advanced StatefulSet, ...), or a
//! bare pod template (`{metadata, spec}`). Templates get the pod-template defaults the Kruise webhook applies,
//! and their revision data is built as CloneSet builds it (the new revision is named `<workload>-<hash>`, or
//! just the hash for a bare template).

use std::io::Write;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_api::defaults::pod::{PodDefaultsOptions, apply_pod_spec_defaults};
use kruise_inplace::calculate::RevisionRef;
use kruise_inplace::{FeatureGates, UpdateOptions, UpdateSpec, calculate_data, go_json, revision};
use serde_json::Value;

use super::CliError;
use super::input::read_objects;

/// Output format of `kruise inplace diff`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// The update spec as YAML (upstream field names) with the metadata patch decoded in a comment, or
    /// `recreate: <reason>`.
    #[default]
    Text,
    /// The update spec as the exact JSON upstream stores in `apps.kruise.io/inplace-update-grace`, or `null`
    /// (the reason goes to standard error).
    Json,
}

/// Arguments of `kruise inplace diff`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DiffArgs {
    /// The revision (or pod template) the pod is at: a YAML/JSON file, or `-` for standard input.
    #[arg(long, value_name = "FILE")]
    pub old: String,
    /// The revision (or pod template) to move the pod to: a YAML/JSON file, or `-` for standard input.
    #[arg(long, value_name = "FILE")]
    pub new: String,
    /// Skip the volume-claim-template hash rule (what CloneSet does for `InPlaceOnly`).
    #[arg(long)]
    pub ignore_vct_hash_diff: bool,
    /// Upstream feature gates, `Name=true|false,...` (InPlaceUpdateEnvFromMetadata,
    /// InPlaceWorkloadVerticalScaling, RecreatePodWhenChangeVCTInCloneSetGate).
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: DiffFormat,
}

/// Subcommands of `kruise inplace`.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum InplaceCommand {
    /// Print the in-place update spec between two revisions, or why the pod must be recreated.
    Diff(DiffArgs),
}

/// Runs a `kruise inplace` subcommand.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn run(
    command: &InplaceCommand,
    out: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        InplaceCommand::Diff(args) => diff(args, out, stderr),
    }
}

/// A revision read from the command line.
struct Input {
    name: String,
    data: Value,
    annotations: Option<std::collections::BTreeMap<String, String>>,
}

/// `kruise inplace diff`.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn diff(
    args: &DiffArgs,
    out: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<(), CliError> {
    let gates = FeatureGates::parse(&args.feature_gates)
        .map_err(|error| CliError::Invalid(format!("--feature-gates: {error}")))?;
    if args.old == "-" && args.new == "-" {
        return Err(CliError::Invalid(
            "--old and --new cannot both read standard input".to_owned(),
        ));
    }
    let old = read_input(&args.old, "old")?;
    let new = read_input(&args.new, "new")?;
    let options = UpdateOptions {
        gates,
        ignore_volume_claim_templates_hash_diff: args.ignore_vct_hash_diff,
        ..UpdateOptions::default()
    };
    fn reference(input: &Input) -> RevisionRef<'_> {
        RevisionRef {
            name: &input.name,
            data: Some(&input.data),
            annotations: input.annotations.as_ref(),
        }
    }
    match (
        calculate_data(reference(&old), reference(&new), &options),
        args.output,
    ) {
        (Ok(spec), DiffFormat::Json) => writeln!(out, "{}", spec.to_json())?,
        (Ok(spec), DiffFormat::Text) => write_text(&spec, out)?,
        (Err(reason), DiffFormat::Json) => {
            writeln!(out, "null")?;
            writeln!(stderr, "recreate: {reason}")?;
        }
        (Err(reason), DiffFormat::Text) => writeln!(out, "recreate: {reason}")?,
    }
    Ok(())
}

fn write_text(spec: &UpdateSpec, out: &mut impl Write) -> Result<(), CliError> {
    let yaml = serde_saphyr::to_string(spec).map_err(std::io::Error::other)?;
    out.write_all(yaml.as_bytes())?;
    if let Some(patch) = &spec.meta_data_patch {
        writeln!(
            out,
            "# metaDataPatch (decoded): {}",
            String::from_utf8_lossy(patch)
        )?;
    }
    Ok(())
}

fn read_input(path: &str, flag: &str) -> Result<Input, CliError> {
    let mut objects = read_objects(&[path.to_owned()])?;
    if objects.len() != 1 {
        return Err(CliError::Invalid(format!(
            "--{flag} {path}: expected one object, found {}",
            objects.len()
        )));
    }
    let object = objects.pop().unwrap_or(Value::Null);
    let invalid = |message: String| CliError::Invalid(format!("--{flag} {path}: {message}"));
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if kind == "ControllerRevision" {
        let data = object
            .get("data")
            .cloned()
            .filter(|data| !data.is_null())
            .ok_or_else(|| invalid("the ControllerRevision has no data".to_owned()))?;
        let annotations = match object.pointer("/metadata/annotations") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                serde_json::from_value(value.clone())
                    .map_err(|error| invalid(format!("metadata.annotations: {error}")))?,
            ),
        };
        return Ok(Input {
            name,
            data,
            annotations,
        });
    }
    let (template, parent) = if kind == "PodTemplate" {
        (object.get("template").cloned(), name)
    } else if let Some(template) = object.pointer("/spec/template") {
        (Some(template.clone()), name)
    } else if object.pointer("/spec/containers").is_some() {
        (Some(object.clone()), String::new())
    } else {
        return Err(invalid(
            "expected a ControllerRevision, a PodTemplate, a workload with spec.template, or a pod template"
                .to_owned(),
        ));
    };
    let mut template: PodTemplateSpec = serde_json::from_value(template.unwrap_or(Value::Null))
        .map_err(|error| invalid(format!("pod template: {error}")))?;
    apply_pod_spec_defaults(
        template.spec.get_or_insert_with(Default::default),
        PodDefaultsOptions::default(),
    );
    let data =
        revision::template_data_value(&template).map_err(|error| invalid(error.to_string()))?;
    let hash = revision::hash(go_json::to_string_sorted(&data).as_bytes(), Some(0));
    let name = if parent.is_empty() {
        hash
    } else {
        revision::name(&parent, &hash)
    };
    Ok(Input {
        name,
        data,
        annotations: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn run_diff(args: &DiffArgs) -> Result<(String, String), CliError> {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        diff(args, &mut out, &mut err)?;
        Ok((
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        ))
    }

    const CLONESET: &str = "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: cs-demo}\nspec:\n  template:\n    metadata: {labels: {app: cs}}\n    spec: {containers: [{name: nginx, image: 'IMAGE', imagePullPolicy: IfNotPresent, ports: [{containerPort: 80}]}]}\n";

    #[test]
    fn workloads_diff_like_the_seed_tutorial() {
        let dir = tempfile::tempdir().unwrap();
        let old = write(&dir, "v1.yaml", &CLONESET.replace("IMAGE", "nginx:alpine"));
        let new = write(&dir, "v4.yaml", &CLONESET.replace("IMAGE", "nginx:1.7.9"));
        let args = DiffArgs {
            old,
            new,
            output: DiffFormat::Json,
            ..DiffArgs::default()
        };
        let (out, err) = run_diff(&args).unwrap();
        assert_eq!(
            out,
            "{\"revision\":\"cs-demo-7cb9c88699\",\"containerImages\":{\"nginx\":\"nginx:1.7.9\"}}\n"
        );
        assert!(err.is_empty());
        let (text, _) = run_diff(&DiffArgs {
            output: DiffFormat::Text,
            ..args
        })
        .unwrap();
        assert_eq!(
            text,
            "revision: cs-demo-7cb9c88699\ncontainerImages:\n  nginx: nginx:1.7.9\n"
        );
    }

    #[test]
    fn controller_revisions_and_recreate() {
        let dir = tempfile::tempdir().unwrap();
        let revision = |name: &str, extra: &str| {
            format!(
                "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {{name: {name}}}\nrevision: 1\ndata:\n  spec:\n    template:\n      $patch: replace\n      metadata: {{creationTimestamp: null, labels: {{app: x, {extra}}}}}\n      spec: {{containers: [{{name: c, image: a, env: [{{name: E, valueFrom: {{fieldRef: {{fieldPath: \"metadata.labels['v']\"}}}}}}]}}]}}\n"
            )
        };
        let old = write(&dir, "old.yaml", &revision("r-1", "v: '1'"));
        let new = write(&dir, "new.yaml", &revision("r-2", "v: '2', extra: 'y'"));
        let (text, _) = run_diff(&DiffArgs {
            old: old.clone(),
            new: new.clone(),
            ..DiffArgs::default()
        })
        .unwrap();
        assert_eq!(
            text,
            "revision: r-2\ncontainerRefMetadata:\n  c:\n    creationTimestamp: null\n    labels:\n      v: \"2\"\nmetaDataPatch: eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiZXh0cmEiOiJ5In19fQ==\nupdateEnvFromMetadata: true\n# metaDataPatch (decoded): {\"metadata\":{\"labels\":{\"extra\":\"y\"}}}\n"
        );
        // With the gate off the label is only metadata.
        let (out, _) = run_diff(&DiffArgs {
            old: old.clone(),
            new: new.clone(),
            feature_gates: "InPlaceUpdateEnvFromMetadata=false".into(),
            output: DiffFormat::Json,
            ..DiffArgs::default()
        })
        .unwrap();
        assert!(
            out.starts_with("{\"revision\":\"r-2\",\"metaDataPatch\":"),
            "{out}"
        );

        let changed = write(
            &dir,
            "env.yaml",
            &revision("r-3", "v: '1'").replace("name: E", "name: F"),
        );
        let (out, err) = run_diff(&DiffArgs {
            old: old.clone(),
            new: changed.clone(),
            output: DiffFormat::Json,
            ..DiffArgs::default()
        })
        .unwrap();
        assert_eq!(out, "null\n");
        assert_eq!(
            err,
            "recreate: replace /spec/containers/0/env/0/name: only replacing a container's image can be done in place\n"
        );
        let (text, _) = run_diff(&DiffArgs {
            old,
            new: changed,
            ..DiffArgs::default()
        })
        .unwrap();
        assert!(text.starts_with("recreate: replace /spec/containers/0/env/0/name"));
    }

    #[test]
    fn invalid_input_is_exit_code_two() {
        let dir = tempfile::tempdir().unwrap();
        let good = write(&dir, "good.yaml", &CLONESET.replace("IMAGE", "a"));
        let cases = [
            (
                write(&dir, "svc.yaml", "kind: Service\nmetadata: {name: s}\n"),
                "expected a ControllerRevision",
            ),
            (
                write(
                    &dir,
                    "two.yaml",
                    "kind: PodTemplate\n---\nkind: PodTemplate\n",
                ),
                "expected one object, found 2",
            ),
            (
                write(
                    &dir,
                    "bad.yaml",
                    "spec: {containers: [{name: c, resources: {limits: {cpu: lots}}}]}\n",
                ),
                "pod template",
            ),
            (
                write(
                    &dir,
                    "cr.yaml",
                    "kind: ControllerRevision\nmetadata: {name: r}\n",
                ),
                "has no data",
            ),
            ("/no/such/file.yaml".to_owned(), "/no/such/file.yaml"),
        ];
        for (path, message) in cases {
            let error = run_diff(&DiffArgs {
                old: good.clone(),
                new: path.clone(),
                ..DiffArgs::default()
            })
            .unwrap_err();
            assert_eq!(error.exit_code(), 2, "{path}");
            assert!(error.to_string().contains(message), "{path}: {error}");
        }
        let error = run_diff(&DiffArgs {
            old: good.clone(),
            new: good.clone(),
            feature_gates: "Nope=true".into(),
            ..DiffArgs::default()
        })
        .unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(
            error
                .to_string()
                .starts_with("--feature-gates: unknown feature gate \"Nope\"")
        );
    }
}
