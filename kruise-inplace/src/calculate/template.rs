//! The pod template inside a revision's data, read the way `calculate` needs it.

use serde_json::Value;

use super::Recreate;
use crate::go_types;
use crate::qos::{self, QosClass};

/// The pod template inside a revision's data.
pub(super) struct Template<'a> {
    pub(super) revision: &'a str,
    template: &'a Value,
}

static NULL: Value = Value::Null;

impl<'a> Template<'a> {
    pub(super) fn of(revision: &'a str, data: &'a Value) -> Result<Self, Recreate> {
        let invalid = |reason: &str| Recreate::InvalidRevision {
            revision: revision.to_owned(),
            reason: reason.to_owned(),
        };
        if !data.is_object() {
            return Err(invalid("data is not a JSON object"));
        }
        let spec = data.get("spec").unwrap_or(&NULL);
        if !(spec.is_object() || spec.is_null()) {
            return Err(invalid("spec is not an object"));
        }
        let template = spec.get("template").unwrap_or(&NULL);
        if !(template.is_object() || template.is_null()) {
            return Err(invalid("spec.template is not an object"));
        }
        Ok(Self { revision, template })
    }

    fn invalid(&self, reason: &str) -> Recreate {
        Recreate::InvalidRevision {
            revision: self.revision.to_owned(),
            reason: reason.to_owned(),
        }
    }

    fn pod_spec(&self) -> &'a Value {
        self.template.get("spec").unwrap_or(&NULL)
    }

    pub(super) fn containers(&self) -> Result<&'a [Value], Recreate> {
        match self.pod_spec().get("containers") {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(containers)) if containers.iter().all(Value::is_object) => {
                Ok(containers)
            }
            Some(_) => Err(self.invalid("spec.template.spec.containers is not a list of objects")),
        }
    }

    pub(super) fn container_name(&self, index: usize, path: &str) -> Result<&'a str, Recreate> {
        let containers = self.containers()?;
        let container = containers
            .get(index)
            .ok_or_else(|| Recreate::ContainerIndex {
                path: path.to_owned(),
                containers: containers.len(),
            })?;
        match container.get("name") {
            None | Some(Value::Null) => Ok(""),
            Some(Value::String(name)) => Ok(name),
            Some(_) => Err(self.invalid("a container name is not a string")),
        }
    }

    pub(super) fn qos_class(&self) -> Result<QosClass, Recreate> {
        qos::of_pod_spec(self.pod_spec()).map_err(|error| self.invalid(&error.to_string()))
    }

    /// The template's metadata as Go writes it (`creationTimestamp: null`, empty fields dropped).
    pub(super) fn metadata(&self) -> Result<Value, Recreate> {
        let mut meta = self
            .template
            .get("metadata")
            .cloned()
            .unwrap_or(Value::Null);
        if !(meta.is_object() || meta.is_null()) {
            return Err(self.invalid("spec.template.metadata is not an object"));
        }
        go_types::normalize(&mut meta, &go_types::OBJECT_META)
            .map_err(|error| self.invalid(&error.to_string()))?;
        Ok(meta)
    }
}
