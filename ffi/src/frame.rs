//! Reading a frame (SPEC §1) into a view that points into the caller's buffer.

use crate::boundary::{boundary, guard, NO_DETAIL};
use crate::identity::mbr_identity;
use crate::object::try_ref;
use crate::out::Out;
use crate::slice::{byte_ranges, input};
use crate::status::mbr_error;
use crate::status::{MBR_NO_OFFSET, MBR_OK};
use core::ffi::c_void;
use membrane::frame::{
    verify_batch, Frame, ParseMode, PayloadAlignment, ReadOptions, VerifyLevel, DEFAULT_IDENTITY_LIMIT, FRAME_OVERHEAD,
    HEADER_LEN, VERIFY_BATCH_GROUP,
};
use membrane::frame::{view_payload_as, PayloadElement};
use membrane::json::DEFAULT_MAX_DEPTH;
use membrane::Dtype;
use membrane::Error;

/// Level 0: header and lengths are consistent (SPEC §1.2). O(1).
pub const MBR_LEVEL_LAYOUT: u32 = 0;
/// Level 1: and the identity is a valid v5 identity. O(identity).
pub const MBR_LEVEL_IDENTITY: u32 = 1;
/// Level 2 (the default): and the trailer matches SHA-256(payload).
pub const MBR_LEVEL_TRAILER: u32 = 2;
/// Level 3: and `payload_hash` is the payload's SHA-256 in lower-case hex.
pub const MBR_LEVEL_FULL: u32 = 3;

/// The buffer holds exactly one frame; bytes after it are `MBR_TRAILING_BYTES`.
pub const MBR_MODE_EXACT: u32 = 0;
/// Read the frame at the start of the buffer; the bytes after it are handed back.
pub const MBR_MODE_PREFIX: u32 = 1;

/// Default `identity_limit`: 64 KiB (SPEC §1.1 check 7).
pub const MBR_DEFAULT_IDENTITY_LIMIT: u32 = 65536;
/// Default JSON nesting limit of the identity reader (SPEC §4).
pub const MBR_DEFAULT_MAX_DEPTH: u32 = 32;
/// Bytes of the fixed header: magic, schema, reserved, identity_len.
pub const MBR_HEADER_LEN: usize = 14;
/// Bytes of a frame besides identity and payload: `30` (frame length = 30 + L + P).
pub const MBR_FRAME_OVERHEAD: usize = 30;

const _: () = {
    assert!(MBR_LEVEL_LAYOUT == VerifyLevel::Layout as u32);
    assert!(MBR_LEVEL_IDENTITY == VerifyLevel::Identity as u32);
    assert!(MBR_LEVEL_TRAILER == VerifyLevel::Trailer as u32);
    assert!(MBR_LEVEL_FULL == VerifyLevel::Full as u32);
    assert!(MBR_DEFAULT_IDENTITY_LIMIT == DEFAULT_IDENTITY_LIMIT);
    assert!(MBR_DEFAULT_MAX_DEPTH == DEFAULT_MAX_DEPTH);
    assert!(MBR_HEADER_LEN == HEADER_LEN);
    assert!(MBR_FRAME_OVERHEAD == FRAME_OVERHEAD);
};

/// Reader policy, passed by value. Start from `mbr_read_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_read_options {
    /// `MBR_LEVEL_*`; default `MBR_LEVEL_TRAILER`.
    pub level: u32,
    /// `MBR_MODE_EXACT` (default) or `MBR_MODE_PREFIX`.
    pub mode: u32,
    /// Largest accepted identity length; default `MBR_DEFAULT_IDENTITY_LIMIT`.
    pub identity_limit: u32,
    /// Identity JSON nesting limit; default `MBR_DEFAULT_MAX_DEPTH`.
    pub max_depth: u32,
}

