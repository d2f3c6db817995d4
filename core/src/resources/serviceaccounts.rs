//! ServiceAccounts (core/v1): a DELETE answers with the deleted object.

use super::Strategy;

pub struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn name(&self) -> &'static str {
        "serviceaccounts"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}
