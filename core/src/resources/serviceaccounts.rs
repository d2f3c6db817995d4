//! ServiceAccounts (core/v1): a DELETE answers with the deleted object, and the `token`
//! subresource issues tokens (rest/token_request.rs).

use super::{Handler, Strategy};

/// The group and resource of ServiceAccounts, which tokens name.
pub const GROUP: &str = "";
pub const RESOURCE: &str = "serviceaccounts";

pub struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        (name == "token").then_some(Handler::TokenRequest)
    }
}
