//! Bindings (core/v1), the older form of `pods/{name}/binding`: never stored, every
//! request to the collection is served as a pod's binding (rest/binding.rs).

use super::{Handler, Strategy};

pub struct Bindings;

impl Strategy for Bindings {
    fn name(&self) -> &'static str {
        "bindings"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::Binding)
    }
}
