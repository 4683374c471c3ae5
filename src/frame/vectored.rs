//! A frame written to an `io::Write` (a file, a socket) from its parts with vectored
//! writes: the head, the payload where it lies in the caller's buffers (one slice or
//! many, as the K and V slabs of a cache are), the trailer. Short writes are continued
//! and interruptions retried; nothing of the payload is copied. Needs `std`.

use super::writer::{FrameEncoder, WriteError, WriteOptions};
use crate::digest::{Sha256Digest, Sha256Hasher};
use crate::error::{Error, ErrorCode};
use crate::identity::PayloadIdentity;
use crate::sink::IoSink;
use std::io::{self, IoSlice, Write};

/// Slices handed to one `write_vectored` call: well under every system's `IOV_MAX`
/// (1024 on Linux), and on the stack.
const SLICES_PER_CALL: usize = 64;

/// A head this short is written from the stack in the same vectored call as the
/// payload; a longer one (a large identity) is written first, on its own.
const STACK_HEAD: usize = 4096;

/// What [`write_frame_vectored`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrittenFrame {
    /// Bytes written in all.
    pub frame_len: u64,
    /// Bytes of the head (header, identity with its padding, payload length).
    pub head_len: usize,
    /// The stored identity length: the canonical identity and its padding.
    pub identity_len: u32,
    /// Spaces after the canonical identity that align the payload (SPEC §1.5).
    pub padding: u32,
    /// SHA-256 of the payload.
    pub payload_digest: Sha256Digest,
}

