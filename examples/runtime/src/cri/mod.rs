//! A CRI v1 client over a unix socket (gRPC with tonic, the generated types of `k8s-cri`), as kubelet and
//! kruise-daemon talk to containerd or CRI-O. Used by kruise-daemon (`kruise_daemon`) and by the node
//! simulator's containerd mode (`kruise_simulator::cri_node`).
//!
//! * [`CriClient`]: the calls the node agents make, each with a timeout and a [`CriError`] that keeps the
//!   gRPC code (containerd answers `NotFound` for unknown containers and missing tags).
//! * [`labels`]: the labels and annotations kubelet puts on sandboxes and containers; both agents find a
//!   pod's containers through them, never by name alone.
//! * [`view`]: what the runtime says about one pod, converted to the plain
//!   [`PodView`](kruise_lifecycle::container_recreate::runtime_view::PodView) the node agents decide on.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kruise_runtime::cri::CriError> {
//! use kruise_runtime::cri::CriClient;
//!
//! let cri = CriClient::connect_lazy("unix:///run/containerd/containerd.sock")?;
//! let version = cri.version().await?;
//! println!("{} {} (CRI {})", version.runtime_name, version.runtime_version, version.runtime_api_version);
//! # Ok(()) }
//! ```

pub mod labels;
pub mod view;

use std::collections::HashMap;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use k8s_cri::v1 as cri;
use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use tonic::transport::{Channel, Endpoint, Uri};

/// Why a CRI call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CriError {
    /// The endpoint is not `unix:///path` (or a plain absolute path).
    #[error("CRI endpoint {endpoint:?}: expected unix:///path/to/socket")]
    Endpoint {
        /// What was given.
        endpoint: String,
    },
    /// The runtime answered with an error (or could not be reached: code `Unavailable`).
    #[error("CRI {call}: {code:?}: {message}")]
    Status {
        /// The call.
        call: &'static str,
        /// The gRPC code (`NotFound` for unknown containers and missing image tags).
        code: tonic::Code,
        /// The runtime's message.
        message: String,
    },
    /// The call did not finish in time.
    #[error("CRI {call}: no answer within {timeout:?}")]
    Timeout {
        /// The call.
        call: &'static str,
        /// How long was waited.
        timeout: Duration,
    },
}

impl CriError {
    /// Whether the runtime said the object does not exist.
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::Status {
                code: tonic::Code::NotFound,
                ..
            }
        )
    }

    fn status(call: &'static str) -> impl FnOnce(tonic::Status) -> Self {
        move |status| Self::Status {
            call,
            code: status.code(),
            message: status.message().to_owned(),
        }
    }
}

/// How long ordinary calls may take (`StopContainer` and `PullImage` get their own bounds).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A CRI v1 client: the runtime and image services over one connection. Cheap to clone.
#[derive(Clone, Debug)]
pub struct CriClient {
    endpoint: String,
    runtime: RuntimeServiceClient<Channel>,
    images: ImageServiceClient<Channel>,
}

/// The socket path of a `unix:///path` endpoint (a bare absolute path is accepted too).
///
/// # Errors
/// Any other form.
pub fn socket_path(endpoint: &str) -> Result<String, CriError> {
    let path = endpoint.strip_prefix("unix://").unwrap_or(endpoint);
    if path.starts_with('/') {
        Ok(path.to_owned())
    } else {
        Err(CriError::Endpoint {
            endpoint: endpoint.to_owned(),
        })
    }
}

