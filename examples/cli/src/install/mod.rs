//! `kruise install`: the manifests that install kruise-manager and kruise-daemon in a cluster, as one YAML
//! stream for `kubectl apply -f -` (or one file per part with `--output-dir`), built from the API types.
//! Its flags mirror the values of OpenKruise's Helm chart. The files of `examples/manifests/` are its
//! output with `--resource-distribution` and otherwise default flags.
//!
//! ```
//! use kruise_cli::install::{InstallArgs, manifest_files};
//!
//! let settings = InstallArgs::default().settings().unwrap();
//! let files = manifest_files(&settings).unwrap();
//! assert_eq!(files[0].name, "namespace.yaml");
//! assert_eq!(files[0].documents[0].value["metadata"]["name"], "kruise-system");
//! ```

pub mod container_parts;
pub mod daemon;
pub mod deployment;
pub mod document;
pub mod feature_gates;
pub mod manager_rbac;
pub mod namespaces;
pub mod network_policy;
pub mod object_meta;
pub mod policy_rule;
pub mod quantity;
pub mod resource_distribution;
pub mod role_grant;
pub mod service;
pub mod settings;
pub mod webhook_configurations;
pub mod webhook_entry;
pub mod workload_webhooks;

use std::io::Write;
use std::path::Path;

use kruise_api::crd::{CrdOptions, all};
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;

use self::document::{Document, ManifestFile, write_stream};
use self::feature_gates::webhook_gates;
use self::quantity::quantity_value;
use self::settings::{DaemonSocket, InstallSettings, ManagerResources, WebhookFailurePolicy};
use super::CliError;

/// Arguments of `kruise install` (with the Helm chart's value each one mirrors).
#[derive(Clone, Debug, clap::Args)]
pub struct InstallArgs {
    /// The namespace of kruise-manager and kruise-daemon (Helm: installation.namespace).
    #[arg(long, default_value = settings::DEFAULT_NAMESPACE)]
    pub namespace: String,
    /// kruise-manager's replicas; one leads, all serve the webhook (Helm: manager.replicas).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(i32).range(1..))]
    pub replicas: i32,
    /// kruise-manager's `--feature-gates`, `Name=true|false,...` (Helm: featureGates).
    #[arg(long, default_value = "")]
    pub feature_gates: String,
    /// kruise-manager's image (Helm: manager.image.repository, manager.image.tag).
    #[arg(long)]
    pub manager_image: Option<String>,
    /// kruise-daemon's image (Helm: none, upstream's daemon runs the manager's image).
    #[arg(long)]
    pub daemon_image: Option<String>,
    /// kruise-manager's CPU request (Helm: manager.resources.requests.cpu).
    #[arg(long, default_value = "100m")]
    pub manager_cpu: String,
    /// kruise-manager's memory request (Helm: manager.resources.requests.memory).
    #[arg(long, default_value = "128Mi")]
    pub manager_memory: String,
    /// kruise-manager's memory limit (Helm: manager.resources.limits.memory).
    #[arg(long, default_value = "512Mi")]
    pub manager_memory_limit: String,
    /// What kube-apiserver does when a webhook cannot be reached, for every webhook
    /// (Helm: webhookConfiguration.failurePolicy.pods).
    #[arg(long, value_enum, ignore_case = true, default_value_t)]
    pub webhook_failure_policy: WebhookFailurePolicy,
    /// The host directory of the CRI socket, mounted into kruise-daemon (Helm: daemon.socketLocation).
    #[arg(long, default_value = "/run/containerd")]
    pub daemon_socket_location: String,
    /// The CRI socket's file name in that directory, `crio.sock` for CRI-O (Helm: daemon.socketFile).
    #[arg(long, default_value = "containerd.sock")]
    pub daemon_socket_name: String,
    /// Leave out kruise-daemon: no ContainerRecreateRequests or image pulls on nodes (Helm:
    /// featureGates KruiseDaemon=false).
    #[arg(long)]
    pub no_daemon: bool,
    /// Add the RBAC of the ResourceDistribution controller (with `--feature-gates
    /// ResourceDistributionGate=true`).
    #[arg(long)]
    pub resource_distribution: bool,
    /// Add the CustomResourceDefinitions; kruise-manager also installs them at start (Helm: crds.managed).
    #[arg(long)]
    pub crds: bool,
    /// Write one file per part (`namespace.yaml`, `rbac.yaml`, ...) into this directory instead of one
    /// stream on standard output.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<String>,
}