/// The level with this `MBR_LEVEL_*` number, or `invalid_argument`.
fn level_of(number: u32) -> Result<VerifyLevel, Error> {
    VerifyLevel::from_number(number).ok_or(Error::invalid_argument("level", "not an MBR_LEVEL_* number"))
}

impl mbr_read_options {
    /// The Rust options, or `invalid_argument` for an unknown level or mode.
    pub(crate) fn to_rust(self) -> Result<ReadOptions, Error> {
        let mode = match self.mode {
            MBR_MODE_EXACT => ParseMode::Exact,
            MBR_MODE_PREFIX => ParseMode::Prefix,
            _ => return Err(Error::invalid_argument("mode", "not an MBR_MODE_* number")),
        };
        Ok(ReadOptions::new()
            .level(level_of(self.level)?)
            .mode(mode)
            .identity_limit(self.identity_limit)
            .max_depth(self.max_depth))
    }
}

/// The defaults: trailer level, exact mode, 64 KiB identity limit, JSON depth 32.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_read_options_default() -> mbr_read_options {
    let defaults = || {
        let rust = ReadOptions::new();
        mbr_read_options {
            level: rust.level as u32,
            mode: match rust.mode {
                ParseMode::Exact => MBR_MODE_EXACT,
                ParseMode::Prefix => MBR_MODE_PREFIX,
            },
            identity_limit: rust.identity_limit,
            max_depth: rust.json.max_depth,
        }
    };
    guard(
        mbr_read_options {
            level: MBR_LEVEL_TRAILER,
            mode: MBR_MODE_EXACT,
            identity_limit: MBR_DEFAULT_IDENTITY_LIMIT,
            max_depth: MBR_DEFAULT_MAX_DEPTH,
        },
        defaults,
    )
}

/// A frame read in place. Every pointer points into the buffer given to
/// `mbr_frame_parse`, so the view is valid exactly as long as that buffer is alive
/// and unchanged (e.g. until `munmap`). It owns nothing: copy it freely, never free it.
#[repr(C)]
pub struct mbr_frame {
    /// The frame's own bytes (without what followed it in prefix mode).
    pub bytes: *const u8,
    /// `30 + identity_json_len + payload_len`.
    pub len: usize,
    /// The identity JSON exactly as stored.
    pub identity_json: *const u8,
    /// Its length.
    pub identity_json_len: usize,
    /// The payload, in place.
    pub payload: *const u8,
    /// Its length.
    pub payload_len: usize,
    /// Prefix mode: the bytes after the frame (the next frame, perhaps). Exact mode:
    /// the end of the buffer, with `rest_len == 0`.
    pub rest: *const u8,
    /// Their number.
    pub rest_len: usize,
    /// The stored trailer.
    pub trailer: [u8; 8],
    /// SHA-256 of the payload (computed at the trailer level and above).
    pub payload_sha256: [u8; 32],
    /// Whether `payload_sha256` was computed (level >= `MBR_LEVEL_TRAILER`).
    pub has_payload_sha256: bool,
    /// Whether `identity` holds the parsed identity (level >= `MBR_LEVEL_IDENTITY`).
    pub has_identity: bool,
    /// The level the frame was verified at.
    pub level: u32,
    /// Offset of the payload in the frame, `22 + identity_json_len` (SPEC §1.5):
    /// `payload == bytes + payload_offset`.
    pub payload_offset: usize,
    /// Spaces after a canonical identity, put there by an aligned writer (SPEC §1.5);
    /// 0 for an identity that is not canonical and at the layout level.
    pub padding: usize,
    /// The parsed identity (read it with `mbr_identity_*`); it points into the buffer
    /// too. When `has_identity` is false, the identity functions refuse it with
    /// `MBR_INVALID_STATE`.
    pub identity: mbr_identity,
}

