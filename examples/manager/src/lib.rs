//! kruise-manager: the process that runs the controllers and the pod webhook against a cluster.
//!
//! At start it serves `/healthz`, `/readyz` and `/metrics` ([`http`], [`metrics`]), installs or updates
//! the CRDs ([`crds`]), starts the HTTPS webhooks ([`crate::webhook`]: pods, ContainerRecreateRequests,
//! SidecarSet validation, CRD conversion) and joins the leader election ([`leader`]); with the webhook on,
//! the CRDs convert between versions through its `/convert`. While leading it writes the
//! MutatingWebhookConfiguration and the ValidatingWebhookConfiguration (caBundle included, and written again
//! when the serving certificate is renewed or reloaded) and runs the registered controllers
//! ([`controllers`]), writing through a [`WriteFence`] that shuts as soon as the lease may no longer be its
//! own (a frozen process waking up finds it shut), over connections of their own that send no byte once it
//! is shut ([`Manager::with_fenced_connections`]). When leadership is lost it aborts them at once (no
//! drain: a standby may already lead); on SIGINT/SIGTERM it drains them and releases the lease; when a
//! controller ends on its own or a webhook configuration cannot be written within
//! [`leading::WEBHOOK_CONFIGURATION_WITHIN`], `/healthz` fails and the lease is released.
//! A manager running outside the cluster (`--webhook-url`) also removes
//! both webhook configurations at shutdown if they still call it, so pod and SidecarSet writes are not
//! left failing on a webhook that is gone. [`actions`] and [`expectations`] are the helpers controllers use to
//! execute their plans safely, [`queue_depth`] the queue depth a controller reports; all of them, and the
//! shared informers every controller reads from, come from `kruise-runtime`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use clap::Parser;
//! use kruise_manager::{Manager, ManagerOptions, controllers::ControllerSet};
//! use kruise_runtime::shutdown;
//!
//! #[derive(Parser)]
//! struct Cli { #[command(flatten)] options: ManagerOptions }
//!
//! let options = Cli::parse_from(["kruise-manager", "--webhook-url=https://127.0.0.1:9876/mutate-pod"]).options;
//! let (trigger, signal) = shutdown::channel();
//! trigger.on_signals();
//! let config = kube::Config::infer().await?;
//! let client = kube::Client::try_from(config.clone())?;
//! Manager::new(options, ControllerSet::new())
//!     .with_fenced_connections(config)
//!     .run(client, signal)
//!     .await?;
//! # Ok(()) }
//! ```

pub mod advanced_cron_job;
pub mod broadcast_job;
pub mod cloneset;
pub mod crds;
pub mod crr;
pub mod daemonset;
pub mod ephemeral_job;
pub mod http;
pub mod imagepull;
pub mod launch_priority_barrier;
pub mod leader;
pub mod leading;
pub mod options;
pub mod persistent_pod_state;
pub mod pod_probe_marker;
pub mod pod_readiness;
pub mod resource_distribution;
pub mod sidecar_terminator;
pub mod sidecarset;
pub mod statefulset;
pub mod unavailable_budget;
pub mod united_deployment;
pub mod webhook;
pub mod workload;
pub mod workload_spread;

#[cfg(test)]
mod untrusted_input;

use kruise_runtime::actions::is_conflict;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Namespace;
use kruise_api::crd::{ConversionStrategy, CrdOptions};
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::events::Reporter;
use kube::{Api, Client};
use tokio::net::TcpListener;

use self::controllers::ControllerSet;
use self::http::{Liveness, Readiness};
use self::leader::{ElectionError, LeaderElector, Outcome};
use self::metrics::Metrics;
pub use self::options::ManagerOptions;
use crate::crr::admission::CrrStores;
use crate::leading::{LeadError, WEBHOOK_CONFIGURATION_WITHIN};
use crate::webhook::admission::Mutator;
use crate::webhook::cert_secret::{CertSecret, CertSecretError};
use crate::webhook::certificate_reload::{self, CertificateSource};
use crate::webhook::certificate_renewal::RenewalPolicy;
use crate::webhook::configuration::{self, ClientTarget, WebhookOptions};
use crate::webhook::registration::{self, Registration};
use crate::webhook::server;
use crate::webhook::sidecarset_admission::{self, SidecarSetValidator};
use crate::webhook::sidecarset_injection::SidecarSetStores;
use crate::webhook::tls::TlsError;
use crate::webhook::validating_configuration;
use kruise_api::readiness_gates::GateOptions;
use kruise_runtime::Informers;
use kruise_runtime::shutdown::{self, Shutdown};
use kruise_runtime::write_fence::WriteFence;
use kruise_runtime::write_fence::pool::FencedPoolError;
/// The runtime layer every controller here is built on (re-exported under the paths controllers use).
pub use kruise_runtime::{actions, controllers, expectations, metrics, queue_depth};

