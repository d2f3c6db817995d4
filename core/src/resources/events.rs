//! Events, in core/v1 and in events.k8s.io/v1: one kind, selectable by the fields of
//! its involved object, each version by its own names of them (events.k8s.io's
//! `regarding.*` select what core/v1's `involvedObject.*` do).

use super::Strategy;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};

/// core/v1 events (pkg/registry/core/event/strategy.go).
pub struct CoreEvents;

impl Strategy for CoreEvents {
    fn name(&self) -> &'static str {
        "events"
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&CORE_FIELDS)
    }
}

/// events.k8s.io/v1 events (pkg/apis/events/v1/conversion.go).
pub struct Events;

impl Strategy for Events {
    fn name(&self) -> &'static str {
        "events.events.k8s.io"
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&EVENTS_FIELDS)
    }
}

static CORE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        ("involvedObject.resourceVersion", "involvedObject.resourceVersion"),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        NAMESPACE,
        NAME,
    ],
};

static EVENTS_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        ("reason", "reason"),
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        ("regarding.resourceVersion", "involvedObject.resourceVersion"),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        NAMESPACE,
        NAME,
    ],
};
