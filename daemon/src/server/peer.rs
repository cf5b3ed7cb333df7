//! A client's socket that tells when the client has gone.
//!
//! tarpc keeps a connection open after its read side has ended for as long as any call of it is
//! still in flight (`Requests::pump_write` waits while requests are in flight), so a client that
//! died during a long poll (`next_events` waits up to `MAX_EVENT_WAIT_MS`) counted as connected
//! until its answer failed to be written, and an idle daemon waited for it. The end of the read
//! side is the client's own word that it has gone: skillwatch's clients never half-close a
//! connection on which they still expect answers, and the kernel ends the read side of a killed
//! process's socket at once.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

/// A stream whose `gone` token fires at the end of its read side (EOF or a read error).
pub(crate) struct Watched<S> {
    inner: S,
    gone: CancellationToken,
}

impl<S> Watched<S> {
    /// `stream`, and the token that fires once its peer has gone.
    pub(crate) fn new(stream: S) -> (Watched<S>, CancellationToken) {
        let gone = CancellationToken::new();
        let watched = Watched {
            inner: stream,
            gone: gone.clone(),
        };
        (watched, gone)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let (before, room) = (buf.filled().len(), buf.remaining());
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        let ended = match &polled {
            // (a read into a full buffer reads nothing and is no end of file)
            Poll::Ready(Ok(())) => room > 0 && buf.filled().len() == before,
            Poll::Ready(Err(_)) => true,
            Poll::Pending => false,
        };
        if ended {
            this.gone.cancel();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn fires_at_the_end_of_the_read_side_not_before() {
        let (ours, mut theirs) = tokio::net::UnixStream::pair().unwrap();
        let (mut watched, gone) = Watched::new(ours);
        theirs.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        watched.read_exact(&mut buf).await.unwrap();
        assert!(!gone.is_cancelled(), "data is no end");
        drop(theirs);
        assert_eq!(watched.read(&mut buf).await.unwrap(), 0);
        assert!(gone.is_cancelled());
    }

    #[tokio::test]
    async fn writes_pass_through() {
        let (ours, mut theirs) = tokio::net::UnixStream::pair().unwrap();
        let (mut watched, _gone) = Watched::new(ours);
        watched.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        theirs.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
    }
}
