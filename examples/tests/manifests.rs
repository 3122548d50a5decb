//! The deployment manifests in `examples/manifests/` agree with each other and with kruise-manager: kinds,
//! names, namespaces, references, ports, RBAC resource names, and the flags of the Deployment (parsed with
//! the manager's own option parser). They are the output of `kruise install` (`kruise_cli::install`), object
//! for object, and its flags reach the objects.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use clap::Parser;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{Namespace, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::crd::{CrdOptions, all};
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;
use kruise_cli::install::settings::WebhookFailurePolicy;
use kruise_cli::install::{InstallArgs, manifest_files};
use kruise_daemon::DaemonOptions;
use kruise_manager::ManagerOptions;
use kruise_manager::options::FeatureGates;
use kruise_manager::webhook::configuration::{
    CONFIGURATION_NAME, ClientTarget, FailurePolicy, WebhookOptions, mutating_webhook_configuration,
};
use kruise_manager::webhook::validating_configuration::{
    VALIDATING_CONFIGURATION_NAME, validating_webhook_configuration,
};
use kruise_runtime::logging::LogFormat;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    options: ManagerOptions,
}

/// kruise-daemon's flags (its binary adds `--log-format` to the library's options).
#[derive(Parser)]
struct DaemonCli {
    #[command(flatten)]
    options: DaemonOptions,
    #[arg(long, value_enum, default_value_t)]
    log_format: LogFormat,
}

fn manifest_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests")
}

/// The objects of one manifest file, in order.
fn file_objects(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_saphyr::from_multiple(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Every object of every manifest, by `Kind/name`.
fn objects() -> BTreeMap<String, Value> {
    let dir = manifest_dir();
    let mut objects = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        for value in file_objects(&path) {
            let key = format!(
                "{}/{}",
                value["kind"].as_str().unwrap(),
                value["metadata"]["name"].as_str().unwrap()
            );
            assert!(
                objects.insert(key.clone(), value).is_none(),
                "{key} defined twice"
            );
        }
    }
    objects
}

fn typed<T: DeserializeOwned>(objects: &BTreeMap<String, Value>, key: &str) -> T {
    let value = objects.get(key).unwrap_or_else(|| panic!("missing {key}"));
    serde_json::from_value(value.clone()).unwrap_or_else(|error| panic!("{key}: {error}"))
}

fn resource_names(
    rules: &[PolicyRule],
    group: &str,
    resource: &str,
    verb: &str,
) -> BTreeSet<String> {
    rules
        .iter()
        .filter(|rule| {
            rule.api_groups.iter().flatten().any(|g| g == group)
                && rule.resources.iter().flatten().any(|r| r == resource)
                && rule.verbs.iter().any(|v| v == verb)
        })
        .flat_map(|rule| rule.resource_names.clone().unwrap_or_default())
        .collect()
}

#[test]
fn every_expected_object_is_there_and_nothing_else() {
    let keys: Vec<String> = objects().into_keys().collect();
    assert_eq!(
        keys,
        [
            "ClusterRole/kruise-manager",
            "ClusterRole/kruise-manager-resource-distribution",
            "ClusterRole/kruise-rs-daemon",
            "ClusterRoleBinding/kruise-manager",
            "ClusterRoleBinding/kruise-manager-resource-distribution",
            "ClusterRoleBinding/kruise-rs-daemon",
            "DaemonSet/kruise-daemon",
            "Deployment/kruise-manager",
            "MutatingWebhookConfiguration/kruise-rs-mutating-webhook-configuration",
            "Namespace/kruise-daemon-config",
            "Namespace/kruise-system",
            "NetworkPolicy/kruise-manager",
            "Role/kruise-daemon-pull-secrets",
            "Role/kruise-manager",
            "Role/kruise-manager-pull-secrets",
            "RoleBinding/kruise-daemon-pull-secrets",
            "RoleBinding/kruise-manager",
            "RoleBinding/kruise-manager-pull-secrets",
            "Service/kruise-rs-webhook-service",
            "ServiceAccount/kruise-daemon",
            "ServiceAccount/kruise-manager",
            "ValidatingWebhookConfiguration/kruise-rs-validating-webhook-configuration",
        ]
    );
}

/// The NetworkPolicy selects the manager's pods, names only ports the Deployment has, keeps the webhook port
/// closed to the pod network, and leaves the metrics/health port open.
#[test]
fn the_network_policy_guards_the_webhook_port() {
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    let objects = objects();
    let policy: NetworkPolicy = typed(&objects, "NetworkPolicy/kruise-manager");
    let deployment: Deployment = typed(&objects, "Deployment/kruise-manager");
    let pod_labels = deployment
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|meta| meta.labels.clone())
        .unwrap();
    let spec = policy.spec.unwrap();
    for (key, value) in spec.pod_selector.clone().unwrap().match_labels.unwrap() {
        assert_eq!(
            pod_labels.get(&key),
            Some(&value),
            "podSelector {key}={value}"
        );
    }
    assert_eq!(
        policy.metadata.namespace, deployment.metadata.namespace,
        "the policy's namespace"
    );
    let container_ports: BTreeSet<String> =
        deployment.spec.template.spec.clone().unwrap().containers[0]
            .ports
            .clone()
            .unwrap()
            .into_iter()
            .filter_map(|port| port.name)
            .collect();
    let rules = spec.ingress.unwrap();
    let mut seen = BTreeSet::new();
    for rule in &rules {
        for port in rule.ports.clone().unwrap() {
            let Some(IntOrString::String(name)) = port.port else {
                panic!("ports are named in the policy");
            };
            assert!(container_ports.contains(&name), "unknown port {name}");
            if name == "webhook" {
                let from = rule.from.clone().unwrap();
                assert!(!from.is_empty(), "the webhook port must not be open to all");
                for peer in from {
                    assert!(peer.pod_selector.is_none() && peer.namespace_selector.is_none());
                    let block = peer.ip_block.unwrap();
                    assert!(
                        !block.except.unwrap_or_default().is_empty(),
                        "the pod CIDR is excluded"
                    );
                }
            } else {
                assert!(
                    rule.from.is_none(),
                    "{name} stays open (probes, Prometheus)"
                );
            }
            seen.insert(name);
        }
    }
    assert_eq!(seen, ["metrics".to_owned(), "webhook".to_owned()].into());
}

