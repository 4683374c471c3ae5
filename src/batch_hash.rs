//! SHA-256 of many independent messages at once: bulk verification past the speed of
//! one SHA-256 stream.
//!
//! One SHA-256 stream is a chain of dependent rounds; a core can run several side by
//! side. [`hash_batch`] keeps messages in flight (as many as the kernel steps together,
//! at least [`LANES`]), steps them together through the fastest kernel of this CPU
//! ([`Kernel`]: two or three interleaved SHA-NI chains, or sixteen AVX-512 lanes),
//! pads each message's end through the same kernel, and gives a lane the next message
//! as soon as its message is done, so messages of any lengths share the lanes.
//! Elsewhere, and when [`Kernel::Portable`] is asked for, every lane goes through
//! `sha2`'s compression function instead (Miri runs that path). No allocation, no
//! panic. [`StreamLanes`] does the same for [`LANES`] messages that arrive in chunks
//! (files read piece by piece).
//!
//! ```
//! use membrane_frame::batch_hash::hash_batch;
//! use membrane_frame::Sha256Digest;
//! let messages: [&[u8]; 4] = [b"abc", b"", &[7u8; 1000], &[1u8; 64]];
//! let mut digests = [Sha256Digest([0; 32]); 4];
//! hash_batch(&messages, &mut digests)?;
//! for (message, digest) in messages.iter().zip(&digests) {
//!     assert_eq!(*digest, Sha256Digest::of(message));
//! }
//! # Ok::<(), membrane_frame::Error>(())
//! ```

#[cfg(target_arch = "x86_64")]
mod avx512;
mod kernel;
#[cfg(target_arch = "x86_64")]
mod sha_ni;

use kernel::compress_side_by_side;
pub use kernel::Kernel;

use crate::digest::Sha256Digest;
use crate::error::Error;

/// Lanes of a [`StreamLanes`] (and of a `frame::StreamBatch`), and the fewest messages
/// [`hash_batch`] keeps in flight. A SHA-NI kernel steps two or three of them together,
/// whichever this core runs faster ([`Kernel::width`]); with two, three lanes take turns
/// in pairs. The AVX-512 kernel, sixteen wide, leaves three lanes to two SHA-NI chains.
pub const LANES: usize = 3;

/// The SHA-256 initial state (FIPS 180-4, 5.3.3).
const H0: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// The round constants (FIPS 180-4, 4.2.2), for the x86-64 kernels.
#[cfg(target_arch = "x86_64")]
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
];

/// SHA-256 of every message into `digests` (the same length), with the fastest kernel
/// of this CPU. `invalid_argument` if the lengths differ.
pub fn hash_batch(messages: &[&[u8]], digests: &mut [Sha256Digest]) -> Result<(), Error> {
    hash_batch_with(Kernel::detect(), messages, digests)
}

/// [`hash_batch`] with a chosen kernel (tests force each; one this CPU lacks runs the
/// portable code).
pub fn hash_batch_with(kernel: Kernel, messages: &[&[u8]], digests: &mut [Sha256Digest]) -> Result<(), Error> {
    if messages.len() != digests.len() {
        return Err(Error::invalid_argument("digests", "needs one digest per message"));
    }
    if kernel.width() > LANES {
        hash_in_lanes::<WIDEST>(kernel, messages, digests);
    } else {
        hash_in_lanes::<LANES>(kernel, messages, digests);
    }
    Ok(())
}

/// The widest kernel's width: how many messages [`hash_batch`] keeps in flight for it.
const WIDEST: usize = Kernel::Avx512X16.width();

