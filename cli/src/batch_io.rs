//! Verifying several files at once on one worker, at the hashing levels: each of the
//! library's `StreamBatch` lanes reads its own file through its own 128 KiB buffer, and
//! the chunks of one round are verified together, their payloads hashed side by side
//! (several SHA-256 streams per core). Memory per worker stays a few fixed buffers,
//! whatever the frame size; every verdict is the one-file path's ([`crate::io`]): the
//! library gives the one-frame verifier's verdict on the same bytes, and a file that
//! changes while it is read is an `io` verdict here as there.

use crate::io::{open_regular, stopped, unless_changed, Checked, Outcome, ReadBuffer, RunState, ValidFrame};
use membrane_frame::batch_hash::{Kernel, LANES};
use membrane_frame::frame::StreamBatch;
use membrane_frame::{ReadOptions, VerifyLevel};
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::PathBuf;

/// A worker's lanes: a read buffer and an identity buffer each. As many lanes as the
/// library's kernel steps together: [`LANES`] for SHA-NI, [`WIDE`] for AVX-512.
#[derive(Debug)]
pub struct BatchChecker {
    options: ReadOptions,
    buffers: Vec<ReadBuffer>,
    identities: Vec<Vec<u8>>,
}

/// The widest kernel's lanes.
const WIDE: usize = Kernel::Avx512X16.width();

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
        let lanes = Kernel::detect().in_flight();
        // Sixteen lanes read half as much each, so their buffers stay in the core's L2
        // beside the hash (2 GiB of 16 MiB frames, `-j 2`, best of 5 on an Intel Xeon with
        // a 2 MiB L2: 0.489 s with 128 KiB a lane, 0.461 s with 64 KiB, 0.462 s with 32 KiB).
        let buffer_size = if lanes == WIDE { buffer_size / 2 } else { buffer_size }.max(4096);
        BatchChecker {
            options,
            buffers: (0..lanes).map(|_| ReadBuffer::new(buffer_size)).collect(),
            identities: (0..lanes).map(|_| vec![0u8; options.identity_limit as usize]).collect(),
        }
    }

    /// Files in flight at once.
    pub fn lanes(&self) -> usize {
        self.buffers.len()
    }

    /// Verify files until `next` has no more: `next(wait)` gives the next file to check
    /// (waiting for one only when `wait`: every lane is free; `None` then means the
    /// run is over), `done` takes each verdict, in the order the files end.
    pub fn run<T>(
        &mut self,
        next: impl FnMut(bool) -> Option<(T, PathBuf)>,
        run: &RunState,
        done: impl FnMut(T, Checked),
    ) {
        if self.lanes() == WIDE {
            self.run_lanes::<WIDE, T>(next, run, done);
        } else {
            self.run_lanes::<LANES, T>(next, run, done);
        }
    }

    /// [`run`](Self::run) with `N` lanes (as many as the buffers).
    fn run_lanes<const N: usize, T>(
        &mut self,
        mut next: impl FnMut(bool) -> Option<(T, PathBuf)>,
        run: &RunState,
        mut done: impl FnMut(T, Checked),
    ) {
        let mut identities = self.identities.iter_mut();
        let identity_bufs: [&mut [u8]; N] =
            std::array::from_fn(|_| identities.next().map(Vec::as_mut_slice).unwrap_or_default());
        let mut batch = StreamBatch::<N>::new(identity_bufs);
        let mut lanes: [Option<InFlight<T>>; N] = std::array::from_fn(|_| None);
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
            let mut lengths = [0usize; N];
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
            let mut chunks: [&[u8]; N] = [&[]; N];
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