/// Write the frame of `identity` and the payload `parts` (concatenated, in order: any
/// iterator of byte slices that can be walked more than once) to `out`.
///
/// `payload_digest` is the SHA-256 of the payload when the caller has it already (it
/// needed it for `payload_hash`); `None` hashes the parts here, one pass. Either way the
/// identity's `payload_hash` must be that digest in hex, or nothing is written and the
/// error is `payload_hash_mismatch` (field `payload_hash`): such a frame would fail the
/// full verification level. Options as for [`FrameEncoder::with_options`].
///
/// On an I/O error, part of the frame may have been written.
///
/// ```
/// # let bytes = membrane_frame::example_frame();
/// # let parsed = membrane_frame::Frame::parse(&bytes)?;
/// # let identity = parsed.identity().unwrap().clone();
/// use membrane_frame::frame::{write_frame_vectored, WriteOptions};
/// use membrane_frame::Frame;
/// let payload = parsed.payload();
/// let (k, v) = payload.split_at(2);
/// let mut out = Vec::new();
/// let written = write_frame_vectored(&mut out, &identity, [k, v], &WriteOptions::new(), None).unwrap();
/// assert_eq!(written.frame_len as usize, out.len());
/// assert_eq!(Frame::parse(&out)?.payload(), payload);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub fn write_frame_vectored<'p, W, I>(
    out: &mut W,
    identity: &PayloadIdentity<'_>,
    parts: I,
    options: &WriteOptions,
    payload_digest: Option<&Sha256Digest>,
) -> Result<WrittenFrame, WriteError<io::Error>>
where
    W: Write + ?Sized,
    I: IntoIterator<Item = &'p [u8]>,
    I::IntoIter: Clone,
{
    let parts = parts.into_iter();
    let mut payload_len: u64 = 0;
    for part in parts.clone() {
        payload_len = payload_len
            .checked_add(part.len() as u64)
            .ok_or(WriteError::Frame(Error::invalid_argument("payload", "the parts add up to more than 2^64 bytes")))?;
    }
    let digest = match payload_digest {
        Some(digest) => *digest,
        None => {
            let mut hasher = Sha256Hasher::new();
            parts.clone().for_each(|part| hasher.update(part));
            hasher.finish()
        }
    };
    if !identity.payload_hash().eq_str(digest.to_hex().as_str()) {
        return Err(WriteError::Frame(
            Error::new(ErrorCode::PayloadHashMismatch, "payload_hash is not the SHA-256 of the payload given")
                .in_field("payload_hash"),
        ));
    }
    let encoder = FrameEncoder::with_options(identity, payload_len, options).map_err(WriteError::Frame)?;
    let trailer = digest.trailer();

    let mut stack_head = [0u8; STACK_HEAD];
    let head: &[u8] = match stack_head.get_mut(..encoder.head_len()) {
        Some(buf) => {
            encoder.write_head_into(buf).map_err(WriteError::Frame)?;
            buf
        }
        None => {
            encoder.write_head_to(&mut IoSink(&mut *out)).map_err(WriteError::Sink)?;
            &[]
        }
    };

    // Head, parts and trailer, SLICES_PER_CALL at a time.
    let pieces = core::iter::once(head)
        .chain(parts.map(|part| {
            let part: &[u8] = part; // as long as the local head and trailer
            part
        }))
        .chain(core::iter::once(&trailer[..]));
    let mut batch: [IoSlice<'_>; SLICES_PER_CALL] = [IoSlice::new(&[]); SLICES_PER_CALL];
    let mut filled = 0;
    for piece in pieces.filter(|piece| !piece.is_empty()) {
        if filled == SLICES_PER_CALL {
            write_all_vectored(out, batch.get_mut(..filled).unwrap_or(&mut [])).map_err(WriteError::Sink)?;
            filled = 0;
        }
        if let Some(slot) = batch.get_mut(filled) {
            *slot = IoSlice::new(piece);
            filled += 1;
        }
    }
    write_all_vectored(out, batch.get_mut(..filled).unwrap_or(&mut [])).map_err(WriteError::Sink)?;
    Ok(WrittenFrame {
        frame_len: encoder.frame_len(),
        head_len: encoder.head_len(),
        identity_len: encoder.identity_len(),
        padding: encoder.padding(),
        payload_digest: digest,
    })
}

/// Every byte of `slices`, continuing after short writes and retrying interruptions.
fn write_all_vectored<W: Write + ?Sized>(out: &mut W, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "the writer took no bytes")),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::PayloadAlignment;
    use std::vec::Vec;

    /// A writer that takes at most `max` bytes a call and is interrupted every third call.
    struct Trickle {
        out: Vec<u8>,
        max: usize,
        calls: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "signal"));
            }
            let n = buf.len().min(self.max);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn identity_of(hash: &str) -> PayloadIdentity<'_> {
        values_of(hash).build().unwrap()
    }

    fn values_of(hash: &str) -> crate::IdentityValues<'_> {
        crate::IdentityValues {
            payload_hash: hash,
            model_id: "llama-3-8b",
            model_revision: "2024-05",
            tokenizer_name: "llama-3-8b",
            tokenizer_revision: "",
            layer_range: crate::InclusiveRange::new(0, 0),
            head_range: crate::InclusiveRange::ALL_HEADS,
            token_span: crate::InclusiveRange::new(0, 9),
            dtype: crate::Dtype::Uint8,
            shape: &[10],
        }
    }

    fn hash_of(payload: &[u8]) -> std::string::String {
        Sha256Digest::of(payload).to_hex().as_str().into()
    }

    #[test]
    fn many_parts_short_writes_and_interruptions_give_the_encoders_bytes() {
        let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let hash = hash_of(&payload);
        let identity = identity_of(&hash);
        // 100 parts: more than one vectored call's worth of slices.
        let parts: Vec<&[u8]> = payload.chunks(50).collect();
        for options in [WriteOptions::new(), WriteOptions::new().aligned(PayloadAlignment::new(4096, 3).unwrap())] {
            let mut expected = std::vec![0u8; 16384];
            let n = crate::frame::encode_frame_with(&identity, &payload, &mut expected, &options).unwrap();
            expected.truncate(n);
            let mut out = Trickle { out: Vec::new(), max: 77, calls: 0 };
            let written = write_frame_vectored(&mut out, &identity, parts.iter().copied(), &options, None).unwrap();
            assert_eq!(out.out, expected);
            assert_eq!(written.frame_len as usize, expected.len());
            assert_eq!(written.payload_digest, Sha256Digest::of(&payload));
            let given = write_frame_vectored(
                &mut Vec::new(),
                &identity,
                parts.iter().copied(),
                &options,
                Some(&written.payload_digest),
            );
            assert_eq!(given.unwrap(), written);
        }
    }

    /// A writer that takes every slice it is given, and counts the slices of each call.
    #[derive(Default)]
    struct Gather {
        out: Vec<u8>,
        slices_per_call: Vec<usize>,
    }

    impl Write for Gather {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(buf)])
        }
        fn write_vectored(&mut self, slices: &[IoSlice<'_>]) -> io::Result<usize> {
            self.slices_per_call.push(slices.len());
            slices.iter().for_each(|slice| self.out.extend_from_slice(slice));
            Ok(slices.iter().map(|slice| slice.len()).sum())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn slices_go_out_sixty_four_to_a_call() {
        let payload: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let hash = hash_of(&payload);
        let identity = identity_of(&hash);
        // Head, 100 parts and trailer: 102 slices, so two calls of 64 and 38.
        let parts: Vec<&[u8]> = payload.chunks(10).collect();
        let mut out = Gather::default();
        write_frame_vectored(&mut out, &identity, parts.iter().copied(), &WriteOptions::new(), None).unwrap();
        assert_eq!(out.slices_per_call, [SLICES_PER_CALL, 102 - SLICES_PER_CALL]);
        let mut expected = std::vec![0u8; 4096];
        let n = crate::frame::encode_frame(&identity, &payload, &mut expected).unwrap();
        assert_eq!(out.out, expected[..n]);
    }

    #[test]
    fn a_head_longer_than_the_stack_buffer_is_written_first() {
        let payload = [5u8; 10];
        let hash = hash_of(&payload);
        let model = "m".repeat(2 * STACK_HEAD);
        let identity = crate::IdentityValues { model_id: &model, ..values_of(&hash) }.build().unwrap();
        let mut expected = std::vec![0u8; 3 * STACK_HEAD];
        let n = crate::frame::encode_frame(&identity, &payload, &mut expected).unwrap();
        expected.truncate(n);
        let mut out = Trickle { out: Vec::new(), max: 1000, calls: 0 };
        let written = write_frame_vectored(&mut out, &identity, [&payload[..]], &WriteOptions::new(), None).unwrap();
        assert!(written.head_len > STACK_HEAD);
        assert_eq!(out.out, expected);
    }

    #[test]
    fn a_payload_hash_that_is_not_the_payloads_writes_nothing() {
        let payload = [1u8, 2, 3];
        let hash = hash_of(&payload);
        let identity = identity_of(&hash);
        let mut out = Vec::new();
        let err = write_frame_vectored(&mut out, &identity, [&payload[..2]], &WriteOptions::new(), None).unwrap_err();
        let WriteError::Frame(err) = err else { unreachable!("no byte was written, so the sink cannot have failed") };
        assert_eq!(err.code(), ErrorCode::PayloadHashMismatch);
        assert_eq!(err.field(), Some("payload_hash"));
        let wrong = Sha256Digest::of(b"other");
        assert!(write_frame_vectored(&mut out, &identity, [&payload[..]], &WriteOptions::new(), Some(&wrong)).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn an_error_other_than_an_interruption_is_returned_not_retried() {
        /// Fails its first call with a broken pipe, then takes everything.
        struct BrokenOnce(bool, Vec<u8>);
        impl Write for BrokenOnce {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if !self.0 {
                    self.0 = true;
                    return Err(io::Error::new(io::ErrorKind::BrokenPipe, "peer gone"));
                }
                self.1.extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let payload = [4u8; 10];
        let hash = hash_of(&payload);
        let identity = identity_of(&hash);
        let mut out = BrokenOnce(false, Vec::new());
        let result = write_frame_vectored(&mut out, &identity, [&payload[..]], &WriteOptions::new(), None);
        assert!(
            matches!(result, Err(WriteError::Sink(ref err)) if err.kind() == io::ErrorKind::BrokenPipe),
            "{result:?}"
        );
        assert!(out.1.is_empty(), "nothing after the failure");
    }

    #[test]
    fn a_writer_that_takes_nothing_is_an_error_not_a_loop() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Ok(0)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let payload = [9u8; 10];
        let hash = hash_of(&payload);
        let identity = identity_of(&hash);
        let result = write_frame_vectored(&mut Full, &identity, [&payload[..]], &WriteOptions::new(), None);
        assert!(
            matches!(result, Err(WriteError::Sink(ref err)) if err.kind() == io::ErrorKind::WriteZero),
            "{result:?}"
        );
    }
}
