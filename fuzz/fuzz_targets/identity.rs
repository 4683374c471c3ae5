//! Identity JSON (SPEC §2): whatever the canonical fast path or the any-spelling
//! forward pass accepts, the general reader accepts with the identical identity (every
//! field, source and offsets, by `Debug`); the flat reader gives exactly what the
//! general reader gives, identity or error (code, offset, field, words), at the default
//! depth limit and at 3; whatever parses re-serialises
//! canonically, the canonical text parses to the same values with the same fingerprint,
//! and the reader's "stored text is canonical" flag is true exactly when the text is the
//! canonical form followed by zero or more spaces, which it reports as the padding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::fuzzing::{identity_any_spelling, identity_fast, identity_flat, identity_general};
use membrane_frame::json::Limits;
use membrane_frame::PayloadIdentity;

fuzz_target!(|data: &[u8]| {
    if let Some(fast) = identity_fast(data, Limits::default()) {
        let general = identity_general(data, Limits::default()).expect("the general reader accepts it too");
        assert_eq!(fast.is_canonical(), general.is_canonical());
        assert_eq!(fast.padding(), general.padding());
        assert_eq!(fast, general);
    }
    if let Some(fast) = identity_any_spelling(data, Limits::default()) {
        let general = identity_general(data, Limits::default()).expect("the general reader accepts it too");
        assert_eq!(format!("{fast:?}"), format!("{general:?}"));
    }
    for limits in [Limits::default(), Limits { max_depth: 3 }] {
        let flat = format!("{:?}", identity_flat(data, limits));
        assert_eq!(flat, format!("{:?}", identity_general(data, limits)), "flat reader");
    }
    let Ok(identity) = PayloadIdentity::parse(data) else { return };
    let mut canonical = vec![0u8; identity.canonical_len()];
    let written = identity.write_canonical_into(&mut canonical).expect("canonical_len is enough");
    assert_eq!(written, canonical.len());
    // Canonical: the canonical form followed by nothing but spaces, which are its
    // padding (SPEC §1.5).
    let unpadded_len = data.len() - data.iter().rev().take_while(|&&b| b == b' ').count();
    let canonical_text = canonical[..] == data[..unpadded_len];
    assert_eq!(identity.is_canonical(), canonical_text, "canonical flag");
    assert_eq!(identity.padding(), if canonical_text { data.len() - unpadded_len } else { 0 }, "padding");
    let again = PayloadIdentity::parse(&canonical).expect("canonical form re-reads");
    assert!(again.is_canonical());
    assert_eq!(again.fingerprint(), identity.fingerprint());
    assert_eq!(
        (again.layer_range(), again.head_range(), again.token_span(), again.dtype(), again.shape()),
        (identity.layer_range(), identity.head_range(), identity.token_span(), identity.dtype(), identity.shape())
    );
    assert!(again.payload_hash().eq_decoded(&identity.payload_hash()));
    assert!(again.model_id().eq_decoded(&identity.model_id()));
    assert!(again.tokenizer_revision().eq_decoded(&identity.tokenizer_revision()));
    let mut declared = Vec::new();
    let _ = identity.tensor_bytes();
    let mut sink = membrane_frame::CountingSink(0);
    let _ = identity.write_declaration_order(&mut sink);
    declared.resize(sink.0 as usize, 0);
    let _ = identity.fingerprint_compat();
});