/// [`hash_batch_with`] keeping `M` messages in flight.
fn hash_in_lanes<const M: usize>(kernel: Kernel, messages: &[&[u8]], digests: &mut [Sha256Digest]) {
    let mut lanes: [Option<Lane<'_>>; M] = core::array::from_fn(|_| None);
    let mut next = 0;
    loop {
        // Give every idle lane the next message.
        for lane in lanes.iter_mut().filter(|lane| lane.is_none()) {
            if let Some(&message) = messages.get(next) {
                *lane = Some(Lane::new(next, message));
                next += 1;
            }
        }
        if lanes.iter().all(Option::is_none) {
            return;
        }
        step(kernel, &mut lanes);
        for slot in lanes.iter_mut() {
            if let Some(lane) = slot.as_ref().filter(|lane| lane.is_done()) {
                if let Some(digest) = digests.get_mut(lane.index) {
                    *digest = lane.digest();
                }
                *slot = None;
            }
        }
    }
}

/// Run every busy lane the same number of blocks: as many as the one with the fewest
/// left in its current part (message body or padding) has.
fn step<const M: usize>(kernel: Kernel, lanes: &mut [Option<Lane<'_>>; M]) {
    let mut states = [H0; M];
    let mut blocks: [&[[u8; 64]]; M] = [&[]; M];
    for ((lane, state), blocks) in lanes.iter().zip(states.iter_mut()).zip(blocks.iter_mut()) {
        if let Some(lane) = lane {
            *state = lane.state;
            *blocks = lane.pending();
        }
    }
    let count = compress_side_by_side(kernel, &mut states, &mut blocks);
    for (lane, state) in lanes.iter_mut().zip(states) {
        if let Some(lane) = lane {
            lane.state = state;
            lane.advance(count);
        }
    }
}

/// SHA-256 of `N` messages that arrive in chunks (a file read piece by piece, a message
/// gigabytes long), hashed side by side as [`hash_batch`] does: [`LANES`] by default,
/// or as many as the kernel steps together ([`Kernel::in_flight`]: sixteen lanes keep
/// the AVX-512 kernel busy). Each lane holds one message: [`update`](Self::update) feeds
/// every lane its next chunk at once (any lengths, empty for a lane with nothing new),
/// [`finish`](Self::finish) ends a lane's message and starts the lane afresh. Bytes
/// short of a whole block wait in the lane (64 bytes each), nothing else is copied.
///
/// ```
/// use membrane_frame::batch_hash::StreamLanes;
/// use membrane_frame::Sha256Digest;
/// let (a, b) = (vec![1u8; 10_000], vec![2u8; 3_000]);
/// let mut lanes = StreamLanes::new();
/// for (x, y) in a.chunks(4096).zip(b.chunks(1000).chain([&[][..]; 3])) {
///     lanes.update([x, y, &[]]);
/// }
/// assert_eq!(lanes.finish(0)?, Sha256Digest::of(&a));
/// assert_eq!(lanes.finish(1)?, Sha256Digest::of(&b));
/// assert_eq!(lanes.finish(2)?, Sha256Digest::of(b""));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct StreamLanes<const N: usize = LANES> {
    kernel: Kernel,
    lanes: [StreamLane; N],
}

/// One lane's message so far: the state after its whole blocks, the bytes of a block
/// not yet whole, and the length fed.
#[derive(Clone, Copy, Debug)]
struct StreamLane {
    state: [u32; 8],
    partial: [u8; 64],
    partial_len: usize,
    len: u64,
}

impl StreamLane {
    const EMPTY: StreamLane = StreamLane { state: H0, partial: [0; 64], partial_len: 0, len: 0 };

    /// Take bytes from the front of `chunk` into the partial block; true if it is whole.
    fn fill_partial(&mut self, chunk: &mut &[u8]) -> bool {
        if self.partial_len == 0 {
            return false;
        }
        let take = chunk.len().min(64 - self.partial_len);
        let (head, rest) = chunk.split_at(take);
        if let Some(slot) = self.partial.get_mut(self.partial_len..self.partial_len + take) {
            slot.copy_from_slice(head);
        }
        self.partial_len += take;
        *chunk = rest;
        self.partial_len == 64
    }
}

impl<const N: usize> Default for StreamLanes<N> {
    fn default() -> StreamLanes<N> {
        StreamLanes::new()
    }
}

impl<const N: usize> StreamLanes<N> {
    /// Empty lanes, hashed with the fastest kernel of this CPU.
    pub fn new() -> StreamLanes<N> {
        StreamLanes::with_kernel(Kernel::detect())
    }

    /// Empty lanes, hashed with a chosen kernel (tests force [`Kernel::Portable`]).
    pub fn with_kernel(kernel: Kernel) -> StreamLanes<N> {
        StreamLanes { kernel, lanes: [StreamLane::EMPTY; N] }
    }

    /// Append `chunks[lane]` to each lane's message.
    pub fn update(&mut self, chunks: [&[u8]; N]) {
        let mut states = [H0; N];
        let mut blocks: [&[[u8; 64]]; N] = [&[]; N];
        let mut tails: [&[u8]; N] = [&[]; N];
        for (((lane, mut chunk), state), (blocks, tail)) in
            self.lanes.iter_mut().zip(chunks).zip(states.iter_mut()).zip(blocks.iter_mut().zip(tails.iter_mut()))
        {
            lane.len = lane.len.wrapping_add(chunk.len() as u64);
            // A block begun by an earlier chunk is completed first, on its own: at most one
            // such block a chunk.
            if lane.fill_partial(&mut chunk) {
                sha2::block_api::compress256(&mut lane.state, core::slice::from_ref(&lane.partial));
                lane.partial_len = 0;
            }
            *state = lane.state;
            (*blocks, *tail) = chunk.as_chunks::<64>();
        }
        while compress_side_by_side(self.kernel, &mut states, &mut blocks) > 0 {}
        for ((lane, state), tail) in self.lanes.iter_mut().zip(states).zip(tails) {
            lane.state = state;
            // A tail is left only where the partial block was empty or just completed.
            if let Some(slot) = lane.partial.get_mut(lane.partial_len..lane.partial_len + tail.len()) {
                slot.copy_from_slice(tail);
                lane.partial_len += tail.len();
            }
        }
    }

    /// The SHA-256 of everything fed to `lane` since it last finished; the lane starts
    /// a new, empty message. `invalid_argument` for a lane at or past `N`.
    pub fn finish(&mut self, lane: usize) -> Result<Sha256Digest, Error> {
        let lane = self.lanes.get_mut(lane).ok_or_else(|| Error::invalid_argument("lane", "is past the last lane"))?;
        let (padding, blocks) = padding(lane.partial.get(..lane.partial_len).unwrap_or_default(), lane.len);
        sha2::block_api::compress256(&mut lane.state, padding.get(..blocks).unwrap_or_default());
        let digest = digest_of(lane.state);
        *lane = StreamLane::EMPTY;
        Ok(digest)
    }

    /// Bytes fed to `lane` since it last finished (0 for a lane past the last).
    pub fn len(&self, lane: usize) -> u64 {
        self.lanes.get(lane).map_or(0, |lane| lane.len)
    }

    /// Whether `lane` has been fed nothing since it last finished.
    pub fn is_empty(&self, lane: usize) -> bool {
        self.len(lane) == 0
    }
}

/// The padding blocks of a message of `len` bytes whose last partial block is `rest`
/// (FIPS 180-4, 5.1.1): the 0x80 marker, zeros, the bit length; one block or two.
fn padding(rest: &[u8], len: u64) -> ([[u8; 64]; 2], usize) {
    let mut flat = [0u8; 128];
    flat.get_mut(..rest.len()).unwrap_or_default().copy_from_slice(rest);
    if let Some(marker) = flat.get_mut(rest.len()) {
        *marker = 0x80;
    }
    // The length goes in the last 8 bytes of the first block with room for it.
    let blocks = if rest.len() < 56 { 1 } else { 2 };
    let end = 64 * blocks;
    if let Some(length) = flat.get_mut(end - 8..end) {
        length.copy_from_slice(&len.wrapping_mul(8).to_be_bytes());
    }
    let mut padding = [[0u8; 64]; 2];
    let (first, second) = flat.split_at(64);
    padding[0].copy_from_slice(first);
    padding[1].copy_from_slice(second);
    (padding, blocks)
}

/// A state as the big-endian digest bytes.
fn digest_of(state: [u32; 8]) -> Sha256Digest {
    let mut out = [0u8; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    Sha256Digest(out)
}

/// One message in flight: its whole blocks (read in place), then its padding (one or
/// two blocks built here from the last partial block and the bit length).
struct Lane<'m> {
    index: usize,
    state: [u32; 8],
    body: &'m [[u8; 64]],
    padding: [[u8; 64]; 2],
    padding_blocks: usize,
    /// Padding blocks already compressed.
    padding_done: usize,
}

impl<'m> Lane<'m> {
    fn new(index: usize, message: &'m [u8]) -> Lane<'m> {
        let (body, rest) = message.as_chunks::<64>();
        let (padding, padding_blocks) = padding(rest, message.len() as u64);
        Lane { index, state: H0, body, padding, padding_blocks, padding_done: 0 }
    }

    /// The blocks of the current part still to compress.
    fn pending(&self) -> &[[u8; 64]] {
        if !self.body.is_empty() {
            self.body
        } else {
            self.padding.get(self.padding_done..self.padding_blocks).unwrap_or_default()
        }
    }

    fn advance(&mut self, blocks: usize) {
        if !self.body.is_empty() {
            self.body = self.body.get(blocks..).unwrap_or_default();
        } else {
            self.padding_done += blocks;
        }
    }

    fn is_done(&self) -> bool {
        self.body.is_empty() && self.padding_done >= self.padding_blocks
    }

    fn digest(&self) -> Sha256Digest {
        digest_of(self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic bytes (xorshift).
    fn bytes(len: usize, seed: u64) -> std::vec::Vec<u8> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    }

    /// The kernels to test here: every one this CPU runs (the portable one everywhere).
    fn kernels() -> std::vec::Vec<Kernel> {
        Kernel::on_this_cpu().collect()
    }

    fn check(kernel: Kernel, messages: &[std::vec::Vec<u8>]) {
        let views: std::vec::Vec<&[u8]> = messages.iter().map(|m| m.as_slice()).collect();
        let mut digests = std::vec![Sha256Digest([0; 32]); views.len()];
        hash_batch_with(kernel, &views, &mut digests).unwrap();
        for (message, digest) in views.iter().zip(&digests) {
            assert_eq!(*digest, Sha256Digest::of(message), "{} bytes, {}", message.len(), kernel.name());
        }
    }

    #[test]
    fn nist_vectors() {
        // FIPS 180-4 examples (NIST CSRC): "abc", the empty string, the 448-bit message.
        let cases: [(&[u8], &str); 3] = [
            (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            ),
        ];
        for kernel in kernels() {
            let messages: [&[u8]; 3] = [cases[0].0, cases[1].0, cases[2].0];
            let mut digests = [Sha256Digest([0; 32]); 3];
            hash_batch_with(kernel, &messages, &mut digests).unwrap();
            for (digest, (_, hex)) in digests.iter().zip(cases) {
                assert_eq!(digest.to_hex().as_str(), hex, "{}", kernel.name());
            }
        }
    }

    #[test]
    fn every_length_around_the_padding_boundaries() {
        for kernel in kernels() {
            // Each length with neighbours of other lengths, so lanes finish out of step.
            let lengths: std::vec::Vec<usize> =
                if cfg!(miri) { (0..130).collect() } else { (0..200).chain(1000..1100).collect() };
            let messages: std::vec::Vec<_> = lengths.iter().enumerate().map(|(i, &len)| bytes(len, i as u64)).collect();
            check(kernel, &messages);
        }
    }

    #[test]
    fn uneven_batches_refill_lanes_out_of_step() {
        // Miri interprets every round: the same shapes, smaller.
        let big = if cfg!(miri) { 600 } else { 3 << 20 };
        let lengths = [0usize, 1, big, 64, 55, 56, 57, 63, 65, big / 30, 1, 2, big / 40, 119, 120, 128, big * 2];
        let messages: std::vec::Vec<_> =
            lengths.iter().enumerate().map(|(i, &len)| bytes(len, 100 + i as u64)).collect();
        for kernel in kernels() {
            check(kernel, &messages);
            for count in 0..5 {
                check(kernel, &messages[..count]);
            }
        }
    }

    #[test]
    fn a_digest_per_message_is_required() {
        let mut digests = [Sha256Digest([0; 32]); 1];
        let err = hash_batch(&[b"a", b"b"], &mut digests).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
        assert!(hash_batch(&[], &mut []).is_ok());
    }

    /// Feed each message to its lane in chunks whose lengths cycle through `chunk_lens`
    /// (a different phase per lane, so lanes run out of step), finishing a lane and
    /// starting the next message there as soon as its message is all in.
    fn check_streamed<const N: usize>(kernel: Kernel, messages: &[std::vec::Vec<u8>], chunk_lens: &[usize]) {
        let mut lanes = StreamLanes::<N>::with_kernel(kernel);
        let mut current: [Option<(usize, usize)>; N] = [None; N]; // (message, fed)
        let mut next = 0;
        let mut turn = 0;
        let mut done = 0;
        while done < messages.len() {
            for slot in current.iter_mut().filter(|slot| slot.is_none()) {
                if next < messages.len() {
                    *slot = Some((next, 0));
                    next += 1;
                }
            }
            let mut chunks: [&[u8]; N] = [&[]; N];
            for (lane, (slot, chunk)) in current.iter_mut().zip(chunks.iter_mut()).enumerate() {
                if let Some((message, fed)) = slot {
                    let len = chunk_lens[(turn + lane * 7) % chunk_lens.len()];
                    let end = (*fed + len).min(messages[*message].len());
                    *chunk = &messages[*message][*fed..end];
                    *fed = end;
                }
            }
            lanes.update(chunks);
            for (lane, slot) in current.iter_mut().enumerate() {
                if let Some((message, fed)) = *slot {
                    if fed == messages[message].len() {
                        assert_eq!(lanes.len(lane), fed as u64);
                        let digest = lanes.finish(lane).unwrap();
                        assert_eq!(
                            digest,
                            Sha256Digest::of(&messages[message]),
                            "message {message}, {} bytes, {}",
                            fed,
                            kernel.name()
                        );
                        assert!(lanes.is_empty(lane), "a finished lane starts afresh");
                        *slot = None;
                        done += 1;
                    }
                }
            }
            turn += 1;
        }
    }

    #[test]
    fn streamed_lanes_equal_sha2_for_every_length_and_chunking() {
        let lengths: std::vec::Vec<usize> =
            if cfg!(miri) { (0..70).step_by(3).collect() } else { (0..200).chain(1000..1050).collect() };
        let messages: std::vec::Vec<_> =
            lengths.iter().enumerate().map(|(i, &len)| bytes(len, 500 + i as u64)).collect();
        let chunkings: [&[usize]; 5] = [&[1], &[63, 1, 64, 2], &[64], &[7, 100, 0, 55, 56, 57], &[4096]];
        for kernel in kernels() {
            for chunk_lens in chunkings {
                check_streamed::<LANES>(kernel, &messages, chunk_lens);
                if !cfg!(miri) {
                    check_streamed::<16>(kernel, &messages, chunk_lens);
                }
            }
        }
    }

    #[test]
    fn streamed_lanes_of_uneven_long_messages() {
        let big = if cfg!(miri) { 700 } else { 2 << 20 };
        let lengths = [big, 0, big / 3, 65, big * 2, 56, 1, big / 7 + 5];
        let messages: std::vec::Vec<_> =
            lengths.iter().enumerate().map(|(i, &len)| bytes(len, 900 + i as u64)).collect();
        let chunking: &[usize] = if cfg!(miri) { &[64, 130, 1] } else { &[128 << 10, 65 << 10, 100_001] };
        for kernel in kernels() {
            check_streamed::<LANES>(kernel, &messages, chunking);
            check_streamed::<16>(kernel, &messages, chunking);
        }
    }

    #[test]
    fn a_lane_fed_nothing_hashes_the_empty_message() {
        let mut lanes = StreamLanes::new();
        lanes.update([b"abc", &[], &[]]);
        lanes.update([&[], &[], &[]]);
        assert_eq!(lanes.finish(1).unwrap(), Sha256Digest::of(b""));
        assert_eq!(lanes.finish(0).unwrap(), Sha256Digest::of(b"abc"));
        // Finished once: the next digest of the lane is of nothing again.
        assert_eq!(lanes.finish(0).unwrap(), Sha256Digest::of(b""));
    }

    #[test]
    fn a_lane_past_the_last_is_refused() {
        let mut lanes: StreamLanes = StreamLanes::default();
        let err = lanes.finish(LANES).unwrap_err();
        assert_eq!((err.code(), err.field()), (crate::ErrorCode::InvalidArgument, Some("lane")));
        assert_eq!(lanes.len(LANES), 0);
        assert!(lanes.is_empty(LANES));
    }

    #[test]
    fn a_lane_is_empty_exactly_until_it_is_fed_a_byte_and_again_after_it_finishes() {
        let mut lanes = StreamLanes::new();
        lanes.update([b"abc", &[], &[7u8; 200]]);
        assert_eq!((lanes.len(0), lanes.len(1), lanes.len(2)), (3, 0, 200));
        assert_eq!((lanes.is_empty(0), lanes.is_empty(1), lanes.is_empty(2)), (false, true, false));
        lanes.finish(2).unwrap();
        assert!(lanes.is_empty(2) && !lanes.is_empty(0));
    }
}
