//! The C ABI allocates nothing on its parse, verify and write paths: every entry point
//! is called here under a counting global allocator (per thread, so the test
//! harness's own threads do not count).

use crate::digest::*;
use crate::envelope::*;
use crate::frame::{
    mbr_bytes, mbr_frame, mbr_frame_check, mbr_frame_parse, mbr_frame_payload_elements, mbr_frame_payload_is_aligned,
    mbr_frame_verify_batch, mbr_payload_elements, mbr_read_options_default, mbr_verdict, MBR_ELEMENT_F32,
    MBR_ELEMENT_U16, MBR_LEVEL_FULL,
};
use crate::hlc::*;
use crate::identity::*;
use crate::migrate::*;
use crate::refcount::*;
use crate::snapshot::*;
use crate::status::{mbr_error, mbr_status_name, MBR_OK};
use crate::stream::*;
use crate::tombstone::*;
use crate::view::*;
use crate::writer::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Appends to a fixed buffer (a `(buffer, used)` pair behind `userdata`).
unsafe extern "C" fn into_buffer(userdata: *mut c_void, buf: *const u8, len: usize) -> c_int {
    // SAFETY: the test passes a `(&mut [u8], usize)` and the writer passes `len` bytes.
    unsafe {
        let (out, used) = &mut *userdata.cast::<(&mut [u8], usize)>();
        let Some(slot) = out.get_mut(*used..*used + len) else { return 1 };
        slot.copy_from_slice(std::slice::from_raw_parts(buf, len));
        *used += len;
    }
    0
}

