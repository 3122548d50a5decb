//! The pods' claims against their volume claim templates: `status.volumeClaims`, and, with gate
//! `StatefulSetAutoResizePVCGate` and `volumeClaimUpdateStrategy.type: OnPodRollingUpdate`, which claims
//! the rolling update expands before it updates a pod and whether the pod waits for them (upstream
//! `pkg/util/pvc` and `stateful_pod_control_pvc.go`: `IsOwnedPVCsReady`, `IsClaimsCompatible`,
//! `TryPatchPVC`, `IsOwnedPVCsCompleted`, `updatePVCStatus`).
//!
//! A claim against its template (storage compared as Kubernetes quantities, a missing one counting as 0):
//!
//! | fact | when |
//! |---|---|
//! | same kind | the storage classes are equal (when both name one) and the access modes are the same list |
//! | compatible | same kind, and `spec.resources.requests.storage` ≥ the template's |
//! | ready | same kind, and `status.capacity.storage` ≥ its own `spec.resources.requests.storage` |
//! | needs expansion | same kind, not compatible (only a larger template is applied to a claim) |
//! | completed | compatible, and ready or with a `FileSystemResizePending` condition `True` |
//!
//! A pod's claims are the claims `<template>-<set>-<ordinal>` that exist and are not being deleted.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use kruise_api::apps::v1beta1::{StatefulSet, VolumeClaimStatus, VolumeClaimUpdateStrategyType};
use kruise_inplace::quantity::{self, Quantity, QuantityError};

use super::action::{ActionKind, Rule, SpecificKind};
use super::create::set_name;
use super::error::Error;
use super::ordinals::claim_name;
use super::pass::Pass;
use super::plan::Ctx;

/// The resource name of a claim's storage.
const STORAGE: &str = "storage";

/// The condition a claim shows when its volume has grown and its file system grows at the next mount.
const FILE_SYSTEM_RESIZE_PENDING: &str = "FileSystemResizePending";

/// One volume claim template and its storage request, parsed once per plan.
#[derive(Debug)]
pub(crate) struct ClaimTemplate<'a> {
    name: &'a str,
    template: &'a PersistentVolumeClaim,
    /// The request as written (what an expansion writes).
    written: &'a str,
    storage: Result<Quantity, QuantityError>,
}

/// The StatefulSet's volume claim templates.
#[derive(Debug, Default)]
pub(crate) struct ClaimTemplates<'a> {
    templates: Vec<ClaimTemplate<'a>>,
}

impl<'a> ClaimTemplates<'a> {
    /// The templates of `set`.
    pub(crate) fn of(set: &'a StatefulSet) -> Self {
        let templates = set
            .spec
            .volume_claim_templates
            .iter()
            .map(|template| {
                let written = requested(template).map_or("", |q| q.0.as_str());
                ClaimTemplate {
                    name: template.metadata.name.as_deref().unwrap_or(""),
                    template,
                    written,
                    storage: parse_or_zero(requested(template)),
                }
            })
            .collect();
        Self { templates }
    }
}

/// How one claim stands against its template.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimFit {
    /// The storage classes (when both name one) and the access modes are the template's.
    pub same_kind: bool,
    /// Same kind, and the claim requests at least the template's storage.
    pub compatible: bool,
    /// Same kind, and the claim's capacity is at least its own request.
    pub ready: bool,
    /// A `FileSystemResizePending` condition is `True`.
    pub resize_pending: bool,
}

impl ClaimFit {
    /// Same kind, but requests less than the template: the claim is expanded.
    #[must_use]
    pub fn needs_expansion(&self) -> bool {
        self.same_kind && !self.compatible
    }

    /// The claim no longer holds its pod's update back: compatible, and ready or only waiting for its
    /// file system to grow at the next mount.
    #[must_use]
    pub fn completed(&self) -> bool {
        self.compatible && (self.ready || self.resize_pending)
    }
}

/// Which field of a claim did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnparsableClaim {
    /// `spec.resources.requests.storage` or `status.capacity.storage`.
    pub field: &'static str,
    /// Why.
    pub source: QuantityError,
}

fn requested(claim: &PersistentVolumeClaim) -> Option<&ApiQuantity> {
    claim
        .spec
        .as_ref()?
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get(STORAGE)
}

fn capacity(claim: &PersistentVolumeClaim) -> Option<&ApiQuantity> {
    claim.status.as_ref()?.capacity.as_ref()?.get(STORAGE)
}

/// A quantity, or 0 when there is none (Go's `ResourceList.Storage()`).
fn parse_or_zero(value: Option<&ApiQuantity>) -> Result<Quantity, QuantityError> {
    quantity::parse(value.map_or("0", |q| q.0.as_str()))
}