/// Why the manager stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// A listening address could not be bound.
    #[error("binding {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The manager's namespace is missing or unreadable.
    #[error("namespace {namespace}: {message}")]
    Namespace {
        /// The namespace.
        namespace: String,
        /// What is wrong.
        message: String,
    },
    /// Installing the CRDs failed.
    #[error(transparent)]
    Crds(#[from] crds::CrdError),
    /// The serving certificate could not be made or read.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The serving certificate could not be loaded (files, the shared Secret) or made.
    #[error(transparent)]
    CertSecret(#[from] CertSecretError),
    /// The election could not start.
    #[error(transparent)]
    Election(#[from] ElectionError),
    /// The lease was lost; the process should exit (and be restarted) like upstream's manager.
    #[error("lost the leader lease")]
    LostLeadership,
    /// The leader's work ended while leading (a controller died, a webhook configuration could not be
    /// written); `/healthz` failed and the lease was released.
    #[error("the leader's work failed: {0}")]
    LeaderWorkFailed(String),
    /// The leader's fenced connection pool ([`Manager::with_fenced_connections`]) could not be set up.
    #[error(transparent)]
    FencedPool(#[from] FencedPoolError),
}

/// kruise-manager with its options and controllers.
pub struct Manager {
    options: ManagerOptions,
    controllers: ControllerSet,
    metrics: Metrics,
    fenced_connections: Option<kube::Config>,
}

impl Manager {
    /// A manager that runs `controllers` while leading.
    #[must_use]
    pub fn new(options: ManagerOptions, controllers: ControllerSet) -> Self {
        Self {
            options,
            controllers,
            metrics: Metrics::new(),
            fenced_connections: None,
        }
    }

    /// The leader (with `--leader-elect`) writes over a connection pool of its own, built from `config`
    /// like the client given to [`run`](Self::run) (same server, credentials and user agent), whose
    /// connections send no byte once the term's [`WriteFence`] is shut: a request that passed the fence
    /// just before the process froze is not sent when it wakes after its lease
    /// ([`kruise_runtime::write_fence`]). Without it (a manager given only a client), or when `config`
    /// connects through a proxy (a warning says so), the leader's writes are fenced per request only. The elector, the informers and the webhooks keep using the client.
    #[must_use]
    pub fn with_fenced_connections(mut self, config: kube::Config) -> Self {
        self.fenced_connections = Some(config);
        self
    }

    /// The metrics the manager serves on `/metrics` (build its client with
    /// `metrics().open_watches().layer()` so its watches are counted; the fenced connections of
    /// [`with_fenced_connections`](Self::with_fenced_connections) count theirs already).
    #[must_use]
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Runs until `shutdown` (Ok) or until leadership is lost (Err).
    ///
    /// # Errors
    /// See [`ManagerError`]; start-up failures are returned before anything runs.
    pub async fn run(self, client: Client, shutdown: Shutdown) -> Result<(), ManagerError> {
        let options = self.options;
        let identity = options.identity();
        // The leader writes through the term's fence: nothing it sends lands once its lease may be gone.
        let fence = WriteFence::closed();
        let lead_client = match (&self.fenced_connections, options.leader_elect) {
            (_, false) => client.clone(),
            (Some(config), true) => match fence.pool_client_builder(config) {
                Ok(builder) => fence.guard(
                    &builder
                        .with_layer(&self.metrics.open_watches().layer())
                        .build(),
                ),
                // A proxied connection is not a TCP stream the fence can watch: fence per request.
                Err(error @ FencedPoolError::Proxy { .. }) => {
                    tracing::warn!(%error, "the leader's writes are fenced per request only");
                    fence.guard(&client)
                }
                Err(error) => return Err(error.into()),
            },
            (None, true) => {
                tracing::info!(
                    "no connection config for the leader: its writes are fenced per request only"
                );
                fence.guard(&client)
            }
        };
        let (stop, stopped) = shutdown::channel();
        let forward = stop.clone();
        tokio::spawn(async move {
            shutdown.wait().await;
            forward.trigger();
        });

        let metrics = self.metrics;
        let mut checks = vec!["crds"];
        if !options.no_webhook {
            checks.push("webhook");
        }
        let readiness = Readiness::new(&checks);
        let liveness = Liveness::default();
        let listener = bind(options.metrics_bind_address).await?;
        tracing::info!(address = %local(&listener), "serving /healthz, /readyz and /metrics");
        let app = http::router(metrics.clone(), readiness.clone(), liveness.clone());
        let http_server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stopped.wait());
            if let Err(error) = serve.await {
                tracing::error!(%error, "the metrics server failed");
            }
        });
        let stopped = stop.subscribe();
        // Whatever ends this function (an error at start included) stops the servers it started.
        let _stop_servers = StopOnDrop(stop.clone());

        ensure_namespace(&client, &options.namespace, options.create_namespace).await?;
        // One watch and one copy per kind for the whole process: the webhooks read them from the start (also on
        // a standby replica), the controllers of every leadership term share them.
        let informers = Informers::counted(client.clone(), metrics.informer_health().clone());
        // The webhook (with `/convert`) serves before the CRDs point their conversion at it.
        let (webhook_registration, conversion) = if options.no_webhook {
            (None, ConversionStrategy::None)
        } else {
            let started = start_webhook(
                &client,
                &informers,
                &options,
                &metrics,
                &readiness,
                stopped.clone(),
            )
            .await?;
            (Some(started.registration), started.conversion)
        };
        if options.no_install_crds {
            tracing::info!("--no-install-crds: leaving the CRDs as they are");
        } else {
            let crd_options = CrdOptions {
                conversion,
                ..CrdOptions::default()
            };
            crds::install(&client, &crd_options, Duration::from_secs(60)).await?;
        }
        readiness.set("crds", true);

        let reporter = Reporter {
            controller: "kruise-manager".into(),
            instance: Some(identity.clone()),
        };
        let controllers = self.controllers;
        let shutdown_timeout = options.shutdown_timeout;
        let lead_metrics = metrics.clone();
        let lead_informers = informers.clone();
        let lead_liveness = liveness.clone();
        let lead = move |leading: Shutdown| async move {
            let result = async {
                if let Some(registration) = webhook_registration {
                    registration
                        .write(&lead_client, &leading, WEBHOOK_CONFIGURATION_WITHIN)
                        .await?;
                    tokio::spawn(registration.follow(lead_client.clone(), leading.clone()));
                }
                controllers
                    .run_all(
                        lead_client,
                        &lead_informers,
                        &lead_metrics,
                        &reporter,
                        leading,
                        shutdown_timeout,
                    )
                    .await?;
                Ok::<(), LeadError>(())
            }
            .await;
            if let Err(error) = &result {
                lead_liveness.fail(&error.to_string());
            }
            result
        };
        let outcome = if options.leader_elect {
            let elector = LeaderElector::new(
                client.clone(),
                &options.namespace,
                &options.leader_election_id,
                &identity,
                options.leader_timing(),
            )?
            .with_metrics(metrics.clone())
            .with_fence(fence);
            elector
                .run(stopped.clone(), options.shutdown_timeout, lead)
                .await
        } else {
            tracing::info!("--leader-elect=false: running controllers without an election");
            metrics.set_leader(true);
            match lead(stopped.clone()).await {
                // No controller may be registered at all: keep serving the webhook until shut down.
                Ok(()) => {
                    stopped.clone().wait().await;
                    Outcome::ShutDown
                }
                Err(error) => Outcome::WorkFailed(error.to_string()),
            }
        };
        if let Outcome::WorkFailed(reason) = &outcome {
            liveness.fail(reason);
        }
        if outcome == Outcome::ShutDown
            && let Some(url) = &options.webhook_url
            && !options.no_webhook
        {
            registration::remove_if_calling::<MutatingWebhookConfiguration>(
                &client,
                configuration::CONFIGURATION_NAME,
                &configuration::sibling_url(url, server::MUTATE_POD_PATH),
            )
            .await;
            registration::remove_if_calling::<ValidatingWebhookConfiguration>(
                &client,
                validating_configuration::VALIDATING_CONFIGURATION_NAME,
                &configuration::sibling_url(url, sidecarset_admission::VALIDATE_SIDECARSET_PATH),
            )
            .await;
            if !options.no_install_crds {
                crds::reset_conversion_if_pointing_at(&client, &options::conversion_url(url)).await;
            }
        }
        stop.trigger();
        let _ = tokio::time::timeout(Duration::from_secs(5), http_server).await;
        match outcome {
            Outcome::ShutDown => {
                tracing::info!("kruise-manager stopped");
                Ok(())
            }
            Outcome::LostLeadership => Err(ManagerError::LostLeadership),
            Outcome::WorkFailed(reason) => Err(ManagerError::LeaderWorkFailed(reason)),
        }
    }
}

