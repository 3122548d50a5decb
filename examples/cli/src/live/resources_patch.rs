//! The write of `set resources`, decided from the workload as read (pure): `--limits` and `--requests` as
//! kubectl takes them (`cpu=200m,memory=512Mi`), each quantity checked and written in the canonical form the
//! API server stores, the other resources of each selected container kept.

use kruise_inplace::quantity;
use serde_json::{Map, Value};

use super::container_selector::{container_lists_patch, update_containers};

/// One `NAME=QUANTITY` of `--limits` or `--requests`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceQuantity {
    /// The resource (`cpu`, `memory`, `nvidia.com/gpu`, ...).
    pub resource: String,
    /// The quantity in canonical form (`0.5` is written `500m`).
    pub quantity: String,
}

impl std::str::FromStr for ResourceQuantity {
    type Err = String;

    /// Parses `NAME=QUANTITY`; the quantity must parse as Kubernetes reads quantities.
    fn from_str(text: &str) -> Result<Self, String> {
        let (resource, value) = text
            .split_once('=')
            .filter(|(resource, _)| !resource.is_empty())
            .ok_or_else(|| format!("{text:?}: expected RESOURCE=QUANTITY, e.g. cpu=200m"))?;
        let quantity = quantity::canonical(value).map_err(|_| {
            format!("{resource}={value}: {value:?} is not a quantity (e.g. 200m, 0.5, 512Mi, 1G)")
        })?;
        Ok(Self {
            resource: resource.to_owned(),
            quantity,
        })
    }
}

/// What `set resources` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceChanges {
    /// `--limits`.
    pub limits: Vec<ResourceQuantity>,
    /// `--requests`.
    pub requests: Vec<ResourceQuantity>,
}

fn assign(resources: &mut Map<String, Value>, key: &str, quantities: &[ResourceQuantity]) {
    if quantities.is_empty() {
        return;
    }
    let list = resources
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !list.is_object() {
        *list = Value::Object(Map::new());
    }
    if let Some(list) = list.as_object_mut() {
        for wanted in quantities {
            let unchanged = list
                .get(&wanted.resource)
                .and_then(Value::as_str)
                .is_some_and(|current| quantity::same_value(current, &wanted.quantity));
            if !unchanged {
                list.insert(
                    wanted.resource.clone(),
                    Value::String(wanted.quantity.clone()),
                );
            }
        }
    }
}

/// Refuses a request above the limit of the same resource (the API server would refuse every pod).
fn check_requests_within_limits(container: &Map<String, Value>) -> Result<(), String> {
    let name = container
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let list = |key: &str| {
        container
            .get("resources")
            .and_then(|resources| resources.get(key))
            .and_then(Value::as_object)
    };
    let (Some(limits), Some(requests)) = (list("limits"), list("requests")) else {
        return Ok(());
    };
    for (resource, request) in requests {
        let (Some(request), Some(limit)) = (
            request.as_str(),
            limits.get(resource).and_then(Value::as_str),
        ) else {
            continue;
        };
        let (Ok(parsed_request), Ok(parsed_limit)) =
            (quantity::parse(request), quantity::parse(limit))
        else {
            continue;
        };
        if parsed_request > parsed_limit {
            return Err(format!(
                "container {name}: requests.{resource} {request} would exceed limits.{resource} {limit}"
            ));
        }
    }
    Ok(())
}

