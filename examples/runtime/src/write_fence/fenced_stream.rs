//! The socket end of the write fence: a connection stream that hands no byte to the operating system once
//! the fence is shut.
//!
//! It sits directly on the TCP stream, beneath TLS, so the check runs in the same `poll_write` call that
//! makes the `write`/`writev` system call: whatever was queued, serialised or encrypted before the fence
//! shut (a request that passed [`WriteFence::guard`]'s check just before the process froze) is refused
//! here when the process wakes. Reads, flushes and shutdowns pass: they send no new request.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};

use super::WriteFence;

/// A connection stream that refuses to write once its fence is shut (see the module docs).
#[derive(Debug)]
pub struct FencedStream<S> {
    inner: S,
    fence: WriteFence,
}

/// Why a [`FencedStream`] refused to write (the payload of the `io::Error` it returns).
#[derive(Debug, thiserror::Error)]
#[error(
    "the write fence is shut: this process's leadership term is over, so its fenced connection to the \
     API server sends nothing more ({bytes} byte(s) held back)"
)]
pub struct ConnectionFenced {
    /// How many bytes the refused write carried.
    pub bytes: usize,
}

impl<S> FencedStream<S> {
    /// `inner`, writing only while `fence` admits writes.
    pub fn new(inner: S, fence: WriteFence) -> Self {
        Self { inner, fence }
    }

    /// `Ok` while the fence admits writes, the error a refused write returns otherwise.
    fn admit(&self, bytes: usize) -> io::Result<()> {
        if self.fence.admits_writes_at(Instant::now()) {
            Ok(())
        } else {
            let refused = ConnectionFenced { bytes };
            tracing::warn!(error = %refused, "connection write fenced");
            Err(io::Error::new(io::ErrorKind::PermissionDenied, refused))
        }
    }
}

impl<S: Read + Unpin> Read for FencedStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: Write + Unpin> Write for FencedStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Err(refused) = this.admit(buf.len()) {
            return Poll::Ready(Err(refused));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Err(refused) = this.admit(bufs.iter().map(|buf| buf.len()).sum()) {
            return Poll::Ready(Err(refused));
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl<S: Connection> Connection for FencedStream<S> {
    fn connected(&self) -> Connected {
        self.inner.connected()
    }
}
