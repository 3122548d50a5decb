//! Container launch priority (upstream `apis/apps/pub/launch_priority.go`): which containers an in-place update
//! patches first.
//!
//! The pod webhook injects a `KRUISE_CONTAINER_BARRIER` env var into every container of a pod that asks for
//! ordered launch, with `valueFrom.configMapKeyRef` = `{name: "<pod>-barrier", key: "p_<priority>"}`:
//!
//! * the pod annotation `apps.kruise.io/container-launch-priority: Ordered` gives container `i` priority `-i`
//!   (the first container starts first);
//! * otherwise `KRUISE_CONTAINER_PRIORITY` env vars (integers) give the priorities, used only when some is
//!   non-zero and they are not all equal;
//! * pods with a single container get nothing.
//!
//! In-place updates read the priority back from the barrier env ([`barrier_priority`]), not from the annotation
//! or the user env.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMapKeySelector, Container, EnvVar, EnvVarSource, PodSpec};
use kruise_api::keys::launch_priority::{
    BARRIER_CONFIG_MAP_SUFFIX, BARRIER_ENV, BARRIER_KEY_PREFIX, LAUNCH_ORDERED,
    LAUNCH_PRIORITY_ANNOTATION, PRIORITY_ENV,
};

/// A `KRUISE_CONTAINER_PRIORITY` value that is not an integer (the webhook rejects the pod).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("container {container}: {PRIORITY_ENV}={value:?} is not an integer")]
pub struct PriorityError {
    /// The container's name.
    pub container: String,
    /// The value found.
    pub value: String,
}

/// The priority of a container as the in-place update reads it: the integer after the first two characters of
/// its first `KRUISE_CONTAINER_BARRIER` env var's config map key (`p_10` → 10), `None` without that env var.
///
/// Like Go's `strconv.Atoi` with the error ignored, an unparsable suffix is 0 and an out-of-range one saturates.
/// Upstream crashes on a barrier env var without `configMapKeyRef` or with a key shorter than two bytes; this
/// crate reads those as priority 0.
#[must_use]
pub fn barrier_priority(container: &Container) -> Option<i64> {
    let env = container
        .env
        .as_ref()?
        .iter()
        .find(|env| env.name == BARRIER_ENV)?;
    let key = env
        .value_from
        .as_ref()
        .and_then(|from| from.config_map_key_ref.as_ref())
        .map_or("", |selector| selector.key.as_str());
    Some(atoi(key.get(2..).unwrap_or("")))
}

/// Go's `strconv.Atoi` with the error ignored: 0 on a syntax error, saturated on overflow.
fn atoi(text: &str) -> i64 {
    match text.parse::<i64>() {
        Ok(value) => value,
        Err(_) => {
            let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                if text.starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                }
            } else {
                0
            }
        }
    }
}

/// The priorities the pod webhook injects for a pod, one per container, or `None` when it injects nothing.
///
/// # Errors
/// [`PriorityError`] for a `KRUISE_CONTAINER_PRIORITY` that is not an integer.
pub fn webhook_priorities(
    spec: &PodSpec,
    annotations: Option<&BTreeMap<String, String>>,
) -> Result<Option<Vec<i64>>, PriorityError> {
    if spec.containers.len() == 1 {
        return Ok(None);
    }
    let ordered = annotations
        .and_then(|annotations| annotations.get(LAUNCH_PRIORITY_ANNOTATION))
        .is_some_and(|value| value == LAUNCH_ORDERED);
    if ordered {
        return Ok(Some(
            (0..spec.containers.len())
                .map(|index| -i64::try_from(index).unwrap_or(i64::MAX))
                .collect(),
        ));
    }
    let mut priorities = vec![0_i64; spec.containers.len()];
    let mut any_set = false;
    for (slot, container) in priorities.iter_mut().zip(&spec.containers) {
        for env in container
            .env
            .iter()
            .flatten()
            .filter(|env| env.name == PRIORITY_ENV)
        {
            let value = env.value.as_deref().unwrap_or("");
            *slot = value.parse().map_err(|_| PriorityError {
                container: container.name.clone(),
                value: value.to_owned(),
            })?;
            any_set |= *slot != 0;
        }
    }
    let all_equal = priorities
        .windows(2)
        .all(|pair| pair.first() == pair.get(1));
    Ok((any_set && !all_equal).then_some(priorities))
}

