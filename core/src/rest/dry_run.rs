//! `dryRun=All`: a create, update, patch or delete that is decoded, defaulted, validated
//! and checked against the stored state exactly as a real one, then answered without
//! being written: no new revision, no watch event.
//!
//! What a dry run answers follows kube-apiserver's dry-run storage: a create answers the
//! object it would have stored (uid and creationTimestamp, no resourceVersion) and still
//! conflicts with an existing name; an update or patch answers the updated object at the
//! stored resourceVersion and still conflicts on a stale one; a delete answers as a real
//! one and still fails on a missing object or a failed precondition.
//!
//! `All` is the one value upstream accepts. Anything else fails the options validation
//! of the verb (`CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`) with
//! 422 Invalid, naming the values given.

use super::scope::Scope;
use crate::schema::{go_quote, FieldValidation};
use crate::status::ApiError;
use crate::validation::{ErrorKind, FieldError};

/// The only dryRun value there is.
const ALL: &str = "All";

impl Scope {
    /// Whether this create, update or patch is a dry run (its options already checked
    /// with [`write_options`]). A delete reads its own options: [`super::delete_options`].
    pub fn dry_run(&self) -> bool {
        self.query.all("dryRun").next().is_some()
    }
}

/// Check the options of a create, update or patch (`kind`: `CreateOptions`,
/// `UpdateOptions` or `PatchOptions`) as upstream's options validation does, dryRun and
/// fieldValidation together; returns whether the request is a dry run.
pub(super) fn write_options(scope: &Scope, kind: &str) -> Result<bool, ApiError> {
    let values: Vec<&str> = scope.query.all("dryRun").collect();
    let mut errors = Vec::new();
    let dry_run = match check(&values) {
        Ok(dry_run) => dry_run,
        Err(e) => {
            errors.push(e);
            false
        }
    };
    if let Err(e) = FieldValidation::from_query(scope.query.get("fieldValidation")) {
        errors.push(e);
    }
    errors.extend(super::managed::check_field_manager(scope));
    if errors.is_empty() {
        Ok(dry_run)
    } else {
        Err(ApiError::invalid("meta.k8s.io", kind, "", errors))
    }
}

/// Whether `values` (every dryRun given) ask for a dry run; the field error upstream's
/// ValidateDryRun gives when any of them is not `All`.
pub(super) fn check(values: &[&str]) -> Result<bool, FieldError> {
    if values.iter().all(|v| *v == ALL) {
        return Ok(!values.is_empty());
    }
    // The value is shown as Go's %#v shows a []string; FieldError would quote it as a
    // string, so it goes in the detail.
    let shown: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    Err(FieldError {
        field: "dryRun".to_owned(),
        kind: ErrorKind::NotSupported,
        value: None,
        detail: format!(
            "[]string{{{}}}: supported values: {}",
            shown.join(", "),
            go_quote(ALL)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_all_is_a_dry_run() {
        assert_eq!(check(&[]), Ok(false));
        assert_eq!(check(&["All"]), Ok(true));
        assert_eq!(check(&["All", "All"]), Ok(true));
        let e = check(&["All", "true"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"dryRun: Unsupported value: []string{"All", "true"}: supported values: "All""#
        );
        assert_eq!(e.kind.cause_type(), "FieldValueNotSupported");
        let e = check(&[""]).unwrap_err();
        assert_eq!(
            e.body(),
            r#"Unsupported value: []string{""}: supported values: "All""#
        );
    }
}
