//! The elector against an in-memory Lease API (GET, POST, PUT with `resourceVersion` checks), on real time
//! with short timings; every wait has a generous deadline.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{Method, Request, Response, StatusCode};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};

use super::{LeaderElector, Outcome};
use crate::leader::decision::LeaderTiming;
use kruise_runtime::shutdown::{self, Shutdown};
use kruise_runtime::write_fence::WriteFence;

const WITHIN: Duration = Duration::from_secs(30);
/// A stop timeout no test may wait for: a drain would show as a timeout.
const NEVER: Duration = Duration::from_secs(3600);

fn timing() -> LeaderTiming {
    LeaderTiming {
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(200),
    }
}

/// The Lease API of one Lease.
#[derive(Default)]
struct FakeLeases {
    lease: Option<Lease>,
    version: u64,
    fail_writes: bool,
}

fn status(code: StatusCode, reason: &str) -> (StatusCode, Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
               "message": reason, "code": code.as_u16()}),
    )
}

impl FakeLeases {
    fn handle(&mut self, method: &Method, body: &[u8]) -> (StatusCode, Value) {
        if *method == Method::GET {
            return match &self.lease {
                Some(lease) => (StatusCode::OK, serde_json::to_value(lease).unwrap()),
                None => status(StatusCode::NOT_FOUND, "NotFound"),
            };
        }
        if self.fail_writes {
            return status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError");
        }
        let Ok(mut written) = serde_json::from_slice::<Lease>(body) else {
            return status(StatusCode::BAD_REQUEST, "BadRequest");
        };
        let current = self
            .lease
            .as_ref()
            .and_then(|lease| lease.metadata.resource_version.clone());
        let fresh = match *method {
            Method::POST => current.is_none(),
            _ => current.is_some() && written.metadata.resource_version == current,
        };
        if !fresh {
            return status(StatusCode::CONFLICT, "Conflict");
        }
        self.version += 1;
        written.metadata.resource_version = Some(self.version.to_string());
        self.lease = Some(written.clone());
        (StatusCode::OK, serde_json::to_value(written).unwrap())
    }

    fn holder(&self) -> Option<String> {
        self.lease
            .as_ref()
            .and_then(|lease| lease.spec.as_ref())
            .and_then(|spec| spec.holder_identity.clone())
    }

    /// Another participant takes the lease (a new record, as after a takeover).
    fn take_over(&mut self, holder: &str) {
        let lease = self.lease.as_mut().expect("a lease to take over");
        lease
            .spec
            .get_or_insert_with(Default::default)
            .holder_identity = Some(holder.into());
        self.version += 1;
        lease.metadata.resource_version = Some(self.version.to_string());
    }
}

fn client(state: &Arc<Mutex<FakeLeases>>) -> Client {
    let state = Arc::clone(state);
    let service = tower::service_fn(move |request: Request<Body>| {
        let state = Arc::clone(&state);
        async move {
            let (parts, body) = request.into_parts();
            let bytes = body.collect_bytes().await.unwrap_or_default();
            let (code, value) = state.lock().unwrap().handle(&parts.method, &bytes);
            let response = Response::builder()
                .status(code)
                .body(Body::from(serde_json::to_vec(&value).unwrap()))
                .unwrap();
            Ok::<_, Infallible>(response)
        }
    });
    Client::new(service, "ns")
}

/// Sets its flag when dropped: tells whether the leader's work was dropped (aborted or finished).
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Election {
    state: Arc<Mutex<FakeLeases>>,
    fence: WriteFence,
    trigger: shutdown::Trigger,
    leading: tokio::sync::oneshot::Receiver<()>,
    dropped: Arc<AtomicBool>,
    run: tokio::task::JoinHandle<Outcome>,
}

/// Starts an election whose work is `work` (given the leading signal); waits until it leads.
async fn leading_with<Fut>(work: impl FnOnce(Shutdown) -> Fut + Send + 'static) -> Election
where
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let state = Arc::new(Mutex::new(FakeLeases::default()));
    let fence = WriteFence::closed();
    let elector = LeaderElector::new(client(&state), "ns", "lease", "me", timing())
        .unwrap()
        .with_fence(fence.clone());
    let (trigger, shutdown) = shutdown::channel();
    let (started, leading) = tokio::sync::oneshot::channel();
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = SetOnDrop(Arc::clone(&dropped));
    let run = tokio::spawn(elector.run(shutdown, NEVER, move |signal| async move {
        let _guard = guard;
        let _ = started.send(());
        work(signal).await
    }));
    let mut election = Election {
        state,
        fence,
        trigger,
        leading,
        dropped,
        run,
    };
    tokio::time::timeout(WITHIN, &mut election.leading)
        .await
        .expect("became the leader")
        .expect("the work started");
    election
}

fn assert_fence_open(election: &Election) {
    assert!(
        election.fence.admits_writes_at(Instant::now()),
        "the fence is open while leading"
    );
}

/// Work that never looks at its leading signal: a drain would wait for the whole stop timeout.
async fn deaf_work(_leading: Shutdown) -> Result<(), String> {
    std::future::pending::<()>().await;
    Ok(())
}

async fn outcome(election: &mut Election) -> Outcome {
    tokio::time::timeout(WITHIN, &mut election.run)
        .await
        .expect("the election ended without waiting for the stop timeout")
        .expect("the election task")
}

#[tokio::test]
async fn a_lease_taken_by_another_holder_aborts_the_work_without_a_drain() {
    let mut election = leading_with(deaf_work).await;
    assert_fence_open(&election);
    election.state.lock().unwrap().take_over("other");
    assert_eq!(outcome(&mut election).await, Outcome::LostLeadership);
    assert!(
        election.dropped.load(Ordering::SeqCst),
        "the work was aborted"
    );
    assert!(!election.fence.admits_writes_at(Instant::now()));
    assert_eq!(
        election.state.lock().unwrap().holder().as_deref(),
        Some("other"),
        "a lost lease is not written"
    );
    drop(election.trigger);
}

#[tokio::test]
async fn renewals_failing_past_the_renew_deadline_abort_the_work() {
    let mut election = leading_with(deaf_work).await;
    assert_fence_open(&election);
    election.state.lock().unwrap().fail_writes = true;
    assert_eq!(outcome(&mut election).await, Outcome::LostLeadership);
    assert!(
        election.dropped.load(Ordering::SeqCst),
        "the work was aborted"
    );
    assert!(!election.fence.admits_writes_at(Instant::now()));
}

#[tokio::test]
async fn work_that_ends_while_leading_releases_the_lease() {
    let mut election =
        leading_with(|_leading| async { Err("controller fragile ended while leading".to_owned()) })
            .await;
    assert_eq!(
        outcome(&mut election).await,
        Outcome::WorkFailed("controller fragile ended while leading".into())
    );
    assert!(!election.fence.admits_writes_at(Instant::now()));
    assert_eq!(election.state.lock().unwrap().holder(), None, "released");
}

#[tokio::test]
async fn a_shutdown_drains_the_work_then_releases_the_lease() {
    let drained = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&drained);
    let mut election = leading_with(move |leading| async move {
        leading.wait().await;
        seen.store(true, Ordering::SeqCst);
        Ok(())
    })
    .await;
    assert_fence_open(&election);
    election.trigger.trigger();
    assert_eq!(outcome(&mut election).await, Outcome::ShutDown);
    assert!(
        drained.load(Ordering::SeqCst),
        "the work saw the stop and finished"
    );
    assert!(!election.fence.admits_writes_at(Instant::now()));
    assert_eq!(election.state.lock().unwrap().holder(), None, "released");
}
