//! Verifying many frames at once: the payloads of a group are hashed together by the
//! batch hasher (several SHA-256 streams per core, `crate::batch_hash`), everything
//! else is the one-frame reader's, so every verdict — error code, offset, field — is
//! the one [`Frame::parse_with`] gives.

use super::reader::{Frame, ReadOptions, VerifyLevel};
use crate::batch_hash::hash_batch;
use crate::digest::Sha256Digest;
use crate::error::Error;

/// Frames verified per group: as many as the widest kernel steps together (sixteen
/// AVX-512 lanes), small enough for the stack (a `Frame` holds its parsed identity).
/// Callers that gather a batch on the stack (the C ABI) take it in chunks of this many:
/// the verifier works group by group, so chunking costs nothing.
pub const VERIFY_BATCH_GROUP: usize = 16;
const GROUP: usize = VERIFY_BATCH_GROUP;

/// One frame's verdict: what [`Frame::parse_with`] returns for it.
pub type Verdict<'a> = Result<(Frame<'a>, &'a [u8]), Error>;

/// Verify every buffer of `frames` with `options` and call `each(index, verdict)` for
/// each, in order; the verdict is exactly [`Frame::parse_with`]'s for that buffer. At the
/// trailer and full levels the payloads are hashed several at a time (1.25x to 2x one
/// stream's speed per core, by the core: `crate::batch_hash::Kernel`).
///
/// ```
/// use membrane_frame::frame::verify_batch;
/// use membrane_frame::{ErrorCode, ReadOptions};
/// let good = membrane_frame::example_frame();
/// let mut bad = good.clone();
/// *bad.last_mut().unwrap() ^= 1;
/// let mut codes = Vec::new();
/// verify_batch(&[&good, &bad, &good], &ReadOptions::new(), |_, verdict| {
///     codes.push(verdict.err().map(|err| err.code()));
/// });
/// assert_eq!(codes, [None, Some(ErrorCode::TrailerMismatch), None]);
/// ```
pub fn verify_batch<'a>(frames: &[&'a [u8]], options: &ReadOptions, mut each: impl FnMut(usize, Verdict<'a>)) {
    let hashes = options.level >= VerifyLevel::Trailer;
    // Checks 1–11 with the one-frame reader; the payload checks after the batch hash.
    let head_options = if hashes { options.level(VerifyLevel::Identity) } else { *options };
    for (group_index, group) in frames.chunks(GROUP).enumerate() {
        let mut verdicts: [Option<Verdict<'a>>; GROUP] = core::array::from_fn(|_| None);
        // The payloads of the frames that pass checks 1–11, in order, packed to the front.
        let mut payloads: [&[u8]; GROUP] = [&[]; GROUP];
        let mut passed = 0;
        for (frame, verdict) in group.iter().zip(verdicts.iter_mut()) {
            let read = Frame::parse_with(frame, &head_options);
            if let (Ok((frame, _)), Some(slot)) = (&read, payloads.get_mut(passed)) {
                *slot = frame.payload();
                passed += 1;
            }
            *verdict = Some(read);
        }
        let mut digests = [Sha256Digest([0; 32]); GROUP];
        if hashes {
            if let (Some(messages), Some(out)) = (payloads.get(..passed), digests.get_mut(..passed)) {
                // Lengths agree by construction; an error cannot happen here.
                let _ = hash_batch(messages, out);
            }
        }
        let mut next_digest = digests.iter();
        for (offset, verdict) in verdicts.into_iter().enumerate() {
            let Some(verdict) = verdict else { continue };
            let verdict = match verdict {
                Ok((frame, rest)) if hashes => match next_digest.next() {
                    Some(digest) => frame.with_payload_digest(*digest, options.level).map(|frame| (frame, rest)),
                    None => Frame::parse_with(frame.as_bytes(), options),
                },
                other => other,
            };
            each(group_index * GROUP + offset, verdict);
        }
    }
}
