//! The Python package's entry points, through the Rust calls they make (python/src), on
//! arbitrary bytes: whichever entry point a Python user takes to the same bytes, the
//! answer must be the same, and what one hands out the others must take back.
//!
//! * Frames — `check_frame`, `Frame.parse`, `StreamVerifier` (fuzzer-chosen chunks) and
//!   `verify_files` (the batch verifier at the trailer and full levels; below them the
//!   head streamed and the rest skipped by length) give one verdict, code and offset.
//!   A frame's `identity` (its stored text, kept) re-reads; `to_dict` → `PayloadIdentity(
//!   **fields)` rebuilds the same identity; `canonicalize` writes a frame that reads
//!   back with the same payload and fingerprint.
//! * `PayloadIdentity.from_json` / `canonical_json` / `to_dict` → constructor: the same.
//! * `FragmentMessage.from_bytes` / `to_bytes` / the constructor from its own fields:
//!   `to_bytes` re-reads to itself, and the constructor writes the very same text.
//! * Every error carries what the exception gets (code, class, offset, field, reason,
//!   message) without panicking.
//!
//! Input: byte 0 picks the entry point (bits 0–1), the level (bits 2–3) and prefix mode
//! (bit 4); byte 1 is the `StreamVerifier` chunk size (0: one chunk); the rest is the
//! buffer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::frame::verify_batch;
use membrane_frame::json::JsonStr;
use membrane_frame::{
    encode_frame, Error, Frame, FragmentMessage, FrameEncoder, IdentityValues, ParseMode, PayloadIdentity,
    ReadOptions, StreamVerifier, VerifyLevel,
};