impl mbr_frame {
    /// A view of nothing, for [`write`](Self::write) to fill in place.
    const EMPTY: mbr_frame = mbr_frame {
        bytes: core::ptr::null(),
        len: 0,
        identity_json: core::ptr::null(),
        identity_json_len: 0,
        payload: core::ptr::null(),
        payload_len: 0,
        rest: core::ptr::null(),
        rest_len: 0,
        trailer: [0; 8],
        payload_sha256: [0; 32],
        has_payload_sha256: false,
        has_identity: false,
        level: 0,
        payload_offset: 0,
        padding: 0,
        identity: mbr_identity::EMPTY,
    };

    /// Write the view of `frame` into `out`, field by field in place: a view is mostly
    /// its identity storage, and built on the stack first it would be there twice.
    fn write(out: Out<'_, mbr_frame>, frame: &Frame<'_>, rest: &[u8]) {
        let view = out.write_then(mbr_frame::EMPTY);
        view.bytes = frame.as_bytes().as_ptr();
        view.len = frame.len();
        view.identity_json = frame.identity_json().as_ptr();
        view.identity_json_len = frame.identity_json().len();
        view.payload = frame.payload().as_ptr();
        view.payload_len = frame.payload().len();
        view.rest = rest.as_ptr();
        view.rest_len = rest.len();
        view.trailer = frame.trailer();
        if let Some(digest) = frame.payload_digest() {
            view.payload_sha256 = *digest.as_bytes();
            view.has_payload_sha256 = true;
        }
        view.has_identity = frame.identity().is_some();
        view.level = frame.level() as u32;
        view.payload_offset = frame.payload_offset();
        view.padding = frame.padding();
        view.identity.fill(frame.identity());
    }
}

/// Element type `uint8_t`: the raw bytes, for every dtype.
pub const MBR_ELEMENT_U8: u32 = 0;
/// Element type `int8_t`: dtype `int8`.
pub const MBR_ELEMENT_I8: u32 = 1;
/// Element type `uint16_t`: the bits of `float16` and `bfloat16`, or `int16`.
pub const MBR_ELEMENT_U16: u32 = 2;
/// Element type `int16_t`: dtype `int16`.
pub const MBR_ELEMENT_I16: u32 = 3;
/// Element type `int32_t`: dtype `int32`.
pub const MBR_ELEMENT_I32: u32 = 4;
/// Element type `int64_t`: dtype `int64`.
pub const MBR_ELEMENT_I64: u32 = 5;
/// Element type `float`: dtype `float32`.
pub const MBR_ELEMENT_F32: u32 = 6;
/// Element type `double`: dtype `float64`.
pub const MBR_ELEMENT_F64: u32 = 7;

/// A payload viewed as an array of one element type, in place.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_payload_elements {
    /// The first element: the frame's `payload`, aligned for the element type.
    pub data: *const c_void,
    /// The number of elements.
    pub count: usize,
}

/// `(data, count)` of a payload viewed as `T`, checked by the core.
fn elements_of<T: PayloadElement>(
    payload: &[u8],
    offset: usize,
    dtype: Option<Dtype>,
) -> Result<mbr_payload_elements, Error> {
    let view = view_payload_as::<T>(payload, offset, dtype)?;
    Ok(mbr_payload_elements { data: view.as_ptr().cast(), count: view.len() })
}