/// Upstream `IsClaimCompatibleWithoutSize`.
fn same_kind(claim: &PersistentVolumeClaim, template: &PersistentVolumeClaim) -> bool {
    let class = |c: &PersistentVolumeClaim| c.spec.as_ref()?.storage_class_name.clone();
    if let (Some(claim_class), Some(template_class)) = (class(claim), class(template))
        && claim_class != template_class
    {
        return false;
    }
    let modes = |c: &PersistentVolumeClaim| -> Vec<String> {
        c.spec
            .as_ref()
            .and_then(|s| s.access_modes.clone())
            .unwrap_or_default()
    };
    modes(claim) == modes(template)
}

/// How `claim` stands against `template`, whose storage request is `template_storage`.
///
/// ```
/// use k8s_openapi::api::core::v1::PersistentVolumeClaim;
/// use kruise_inplace::quantity;
/// use kruise_schedule::statefulset::claim_fit;
///
/// let claim: PersistentVolumeClaim = serde_json::from_value(serde_json::json!({
///     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1024Mi"}}},
///     "status": {"capacity": {"storage": "1Gi"}},
/// })).unwrap();
/// let template: PersistentVolumeClaim = serde_json::from_value(serde_json::json!({
///     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2G"}}},
/// })).unwrap();
/// let fit = claim_fit(&claim, &template, &quantity::parse("2G").unwrap()).unwrap();
/// assert!(fit.needs_expansion() && fit.ready && !fit.completed());
/// ```
///
/// # Errors
/// [`UnparsableClaim`] when the claim's request or capacity is not a quantity.
pub fn claim_fit(
    claim: &PersistentVolumeClaim,
    template: &PersistentVolumeClaim,
    template_storage: &Quantity,
) -> Result<ClaimFit, UnparsableClaim> {
    let requested = parse_or_zero(requested(claim)).map_err(|source| UnparsableClaim {
        field: "spec.resources.requests.storage",
        source,
    })?;
    let capacity = parse_or_zero(capacity(claim)).map_err(|source| UnparsableClaim {
        field: "status.capacity.storage",
        source,
    })?;
    let same_kind = same_kind(claim, template);
    let resize_pending = claim
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == FILE_SYSTEM_RESIZE_PENDING && c.status == "True")
        });
    Ok(ClaimFit {
        same_kind,
        compatible: same_kind && requested >= *template_storage,
        ready: same_kind && capacity >= requested,
        resize_pending,
    })
}

/// Whether the rolling update resizes claims: gate `StatefulSetAutoResizePVCGate` and
/// `volumeClaimUpdateStrategy.type: OnPodRollingUpdate`.
pub(crate) fn resize_on_update(ctx: &Ctx<'_>) -> bool {
    ctx.input.options.auto_resize_pvc
        && ctx.set.spec.volume_claim_update_strategy.type_
            == Some(VolumeClaimUpdateStrategyType::OnPodRollingUpdate)
}

/// One existing claim of a pod.
struct PodClaim<'t, 'a> {
    template: &'t ClaimTemplate<'a>,
    index: usize,
    fit: ClaimFit,
}

/// The existing claims (not being deleted) of the pod on `ordinal`, in template order, with their fit.
fn pod_claims<'t, 'a>(
    ctx: &'t Ctx<'a>,
    ordinal: i64,
) -> impl Iterator<Item = Result<PodClaim<'t, 'a>, Error>> + 't {
    let set = set_name(ctx.set);
    ctx.claim_templates
        .templates
        .iter()
        .filter_map(move |template| {
            let name = claim_name(template.name, set, ordinal);
            let (index, claim) = ctx.claim(&name)?;
            if claim.metadata.deletion_timestamp.is_some() {
                return None;
            }
            Some(fit_of(ctx, template, &name, claim).map(|fit| PodClaim {
                template,
                index,
                fit,
            }))
        })
}

fn fit_of(
    ctx: &Ctx<'_>,
    template: &ClaimTemplate<'_>,
    name: &str,
    claim: &PersistentVolumeClaim,
) -> Result<ClaimFit, Error> {
    let storage = template
        .storage
        .as_ref()
        .map_err(|source| Error::InvalidStorage {
            set: ctx.key.clone(),
            field: format!(
                "spec.volumeClaimTemplates[{}].spec.resources.requests.storage",
                template.name
            ),
            value: template.written.to_owned(),
            source: source.clone(),
        })?;
    claim_fit(claim, template.template, storage).map_err(|unparsable| Error::InvalidStorage {
        set: ctx.key.clone(),
        field: format!("PersistentVolumeClaim {name} {}", unparsable.field),
        value: match unparsable.field {
            "status.capacity.storage" => capacity(claim),
            _ => requested(claim),
        }
        .map_or_else(String::new, |q| q.0.clone()),
        source: unparsable.source,
    })
}

