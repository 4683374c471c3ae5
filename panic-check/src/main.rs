//! Proof that the frame, identity, envelope, JSON, snapshot and tombstone read/verify
//! paths cannot panic.
//!
//! This program reads bytes from standard input and runs them through every reader and
//! verifier of those paths, with levels, modes, limits and chunk sizes taken from the
//! input, so the optimiser knows nothing about the data. Its panic handler calls
//! `membrane_frame_panic_is_reachable`, which no library defines: after LTO removes the
//! code that cannot run, any panic left reachable (a bounds check, an `unwrap`, an
//! overflow check, core's float parser, …) is a call to that missing symbol and the
//! link fails. A successful build is the proof; running it is a smoke test.
//!
//! Scope: exactly the functions called below (see docs/reliability.md), the streamed
//! batch verifier and the batch hasher (`stream_batch`) among them, both also sixteen
//! lanes wide (the AVX-512 kernel on CPUs that pick it).
#![no_std]
#![no_main]

use core::hint::black_box;
use membrane_frame::batch_hash::{hash_batch, StreamLanes, LANES};
use membrane_frame::frame::StreamBatch;
use membrane_frame::json::{self, Event, Limits, Reader};
use membrane_frame::snapshot::Snapshot;
use membrane_frame::tombstone::{GossipMap, OpDelete, OpTombstone};
use membrane_frame::{
    FragmentMessage, Frame, ParseMode, PayloadIdentity, ReadOptions, Sha256Digest, StreamStatus, StreamVerifier,
    VerifyLevel,
};

#[link(name = "c")]
extern "C" {
    fn read(fd: i32, buf: *mut u8, count: usize) -> isize;
}

extern "C" {
    /// Defined nowhere, on purpose.
    fn membrane_frame_panic_is_reachable() -> !;
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: never linked; a build that needs this call fails, which is the point.
    unsafe { membrane_frame_panic_is_reachable() }
}

const INPUT: usize = 1 << 20;

/// Everything an identity view offers to a reader, folded into a number.
fn use_identity(identity: &PayloadIdentity<'_>) -> u64 {
    let mut acc = identity.shape().len() as u64;
    acc ^= identity.layer_range().start as u64 ^ identity.head_range().end as u64 ^ identity.token_span().end as u64;
    acc ^= identity.dtype().bits() as u64;
    acc ^= identity.payload_hash().decoded_len() as u64 ^ identity.model_id().char_count() as u64;
    acc ^= identity.is_canonical() as u64;
    acc ^= u64::from(identity.fingerprint().as_bytes()[0]);
    acc
}

fn frames(data: &[u8], config: u8) -> u64 {
    let mut acc = 0;
    let options = ReadOptions::new()
        .level(VerifyLevel::from_number(u32::from(config & 3)).unwrap_or_default())
        .identity_limit(u32::from(config) << 10)
        .max_depth(u32::from(config >> 4));
    for mode in [ParseMode::Exact, ParseMode::Prefix] {
        match Frame::parse_with(data, &options.mode(mode)) {
            Ok((frame, rest)) => {
                acc += frame.payload().len() as u64 + rest.len() as u64 + frame.identity_json().len() as u64;
                acc ^= u64::from_le_bytes(frame.trailer());
                acc ^= u64::from(frame.header().identity_len.get());
                if let Some(identity) = frame.identity() {
                    acc ^= use_identity(identity);
                }
            }
            Err(err) => acc ^= u64::from(err.code().number()) ^ err.offset().unwrap_or(0),
        }
    }
    acc
}

fn stream(data: &[u8], config: u8, chunk: usize) -> u64 {
    let mut identity = [0u8; 4096];
    let options = ReadOptions::new().level(VerifyLevel::from_number(u32::from(config & 3)).unwrap_or_default());
    let mode = if config & 4 == 0 { ParseMode::Exact } else { ParseMode::Prefix };
    let mut verifier = StreamVerifier::new(options.mode(mode), &mut identity);
    for part in data.chunks(chunk.max(1)) {
        match verifier.feed(part) {
            Ok(StreamStatus::NeedMore(n)) => black_box(n),
            Ok(StreamStatus::Complete { consumed }) => black_box(consumed as u64),
            Err(err) => return u64::from(err.code().number()),
        };
    }
    match verifier.finish() {
        Ok(frame) => frame.frame_len() ^ frame.identity().map_or(0, use_identity),
        Err(err) => u64::from(err.code().number()),
    }
}

