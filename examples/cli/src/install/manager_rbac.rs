//! `rbac.yaml`: what kruise-manager may do, and no more: its ServiceAccount, ClusterRole and Role (in its
//! namespace), and the Role in the namespace of the pull secret copies.

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::PolicyRule;
use kruise_api::crd::{CrdOptions, all};
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;

use super::document::Document;
use super::object_meta::namespaced_meta;
use super::policy_rule::{named_rule, rule, service_account_subject};
use super::role_grant::{cluster_role_grant, role_grant};
use super::settings::InstallSettings;

/// The name of kruise-manager's ServiceAccount, ClusterRole, Role, their bindings and its Lease.
pub const MANAGER: &str = "kruise-manager";
/// The Secret the replicas share the webhook serving certificate through.
pub const CERT_SECRET: &str = "kruise-rs-webhook-certs";
/// The MutatingWebhookConfiguration kruise-manager writes.
pub const MUTATING_CONFIGURATION: &str = "kruise-rs-mutating-webhook-configuration";
/// The ValidatingWebhookConfiguration kruise-manager writes.
pub const VALIDATING_CONFIGURATION: &str = "kruise-rs-validating-webhook-configuration";
/// The Role (and binding) of the pull secret copies.
const PULL_SECRETS_ROLE: &str = "kruise-manager-pull-secrets";

const CLUSTER_ROLE_COMMENT: &str = "\
The manager's rights across the cluster, rule by rule:
- its CRDs: create, then get/patch/update by name (it installs them at start, server-side apply);
- its two webhook configurations: create, then get/patch/update/delete by name (it writes caBundle, and
  removes them at a graceful stop when they call it by URL);
- the namespaces excluded from the webhook: get/patch by name (labels kubernetes.io/metadata.name on v1.20);
- the CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers: their workloads, status and
  finalizers, the pods, claims and ControllerRevisions they own;
- the SidecarSet controller and the pod webhook's injection: SidecarSets, their status, namespaces;
- the BroadcastJob and AdvancedCronJob controllers: their jobs, Jobs, nodes, Events;
- the container launch priority controller: each pod's `<pod>-barrier` ConfigMap (get, create, patch);
- ContainerRecreateRequests, NodeImages, ImagePullJobs and ImageListPullJobs (controllers and webhook), and
  an ImagePullJob's pull secrets, read (get only) in its namespace to copy them into kruise-daemon-config;
- WorkloadSpread (gate WorkloadSpread): WorkloadSpreads, their status, the target workload's replicas;
- UnitedDeployment: UnitedDeployments, their status, and the CloneSets, Advanced StatefulSets,
  StatefulSets and Deployments of their subsets;
- PersistentPodState: PersistentPodStates (generated ones created, updated, deleted), their status, and
  the StatefulSets, Advanced StatefulSets, pods and nodes they record;
- deletion protection (gate ResourcesDeletionProtection): list of any kind, to count the custom resources of
  a CRD labelled policy.kruise.io/delete-protection=Cascading (the one wildcard, list only);
- PodUnavailableBudget (gates PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate): budgets,
  their status, and the scale subresource of the workloads a targetRef names (for another kind, add its
  <resource>/scale get).";

/// The CRD names, sorted.
fn crd_names() -> Vec<String> {
    let mut names: Vec<String> = all(&CrdOptions::default())
        .into_iter()
        .filter_map(|crd| crd.metadata.name)
        .collect();
    names.sort();
    names.dedup();
    names
}

