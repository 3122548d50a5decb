//! The update spec: what an in-place update changes in a pod. Its JSON is the value of the
//! `apps.kruise.io/inplace-update-grace` annotation, byte for byte as upstream writes it.
//!
//! ```
//! use kruise_inplace::UpdateSpec;
//!
//! let mut spec = UpdateSpec { revision: "demo-5f8c6d7b9".into(), grace_seconds: 30, ..UpdateSpec::default() };
//! spec.container_images.insert("main".into(), "nginx:1.25".into());
//! spec.meta_data_patch = Some(br#"{"metadata":{"labels":{"k":"v"}}}"#.to_vec());
//! let json = spec.to_json();
//! assert_eq!(
//!     json,
//!     r#"{"revision":"demo-5f8c6d7b9","containerImages":{"main":"nginx:1.25"},"metaDataPatch":"eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiayI6InYifX19","graceSeconds":30}"#
//! );
//! assert_eq!(UpdateSpec::from_json(&json).unwrap(), spec);
//! ```

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::{PodTemplateSpec, ResourceRequirements};
use kruise_api::inplace::ContainerRefMetadata;
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};

use crate::go_json;

/// What an in-place update changes: container images, labels and annotations read by env vars, container
/// resources, and a strategic merge patch for the rest of the metadata (upstream's `UpdateSpec`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdateSpec {
    /// The revision the pod moves to.
    pub revision: String,
    /// New image per container name.
    pub container_images: BTreeMap<String, String>,
    /// Labels and annotations to write per container whose env vars read them.
    pub container_ref_metadata: BTreeMap<String, ContainerRefMetadata>,
    /// New cpu/memory requests and limits per container (vertical scaling).
    pub container_resources: BTreeMap<String, ResourceRequirements>,
    /// The strategic merge patch of the remaining metadata changes (raw JSON bytes; base64 in JSON).
    pub meta_data_patch: Option<Vec<u8>>,
    /// Whether env vars read from metadata change.
    pub update_env_from_metadata: bool,
    /// Seconds to wait between marking the pod not ready and patching it.
    pub grace_seconds: i32,
    /// Upstream's optional copy of the old template (kept when read; never set by this crate).
    pub old_template: Option<PodTemplateSpec>,
    /// Upstream's optional copy of the new template (kept when read; never set by this crate).
    pub new_template: Option<PodTemplateSpec>,
}

/// Why an update spec does not parse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateSpecError {
    /// The text is not JSON of an update spec.
    #[error("invalid update spec {value:?}: {source}")]
    Json {
        /// The text, cut to 200 characters.
        value: String,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
    /// `metaDataPatch` is not standard base64.
    #[error("invalid update spec: metaDataPatch {value:?} is not base64: {source}")]
    Base64 {
        /// The field's value, cut to 200 characters.
        value: String,
        /// What the decoder said.
        #[source]
        source: base64::DecodeError,
    },
}

impl UpdateSpec {
    /// Upstream's `VerticalUpdateOnly`: resources change, and neither images nor env-from-metadata do.
    #[must_use]
    pub fn vertical_update_only(&self) -> bool {
        !self.container_resources.is_empty()
            && self.container_images.is_empty()
            && !self.update_env_from_metadata
    }

    /// The JSON upstream writes (`json.Marshal`): fields in upstream's order, empty ones left out except
    /// `revision`, Go escaping, `metaDataPatch` in standard base64.
    #[must_use]
    pub fn to_json(&self) -> String {
        go_json::to_string_like_go(self)
    }

