//! Kubernetes' string form of a label selector (`metav1.LabelSelectorAsSelector(...).String()`), written to
//! `status.labelSelector` for the scale subresource.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// The selector as Kubernetes prints it: requirements sorted by key and joined by `,`; `k=v` for
/// `matchLabels`, `k in (a,b)` / `k notin (a,b)` with sorted values, `k` for `Exists`, `!k` for
/// `DoesNotExist`. An empty selector is `""`.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
/// use kruise_schedule::selector_string::selector_string;
///
/// let selector = LabelSelector {
///     match_labels: Some([("app".to_owned(), "web".to_owned())].into()),
///     match_expressions: Some(vec![LabelSelectorRequirement {
///         key: "tier".into(),
///         operator: "In".into(),
///         values: Some(vec!["b".into(), "a".into()]),
///     }]),
/// };
/// assert_eq!(selector_string(&selector), "app=web,tier in (a,b)");
/// ```
#[must_use]
pub fn selector_string(selector: &LabelSelector) -> String {
    let mut requirements: Vec<(&str, String)> = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        requirements.push((key, format!("{key}={value}")));
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let key = requirement.key.as_str();
        let mut values: Vec<&str> = requirement
            .values
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let text = match requirement.operator.as_str() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({})", values.join(",")),
        };
        requirements.push((key, text));
    }
    requirements.sort_by(|a, b| a.0.cmp(b.0));
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}