#[test]
fn references_agree() {
    let objects = objects();
    let namespace: Namespace = typed(&objects, "Namespace/kruise-system");
    let ns = namespace.metadata.name.clone().unwrap();
    let account: ServiceAccount = typed(&objects, "ServiceAccount/kruise-manager");
    let deployment: Deployment = typed(&objects, "Deployment/kruise-manager");
    let service: Service = typed(&objects, "Service/kruise-rs-webhook-service");
    let cluster_binding: ClusterRoleBinding = typed(&objects, "ClusterRoleBinding/kruise-manager");
    let binding: RoleBinding = typed(&objects, "RoleBinding/kruise-manager");
    let role: Role = typed(&objects, "Role/kruise-manager");

    for namespaced in [
        &account.metadata,
        &deployment.metadata,
        &service.metadata,
        &role.metadata,
        &binding.metadata,
    ] {
        assert_eq!(
            namespaced.namespace.as_deref(),
            Some(ns.as_str()),
            "{:?}",
            namespaced.name
        );
    }
    let pod = deployment.spec.template.spec.as_ref().unwrap();
    assert_eq!(pod.service_account_name, account.metadata.name);
    for subjects in [
        cluster_binding.subjects.as_ref().unwrap(),
        binding.subjects.as_ref().unwrap(),
    ] {
        assert_eq!(subjects.len(), 1);
        assert_eq!(
            (subjects[0].kind.as_str(), subjects[0].name.as_str()),
            ("ServiceAccount", "kruise-manager")
        );
        assert_eq!(subjects[0].namespace.as_deref(), Some(ns.as_str()));
    }
    assert_eq!(cluster_binding.role_ref.kind, "ClusterRole");
    assert!(objects.contains_key(&format!("ClusterRole/{}", cluster_binding.role_ref.name)));
    assert_eq!(binding.role_ref.kind, "Role");
    assert!(objects.contains_key(&format!("Role/{}", binding.role_ref.name)));

    // The Service selects the Deployment's pods and targets the webhook port.
    let labels = deployment
        .spec
        .template
        .metadata
        .as_ref()
        .unwrap()
        .labels
        .clone()
        .unwrap();
    let selector = service.spec.as_ref().unwrap().selector.clone().unwrap();
    assert!(
        selector.iter().all(|(k, v)| labels.get(k) == Some(v)),
        "{selector:?} vs {labels:?}"
    );
    assert_eq!(
        deployment.spec.selector.match_labels.as_ref().unwrap(),
        &selector
    );
    let container = &pod.containers[0];
    let port_of = |name: &str| {
        container
            .ports
            .iter()
            .flatten()
            .find(|port| port.name.as_deref() == Some(name))
            .map(|port| port.container_port)
    };
    let service_port = &service.spec.as_ref().unwrap().ports.as_ref().unwrap()[0];
    let IntOrString::String(target) = service_port.target_port.clone().unwrap() else {
        panic!("named targetPort")
    };
    assert!(port_of(&target).is_some());

    // The flags, parsed by the manager itself.
    let mut args = vec!["kruise-manager".to_owned()];
    args.extend(container.args.clone().unwrap());
    let options = Cli::try_parse_from(args).unwrap().options;
    let env_from_field = |name: &str| {
        container
            .env
            .iter()
            .flatten()
            .find(|env| env.name == name)
            .and_then(|env| {
                env.value_from
                    .as_ref()?
                    .field_ref
                    .as_ref()
                    .map(|field| field.field_path.clone())
            })
    };
    assert_eq!(
        env_from_field("POD_NAMESPACE").as_deref(),
        Some("metadata.namespace")
    );
    assert_eq!(env_from_field("POD_NAME").as_deref(), Some("metadata.name"));
    assert_eq!(
        options.webhook_service_name,
        service.metadata.name.clone().unwrap()
    );
    assert_eq!(options.webhook_service_port, service_port.port);
    assert_eq!(
        Some(i32::from(options.webhook_bind_address.port())),
        port_of("webhook")
    );
    assert_eq!(
        Some(i32::from(options.metrics_bind_address.port())),
        port_of("metrics")
    );
    assert!(options.leader_elect);

    // The Role names exactly what the manager uses in its namespace.
    let rules = role.rules.unwrap();
    assert_eq!(
        resource_names(&rules, "coordination.k8s.io", "leases", "update"),
        BTreeSet::from([options.leader_election_id.clone()])
    );
    assert_eq!(
        resource_names(&rules, "", "secrets", "get"),
        BTreeSet::from([options.webhook_cert_secret.clone().unwrap()])
    );
}

