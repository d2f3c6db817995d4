//! h2 reads and writes through tokio's IO traits; smol's sockets and futures-rustls
//! implement futures-io's. This wrapper maps one onto the other (no tokio runtime
//! involved: only the traits). The etcd backend's gRPC client and the server's HTTP/2
//! connections share it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A futures-io stream seen through tokio's IO traits.
pub struct Compat<T>(pub T);

impl<T: futures_io::AsyncRead + Unpin> tokio::io::AsyncRead for Compat<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let unfilled = buf.initialize_unfilled();
        match Pin::new(&mut self.0).poll_read(cx, unfilled) {
            Poll::Ready(Ok(n)) => {
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: futures_io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Compat<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_close(cx)
    }
}

/// The traits h2 asks of its IO, for bounds in crates that do not depend on tokio.
pub use tokio::io::{AsyncRead as TokioRead, AsyncWrite as TokioWrite};
