//! The ControllerRevision of a UnitedDeployment's template (upstream `revision.go`, `newRevision`): its
//! data is `{"spec":{"template":{<spec.template>,"$patch":"replace"}}}` with sorted keys, its hash the
//! FNV-1 hash of that data followed by the collision count, safe-encoded as Kubernetes' history does, and
//! its name `<unitedDeployment>-<hash>`. The subset workloads and their pod templates carry that name in
//! the `controller-revision-hash` label.
//!
//! The data is written by serde from kruise-api's types, so it is not byte for byte what Go writes (Go
//! writes its zero values); the name is therefore not upstream's, but it is stable and changes exactly
//! when the template does.
//!
//! ```
//! use kruise_api::apps::v1beta1::SubsetTemplate;
//! use kruise_schedule::united_deployment::revision::template_revision;
//!
//! let template: SubsetTemplate = serde_json::from_value(serde_json::json!({
//!     "deploymentTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}}}
//! })).unwrap();
//! let first = template_revision("web", &template, 0).unwrap();
//! assert!(first.name.starts_with("web-"));
//! assert!(first.data.starts_with(r#"{"spec":{"template":{"$patch":"replace","deploymentTemplate""#));
//! assert_ne!(template_revision("web", &template, 1).unwrap().name, first.name);
//! ```

use kruise_api::apps::v1beta1::SubsetTemplate;
use kruise_inplace::revision::{Revision, hash, name};
use serde_json::{Map, Value};

use super::UnitedDeploymentError;

/// The revision of `template` for the UnitedDeployment `parent`, named with `collision_count` (the
/// UnitedDeployment's `status.collisionCount`, 0 when unset).
///
/// # Errors
/// The template does not serialise to a JSON object.
pub fn template_revision(
    parent: &str,
    template: &SubsetTemplate,
    collision_count: i32,
) -> Result<Revision, UnitedDeploymentError> {
    let value = serde_json::to_value(template)
        .map_err(|error| UnitedDeploymentError::Template(error.to_string()))?;
    let Value::Object(mut fields) = value else {
        return Err(UnitedDeploymentError::Template(
            "spec.template is not an object".to_owned(),
        ));
    };
    fields.insert("$patch".to_owned(), Value::String("replace".to_owned()));
    let mut spec = Map::new();
    spec.insert("template".to_owned(), Value::Object(fields));
    let mut data = Map::new();
    data.insert("spec".to_owned(), Value::Object(spec));
    let data = kruise_inplace::go_json::to_string_sorted(&Value::Object(data));
    let hash = hash(data.as_bytes(), Some(collision_count));
    Ok(Revision {
        name: name(parent, &hash),
        hash,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(image: &str) -> SubsetTemplate {
        serde_json::from_value(serde_json::json!({"cloneSetTemplate": {"spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": image}]}}}}}))
        .unwrap()
    }

    #[test]
    fn the_revision_changes_with_the_template_and_the_collision_count_only() {
        let first = template_revision("web", &template("nginx:1"), 0).unwrap();
        let again = template_revision("web", &template("nginx:1"), 0).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.name, format!("web-{}", first.hash));
        let changed = template_revision("web", &template("nginx:2"), 0).unwrap();
        assert_ne!(changed.hash, first.hash);
        let collided = template_revision("web", &template("nginx:1"), 1).unwrap();
        assert_ne!(collided.hash, first.hash);
        assert_eq!(collided.data, first.data);
    }
}