/// The patch of `set resources`, or `None` when every selected container already has those quantities.
///
/// # Errors
/// Neither limits nor requests given, no container matches `pattern`, or a request would exceed its limit.
pub fn set_resources(
    object: &Value,
    pattern: &str,
    changes: &ResourceChanges,
) -> Result<Option<Value>, String> {
    if changes.limits.is_empty() && changes.requests.is_empty() {
        return Err(
            "give --limits or --requests (or both), e.g. --limits cpu=200m,memory=512Mi".to_owned(),
        );
    }
    let lists = update_containers(object, pattern, |container| {
        let resources = container
            .entry("resources")
            .or_insert_with(|| Value::Object(Map::new()));
        if !resources.is_object() {
            *resources = Value::Object(Map::new());
        }
        if let Some(resources) = resources.as_object_mut() {
            assign(resources, "limits", &changes.limits);
            assign(resources, "requests", &changes.requests);
        }
        check_requests_within_limits(container)
    })?;
    Ok(lists.map(|lists| container_lists_patch(object, lists)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn quantities(text: &str) -> Vec<ResourceQuantity> {
        text.split(',').map(|q| q.parse().unwrap()).collect()
    }

    fn statefulset() -> Value {
        json!({
            "metadata": {"name": "db", "resourceVersion": "11"},
            "spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": "mysql", "resources": {"limits": {"cpu": "1", "ephemeral-storage": "1Gi"}}},
                {"name": "exporter", "image": "exporter"}
            ]}}}
        })
    }

    #[test]
    fn quantities_are_checked_and_written_canonically() {
        assert_eq!(
            "cpu=0.5".parse(),
            Ok(ResourceQuantity {
                resource: "cpu".into(),
                quantity: "500m".into()
            })
        );
        assert_eq!(quantities("memory=1536Mi")[0].quantity, "1536Mi");
        let error = "cpu=abc".parse::<ResourceQuantity>().unwrap_err();
        assert!(
            error.contains("cpu=abc") && error.contains("\"abc\""),
            "{error}"
        );
        assert!(
            "cpu"
                .parse::<ResourceQuantity>()
                .unwrap_err()
                .contains("RESOURCE=QUANTITY")
        );
        assert!("=1".parse::<ResourceQuantity>().is_err());
        assert!("cpu=".parse::<ResourceQuantity>().is_err());
    }

    #[test]
    fn the_patch_sets_the_quantities_of_the_selected_containers_and_keeps_the_rest() {
        let changes = ResourceChanges {
            limits: quantities("cpu=2,memory=512Mi"),
            requests: quantities("cpu=200m"),
        };
        let patch = set_resources(&statefulset(), "main", &changes)
            .unwrap()
            .unwrap();
        assert_eq!(patch["metadata"]["resourceVersion"], "11");
        let containers = &patch["spec"]["template"]["spec"]["containers"];
        assert_eq!(
            containers[0]["resources"],
            json!({"limits": {"cpu": "2", "memory": "512Mi", "ephemeral-storage": "1Gi"},
                   "requests": {"cpu": "200m"}})
        );
        assert_eq!(
            containers[1],
            json!({"name": "exporter", "image": "exporter"})
        );
        let every = set_resources(&statefulset(), "*", &changes)
            .unwrap()
            .unwrap();
        assert_eq!(
            every["spec"]["template"]["spec"]["containers"][1]["resources"]["requests"]["cpu"],
            "200m"
        );
    }

    #[test]
    fn equal_quantities_change_nothing_and_bad_requests_are_refused() {
        let same = ResourceChanges {
            limits: quantities("cpu=1000m"),
            requests: vec![],
        };
        assert_eq!(set_resources(&statefulset(), "main", &same), Ok(None));
        let error = set_resources(&statefulset(), "main", &ResourceChanges::default()).unwrap_err();
        assert!(error.contains("--limits or --requests"), "{error}");
        let too_much = ResourceChanges {
            limits: vec![],
            requests: quantities("cpu=1500m"),
        };
        let error = set_resources(&statefulset(), "main", &too_much).unwrap_err();
        assert!(
            error.contains("container main")
                && error.contains("requests.cpu 1500m")
                && error.contains("limits.cpu 1"),
            "{error}"
        );
        let error = set_resources(&statefulset(), "nope", &same).unwrap_err();
        assert!(error.contains("\"nope\""), "{error}");
    }
}
