//! v1alpha1 → v1beta1 → v1alpha1 is lossless for any value: objects are generated from the v1alpha1 CRD
//! schema (so the schema and the Rust types are checked against each other too), converted up and back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::schema_values::{self, Hints};
use kruise_api::convert::HubConversion;
use kube::CustomResourceExt;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn lossless<A: HubConversion + CustomResourceExt + std::fmt::Debug>(hints: &Hints) {
    let crd = A::crd();
    let version = &crd.spec.versions[0];
    let schema =
        serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
    let api_version = format!("{}/{}", crd.spec.group, version.name);
    let strategy = schema_values::object(&api_version, &crd.spec.names.kind, &schema, hints);
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |json| {
            let alpha: A = serde_json::from_value(json.clone()).map_err(|error| {
                TestCaseError::fail(format!(
                    "schema-valid object does not decode: {error}\n{json:#}"
                ))
            })?;
            let hub: A::Hub = kruise_api::convert::to_hub(&alpha);
            let back: A = kruise_api::convert::from_hub(&hub);
            prop_assert_eq!(
                &back,
                &alpha,
                "hub: {}",
                serde_json::to_string(&hub).unwrap()
            );
            Ok(())
        })
        .unwrap();
}

macro_rules! lossless_tests {
    ($($name:ident: $kind:ty, $hints:expr;)*) => {
        $(
            #[test]
            fn $name() {
                lossless::<$kind>(&$hints);
            }
        )*
    };
}

use kruise_api::apps::v1alpha1;
use kruise_api::keys;
use kruise_api::policy::v1alpha1 as policy_v1alpha1;

lossless_tests! {
    advancedcronjob: v1alpha1::AdvancedCronJob, Hints::with_keys(&[]);
    broadcastjob: v1alpha1::BroadcastJob, Hints::with_keys(&[]);
    cloneset: v1alpha1::CloneSet, Hints::with_keys(&[
        keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL,
        keys::inplace::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION,
        keys::inplace::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION,
        keys::inplace::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION,
    ]);
    persistentpodstate: v1alpha1::PersistentPodState, Hints::with_keys(&[]);
    resourcedistribution: v1alpha1::ResourceDistribution, Hints::with_keys(&[]);
    // `Unknown` is the reason a v1beta1 condition gets when it had none: a literal one must survive too.
    workloadspread: v1alpha1::WorkloadSpread, {
        let mut hints = Hints::with_keys(&[]);
        hints.strings.push("Unknown".to_owned());
        hints
    };
    imagelistpulljob: v1alpha1::ImageListPullJob, Hints::with_keys(&[]);
    imagepulljob: v1alpha1::ImagePullJob, Hints::with_keys(&[]);
    nodeimage: v1alpha1::NodeImage, Hints::with_keys(&[]);
    daemonset: v1alpha1::DaemonSet, {
        let mut hints = Hints::with_keys(&[keys::daemonset::PROGRESSIVE_CREATE_POD_ANNOTATION]);
        hints.strings.extend(["Surging", "Standard", "InPlaceIfPossible"].map(String::from));
        hints
    };
    statefulset: v1alpha1::StatefulSet, Hints::with_keys(&[]);
    // Reads only the (schemaless, so not generated) CloneSet template metadata, through the CloneSet mapping.
    uniteddeployment: v1alpha1::UnitedDeployment, Hints::with_keys(&[]);
    sidecarset: v1alpha1::SidecarSet, Hints::with_keys(&[
        keys::sidecarset::CUSTOM_VERSION_LABEL,
        keys::kubernetes::NAMESPACE_NAME_LABEL,
    ]);
    containerrecreaterequest: v1alpha1::ContainerRecreateRequest, Hints::with_keys(&[
        keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION,
        keys::crr::UNREADY_ACQUIRED_KEY,
    ]);
    podunavailablebudget: policy_v1alpha1::PodUnavailableBudget, Hints::with_keys(&[
        keys::pub_policy::PROTECT_OPERATIONS_ANNOTATION,
        keys::pub_policy::PROTECT_TOTAL_REPLICAS_ANNOTATION,
    ]);
}

/// Fields the types do not model survive v1alpha1 → v1beta1 → v1alpha1 through `convert_object` (a newer
/// OpenKruise's spec field, an unknown container field in the schemaless pod template, an unknown status
/// field), while a v1beta1-only field the types do model is still dropped going down, as upstream does.
#[test]
fn unknown_fields_survive_both_ways() {
    use kruise_api::convert::convert_object;
    use serde_json::json;

    let alpha = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "demo", "namespace": "ns"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "demo"}}, "scaleStrategy": {},
            "futureSpecField": {"level": 3},
            "template": {"metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": "nginx",
                    "futureContainerField": ["a", "b"]}]}},
            "updateStrategy": {"type": "InPlaceIfPossible", "futureStrategyField": true}},
        "status": {"replicas": 2, "futureStatusField": "x"}
    });
    let beta = convert_object(alpha.clone(), "apps.kruise.io/v1beta1").unwrap();
    assert_eq!(beta["spec"]["futureSpecField"], json!({"level": 3}));
    assert_eq!(
        beta["spec"]["template"]["spec"]["containers"][0]["futureContainerField"],
        json!(["a", "b"])
    );
    assert_eq!(beta["spec"]["updateStrategy"]["futureStrategyField"], true);
    assert_eq!(beta["status"]["futureStatusField"], "x");
    let back = convert_object(beta, "apps.kruise.io/v1alpha1").unwrap();
    assert_eq!(back["spec"], alpha["spec"]);
    assert_eq!(back["status"]["futureStatusField"], "x");

    // Known to v1beta1, not to v1alpha1: dropped going down (upstream's mapping), not carried; a field neither
    // version models is carried.
    let statefulset = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "s", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "s"}}, "template": {}, "reserveOrdinals": [1],
            "futureSpecField": 7}
    });
    let down = convert_object(statefulset, "apps.kruise.io/v1alpha1").unwrap();
    assert!(down["spec"].get("reserveOrdinals").is_none(), "{down:#}");
    assert_eq!(down["spec"]["futureSpecField"], 7, "{down:#}");
}
