//! Verifying several files at once on one worker, at the hashing levels: each of the
//! library's `StreamBatch` lanes reads its own file through its own 128 KiB buffer, and
//! the chunks of one round are verified together, their payloads hashed side by side
//! (several SHA-256 streams per core). Memory per worker stays a few fixed buffers,
//! whatever the frame size; every verdict is the one-file path's ([`crate::io`]): the
//! library gives the one-frame verifier's verdict on the same bytes, and a file that
//! changes while it is read is an `io` verdict here as there.

use crate::io::{open_regular, stopped, unless_changed, Checked, Outcome, ReadBuffer, RunState, ValidFrame};
use membrane_frame::batch_hash::LANES;
use membrane_frame::frame::StreamBatch;
use membrane_frame::{ReadOptions, VerifyLevel};
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::PathBuf;

/// A worker's lanes: a read buffer and an identity buffer each.
#[derive(Debug)]
pub struct BatchChecker {
    options: ReadOptions,
    buffers: [ReadBuffer; LANES],
    identities: [Vec<u8>; LANES],
}

/// A file in a lane: what the caller tagged it with, and its reading so far.
struct InFlight<T> {
    tag: T,
    path: PathBuf,
    file: File,
    opened: Metadata,
    read: u64,
    /// Set once the file is done.
    ended: Option<Ended>,
}

/// Why a file leaves its lane.
enum Ended {
    /// Read to its end: the verdict is the verifier's on all of it.
    AtEnd,
    /// Refused, unreadable or abandoned before its end: this is the verdict.
    Early(Outcome),
}

impl BatchChecker {
    /// Whether this path is worth it: only the hashing levels read the whole file.
    pub fn applies(level: VerifyLevel) -> bool {
        level >= VerifyLevel::Trailer
    }

    pub fn new(level: VerifyLevel, buffer_size: usize) -> BatchChecker {
        let options = ReadOptions::new().level(level);
        let buffer_size = buffer_size.max(4096);
        BatchChecker {
            options,
            buffers: std::array::from_fn(|_| ReadBuffer::new(buffer_size)),
            identities: std::array::from_fn(|_| vec![0u8; options.identity_limit as usize]),
        }
    }

    /// Verify files until `next` has no more: `next(wait)` gives the next file to check
    /// (waiting for one only when `wait`: every lane is free; `None` then means the
    /// run is over), `done` takes each verdict, in the order the files end.
    pub fn run<T>(
        &mut self,
        mut next: impl FnMut(bool) -> Option<(T, PathBuf)>,
        run: &RunState,
        mut done: impl FnMut(T, Checked),
    ) {
        let [a, b, c] = &mut self.identities;
        let mut batch = StreamBatch::new([a, b, c]);
        let mut lanes: [Option<InFlight<T>>; LANES] = std::array::from_fn(|_| None);
        loop {
            let mut busy = lanes.iter().flatten().count();
            for (lane, slot) in lanes.iter_mut().enumerate() {
                while slot.is_none() {
                    let Some((tag, path)) = next(busy == 0) else { break };
                    match open_regular(&path) {
                        Ok((file, opened)) => {
                            // The lane is free: starting cannot fail.
                            if let Err(err) = batch.start(lane, self.options) {
                                done(tag, Checked::unreadable(io::Error::other(err.to_string())));
                                continue;
                            }
                            *slot = Some(InFlight { tag, path, file, opened, read: 0, ended: None });
                            busy += 1;
                        }
                        Err(error) => done(tag, Checked::unreadable(error)),
                    }
                }
            }
            if lanes.iter().all(Option::is_none) {
                return;
            }
            let mut lengths = [0usize; LANES];
            for ((slot, buffer), length) in lanes.iter_mut().zip(self.buffers.iter_mut()).zip(lengths.iter_mut()) {
                let Some(file) = slot else { continue };
                if run.stopped() {
                    file.ended = Some(Ended::Early(stopped()));
                    continue;
                }
                match file.file.read(buffer.get_mut()) {
                    Ok(0) => file.ended = Some(Ended::AtEnd),
                    Ok(n) => {
                        *length = n;
                        file.read += n as u64;
                        run.read(n as u64);
                    }
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(err) => file.ended = Some(Ended::Early(Outcome::Unreadable(err))),
                }
            }
            let mut chunks: [&[u8]; LANES] = [&[]; LANES];
            for ((chunk, buffer), length) in chunks.iter_mut().zip(self.buffers.iter_mut()).zip(lengths) {
                *chunk = buffer.get_mut().get(..length).unwrap_or_default();
            }
            let statuses = batch.feed(chunks);
            for (lane, (slot, status)) in lanes.iter_mut().zip(statuses).enumerate() {
                let Some(file) = slot else { continue };
                if let (Some(Err(err)), None) = (status, &file.ended) {
                    file.ended = Some(Ended::Early(Outcome::Invalid(err)));
                }
                let Some(ended) = file.ended.take() else { continue };
                let hashed = batch.verifier(lane).map_or(0, |verifier| verifier.hashed());
                // The lane is freed whatever the reason the file ended.
                let verdict = batch.finish(lane);
                let outcome = match (ended, verdict) {
                    (Ended::AtEnd, Ok(frame)) => {
                        Outcome::Valid(ValidFrame::new(frame.payload_len(), frame.identity(), frame.payload_digest()))
                    }
                    (Ended::AtEnd, Err(err)) => Outcome::Invalid(err),
                    (Ended::Early(outcome), _) => outcome,
                };
                let Some(file) = slot.take() else { continue };
                let outcome = unless_changed(outcome, &file.file, &file.opened, &file.path);
                let size = file.opened.len();
                done(file.tag, Checked { outcome, size, bytes_read: file.read, bytes_hashed: hashed });
            }
        }
    }
}