    /// Reads upstream's JSON. Like Go, unknown fields are ignored and `null` or missing fields are empty.
    ///
    /// # Errors
    /// [`UpdateSpecError`] when the text is not an update spec.
    pub fn from_json(text: &str) -> Result<Self, UpdateSpecError> {
        let error = |source| UpdateSpecError::Json {
            value: text.chars().take(200).collect(),
            source,
        };
        let mut json: serde_json::Value = serde_json::from_str(text).map_err(error)?;
        // Go reads a `null` entry or field as its zero value.
        if let Some(serde_json::Value::Object(entries)) = json.get_mut("containerRefMetadata") {
            for entry in entries.values_mut() {
                if entry.is_null() {
                    *entry = serde_json::Value::Object(serde_json::Map::new());
                }
                if let serde_json::Value::Object(fields) = entry {
                    fields.retain(|key, value| !value.is_null() || key == "creationTimestamp");
                    for map in ["labels", "annotations"] {
                        if let Some(serde_json::Value::Object(map)) = fields.get_mut(map) {
                            for value in map.values_mut().filter(|value| value.is_null()) {
                                *value = serde_json::Value::String(String::new());
                            }
                        }
                    }
                }
            }
        }
        if let Some(serde_json::Value::Object(images)) = json.get_mut("containerImages") {
            for value in images.values_mut().filter(|value| value.is_null()) {
                *value = serde_json::Value::String(String::new());
            }
        }
        let wire: Wire = serde_json::from_value(json).map_err(error)?;
        let meta_data_patch = match wire.meta_data_patch {
            None => None,
            Some(encoded) => {
                // Go's decoder skips line breaks inside base64 text.
                let compact: String = encoded
                    .chars()
                    .filter(|c| !matches!(c, '\r' | '\n'))
                    .collect();
                Some(STANDARD.decode(compact.as_bytes()).map_err(|source| {
                    UpdateSpecError::Base64 {
                        value: encoded.chars().take(200).collect(),
                        source,
                    }
                })?)
            }
        };
        Ok(Self {
            revision: wire.revision.unwrap_or_default(),
            container_images: wire.container_images.unwrap_or_default(),
            container_ref_metadata: wire.container_ref_metadata.unwrap_or_default(),
            container_resources: wire.container_resources.unwrap_or_default(),
            meta_data_patch,
            update_env_from_metadata: wire.update_env_from_metadata.unwrap_or_default(),
            grace_seconds: wire.grace_seconds.unwrap_or_default(),
            old_template: wire.old_template,
            new_template: wire.new_template,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    #[serde(default)]
    revision: Option<String>,
    #[serde(default)]
    container_images: Option<BTreeMap<String, String>>,
    #[serde(default)]
    container_ref_metadata: Option<BTreeMap<String, ContainerRefMetadata>>,
    #[serde(default)]
    container_resources: Option<BTreeMap<String, ResourceRequirements>>,
    #[serde(default)]
    meta_data_patch: Option<String>,
    #[serde(default)]
    update_env_from_metadata: Option<bool>,
    #[serde(default)]
    grace_seconds: Option<i32>,
    #[serde(default)]
    old_template: Option<PodTemplateSpec>,
    #[serde(default)]
    new_template: Option<PodTemplateSpec>,
}

impl Serialize for UpdateSpec {
    /// Upstream's JSON shape (see [`UpdateSpec::to_json`], which also applies Go's escaping).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut fields = serializer.serialize_struct("UpdateSpec", 9)?;
        fields.serialize_field("revision", &self.revision)?;
        if !self.container_images.is_empty() {
            fields.serialize_field("containerImages", &self.container_images)?;
        }
        if !self.container_ref_metadata.is_empty() {
            fields.serialize_field("containerRefMetadata", &self.container_ref_metadata)?;
        }
        if !self.container_resources.is_empty() {
            let resources: BTreeMap<&String, GoResources<'_>> = self
                .container_resources
                .iter()
                .map(|(name, resources)| (name, GoResources(resources)))
                .collect();
            fields.serialize_field("containerResources", &resources)?;
        }
        if let Some(patch) = self
            .meta_data_patch
            .as_ref()
            .filter(|patch| !patch.is_empty())
        {
            fields.serialize_field("metaDataPatch", &STANDARD.encode(patch))?;
        }
        if self.update_env_from_metadata {
            fields.serialize_field("updateEnvFromMetadata", &true)?;
        }
        if self.grace_seconds != 0 {
            fields.serialize_field("graceSeconds", &self.grace_seconds)?;
        }
        if let Some(template) = &self.old_template {
            fields.serialize_field("oldTemplate", template)?;
        }
        if let Some(template) = &self.new_template {
            fields.serialize_field("newTemplate", template)?;
        }
        fields.end()
    }
}

/// `ResourceRequirements` in Go's field order (`limits`, `requests`, `claims`), empty fields left out.
pub(crate) struct GoResources<'a>(pub(crate) &'a ResourceRequirements);

impl Serialize for GoResources<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let resources = self.0;
        let mut map = serializer.serialize_map(None)?;
        if let Some(limits) = resources
            .limits
            .as_ref()
            .filter(|limits| !limits.is_empty())
        {
            map.serialize_entry("limits", limits)?;
        }
        if let Some(requests) = resources
            .requests
            .as_ref()
            .filter(|requests| !requests.is_empty())
        {
            map.serialize_entry("requests", requests)?;
        }
        if let Some(claims) = resources
            .claims
            .as_ref()
            .filter(|claims| !claims.is_empty())
        {
            map.serialize_entry("claims", claims)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    #[test]
    fn upstream_grace_values_parse() {
        // From upstream's TestRefresh.
        let spec = UpdateSpec::from_json(
            r#"{"revision":"new-revision","containerImages":{"main":"img-name02"},"graceSeconds":30}"#,
        )
        .unwrap();
        assert_eq!(spec.revision, "new-revision");
        assert_eq!(spec.container_images["main"], "img-name02");
        assert_eq!(spec.grace_seconds, 30);
        let nulls = UpdateSpec::from_json(
            r#"{"revision":null,"containerImages":null,"metaDataPatch":null,"unknown":1}"#,
        )
        .unwrap();
        assert_eq!(nulls, UpdateSpec::default());
    }

    #[test]
    fn full_spec_round_trip() {
        let mut spec = UpdateSpec {
            revision: "cs-abc".into(),
            update_env_from_metadata: true,
            meta_data_patch: Some(b"{}".to_vec()),
            ..UpdateSpec::default()
        };
        spec.container_ref_metadata.insert(
            "c1".into(),
            ContainerRefMetadata {
                labels: [("k".to_owned(), "a&b".to_owned())].into(),
                ..ContainerRefMetadata::default()
            },
        );
        spec.container_resources.insert(
            "c1".into(),
            ResourceRequirements {
                requests: Some([("cpu".to_owned(), Quantity("2".into()))].into()),
                limits: Some(BTreeMap::new()),
                ..ResourceRequirements::default()
            },
        );
        let json = spec.to_json();
        assert_eq!(
            json,
            r#"{"revision":"cs-abc","containerRefMetadata":{"c1":{"creationTimestamp":null,"labels":{"k":"a\u0026b"}}},"containerResources":{"c1":{"requests":{"cpu":"2"}}},"metaDataPatch":"e30=","updateEnvFromMetadata":true}"#
        );
        let back = UpdateSpec::from_json(&json).unwrap();
        assert_eq!(back.container_ref_metadata, spec.container_ref_metadata);
        assert_eq!(back.meta_data_patch.as_deref(), Some(&b"{}"[..]));
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(matches!(
            UpdateSpec::from_json("nope"),
            Err(UpdateSpecError::Json { .. })
        ));
        let error = UpdateSpec::from_json(r#"{"revision":"r","metaDataPatch":"***"}"#).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("invalid update spec: metaDataPatch \"***\""),
            "{error}"
        );
    }
}
