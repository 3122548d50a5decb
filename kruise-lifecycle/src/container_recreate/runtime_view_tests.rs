use super::*;

fn incarnation(
    id: &str,
    name: &str,
    restarts: i32,
    created: i64,
    state: RuntimeState,
) -> ContainerView {
    ContainerView {
        name: name.into(),
        id: id.into(),
        state,
        restart_count: restarts,
        created_at_ns: created,
        ..ContainerView::default()
    }
}

#[test]
fn latest_is_the_newest_incarnation() {
    let view = PodView {
        runtime: "containerd".into(),
        containers: vec![
            incarnation("old", "main", 0, 10, RuntimeState::Exited),
            incarnation("new", "main", 1, 20, RuntimeState::Running),
            incarnation("side", "sidecar", 0, 5, RuntimeState::Running),
            // Same creation time: the larger restart count wins.
            incarnation("tie-0", "tied", 0, 7, RuntimeState::Exited),
            incarnation("tie-1", "tied", 1, 7, RuntimeState::Running),
        ],
    };
    assert_eq!(view.latest("main").unwrap().id, "new");
    assert_eq!(view.latest("tied").unwrap().id, "tie-1");
    assert_eq!(
        view.full_id(view.latest("sidecar").unwrap()),
        "containerd://side"
    );
    assert!(view.latest("missing").is_none());
}

#[test]
fn container_ids_split() {
    assert_eq!(
        split_container_id("containerd://abc"),
        Some(("containerd", "abc"))
    );
    assert_eq!(split_container_id("abc"), None);
    assert_eq!(split_container_id("://abc"), None);
    assert_eq!(split_container_id("containerd://"), None);
    assert_eq!(nanos(0), None);
    assert_eq!(nanos(-1), None);
    assert_eq!(
        nanos(1_700_000_000_000_000_000).unwrap().as_second(),
        1_700_000_000
    );
}
