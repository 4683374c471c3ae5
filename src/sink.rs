//! Where writers put bytes: a hasher ([`Sha256Hasher`](crate::Sha256Hasher)), a
//! caller's buffer, a counter, or (with `std`) any `io::Write`. Writers are generic over
//! [`ByteSink`] so the same code serialises into SHA-256 for a fingerprint and into a
//! buffer for a frame, with no allocation.

use core::convert::Infallible;

/// A destination for bytes, for every writer of the crate.
///
/// ```
/// use membrane_frame::{ByteSink, CountingSink, SliceSink};
/// # let bytes = membrane_frame::example_frame();
/// # let identity = membrane_frame::Frame::parse(&bytes)?.identity().unwrap().clone();
/// let mut counter = CountingSink::default();
/// let Ok(()) = identity.write_canonical(&mut counter);
/// let mut buf = [0u8; 512];
/// let mut sink = SliceSink::new(&mut buf);
/// identity.write_canonical(&mut sink).unwrap();
/// assert_eq!(sink.len() as u64, counter.0);
/// assert_eq!(sink.written(), identity.source().unwrap()); // the canonical text, as stored
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub trait ByteSink {
    /// What a failed write reports.
    type Error;
    /// Append `bytes`.
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
}

impl<S: ByteSink + ?Sized> ByteSink for &mut S {
    type Error = S::Error;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), S::Error> {
        (**self).write_bytes(bytes)
    }
}

/// The output buffer of a [`SliceSink`] is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferFull;

/// Writes into a caller's buffer; fails with [`BufferFull`] instead of overrunning it.
#[derive(Debug)]
pub struct SliceSink<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl<'b> SliceSink<'b> {
    /// A sink that fills `buf` from the start.
    pub fn new(buf: &'b mut [u8]) -> SliceSink<'b> {
        SliceSink { buf, len: 0 }
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Number of bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl ByteSink for SliceSink<'_> {
    type Error = BufferFull;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), BufferFull> {
        let end = self.len.checked_add(bytes.len()).ok_or(BufferFull)?;
        let target = self.buf.get_mut(self.len..end).ok_or(BufferFull)?;
        target.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }
}

/// Counts bytes without storing them (to size a buffer before writing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountingSink(pub u64);

impl ByteSink for CountingSink {
    type Error = Infallible;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        self.0 = self.0.saturating_add(bytes.len() as u64);
        Ok(())
    }
}

// ---- the three things every writer offers, written once ----
//
// Each writer has one generic `write_to(sink)`; these turn it into "how long is it",
// "write it into this buffer" and "is this text exactly what it writes".

/// Length in bytes of what `write` produces.
pub(crate) fn encoded_len_of(write: impl FnOnce(&mut CountingSink) -> Result<(), Infallible>) -> usize {
    let mut counter = CountingSink::default();
    let Ok(()) = write(&mut counter);
    usize::try_from(counter.0).unwrap_or(usize::MAX)
}