/// The streamed batch verifier and the batch hasher under it: the input cut into
/// three frames fed to the lanes in chunks of different lengths, a lane restarted as
/// its frame ends.
fn stream_batch(data: &[u8], config: u8, chunk: usize) -> u64 {
    let mut buffers = [[0u8; 1024]; LANES];
    let [a, b, c] = &mut buffers;
    let options = ReadOptions::new().level(VerifyLevel::from_number(u32::from(config & 3)).unwrap_or_default());
    let mut batch = StreamBatch::new([a, b, c]);
    let third = data.len() / 3;
    let (first, rest) = data.split_at(third);
    let (second, third) = rest.split_at(third.min(rest.len()));
    let mut frames = [first, second, third];
    let mut acc = 0;
    for lane in 0..LANES {
        acc ^= batch.start(lane, options).is_ok() as u64;
    }
    let mut step = chunk.max(1);
    while frames.iter().any(|frame| !frame.is_empty()) {
        let mut chunks: [&[u8]; LANES] = [&[]; LANES];
        for (frame, chunk) in frames.iter_mut().zip(chunks.iter_mut()) {
            let (head, tail) = frame.split_at(step.min(frame.len()));
            (*chunk, *frame) = (head, tail);
            step = step % 700 + 61;
        }
        for status in batch.feed(chunks).into_iter().flatten() {
            acc ^= status.map_or_else(|err| u64::from(err.code().number()), |_| 1);
        }
    }
    for lane in 0..LANES {
        acc ^= match batch.finish(lane) {
            Ok(frame) => frame.frame_len() ^ frame.identity().map_or(0, use_identity),
            Err(err) => u64::from(err.code().number()),
        };
    }
    let mut lanes = StreamLanes::new();
    lanes.update([first, second, third]);
    for lane in 0..LANES {
        acc ^= lanes.finish(lane).map_or(0, |digest| u64::from(digest.as_bytes()[0]));
    }
    // Sixteen lanes, the AVX-512 kernel's width (the narrow kernels on other CPUs), fed
    // and hashed in memory.
    let pieces: [&[u8]; 16] =
        core::array::from_fn(|i| data.get(i * data.len() / 16..(i + 1) * data.len() / 16).unwrap_or(&[]));
    let mut wide = StreamLanes::<16>::new();
    wide.update(pieces);
    for lane in 0..16 {
        acc ^= wide.finish(lane).map_or(0, |digest| u64::from(digest.as_bytes()[0]));
    }
    let mut digests = [Sha256Digest([0; 32]); 16];
    acc ^= hash_batch(&pieces, &mut digests).map_or(0, |()| u64::from(digests[15].as_bytes()[0]));
    acc
}

fn texts(data: &[u8], config: u8) -> u64 {
    let limits = Limits { max_depth: u32::from(config) };
    let mut acc = 0;
    match PayloadIdentity::parse_with(data, limits) {
        Ok(identity) => acc ^= use_identity(&identity),
        Err(err) => acc ^= u64::from(err.code().number()),
    }
    match FragmentMessage::parse_with(data, limits) {
        Ok(message) => {
            acc ^= message.payload_size() ^ message.version_id() ^ message.ttl().to_bits();
            acc ^= message.reuse_score().to_bits() ^ message.hlc().0;
            acc ^= message.tenant_id().char_count() as u64 ^ use_identity(message.identity());
            acc ^= message.fingerprint_compat().map_or(0, |d| u64::from(d.as_bytes()[1]));
            acc ^= message.payload_ref().map_or(1, |r| r.decoded_len() as u64);
            acc ^= message.consistency() as u64;
        }
        Err(err) => acc ^= u64::from(err.code().number()),
    }
    acc ^= json::validate(data, limits).is_ok() as u64;
    match Snapshot::parse_with(data, limits) {
        Ok(s) => {
            acc ^= s.cluster_epoch() ^ s.captured_at().to_bits() ^ s.request_count() ^ s.error_count();
            for member in s.membership().iter() {
                acc = acc.wrapping_mul(31) ^ u64::from(member.port) ^ member.node_id.char_count() as u64;
                acc ^= member.missed_heartbeats.unwrap_or(0) ^ member.cluster_epoch.unwrap_or(0);
            }
            for (hash, node) in s.primary_map().iter() {
                acc = acc.wrapping_mul(31) ^ hash.decoded_len() as u64 ^ node.decoded_len() as u64;
            }
            for (hash, nodes) in s.replica_map().iter() {
                acc = acc.wrapping_mul(31) ^ hash.decoded_len() as u64;
                for node in nodes.iter() {
                    acc ^= node.char_count() as u64;
                }
            }
        }
        Err(err) => acc ^= u64::from(err.code().number()),
    }
    match GossipMap::parse_with(data, limits) {
        Ok(m) => {
            for (hash, until) in m.iter() {
                acc = acc.wrapping_mul(31) ^ hash.decoded_len() as u64 ^ until.to_bits();
            }
        }
        Err(err) => acc ^= u64::from(err.code().number()),
    }
    match OpTombstone::parse_with(data, limits) {
        Ok(m) => acc ^= m.until().to_bits(),
        Err(err) => acc ^= u64::from(err.code().number()),
    }
    match OpDelete::parse_with(data, limits) {
        Ok(m) => acc ^= m.tombstone_until().map_or(0, f64::to_bits),
        Err(err) => acc ^= u64::from(err.code().number()),
    }
    let mut reader: Reader = Reader::new(data, limits);
    while let Ok(Some(event)) = reader.next_event() {
        acc = acc.wrapping_mul(31)
            ^ match event {
                Event::Number(n) => n.as_f64().to_bits() ^ n.as_i64().unwrap_or(0) as u64 ^ n.as_u64().unwrap_or(0),
                Event::Str(s) | Event::Key(s) => s.decoded_len() as u64,
                _ => 1,
            };
    }
    acc
}

#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    let mut buf = [0u8; INPUT];
    let mut len = 0usize;
    while let Some(free) = buf.get_mut(len..).filter(|free| !free.is_empty()) {
        // SAFETY: `free` is a valid, writable buffer of `free.len()` bytes.
        let n = unsafe { read(0, free.as_mut_ptr(), free.len()) };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    let input = buf.get(..len).unwrap_or(&[]);
    let (config, data) = input.split_first().map_or((0, input), |(c, d)| (*c, d));
    let acc = frames(data, config)
        ^ stream(data, config, usize::from(config) + 1)
        ^ stream_batch(data, config, usize::from(config) * 3 + 1)
        ^ texts(data, config);
    (black_box(acc) & 0x3F) as i32
}
