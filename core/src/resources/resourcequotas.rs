//! ResourceQuotas (core/v1): a DELETE answers with the deleted object.

use super::Strategy;

pub struct ResourceQuotas;

impl Strategy for ResourceQuotas {
    fn name(&self) -> &'static str {
        "resourcequotas"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}
