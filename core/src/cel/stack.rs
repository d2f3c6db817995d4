//! A guard on how much stack the recursive stages (parser, checker, cost estimator,
//! evaluator) may use. Expressions are bounded in nesting (250, as cel-go), but how
//! much stack that takes depends on the build: an unoptimized build's frames are ten
//! times larger. Each stage measures what it has used from where it started and stops
//! with an error past its budget instead of overflowing the thread's stack.

use std::hint::black_box;

/// What one stage may use; threads that validate requests have at least 2 MiB.
pub const STACK_BUDGET: usize = 768 * 1024;

#[derive(Clone, Copy, Debug)]
pub struct StackGuard {
    base: usize,
}

fn here() -> usize {
    let marker = 0u8;
    black_box(&marker) as *const u8 as usize
}

impl StackGuard {
    /// Start measuring from the caller's frame.
    pub fn new() -> StackGuard {
        StackGuard { base: here() }
    }

    /// Whether the stage has used up its budget.
    pub fn exhausted(&self) -> bool {
        self.base.abs_diff(here()) > STACK_BUDGET
    }
}

impl Default for StackGuard {
    fn default() -> Self {
        StackGuard::new()
    }
}