/// What a Python user sees of a refusal: the code name and the offset.
type Answer = Result<(), (&'static str, Option<u64>)>;

/// What `errors::to_py` reads from an error for the exception.
fn answer<T>(result: &Result<T, Error>) -> Answer {
    match result {
        Ok(_) => Ok(()),
        Err(err) => {
            let _ = (err.class().name(), err.field(), err.reason(), err.to_string(), err.code().class().name());
            Err((err.code().name(), err.offset()))
        }
    }
}

/// `identity.text()`: a JSON string as Python text.
fn text(value: &JsonStr<'_>) -> String {
    value.chars().collect()
}

/// `Identity::keep`: the stored text, or the canonical form.
fn kept(identity: &PayloadIdentity<'_>) -> Vec<u8> {
    match identity.source() {
        Some(source) => source.to_vec(),
        None => canonical(identity),
    }
}

fn canonical(identity: &PayloadIdentity<'_>) -> Vec<u8> {
    let mut out = vec![0u8; identity.canonical_len()];
    let written = identity.write_canonical_into(&mut out).expect("canonical_len is enough");
    out.truncate(written);
    out
}

/// `PayloadIdentity(**identity.to_dict())`: the fields as Python values, and back.
fn rebuilt_from_fields(identity: &PayloadIdentity<'_>) -> Vec<u8> {
    let strings = [
        text(&identity.payload_hash()),
        text(&identity.model_id()),
        text(&identity.model_revision()),
        text(&identity.tokenizer_name()),
        text(&identity.tokenizer_revision()),
    ];
    let values = IdentityValues {
        payload_hash: &strings[0],
        model_id: &strings[1],
        model_revision: &strings[2],
        tokenizer_name: &strings[3],
        tokenizer_revision: &strings[4],
        layer_range: identity.layer_range(),
        head_range: identity.head_range(),
        token_span: identity.token_span(),
        dtype: membrane_frame::Dtype::from_name(identity.dtype().name()).expect("a dtype's name names it"),
        shape: identity.shape(),
    };
    let rebuilt = values.build().expect("the fields of a valid identity build one");
    assert_eq!(rebuilt.fingerprint(), identity.fingerprint(), "to_dict -> PayloadIdentity: same fingerprint");
    canonical(&rebuilt)
}

/// Everything the Python package does with an identity it hands out.
fn check_identity(identity: &PayloadIdentity<'_>) {
    let text = kept(identity);
    // `Identity::parsed` relies on this: the kept text always re-reads.
    let again = PayloadIdentity::parse(&text).expect("a kept identity re-reads");
    assert_eq!(again.fingerprint(), identity.fingerprint());
    assert_eq!(rebuilt_from_fields(identity), canonical(identity), "to_dict -> PayloadIdentity: canonical_json");
}

/// `verify_files` on one file of these bytes at `options`' level.
fn verify_files(data: &[u8], options: &ReadOptions) -> Answer {
    if options.level >= VerifyLevel::Trailer {
        let mut verdict = None;
        verify_batch(&[data], options, |_, result| verdict = Some(answer(&result)));
        return verdict.expect("one verdict per file");
    }
    let mut identity = vec![0u8; options.identity_limit as usize];
    let mut verifier = StreamVerifier::new(*options, &mut identity);
    let mut read = 0;
    for chunk in data.chunks(128 << 10) {
        if verifier.head_complete() {
            break;
        }
        if let Err(err) = verifier.feed(chunk) {
            return answer::<()>(&Err(err));
        }
        read += chunk.len();
    }
    if verifier.head_complete() {
        if let Err(err) = verifier.skip((data.len() - read) as u64) {
            return answer::<()>(&Err(err));
        }
    }
    answer(&verifier.finish())
}

/// `StreamVerifier(level)`, fed `chunk` bytes at a time, then `finish()`.
fn stream(data: &[u8], options: &ReadOptions, chunk: usize) -> Answer {
    let mut identity = vec![0u8; options.identity_limit as usize];
    let mut verifier = StreamVerifier::new(*options, &mut identity);
    for piece in data.chunks(chunk.max(1)) {
        if let Err(err) = verifier.feed(piece) {
            return answer::<()>(&Err(err));
        }
    }
    answer(&verifier.finish())
}

fn frames(data: &[u8], level: VerifyLevel, prefix: bool, chunk: usize) {
    let exact = ReadOptions::new().level(level).mode(ParseMode::Exact);
    let checked = answer(&Frame::parse_with(data, &exact));
    assert_eq!(verify_files(data, &exact), checked, "verify_files = check_frame");
    assert_eq!(stream(data, &exact, chunk), checked, "StreamVerifier = check_frame");

    let mode = if prefix { ParseMode::Prefix } else { ParseMode::Exact };
    let Ok((frame, _)) = Frame::parse_with(data, &exact.mode(mode)) else { return };
    let Some(identity) = frame.identity() else { return };
    check_identity(identity);
    // `canonicalize(frame.identity, frame.payload)`.
    let payload = frame.payload();
    let len = FrameEncoder::new(identity, payload.len() as u64).expect("a frame's identity encodes").frame_len();
    let mut out = vec![0u8; len as usize];
    assert_eq!(encode_frame(identity, payload, &mut out).expect("encodes into frame_len bytes") as u64, len);
    // It passes the checks the frame passed (`payload_hash` is kept as it was).
    let (written, _) = Frame::parse_with(&out, &exact).expect("canonicalize writes a valid frame");
    assert_eq!(written.payload(), payload);
    assert_eq!(written.identity().map(PayloadIdentity::fingerprint), Some(identity.fingerprint()));
}

fn identity_json(data: &[u8]) {
    let parsed = PayloadIdentity::parse(data);
    let _ = answer(&parsed);
    if let Ok(identity) = parsed {
        check_identity(&identity);
    }
}

/// `Message::emit`: the `to_bytes` text.
fn emit(message: &FragmentMessage<'_>) -> Vec<u8> {
    let mut out = vec![0u8; message.encoded_len()];
    let written = message.write_into(&mut out).expect("encoded_len is enough");
    out.truncate(written);
    out
}

fn envelope(data: &[u8]) {
    let parsed = FragmentMessage::parse(data);
    let _ = answer(&parsed);
    let Ok(message) = parsed else { return };
    let to_bytes = emit(&message);
    let again = FragmentMessage::parse(&to_bytes).expect("to_bytes re-reads");
    assert_eq!(emit(&again), to_bytes, "to_bytes is a fixed point");
    check_identity(message.identity());

    // `FragmentMessage(**fields)` with the fields a Python user reads off the message.
    let tenant = text(&message.tenant_id());
    let payload_ref = message.payload_ref().map(|value| text(&value));
    let identity_text = kept(message.identity());
    let identity = PayloadIdentity::parse(&identity_text).expect("a kept identity re-reads");
    let compat = message.fingerprint_compat().map(|digest| digest.to_hex());
    let builder = FragmentMessage::builder(&tenant, identity)
        .payload_ref(payload_ref.as_deref())
        .payload_size(message.payload_size())
        .ttl(message.ttl())
        .reuse_score(message.reuse_score())
        .version_id(message.version_id())
        .consistency(membrane_frame::Consistency::from_name(message.consistency().name()).expect("names itself"))
        .hlc(message.hlc())
        .fingerprint_compat_hex(compat.as_ref().map_or("", |hex| hex.as_str()));
    let built = builder.build().expect("the fields of a valid message build one");
    assert_eq!(emit(&built), to_bytes, "the constructor from a message's fields writes its to_bytes text");
}

fuzz_target!(|input: &[u8]| {
    let [config, chunk, data @ ..] = input else { return };
    let level = VerifyLevel::from_number(u32::from(config >> 2 & 3)).unwrap_or_default();
    let prefix = config & 16 != 0;
    let chunk = if *chunk == 0 { data.len() } else { usize::from(*chunk) };
    match config & 3 {
        0 | 1 => frames(data, level, prefix, chunk),
        2 => identity_json(data),
        _ => envelope(data),
    }
});
