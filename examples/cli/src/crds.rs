//! `kruise crds`: every OpenKruise CustomResourceDefinition, ready for `kubectl apply -f -`.

use std::io::Write;

use kruise_api::crd::{ConversionStrategy, CrdOptions, VersionSelection};

use super::CliError;
use super::output::{Format, write_objects};

/// Which versions the printed CRDs serve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ApiVersions {
    /// Upstream v1.9: both versions served, v1beta1 stored.
    #[default]
    All,
    /// Upstream v1.8: v1alpha1 served and stored (Advanced StatefulSet: both, v1beta1 stored).
    V1alpha1,
    /// v1beta1 only (v1alpha1-only kinds stay v1alpha1).
    V1beta1,
}

/// Arguments of `kruise crds`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct CrdsArgs {
    /// Which versions the CRDs serve.
    #[arg(long, value_enum, default_value_t)]
    pub api_version: ApiVersions,
    /// Convert between versions through this webhook Service (`NAMESPACE/NAME`) instead of strategy None.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub webhook_service: Option<String>,
    /// Path of the conversion endpoint on the webhook Service.
    #[arg(long, default_value = "/convert", requires = "webhook_service")]
    pub webhook_path: String,
    /// Port of the webhook Service.
    #[arg(long, default_value_t = 443, requires = "webhook_service")]
    pub webhook_port: i32,
    /// PEM file with the CA that signed the webhook's serving certificate.
    #[arg(long, value_name = "FILE", requires = "webhook_service")]
    pub ca_bundle: Option<String>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: Format,
}

/// Prints the CRDs; a note goes to `stderr` when two-version CRDs get no conversion webhook.
///
/// # Errors
/// Invalid flags (exit code 2) or failing output.
pub fn run(args: &CrdsArgs, out: &mut impl Write, stderr: &mut impl Write) -> Result<(), CliError> {
    let versions = match args.api_version {
        ApiVersions::All => VersionSelection::All,
        ApiVersions::V1alpha1 => VersionSelection::V1alpha1,
        ApiVersions::V1beta1 => VersionSelection::V1beta1,
    };
    let conversion = match &args.webhook_service {
        None => ConversionStrategy::None,
        Some(service) => {
            let (namespace, name) = service
                .split_once('/')
                .filter(|(namespace, name)| {
                    !namespace.is_empty() && !name.is_empty() && !name.contains('/')
                })
                .ok_or_else(|| {
                    CliError::Invalid(format!(
                        "--webhook-service {service:?}: expected NAMESPACE/NAME"
                    ))
                })?;
            let ca_bundle = match &args.ca_bundle {
                Some(path) => std::fs::read(path)
                    .map_err(|error| CliError::Invalid(format!("--ca-bundle {path}: {error}")))?,
                None => Vec::new(),
            };
            ConversionStrategy::service(
                namespace,
                name,
                &args.webhook_path,
                args.webhook_port,
                ca_bundle,
            )
        }
    };
    let crds = kruise_api::crd::all(&CrdOptions {
        versions,
        conversion: conversion.clone(),
    });
    if conversion == ConversionStrategy::None && crds.iter().any(|crd| crd.spec.versions.len() > 1)
    {
        writeln!(
            stderr,
            "note: CRDs serving two versions use conversion strategy None; objects are only correct in the version \
             they were written in. Pass --webhook-service to convert through kruise-manager."
        )?;
    }
    write_objects(&crds, args.output, out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_to_strings(args: &CrdsArgs) -> Result<(String, String), CliError> {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        run(args, &mut out, &mut err)?;
        Ok((
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        ))
    }

    #[test]
    fn yaml_stream_of_every_crd() {
        let (out, note) = run_to_strings(&CrdsArgs::default()).unwrap();
        let documents = super::super::input::parse_objects(&out, "out").unwrap();
        assert_eq!(
            documents.len(),
            kruise_api::crd::all(&CrdOptions::default()).len()
        );
        assert!(
            documents
                .iter()
                .all(|doc| doc["kind"] == "CustomResourceDefinition")
        );
        assert!(
            documents
                .iter()
                .any(|doc| doc["metadata"]["name"] == "clonesets.apps.kruise.io")
        );
        assert!(note.contains("conversion strategy None"));
    }

    #[test]
    fn webhook_conversion() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, "PEM").unwrap();
        let args = CrdsArgs {
            webhook_service: Some("kruise-system/kruise-webhook".into()),
            webhook_path: "/convert".into(),
            webhook_port: 9443,
            ca_bundle: Some(ca.to_string_lossy().into_owned()),
            output: Format::Json,
            ..CrdsArgs::default()
        };
        let (out, note) = run_to_strings(&args).unwrap();
        assert!(note.is_empty());
        let list: serde_json::Value = serde_json::from_str(&out).unwrap();
        let cloneset = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|crd| crd["spec"]["names"]["kind"] == "CloneSet")
            .unwrap();
        let conversion = &cloneset["spec"]["conversion"];
        assert_eq!(conversion["strategy"], "Webhook");
        assert_eq!(
            conversion["webhook"]["clientConfig"]["service"]["port"],
            9443
        );
        assert_eq!(conversion["webhook"]["clientConfig"]["caBundle"], "UEVN");
    }

    #[test]
    fn bad_flags_are_invalid_input() {
        let error = run_to_strings(&CrdsArgs {
            webhook_service: Some("no-slash".into()),
            ..CrdsArgs::default()
        })
        .unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert_eq!(
            error.to_string(),
            "--webhook-service \"no-slash\": expected NAMESPACE/NAME"
        );
        let error = run_to_strings(&CrdsArgs {
            webhook_service: Some("a/b".into()),
            ca_bundle: Some("/no/such/ca.pem".into()),
            ..CrdsArgs::default()
        })
        .unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(
            error
                .to_string()
                .starts_with("--ca-bundle /no/such/ca.pem: ")
        );
    }
}