/// Triggers the shutdown when dropped.
struct StopOnDrop(shutdown::Trigger);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.trigger();
    }
}

async fn bind(address: SocketAddr) -> Result<TcpListener, ManagerError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ManagerError::Bind { address, source })
}

fn local(listener: &TcpListener) -> String {
    listener
        .local_addr()
        .map_or_else(|_| "?".to_owned(), |address| address.to_string())
}

async fn ensure_namespace(
    client: &Client,
    namespace: &str,
    create: bool,
) -> Result<(), ManagerError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let error = |message: String| ManagerError::Namespace {
        namespace: namespace.to_owned(),
        message,
    };
    match api.get_opt(namespace).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) if create => {
            let object = Namespace {
                metadata: ObjectMeta {
                    name: Some(namespace.to_owned()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            match api.create(&PostParams::default(), &object).await {
                Ok(_) => {
                    tracing::info!(%namespace, "created the namespace");
                    Ok(())
                }
                Err(error) if is_conflict(&error) => Ok(()),
                Err(failure) => Err(error(failure.to_string())),
            }
        }
        Ok(None) => Err(error(
            "does not exist (create it, or pass --create-namespace)".into(),
        )),
        // Without permission to read namespaces, assume it exists; later calls say otherwise if not.
        Err(kube::Error::Api(status)) if status.code == 403 => Ok(()),
        Err(failure) => Err(error(failure.to_string())),
    }
}

/// What a started webhook server needs written to the cluster.
struct StartedWebhook {
    /// Both webhook configurations and the caBundles (written while leading).
    registration: Registration,
    /// The CRDs' conversion strategy pointing at `/convert`.
    conversion: ConversionStrategy,
}

/// Makes or reads the certificate, starts the HTTPS server, and returns the configurations to write.
async fn start_webhook(
    client: &Client,
    informers: &Informers,
    options: &ManagerOptions,
    metrics: &Metrics,
    readiness: &Readiness,
    stopped: Shutdown,
) -> Result<StartedWebhook, ManagerError> {
    let hosts = options.webhook_hosts();
    let source = match (
        &options.tls_cert_file,
        &options.tls_key_file,
        &options.webhook_cert_secret,
    ) {
        (Some(cert), Some(key), _) => CertificateSource::Files {
            cert: cert.clone(),
            key: key.clone(),
            ca: options.tls_ca_file.clone(),
        },
        (_, _, Some(secret)) => CertificateSource::Secret {
            client: client.clone(),
            secret: CertSecret {
                namespace: options.namespace.clone(),
                name: secret.clone(),
                hosts: hosts.clone(),
            },
        },
        _ => CertificateSource::Generated {
            hosts: hosts.clone(),
        },
    };
    let interval = options.webhook_cert_check_interval;
    let policy = RenewalPolicy {
        // Long enough for every replica and the leader to have checked (and written the bundle) a few times.
        ca_propagation: RenewalPolicy::default().ca_propagation.max(
            chrono::TimeDelta::from_std(interval.saturating_mul(3))
                .unwrap_or(chrono::TimeDelta::MAX),
        ),
        ..RenewalPolicy::default()
    };
    let certificates = certificate_reload::start(
        source,
        policy,
        interval,
        Some(metrics.clone()),
        stopped.clone(),
    )
    .await?;
    let listener = bind(options.webhook_bind_address).await?;
    tracing::info!(address = %local(&listener), hosts = ?hosts, "serving the pod webhook over HTTPS");
    let observer_metrics = metrics.clone();
    let gates = &options.feature_gates;
    let stores =
        SidecarSetStores::shared(informers, &options.namespace).with_options(gates.sidecarset);
    let validator = SidecarSetValidator::start(
        client,
        &options.namespace,
        stores.sidecarset_store(),
        gates.sidecarset.patch_pod_metadata_defaults_allowed,
        &stopped,
    );
    let budgets = crate::unavailable_budget::BudgetStores::shared(informers);
    let mutator = Mutator {
        gates: GateOptions {
            kruise_pod_ready_for_all_pods: options.feature_gates.kruise_pod_readiness_gate,
        },
        sidecarsets: Some(stores.clone()),
        budgets: (gates.pod_unavailable_budget_delete || gates.pod_unavailable_budget_update)
            .then(|| budgets.clone()),
        persistent_pod_states: Some(
            crate::webhook::persistent_pod_state::PersistentPodStateStores::shared(informers),
        ),
    };
    let app = server::router(
        mutator,
        Some(Arc::new(move |status, duration| {
            observer_metrics.observe_webhook(status, duration);
        })),
    )
    .merge(crate::crr::admission::router(CrrStores::shared(informers)))
    .merge(sidecarset_admission::router(validator.clone()))
    .merge(crate::webhook::workload_admission::router())
    .merge(crate::webhook::deletion_protection::router(
        client.clone(),
        gates.resources_deletion_protection,
    ))
    .merge(crate::webhook::pod_unavailable_budget::router(
        crate::webhook::pod_unavailable_budget::BudgetGuard {
            client: client.clone(),
            budgets: budgets.clone(),
            pods: informers.get(),
            delete_gate: gates.pod_unavailable_budget_delete,
            update_gate: gates.pod_unavailable_budget_update,
        },
    ))
    .merge(crate::webhook::workload_spread::router(
        crate::webhook::workload_spread::SpreadWebhook::new(
            client.clone(),
            informers,
            gates.workload_spread,
        ),
    ))
    .merge(crate::webhook::resource_distribution::router(
        crate::webhook::resource_distribution::DistributionWebhook {
            client: client.clone(),
            namespaces: gates
                .resource_distribution
                .then(|| informers.get::<k8s_openapi::api::core::v1::Namespace>()),
        },
    ))
    .merge(crate::webhook::pod_probe_marker::router(
        gates.pod_probe_marker,
    ))
    .layer(axum::middleware::from_fn_with_state(
        metrics.clone(),
        crate::webhook::request_metrics::count_request,
    ));
    tokio::spawn(server::serve_tls(
        listener,
        certificates.clone(),
        app,
        options.webhook_connection_limits(),
        Some(metrics.clone()),
        stopped,
    ));
    // Ready once the SidecarSet stores are listed: a pod admitted before would miss its sidecars.
    let webhook_ready = readiness.clone();
    // And once the WorkloadSpreads are listed: a pod admitted before would miss its subset.
    let spread_informer = gates
        .workload_spread
        .then(|| informers.get::<kruise_api::apps::v1beta1::WorkloadSpread>());
    // And once the namespaces are listed (gate `ResourceDistributionGate`): the conflict check reads them.
    let namespace_informer = gates
        .resource_distribution
        .then(|| informers.get::<k8s_openapi::api::core::v1::Namespace>());
    tokio::spawn(async move {
        if let Some(spreads) = spread_informer {
            spreads.wait_synced().await;
        }
        if let Some(namespaces) = namespace_informer {
            namespaces.wait_synced().await;
        }
        stores.wait_synced().await;
        if validator.wait_until_ready().await {
            webhook_ready.set("webhook", true);
        }
    });

    let excluded = options.excluded_namespaces();
    configuration::label_excluded_namespaces(client, &excluded).await;
    let target = match &options.webhook_url {
        Some(url) => ClientTarget::Url(url.clone()),
        None => ClientTarget::Service {
            namespace: options.namespace.clone(),
            name: options.webhook_service_name.clone(),
            port: options.webhook_service_port,
        },
    };
    let webhook = WebhookOptions {
        target,
        failure_policy: options.webhook_failure_policy,
        excluded_namespaces: excluded,
        deletion_protection: options.feature_gates.resources_deletion_protection,
        pod_unavailable_budget_delete: options.feature_gates.pod_unavailable_budget_delete,
        pod_unavailable_budget_update: options.feature_gates.pod_unavailable_budget_update,
        workload_spread: options.feature_gates.workload_spread,
        resource_distribution: options.feature_gates.resource_distribution,
        pod_probe_marker: options.feature_gates.pod_probe_marker,
        ..WebhookOptions::default()
    };
    let bundle = certificates.borrow().material.ca_pem.clone();
    let conversion = crds::conversion_strategy(&webhook.target, bundle.as_bytes());
    Ok(StartedWebhook {
        registration: Registration {
            webhook,
            certificates,
            conversion_crds: !options.no_install_crds,
        },
        conversion,
    })
}
