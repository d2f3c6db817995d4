//! How long a request that is not a watch may run: `--request-timeout`, or less when
//! the client asks for less with `?timeout=` (kubectl's `--request-timeout` sends it).
//! A zero, negative or longer `timeout` leaves the server's; one that is not a duration
//! is a 400, as upstream's request-deadline filter answers it.

use crate::query::Query;
use crate::status::ApiError;
use std::time::Duration;

/// The deadline of a request with `query`, given `--request-timeout`; or the answer to a
/// `timeout` that is not a duration.
pub fn request_deadline(
    request_timeout: Duration,
    query: Option<&str>,
) -> Result<Duration, Box<http::Response<bytes::Bytes>>> {
    deadline(request_timeout, query).map_err(|error| {
        Box::new(crate::rest::error_response(
            &error,
            crate::negotiation::Output::JSON,
        ))
    })
}

fn deadline(request_timeout: Duration, query: Option<&str>) -> Result<Duration, ApiError> {
    let query = Query::parse(query);
    let Some(value) = query.get("timeout").filter(|v| !v.is_empty()) else {
        return Ok(request_timeout);
    };
    // Go parses a negative duration, which then asks for nothing; ours refuses them.
    let asked = match value.strip_prefix('-') {
        Some(magnitude) => crate::duration::parse_duration(magnitude).map(|_| Duration::ZERO),
        None => crate::duration::parse_duration(value),
    };
    match asked {
        Ok(asked) if !asked.is_zero() => Ok(asked.min(request_timeout)),
        Ok(_) => Ok(request_timeout),
        Err(e) => Err(ApiError::bad_request(format!(
            "invalid timeout specified in the request URL - time: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn the_shorter_of_the_clients_and_the_servers() {
        assert_eq!(deadline(MINUTE, None), Ok(MINUTE));
        assert_eq!(deadline(MINUTE, Some("limit=5")), Ok(MINUTE));
        assert_eq!(
            deadline(MINUTE, Some("timeout=1500ms")),
            Ok(Duration::from_millis(1500))
        );
        assert_eq!(deadline(MINUTE, Some("timeout=2m")), Ok(MINUTE));
        assert_eq!(deadline(MINUTE, Some("timeout=0s")), Ok(MINUTE));
        assert_eq!(deadline(MINUTE, Some("timeout=-5s")), Ok(MINUTE));
        assert_eq!(deadline(MINUTE, Some("timeout=")), Ok(MINUTE));
    }

    #[test]
    fn a_bad_timeout_is_a_400() {
        let error = deadline(MINUTE, Some("timeout=soon")).unwrap_err();
        assert_eq!(error.code, 400);
        assert_eq!(error.reason, "BadRequest");
        assert_eq!(
            error.message,
            "invalid timeout specified in the request URL - time: invalid duration \"soon\""
        );
    }
}
