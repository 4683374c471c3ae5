//! The v5 envelope reader (SPEC §3): never panics; whatever the `to_bytes`-form fast
//! path, the compact-form one, the indented-form one, the table-order pass with any
//! whitespace or the any-spelling forward pass (and each of its passes for one spacing)
//! accepts, the general reader accepts with the identical
//! message (every field, raw strings, offsets and sources, by `Debug`); what the
//! reader accepts, the writer re-emits as a text the reader accepts with equal values,
//! and re-emission is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::fuzzing::{
    envelope_any_order_any_whitespace, envelope_any_order_compact, envelope_any_order_written, envelope_any_spelling,
    envelope_any_whitespace, envelope_compact, envelope_fast, envelope_general, envelope_indented,
};
use membrane_frame::json::Limits;
use membrane_frame::FragmentMessage;

fuzz_target!(|data: &[u8]| {
    let fast_paths = [
        envelope_fast,
        envelope_compact,
        envelope_indented,
        envelope_any_whitespace,
        envelope_any_spelling,
        envelope_any_order_written,
        envelope_any_order_compact,
        envelope_any_order_any_whitespace,
    ];
    for fast in fast_paths.into_iter().filter_map(|path| path(data, Limits::default())) {
        let general = envelope_general(data, Limits::default()).expect("the general reader accepts it too");
        assert_eq!(format!("{fast:?}"), format!("{general:?}"));
    }
    let message = match FragmentMessage::parse(data) {
        Ok(message) => message,
        Err(err) => {
            let _ = err.to_string();
            return;
        }
    };
    let _ = (message.tenant_id(), message.payload_ref(), message.fingerprint_compat(), message.hlc());
    let mut out = vec![0u8; message.encoded_len()];
    let len = message.write_into(&mut out).expect("encoded_len is enough");
    assert_eq!(len, out.len());
    assert_eq!(message.is_canonical(), out == data, "canonical flag");
    let again = FragmentMessage::parse(&out).expect("re-emitted envelope re-reads");
    assert_eq!(again, message);
    let mut twice = vec![0u8; again.encoded_len()];
    again.write_into(&mut twice).expect("encoded_len is enough");
    assert_eq!(twice, out, "re-emission is a fixed point");
});
