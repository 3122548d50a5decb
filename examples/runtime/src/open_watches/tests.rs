use http::{Request, Response, Uri};
use tower::{Layer, Service, ServiceExt};

use super::{OpenWatches, watched_resource};

fn uri(text: &str) -> Uri {
    text.parse().unwrap()
}

#[test]
fn watched_resources_are_named_by_plural_and_group() {
    assert_eq!(
        watched_resource(&uri("/api/v1/pods?watch=true&resourceVersion=5")).as_deref(),
        Some("pods")
    );
    assert_eq!(
        watched_resource(&uri(
            "/api/v1/namespaces/ns/pods?allowWatchBookmarks=true&watch=true"
        ))
        .as_deref(),
        Some("pods")
    );
    assert_eq!(
        watched_resource(&uri("/apis/apps.kruise.io/v1beta1/clonesets?watch=true")).as_deref(),
        Some("clonesets.apps.kruise.io")
    );
    assert_eq!(watched_resource(&uri("/api/v1/pods?limit=500")), None);
    assert_eq!(watched_resource(&uri("/api/v1/pods?watch=false")), None);
    assert_eq!(watched_resource(&uri("/api/v1/pods")), None);
}

#[tokio::test]
async fn a_watch_counts_while_its_body_lives() {
    let watches = OpenWatches::new();
    let mut service = watches
        .layer()
        .layer(tower::service_fn(|_: Request<()>| async {
            Ok::<_, std::convert::Infallible>(Response::new(String::from("{}")))
        }));
    let watch = service
        .ready()
        .await
        .unwrap()
        .call(Request::get("/api/v1/pods?watch=true").body(()).unwrap())
        .await
        .unwrap();
    let list = service
        .ready()
        .await
        .unwrap()
        .call(Request::get("/api/v1/pods?limit=500").body(()).unwrap())
        .await
        .unwrap();
    assert_eq!(watches.open("pods"), 1);
    drop(list);
    assert_eq!(watches.open("pods"), 1);
    drop(watch);
    assert_eq!(watches.open("pods"), 0);
}

#[test]
fn the_gauge_is_exported() {
    let watches = OpenWatches::new();
    let mut registry = prometheus_client::registry::Registry::with_prefix("kruise_manager");
    watches.register(&mut registry);
    let _open = watches.opened("pods".into());
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    assert!(
        text.contains("kruise_manager_api_open_watches{resource=\"pods\"} 1"),
        "{text}"
    );
}
