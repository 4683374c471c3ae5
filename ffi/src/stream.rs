//! Verifying a frame that arrives in chunks (SPEC §1.3), with the verifier's state in
//! caller memory and the identity kept in a caller buffer.

use crate::boundary::{boundary, NO_DETAIL};
use crate::frame::mbr_read_options;
use crate::identity::mbr_identity;
use crate::object::{non_null, opaque, read_into, store, take, try_mut};
use crate::out::Out;
use crate::slice::{input, output};
use crate::status::mbr_error;
use core::mem::MaybeUninit;
use membrane::{StreamStatus, StreamVerifier, StreamedFrame};

/// Size in bytes of `mbr_stream_verifier`.
pub const MBR_STREAM_VERIFIER_SIZE: usize = 512;
/// Alignment in bytes of `mbr_stream_verifier`.
pub const MBR_STREAM_VERIFIER_ALIGN: usize = 8;

/// A frame being verified as it streams in, in storage the caller owns (a local or a
/// struct member; opaque). Start it with `mbr_stream_verifier_init`. The payload is
/// hashed as it passes and never stored; the identity is kept in the caller's buffer
/// given at init, which must stay alive and untouched until
/// `mbr_stream_verifier_finish` (and as long as its result is used). Nothing to free.
/// One thread at a time.
#[repr(C)]
pub struct mbr_stream_verifier {
    _opaque: [MaybeUninit<u64>; 64],
}

opaque!(mbr_stream_verifier => StreamVerifier<'a>, b"mbr_veri", "verifier", MBR_STREAM_VERIFIER_SIZE, MBR_STREAM_VERIFIER_ALIGN);

/// Progress after a chunk.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_stream_progress {
    /// Whether every byte of the frame is in (call `mbr_stream_verifier_finish`).
    pub complete: bool,
    /// While incomplete: at least this many more bytes are needed.
    pub need_more: u64,
    /// Bytes of this chunk that belonged to the frame: the whole chunk while
    /// incomplete; in prefix mode, once complete, the rest is the caller's.
    pub consumed: usize,
}

/// The verdict of a successful streamed verification.
#[repr(C)]
pub struct mbr_streamed_frame {
    /// The identity JSON as stored, in the caller's identity buffer (NULL when the
    /// buffer could not hold it: only possible at the layout level).
    pub identity_json: *const u8,
    /// Its length.
    pub identity_json_len: usize,
    /// Payload length.
    pub payload_len: u64,
    /// Total frame length.
    pub frame_len: u64,
    /// The stored trailer.
    pub trailer: [u8; 8],
    /// SHA-256 of the payload (trailer level and above).
    pub payload_sha256: [u8; 32],
    /// Whether `payload_sha256` was computed.
    pub has_payload_sha256: bool,
    /// Whether `identity` holds the parsed identity (identity level and above).
    pub has_identity: bool,
    /// The level verified.
    pub level: u32,
    /// Offset of the payload in the frame, `22 + identity_json_len` (SPEC §1.5).
    pub payload_offset: u64,
    /// Spaces after a canonical identity (SPEC §1.5); 0 for an identity that is not
    /// canonical and at the layout level.
    pub padding: usize,
    /// The parsed identity; it points into the caller's identity buffer.
    pub identity: mbr_identity,
}

/// Start (or restart) verifying a frame with `options` (level, exact or prefix mode,
/// limits). `identity_buf` (`identity_capacity` bytes; `(NULL, 0)` at the layout
/// level) keeps the identity: at the identity level and above it must hold the whole
/// identity, else feeding fails with `MBR_BUFFER_TOO_SMALL` once the whole head has
/// arrived (a stream that ends inside the head gets `MBR_IDENTITY_OVERRUN` from finish,
/// as the one-shot reader would say).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (unknown level or mode) or
/// `MBR_NULL_POINTER`. `*verifier` is initialised only on success.
///
/// # Safety
/// `verifier` is NULL or points to writable `mbr_stream_verifier` storage;
/// `identity_buf` is NULL or points to `identity_capacity` writable bytes, left alone
/// by the caller while the verifier (and its result) is in use.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_stream_verifier_init(
    verifier: *mut mbr_stream_verifier,
    options: mbr_read_options,
    identity_buf: *mut u8,
    identity_capacity: usize,
) -> u32 {
    boundary(NO_DETAIL, || {
        let verifier = Out::new(verifier, "verifier")?;
        let options = options.to_rust()?;
        store(verifier, StreamVerifier::new(options, output(identity_buf, identity_capacity, "identity_buf")?));
        Ok(())
    })
}

