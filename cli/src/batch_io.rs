//! Verifying several files at once on one worker, at the hashing levels: each of the
//! library's `StreamBatch` lanes takes its own file, and the chunks of one round are
//! verified together, their payloads hashed side by side (several SHA-256 streams per
//! core). A lane maps its file 1 MiB at a time ([`Window`]), or, for a small file, a
//! file the system will not map and under `--io read`, reads it through its own buffer.
//! Memory per worker stays a few fixed buffers and windows, whatever the frame size;
//! every verdict is the one-file path's ([`crate::io`]): the library gives the one-frame
//! verifier's verdict on the same bytes, and a file that changes while it is read —
//! even one truncated under its map — is an `io` verdict here as there.

use crate::io::{
    lost_under_map, open_regular, stopped, unless_changed, Checked, Outcome, ReadBuffer, RunState, ValidFrame,
};
use crate::mapped::Window;
use membrane_frame::batch_hash::{Kernel, LANES};
use membrane_frame::frame::StreamBatch;
use membrane_frame::{ReadOptions, VerifyLevel};
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

/// A worker's lanes: a read buffer and an identity buffer each. As many lanes as the
/// library's kernel steps together: [`LANES`] for SHA-NI, [`WIDE`] for AVX-512.
#[derive(Debug)]
pub struct BatchChecker {
    options: ReadOptions,
    /// Whether lanes map their files (`--io window`, the default) or read them.
    maps: bool,
    buffers: Vec<ReadBuffer>,
    identities: Vec<Vec<u8>>,
}

/// The widest kernel's lanes.
const WIDE: usize = Kernel::Avx512X16.width();

/// How much of its file a lane maps at a time. Mapping skips the copy out of the page
/// cache that reading makes (a third of a worker's time with sixteen AVX-512 lanes);
/// larger windows map faster still, but what is mapped counts as resident, so the
/// window stays small. 2 GiB of 16 MiB frames, `verify -j 2`, warm cache, Intel Xeon VM
/// (family 6 model 167), 2026-12-05: read 0.47 s; windows of 1 MiB 0.41 s, 2 MiB 0.395 s,
/// 16 MiB 0.38 s, with peak RSS 7, 38, 71 and 529 MiB.
const WINDOW: u64 = 1 << 20;
// A lane maps its windows at multiples of WINDOW, and mmap takes offsets in whole pages:
// so WINDOW is a multiple of every page size Linux uses (4 KiB; 16 and 64 KiB on
// aarch64, 64 KiB on ppc64).
const _: () = assert!(WINDOW.is_multiple_of(64 << 10));

/// Files smaller than this are read, not mapped. A map costs a system call, page faults
/// and an unmap that takes the process's memory-map lock and stops the other workers'
/// cores to flush their TLBs, so it pays only on large files. Mapped against read, the
/// same machine, 512 MiB of each frame size: 64 KiB 2.1× slower, 256 KiB 1.2×, 1 MiB
/// 1.01×, 2 MiB 0.96×, 4 MiB 0.92×, 16 MiB 0.88×.
const MAP_FROM: u64 = 2 * WINDOW;

/// A file in a lane: what the caller tagged it with, and its reading so far.
struct InFlight<T> {
    tag: T,
    path: PathBuf,
    file: File,
    opened: Metadata,
    read: u64,
    /// Set while the lane maps its file (with no window yet before the first is
    /// mapped); `None` while it reads the file through its buffer.
    mapped: Option<Mapped>,
    /// Set once the file is done.
    ended: Option<Ended>,
}

/// A lane's current window: it covers the file from `from`.
struct Mapped {
    window: Option<Window>,
    from: u64,
}

/// Why a file leaves its lane.
enum Ended {
    /// Read to its end: the verdict is the verifier's on all of it.
    AtEnd,
    /// Refused, unreadable or abandoned before its end: this is the verdict.
    Early(Outcome),
    /// A read of its window faulted: the file shrank under the map, or the device
    /// failed. The verdict is `io`, naming the change if the file changed.
    Lost,
}

impl<T> InFlight<T> {
    /// Take the lane's next chunk, from its window or else read into `buffer`: its
    /// length, 0 at the end of the file.
    fn advance(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.mapped.is_some() {
            if let Some(length) = self.step_window(buffer.len())? {
                return Ok(length);
            }
        }
        self.file.read(buffer)
    }