impl Default for InstallArgs {
    fn default() -> Self {
        let defaults = InstallSettings::default();
        Self {
            namespace: defaults.namespace,
            replicas: defaults.replicas,
            feature_gates: defaults.feature_gates,
            manager_image: None,
            daemon_image: None,
            manager_cpu: defaults.manager_resources.cpu_request,
            manager_memory: defaults.manager_resources.memory_request,
            manager_memory_limit: defaults.manager_resources.memory_limit,
            webhook_failure_policy: defaults.webhook_failure_policy,
            daemon_socket_location: defaults.daemon_socket.location,
            daemon_socket_name: defaults.daemon_socket.file_name,
            no_daemon: false,
            resource_distribution: false,
            crds: false,
            output_dir: None,
        }
    }
}

fn invalid(message: String) -> CliError {
    CliError::Invalid(message)
}

/// A DNS-1123 label (a namespace name).
fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

fn image(flag: &str, value: Option<&String>, default: String) -> Result<String, CliError> {
    match value {
        None => Ok(default),
        Some(image) if !image.is_empty() && !image.contains(char::is_whitespace) => {
            Ok(image.clone())
        }
        Some(image) => Err(invalid(format!(
            "{flag} {image:?}: an image reference has no spaces and is not empty"
        ))),
    }
}

fn quantity(flag: &str, value: &str) -> Result<f64, CliError> {
    quantity_value(value).map_err(|error| invalid(format!("{flag}: {error}")))
}

fn daemon_socket(args: &InstallArgs) -> Result<DaemonSocket, CliError> {
    let location = args.daemon_socket_location.trim_end_matches('/');
    let plain =
        |text: &str| !text.is_empty() && !text.contains(|c: char| c.is_whitespace() || c == ':');
    if !location.starts_with('/')
        || !plain(location)
        || location.split('/').any(|part| part == ".." || part == ".")
    {
        return Err(invalid(format!(
            "--daemon-socket-location {:?}: an absolute host directory, e.g. /run/containerd",
            args.daemon_socket_location
        )));
    }
    let name = &args.daemon_socket_name;
    if !plain(name) || name.contains('/') || name == ".." || name == "." {
        return Err(invalid(format!(
            "--daemon-socket-name {name:?}: a file name, e.g. containerd.sock"
        )));
    }
    Ok(DaemonSocket {
        location: location.to_owned(),
        file_name: name.clone(),
    })
}

impl InstallArgs {
    /// The validated settings.
    ///
    /// # Errors
    /// A flag's value is invalid, or the flags contradict each other (exit code 2).
    pub fn settings(&self) -> Result<InstallSettings, CliError> {
        let defaults = InstallSettings::default();
        if !is_dns_label(&self.namespace) {
            return Err(invalid(format!(
                "--namespace {:?}: a DNS-1123 label (lower-case letters, digits, '-', at most 63)",
                self.namespace
            )));
        }
        if self.namespace == DAEMON_CONFIG_NAMESPACE {
            return Err(invalid(format!(
                "--namespace {:?}: reserved for the copies of ImagePullJob pull secrets",
                self.namespace
            )));
        }
        if self.replicas < 1 {
            return Err(invalid(format!("--replicas {}: at least 1", self.replicas)));
        }
        let webhook_gates = webhook_gates(&self.feature_gates).map_err(invalid)?;
        if webhook_gates.resource_distribution && !self.resource_distribution {
            return Err(invalid(
                "--feature-gates ResourceDistributionGate=true needs --resource-distribution (the rights of its controller)"
                    .to_owned(),
            ));
        }
        quantity("--manager-cpu", &self.manager_cpu)?;
        let request = quantity("--manager-memory", &self.manager_memory)?;
        let limit = quantity("--manager-memory-limit", &self.manager_memory_limit)?;
        if request > limit {
            return Err(invalid(format!(
                "--manager-memory {}: more than --manager-memory-limit {}",
                self.manager_memory, self.manager_memory_limit
            )));
        }
        Ok(InstallSettings {
            namespace: self.namespace.clone(),
            replicas: self.replicas,
            feature_gates: self.feature_gates.trim().to_owned(),
            webhook_gates,
            manager_image: image(
                "--manager-image",
                self.manager_image.as_ref(),
                defaults.manager_image,
            )?,
            daemon_image: image(
                "--daemon-image",
                self.daemon_image.as_ref(),
                defaults.daemon_image,
            )?,
            manager_resources: ManagerResources {
                cpu_request: self.manager_cpu.clone(),
                memory_request: self.manager_memory.clone(),
                memory_limit: self.manager_memory_limit.clone(),
            },
            webhook_failure_policy: self.webhook_failure_policy,
            daemon_socket: daemon_socket(self)?,
            daemon: !self.no_daemon,
            resource_distribution: self.resource_distribution,
            crds: self.crds,
        })
    }
}