/// Feed the next chunk (any size; `(NULL, 0)` is empty). Errors are reported as soon
/// as they are certain; after one, every call repeats it.
///
/// Returns `MBR_OK` with `*out` saying whether the frame is complete, a SPEC §8 frame
/// code (detail in `*error`), `MBR_BUFFER_TOO_SMALL` (the identity buffer),
/// `MBR_INVALID_STATE` (not initialised, or finished) or `MBR_NULL_POINTER`. `error`
/// may be NULL.
///
/// # Safety
/// `verifier` is NULL or points to an `mbr_stream_verifier` not in use by another
/// call; `chunk` is NULL or points to `len` readable bytes; `out` and `error` are each
/// NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_stream_verifier_feed(
    verifier: *mut mbr_stream_verifier,
    chunk: *const u8,
    len: usize,
    out: *mut mbr_stream_progress,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let (verifier, out) = (try_mut(verifier)?, Out::new(out, "out")?);
        let chunk = input(chunk, len, "chunk")?;
        let progress = match verifier.feed(chunk)? {
            StreamStatus::NeedMore(need_more) => {
                mbr_stream_progress { complete: false, need_more, consumed: chunk.len() }
            }
            StreamStatus::Complete { consumed } => mbr_stream_progress { complete: true, need_more: 0, consumed },
        };
        out.write(progress);
        Ok(())
    })
}

/// Bytes of the frame received so far.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `verifier` is NULL or points to an `mbr_stream_verifier` not being fed meanwhile;
/// `out` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_stream_verifier_received(verifier: *const mbr_stream_verifier, out: *mut u64) -> u32 {
    read_into(verifier, out, "out", |verifier| Ok(verifier.received()))
}

/// End of stream: the verdict on the bytes fed. Checks the trailer (and, at the full
/// level, `payload_hash`) or says what the frame was cut short in. The verifier is
/// finished whatever the result.
///
/// Returns `MBR_OK` with `*out` filled, a SPEC §8 frame code (detail in `*error`),
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `verifier` is NULL or points to an `mbr_stream_verifier` not in use by another
/// call; `out` and `error` are each NULL or writable. The result points into the
/// identity buffer given at init, which must stay alive while it is used.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_stream_verifier_finish(
    verifier: *mut mbr_stream_verifier,
    out: *mut mbr_streamed_frame,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(verifier, "verifier")?;
        let out = Out::new(out, "out")?;
        // Finished in place, the verdict built in place: on a microcontroller the
        // verifier and the verdict moved about would be most of the stack.
        let mut slot = None;
        let finished = try_mut(verifier)?.finish_to(&mut slot);
        retire(verifier);
        finished?;
        if let Some(verified) = &slot {
            write_verdict(out, verified);
        }
        Ok(())
    })
}

/// Mark the verifier's storage finished (the verifier was spent by `finish_to`). Out of
/// line: the value moved out to be dropped is on the stack only here.
#[inline(never)]
fn retire(verifier: *mut mbr_stream_verifier) {
    drop(take(verifier));
}

