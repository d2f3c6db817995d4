//! The client side of HTTP/1.1, sans IO, for the requests the server itself sends
//! (aggregated API servers, webhooks): a request encoded to bytes, and a
//! [`ResponseReader`] that turns the peer's bytes into its response.
//!
//! It shares the server codec's framing rules (chunked bodies, `Content-Length`,
//! `Connection`) and adds the response side's own (RFC 9112 §6.3): no body after `HEAD`
//! or for 1xx, 204 and 304; a body with neither length nor chunking runs to the end of
//! the connection; interim 1xx responses are skipped.
//!
//! ```text
//! write(encode_request(&request)?);
//! let mut reader = ResponseReader::new(request.method(), limits);
//! loop {
//!     match reader.poll()? {
//!         Some(received) => break received,  // received.reusable: keep the connection
//!         None => match read(&mut buf) {
//!             0 => reader.feed_eof(),
//!             n => reader.feed(&buf[..n]),
//!         },
//!     }
//! }
//! ```

mod request;
mod response;
#[cfg(test)]
mod tests;

pub use request::{encode_request, RequestError};
pub use response::{BodyPiece, Received, ResponseError, ResponseReader};