/// Write `len` bytes (as [`encoded_len_of`] measured them) into `out`: the length, or
/// `buffer_too_small` with the length needed and `out` untouched.
pub(crate) fn write_into_checked(
    out: &mut [u8],
    len: usize,
    write: impl FnOnce(&mut SliceSink<'_>) -> Result<(), BufferFull>,
) -> Result<usize, crate::error::Error> {
    let too_small = crate::error::Error::buffer_too_small(len as u64);
    let target = out.get_mut(..len).ok_or(too_small)?;
    let mut sink = SliceSink::new(target);
    write(&mut sink).map_err(|_| too_small)?;
    Ok(sink.len())
}

/// Whether `write` produces exactly `expected`.
pub(crate) fn writes_exactly(expected: &[u8], write: impl FnOnce(&mut CompareSink<'_>) -> Result<(), Differs>) -> bool {
    let mut compare = CompareSink::new(expected);
    write(&mut compare).is_ok() && compare.is_complete()
}

/// Compares what is written with an expected text and stops at the first difference.
#[derive(Debug)]
pub(crate) struct CompareSink<'e> {
    rest: &'e [u8],
}

/// The written bytes differ from the expected ones.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Differs;

impl<'e> CompareSink<'e> {
    pub(crate) fn new(expected: &'e [u8]) -> CompareSink<'e> {
        CompareSink { rest: expected }
    }

    /// Whether everything expected was written, and nothing more.
    pub(crate) fn is_complete(&self) -> bool {
        self.rest.is_empty()
    }
}

impl ByteSink for CompareSink<'_> {
    type Error = Differs;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Differs> {
        match self.rest.split_at_checked(bytes.len()) {
            Some((head, tail)) if head == bytes => {
                self.rest = tail;
                Ok(())
            }
            _ => Err(Differs),
        }
    }
}

/// Collects small writes into `N`-byte batches for an inner sink; call
/// [`flush`](Self::flush) at the end.
pub(crate) struct BufferedSink<'s, S: ByteSink + ?Sized, const N: usize> {
    inner: &'s mut S,
    buf: [u8; N],
    len: usize,
}

impl<'s, S: ByteSink + ?Sized, const N: usize> BufferedSink<'s, S, N> {
    pub(crate) fn new(inner: &'s mut S) -> Self {
        BufferedSink { inner, buf: [0; N], len: 0 }
    }

    /// Hand the batched bytes to the inner sink.
    pub(crate) fn flush(&mut self) -> Result<(), S::Error> {
        let pending = self.buf.get(..self.len).unwrap_or(&[]);
        self.len = 0;
        if pending.is_empty() {
            return Ok(());
        }
        self.inner.write_bytes(pending)
    }
}

impl<S: ByteSink + ?Sized, const N: usize> ByteSink for BufferedSink<'_, S, N> {
    type Error = S::Error;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), S::Error> {
        if let Some(slot) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            slot.copy_from_slice(bytes);
            self.len += bytes.len();
            return Ok(());
        }
        self.flush()?;
        match self.buf.get_mut(..bytes.len()) {
            Some(slot) => {
                slot.copy_from_slice(bytes);
                self.len = bytes.len();
                Ok(())
            }
            None => self.inner.write_bytes(bytes),
        }
    }
}

/// The error of a sink seen through [`write_erased`]: the sink's own error is kept
/// there, and the writer only learns that it must stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stopped;

/// The sink type a serialiser is compiled against once, whatever sink it writes into.
pub(crate) type ErasedSink<'s> = dyn ByteSink<Error = Stopped> + 's;

/// Runs `write` against `sink` seen as an [`ErasedSink`], and returns the sink's own
/// error if it failed. The canonical writer and the string escaper are written against
/// the erased sink so that their code exists once instead of once per sink type (a
/// counter, a comparison, a buffer, a hasher): on a microcontroller the copies were a
/// sixth of the frame path. A call through the `dyn` sink costs a few nanoseconds, next
/// to the copy or the hashing every write does.
pub(crate) fn write_erased<S: ByteSink + ?Sized>(
    sink: &mut S,
    write: impl FnOnce(&mut ErasedSink<'_>) -> Result<(), Stopped>,
) -> Result<(), S::Error> {
    let mut erased = Erased { sink, error: None };
    // `Stopped` comes only from `Erased`, which kept the error it stands for.
    let _ = write(&mut erased);
    erased.error.map_or(Ok(()), Err)
}

struct Erased<'s, S: ByteSink + ?Sized> {
    sink: &'s mut S,
    error: Option<S::Error>,
}

impl<S: ByteSink + ?Sized> ByteSink for Erased<'_, S> {
    type Error = Stopped;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Stopped> {
        if self.error.is_some() {
            return Err(Stopped);
        }
        self.sink.write_bytes(bytes).map_err(|error| {
            self.error = Some(error);
            Stopped
        })
    }
}

/// Adapts any `std::io::Write` (a file, a socket, a `Vec<u8>`).
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct IoSink<W: std::io::Write>(pub W);