#[test]
fn the_cluster_role_names_every_crd_and_only_its_own_webhook_configuration() {
    let objects = objects();
    let role: ClusterRole = typed(&objects, "ClusterRole/kruise-manager");
    let rules = role.rules.unwrap();
    let crds: BTreeSet<String> = all(&CrdOptions::default())
        .into_iter()
        .filter_map(|crd| crd.metadata.name)
        .collect();
    assert_eq!(
        resource_names(
            &rules,
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "patch"
        ),
        crds
    );
    assert_eq!(
        resource_names(
            &rules,
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            "patch"
        ),
        BTreeSet::from([CONFIGURATION_NAME.to_owned()])
    );
    assert_eq!(
        resource_names(
            &rules,
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            "patch"
        ),
        BTreeSet::from([VALIDATING_CONFIGURATION_NAME.to_owned()])
    );
    assert_eq!(
        resource_names(&rules, "", "namespaces", "patch"),
        BTreeSet::from(["kube-system".to_owned(), "kruise-system".to_owned()])
    );
    for rule in &rules {
        assert!(
            !rule.verbs.iter().any(|verb| verb == "*"),
            "no wildcard verbs: {rule:?}"
        );
        // The one wildcard: deletion protection counts the custom resources of a Cascading-protected
        // CustomResourceDefinition, whatever its group, so it may list (and only list) any kind.
        let wildcard = rule.resources.iter().flatten().any(|r| r == "*");
        assert!(
            !wildcard || rule.verbs == ["list"],
            "wildcard resources only to list: {rule:?}"
        );
    }
}

