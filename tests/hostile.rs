//! Hostile inputs (issue acceptance 7): each gives its code, never a panic, never a
//! stack overflow — checked on a thread with a deliberately small stack.

use membrane_frame::{ErrorCode, Frame, FrameHeader, ReadOptions, StreamVerifier, VerifyLevel};
use zerocopy::IntoBytes;

fn frame_with(identity_len: u32, identity: &[u8], payload_len: u64, tail: &[u8]) -> Vec<u8> {
    let mut bytes = FrameHeader::v5(identity_len).as_bytes().to_vec();
    bytes.extend_from_slice(identity);
    bytes.extend_from_slice(&payload_len.to_le_bytes());
    bytes.extend_from_slice(tail);
    bytes
}

/// Both readers' verdicts (`None` = accepted) at each level, run on a 128 KiB stack.
fn verdicts(bytes: Vec<u8>, options: ReadOptions, levels: &'static [VerifyLevel]) -> Vec<Option<ErrorCode>> {
    std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(move || {
            let mut codes = Vec::new();
            for &level in levels {
                let options = options.level(level);
                codes.push(Frame::parse_with(&bytes, &options).err().map(|e| e.code()));
                let mut identity = vec![0u8; options.identity_limit as usize];
                let mut verifier = StreamVerifier::new(options, &mut identity);
                let streamed = match verifier.feed(&bytes) {
                    Err(err) => Some(err),
                    Ok(_) => verifier.finish().err(),
                };
                codes.push(streamed.map(|e| e.code()));
            }
            codes
        })
        .unwrap()
        .join()
        .expect("no panic, no stack overflow")
}

#[test]
fn a_mebibyte_of_nested_brackets_is_identity_json_even_with_raised_limits() {
    let nested = vec![b'['; 1 << 20];
    let bytes = frame_with(nested.len() as u32, &nested, 0, &[0; 8]);
    let options = ReadOptions::new().identity_limit(2 << 20).max_depth(u32::MAX);
    // The layout level does not read the identity, so it accepts the frame.
    assert_eq!(verdicts(bytes.clone(), options, &[VerifyLevel::Layout]), [None, None]);
    let codes = verdicts(bytes, options, &VerifyLevel::ALL[1..]);
    assert!(codes.iter().all(|&c| c == Some(ErrorCode::IdentityJson)), "{codes:?}");
}

#[test]
fn payload_len_of_u64_max_is_payload_overrun() {
    let identity = br#"{"dtype":"int8","head_range":[-1,-1],"layer_range":[0,0],"model_id":"","model_revision":"","payload_hash":"x","shape":[1],"token_span":[0,0],"tokenizer_name":"","tokenizer_revision":""}"#;
    let bytes = frame_with(identity.len() as u32, identity, u64::MAX, b"payload and trailer");
    let codes = verdicts(bytes, ReadOptions::new(), &VerifyLevel::ALL);
    assert!(codes.iter().all(|&c| c == Some(ErrorCode::PayloadOverrun)), "{codes:?}");
}

#[test]
fn identity_len_of_u32_max_is_identity_overrun() {
    let bytes = frame_with(u32::MAX, b"{}", 0, &[0; 8]);
    let codes = verdicts(bytes, ReadOptions::new(), &VerifyLevel::ALL);
    assert!(codes.iter().all(|&c| c == Some(ErrorCode::IdentityOverrun)), "{codes:?}");
}

#[test]
fn identity_len_over_the_limit_is_identity_too_large_once_the_bytes_are_there() {
    let big = vec![b' '; 70_000];
    let bytes = frame_with(big.len() as u32, &big, 0, &[0; 8]);
    let codes = verdicts(bytes, ReadOptions::new(), &VerifyLevel::ALL);
    assert!(codes.iter().all(|&c| c == Some(ErrorCode::IdentityTooLarge)), "{codes:?}");
}
