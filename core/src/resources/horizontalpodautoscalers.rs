//! HorizontalPodAutoscalers (autoscaling/v2 and v1): spec changes count in
//! `metadata.generation`.

use super::Strategy;

pub struct HorizontalPodAutoscalers;

impl Strategy for HorizontalPodAutoscalers {
    fn name(&self) -> &'static str {
        "horizontalpodautoscalers"
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}
