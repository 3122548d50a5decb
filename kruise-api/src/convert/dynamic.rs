//! Conversion of untyped objects, for conversion webhooks and tools that do not know the kind up front.

use kube::Resource;
use serde::Deserialize;
use serde_json::Value;

use super::{HubConversion, from_hub, to_hub};
use crate::apps::v1alpha1;
use crate::unknown_fields::UnknownFields;

/// Why an object could not be converted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConversionError {
    /// The object has no string `apiVersion` or `kind`.
    #[error("object has no {field}")]
    MissingField {
        /// `apiVersion` or `kind`.
        field: &'static str,
    },
    /// No conversion is known between these versions of this kind.
    #[error("no conversion of {kind} from {from} to {to}")]
    Unsupported {
        /// The object's kind.
        kind: String,
        /// The object's apiVersion.
        from: String,
        /// The requested apiVersion.
        to: String,
    },
    /// The object does not decode as its kind and version.
    #[error("{kind} {api_version} {name:?}: {source}")]
    Decode {
        /// The object's kind.
        kind: String,
        /// The object's apiVersion.
        api_version: String,
        /// The object's name, when it has one.
        name: String,
        /// What the decoder said (names the field).
        #[source]
        source: serde_json::Error,
    },
}

type Converter = fn(&Value) -> Result<Value, serde_json::Error>;

struct KindConversion {
    kind: String,
    spoke: String,
    hub: String,
    up: Converter,
    down: Converter,
}

impl KindConversion {
    fn of<S: HubConversion>() -> Self {
        Self {
            kind: S::kind(&()).into_owned(),
            spoke: S::api_version(&()).into_owned(),
            hub: S::Hub::api_version(&()).into_owned(),
            up: up::<S>,
            down: down::<S>,
        }
    }
}

fn up<S: HubConversion>(object: &Value) -> Result<Value, serde_json::Error> {
    let spoke = S::deserialize(object)?;
    let unknown = UnknownFields::between(object, &serde_json::to_value(&spoke)?);
    let mut converted = serde_json::to_value(to_hub(&spoke))?;
    unknown.restore(&mut converted);
    Ok(converted)
}

fn down<S: HubConversion>(object: &Value) -> Result<Value, serde_json::Error> {
    let hub = S::Hub::deserialize(object)?;
    let unknown = UnknownFields::between(object, &serde_json::to_value(&hub)?);
    let mut converted = serde_json::to_value(from_hub::<S>(&hub))?;
    unknown.restore(&mut converted);
    Ok(converted)
}

fn registry() -> Vec<KindConversion> {
    vec![
        KindConversion::of::<v1alpha1::CloneSet>(),
        KindConversion::of::<v1alpha1::PersistentPodState>(),
        KindConversion::of::<v1alpha1::ResourceDistribution>(),
        KindConversion::of::<v1alpha1::WorkloadSpread>(),
        KindConversion::of::<v1alpha1::AdvancedCronJob>(),
        KindConversion::of::<v1alpha1::BroadcastJob>(),
        KindConversion::of::<v1alpha1::ImageListPullJob>(),
        KindConversion::of::<v1alpha1::ImagePullJob>(),
        KindConversion::of::<v1alpha1::NodeImage>(),
        KindConversion::of::<v1alpha1::DaemonSet>(),
        KindConversion::of::<v1alpha1::StatefulSet>(),
        KindConversion::of::<v1alpha1::UnitedDeployment>(),
        KindConversion::of::<v1alpha1::ContainerRecreateRequest>(),
        KindConversion::of::<v1alpha1::SidecarSet>(),
        KindConversion::of::<crate::policy::v1alpha1::PodUnavailableBudget>(),
    ]
}

/// Converts an object (any kind with two versions) to `desired_api_version`, as a conversion webhook does.
/// An object already at that version is returned unchanged. Fields the types of the object's version do not
/// model (a newer OpenKruise's fields, anything in a pod template that `k8s-openapi` does not know) are kept at
/// their place in the converted object ([`UnknownFields`]), so a read through the other version loses nothing.
///
/// # Errors
/// [`ConversionError`] when the object lacks `apiVersion`/`kind`, the pair of versions is unknown for the
/// kind, or the object does not decode (the message names the object and the field).
pub fn convert_object(object: Value, desired_api_version: &str) -> Result<Value, ConversionError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or(ConversionError::MissingField {
            field: "apiVersion",
        })?
        .to_owned();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .ok_or(ConversionError::MissingField { field: "kind" })?
        .to_owned();
    if api_version == desired_api_version {
        return Ok(object);
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let unsupported = || ConversionError::Unsupported {
        kind: kind.clone(),
        from: api_version.clone(),
        to: desired_api_version.to_owned(),
    };
    let entry = registry()
        .into_iter()
        .find(|entry| entry.kind == kind)
        .ok_or_else(unsupported)?;
    let converter = if api_version == entry.spoke && desired_api_version == entry.hub {
        entry.up
    } else if api_version == entry.hub && desired_api_version == entry.spoke {
        entry.down
    } else {
        return Err(unsupported());
    };
    converter(&object).map_err(|source| ConversionError::Decode {
        kind,
        api_version,
        name,
        source,
    })
}
