//! The one-shot frame reader at every level and in both modes, on arbitrary bytes.
//!
//! Beyond "never panics", it checks the invariants the check order of SPEC §1.1
//! implies: what a level refuses, every higher level refuses, with the same error —
//! except that the identity level may find an identity problem (checks 8–9) first where
//! the layout level stopped at a later length check (10–11); what exact
//! mode accepts, prefix mode accepts with nothing left over; a prefix frame re-read
//! exactly on its own bytes is the same frame; and every accessor is safe to call.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::{ErrorCode, Frame, ParseMode, ReadOptions, VerifyLevel};

/// Checks 10–11: the only ones the layout level runs after a check it skips.
fn after_identity_checks(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::PayloadOverrun | ErrorCode::TrailingBytes)
}

fn touch(frame: &Frame<'_>) {
    let _ = (frame.header(), frame.identity_json(), frame.payload(), frame.trailer(), frame.payload_digest());
    assert_eq!(frame.len(), 30 + frame.identity_json().len() + frame.payload().len());
    if let Some(identity) = frame.identity() {
        let _ = (identity.fingerprint(), identity.is_canonical(), identity.canonical_len(), identity.tensor_bytes());
        let _ = (identity.model_id().to_string(), identity.shape(), identity.dtype());
    }
}

fn check(data: &[u8], base: ReadOptions) {
    for mode in [ParseMode::Exact, ParseMode::Prefix] {
        let mut lower_error: Option<membrane_frame::Error> = None;
        for level in VerifyLevel::ALL {
            let options = base.level(level);
            let result = Frame::parse_with(data, &options.mode(mode));
            match &result {
                Ok((frame, rest)) => {
                    assert!(lower_error.is_none(), "{level:?} accepts what a lower level refused");
                    touch(frame);
                    assert_eq!(frame.len() + rest.len(), data.len());
                    if mode == ParseMode::Exact {
                        assert!(rest.is_empty());
                    } else {
                        let (again, after) =
                            Frame::parse_with(frame.as_bytes(), &options).expect("prefix frame re-read");
                        assert!(after.is_empty());
                        assert_eq!(&again, frame);
                    }
                }
                Err(err) => {
                    if let Some(lower) = lower_error {
                        let identity_first = level == VerifyLevel::Identity && after_identity_checks(lower.code());
                        if !identity_first || !matches!(err.code(), ErrorCode::IdentityJson | ErrorCode::IdentityField)
                        {
                            assert_eq!(err, &lower, "{level:?} reports another error than a lower level");
                        }
                    }
                    lower_error = Some(*err);
                    let _ = err.to_string();
                }
            }
            if mode == ParseMode::Exact {
                if let Ok((exact, _)) = &result {
                    let (prefix, rest) =
                        Frame::parse_with(data, &options.mode(ParseMode::Prefix)).expect("exact implies prefix");
                    assert!(rest.is_empty() && &prefix == exact);
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, ReadOptions::new());
    // A small identity limit and a shallow JSON depth exercise checks 7 and 8 on
    // identities the default limits accept.
    let limit = data.get(12).copied().unwrap_or(0) as u32 * 2;
    check(data, ReadOptions::new().identity_limit(limit).max_depth(1));
});