/// The payload of a parsed frame as an array of `element` (`MBR_ELEMENT_*`), in place:
/// `*out` gets its address and element count. Refused with `MBR_MISALIGNED` when the
/// payload's address is not aligned to the element type (write the frame aligned, SPEC
/// §1.5, and keep its buffer aligned), when its length is not a whole number of
/// elements, or when the frame's dtype is not one the element type holds (`float`
/// holds `float32` only; `uint16_t` the bits of `float16`, `bfloat16` and `int16`; the
/// dtype is not checked for a frame read at the layout level).
///
/// Returns `MBR_OK`, `MBR_MISALIGNED` (detail in `*error`), `MBR_INVALID_ARGUMENT`
/// (an unknown element), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `frame` is NULL or points to an `mbr_frame` filled by `mbr_frame_parse`, whose
/// buffer is alive; `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_payload_elements(
    frame: *const mbr_frame,
    element: u32,
    out: *mut mbr_payload_elements,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        // SAFETY: the caller promises `frame` is NULL or points to an `mbr_frame`.
        let frame = unsafe { frame.as_ref() }.ok_or(Error::null_pointer("frame"))?;
        let payload = input(frame.payload, frame.payload_len, "frame")?;
        let dtype = match frame.has_identity {
            true => Some(try_ref(&frame.identity)?.dtype()),
            false => None,
        };
        let offset = frame.payload_offset;
        out.write(match element {
            MBR_ELEMENT_U8 => elements_of::<u8>(payload, offset, dtype),
            MBR_ELEMENT_I8 => elements_of::<i8>(payload, offset, dtype),
            MBR_ELEMENT_U16 => elements_of::<u16>(payload, offset, dtype),
            MBR_ELEMENT_I16 => elements_of::<i16>(payload, offset, dtype),
            MBR_ELEMENT_I32 => elements_of::<i32>(payload, offset, dtype),
            MBR_ELEMENT_I64 => elements_of::<i64>(payload, offset, dtype),
            MBR_ELEMENT_F32 => elements_of::<f32>(payload, offset, dtype),
            MBR_ELEMENT_F64 => elements_of::<f64>(payload, offset, dtype),
            _ => Err(Error::invalid_argument("element", "not an MBR_ELEMENT_* number")),
        }?);
        Ok(())
    })
}

/// Whether the payload of a parsed frame lies at an address that is a multiple of
/// `align` (a power of two from 1 to 4096): whether it can be used in place as an array
/// of elements of that alignment, or handed to a DMA engine that needs it. `*out` gets
/// the answer. For a file offset rather than an address, test
/// `(base + frame->payload_offset) % align` instead.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (`align` is not a power of two up to
/// 4096) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `frame` is NULL or points to an `mbr_frame`; `out` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_payload_is_aligned(frame: *const mbr_frame, align: u32, out: *mut bool) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        // SAFETY: the caller promises `frame` is NULL or points to an `mbr_frame`.
        let frame = unsafe { frame.as_ref() }.ok_or(Error::null_pointer("frame"))?;
        let alignment = PayloadAlignment::new(align, 0)?;
        // A power of two: a mask, not a division (no divide-by-zero path to prove away).
        out.write(frame.payload.addr() & (alignment.align() as usize).wrapping_sub(1) == 0);
        Ok(())
    })
}

/// Validate one exact frame at a level (0 layout, 1 identity, 2 trailer, 3 full);
/// returns the SPEC §8 code, 0 when the frame is accepted.
///
/// `(NULL, 0)` is an empty buffer (`MBR_TOO_SHORT`); an unknown level is
/// `MBR_INVALID_ARGUMENT`.
///
/// # Safety
/// `buf` is NULL or points to `len` readable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_check(buf: *const u8, len: usize, level: u32) -> u32 {
    boundary(NO_DETAIL, || {
        let level = level_of(level)?;
        let buf = input(buf, len, "buf")?;
        Frame::check_with(buf, &ReadOptions::new().level(level)).map(|_| ())
    })
}

/// Read the frame in `buf` with `options` (level, exact or prefix mode, limits) into
/// the view `*out`. The checks run in the order of SPEC §1.1; the first failing one
/// decides the status.
///
/// Returns `MBR_OK`, a SPEC §8 frame code (detail, with the byte offset, in `*error`),
/// `MBR_INVALID_ARGUMENT` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `buf` is NULL or points to `len` readable bytes, which stay alive and unchanged as
/// long as the view is used; `out` and `error` are each NULL or point to a writable
/// value of their type.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_parse(
    buf: *const u8,
    len: usize,
    options: mbr_read_options,
    out: *mut mbr_frame,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let options = options.to_rust()?;
        let mut slot = None;
        let rest = Frame::parse_to(input(buf, len, "buf")?, &options, &mut slot)?;
        if let Some(frame) = &slot {
            mbr_frame::write(out, frame, rest);
        }
        Ok(())
    })
}