/// Whether every claim of the pod on `ordinal` passes `check` (upstream's fail-fast walk).
fn all(ctx: &Ctx<'_>, ordinal: i64, check: fn(&ClaimFit) -> bool) -> Result<bool, Error> {
    for claim in pod_claims(ctx, ordinal) {
        if !check(&claim?.fit) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Upstream `IsOwnedPVCsReady`: every claim of the pod has the capacity it requests. A claim that cannot
/// be read counts as not ready.
pub(crate) fn claims_ready(ctx: &Ctx<'_>, ordinal: i64) -> bool {
    all(ctx, ordinal, |fit| fit.ready).unwrap_or(false)
}

/// Upstream `IsClaimsCompatible`: every claim of the pod requests at least its template's storage.
///
/// # Errors
/// [`Error::InvalidStorage`].
pub(crate) fn claims_compatible(ctx: &Ctx<'_>, ordinal: i64) -> Result<bool, Error> {
    all(ctx, ordinal, |fit| fit.compatible)
}

/// Upstream `IsOwnedPVCsCompleted`: every claim of the pod is compatible and ready (or only waits for
/// its file system to grow).
///
/// # Errors
/// [`Error::InvalidStorage`].
pub(crate) fn claims_completed(ctx: &Ctx<'_>, ordinal: i64) -> Result<bool, Error> {
    all(ctx, ordinal, ClaimFit::completed)
}

/// Upstream `TryPatchPVC`: plans the expansion of each claim of pod `pod` (on `ordinal`, slot `slot`)
/// that requests less than its template, in template order.
///
/// # Errors
/// [`Error::ClaimNotExpandable`] at the first claim that differs from its template in more than its size
/// (the expansions planned before it stand), [`Error::InvalidStorage`].
pub(crate) fn expand(
    ctx: &Ctx<'_>,
    pass: &mut Pass,
    pod: usize,
    ordinal: i64,
    slot: i64,
) -> Result<(), Error> {
    for claim in pod_claims(ctx, ordinal) {
        let claim = claim?;
        if claim.fit.compatible {
            continue;
        }
        if !claim.fit.needs_expansion() {
            return Err(Error::ClaimNotExpandable {
                set: ctx.key.clone(),
                claim: ctx
                    .input
                    .claims
                    .get(claim.index)
                    .and_then(|c| c.metadata.name.clone())
                    .unwrap_or_default(),
                template: claim.template.name.to_owned(),
            });
        }
        pass.push(
            ActionKind::Specific(SpecificKind::ExpandClaim {
                claim: claim.index,
                pod,
                storage: claim.template.written.to_owned(),
            }),
            Rule::ExpandClaim {
                slot,
                template: claim.template.name.to_owned(),
            },
        );
    }
    Ok(())
}

/// Upstream `updatePVCStatus`: for each template, how many of the pods on `ordinals` have a compatible
/// claim, and how many of those are also ready. A claim that cannot be read is not counted.
pub(crate) fn status(ctx: &Ctx<'_>, ordinals: impl Iterator<Item = i64>) -> Vec<VolumeClaimStatus> {
    let templates = &ctx.claim_templates.templates;
    let mut counts: Vec<VolumeClaimStatus> = templates
        .iter()
        .map(|template| VolumeClaimStatus {
            volume_claim_name: template.name.to_owned(),
            ..VolumeClaimStatus::default()
        })
        .collect();
    if templates.is_empty() {
        return counts;
    }
    let set = set_name(ctx.set);
    for ordinal in ordinals {
        for (template, count) in templates.iter().zip(counts.iter_mut()) {
            let name = claim_name(template.name, set, ordinal);
            let Some((_, claim)) = ctx.claim(&name) else {
                continue;
            };
            if claim.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let Ok(fit) = fit_of(ctx, template, &name, claim) else {
                continue;
            };
            if fit.compatible {
                count.compatible_replicas += 1;
                if fit.ready {
                    count.compatible_ready_replicas += 1;
                }
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn claim(spec: &serde_json::Value, status: &serde_json::Value) -> PersistentVolumeClaim {
        serde_json::from_value(json!({"spec": spec, "status": status})).unwrap()
    }

    fn sized(request: &str, capacity: &str) -> PersistentVolumeClaim {
        claim(
            &json!({"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                "resources": {"requests": {"storage": request}}}),
            &json!({"capacity": {"storage": capacity}}),
        )
    }

    fn template(request: &str) -> PersistentVolumeClaim {
        claim(
            &json!({"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                "resources": {"requests": {"storage": request}}}),
            &json!({}),
        )
    }

    fn fit(claim: &PersistentVolumeClaim, template_request: &str) -> ClaimFit {
        let template = template(template_request);
        let storage = quantity::parse(template_request).unwrap();
        claim_fit(claim, &template, &storage).unwrap()
    }

    #[test]
    fn storage_is_compared_as_quantities() {
        // (claim request, claim capacity, template request) → (compatible, ready, needs expansion)
        let table = [
            ("1Gi", "1Gi", "1Gi", (true, true, false)),
            ("1024Mi", "1Gi", "1Gi", (true, true, false)),
            ("1Gi", "1024Mi", "1Gi", (true, true, false)),
            // 2G = 2,000,000,000 bytes < 2Gi, > 1Gi.
            ("1Gi", "1Gi", "2G", (false, true, true)),
            ("2Gi", "2Gi", "2G", (true, true, false)),
            ("2G", "2G", "2Gi", (false, true, true)),
            ("2Gi", "1Gi", "2Gi", (true, false, false)),
            ("3Gi", "2Gi", "2Gi", (true, false, false)),
            // A smaller template is not applied: the larger claim stays compatible.
            ("2Gi", "2Gi", "1Gi", (true, true, false)),
            ("1500M", "1.5G", "1500000k", (true, true, false)),
            ("0.5Gi", "512Mi", "512Mi", (true, true, false)),
        ];
        for (request, capacity, template_request, (compatible, ready, expand)) in table {
            let got = fit(&sized(request, capacity), template_request);
            assert_eq!(
                (got.compatible, got.ready, got.needs_expansion()),
                (compatible, ready, expand),
                "claim {request} (capacity {capacity}) against template {template_request}"
            );
        }
    }

    #[test]
    fn a_missing_request_or_capacity_counts_as_zero() {
        let no_capacity = claim(
            &json!({"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                "resources": {"requests": {"storage": "1Gi"}}}),
            &json!({}),
        );
        let got = fit(&no_capacity, "1Gi");
        assert!(got.compatible && !got.ready && !got.completed());
        let no_request = claim(
            &json!({"accessModes": ["ReadWriteOnce"], "storageClassName": "fast"}),
            &json!({}),
        );
        assert!(fit(&no_request, "1Gi").needs_expansion());
        assert!(fit(&no_request, "0").compatible && fit(&no_request, "0").ready);
    }

    #[test]
    fn another_class_or_access_mode_is_not_the_same_kind() {
        let other_class = claim(
            &json!({"accessModes": ["ReadWriteOnce"], "storageClassName": "slow",
                "resources": {"requests": {"storage": "1Gi"}}}),
            &json!({"capacity": {"storage": "1Gi"}}),
        );
        let got = fit(&other_class, "2Gi");
        assert!(!got.same_kind && !got.compatible && !got.ready && !got.needs_expansion());
        let other_modes = claim(
            &json!({"accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "storageClassName": "fast",
                "resources": {"requests": {"storage": "1Gi"}}}),
            &json!({"capacity": {"storage": "1Gi"}}),
        );
        assert!(!fit(&other_modes, "1Gi").same_kind);
        // A claim given a class by the default StorageClass matches a template that names none.
        let defaulted_class = sized("1Gi", "1Gi");
        let template = claim(
            &json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}),
            &json!({}),
        );
        let storage = quantity::parse("1Gi").unwrap();
        assert!(
            claim_fit(&defaulted_class, &template, &storage)
                .unwrap()
                .same_kind
        );
    }

    #[test]
    fn a_pending_file_system_resize_completes_a_compatible_claim() {
        let mut resizing = sized("2Gi", "1Gi");
        resizing.status.as_mut().unwrap().conditions = Some(vec![
            serde_json::from_value(json!({"type": "FileSystemResizePending", "status": "True"}))
                .unwrap(),
        ]);
        let got = fit(&resizing, "2Gi");
        assert!(!got.ready && got.resize_pending && got.completed());
        assert!(!fit(&resizing, "3Gi").completed(), "not yet compatible");
    }

    #[test]
    fn an_unparsable_claim_quantity_names_the_field() {
        let bad = sized("lots", "1Gi");
        let template = template("1Gi");
        let error = claim_fit(&bad, &template, &quantity::parse("1Gi").unwrap()).unwrap_err();
        assert_eq!(error.field, "spec.resources.requests.storage");
        assert!(
            error.source.to_string().contains("lots"),
            "{}",
            error.source
        );
        let bad_capacity = sized("1Gi", "1Gb");
        let error =
            claim_fit(&bad_capacity, &template, &quantity::parse("1Gi").unwrap()).unwrap_err();
        assert_eq!(error.field, "status.capacity.storage");
    }
}
