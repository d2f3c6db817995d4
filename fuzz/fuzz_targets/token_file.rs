//! `apiary_core::authn::TokenFile::parse` over any text: never panics; a file that
//! parses answers for each of its tokens a user, and for no token a second time
//! differently when parsed again (parsing is deterministic).

#![no_main]

use apiary_core::authn::TokenFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = TokenFile::parse("fuzz.csv", text) {
        assert_eq!(TokenFile::parse("fuzz.csv", text).as_ref(), Ok(&file));
        assert!(file.user("").is_none(), "an empty token never authenticates");
        for line in text.lines() {
            if let Some(token) = line.split(',').next().filter(|t| !t.is_empty() && !t.contains('"')) {
                if let Some(user) = file.user(token) {
                    assert!(!user.groups.iter().any(|g| g.contains('\n') && !text.contains('"')));
                }
            }
        }
    }
});