fn crd_documents() -> std::io::Result<Vec<Document>> {
    all(&CrdOptions::default())
        .iter()
        .enumerate()
        .map(|(index, crd)| {
            let comment = if index == 0 {
                "The OpenKruise CustomResourceDefinitions (kruise-manager also installs and updates them at\n\
                 start unless it runs with --no-install-crds)."
            } else {
                ""
            };
            Document::new(comment, crd)
        })
        .collect()
}

/// The manifests for `settings`, file by file, in the order they are applied.
///
/// # Errors
/// Rendering fails.
pub fn manifest_files(settings: &InstallSettings) -> std::io::Result<Vec<ManifestFile>> {
    let mut files = vec![ManifestFile {
        name: "namespace.yaml",
        documents: namespaces::documents(settings)?,
    }];
    if settings.crds {
        files.push(ManifestFile {
            name: "crds.yaml",
            documents: crd_documents()?,
        });
    }
    files.push(ManifestFile {
        name: "rbac.yaml",
        documents: manager_rbac::documents(settings)?,
    });
    if settings.resource_distribution {
        files.push(ManifestFile {
            name: "resource-distribution.yaml",
            documents: resource_distribution::documents(settings)?,
        });
    }
    files.extend([
        ManifestFile {
            name: "service.yaml",
            documents: service::documents(settings)?,
        },
        ManifestFile {
            name: "webhook.yaml",
            documents: webhook_configurations::documents(settings)?,
        },
        ManifestFile {
            name: "deployment.yaml",
            documents: deployment::documents(settings)?,
        },
        ManifestFile {
            name: "networkpolicy.yaml",
            documents: network_policy::documents(settings)?,
        },
    ]);
    if settings.daemon {
        files.push(ManifestFile {
            name: "daemon.yaml",
            documents: daemon::documents(settings)?,
        });
    }
    Ok(files)
}

/// The first lines of every file `--output-dir` writes.
pub const GENERATED_HEADER: &str = "# Generated by `kruise install` (examples/cli/src/install/): change the generator and\n\
# regenerate (`kruise install --resource-distribution --output-dir examples/manifests`), not this file.\n";

/// Prints the manifests (or writes them into `--output-dir`, naming each file on `stderr`).
///
/// # Errors
/// Invalid flags (exit code 2) or failing output (exit code 1).
pub fn run(
    args: &InstallArgs,
    out: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<(), CliError> {
    let settings = args.settings()?;
    if settings.resource_distribution && !settings.webhook_gates.resource_distribution {
        writeln!(
            stderr,
            "note: --resource-distribution without --feature-gates ResourceDistributionGate=true: the rights are \
             granted, the controller stays off"
        )?;
    }
    let files = manifest_files(&settings)?;
    match &args.output_dir {
        None => write_stream(files.iter().flat_map(|file| &file.documents), out)?,
        Some(dir) => {
            let dir = Path::new(dir);
            std::fs::create_dir_all(dir)?;
            for file in &files {
                let mut text = GENERATED_HEADER.as_bytes().to_vec();
                write_stream(&file.documents, &mut text)?;
                let path = dir.join(file.name);
                std::fs::write(&path, text)?;
                writeln!(stderr, "wrote {}", path.display())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
