//! Writing frames (SPEC §1.4): the lengths, the whole frame into one buffer, the head
//! and trailer for `writev` (no payload copy), and a chunked writer whose state lives
//! in caller memory and whose bytes go to a caller callback.

use crate::boundary::boundary;
use crate::digest::mbr_digest;
use crate::identity::mbr_identity;
use crate::object::{non_null, opaque, read_into, store, take, try_mut, try_ref};
use crate::out::Out;
#[cfg(all(feature = "std", unix))]
use crate::slice::byte_ranges;
use crate::slice::{input, write_out};
use crate::status::mbr_error;
use core::ffi::{c_int, c_void};
use core::mem::MaybeUninit;
use membrane::frame::MAX_PAYLOAD_ALIGN;
use membrane::{encode_frame_with, ByteSink, ChunkedFrameWriter, Error, FrameEncoder, WriteError};
use membrane::{PayloadAlignment, WriteOptions};

/// Plan an unpadded frame for `*identity` and `payload_len` bytes of payload. Contract
/// as for `object::try_ref`.
fn plan<'s>(identity: *const mbr_identity, payload_len: u64) -> Result<FrameEncoder<'s, 's>, Error> {
    FrameEncoder::new(try_ref(identity)?, payload_len)
}

/// The largest `align` of `mbr_write_options`: a page (SPEC §1.5).
pub const MBR_MAX_PAYLOAD_ALIGN: u32 = 4096;

const _: () = assert!(MBR_MAX_PAYLOAD_ALIGN == MAX_PAYLOAD_ALIGN);

/// Writer policy, passed by value. Start from `mbr_write_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_write_options {
    /// The payload starts at a multiple of `align` bytes from the start of the file or
    /// buffer (SPEC §1.5): a power of two from 1 (the default: no padding, the original
    /// writer's bytes) to `MBR_MAX_PAYLOAD_ALIGN`. 64 suits SIMD loads, 4096 O_DIRECT
    /// and GPUDirect Storage.
    pub align: u32,
    /// Largest identity length (padding included) the frame's readers accept; default
    /// `MBR_DEFAULT_IDENTITY_LIMIT`.
    pub identity_limit: u32,
    /// Where the frame itself will start in its file or buffer; default 0.
    pub base: u64,
}

impl mbr_write_options {
    /// The Rust options, or `invalid_argument` (field `align`) for a bad alignment.
    fn to_rust(self) -> Result<WriteOptions, Error> {
        Ok(WriteOptions::new()
            .aligned(PayloadAlignment::new(self.align, self.base)?)
            .identity_limit(self.identity_limit))
    }
}

/// The defaults: no padding (`align` 1, `base` 0), the default identity limit.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_write_options_default() -> mbr_write_options {
    let rust = WriteOptions::new();
    mbr_write_options {
        align: rust.alignment.align(),
        identity_limit: rust.identity_limit,
        base: rust.alignment.base(),
    }
}

/// The lengths of a frame written with `options`, from `mbr_frame_plan`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_frame_layout {
    /// The whole frame: `30 + identity_len + payload_len`.
    pub frame_len: u64,
    /// The head (header, identity and padding, payload length): `22 + identity_len`,
    /// which is also the payload's offset in the frame.
    pub head_len: usize,
    /// The stored identity length: the canonical identity and its padding.
    pub identity_len: u32,
    /// The spaces after the canonical identity that align the payload.
    pub padding: u32,
}

/// Plan a frame for `*identity` and `payload_len` bytes of payload as `options` say:
/// `*out` gets its lengths and padding.
///
/// Returns `MBR_OK`, `MBR_IDENTITY_TOO_LARGE` (identity and padding over
/// `options.identity_limit`), `MBR_INVALID_ARGUMENT` (a bad `align`, or the length
/// overflows), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` and
/// `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_plan(
    identity: *const mbr_identity,
    payload_len: u64,
    options: mbr_write_options,
    out: *mut mbr_frame_layout,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let encoder = FrameEncoder::with_options(try_ref(identity)?, payload_len, &options.to_rust()?)?;
        out.write(mbr_frame_layout {
            frame_len: encoder.frame_len(),
            head_len: encoder.head_len(),
            identity_len: encoder.identity_len(),
            padding: encoder.padding(),
        });
        Ok(())
    })
}