/// The webhook options the Deployment's flags give the manager.
fn deployed_webhook_options() -> WebhookOptions {
    let objects = objects();
    let deployment: Deployment = typed(&objects, "Deployment/kruise-manager");
    let container = &deployment.spec.template.spec.unwrap().containers[0];
    let mut args = vec![
        "kruise-manager".to_owned(),
        "--namespace=kruise-system".to_owned(),
    ];
    args.extend(container.args.clone().unwrap());
    let options = Cli::try_parse_from(args).unwrap().options;
    WebhookOptions {
        target: ClientTarget::Service {
            namespace: options.namespace.clone(),
            name: options.webhook_service_name.clone(),
            port: options.webhook_service_port,
        },
        failure_policy: options.webhook_failure_policy,
        excluded_namespaces: options.excluded_namespaces(),
        ..WebhookOptions::default()
    }
}

/// Asserts the manifest's object equals what the manager writes, caBundle aside.
fn assert_written_as_manifest(key: &str, expected: Value) {
    let mut expected = expected;
    let mut written = objects()[key].clone();
    for value in [&mut expected, &mut written] {
        for webhook in value["webhooks"].as_array_mut().unwrap() {
            webhook["clientConfig"]
                .as_object_mut()
                .unwrap()
                .remove("caBundle");
        }
    }
    assert_eq!(written, expected, "{key}");
}

#[test]
fn the_webhook_configurations_are_what_the_manager_writes() {
    let options = deployed_webhook_options();
    let mutating = mutating_webhook_configuration(&options, b"");
    assert_written_as_manifest(
        &format!("MutatingWebhookConfiguration/{CONFIGURATION_NAME}"),
        serde_json::to_value(mutating).unwrap(),
    );
    let validating = validating_webhook_configuration(&options, b"");
    assert_written_as_manifest(
        &format!("ValidatingWebhookConfiguration/{VALIDATING_CONFIGURATION_NAME}"),
        serde_json::to_value(validating).unwrap(),
    );
    // Both decode as the API types.
    let _: MutatingWebhookConfiguration = typed(
        &objects(),
        &format!("MutatingWebhookConfiguration/{CONFIGURATION_NAME}"),
    );
    let _: ValidatingWebhookConfiguration = typed(
        &objects(),
        &format!("ValidatingWebhookConfiguration/{VALIDATING_CONFIGURATION_NAME}"),
    );
}