#[test]
fn ffi_paths_do_not_allocate() {
    let json = br#"{"dtype":"float16","head_range":[-1,-1],"layer_range":[0,31],"model_id":"llama-3-8b","model_revision":"","payload_hash":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824","shape":[1,32,8,128,64],"token_span":[0,127],"tokenizer_name":"llama-3-8b","tokenizer_revision":""}"#;
    let payload = b"hello";
    let mut frame_buf = [0u8; 1024];
    let mut head = [0u8; 1024];
    let mut chunked = [0u8; 1024];
    let mut identity_buf = [0u8; 4096];
    // 64 hex digits and a NUL: the size `mbr_identity_fingerprint_hex` writes.
    let mut text = [0 as std::ffi::c_char; 65];
    let mut dims = [0i64; MBR_MAX_SHAPE_DIMS];
    let before = allocations();
    // SAFETY: every pointer below is valid for what the C ABI reads or writes.
    unsafe {
        let mut identity = MaybeUninit::<mbr_identity>::uninit();
        let mut err = MaybeUninit::<mbr_error>::uninit();
        assert_eq!(mbr_identity_parse(json.as_ptr(), json.len(), identity.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);
        let identity = identity.assume_init();
        let (mut n, mut n64, mut u) = (0usize, 0u64, 0u32);
        let mut digest = MaybeUninit::<mbr_digest>::uninit();
        assert_eq!(mbr_sha256(payload.as_ptr(), payload.len(), digest.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_identity_fingerprint(&identity, digest.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_identity_fingerprint_hex(json.as_ptr(), json.len(), text.as_mut_ptr()), MBR_OK);
        assert_eq!(text[64], 0, "the hex text is NUL-terminated at byte 64");
        assert!(text[..64].iter().all(|&c| (c as u8).is_ascii_hexdigit() && !(c as u8).is_ascii_uppercase()));
        assert_eq!(mbr_identity_string(&identity, MBR_FIELD_MODEL_ID, text.as_mut_ptr(), text.len(), &mut n), MBR_OK);
        let mut view = crate::slice::mbr_str { ptr: core::ptr::null(), len: 0 };
        assert_eq!(mbr_identity_string_view(&identity, MBR_FIELD_MODEL_ID, &mut view), MBR_OK);
        assert_eq!(view.len, n, "the view in place is the decoded value");
        assert!(!mbr_field_name(MBR_FIELD_TOKEN_SPAN).is_null());
        assert_eq!(mbr_identity_shape(&identity, dims.as_mut_ptr(), dims.len(), &mut n), MBR_OK);
        assert_eq!(mbr_identity_dtype(&identity, &mut u), MBR_OK);
        assert_eq!(mbr_identity_canonical_len(&identity, &mut n), MBR_OK);

        // One-shot encode, writev head, parse at the full level, check.
        assert_eq!(mbr_frame_encoded_len(&identity, 5, &mut n64, err.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_frame_write_head(&identity, 5, head.as_mut_ptr(), head.len(), &mut n, err.as_mut_ptr()), MBR_OK);
        let mut len = 0usize;
        let status = mbr_frame_encode(
            &identity,
            payload.as_ptr(),
            5,
            frame_buf.as_mut_ptr(),
            frame_buf.len(),
            &mut len,
            err.as_mut_ptr(),
        );
        assert_eq!(status, MBR_OK);
        let mut options = mbr_read_options_default();
        options.level = MBR_LEVEL_FULL;
        let mut frame = MaybeUninit::<mbr_frame>::uninit();
        assert_eq!(mbr_frame_parse(frame_buf.as_ptr(), len, options, frame.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_frame_check(frame_buf.as_ptr(), len, MBR_LEVEL_FULL), MBR_OK);
        // Aligned (SPEC §1.5): plan, write and read a frame with its payload on 64 bytes
        // (of the buffer: its base is where the buffer happens to lie), then view it.
        let mut aligned_buf = [0u8; 1024];
        let mut write = mbr_write_options_default();
        write.align = 64;
        write.base = aligned_buf.as_ptr().addr() as u64;
        let mut layout = MaybeUninit::<mbr_frame_layout>::uninit();
        assert_eq!(mbr_frame_plan(&identity, 6, write, layout.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);
        let head_len = layout.assume_init().head_len;
        let status =
            mbr_frame_write_head_with(&identity, 6, write, head.as_mut_ptr(), head.len(), &mut n, err.as_mut_ptr());
        assert_eq!((status, n), (MBR_OK, head_len));
        let halves = [1u8, 0, 2, 0, 3, 0];
        let status = mbr_frame_encode_with(
            &identity,
            halves.as_ptr(),
            halves.len(),
            write,
            aligned_buf.as_mut_ptr(),
            aligned_buf.len(),
            &mut n,
            err.as_mut_ptr(),
        );
        assert_eq!(status, MBR_OK);
        let mut aligned = MaybeUninit::<mbr_frame>::uninit();
        let status = mbr_frame_parse(
            aligned_buf.as_ptr(),
            n,
            mbr_read_options_default(),
            aligned.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!(status, MBR_OK);
        let aligned = aligned.assume_init();
        assert_eq!((aligned.payload_offset, aligned.payload.addr() % 64), (head_len, 0));
        let mut yes = false;
        assert_eq!(mbr_frame_payload_is_aligned(&aligned, 64, &mut yes), MBR_OK);
        assert!(yes);
        let mut elements = MaybeUninit::<mbr_payload_elements>::uninit();
        let status = mbr_frame_payload_elements(&aligned, MBR_ELEMENT_U16, elements.as_mut_ptr(), err.as_mut_ptr());
        assert_eq!(status, MBR_OK);
        let elements = elements.assume_init();
        assert_eq!(
            std::slice::from_raw_parts(elements.data.cast::<u16>(), elements.count),
            [1, 2, 3].map(u16::from_le)
        );
        let mut refused = MaybeUninit::<mbr_payload_elements>::uninit();
        let status = mbr_frame_payload_elements(&aligned, MBR_ELEMENT_F32, refused.as_mut_ptr(), err.as_mut_ptr());
        assert_eq!(status, crate::status::MBR_MISALIGNED);
        // A failing parse fills the error detail, still without allocating.
        assert_ne!(mbr_frame_parse(frame_buf.as_ptr(), len - 1, options, frame.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);
        let _ = mbr_status_name(12);
        // A batch of 30 (several groups of the multi-buffer hasher), good and cut short.
        let ranges: [mbr_bytes; 30] = core::array::from_fn(|i| mbr_bytes {
            ptr: frame_buf.as_ptr(),
            len: if i % 3 == 2 { len - 1 } else { len },
        });
        let mut verdicts = [MaybeUninit::<mbr_verdict>::uninit(); 30];
        let mut options_full = mbr_read_options_default();
        options_full.level = MBR_LEVEL_FULL;
        let status = mbr_frame_verify_batch(
            ranges.as_ptr(),
            ranges.len(),
            options_full,
            verdicts.as_mut_ptr().cast(),
            err.as_mut_ptr(),
        );
        assert_eq!(status, MBR_OK);

        // Chunked writer into a fixed buffer.
        let mut writer = MaybeUninit::<mbr_chunked_writer>::uninit();
        let mut sink: (&mut [u8], usize) = (&mut chunked, 0);
        let userdata = (&mut sink as *mut (&mut [u8], usize)).cast::<c_void>();
        let status =
            mbr_chunked_writer_begin(writer.as_mut_ptr(), &identity, 5, Some(into_buffer), userdata, err.as_mut_ptr());
        assert_eq!(status, MBR_OK);
        assert_eq!(mbr_chunked_writer_write(writer.as_mut_ptr(), payload.as_ptr(), 2, err.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_chunked_writer_write(writer.as_mut_ptr(), payload[2..].as_ptr(), 3, err.as_mut_ptr()), MBR_OK);
        let mut outcome = MaybeUninit::<mbr_chunked_outcome>::uninit();
        assert_eq!(mbr_chunked_writer_finish(writer.as_mut_ptr(), outcome.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);
        assert_eq!(sink.1, len);

        // Streaming verifier, 3 bytes at a time.
        let mut verifier = MaybeUninit::<mbr_stream_verifier>::uninit();
        assert_eq!(
            mbr_stream_verifier_init(verifier.as_mut_ptr(), options, identity_buf.as_mut_ptr(), identity_buf.len()),
            MBR_OK
        );
        let mut progress = MaybeUninit::<mbr_stream_progress>::uninit();
        for chunk in frame_buf[..len].chunks(3) {
            let status = mbr_stream_verifier_feed(
                verifier.as_mut_ptr(),
                chunk.as_ptr(),
                chunk.len(),
                progress.as_mut_ptr(),
                err.as_mut_ptr(),
            );
            assert_eq!(status, MBR_OK);
        }
        let mut verdict = MaybeUninit::<mbr_streamed_frame>::uninit();
        assert_eq!(mbr_stream_verifier_finish(verifier.as_mut_ptr(), verdict.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);

        // The payload's digest three ways: in one call, over ranges, incrementally.
        let mut one = MaybeUninit::<mbr_digest>::uninit();
        assert_eq!(mbr_sha256(payload.as_ptr(), payload.len(), one.as_mut_ptr()), MBR_OK);
        let ranges = [
            crate::frame::mbr_bytes { ptr: payload.as_ptr(), len: 2 },
            crate::frame::mbr_bytes { ptr: core::ptr::null(), len: 0 },
            crate::frame::mbr_bytes { ptr: payload[2..].as_ptr(), len: 3 },
        ];
        let mut joined = MaybeUninit::<mbr_digest>::uninit();
        assert_eq!(mbr_sha256_ranges(ranges.as_ptr(), ranges.len(), joined.as_mut_ptr()), MBR_OK);
        let mut state = MaybeUninit::<mbr_sha256_state>::uninit();
        assert_eq!(mbr_sha256_init(state.as_mut_ptr()), MBR_OK);
        for byte in payload.iter() {
            assert_eq!(mbr_sha256_update(state.as_mut_ptr(), byte, 1), MBR_OK);
        }
        let mut stepped = MaybeUninit::<mbr_digest>::uninit();
        assert_eq!(mbr_sha256_final(state.as_mut_ptr(), stepped.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_sha256_update(state.as_mut_ptr(), payload.as_ptr(), 1), crate::status::MBR_INVALID_STATE);
        let (one, joined, stepped) = (one.assume_init(), joined.assume_init(), stepped.assume_init());
        assert!(one.sha256 == joined.sha256 && one.sha256 == stepped.sha256, "one digest, three ways");

        // The identity against itself and against a changed copy.
        let mut differing = 99u32;
        assert_eq!(mbr_identity_compare(&identity, &identity, MBR_FIELDS_ALL, &mut differing), MBR_OK);
        assert_eq!(differing, 0);
        let mut other = MaybeUninit::<mbr_identity>::uninit();
        assert_eq!(
            mbr_identity_with_payload_hash(&identity, b"ab".as_ptr().cast(), 2, other.as_mut_ptr(), err.as_mut_ptr()),
            MBR_OK
        );
        assert_eq!(mbr_identity_compare(other.as_ptr(), &identity, MBR_FIELDS_ALL, &mut differing), MBR_OK);
        assert_eq!(differing, 1 << MBR_FIELD_PAYLOAD_HASH);
        assert_eq!(mbr_identity_compare(other.as_ptr(), &identity, MBR_FIELDS_MODEL, &mut differing), MBR_OK);
        assert_eq!(differing, 0);

        // Writing to a descriptor: refused before any system call (a negative fd, a
        // payload that is not the identity's), then for real where there is a system.
        let mut layout = MaybeUninit::<mbr_frame_layout>::uninit();
        let options = mbr_write_options_default();
        let whole = [crate::frame::mbr_bytes { ptr: payload.as_ptr(), len: payload.len() }];
        let status = mbr_frame_write_fd(
            -1,
            &identity,
            whole.as_ptr(),
            1,
            options,
            core::ptr::null(),
            layout.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!(status, crate::status::MBR_INVALID_ARGUMENT);
        let status = mbr_frame_write_fd(
            1,
            &identity,
            ranges.as_ptr(),
            1,
            options,
            core::ptr::null(),
            layout.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!(status, crate::status::MBR_PAYLOAD_HASH_MISMATCH);
        #[cfg(not(miri))]
        {
            use std::os::fd::AsRawFd;
            let null = std::fs::OpenOptions::new().write(true).open("/dev/null").expect("/dev/null");
            let status = mbr_frame_write_fd(
                null.as_raw_fd(),
                &identity,
                ranges.as_ptr(),
                ranges.len(),
                options,
                &joined,
                layout.as_mut_ptr(),
                err.as_mut_ptr(),
            );
            assert_eq!(status, MBR_OK);
            assert_eq!(layout.assume_init().frame_len, len as u64, "the frame mbr_frame_encode wrote");
        }
    }
    assert_eq!(allocations() - before, 0, "the C ABI allocated");
}

#[test]
fn ffi_envelope_hlc_and_migration_paths_do_not_allocate() {
    let envelope = br#"{"schema_version": 5, "tenant_id": "acme", "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "ttl": 60.0, "reuse_score": 0.5, "version_id": 1, "consistency": "strong", "hlc": 0, "fingerprint_compat": ""}"#;
    let legacy = br#"{"schema_version": 2, "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": "r", "payload_size": 5, "ttl": 1e-5, "reuse_score": 0.5, "version_id": 1}"#;
    let mut frame = membrane::example_frame();
    frame[3] = 0x04; // a v4 frame ...
    frame[4] = 0x04; // ... with schema 4
    let mut out = [0u8; 2048];
    let mut text = [0 as std::ffi::c_char; 128];
    let str_of = |s: &'static str| mbr_str { ptr: s.as_ptr().cast(), len: s.len() };
    let before = allocations();
    // SAFETY: every pointer below is valid for what the C ABI reads or writes.
    unsafe {
        let mut err = MaybeUninit::<mbr_error>::uninit();
        let (mut n, mut flag, mut hlc, mut physical, mut logical) = (0usize, false, 0u64, 0u64, 0u16);
        assert_eq!(mbr_envelope_check(envelope.as_ptr(), envelope.len()), MBR_OK);
        assert_eq!(mbr_envelope_check(legacy.as_ptr(), legacy.len()), 21); // envelope_version
        let status = mbr_envelope_canonicalize(envelope.as_ptr(), envelope.len(), out.as_mut_ptr(), out.len(), &mut n);
        assert_eq!((status, n), (MBR_OK, envelope.len()));
        assert_ne!(mbr_envelope_canonicalize(envelope.as_ptr(), envelope.len(), out.as_mut_ptr(), 8, &mut n), MBR_OK);

        let mut parsed = MaybeUninit::<mbr_envelope>::uninit();
        assert_eq!(
            mbr_envelope_parse(envelope.as_ptr(), envelope.len(), parsed.as_mut_ptr(), err.as_mut_ptr()),
            MBR_OK
        );
        assert_ne!(mbr_envelope_parse(legacy.as_ptr(), legacy.len(), parsed.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);
        let parsed = parsed.assume_init();
        let mut fields = MaybeUninit::<mbr_envelope_fields>::uninit();
        assert_eq!(mbr_envelope_get_fields(&parsed, fields.as_mut_ptr()), MBR_OK);
        let mut view = MaybeUninit::<mbr_envelope_view>::uninit();
        assert_eq!(mbr_envelope_get_view(&parsed, view.as_mut_ptr()), MBR_OK);
        assert_eq!(
            mbr_envelope_parse_view(envelope.as_ptr(), envelope.len(), view.as_mut_ptr(), err.as_mut_ptr()),
            MBR_OK
        );
        let view = view.assume_init();
        assert_eq!(mbr_text_decode(view.tenant_id, text.as_mut_ptr(), text.len(), &mut n, err.as_mut_ptr()), MBR_OK);
        // The decoded views, with escapes to decode.
        let escaped = br#"{"schema_version": 5, "tenant_id": "t\u00e9", "identity": {"payload_hash": "x", "model_id": "m\n", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "ttl": 60.0, "reuse_score": 0.5, "version_id": 1, "consistency": "strong", "hlc": 0, "fingerprint_compat": ""}"#;
        let escaped_identity = br#"{"payload_hash": "x", "model_id": "m\n", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}"#;
        let mut decoded = MaybeUninit::<mbr_envelope_view>::uninit();
        let status = mbr_envelope_parse_view_decoded(
            escaped.as_ptr(),
            escaped.len(),
            text.as_mut_ptr(),
            text.len(),
            decoded.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!(status, MBR_OK);
        assert!(
            !decoded.assume_init_ref().tenant_id.has_escapes
                && !decoded.assume_init_ref().identity.model_id.has_escapes
        );
        let mut decoded_identity = MaybeUninit::<mbr_identity_view>::uninit();
        let status = mbr_identity_parse_view_decoded(
            escaped_identity.as_ptr(),
            escaped_identity.len(),
            text.as_mut_ptr(),
            text.len(),
            decoded_identity.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!(status, MBR_OK);
        assert!(!decoded_identity.assume_init_ref().model_id.has_escapes);
        let mut identity_view = MaybeUninit::<mbr_identity_view>::uninit();
        assert_eq!(mbr_identity_get_view(&fields.assume_init_ref().identity, identity_view.as_mut_ptr()), MBR_OK);
        let mut identity = MaybeUninit::<mbr_identity>::uninit();
        assert_eq!(mbr_envelope_identity(&parsed, identity.as_mut_ptr()), MBR_OK);
        let identity = identity.assume_init();
        assert_eq!(mbr_envelope_string_len(&parsed, MBR_ENVELOPE_FIELD_TENANT_ID, &mut n), MBR_OK);
        let status = mbr_envelope_string(&parsed, MBR_ENVELOPE_FIELD_TENANT_ID, text.as_mut_ptr(), text.len(), &mut n);
        assert_eq!(status, MBR_OK);
        assert_eq!(mbr_envelope_is_canonical(&parsed, &mut flag), MBR_OK);
        assert!(flag);
        assert_eq!(mbr_envelope_encoded_len(&parsed, &mut n), MBR_OK);
        let status = mbr_envelope_write(&parsed, out.as_mut_ptr(), out.len(), &mut n, err.as_mut_ptr());
        assert_eq!(status, MBR_OK);
        let _ = mbr_consistency_name(MBR_CONSISTENCY_QUORUM);

        let values = mbr_envelope_values {
            tenant_id: str_of("acme"),
            identity: &identity,
            has_payload_ref: true,
            payload_ref: str_of("blob-1"),
            payload_size: 5,
            ttl: 60.0,
            reuse_score: 0.87,
            version_id: 3,
            consistency: MBR_CONSISTENCY_EVENTUAL,
            hlc: 1 << 16,
            derive_fingerprint_compat: true,
            fingerprint_compat: str_of(""),
        };
        let mut built = MaybeUninit::<mbr_envelope>::uninit();
        assert_eq!(mbr_envelope_build(&values, built.as_mut_ptr(), err.as_mut_ptr()), MBR_OK);

        let compat = mbr_compat_inputs {
            model_id: str_of("m"),
            model_revision: str_of(""),
            model_layout_version: 0,
            tokenizer_name: str_of("t"),
            tokenizer_revision: str_of(""),
            tokenizer_layout_version: 0,
            dtype: str_of("int8"),
            config_hash: str_of(""),
        };
        assert_eq!(mbr_compat_hash(&compat, text.as_mut_ptr()), MBR_OK);
        assert_eq!(mbr_identity_compat_hash(&identity, text.as_mut_ptr()), MBR_OK);

        assert_eq!(mbr_hlc_pack(1_735_600_000_000, 0, &mut hlc), MBR_OK);
        assert_eq!(mbr_hlc_tick(hlc, 1_735_600_000_000, &mut hlc), MBR_OK);
        assert_eq!(mbr_hlc_merge(hlc, 1 << 20, 0, &mut hlc), MBR_OK);
        assert_eq!(mbr_hlc_unpack(hlc, &mut physical, &mut logical), MBR_OK);
        assert_ne!(mbr_hlc_pack(u64::MAX, 0, &mut hlc), MBR_OK);

        let options = mbr_read_options_default();
        let mut migration = MaybeUninit::<mbr_frame_migration>::uninit();
        let status =
            mbr_plan_frame_migration(frame.as_ptr(), frame.len(), options, migration.as_mut_ptr(), err.as_mut_ptr());
        assert_eq!(status, MBR_OK);
        let status = mbr_migrate_frame_in_place(
            frame.as_mut_ptr(),
            frame.len(),
            options,
            migration.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!((status, migration.assume_init().kind), (MBR_OK, MBR_MIGRATION_LEGACY));
        assert_eq!(mbr_frame_check(frame.as_ptr(), frame.len(), MBR_LEVEL_FULL), MBR_OK);

        let mut result = MaybeUninit::<mbr_envelope_migration>::uninit();
        let options = mbr_envelope_migration_options_default();
        let status = mbr_migrate_envelope(
            legacy.as_ptr(),
            legacy.len(),
            options,
            out.as_mut_ptr(),
            out.len(),
            result.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_eq!((status, result.assume_init().kind), (MBR_OK, MBR_MIGRATION_LEGACY));
        let status = mbr_migrate_envelope(
            legacy.as_ptr(),
            legacy.len(),
            options,
            out.as_mut_ptr(),
            8,
            result.as_mut_ptr(),
            err.as_mut_ptr(),
        );
        assert_ne!(status, MBR_OK);
    }
    assert_eq!(allocations() - before, 0, "the C ABI allocated");
}

unsafe extern "C" fn count_ids(userdata: *mut c_void, _id: *const std::ffi::c_char, _len: usize) {
    // SAFETY: the test passes a `usize`.
    unsafe { *userdata.cast::<usize>() += 1 };
}

fn s(text: &str) -> mbr_str {
    mbr_str { ptr: text.as_ptr().cast(), len: text.len() }
}

#[test]
fn ffi_metadata_paths_do_not_allocate() {
    let snapshot = br#"{"captured_at": 1.5, "cluster_epoch": 7, "membership": [{"host": "h", "node_id": "n", "port": 80}], "schema_version": 5, "server": {"error_count": 0, "request_count": 1}, "shards": {"primary_map": {"k": "n1"}, "replica_map": {"k": ["n2"]}}}"#;
    let (a, b) = (br#"{"h2": 20.5, "h1": 10, "h0": 3}"#, br#"{"h1": 30, "h3": 1}"#);
    let op = br#"{"content_hash": "h9", "until": 50, "node_id": "node-b"}"#;
    let mut out = [0u8; 1024];
    let mut slots = vec![0u64; MBR_TOMBSTONE_SLOT_SIZE * 8 / 8 + 4];
    let mut nodes = vec![0u64; MBR_NODE_SLOT_SIZE * 4 / 8 + 4];
    let mut rslots = vec![0u64; MBR_REF_SLOT_SIZE * 8 / 8 + 4];
    let mut rnodes = vec![0u64; MBR_NODE_SLOT_SIZE * 4 / 8 + 4];
    let mut snap = MaybeUninit::<mbr_snapshot>::uninit();
    let mut cursor = MaybeUninit::<mbr_snapshot_cursor>::uninit();
    let mut member = MaybeUninit::<mbr_member>::uninit();
    let mut info = MaybeUninit::<mbr_snapshot_info>::uninit();
    // Four words for the primary entry, three and two a node for the replica entry.
    let mut index = [0u32; 9];
    let (mut keys, mut texts) = ([MaybeUninit::<mbr_text>::uninit(); 2], [MaybeUninit::<mbr_text>::uninit(); 2]);
    let mut node_ends = [0usize; 2];
    let mut body = MaybeUninit::<mbr_op_body>::uninit();
    let mut table = MaybeUninit::<mbr_tombstone_table>::uninit();
    let mut counts = MaybeUninit::<mbr_refcounts>::uninit();
    let (mut n, mut count, mut flag, mut until) = (0usize, 0usize, false, 0.0f64);
    let mut err = MaybeUninit::<mbr_error>::uninit();
    let before = allocations();
    // SAFETY: every pointer is valid for the call; buffers are as long as stated.
    let statuses = unsafe {
        let (slots_bytes, nodes_bytes) = (slots.len() * 8, nodes.len() * 8);
        [
            mbr_snapshot_check(snapshot.as_ptr(), snapshot.len()),
            mbr_snapshot_parse(snapshot.as_ptr(), snapshot.len(), snap.as_mut_ptr(), err.as_mut_ptr()),
            mbr_snapshot_parse_guarded(snapshot.as_ptr(), snapshot.len(), 8, snap.as_mut_ptr(), err.as_mut_ptr()),
            mbr_snapshot_info_get(snap.as_ptr(), info.as_mut_ptr()),
            mbr_snapshot_string(
                snap.as_ptr(),
                MBR_SNAPSHOT_REPLICA_NODE,
                0,
                0,
                out.as_mut_ptr().cast(),
                64,
                &mut n,
                err.as_mut_ptr(),
            ),
            mbr_snapshot_cursor_init(snap.as_ptr(), MBR_SNAPSHOT_MEMBERSHIP, cursor.as_mut_ptr()),
            mbr_snapshot_cursor_next(cursor.as_mut_ptr(), &mut flag),
            mbr_snapshot_cursor_member(cursor.as_ptr(), member.as_mut_ptr()),
            mbr_snapshot_cursor_init(snap.as_ptr(), MBR_SNAPSHOT_REPLICA_MAP, cursor.as_mut_ptr()),
            mbr_snapshot_cursor_next(cursor.as_mut_ptr(), &mut flag),
            mbr_snapshot_cursor_replica_len(cursor.as_ptr(), &mut count),
            mbr_snapshot_cursor_string(
                cursor.as_ptr(),
                MBR_SNAPSHOT_REPLICA_NODE,
                0,
                out.as_mut_ptr().cast(),
                64,
                &mut n,
                err.as_mut_ptr(),
            ),
            mbr_snapshot_cursor_init(snap.as_ptr(), MBR_SNAPSHOT_REPLICA_MAP, cursor.as_mut_ptr()),
            mbr_snapshot_cursor_read_replica(
                cursor.as_mut_ptr(),
                keys.as_mut_ptr().cast(),
                node_ends.as_mut_ptr(),
                2,
                texts.as_mut_ptr().cast(),
                2,
                &mut count,
                err.as_mut_ptr(),
            ),
            mbr_snapshot_cursor_init(snap.as_ptr(), MBR_SNAPSHOT_PRIMARY_MAP, cursor.as_mut_ptr()),
            mbr_snapshot_cursor_read_primary(
                cursor.as_mut_ptr(),
                keys.as_mut_ptr().cast(),
                texts.as_mut_ptr().cast(),
                2,
                &mut count,
            ),
            mbr_snapshot_write(snap.as_ptr(), out.as_mut_ptr(), out.len(), &mut n, err.as_mut_ptr()),
            // The maps again, read through an index in the caller's words.
            mbr_snapshot_parse_indexed(
                snapshot.as_ptr(),
                snapshot.len(),
                index.as_mut_ptr(),
                index.len(),
                snap.as_mut_ptr(),
                err.as_mut_ptr(),
            ),
            mbr_snapshot_string(
                snap.as_ptr(),
                MBR_SNAPSHOT_PRIMARY_NODE,
                0,
                0,
                out.as_mut_ptr().cast(),
                64,
                &mut n,
                err.as_mut_ptr(),
            ),
            mbr_snapshot_cursor_init(snap.as_ptr(), MBR_SNAPSHOT_REPLICA_MAP, cursor.as_mut_ptr()),
            mbr_snapshot_cursor_next(cursor.as_mut_ptr(), &mut flag),
            mbr_snapshot_cursor_replica_texts(
                cursor.as_ptr(),
                texts.as_mut_ptr().cast(),
                2,
                &mut count,
                err.as_mut_ptr(),
            ),
            mbr_gossip_merge(a.as_ptr(), a.len(), b.as_ptr(), b.len(), 5.0, out.as_mut_ptr(), out.len(), &mut n),
            mbr_tombstone_table_init(
                table.as_mut_ptr(),
                slots.as_mut_ptr().cast(),
                slots_bytes,
                nodes.as_mut_ptr().cast(),
                nodes_bytes,
                1,
            ),
            mbr_tombstone_record(table.as_mut_ptr(), s("h1"), 10.0, s("node-a"), err.as_mut_ptr()),
            mbr_tombstone_merge_gossip(table.as_mut_ptr(), a.as_ptr(), a.len(), 0.0, &mut count, err.as_mut_ptr()),
            mbr_tombstone_apply_op_tombstone(table.as_mut_ptr(), op.as_ptr(), op.len(), err.as_mut_ptr()),
            mbr_tombstone_is_active(table.as_mut_ptr(), s("h1"), 5.0, &mut flag),
            mbr_tombstone_write_gossip(table.as_mut_ptr(), 0.0, out.as_mut_ptr(), out.len(), &mut n, err.as_mut_ptr()),
            mbr_tombstone_sweep(table.as_mut_ptr(), 15.0, Some(count_ids), (&mut count as *mut usize).cast(), &mut n),
            mbr_op_tombstone_parse(op.as_ptr(), op.len(), body.as_mut_ptr(), err.as_mut_ptr()),
            mbr_op_delete_write(s("h1"), s("n"), true, 1.0, out.as_mut_ptr(), out.len(), &mut n, err.as_mut_ptr()),
            mbr_refcounts_init(
                counts.as_mut_ptr(),
                rslots.as_mut_ptr().cast(),
                rslots.len() * 8,
                rnodes.as_mut_ptr().cast(),
                rnodes.len() * 8,
                1,
            ),
            mbr_refcounts_acquire(counts.as_mut_ptr(), s("h1"), s("node-a")),
            mbr_refcounts_holders(
                counts.as_mut_ptr(),
                s("h1"),
                Some(count_ids),
                (&mut count as *mut usize).cast(),
                &mut n,
            ),
            mbr_refcounts_release(counts.as_mut_ptr(), s("h1"), s("node-a"), &mut flag),
            mbr_tombstone_apply_op_delete(
                table.as_mut_ptr(),
                br#"{"content_hash": "h7", "node_id": "x", "tombstone_until": null}"#.as_ptr(),
                63,
                1.0,
                &mut until,
                err.as_mut_ptr(),
            ),
        ]
    };
    let allocated = allocations() - before;
    for (i, status) in statuses.iter().enumerate() {
        assert_eq!(*status, MBR_OK, "call {i}: {:?}", mbr_status_name(*status));
    }
    assert!(flag && until == 61.0);
    assert_eq!(allocated, 0, "the metadata C ABI allocated");
}