/// Write the frame of `*identity` and a payload lying in `count` byte ranges
/// (`payload[i]`, concatenated) to the file descriptor `fd` with `writev`: the head, the
/// ranges where they are, the trailer; nothing of the payload is copied. Short writes are
/// continued and `EINTR` retried (a non-blocking `fd` that would block is `MBR_IO`).
/// `*out` gets the lengths written. Hosted builds only (not in the `no_std` library).
///
/// `payload_digest` is the payload's SHA-256 when the caller has it (it needed it for
/// `payload_hash`: `mbr_sha256_ranges` or `mbr_sha256_*`); it is trusted, not recomputed
/// (the digest of other bytes gives a frame whose trailer check fails). NULL hashes the
/// ranges here (one pass). Either way the identity's `payload_hash` must be that digest,
/// or nothing is written and the call fails with `MBR_PAYLOAD_HASH_MISMATCH` (field
/// `payload_hash`): the frame would fail the full verification level.
///
/// Returns `MBR_OK`, `MBR_PAYLOAD_HASH_MISMATCH`, `MBR_IDENTITY_TOO_LARGE`,
/// `MBR_INVALID_ARGUMENT` (a negative `fd`, a bad `align`), `MBR_INVALID_STATE`,
/// `MBR_NULL_POINTER` (checked before anything is written) or `MBR_IO` (`errno` says
/// why; part of the frame may have been written). `error` may be NULL.
///
/// # Safety
/// `fd` is an open file descriptor, or negative; `identity` is NULL or points to an
/// `mbr_identity` (its borrows alive); `payload` is NULL (with `count` 0) or points to
/// `count` readable `mbr_bytes`, each NULL or pointing to `len` readable bytes;
/// `payload_digest` is NULL or readable; `out` and `error` are each NULL or writable.
#[cfg(all(feature = "std", unix))]
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_write_fd(
    fd: c_int,
    identity: *const mbr_identity,
    payload: *const crate::frame::mbr_bytes,
    count: usize,
    options: mbr_write_options,
    payload_digest: *const mbr_digest,
    out: *mut mbr_frame_layout,
    error: *mut mbr_error,
) -> u32 {
    use std::os::fd::FromRawFd;
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let identity = try_ref(identity)?;
        let options = options.to_rust()?;
        let list = input(payload, count, "payload")?;
        let digest = if payload_digest.is_null() {
            None
        } else {
            Some(membrane::Sha256Digest(crate::slice::value_of(payload_digest, "payload_digest")?.sha256))
        };
        if fd < 0 {
            return Err(Error::invalid_argument("fd", "not a file descriptor"));
        }
        // Every range is checked before anything is written.
        let parts = byte_ranges(list, "payload")?;
        // SAFETY: `fd` is an open descriptor (the contract) and non-negative (checked);
        // ManuallyDrop keeps the File from closing it, which stays the caller's.
        let mut file = core::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let written =
            membrane::frame::write_frame_vectored(&mut *file, identity, parts.slices(), &options, digest.as_ref())
                .map_err(|err| match err {
                    WriteError::Frame(err) => err,
                    WriteError::Sink(_) => Error::io("fd", "writev failed (errno says why)"),
                })?;
        out.write(mbr_frame_layout {
            frame_len: written.frame_len,
            head_len: written.head_len,
            identity_len: written.identity_len,
            padding: written.padding,
        });
        Ok(())
    })
}

/// The length of the frame for `*identity` and a payload of `payload_len` bytes:
/// `30 + canonical identity length + payload_len`.
///
/// Returns `MBR_OK`, `MBR_IDENTITY_TOO_LARGE` (canonical identity over 64 KiB),
/// `MBR_INVALID_ARGUMENT` (the length overflows), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out_len` and
/// `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_encoded_len(
    identity: *const mbr_identity,
    payload_len: u64,
    out_len: *mut u64,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out_len = Out::new(out_len, "out_len")?;
        out_len.write(plan(identity, payload_len)?.frame_len());
        Ok(())
    })
}

/// The length of the head (header, canonical identity, payload length):
/// `22 + canonical identity length`. The trailer is always 8 bytes.
///
/// Returns as `mbr_frame_encoded_len`. `error` may be NULL.
///
/// # Safety
/// As `mbr_frame_encoded_len`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_head_len(
    identity: *const mbr_identity,
    payload_len: u64,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out_len = Out::new(out_len, "out_len")?;
        out_len.write(plan(identity, payload_len)?.head_len());
        Ok(())
    })
}

