//! Streaming another server's answer to the client (a watch through the aggregator):
//! each piece of its body written as it comes, in the client's own framing (chunks on
//! HTTP/1.1, DATA frames on HTTP/2), as upstream's proxy flushes a streamed answer at
//! once.

use super::watch_pump::WatchSink;
use super::Apiary;
use crate::outbound::StreamedBody;
use apiary_core::storage::Storage;
use bytes::Bytes;
use smol::future::FutureExt as _;
use std::io;

/// What woke a relay up.
#[derive(Debug)]
enum Woke {
    /// The next piece of the body, its end (`None`), or why it broke.
    Piece(Option<Result<Bytes, String>>),
    /// The server is shutting down.
    Ending,
    /// The client went away.
    Gone,
}

impl<S: Storage> Apiary<S> {
    /// Stream a relayed answer: `head`, then the body as it comes, until it ends, the
    /// client goes away or the server shuts down (ending it cleanly, as a watch's
    /// timeout would). A body cut short is an error, so that the client's answer is cut
    /// short too rather than seeming whole.
    pub(super) async fn pump_relay(
        &self,
        sink: &mut impl WatchSink,
        head: http::response::Parts,
        mut body: StreamedBody,
    ) -> io::Result<()> {
        sink.head(&head).await?;
        sink.send(Vec::new()).await?;
        loop {
            let piece = async { Woke::Piece(body.next().await) };
            let ending = async {
                self.lifecycle.end_watches.wait().await;
                Woke::Ending
            };
            let gone = async {
                sink.gone().await;
                Woke::Gone
            };
            let woke = piece.or(ending).or(gone).await;
            match woke {
                Woke::Piece(Some(Ok(data))) => {
                    let mut batch = Vec::new();
                    sink.frame(&data, &mut batch);
                    sink.send(batch).await?;
                }
                Woke::Piece(None) | Woke::Ending => return sink.end().await,
                Woke::Piece(Some(Err(e))) => return Err(io::Error::other(format!("the relayed answer broke: {e}"))),
                Woke::Gone => return Ok(()),
            }
        }
    }
}
