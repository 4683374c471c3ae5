//! Links the `no_std` core into a freestanding program and runs it on a valid and a
//! damaged frame. Exit status 0 means both verdicts were right.
#![no_std]
#![no_main]

use membrane_frame::{encode_frame, Dtype, ErrorCode, Frame, IdentityValues, InclusiveRange, ReadOptions, Sha256Digest, VerifyLevel};

// The C library provides the program entry, memcpy and friends, and abort.
#[link(name = "c")]
extern "C" {
    fn abort() -> !;
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: libc's abort takes no arguments and never returns.
    unsafe { abort() }
}

fn run() -> Result<(), ErrorCode> {
    let payload = [7u8; 1000];
    let hash = Sha256Digest::of(&payload).to_hex();
    let identity = IdentityValues {
        payload_hash: hash.as_str(),
        model_id: "llama-3-8b",
        model_revision: "",
        tokenizer_name: "llama-3-8b",
        tokenizer_revision: "",
        layer_range: InclusiveRange::new(0, 31),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, 127),
        dtype: Dtype::Bfloat16,
        shape: &[1, 2, 2, 5, 25],
    }
    .build()
    .map_err(|e| e.code())?;
    let mut buf = [0u8; 2048];
    let len = encode_frame(&identity, &payload, &mut buf).map_err(|e| e.code())?;
    let frame_bytes = buf.get(..len).ok_or(ErrorCode::InvalidState)?;
    let full = ReadOptions::new().level(VerifyLevel::Full);
    let (frame, _) = Frame::parse_with(frame_bytes, &full).map_err(|e| e.code())?;
    if frame.payload() != payload.as_slice() {
        return Err(ErrorCode::InvalidState);
    }
    let mut damaged = buf;
    if let Some(byte) = damaged.get_mut(len - 20) {
        *byte ^= 1;
    }
    match Frame::parse_with(damaged.get(..len).unwrap_or(&[]), &full) {
        Err(e) if e.code() == ErrorCode::TrailerMismatch => Ok(()),
        _ => Err(ErrorCode::InvalidState),
    }
}

#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    match run() {
        Ok(()) => 0,
        Err(code) => code.number() as i32,
    }
}
