//! Verifying one file with bounded memory.
//!
//! The default reads the file through a fixed 128 KiB buffer into the library's
//! `StreamVerifier`, so memory per worker is the buffer plus the identity limit,
//! whatever the frame size. Below the trailer level nothing past the head is needed:
//! the head is read and the rest of the file is accounted for by length only (see
//! [`Checker::check_streaming`]). `--io mmap` maps the whole file into the one-shot
//! reader, `--io mmap-window` maps 8 MiB windows into the streaming verifier; both exist
//! to measure the difference (docs/performance.md).

use crate::cli::IoMode;
use membrane_frame::{Error, Frame, PayloadIdentity, ReadOptions, Sha256Digest, StreamVerifier, VerifyLevel};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The read buffer per worker: 128 KiB measured fastest (it stays in the core's L2 cache
/// between the copy out of the page cache and the hash; docs/performance.md).
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
    /// Fingerprint of the identity (identity level and above).
    pub fingerprint: Option<String>,
    /// Whether the stored identity is canonical (identity level and above).
    pub canonical: Option<bool>,
    /// SHA-256 of the payload (trailer level and above).
    pub payload_digest: Option<Sha256Digest>,
}

impl ValidFrame {
    fn new(
        payload_len: u64,
        identity: Option<&PayloadIdentity<'_>>,
        payload_digest: Option<Sha256Digest>,
    ) -> ValidFrame {
        ValidFrame {
            payload_len,
            payload_digest,
            fingerprint: identity.map(|identity| identity.fingerprint().to_hex().to_string()),
            canonical: identity.map(PayloadIdentity::is_canonical),
        }
    }
}

/// The verdict and the file's length.
#[derive(Debug)]
pub struct Checked {
    pub outcome: Outcome,
    pub bytes: u64,
}

/// A worker's reusable state: the read buffer and the identity buffer.
#[derive(Debug)]
pub struct Checker {
    options: ReadOptions,
    mode: IoMode,
    buf: Vec<u8>,
    identity: Vec<u8>,
}

impl Checker {
    pub fn new(level: VerifyLevel, mode: IoMode, buffer_size: usize) -> Checker {
        let options = ReadOptions::new().level(level);
        let buffer_size = buffer_size.max(4096);
        let buf = if mode == IoMode::Read { vec![0u8; buffer_size] } else { Vec::new() };
        Checker { options, mode, buf, identity: vec![0u8; options.identity_limit as usize] }
    }

    /// Verify the file at `path`; `progress` grows by the bytes dealt with as they are.
    pub fn check(&mut self, path: &Path, progress: &AtomicU64) -> Checked {
        self.check_with_head(path, progress, None)
    }

    /// Verify the file at `path` as if its first bytes were `head` (a migration's dry
    /// run: what would the v5 reader say about the rewritten file?). Always streams.
    pub fn check_as_if(&mut self, path: &Path, head: &[u8]) -> Checked {
        let mode = std::mem::replace(&mut self.mode, IoMode::Read);
        if self.buf.is_empty() {
            self.buf = vec![0u8; READ_BUFFER];
        }
        let checked = self.check_with_head(path, &AtomicU64::new(0), Some(head));
        self.mode = mode;
        checked
    }

    fn check_with_head(&mut self, path: &Path, progress: &AtomicU64, head: Option<&[u8]>) -> Checked {
        let mut counted = 0u64;
        let (outcome, bytes) = match File::open(path).and_then(|file| {
            let meta = file.metadata()?;
            if !meta.is_file() {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
            }
            Ok((file, meta.len()))
        }) {
            Err(err) => (Outcome::Unreadable(err), 0),
            Ok((file, len)) => {
                let outcome = match self.mode {
                    IoMode::Read => self.check_streaming(file, len, progress, &mut counted, head.unwrap_or_default()),
                    IoMode::Mmap => self.check_mapped(&file),
                    IoMode::MmapWindow => self.check_mapped_windows(&file, len, progress, &mut counted),
                };
                (outcome, len)
            }
        };
        if bytes > counted {
            progress.fetch_add(bytes - counted, Ordering::Relaxed);
        }
        Checked { outcome, bytes }
    }