/// Write the head of a frame with a payload of `payload_len` bytes into `buf`
/// (`capacity` bytes); `*out_len` gets its length. Send `head`, the payload and the
/// payload's `mbr_digest.trailer` with one `writev`: the payload is never copied.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`error->needed` says how much), or as
/// `mbr_frame_encoded_len`. `error` may be NULL.
///
/// # Safety
/// As `mbr_frame_encoded_len`, and `buf` is NULL or points to `capacity` writable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_write_head(
    identity: *const mbr_identity,
    payload_len: u64,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    // SAFETY: the same contract, passed on.
    unsafe {
        mbr_frame_write_head_with(identity, payload_len, mbr_write_options_default(), buf, capacity, out_len, error)
    }
}

/// `mbr_frame_write_head` as `options` say (alignment, identity limit): the head ends
/// with the padding that puts the payload where `options` ask.
///
/// Returns as `mbr_frame_write_head`, and `MBR_INVALID_ARGUMENT` for a bad `align`.
///
/// # Safety
/// As `mbr_frame_write_head`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_write_head_with(
    identity: *const mbr_identity,
    payload_len: u64,
    options: mbr_write_options,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| {
        FrameEncoder::with_options(try_ref(identity)?, payload_len, &options.to_rust()?)?.write_head_into(buf)
    })
}

/// Write a whole frame (head, a copy of the payload, trailer) into `buf` (`capacity`
/// bytes); `*out_len` gets its length (see `mbr_frame_encoded_len`).
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`error->needed` says how much), or as
/// `mbr_frame_encoded_len`. `error` may be NULL.
///
/// # Safety
/// As `mbr_frame_write_head`, and `payload` is NULL or points to `payload_len` readable
/// bytes that do not overlap `buf`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_encode(
    identity: *const mbr_identity,
    payload: *const u8,
    payload_len: usize,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    // SAFETY: the same contract, passed on.
    unsafe {
        mbr_frame_encode_with(
            identity,
            payload,
            payload_len,
            mbr_write_options_default(),
            buf,
            capacity,
            out_len,
            error,
        )
    }
}

/// `mbr_frame_encode` as `options` say (alignment, identity limit).
///
/// Returns as `mbr_frame_encode`, and `MBR_INVALID_ARGUMENT` for a bad `align`.
///
/// # Safety
/// As `mbr_frame_encode`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_encode_with(
    identity: *const mbr_identity,
    payload: *const u8,
    payload_len: usize,
    options: mbr_write_options,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| {
        let identity = try_ref(identity)?;
        encode_frame_with(identity, input(payload, payload_len, "payload")?, buf, &options.to_rust()?)
    })
}

/// Receives the bytes of a chunked writer, in order. Write all `len` bytes at `buf`
/// and return 0, or return non-zero (an errno, say) to fail the writer call with
/// `MBR_IO`. The head arrives in several small pieces: buffer (e.g. `fwrite`) if
/// system calls matter. It must not call back into the same writer.
pub type mbr_write_callback = Option<unsafe extern "C" fn(userdata: *mut c_void, buf: *const u8, len: usize) -> c_int>;

/// The bytes a chunked writer emits go to a C callback.
pub(crate) struct CallbackSink {
    callback: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int,
    userdata: *mut c_void,
}

impl ByteSink for CallbackSink {
    type Error = c_int;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), c_int> {
        // SAFETY: the callback and its userdata came from the caller of
        // `mbr_chunked_writer_begin`, who promised they stay valid; `bytes` is readable.
        match unsafe { (self.callback)(self.userdata, bytes.as_ptr(), bytes.len()) } {
            0 => Ok(()),
            failed => Err(failed),
        }
    }
}

fn sink_error(err: WriteError<c_int>) -> Error {
    match err {
        WriteError::Frame(err) => err,
        WriteError::Sink(_) => Error::io("callback", "the write callback returned non-zero"),
    }
}

/// Size in bytes of `mbr_chunked_writer`.
pub const MBR_CHUNKED_WRITER_SIZE: usize = 256;
/// Alignment in bytes of `mbr_chunked_writer`.
pub const MBR_CHUNKED_WRITER_ALIGN: usize = 8;

/// A frame being written while its payload arrives in chunks, in storage the caller
/// owns (a local or a struct member; opaque). Start it with `mbr_chunked_writer_begin`.
/// It refers to the `mbr_identity` it was begun with, which must stay alive, unchanged
/// and in place until `mbr_chunked_writer_finish`. Nothing to free. One thread at a time.
#[repr(C)]
pub struct mbr_chunked_writer {
    _opaque: [MaybeUninit<u64>; 32],
}

opaque!(mbr_chunked_writer => ChunkedFrameWriter<'a, 'a, CallbackSink>, b"mbr_writ", "writer", MBR_CHUNKED_WRITER_SIZE, MBR_CHUNKED_WRITER_ALIGN);