/// The barrier env var the webhook injects for a priority (`p_<priority>` in `<pod>-barrier`).
#[must_use]
pub fn barrier_env(priority: i64, pod_name: &str) -> EnvVar {
    EnvVar {
        name: BARRIER_ENV.to_owned(),
        value_from: Some(EnvVarSource {
            config_map_key_ref: Some(ConfigMapKeySelector {
                name: format!("{pod_name}{BARRIER_CONFIG_MAP_SUFFIX}"),
                key: format!("{BARRIER_KEY_PREFIX}{priority}"),
                ..ConfigMapKeySelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// What the pod webhook does on create: append the barrier env var to every container when the pod asks for
/// launch priorities. Returns whether it changed the pod spec.
///
/// # Errors
/// [`PriorityError`] for a `KRUISE_CONTAINER_PRIORITY` that is not an integer.
pub fn inject_barriers(
    spec: &mut PodSpec,
    annotations: Option<&BTreeMap<String, String>>,
    pod_name: &str,
) -> Result<bool, PriorityError> {
    let Some(priorities) = webhook_priorities(spec, annotations)? else {
        return Ok(false);
    };
    for (container, priority) in spec.containers.iter_mut().zip(priorities) {
        container
            .env
            .get_or_insert_with(Vec::new)
            .push(barrier_env(priority, pod_name));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(name: &str, priority: Option<&str>) -> Container {
        Container {
            name: name.into(),
            env: priority.map(|value| {
                vec![EnvVar {
                    name: PRIORITY_ENV.into(),
                    value: Some(value.into()),
                    ..EnvVar::default()
                }]
            }),
            ..Container::default()
        }
    }

    #[test]
    fn barrier_keys() {
        let with_key = |key: &str| Container {
            env: Some(vec![barrier_env(0, "p")]).map(|mut env| {
                if let Some(selector) = env[0]
                    .value_from
                    .as_mut()
                    .and_then(|f| f.config_map_key_ref.as_mut())
                {
                    selector.key = key.into();
                }
                env
            }),
            ..Container::default()
        };
        assert_eq!(barrier_priority(&with_key("p_10")), Some(10));
        assert_eq!(barrier_priority(&with_key("p_-3")), Some(-3));
        assert_eq!(barrier_priority(&with_key("p_x")), Some(0));
        assert_eq!(barrier_priority(&with_key("p")), Some(0));
        assert_eq!(
            barrier_priority(&with_key("p_99999999999999999999")),
            Some(i64::MAX)
        );
        assert_eq!(barrier_priority(&Container::default()), None);
        let env = barrier_env(-2, "web-0");
        let selector = env.value_from.unwrap().config_map_key_ref.unwrap();
        assert_eq!(
            (selector.name.as_str(), selector.key.as_str()),
            ("web-0-barrier", "p_-2")
        );
    }

    #[test]
    fn webhook_rules() {
        let spec = |containers: Vec<Container>| PodSpec {
            containers,
            ..PodSpec::default()
        };
        let ordered: BTreeMap<String, String> = [(
            LAUNCH_PRIORITY_ANNOTATION.to_owned(),
            LAUNCH_ORDERED.to_owned(),
        )]
        .into();
        let three = spec(vec![
            container("a", None),
            container("b", None),
            container("c", None),
        ]);
        assert_eq!(
            webhook_priorities(&three, Some(&ordered)).unwrap(),
            Some(vec![0, -1, -2])
        );
        assert_eq!(webhook_priorities(&three, None).unwrap(), None);
        let one = spec(vec![container("a", Some("5"))]);
        assert_eq!(webhook_priorities(&one, Some(&ordered)).unwrap(), None);
        let user = spec(vec![
            container("sidecar", Some("10")),
            container("main", None),
        ]);
        assert_eq!(webhook_priorities(&user, None).unwrap(), Some(vec![10, 0]));
        let equal = spec(vec![container("a", Some("3")), container("b", Some("3"))]);
        assert_eq!(webhook_priorities(&equal, None).unwrap(), None);
        let bad = spec(vec![container("a", Some("high")), container("b", None)]);
        assert_eq!(
            webhook_priorities(&bad, None).unwrap_err().to_string(),
            "container a: KRUISE_CONTAINER_PRIORITY=\"high\" is not an integer"
        );
        let lowercase: BTreeMap<String, String> =
            [(LAUNCH_PRIORITY_ANNOTATION.to_owned(), "ordered".to_owned())].into();
        assert_eq!(webhook_priorities(&three, Some(&lowercase)).unwrap(), None);
        let ordered_over_envs = spec(vec![container("a", Some("5")), container("b", Some("9"))]);
        assert_eq!(
            webhook_priorities(&ordered_over_envs, Some(&ordered)).unwrap(),
            Some(vec![0, -1])
        );
        let zero = spec(vec![container("a", Some("0")), container("b", None)]);
        assert_eq!(webhook_priorities(&zero, None).unwrap(), None);
        let signed = spec(vec![container("a", Some("+2")), container("b", Some("1"))]);
        assert_eq!(webhook_priorities(&signed, None).unwrap(), Some(vec![2, 1]));
        let negative = spec(vec![
            container("a", Some("10")),
            container("b", None),
            container("c", Some("-3")),
        ]);
        assert_eq!(
            webhook_priorities(&negative, None).unwrap(),
            Some(vec![10, 0, -3])
        );
    }

    #[test]
    fn priorities_read_like_go_atoi() {
        for bad in [
            "",
            "1.5",
            "ten",
            "9223372036854775808",
            " 1",
            "1_000",
            "0x10",
        ] {
            let pod = PodSpec {
                containers: vec![container("a", Some(bad)), container("b", Some("1"))],
                ..PodSpec::default()
            };
            let error = webhook_priorities(&pod, None).unwrap_err();
            assert_eq!(
                error,
                PriorityError {
                    container: "a".into(),
                    value: bad.into()
                },
                "{bad:?}"
            );
        }
    }
}