fn cluster_rules(namespace: &str) -> Vec<PolicyRule> {
    let mut excluded = vec!["kube-system".to_owned(), namespace.to_owned()];
    excluded.dedup();
    let crd = "customresourcedefinitions";
    let admission = "admissionregistration.k8s.io";
    let kruise = "apps.kruise.io";
    let read = ["get", "list", "watch"];
    let write_status = ["get", "update", "patch"];
    let all_verbs = [
        "get", "list", "watch", "create", "update", "patch", "delete",
    ];
    vec![
        rule(&["apiextensions.k8s.io"], &[crd], &["create"]),
        named_rule(
            &["apiextensions.k8s.io"],
            &[crd],
            &["get", "patch", "update"],
            crd_names(),
        ),
        rule(
            &[admission],
            &["mutatingwebhookconfigurations"],
            &["create"],
        ),
        named_rule(
            &[admission],
            &["mutatingwebhookconfigurations"],
            &["get", "patch", "update", "delete"],
            vec![MUTATING_CONFIGURATION.to_owned()],
        ),
        rule(
            &[admission],
            &["validatingwebhookconfigurations"],
            &["create"],
        ),
        named_rule(
            &[admission],
            &["validatingwebhookconfigurations"],
            &["get", "patch", "update", "delete"],
            vec![VALIDATING_CONFIGURATION.to_owned()],
        ),
        named_rule(&[""], &["namespaces"], &["get", "patch"], excluded),
        rule(
            &[kruise],
            &["clonesets"],
            &["get", "list", "watch", "update", "patch"],
        ),
        rule(
            &[kruise],
            &["clonesets/status", "clonesets/finalizers"],
            &write_status,
        ),
        rule(&[""], &["pods", "persistentvolumeclaims"], &all_verbs),
        rule(&[""], &["pods/status"], &write_status),
        // The launch priority barriers (`<pod>-barrier`, owned by their pods).
        rule(&[""], &["configmaps"], &["get", "create", "patch"]),
        rule(&["apps"], &["controllerrevisions"], &all_verbs),
        rule(
            &[kruise],
            &["statefulsets"],
            &["get", "list", "watch", "update", "patch"],
        ),
        rule(
            &[kruise],
            &["statefulsets/status", "statefulsets/finalizers"],
            &write_status,
        ),
        rule(&[kruise], &["daemonsets"], &read),
        rule(
            &[kruise],
            &["daemonsets/status", "daemonsets/finalizers"],
            &write_status,
        ),
        rule(
            &[kruise],
            &["sidecarsets"],
            &["get", "list", "watch", "patch"],
        ),
        rule(&[kruise], &["sidecarsets/status"], &write_status),
        rule(&[""], &["namespaces"], &["list", "watch"]),
        rule(
            &[kruise],
            &["broadcastjobs", "advancedcronjobs"],
            &all_verbs,
        ),
        rule(
            &[kruise],
            &["broadcastjobs/status", "advancedcronjobs/status"],
            &write_status,
        ),
        rule(&[kruise], &["ephemeraljobs"], &all_verbs),
        rule(&[kruise], &["podprobemarkers", "nodepodprobes"], &all_verbs),
        rule(
            &[kruise],
            &["podprobemarkers/status", "nodepodprobes/status"],
            &write_status,
        ),
        // PersistentPodState: status, generated objects, and the StatefulSets it follows.
        rule(&[kruise], &["persistentpodstates"], &all_verbs),
        rule(&[kruise], &["persistentpodstates/status"], &write_status),
        rule(&["apps"], &["statefulsets"], &read),
        rule(&[kruise], &["ephemeraljobs/status"], &write_status),
        rule(
            &[""],
            &["pods/ephemeralcontainers"],
            &["get", "update", "patch"],
        ),
        rule(
            &["batch"],
            &["jobs"],
            &["get", "list", "watch", "create", "delete"],
        ),
        rule(&[""], &["nodes"], &read),
        rule(&["", "events.k8s.io"], &["events"], &["create", "patch"]),
        rule(
            &[kruise],
            &[
                "containerrecreaterequests",
                "nodeimages",
                "imagepulljobs",
                "imagelistpulljobs",
            ],
            &all_verbs,
        ),
        rule(
            &[kruise],
            &[
                "containerrecreaterequests/status",
                "nodeimages/status",
                "imagepulljobs/status",
                "imagelistpulljobs/status",
            ],
            &write_status,
        ),
        rule(&[""], &["secrets"], &["get"]),
        rule(&[""], &["nodes"], &read),
        rule(&[kruise], &["workloadspreads"], &read),
        rule(&[kruise], &["workloadspreads/status"], &write_status),
        // UnitedDeployment: its status and the workloads of its subsets.
        rule(&[kruise], &["uniteddeployments"], &all_verbs),
        rule(&[kruise], &["uniteddeployments/status"], &write_status),
        rule(&["apps"], &["deployments", "statefulsets"], &all_verbs),
        rule(
            &[kruise],
            &["clonesets", "statefulsets"],
            &["create", "delete"],
        ),
        rule(
            &["apps"],
            &["deployments", "replicasets", "statefulsets"],
            &["get"],
        ),
        rule(&["*"], &["*"], &["list"]),
        rule(&["policy.kruise.io"], &["podunavailablebudgets"], &read),
        rule(
            &["policy.kruise.io"],
            &["podunavailablebudgets/status"],
            &write_status,
        ),
        rule(
            &[kruise],
            &["clonesets/scale", "statefulsets/scale"],
            &["get"],
        ),
        rule(
            &["apps"],
            &[
                "deployments/scale",
                "replicasets/scale",
                "statefulsets/scale",
            ],
            &["get"],
        ),
    ]
}

fn namespace_rules() -> Vec<PolicyRule> {
    vec![
        rule(&["coordination.k8s.io"], &["leases"], &["create"]),
        named_rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "update"],
            vec![MANAGER.to_owned()],
        ),
        rule(&[""], &["secrets"], &["create"]),
        named_rule(
            &[""],
            &["secrets"],
            &["get", "update"],
            vec![CERT_SECRET.to_owned()],
        ),
        rule(&[""], &["configmaps"], &["get", "list", "watch"]),
        rule(&["", "events.k8s.io"], &["events"], &["create", "patch"]),
    ]
}

/// The ServiceAccount, ClusterRole, Role and bindings of kruise-manager.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    let namespace = settings.namespace.as_str();
    let subject = service_account_subject(MANAGER, namespace);
    let mut documents = vec![Document::new(
        "What kruise-manager may do, and no more.",
        &ServiceAccount {
            metadata: namespaced_meta(MANAGER, namespace),
            ..ServiceAccount::default()
        },
    )?];
    documents.extend(cluster_role_grant(
        CLUSTER_ROLE_COMMENT,
        MANAGER,
        cluster_rules(namespace),
        &subject,
    )?);
    documents.extend(role_grant(
        "In its own namespace: the leader Lease, Events about itself, the shared webhook certificate, and\n\
         the ConfigMap kruise-configuration (the SidecarSet webhook's patchPodMetadata whitelist).",
        MANAGER,
        namespace,
        namespace_rules(),
        &subject,
    )?);
    documents.extend(role_grant(
        "The copies of ImagePullJob pull secrets kruise-daemon reads: created, kept in sync with their\n\
         sources, released and deleted when no job needs them.",
        PULL_SECRETS_ROLE,
        DAEMON_CONFIG_NAMESPACE,
        vec![rule(
            &[""],
            &["secrets"],
            &["get", "list", "create", "update", "delete"],
        )],
        &subject,
    )?);
    Ok(documents)
}