async fn timed<T>(
    call: &'static str,
    timeout: Duration,
    future: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, CriError> {
    match tokio::time::timeout(timeout, future).await {
        Ok(Ok(response)) => Ok(response.into_inner()),
        Ok(Err(status)) => Err(CriError::status(call)(status)),
        Err(_) => Err(CriError::Timeout { call, timeout }),
    }
}

impl CriClient {
    /// A client for `endpoint` that connects on first use (and reconnects after the runtime restarts), so
    /// an agent can start before its runtime.
    ///
    /// # Errors
    /// The endpoint is not a unix socket.
    pub fn connect_lazy(endpoint: &str) -> Result<Self, CriError> {
        let path = socket_path(endpoint)?;
        let channel = Endpoint::from_static("http://[::]")
            .connect_timeout(Duration::from_secs(5))
            .connect_with_connector_lazy(tower::service_fn(move |_: Uri| {
                let path = path.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(path).await?;
                    Ok::<_, std::io::Error>(TokioIo::new(stream))
                }
            }));
        Ok(Self {
            endpoint: endpoint.to_owned(),
            runtime: RuntimeServiceClient::new(channel.clone()),
            images: ImageServiceClient::new(channel),
        })
    }

    /// The endpoint this client talks to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `Version`: the runtime's name (`containerd`: the prefix of container IDs in pod status) and versions.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn version(&self) -> Result<cri::VersionResponse, CriError> {
        let request = cri::VersionRequest {
            version: "v1".into(),
        };
        timed(
            "Version",
            CALL_TIMEOUT,
            self.runtime.clone().version(request),
        )
        .await
    }

    /// `ListContainers` whose labels include all of `labels`.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn list_containers(
        &self,
        labels: HashMap<String, String>,
    ) -> Result<Vec<cri::Container>, CriError> {
        let request = cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                label_selector: labels,
                ..Default::default()
            }),
        };
        timed(
            "ListContainers",
            CALL_TIMEOUT,
            self.runtime.clone().list_containers(request),
        )
        .await
        .map(|response| response.containers)
    }

    /// `ContainerStatus` (start and finish times, exit code, reason).
    ///
    /// # Errors
    /// See [`CriError`] (`NotFound` for an unknown ID).
    pub async fn container_status(&self, id: &str) -> Result<cri::ContainerStatus, CriError> {
        let request = cri::ContainerStatusRequest {
            container_id: id.to_owned(),
            verbose: false,
        };
        let response = timed(
            "ContainerStatus",
            CALL_TIMEOUT,
            self.runtime.clone().container_status(request),
        )
        .await?;
        response.status.ok_or(CriError::Status {
            call: "ContainerStatus",
            code: tonic::Code::NotFound,
            message: format!("no status for container {id}"),
        })
    }

    /// `StopContainer`: SIGTERM, then SIGKILL after `grace_seconds` (0: at once).
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn stop_container(&self, id: &str, grace_seconds: i64) -> Result<(), CriError> {
        let request = cri::StopContainerRequest {
            container_id: id.to_owned(),
            timeout: grace_seconds,
        };
        let bound = Duration::from_secs(u64::try_from(grace_seconds).unwrap_or_default())
            .saturating_add(CALL_TIMEOUT);
        timed(
            "StopContainer",
            bound,
            self.runtime.clone().stop_container(request),
        )
        .await
        .map(drop)
    }

    /// `ExecSync`: runs `command` in the container; the exit code and output.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn exec_sync(
        &self,
        id: &str,
        command: Vec<String>,
        timeout: Duration,
    ) -> Result<cri::ExecSyncResponse, CriError> {
        let request = cri::ExecSyncRequest {
            container_id: id.to_owned(),
            cmd: command,
            timeout: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
        };
        timed(
            "ExecSync",
            timeout.saturating_add(Duration::from_secs(5)),
            self.runtime.clone().exec_sync(request),
        )
        .await
    }

    /// `PodSandboxStatus` (IP, state, labels).
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn sandbox_status(&self, id: &str) -> Result<cri::PodSandboxStatus, CriError> {
        let request = cri::PodSandboxStatusRequest {
            pod_sandbox_id: id.to_owned(),
            verbose: false,
        };
        let response = timed(
            "PodSandboxStatus",
            CALL_TIMEOUT,
            self.runtime.clone().pod_sandbox_status(request),
        )
        .await?;
        response.status.ok_or(CriError::Status {
            call: "PodSandboxStatus",
            code: tonic::Code::NotFound,
            message: format!("no status for sandbox {id}"),
        })
    }

    /// `ListPodSandbox` whose labels include all of `labels`.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn list_sandboxes(
        &self,
        labels: HashMap<String, String>,
    ) -> Result<Vec<cri::PodSandbox>, CriError> {
        let request = cri::ListPodSandboxRequest {
            filter: Some(cri::PodSandboxFilter {
                label_selector: labels,
                ..Default::default()
            }),
        };
        timed(
            "ListPodSandbox",
            CALL_TIMEOUT,
            self.runtime.clone().list_pod_sandbox(request),
        )
        .await
        .map(|response| response.items)
    }

    /// `RunPodSandbox`: the new sandbox's ID.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn run_sandbox(&self, config: cri::PodSandboxConfig) -> Result<String, CriError> {
        let request = cri::RunPodSandboxRequest {
            config: Some(config),
            ..Default::default()
        };
        timed(
            "RunPodSandbox",
            Duration::from_secs(120),
            self.runtime.clone().run_pod_sandbox(request),
        )
        .await
        .map(|response| response.pod_sandbox_id)
    }

    /// `StopPodSandbox` then `RemovePodSandbox` (which also removes its containers).
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn remove_sandbox(&self, id: &str) -> Result<(), CriError> {
        let stop = cri::StopPodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        timed(
            "StopPodSandbox",
            Duration::from_secs(120),
            self.runtime.clone().stop_pod_sandbox(stop),
        )
        .await?;
        let remove = cri::RemovePodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        timed(
            "RemovePodSandbox",
            CALL_TIMEOUT,
            self.runtime.clone().remove_pod_sandbox(remove),
        )
        .await
        .map(drop)
    }

    /// `CreateContainer` then `StartContainer`: the new container's ID.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn create_and_start(
        &self,
        sandbox_id: &str,
        config: cri::ContainerConfig,
        sandbox_config: cri::PodSandboxConfig,
    ) -> Result<String, CriError> {
        let request = cri::CreateContainerRequest {
            pod_sandbox_id: sandbox_id.to_owned(),
            config: Some(config),
            sandbox_config: Some(sandbox_config),
        };
        let id = timed(
            "CreateContainer",
            Duration::from_secs(60),
            self.runtime.clone().create_container(request),
        )
        .await?
        .container_id;
        let start = cri::StartContainerRequest {
            container_id: id.clone(),
        };
        timed(
            "StartContainer",
            Duration::from_secs(60),
            self.runtime.clone().start_container(start),
        )
        .await?;
        Ok(id)
    }

    /// `RemoveContainer`.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn remove_container(&self, id: &str) -> Result<(), CriError> {
        let request = cri::RemoveContainerRequest {
            container_id: id.to_owned(),
        };
        timed(
            "RemoveContainer",
            CALL_TIMEOUT,
            self.runtime.clone().remove_container(request),
        )
        .await
        .map(drop)
    }

    /// `ImageStatus`: the image when the runtime has it.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn image_status(&self, image: &str) -> Result<Option<cri::Image>, CriError> {
        let request = cri::ImageStatusRequest {
            image: Some(image_spec(image)),
            verbose: false,
        };
        timed(
            "ImageStatus",
            CALL_TIMEOUT,
            self.images.clone().image_status(request),
        )
        .await
        .map(|response| response.image)
    }

    /// `ListImages`.
    ///
    /// # Errors
    /// See [`CriError`].
    pub async fn list_images(&self) -> Result<Vec<cri::Image>, CriError> {
        timed(
            "ListImages",
            CALL_TIMEOUT,
            self.images
                .clone()
                .list_images(cri::ListImagesRequest::default()),
        )
        .await
        .map(|response| response.images)
    }

    /// `PullImage` with optional credentials and sandbox metadata, bounded by `timeout`: the image reference
    /// the runtime reports (containerd: the image ID, a config digest).
    ///
    /// # Errors
    /// See [`CriError`] (`NotFound` for a missing tag, `Unknown` with `401 Unauthorized` for bad
    /// credentials, [`CriError::Timeout`] after `timeout`).
    pub async fn pull_image(
        &self,
        image: &str,
        auth: Option<cri::AuthConfig>,
        sandbox: Option<cri::PodSandboxConfig>,
        timeout: Duration,
    ) -> Result<String, CriError> {
        let request = cri::PullImageRequest {
            image: Some(image_spec(image)),
            auth,
            sandbox_config: sandbox,
        };
        timed(
            "PullImage",
            timeout,
            self.images.clone().pull_image(request),
        )
        .await
        .map(|response| response.image_ref)
    }
}

/// An `ImageSpec` naming `image`.
#[must_use]
pub fn image_spec(image: &str) -> cri::ImageSpec {
    cri::ImageSpec {
        image: image.to_owned(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            socket_path("unix:///run/containerd/containerd.sock").unwrap(),
            "/run/containerd/containerd.sock"
        );
        assert_eq!(socket_path("/run/x.sock").unwrap(), "/run/x.sock");
        assert!(socket_path("tcp://127.0.0.1:1").is_err());
        assert!(socket_path("unix://relative").is_err());
    }

    #[tokio::test]
    async fn an_absent_runtime_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("missing.sock");
        let client = CriClient::connect_lazy(&format!("unix://{}", socket.display())).unwrap();
        let error = client.version().await.unwrap_err();
        assert!(
            matches!(
                error,
                CriError::Status {
                    code: tonic::Code::Unavailable,
                    ..
                }
            ),
            "{error}"
        );
        assert!(!error.is_not_found());
    }
}