/// A read-only byte range: one frame of a batch.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_bytes {
    /// The first byte (NULL only with `len` 0).
    pub ptr: *const u8,
    /// The number of bytes.
    pub len: usize,
}

/// One frame's verdict from `mbr_frame_verify_batch`: what `mbr_frame_parse` would
/// return for it, in brief.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_verdict {
    /// `MBR_OK` or the SPEC §8 frame code.
    pub status: u32,
    /// The byte offset the error concerns (in that frame's buffer), or
    /// `MBR_NO_OFFSET` (always when accepted).
    pub offset: u64,
    /// When accepted: the frame's length (in prefix mode, the bytes after it are not
    /// part of it); else 0.
    pub frame_len: usize,
}

/// Verify `count` frames, `frames[i]` each, with `options`, writing each one's verdict
/// to `verdicts[i]`: exactly the status and offset `mbr_frame_parse` gives for that
/// buffer. At the trailer and full levels the payloads are hashed several at a time
/// (1.25x to 2x one SHA-256 stream's speed per core on x86-64 CPUs with SHA-NI or
/// AVX-512, by the core).
///
/// Returns `MBR_OK` once every frame has its verdict (whatever the verdicts are), or,
/// writing no verdict, `MBR_INVALID_ARGUMENT` (unknown level or mode) or
/// `MBR_NULL_POINTER` (`frames` or `verdicts` NULL with `count > 0`, or a frame
/// `{NULL, n > 0}`), described in `*error` when `error` is not NULL.
///
/// # Safety
/// `frames` is NULL (with `count` 0) or points to `count` readable `mbr_bytes`, each
/// NULL or pointing to `len` readable bytes; `verdicts` is NULL (with `count` 0) or
/// points to `count` writable `mbr_verdict`s; `error` is NULL or points to a writable
/// `mbr_error`. None of them changes during the call.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_frame_verify_batch(
    frames: *const mbr_bytes,
    count: usize,
    options: mbr_read_options,
    verdicts: *mut mbr_verdict,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let options = options.to_rust()?;
        let frames = input(frames, count, "frames")?;
        if verdicts.is_null() && count > 0 {
            return Err(Error::null_pointer("verdicts"));
        }
        // Every range is checked before any frame is judged: no half-written batch.
        let mut slices = byte_ranges(frames, "frames")?.slices();
        for (chunk_index, chunk) in frames.chunks(VERIFY_BATCH_GROUP).enumerate() {
            let mut buffers: [&[u8]; VERIFY_BATCH_GROUP] = [&[]; VERIFY_BATCH_GROUP];
            for (buffer, slice) in buffers.iter_mut().zip(slices.by_ref().take(chunk.len())) {
                *buffer = slice;
            }
            let first = chunk_index * VERIFY_BATCH_GROUP;
            verify_batch(buffers.get(..chunk.len()).unwrap_or(&[]), &options, |index, verdict| {
                let verdict = match verdict {
                    Ok((frame, _)) => mbr_verdict { status: MBR_OK, offset: MBR_NO_OFFSET, frame_len: frame.len() },
                    Err(err) => mbr_verdict {
                        status: err.code().number(),
                        offset: err.offset().unwrap_or(MBR_NO_OFFSET),
                        frame_len: 0,
                    },
                };
                // `index < chunk.len()`, so `first + index < count`: inside the array,
                // which may be uninitialised (written, never read).
                if let Ok(slot) = Out::new(verdicts.wrapping_add(first + index), "verdicts") {
                    slot.write(verdict);
                }
            });
        }
        Ok(())
    })
}
