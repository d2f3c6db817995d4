//! The DER subject reader that names users from client certificates: never panics on
//! any bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = apiary_core::authn::subject_of(data);
});