    /// Step a mapped lane on by up to `chunk` bytes, mapping the next window when the
    /// current one is used up: the bytes stepped over (0 at the file's length as
    /// opened). `None` when a window cannot be mapped: the lane reads from there on.
    fn step_window(&mut self, chunk: usize) -> io::Result<Option<usize>> {
        let size = self.opened.len();
        let Some(mapped) = &mut self.mapped else { return Ok(None) };
        if self.read >= size {
            return Ok(Some(0));
        }
        let used_up =
            mapped.window.as_ref().is_none_or(|window| self.read >= mapped.from + window.bytes().len() as u64);
        if used_up {
            // The old window goes first: a lane never holds two.
            mapped.window = None;
            let len = (size - self.read).min(WINDOW) as usize;
            match Window::map(&self.file, self.read, len) {
                Ok(window) => *mapped = Mapped { window: Some(window), from: self.read },
                Err(_) => {
                    self.mapped = None;
                    self.file.seek(SeekFrom::Start(self.read))?;
                    return Ok(None);
                }
            }
        }
        let Some(Mapped { window: Some(window), from }) = &self.mapped else { return Ok(None) };
        let left = window.bytes().len() - (self.read - from) as usize;
        Ok(Some(left.min(chunk)))
    }

    /// The `length` bytes of the window that the last [`advance`](Self::advance) stepped over.
    fn mapped_chunk(&self, length: usize) -> &[u8] {
        let Some(Mapped { window: Some(window), from }) = &self.mapped else { return &[] };
        let end = (self.read - from) as usize;
        window.bytes().get(end.saturating_sub(length)..end).unwrap_or_default()
    }

    /// Whether a read of the lane's window faulted.
    fn lost(&self) -> bool {
        matches!(&self.mapped, Some(Mapped { window: Some(window), .. }) if window.lost())
    }
}

impl BatchChecker {
    /// Whether this path is worth it: only the hashing levels read the whole file.
    pub fn applies(level: VerifyLevel) -> bool {
        level >= VerifyLevel::Trailer
    }

    /// `maps`: lanes map their files where they can (else they read them).
    pub fn new(level: VerifyLevel, buffer_size: usize, maps: bool) -> BatchChecker {
        let options = ReadOptions::new().level(level);
        let lanes = Kernel::detect().in_flight();
        // Sixteen lanes read half as much each, so their buffers stay in the core's L2
        // beside the hash (2 GiB of 16 MiB frames, `-j 2`, best of 5 on an Intel Xeon with
        // a 2 MiB L2: 0.489 s with 128 KiB a lane, 0.461 s with 64 KiB, 0.462 s with 32 KiB).
        let buffer_size = if lanes == WIDE { buffer_size / 2 } else { buffer_size }.max(4096);
        BatchChecker {
            options,
            maps,
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
                            let mapped =
                                (self.maps && opened.len() >= MAP_FROM).then_some(Mapped { window: None, from: 0 });
                            *slot = Some(InFlight { tag, path, file, opened, read: 0, mapped, ended: None });
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
                match file.advance(buffer.get_mut()) {
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
            for (((chunk, buffer), length), slot) in
                chunks.iter_mut().zip(self.buffers.iter_mut()).zip(lengths).zip(&lanes)
            {
                *chunk = match slot {
                    Some(file) if file.mapped.is_some() => file.mapped_chunk(length),
                    _ => buffer.get_mut().get(..length).unwrap_or_default(),
                };
            }
            let statuses = batch.feed(chunks);
            for (lane, (slot, status)) in lanes.iter_mut().zip(statuses).enumerate() {
                let Some(file) = slot else { continue };
                if file.lost() && !matches!(file.ended, Some(Ended::Early(_))) {
                    file.ended = Some(Ended::Lost);
                }
                if let (Some(Err(err)), None) = (status, &file.ended) {
                    file.ended = Some(Ended::Early(Outcome::Invalid(err)));
                }
                let Some(ended) = file.ended.take() else { continue };
                let hashed = batch.verifier(lane).map_or(0, |verifier| verifier.hashed());
                // The lane is freed whatever the reason the file ended.
                let verdict = batch.finish(lane);
                let outcome = match (ended, verdict) {
                    (Ended::AtEnd, Ok(frame)) => Outcome::Valid(ValidFrame::new(
                        frame.payload_len(),
                        frame.payload_offset(),
                        frame.identity(),
                        frame.payload_digest(),
                    )),
                    (Ended::AtEnd, Err(err)) => Outcome::Invalid(err),
                    (Ended::Early(outcome), _) => outcome,
                    (Ended::Lost, _) => lost_under_map(&file.file, &file.opened, &file.path),
                };
                let Some(file) = slot.take() else { continue };
                let outcome = unless_changed(outcome, &file.file, &file.opened, &file.path);
                let size = file.opened.len();
                done(file.tag, Checked { outcome, size, bytes_read: file.read, bytes_hashed: hashed });
            }
        }
    }
}
