use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{Method, Request, Response};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use kube::client::Body;

use super::{FencedWrite, WriteFence, is_read};

/// A client whose "API server" records the method of every request it receives and answers an empty
/// ConfigMap.
fn recording_client() -> (kube::Client, Arc<Mutex<Vec<Method>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&received);
    let service = tower::service_fn(move |request: Request<Body>| {
        seen.lock().unwrap().push(request.method().clone());
        async {
            let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}"#;
            Ok::<_, std::convert::Infallible>(Response::new(Body::from(body.to_vec())))
        }
    });
    (kube::Client::new(service, "ns"), received)
}

fn config_map() -> ConfigMap {
    serde_json::from_value(serde_json::json!({"metadata": {"name": "c", "namespace": "ns"}}))
        .unwrap()
}

#[test]
fn only_reads_pass_a_closed_fence() {
    assert!(is_read(&Method::GET));
    assert!(is_read(&Method::HEAD));
    for write in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
        assert!(!is_read(&write), "{write}");
    }
}

#[test]
fn the_fence_admits_writes_only_before_its_deadline() {
    let fence = WriteFence::closed();
    let now = Instant::now();
    assert!(!fence.admits_writes_at(now), "a new fence is closed");
    fence.open_until(now + Duration::from_secs(3));
    assert!(fence.admits_writes_at(now + Duration::from_secs(2)));
    assert!(
        !fence.admits_writes_at(now + Duration::from_secs(4)),
        "a process waking after the deadline (frozen past its lease) must not write"
    );
    fence.open_until(now + Duration::from_secs(6));
    assert!(
        fence.admits_writes_at(now + Duration::from_secs(4)),
        "a renewal extends it"
    );
    fence.close();
    assert!(!fence.admits_writes_at(now));
}

#[tokio::test]
async fn a_guarded_client_reads_always_and_writes_only_while_the_fence_is_open() {
    let (client, received) = recording_client();
    let fence = WriteFence::closed();
    let api: Api<ConfigMap> = Api::namespaced(fence.guard(&client), "ns");

    api.get("c").await.expect("reads pass a closed fence");
    let refused = api
        .create(&PostParams::default(), &config_map())
        .await
        .expect_err("a closed fence refuses a create");
    let kube::Error::Service(error) = refused else {
        panic!("expected a service error, got {refused:?}");
    };
    let fenced = error.downcast_ref::<FencedWrite>().expect("a FencedWrite");
    assert_eq!(fenced.method, Method::POST);
    assert_eq!(fenced.path, "/api/v1/namespaces/ns/configmaps");
    assert!(api.delete("c", &DeleteParams::default()).await.is_err());
    assert_eq!(
        *received.lock().unwrap(),
        [Method::GET],
        "no write reached the server"
    );

    fence.open_until(Instant::now() + Duration::from_secs(3600));
    api.create(&PostParams::default(), &config_map())
        .await
        .expect("an open fence admits writes");
    fence.close();
    assert!(
        api.replace("c", &PostParams::default(), &config_map())
            .await
            .is_err()
    );
    assert_eq!(*received.lock().unwrap(), [Method::GET, Method::POST]);
}