#[cfg(feature = "std")]
impl<W: std::io::Write> ByteSink for IoSink<W> {
    type Error = std::io::Error;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), std::io::Error> {
        self.0.write_all(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_expected_bytes_exactly_compare_equal() {
        let write = |parts: &'static [&'static [u8]]| {
            move |sink: &mut CompareSink<'_>| parts.iter().try_for_each(|part| sink.write_bytes(part))
        };
        assert!(writes_exactly(b"abc", write(&[b"ab", b"c"])));
        assert!(writes_exactly(b"", write(&[])));
        // A prefix is too little; the expected text and more is too much.
        assert!(!writes_exactly(b"abc", write(&[b"ab"])));
        assert!(!writes_exactly(b"abc", write(&[b"abc", b"d"])));
        assert!(!writes_exactly(b"abc", write(&[b"abd"])));
    }

    #[test]
    fn slice_sink_never_overruns() {
        let mut buf = [0u8; 4];
        let mut sink = SliceSink::new(&mut buf);
        assert_eq!(sink.write_bytes(b"abc"), Ok(()));
        assert_eq!(sink.write_bytes(b"de"), Err(BufferFull));
        assert_eq!(sink.written(), b"abc");
    }

    #[test]
    fn a_borrowed_sink_writes_into_the_sink_it_borrows() {
        fn write_to(mut sink: impl ByteSink<Error = BufferFull>, bytes: &[u8]) -> Result<(), BufferFull> {
            sink.write_bytes(bytes)
        }
        let mut buf = [0u8; 4];
        let mut sink = SliceSink::new(&mut buf);
        assert!(sink.is_empty());
        assert_eq!(write_to(&mut sink, b"ab"), Ok(()));
        assert_eq!(write_to(&mut sink, b"cde"), Err(BufferFull));
        assert!(!sink.is_empty());
        assert_eq!((sink.written(), sink.len()), (&b"ab"[..], 2));
    }

    #[test]
    fn buffered_sink_batches_and_passes_big_writes_through() {
        let mut out = [0u8; 64];
        let mut inner = SliceSink::new(&mut out);
        let mut buffered = BufferedSink::<_, 8>::new(&mut inner);
        for piece in [&b"ab"[..], b"cdef", b"ghij", b"0123456789", b"k"] {
            buffered.write_bytes(piece).unwrap();
        }
        buffered.flush().unwrap();
        assert_eq!(inner.written(), b"abcdefghij0123456789k");
    }

    #[test]
    fn an_erased_sink_passes_bytes_through_and_keeps_the_first_error() {
        let mut out = [0u8; 4];
        let mut sink = SliceSink::new(&mut out);
        let mut calls = 0;
        let result = write_erased(&mut sink, |erased| {
            for piece in [&b"ab"[..], b"cde", b"f"] {
                calls += 1;
                erased.write_bytes(piece)?;
            }
            Ok(())
        });
        assert_eq!((result, calls), (Err(BufferFull), 2));
        assert_eq!(sink.written(), b"ab");
        // A writer that ignores the failure and writes on still gets the sink's error,
        // and the sink gets nothing more.
        let mut out = [0u8; 4];
        let mut sink = SliceSink::new(&mut out);
        let result = write_erased(&mut sink, |erased| {
            let _ = erased.write_bytes(b"abcde");
            erased.write_bytes(b"x")
        });
        assert_eq!((result, sink.written()), (Err(BufferFull), &b""[..]));
        let mut counter = CountingSink::default();
        assert_eq!(write_erased(&mut counter, |erased| erased.write_bytes(b"abc")), Ok(()));
        assert_eq!(counter.0, 3);
    }

    #[test]
    fn compare_sink_detects_prefix_and_difference() {
        let mut sink = CompareSink::new(b"abcd");
        assert!(sink.write_bytes(b"ab").is_ok());
        assert!(!sink.is_complete());
        assert!(sink.write_bytes(b"cx").is_err());
    }
}
