//! The admission webhooks: MutatingAdmissionWebhook and ValidatingAdmissionWebhook
//! call the webhooks of the Mutating and Validating WebhookConfigurations that match a
//! request, with an AdmissionReview each ([`admission_review`]), as [`dispatch`] lays
//! the calls out.

pub mod admission_review;
pub mod dispatch;
mod plugin;

pub use dispatch::{Hook, WebhookCalls};
pub(crate) use plugin::{MUTATING, VALIDATING};
