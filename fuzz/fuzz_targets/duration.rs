//! Go-style durations from flags: never panic, and whatever parses prints back to a
//! string that parses to the same duration.
#![no_main]

use apiary_core::duration::{format_duration, parse_duration};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(duration) = parse_duration(text) {
        let printed = format_duration(duration);
        assert_eq!(parse_duration(&printed), Ok(duration), "{text:?} printed as {printed:?}");
    }
});