#[test]
fn the_daemon_runs_everywhere_with_its_own_flags_and_least_privilege() {
    let objects = objects();
    let daemon_set: DaemonSet = typed(&objects, "DaemonSet/kruise-daemon");
    let template = daemon_set.spec.template.clone();
    let pod = template.spec.unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some("kruise-daemon"));
    assert_eq!(pod.host_network, Some(true));
    assert!(
        pod.tolerations
            .unwrap()
            .iter()
            .any(|t| t.operator.as_deref() == Some("Exists") && t.key.is_none())
    );
    let container = &pod.containers[0];
    assert_eq!(
        container.command.as_deref(),
        Some(&["kruise-daemon".to_owned()][..])
    );
    let mut args = vec!["kruise-daemon".to_owned()];
    args.extend(container.args.clone().unwrap());
    let cli = DaemonCli::try_parse_from(&args).unwrap();
    assert_eq!(cli.options.node_name, "$(NODE_NAME)");
    assert!(matches!(cli.log_format, LogFormat::Json));
    let env = container.env.clone().unwrap();
    let node_name = env.iter().find(|e| e.name == "NODE_NAME").unwrap();
    let field = node_name.value_from.clone().unwrap().field_ref.unwrap();
    assert_eq!(field.field_path, "spec.nodeName");
    // The CRI socket the flag names is inside the mounted host directory.
    let socket = cli.options.cri_endpoint.strip_prefix("unix://").unwrap();
    let mount = container.volume_mounts.clone().unwrap();
    assert!(
        mount
            .iter()
            .any(|m| socket.starts_with(&format!("{}/", m.mount_path)))
    );
    let probe = container.readiness_probe.clone().unwrap().http_get.unwrap();
    assert_eq!(
        probe.port,
        IntOrString::Int(i32::from(cli.options.health_bind_address.port()))
    );

    let binding: ClusterRoleBinding = typed(&objects, "ClusterRoleBinding/kruise-rs-daemon");
    assert_eq!(binding.role_ref.name, "kruise-rs-daemon");
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(
        (subject.name.as_str(), subject.namespace.as_deref()),
        ("kruise-daemon", daemon_set.metadata.namespace.as_deref())
    );
    let role: ClusterRole = typed(&objects, "ClusterRole/kruise-rs-daemon");
    let rules = role.rules.unwrap();
    for resource in ["containerrecreaterequests", "nodeimages"] {
        for verb in ["get", "list", "watch"] {
            assert!(
                allowed(&rules, "apps.kruise.io", resource, verb),
                "{resource} {verb}"
            );
        }
        let status = format!("{resource}/status");
        assert!(
            allowed(&rules, "apps.kruise.io", &status, "patch"),
            "{status}"
        );
        // The daemon never writes the objects themselves, only their status.
        for verb in ["create", "update", "patch", "delete"] {
            assert!(
                !allowed(&rules, "apps.kruise.io", resource, verb),
                "{resource} {verb}"
            );
        }
    }
    // No Secret anywhere through the ClusterRole: pull secrets only in kruise-daemon-config.
    for verb in ["get", "list", "watch"] {
        assert!(!allowed(&rules, "", "secrets", verb), "secrets {verb}");
    }
    // The container meta worker reads its node's pods and writes only their status subresource.
    for verb in ["get", "list", "watch"] {
        assert!(allowed(&rules, "", "pods", verb), "pods {verb}");
    }
    for verb in ["create", "update", "patch", "delete"] {
        assert!(!allowed(&rules, "", "pods", verb), "pods {verb}");
    }
    assert!(allowed(&rules, "", "pods/status", "patch"));
    assert!(!allowed(&rules, "", "pods/status", "update"));
    let (role, binding) = pull_secret_role(&objects, "kruise-daemon-pull-secrets");
    let subjects = binding.subjects.unwrap();
    assert_eq!(subjects.len(), 1);
    assert_eq!(subjects[0].name, "kruise-daemon");
    let rules = role.rules.unwrap();
    assert!(allowed(&rules, "", "secrets", "get"));
    for verb in ["list", "watch", "create", "update", "delete"] {
        assert!(!allowed(&rules, "", "secrets", verb), "secrets {verb}");
    }
}

/// The Role `name` and its RoleBinding in the namespace of the pull secret copies, which the manifests create.
fn pull_secret_role(objects: &BTreeMap<String, Value>, name: &str) -> (Role, RoleBinding) {
    let namespace: Namespace = typed(objects, &format!("Namespace/{DAEMON_CONFIG_NAMESPACE}"));
    assert_eq!(
        namespace.metadata.name.as_deref(),
        Some(DAEMON_CONFIG_NAMESPACE)
    );
    let role: Role = typed(objects, &format!("Role/{name}"));
    let binding: RoleBinding = typed(objects, &format!("RoleBinding/{name}"));
    assert_eq!(
        role.metadata.namespace.as_deref(),
        Some(DAEMON_CONFIG_NAMESPACE)
    );
    assert_eq!(
        binding.metadata.namespace.as_deref(),
        Some(DAEMON_CONFIG_NAMESPACE)
    );
    assert_eq!(
        (
            binding.role_ref.kind.as_str(),
            binding.role_ref.name.as_str()
        ),
        ("Role", name)
    );
    let subject = &binding.subjects.clone().unwrap()[0];
    assert_eq!(subject.namespace.as_deref(), Some("kruise-system"));
    (role, binding)
}

