//! LimitRanges (core/v1). Defaults, for a Container limit: the default limit is the
//! maximum where none is given, and the default request the default limit, else the
//! minimum.

use super::defaults::{fill_missing, objects, str_of};
use super::Strategy;
use crate::rest::object::Object;

pub struct LimitRanges;

impl Strategy for LimitRanges {
    fn name(&self) -> &'static str {
        "limitranges"
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = super::defaults::object(obj, "spec") else {
            return;
        };
        for item in objects(spec, "limits") {
            if str_of(item, "type") == "Container" {
                fill_missing(item, "max", "default");
                fill_missing(item, "default", "defaultRequest");
                fill_missing(item, "min", "defaultRequest");
            }
        }
    }
}