/// What a finished chunked writer reports.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_chunked_outcome {
    /// SHA-256 of the payload fed (its first 8 bytes were written as the trailer).
    pub payload_digest: mbr_digest,
    /// Whether the identity's `payload_hash` is that digest (if not, the frame passes
    /// the trailer level but not the full level).
    pub payload_hash_matches: bool,
    /// Bytes written in all.
    pub frame_len: u64,
}

/// Start a frame whose payload of exactly `payload_len` bytes will follow in chunks:
/// the head goes to `callback` at once. `userdata` is passed to `callback` as is (it
/// may be NULL).
///
/// Returns `MBR_OK`, `MBR_IO`, `MBR_IDENTITY_TOO_LARGE`, `MBR_INVALID_ARGUMENT`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `*writer` is initialised only on
/// success. `error` may be NULL.
///
/// # Safety
/// `writer` is NULL or points to writable `mbr_chunked_writer` storage; `identity` is
/// NULL or points to an `mbr_identity` that stays alive, unchanged and in place until
/// `mbr_chunked_writer_finish`; `callback` is safe to call with `userdata` until then;
/// `error` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_chunked_writer_begin(
    writer: *mut mbr_chunked_writer,
    identity: *const mbr_identity,
    payload_len: u64,
    callback: mbr_write_callback,
    userdata: *mut c_void,
    error: *mut mbr_error,
) -> u32 {
    // SAFETY: the same contract, passed on.
    unsafe {
        mbr_chunked_writer_begin_with(
            writer,
            identity,
            payload_len,
            mbr_write_options_default(),
            callback,
            userdata,
            error,
        )
    }
}

/// `mbr_chunked_writer_begin` as `options` say (alignment, identity limit).
///
/// Returns as `mbr_chunked_writer_begin`; `MBR_INVALID_ARGUMENT` also for a bad `align`.
///
/// # Safety
/// As `mbr_chunked_writer_begin`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_chunked_writer_begin_with(
    writer: *mut mbr_chunked_writer,
    identity: *const mbr_identity,
    payload_len: u64,
    options: mbr_write_options,
    callback: mbr_write_callback,
    userdata: *mut c_void,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let writer = Out::new(writer, "writer")?;
        let callback = callback.ok_or(Error::null_pointer("callback"))?;
        let options = options.to_rust()?;
        let sink = CallbackSink { callback, userdata };
        let begun = ChunkedFrameWriter::begin_with(try_ref(identity)?, payload_len, sink, &options);
        store(writer, begun.map_err(sink_error)?);
        Ok(())
    })
}

/// Pass the next payload chunk (`(NULL, 0)` is empty) through to the callback.
///
/// Returns `MBR_OK`, `MBR_LENGTH_MISMATCH` (more than declared: nothing written),
/// `MBR_IO`, `MBR_INVALID_STATE` (not begun, or finished) or `MBR_NULL_POINTER`.
/// `error` may be NULL.
///
/// # Safety
/// `writer` is NULL or points to an `mbr_chunked_writer` not in use by another call;
/// `chunk` is NULL or points to `len` readable bytes; `error` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_chunked_writer_write(
    writer: *mut mbr_chunked_writer,
    chunk: *const u8,
    len: usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || try_mut(writer)?.write_payload(input(chunk, len, "chunk")?).map_err(sink_error))
}

/// Payload bytes still expected.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `writer` is NULL or points to an `mbr_chunked_writer` not being written meanwhile;
/// `out` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_chunked_writer_remaining(writer: *const mbr_chunked_writer, out: *mut u64) -> u32 {
    read_into(writer, out, "out", |writer| Ok(writer.remaining()))
}

/// Write the trailer and report. The writer is finished whatever the result: further
/// calls on it are `MBR_INVALID_STATE` until it is begun again.
///
/// Returns `MBR_OK`, `MBR_LENGTH_MISMATCH` (less payload than declared: no trailer
/// written), `MBR_IO`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `writer` is NULL or points to an `mbr_chunked_writer` not in use by another call;
/// `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_chunked_writer_finish(
    writer: *mut mbr_chunked_writer,
    out: *mut mbr_chunked_outcome,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(writer, "writer")?;
        let out = Out::new(out, "out")?;
        let (outcome, _sink) = take(writer)?.finish().map_err(sink_error)?;
        out.write(mbr_chunked_outcome {
            payload_digest: mbr_digest::of(&outcome.payload_digest),
            payload_hash_matches: outcome.payload_hash_matches,
            frame_len: outcome.frame_len,
        });
        Ok(())
    })
}