    /// Stream the file through the verifier. At the layout and identity levels only
    /// the head is read (an identity over the limit is streamed past, not stored); the verdict on the
    /// rest depends on its length alone (checks 10 and 11), so the verifier is told to
    /// skip that many bytes (`StreamVerifier::skip`).
    fn check_streaming(
        &mut self,
        mut file: File,
        len: u64,
        progress: &AtomicU64,
        counted: &mut u64,
        head: &[u8],
    ) -> Outcome {
        let hashes = self.options.level >= VerifyLevel::Trailer;
        let mut verifier = StreamVerifier::new(self.options, &mut self.identity);
        let mut received = 0u64;
        let mut stopped_early = false;
        loop {
            if !hashes && verifier.head_complete() {
                stopped_early = true;
                break;
            }
            let n = match file.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Outcome::Unreadable(err),
            };
            // Bytes of a replacement head that fall in this chunk.
            if let Some(replace) = usize::try_from(received).ok().and_then(|at| head.get(at..)) {
                for (slot, byte) in self.buf.iter_mut().take(n).zip(replace) {
                    *slot = *byte;
                }
            }
            received += n as u64;
            *counted += n as u64;
            progress.fetch_add(n as u64, Ordering::Relaxed);
            if let Err(err) = verifier.feed(self.buf.get(..n).unwrap_or(&[])) {
                return Outcome::Invalid(err);
            }
        }
        if stopped_early && received < len {
            if let Err(err) = verifier.skip(len - received) {
                return Outcome::Invalid(err);
            }
        }
        match verifier.finish() {
            Ok(frame) => Outcome::Valid(ValidFrame::new(frame.payload_len(), frame.identity(), frame.payload_digest())),
            Err(err) => Outcome::Invalid(err),
        }
    }

    /// Map the file window by window and stream the windows through the verifier:
    /// resident pages stay at one window per worker.
    #[allow(unsafe_code)]
    fn check_mapped_windows(&mut self, file: &File, len: u64, progress: &AtomicU64, counted: &mut u64) -> Outcome {
        const WINDOW: u64 = 8 << 20;
        let mut verifier = StreamVerifier::new(self.options, &mut self.identity);
        let mut offset = 0u64;
        while offset < len {
            let size = (len - offset).min(WINDOW) as usize;
            // SAFETY: as in `check_mapped`: read-only, private, and SIGBUS if the file
            // is truncated by another process while a window is mapped.
            let map = match unsafe { memmap2::MmapOptions::new().offset(offset).len(size).map(file) } {
                Ok(map) => map,
                Err(err) => return Outcome::Unreadable(err),
            };
            if let Err(err) = verifier.feed(&map) {
                return Outcome::Invalid(err);
            }
            offset += size as u64;
            *counted += size as u64;
            progress.fetch_add(size as u64, Ordering::Relaxed);
        }
        match verifier.finish() {
            Ok(frame) => Outcome::Valid(ValidFrame::new(frame.payload_len(), frame.identity(), frame.payload_digest())),
            Err(err) => Outcome::Invalid(err),
        }
    }

    #[allow(unsafe_code)]
    fn check_mapped(&self, file: &File) -> Outcome {
        // SAFETY: the mapping is read-only and private to this call, and the slice does
        // not outlive it. If another process truncates the file while it is mapped,
        // reading the lost pages raises SIGBUS; that is why `--io read` is the default
        // and this mode is for measurements.
        let map = match unsafe { memmap2::Mmap::map(file) } {
            Ok(map) => map,
            Err(err) => return Outcome::Unreadable(err),
        };
        match Frame::parse_with(&map, &self.options) {
            Ok((frame, _)) => {
                Outcome::Valid(ValidFrame::new(frame.payload().len() as u64, frame.identity(), frame.payload_digest()))
            }
            Err(err) => Outcome::Invalid(err),
        }
    }
}
