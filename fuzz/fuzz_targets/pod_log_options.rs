//! A `pods/{name}/log` query read as upstream reads PodLogOptions: never panics; what
//! reads is checked without panicking, every error names a field, and the query the
//! kubelet would be asked with reads back to the same options (the container and the
//! TLS flag are not sent; a zero sinceTime is not either).
#![no_main]

use apiary_core::query::Query;
use apiary_core::rest::pod_log_options::PodLogOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(options) = PodLogOptions::parse(&Query::parse(Some(text))) else { return };
    for error in options.validate() {
        assert!(!error.to_string().is_empty());
    }
    let sent = options.kubelet_query();
    let again = PodLogOptions::parse(&Query::parse(Some(&sent))).expect("what is sent reads back");
    let expected = PodLogOptions {
        container: String::new(),
        insecure_skip_tls_verify_backend: false,
        stream: None,
        since_time: options.since_time.clone().filter(|t| !t.is_empty()),
        ..options
    };
    assert_eq!(again, expected, "{text:?} sent as {sent:?}");
});