#[test]
fn the_manager_copies_pull_secrets_into_the_daemon_namespace() {
    let objects = objects();
    let cluster_role: ClusterRole = typed(&objects, "ClusterRole/kruise-manager");
    let rules = cluster_role.rules.unwrap();
    // A job's pull secrets are read where the job is; never listed or written cluster-wide.
    assert!(allowed(&rules, "", "secrets", "get"));
    for verb in ["list", "watch", "create", "update", "delete"] {
        assert!(!allowed(&rules, "", "secrets", verb), "secrets {verb}");
    }
    let (role, binding) = pull_secret_role(&objects, "kruise-manager-pull-secrets");
    assert_eq!(binding.subjects.unwrap()[0].name, "kruise-manager");
    let rules = role.rules.unwrap();
    for verb in ["get", "list", "create", "update", "delete"] {
        assert!(allowed(&rules, "", "secrets", verb), "secrets {verb}");
    }
}

/// The rights of the ResourceDistribution gate are a ClusterRole of their own, bound to the manager's
/// ServiceAccount, so the manager's ClusterRole keeps Secrets read-only without the gate.
#[test]
fn resource_distribution_rights_are_apart() {
    let objects = objects();
    let role: ClusterRole = typed(&objects, "ClusterRole/kruise-manager-resource-distribution");
    let binding: ClusterRoleBinding = typed(
        &objects,
        "ClusterRoleBinding/kruise-manager-resource-distribution",
    );
    assert_eq!(
        binding.role_ref.name,
        "kruise-manager-resource-distribution"
    );
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(
        (subject.name.as_str(), subject.namespace.as_deref()),
        ("kruise-manager", Some("kruise-system"))
    );
    let rules = role.rules.unwrap();
    for resource in ["secrets", "configmaps"] {
        for verb in ["get", "list", "watch", "create", "update", "delete"] {
            assert!(allowed(&rules, "", resource, verb), "{resource} {verb}");
        }
    }
    assert!(allowed(
        &rules,
        "apps.kruise.io",
        "resourcedistributions",
        "watch"
    ));
    assert!(allowed(
        &rules,
        "apps.kruise.io",
        "resourcedistributions/status",
        "update"
    ));
}

fn allowed(rules: &[PolicyRule], group: &str, resource: &str, verb: &str) -> bool {
    rules.iter().any(|rule| {
        rule.api_groups.iter().flatten().any(|g| g == group)
            && rule.resources.iter().flatten().any(|r| r == resource)
            && rule.verbs.iter().any(|v| v == verb)
    })
}

