//! Verifying one file with bounded memory.
//!
//! The default reads the file through a fixed 128 KiB buffer into the library's
//! `StreamVerifier`, so memory per worker is the buffer plus the identity limit,
//! whatever the frame size. Below the trailer level nothing past the head is needed:
//! the head is read and the rest of the file is accounted for by length only (see
//! [`Checker::check_streaming`]). `--io mmap` maps the whole file into the one-shot
//! reader, to measure the difference (docs/performance.md). Files verified several at
//! a time per worker, the default at the hashing levels, go through [`crate::batch_io`].
//!
//! A file another process changes while it is read (truncated, grown, rewritten,
//! renamed over or removed) gets an `io` verdict, never the verdict on bytes that are no
//! longer what the file holds: its state at the open is compared with its state after
//! the last byte was read (the library's `FileState`).

use crate::cli::IoMode;
use crate::mapped::Window;
use crate::walk::is_stdin;
use membrane_frame::frame::FileState;
use membrane_frame::{Error, Frame, PayloadIdentity, ReadOptions, Sha256Digest, StreamVerifier, VerifyLevel};
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The read buffer per worker: 128 KiB measured fastest of 32 KiB to 1 MiB (it stays in
/// the core's L2 cache between the copy out of the page cache and the hash; AMD EPYC
/// Zen 4, `--buffer-size`, 2026-11-30).
pub const READ_BUFFER: usize = 128 << 10;

/// What verification said about a file.
#[derive(Debug)]
pub enum Outcome {
    /// The file holds exactly one frame that passed every check of the level.
    Valid(ValidFrame),
    /// The file is not a valid frame (a damaged frame, a foreign or empty file).
    Invalid(Error),
    /// The file could not be read.
    Unreadable(io::Error),
}

/// Facts about a valid frame.
#[derive(Debug, Clone)]
pub struct ValidFrame {
    pub payload_len: u64,
    /// Offset of the payload in the file: `22 + identity_len` (SPEC §1.5).
    pub payload_offset: u64,
    /// Spaces after a canonical identity (identity level and above).
    pub padding: Option<usize>,
    /// Fingerprint of the identity (identity level and above).
    pub fingerprint: Option<String>,
    /// Whether the stored identity is canonical (identity level and above).
    pub canonical: Option<bool>,
    /// SHA-256 of the payload (trailer level and above).
    pub payload_digest: Option<Sha256Digest>,
}

impl ValidFrame {
    pub(crate) fn new(
        payload_len: u64,
        payload_offset: u64,
        identity: Option<&PayloadIdentity<'_>>,
        payload_digest: Option<Sha256Digest>,
    ) -> ValidFrame {
        ValidFrame {
            payload_len,
            payload_offset,
            payload_digest,
            padding: identity.map(PayloadIdentity::padding),
            fingerprint: identity.map(|identity| identity.fingerprint().to_hex().to_string()),
            canonical: identity.map(PayloadIdentity::is_canonical),
        }
    }
}

/// The verdict, the file's length, and the work done on it.
#[derive(Debug)]
pub struct Checked {
    pub outcome: Outcome,
    /// The file's length (for standard input: the bytes that came in).
    pub size: u64,
    /// Bytes actually read (below the trailer level, just the head).
    pub bytes_read: u64,
    /// Payload bytes hashed.
    pub bytes_hashed: u64,
}

impl Checked {
    pub fn unreadable(error: io::Error) -> Checked {
        Checked { outcome: Outcome::Unreadable(error), size: 0, bytes_read: 0, bytes_hashed: 0 }
    }
}

/// A worker's reusable state: the read buffer and the identity buffer.
#[derive(Debug)]
pub struct Checker {
    options: ReadOptions,
    mode: IoMode,
    buf: ReadBuffer,
    identity: Vec<u8>,
}

/// A read buffer that starts on a page boundary. Where it starts matters: on an AMD
/// EPYC Zen 4 the kernel's copy out of the page cache into a buffer 16 bytes past a page
/// boundary — where `malloc` puts a fresh 128 KiB block — ran at a third of its speed,
/// and reading and hashing a file took 1.6x as long (2026-12-01).
#[derive(Debug, Default)]
pub(crate) struct ReadBuffer {
    backing: Vec<u8>,
    start: usize,
    len: usize,
}

impl ReadBuffer {
    const PAGE: usize = 4096;

    pub(crate) fn new(len: usize) -> ReadBuffer {
        let backing = vec![0u8; len + Self::PAGE];
        let start = (Self::PAGE - backing.as_ptr() as usize % Self::PAGE) % Self::PAGE;
        ReadBuffer { backing, start, len }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn get_mut(&mut self) -> &mut [u8] {
        self.backing.get_mut(self.start..self.start + self.len).unwrap_or_default()
    }
}

/// What the workers of one run share: the bytes read so far (for the progress line) and
/// the request to stop (the output was closed: a file half verified is abandoned).
#[derive(Debug, Default)]
pub struct RunState {
    pub bytes_read: AtomicU64,
    pub stop: AtomicBool,
}

impl RunState {
    pub(crate) fn read(&self, n: u64) {
        self.bytes_read.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

pub(crate) fn stopped() -> Outcome {
    Outcome::Unreadable(io::Error::new(io::ErrorKind::Interrupted, "stopped before the end"))
}

/// Open `path` for reading, refusing anything but a regular file; with its state at the
/// open, for [`unless_changed`].
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok((file, meta))
}

/// The verdict on a file that was read to the end, unless it changed since it was
/// opened: then an `io` verdict, never the verdict on bytes the file no longer holds.
pub(crate) fn unless_changed(outcome: Outcome, file: &File, opened: &Metadata, path: &Path) -> Outcome {
    match outcome {
        Outcome::Unreadable(error) => Outcome::Unreadable(error),
        judged => change_since_open(file, opened, path).map_or(judged, Outcome::Unreadable),
    }
}

/// The verdict on a file whose memory map faulted while it was read ([`Window::lost`]):
/// the change another process made to it, worded as [`unless_changed`] words it, or
/// else a read error of the device.
pub(crate) fn lost_under_map(file: &File, opened: &Metadata, path: &Path) -> Outcome {
    Outcome::Unreadable(
        change_since_open(file, opened, path)
            .unwrap_or_else(|| io::Error::other("a page of it could not be read under its memory map (an I/O error)")),
    )
}

/// How the file changed since it was opened, as the `io` error that reports it.
fn change_since_open(file: &File, opened: &Metadata, path: &Path) -> Option<io::Error> {
    let change = FileState::of(opened).change_since(file, path)?;
    Some(io::Error::other(format!("changed while it was verified: {change}")))
}

/// The streamed verifier's verdict on everything it was fed.
fn verdict(verifier: StreamVerifier<'_>) -> Outcome {
    match verifier.finish() {
        Ok(frame) => Outcome::Valid(ValidFrame::new(
            frame.payload_len(),
            frame.payload_offset(),
            frame.identity(),
            frame.payload_digest(),
        )),
        Err(err) => Outcome::Invalid(err),
    }
}

/// What one streamed read did.
#[derive(Debug, Default)]
struct Work {
    read: u64,
    hashed: u64,
}

impl Checker {
    pub fn new(level: VerifyLevel, mode: IoMode, buffer_size: usize) -> Checker {
        let options = ReadOptions::new().level(level);
        let buffer_size = buffer_size.max(4096);
        let buf = if mode == IoMode::Mmap { ReadBuffer::default() } else { ReadBuffer::new(buffer_size) };
        Checker { options, mode, buf, identity: vec![0u8; options.identity_limit as usize] }
    }

    /// Verify the file at `path` (`-`: standard input, streamed), counting the bytes read
    /// into `run` as they are.
    pub fn check(&mut self, path: &Path, run: &RunState) -> Checked {
        if is_stdin(path) {
            self.ensure_read_buffer();
            let mut work = Work::default();
            let outcome = self.check_streaming(io::stdin().lock(), None, run, &mut work, &[]);
            return Checked { outcome, size: work.read, bytes_read: work.read, bytes_hashed: work.hashed };
        }
        self.check_with_head(path, run, None)
    }

    /// Verify the file at `path` as if its first bytes were `head` (a migration's dry
    /// run: what would the v5 reader say about the rewritten file?). Always streams.
    pub fn check_as_if(&mut self, path: &Path, head: &[u8]) -> Checked {
        let mode = std::mem::replace(&mut self.mode, IoMode::Read);
        self.ensure_read_buffer();
        let checked = self.check_with_head(path, &RunState::default(), Some(head));
        self.mode = mode;
        checked
    }

    /// The streaming paths need the read buffer, which `--io mmap` does not allocate.
    fn ensure_read_buffer(&mut self) {
        if self.buf.is_empty() {
            self.buf = ReadBuffer::new(READ_BUFFER);
        }
    }

    fn check_with_head(&mut self, path: &Path, run: &RunState, head: Option<&[u8]>) -> Checked {
        let (file, opened) = match open_regular(path) {
            Ok(opened) => opened,
            Err(error) => return Checked::unreadable(error),
        };
        let size = opened.len();
        let mut work = Work::default();
        let outcome = match self.mode {
            IoMode::Window | IoMode::Read => {
                self.check_streaming(&file, Some(size), run, &mut work, head.unwrap_or_default())
            }
            IoMode::Mmap => self.check_mapped(&file, &opened, path, run, &mut work),
        };
        let outcome = unless_changed(outcome, &file, &opened, path);
        Checked { outcome, size, bytes_read: work.read, bytes_hashed: work.hashed }
    }

    /// Stream `input` through the verifier. Below the trailer level only the head is
    /// read when the length is known (an identity over the limit is streamed past, not
    /// stored): the verdict on the rest depends on its length alone (checks 10 and 11),
    /// so the verifier is told to skip that many bytes (`StreamVerifier::skip`). A
    /// stream of unknown length is read to its end and skipped chunk by chunk.
    fn check_streaming(
        &mut self,
        mut input: impl Read,
        len: Option<u64>,
        run: &RunState,
        work: &mut Work,
        head: &[u8],
    ) -> Outcome {
        let hashes = self.options.level >= VerifyLevel::Trailer;
        let mut verifier = StreamVerifier::new(self.options, &mut self.identity);
        loop {
            let past_head = !hashes && verifier.head_complete();
            if let (true, Some(len)) = (past_head, len) {
                if let Err(err) = verifier.skip(len.saturating_sub(work.read)) {
                    return Outcome::Invalid(err);
                }
                break;
            }
            if run.stopped() {
                return stopped();
            }
            let buf = self.buf.get_mut();
            let n = match input.read(buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Outcome::Unreadable(err),
            };
            // Bytes of a replacement head that fall in this chunk.
            if let Some(replace) = usize::try_from(work.read).ok().and_then(|at| head.get(at..)) {
                for (slot, byte) in buf.iter_mut().take(n).zip(replace) {
                    *slot = *byte;
                }
            }
            work.read += n as u64;
            run.read(n as u64);
            let fed = if past_head { verifier.skip(n as u64) } else { verifier.feed(buf.get(..n).unwrap_or(&[])) };
            work.hashed = verifier.hashed();
            if let Err(err) = fed {
                return Outcome::Invalid(err);
            }
        }
        verdict(verifier)
    }

    /// The whole file mapped and read in one piece: the one-shot reader's verdict, or
    /// an `io` verdict if the file shrank under the map ([`Window`]).
    fn check_mapped(&self, file: &File, opened: &Metadata, path: &Path, run: &RunState, work: &mut Work) -> Outcome {
        let len = opened.len();
        let map = match usize::try_from(len) {
            Ok(0) => None,
            Ok(len) => match Window::map(file, 0, len) {
                Ok(map) => Some(map),
                Err(err) => return Outcome::Unreadable(err),
            },
            Err(_) => return Outcome::Unreadable(io::Error::other("too large to map")),
        };
        let bytes = map.as_ref().map_or(&[][..], Window::bytes);
        // Counted as mapped (below the trailer level the reader touches only the head;
        // this mode is for measurements at the trailer level).
        work.read = len;
        run.read(len);
        let outcome = match Frame::parse_with(bytes, &self.options) {
            Ok((frame, _)) => {
                if self.options.level >= VerifyLevel::Trailer {
                    work.hashed = frame.payload().len() as u64;
                }
                Outcome::Valid(ValidFrame::new(
                    frame.payload().len() as u64,
                    frame.payload_offset() as u64,
                    frame.identity(),
                    frame.payload_digest(),
                ))
            }
            Err(err) => Outcome::Invalid(err),
        };
        match map {
            Some(map) if map.lost() => lost_under_map(file, opened, path),
            _ => outcome,
        }
    }
}
