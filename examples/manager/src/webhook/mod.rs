//! The pod mutating webhook, the SidecarSet validating webhook and the CRD conversion webhook of
//! kruise-manager.
//!
//! * [`admission`]: AdmissionReview in, AdmissionReview out (pure; no API calls on the request path);
//! * [`readiness_gates`]: `InPlaceUpdateReady` / `KruisePodReady` for pods owned by Kruise workloads;
//! * [`launch_priority`]: `KRUISE_CONTAINER_BARRIER` envs for ordered or prioritised container starts;
//! * [`conversion`]: ConversionReview in, ConversionReview out (v1alpha1 <-> v1beta1 of every kind);
//! * [`tls`]: the serving certificate (generated, or read from files) and rustls configuration;
//! * [`certificate_authority`], [`certificate_renewal`], [`certificate_inspection`]: generated certificates
//!   with bounded validity, and when they are renewed;
//! * [`certificate_reload`]: the served certificate kept current (files re-read, Secret renewed) without a
//!   restart;
//! * [`connection_limits`], [`connection_watchdog`]: timeouts and the connection cap of the server;
//! * [`sidecarset_injection`]: the SidecarSet stores and injection of pod CREATE;
//! * [`sidecarset_admission`]: the SidecarSet validating webhook over `kruise_sidecar::validation`'s rules,
//!   from stores;
//! * [`server`]: HTTPS serving of `/mutate-pod` and `/convert` (the manager merges the other routes);
//! * [`review_body`]: the body of every webhook request: one size limit, oversized reviews refused as reviews;
//! * [`configuration`]: the MutatingWebhookConfiguration (caBundle, failure policy, namespace exclusions);
//! * [`validating_configuration`]: the ValidatingWebhookConfiguration of the SidecarSet webhook;
//! * [`registration`]: writing both while leading, removing them at shutdown;
//! * [`workload_kind`], [`workload_defaulting`], [`workload_validation`], [`workload_admission`]: the
//!   defaulting and validating webhooks of CloneSet, Advanced StatefulSet, Advanced DaemonSet, BroadcastJob,
//!   AdvancedCronJob and ImagePullJob; [`workload_configuration`]: their entries in both configurations;
//! * [`deletion_protection`]: the `policy.kruise.io/delete-protection` label of Namespaces, CRDs and
//!   workloads refusing their deletion (gate `ResourcesDeletionProtection`);
//! * [`pod_unavailable_budget`]: pod deletions, evictions and updates spending PodUnavailableBudget units
//!   (gates `PodUnavailableBudgetDeleteGate`, `PodUnavailableBudgetUpdateGate`); [`related_budget`]: the
//!   `pub.kruise.io/related-pub` annotation of pod CREATE.
//! * [`workload_spread`]: WorkloadSpread's pod CREATE (subset choice and injection) and pod DELETE
//!   (accounting) webhooks (gate `WorkloadSpread`).
//! * [`request_metrics`]: every request counted by webhook path and HTTP status, under controller-runtime's
//!   metric names.
//! * [`pod_probe_marker`]: the PodProbeMarker validating webhook (gate `PodProbeMarkerGate`).
//! * [`resource_distribution`]: the ResourceDistribution validating webhook, rules and conflicts (gate
//!   `ResourceDistributionGate`).
//! * [`persistent_pod_state`]: pod CREATE of a pod a PersistentPodState recorded gets its recorded
//!   node topology back (`nodeSelector`, preferred node affinity; always on, as upstream).

pub mod admission;
pub mod cert_secret;
pub mod certificate_authority;
pub mod certificate_inspection;
pub mod certificate_reload;
pub mod certificate_renewal;
pub mod configuration;
pub mod connection_limits;
pub mod connection_watchdog;
pub mod conversion;
pub mod deletion_protection;
pub mod launch_priority;
pub mod persistent_pod_state;
pub mod pod_probe_marker;
pub mod pod_unavailable_budget;
pub mod readiness_gates;
pub mod registration;
pub mod related_budget;
pub mod request_metrics;
pub mod resource_distribution;
pub mod review_body;
pub mod server;
pub mod sidecarset_admission;
pub mod sidecarset_injection;
pub mod tls;
pub mod validating_configuration;
pub mod workload_admission;
pub mod workload_configuration;
pub mod workload_defaulting;
pub mod workload_kind;
pub mod workload_spread;
pub mod workload_validation;