/// The C view of `verified` into `out`, field by field in place.
fn write_verdict(out: Out<'_, mbr_streamed_frame>, verified: &StreamedFrame<'_>) {
    let view = out.write_then(mbr_streamed_frame {
        identity_json: core::ptr::null(),
        identity_json_len: 0,
        payload_len: verified.payload_len(),
        frame_len: verified.frame_len(),
        trailer: verified.trailer(),
        payload_sha256: [0; 32],
        has_payload_sha256: false,
        has_identity: verified.identity().is_some(),
        level: verified.level() as u32,
        payload_offset: verified.payload_offset(),
        padding: verified.padding(),
        identity: mbr_identity::EMPTY,
    });
    if let Some(json) = verified.identity_json() {
        view.identity_json = json.as_ptr();
        view.identity_json_len = json.len();
    }
    if let Some(digest) = verified.payload_digest() {
        view.payload_sha256 = *digest.as_bytes();
        view.has_payload_sha256 = true;
    }
    view.identity.fill(verified.identity());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{mbr_frame, mbr_frame_parse, mbr_read_options_default, MBR_LEVEL_FULL};
    use crate::identity::{mbr_identity_fingerprint, mbr_identity_string, MBR_FIELD_MODEL_ID};
    use crate::status::{MBR_INVALID_STATE, MBR_OK};
    use crate::writer::{mbr_chunked_outcome, mbr_chunked_writer, mbr_chunked_writer_begin};
    use crate::writer::{mbr_chunked_writer_finish, mbr_chunked_writer_write};
    use core::ffi::{c_int, c_void};
    use core::mem::MaybeUninit;

    unsafe extern "C" fn append(userdata: *mut c_void, buf: *const u8, len: usize) -> c_int {
        // SAFETY: the test passes a Vec<u8> and the writer `len` readable bytes.
        unsafe { (*userdata.cast::<Vec<u8>>()).extend_from_slice(core::slice::from_raw_parts(buf, len)) };
        0
    }

    /// Storage round trips through every kind of slot: a frame view's identity, a
    /// chunked writer, a stream verifier (what Miri checks for soundness).
    #[test]
    fn storage_round_trips_through_the_c_abi() {
        let bytes = membrane::example_frame();
        let mut options = mbr_read_options_default();
        options.level = MBR_LEVEL_FULL;
        let mut frame = MaybeUninit::<mbr_frame>::uninit();
        let mut text = [0 as core::ffi::c_char; 32];
        let mut len = 0usize;
        let mut rewritten = Vec::new();
        // SAFETY: every pointer is valid for what the C ABI reads or writes, and the
        // buffers outlive the objects that borrow them.
        unsafe {
            let status =
                mbr_frame_parse(bytes.as_ptr(), bytes.len(), options, frame.as_mut_ptr(), core::ptr::null_mut());
            assert_eq!(status, MBR_OK);
            let frame = frame.assume_init();
            let copy = core::ptr::read(&frame.identity); // views are plain data
            let status = mbr_identity_string(&copy, MBR_FIELD_MODEL_ID, text.as_mut_ptr(), text.len(), &mut len);
            assert_eq!((status, len), (MBR_OK, 10));

            let mut writer = MaybeUninit::<mbr_chunked_writer>::uninit();
            let userdata = (&mut rewritten as *mut Vec<u8>).cast::<c_void>();
            let begun =
                mbr_chunked_writer_begin(writer.as_mut_ptr(), &copy, 5, Some(append), userdata, core::ptr::null_mut());
            assert_eq!(begun, MBR_OK);
            assert_eq!(
                mbr_chunked_writer_write(writer.as_mut_ptr(), b"hello".as_ptr(), 5, core::ptr::null_mut()),
                MBR_OK
            );
            let mut outcome = MaybeUninit::<mbr_chunked_outcome>::uninit();
            assert_eq!(
                mbr_chunked_writer_finish(writer.as_mut_ptr(), outcome.as_mut_ptr(), core::ptr::null_mut()),
                MBR_OK
            );
            assert!(outcome.assume_init().payload_hash_matches);
            let again = mbr_chunked_writer_finish(writer.as_mut_ptr(), outcome.as_mut_ptr(), core::ptr::null_mut());
            assert_eq!(again, MBR_INVALID_STATE);
        }
        assert_eq!(rewritten, bytes);

        let mut identity_buf = [0u8; 512];
        let mut verifier = MaybeUninit::<mbr_stream_verifier>::uninit();
        let mut progress = MaybeUninit::<mbr_stream_progress>::uninit();
        let mut verdict = MaybeUninit::<mbr_streamed_frame>::uninit();
        // SAFETY: as above.
        unsafe {
            let buf = identity_buf.as_mut_ptr();
            assert_eq!(mbr_stream_verifier_init(verifier.as_mut_ptr(), options, buf, identity_buf.len()), MBR_OK);
            for chunk in bytes.chunks(50) {
                let status = mbr_stream_verifier_feed(
                    verifier.as_mut_ptr(),
                    chunk.as_ptr(),
                    chunk.len(),
                    progress.as_mut_ptr(),
                    core::ptr::null_mut(),
                );
                assert_eq!(status, MBR_OK);
            }
            assert!(progress.assume_init().complete);
            assert_eq!(
                mbr_stream_verifier_finish(verifier.as_mut_ptr(), verdict.as_mut_ptr(), core::ptr::null_mut()),
                MBR_OK
            );
            let verdict = verdict.assume_init();
            let mut fingerprint = MaybeUninit::uninit();
            assert_eq!(mbr_identity_fingerprint(&verdict.identity, fingerprint.as_mut_ptr()), MBR_OK);
            let parsed = membrane::Frame::parse(&bytes).unwrap();
            assert_eq!(fingerprint.assume_init().sha256, *parsed.identity().unwrap().fingerprint().as_bytes());
        }
    }
}