/// The `.yaml` file names of `examples/manifests/`.
fn checked_in_files() -> BTreeSet<String> {
    std::fs::read_dir(manifest_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().and_then(|e| e.to_str()) == Some("yaml"))
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The checked-in files are `kruise install --resource-distribution --output-dir examples/manifests`, object
/// for object (comments and layout aside); without `--resource-distribution` the stream is every file but
/// `resource-distribution.yaml`.
#[test]
fn the_checked_in_manifests_are_what_kruise_install_generates() {
    let settings = InstallArgs {
        resource_distribution: true,
        ..InstallArgs::default()
    }
    .settings()
    .unwrap();
    let files = manifest_files(&settings).unwrap();
    let generated: BTreeSet<String> = files.iter().map(|file| file.name.to_owned()).collect();
    assert_eq!(generated, checked_in_files());
    for file in files {
        let expected: Vec<Value> = file.documents.into_iter().map(|d| d.value).collect();
        let checked_in = file_objects(&manifest_dir().join(file.name));
        assert_eq!(
            checked_in, expected,
            "examples/manifests/{} differs from `kruise install` (regenerate: kruise install \
             --resource-distribution --output-dir examples/manifests)",
            file.name
        );
    }
    let default_files: BTreeSet<String> =
        manifest_files(&InstallArgs::default().settings().unwrap())
            .unwrap()
            .into_iter()
            .map(|file| file.name.to_owned())
            .collect();
    let mut without = checked_in_files();
    without.remove("resource-distribution.yaml");
    assert_eq!(default_files, without);
}

/// The webhook options kruise-manager derives from its flags when it starts its webhook (a Service target in
/// its `--namespace`, which `POD_NAMESPACE` gives it in the Deployment).
fn webhook_options_of(options: &ManagerOptions) -> WebhookOptions {
    let gates: &FeatureGates = &options.feature_gates;
    WebhookOptions {
        target: ClientTarget::Service {
            namespace: options.namespace.clone(),
            name: options.webhook_service_name.clone(),
            port: options.webhook_service_port,
        },
        failure_policy: options.webhook_failure_policy,
        excluded_namespaces: options.excluded_namespaces(),
        deletion_protection: gates.resources_deletion_protection,
        pod_unavailable_budget_delete: gates.pod_unavailable_budget_delete,
        pod_unavailable_budget_update: gates.pod_unavailable_budget_update,
        workload_spread: gates.workload_spread,
        resource_distribution: gates.resource_distribution,
        ..WebhookOptions::default()
    }
}

/// Removes every `caBundle` (the manager fills it in; the manifests leave it out).
fn without_ca_bundles(mut value: Value) -> Value {
    for webhook in value["webhooks"].as_array_mut().unwrap() {
        webhook["clientConfig"]
            .as_object_mut()
            .unwrap()
            .remove("caBundle");
    }
    value
}

#[test]
fn kruise_install_flags_reach_the_objects() {
    let namespace = "acme-kruise";
    let gates = "WorkloadSpread=false,PodUnavailableBudgetUpdateGate=true,\
                 ResourcesDeletionProtection=false,KruisePodReadinessGate=true,ResourceDistributionGate=true";
    let settings = InstallArgs {
        namespace: namespace.into(),
        replicas: 5,
        feature_gates: gates.into(),
        manager_image: Some("registry.example/kruise-manager:dev".into()),
        daemon_image: Some("registry.example/kruise-daemon:dev".into()),
        manager_cpu: "1".into(),
        manager_memory: "300Mi".into(),
        manager_memory_limit: "2Gi".into(),
        webhook_failure_policy: WebhookFailurePolicy::Ignore,
        daemon_socket_location: "/var/run/crio".into(),
        daemon_socket_name: "crio.sock".into(),
        resource_distribution: true,
        ..InstallArgs::default()
    }
    .settings()
    .unwrap();
    let mut objects = BTreeMap::new();
    for file in manifest_files(&settings).unwrap() {
        for document in file.documents {
            let key = format!(
                "{}/{}",
                document.value["kind"].as_str().unwrap(),
                document.value["metadata"]["name"].as_str().unwrap()
            );
            assert!(
                objects.insert(key.clone(), document.value).is_none(),
                "{key} twice"
            );
        }
    }
    assert!(objects.contains_key("ClusterRole/kruise-manager-resource-distribution"));

    // The namespace everywhere: objects, binding subjects, webhook Services.
    for (key, object) in &objects {
        if let Some(ns) = object["metadata"]["namespace"].as_str() {
            assert!(
                ns == namespace || ns == DAEMON_CONFIG_NAMESPACE,
                "{key}: {ns}"
            );
        }
        for subject in object["subjects"].as_array().into_iter().flatten() {
            assert_eq!(subject["namespace"], namespace, "{key}");
        }
    }
    assert!(objects.contains_key(&format!("Namespace/{namespace}")));
    assert!(!objects.contains_key("Namespace/kruise-system"));
    let cluster_role: ClusterRole = typed(&objects, "ClusterRole/kruise-manager");
    assert_eq!(
        resource_names(&cluster_role.rules.unwrap(), "", "namespaces", "patch"),
        BTreeSet::from(["kube-system".to_owned(), namespace.to_owned()])
    );

    // The Deployment: replicas, image, resources, and flags the manager's own parser reads back.
    let deployment: Deployment = typed(&objects, "Deployment/kruise-manager");
    assert_eq!(deployment.spec.replicas, Some(5));
    let container = deployment.spec.template.spec.unwrap().containers[0].clone();
    assert_eq!(
        container.image.as_deref(),
        Some("registry.example/kruise-manager:dev")
    );
    let resources = container.resources.clone().unwrap();
    assert_eq!(resources.requests.as_ref().unwrap()["cpu"].0, "1");
    assert_eq!(resources.requests.as_ref().unwrap()["memory"].0, "300Mi");
    assert_eq!(resources.limits.as_ref().unwrap()["memory"].0, "2Gi");
    let mut args = vec![
        "kruise-manager".to_owned(),
        format!("--namespace={namespace}"),
    ];
    args.extend(container.args.clone().unwrap());
    let options = Cli::try_parse_from(args).unwrap().options;
    assert_eq!(options.webhook_failure_policy, FailurePolicy::Ignore);
    let parsed = &options.feature_gates;
    assert!(!parsed.workload_spread);
    assert!(parsed.pod_unavailable_budget_update);
    assert!(!parsed.resources_deletion_protection);
    assert!(parsed.kruise_pod_readiness_gate);
    assert!(parsed.resource_distribution);

    // The webhook configurations are what this manager writes, and every webhook has the failure policy.
    let webhook_options = webhook_options_of(&options);
    let mutating =
        serde_json::to_value(mutating_webhook_configuration(&webhook_options, b"")).unwrap();
    assert_eq!(
        objects[&format!("MutatingWebhookConfiguration/{CONFIGURATION_NAME}")],
        without_ca_bundles(mutating)
    );
    let validating =
        serde_json::to_value(validating_webhook_configuration(&webhook_options, b"")).unwrap();
    assert_eq!(
        objects[&format!("ValidatingWebhookConfiguration/{VALIDATING_CONFIGURATION_NAME}")],
        without_ca_bundles(validating)
    );
    for key in [
        format!("MutatingWebhookConfiguration/{CONFIGURATION_NAME}"),
        format!("ValidatingWebhookConfiguration/{VALIDATING_CONFIGURATION_NAME}"),
    ] {
        let webhooks = objects[&key]["webhooks"].as_array().unwrap();
        assert!(!webhooks.is_empty());
        for webhook in webhooks {
            assert_eq!(
                webhook["failurePolicy"], "Ignore",
                "{key}: {}",
                webhook["name"]
            );
            assert_eq!(webhook["clientConfig"]["service"]["namespace"], namespace);
        }
    }

    // The daemon: image, and the socket location mounted where its --cri-endpoint points.
    let daemon_set: DaemonSet = typed(&objects, "DaemonSet/kruise-daemon");
    let pod = daemon_set.spec.template.spec.unwrap();
    let volume = &pod.volumes.unwrap()[0];
    assert_eq!(volume.host_path.as_ref().unwrap().path, "/var/run/crio");
    let container = &pod.containers[0];
    assert_eq!(
        container.image.as_deref(),
        Some("registry.example/kruise-daemon:dev")
    );
    let mut args = vec!["kruise-daemon".to_owned()];
    args.extend(container.args.clone().unwrap());
    let cli = DaemonCli::try_parse_from(&args).unwrap();
    let mount = &container.volume_mounts.as_ref().unwrap()[0];
    assert_eq!(mount.name, volume.name);
    assert_eq!(
        cli.options.cri_endpoint,
        format!("unix://{}/crio.sock", mount.mount_path)
    );
}

/// The defaults of `kruise install` are kruise-manager's: the default webhook options give the manifests'
/// webhook configurations.
#[test]
fn kruise_install_defaults_match_the_managers_webhook_defaults() {
    let settings = InstallArgs::default().settings().unwrap();
    let files = manifest_files(&settings).unwrap();
    let webhook_file = files
        .iter()
        .find(|file| file.name == "webhook.yaml")
        .unwrap();
    let options = WebhookOptions::default();
    assert_eq!(
        webhook_file.documents[0].value,
        without_ca_bundles(
            serde_json::to_value(mutating_webhook_configuration(&options, b"")).unwrap()
        )
    );
    assert_eq!(
        webhook_file.documents[1].value,
        without_ca_bundles(
            serde_json::to_value(validating_webhook_configuration(&options, b"")).unwrap()
        )
    );
}
