//! `pack`, `unpack` and `fingerprint`: framing a raw payload with an identity, getting
//! the payload back out of a verified frame, and naming an identity.

use crate::cli::{FingerprintArgs, PackArgs, UnpackArgs};
use crate::fsutil::{self, Spooled};
use crate::io::{Checker, Outcome, RunState};
use crate::output::{self, JsonObject};
use crate::walk;
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::frame::{magic_name, HeadFields, HEADER_LEN, MIN_FRAME_PREFIX};
use membrane_frame::{
    ChunkedFrameWriter, Error, ErrorCode, IoSink, PayloadIdentity, ReadOptions, Sha256Digest, Sha256Hasher,
    StreamVerifier, WriteError, WriteOptions,
};
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Identity files are small; anything much larger is a mistake.
const IDENTITY_FILE_LIMIT: u64 = 16 << 20;
const CHUNK: usize = 1 << 20;

/// A failure of a command, already worded for stderr, with its exit status.
struct Failure {
    status: u8,
    message: String,
}

impl Failure {
    fn io(path: &Path, what: &str, err: &io::Error) -> Failure {
        Failure { status: EXIT_ERROR, message: format!("{}: {what}: {err}", path.display()) }
    }

    fn invalid(path: &Path, err: &Error) -> Failure {
        Failure { status: EXIT_INVALID, message: format!("{}: {}", path.display(), output::frame_error(err)) }
    }
}

fn report(result: Result<(), Failure>) -> u8 {
    match result {
        Ok(()) => EXIT_OK,
        Err(failure) => {
            output::complain_plain(&failure.message);
            failure.status
        }
    }
}

// ---- pack ----

pub fn run_pack(args: &PackArgs) -> u8 {
    report(pack(args))
}

fn pack(args: &PackArgs) -> Result<(), Failure> {
    let text = fsutil::read_limited(&args.identity, IDENTITY_FILE_LIMIT)
        .map_err(|err| Failure::io(&args.identity, "cannot read identity", &err))?;
    // A payload on standard input is copied beside OUT first: its length goes into the
    // head, before the payload.
    let spooled = if walk::is_stdin(&args.payload) {
        if walk::is_stdin(&args.identity) {
            return Err(Failure {
                status: EXIT_ERROR,
                message: "--identity and --payload cannot both be standard input (-)".into(),
            });
        }
        let dir = fsutil::parent_dir(&args.output);
        Some(
            Spooled::stdin(&dir)
                .map_err(|err| Failure::io(&dir, "cannot copy the payload from standard input into", &err))?,
        )
    } else {
        None
    };
    let payload_path = spooled.as_ref().map_or(args.payload.as_path(), Spooled::path);
    let mut payload =
        File::open(payload_path).map_err(|err| Failure::io(&args.payload, "cannot read payload", &err))?;
    let payload_len = payload.metadata().map_err(|err| Failure::io(&args.payload, "cannot read payload", &err))?.len();

    // With --fill-payload-hash, the payload is read twice: once for the digest that goes
    // into the head, once to write it. Memory stays at one buffer either way.
    let digest_hex = if args.fill_payload_hash {
        let digest =
            hash_reader(&mut payload).map_err(|err| Failure::io(&args.payload, "cannot read payload", &err))?;
        payload = File::open(payload_path).map_err(|err| Failure::io(&args.payload, "cannot read payload", &err))?;
        Some(digest.to_hex())
    } else {
        None
    };
    let filled_text;
    let parsed = match (PayloadIdentity::parse(&text), &digest_hex) {
        (Ok(identity), _) => identity,
        // The hash is about to be filled: a missing or empty payload_hash is expected.
        (Err(err), Some(_)) if err.code() == ErrorCode::IdentityField && err.field() == Some("payload_hash") => {
            filled_text = with_placeholder_hash(&text).ok_or_else(|| Failure::invalid(&args.identity, &err))?;
            PayloadIdentity::parse(&filled_text).map_err(|err| Failure::invalid(&args.identity, &err))?
        }
        (Err(err), None) if err.code() == ErrorCode::IdentityField && err.field() == Some("payload_hash") => {
            let mut failure = Failure::invalid(&args.identity, &err);
            failure.message.push_str(" (--fill-payload-hash sets it to the payload's SHA-256)");
            return Err(failure);
        }
        (Err(err), _) => return Err(Failure::invalid(&args.identity, &err)),
    };
    let identity = match &digest_hex {
        Some(hex) => parsed.with_payload_hash(hex.as_str()).map_err(|err| Failure::invalid(&args.identity, &err))?,
        None => parsed,
    };

    if !args.force && fs::symlink_metadata(&args.output).is_ok() {
        return Err(Failure {
            status: EXIT_ERROR,
            message: format!("{}: exists; nothing written (--force replaces it)", args.output.display()),
        });
    }
    let options = WriteOptions::new().aligned(args.align);
    // Set when the payload's digest turns out not to be payload_hash: the temporary file
    // is then thrown away instead of renamed over OUT.
    let mut hash_mismatch = false;
    let written = fsutil::replace_atomically(
        &args.output,
        None,
        |file| {
            let mut sink = BufWriter::with_capacity(CHUNK, file);
            let mut writer = ChunkedFrameWriter::begin_with(&identity, payload_len, IoSink(&mut sink), &options)
                .map_err(write_error)?;
            let mut buf = vec![0u8; CHUNK];
            loop {
                let n = match payload.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                };
                writer.write_payload(buf.get(..n).unwrap_or_default()).map_err(write_error)?;
            }
            let (outcome, _) = writer.finish().map_err(write_error)?;
            sink.flush()?;
            if !outcome.payload_hash_matches && !args.allow_hash_mismatch {
                hash_mismatch = true;
                return Err(io::Error::other("payload_hash does not match the payload"));
            }
            Ok(outcome)
        },
        |_| Ok(()),
    );
    let written = match written {
        Ok(written) => written,
        Err(_) if hash_mismatch => {
            return Err(Failure {
                status: EXIT_INVALID,
                message: format!(
                    "{}: payload_hash is not the SHA-256 of the payload, so the frame would fail the full \
                     level; nothing written (--fill-payload-hash sets it, --allow-hash-mismatch writes it anyway)",
                    args.identity.display()
                ),
            })
        }
        Err(err) => return Err(Failure::io(&args.output, "cannot write frame", &err)),
    };

    let payload_at = written.frame_len - payload_len - 8;
    output::say(format_args!(
        "wrote {}: {} bytes (payload {} bytes at offset {}), fingerprint {}",
        args.output.display(),
        written.frame_len,
        payload_len,
        payload_at,
        identity.fingerprint()
    ));
    if !written.payload_hash_matches {
        output::complain(
            &args.output,
            "warning: payload_hash is not the SHA-256 of the payload; the frame fails the full level \
             (written as asked by --allow-hash-mismatch)",
        );
    }
    Ok(())
}

fn write_error(err: WriteError<io::Error>) -> io::Error {
    match err {
        WriteError::Sink(err) => err,
        WriteError::Frame(err) if err.code() == ErrorCode::LengthMismatch => {
            io::Error::other(format!("the payload changed size while it was read ({err})"))
        }
        WriteError::Frame(err) => io::Error::other(err.to_string()),
    }
}

/// The identity text (already known to be strict JSON) with a placeholder
/// `payload_hash`, to be replaced by the payload's digest.
fn with_placeholder_hash(text: &[u8]) -> Option<Vec<u8>> {
    let mut object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(text).ok()?;
    object.insert("payload_hash".into(), serde_json::Value::from("-"));
    serde_json::to_vec(&object).ok()
}

fn hash_reader(reader: &mut impl Read) -> io::Result<Sha256Digest> {
    let mut hasher = Sha256Hasher::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(buf.get(..n).unwrap_or_default()),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(hasher.finish())
}

// ---- unpack ----

pub fn run_unpack(args: &UnpackArgs) -> u8 {
    report(unpack(args))
}

fn unpack(args: &UnpackArgs) -> Result<(), Failure> {
    let options = ReadOptions::new().level(args.level.to_library());
    let to_stdout = args.payload_out == Path::new("-");
    if to_stdout {
        // Nothing written to a pipe can be taken back: verify first, then copy.
        let mut checker = Checker::new(options.level, crate::cli::IoMode::Read, CHUNK);
        match checker.check(&args.file, &RunState::default()).outcome {
            Outcome::Valid(_) => {}
            Outcome::Invalid(err) => return Err(Failure::invalid(&args.file, &err)),
            Outcome::Unreadable(err) => return Err(Failure::io(&args.file, "cannot read", &err)),
        }
        let mut stdout = io::stdout().lock();
        let result = copy_payload(&args.file, &options, &mut stdout);
        return match result {
            Ok(_) => stdout.flush().map_err(|err| Failure::io(Path::new("-"), "cannot write", &err)),
            Err(failure) => Err(failure),
        };
    }
    let mut failure = None;
    let result = fsutil::replace_atomically(
        &args.payload_out,
        None,
        |file| {
            let mut sink = BufWriter::with_capacity(CHUNK, file);
            match copy_payload(&args.file, &options, &mut sink) {
                Ok(len) => {
                    sink.flush()?;
                    Ok(len)
                }
                Err(err) => {
                    failure = Some(err);
                    Err(io::Error::other("not written"))
                }
            }
        },
        |_| Ok(()),
    );
    match (result, failure) {
        (Ok(len), _) => {
            output::say(format_args!(
                "wrote {}: {len} payload bytes from {}",
                args.payload_out.display(),
                args.file.display()
            ));
            Ok(())
        }
        (Err(_), Some(failure)) => Err(failure),
        (Err(err), None) => Err(Failure::io(&args.payload_out, "cannot write payload", &err)),
    }
}

/// Stream the frame in `path` through a verifier, writing the payload bytes to `out`
/// as they pass; fails (after writing some bytes) if the frame does not verify.
fn copy_payload(path: &Path, options: &ReadOptions, out: &mut impl Write) -> Result<u64, Failure> {
    let read_error = |err: &io::Error| Failure::io(path, "cannot read", err);
    let mut file = File::open(path).map_err(|err| read_error(&err))?;
    // Where the payload is, as the head says; if the head is damaged the verifier
    // fails and whatever was written is thrown away.
    let (start, end) = payload_range(&mut file, options.identity_limit).map_err(|err| read_error(&err))?;
    let mut identity = vec![0u8; options.identity_limit as usize];
    let mut verifier = StreamVerifier::new(*options, &mut identity);
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(read_error(&err)),
        };
        let chunk = buf.get(..n).unwrap_or_default();
        verifier.feed(chunk).map_err(|err| Failure::invalid(path, &err))?;
        let (from, to) = (start.max(at), end.min(at + n as u64));
        if from < to {
            let slice = chunk.get((from - at) as usize..(to - at) as usize).unwrap_or_default();
            out.write_all(slice).map_err(|err| Failure::io(Path::new("output"), "cannot write", &err))?;
        }
        at += n as u64;
    }
    let frame = verifier.finish().map_err(|err| Failure::invalid(path, &err))?;
    Ok(frame.payload_len())
}

/// The payload's byte range according to the head (zeros where the file is short),
/// leaving the file positioned at its start. An identity longer than `identity_limit`
/// is not read (the verifier refuses such a frame anyway).
fn payload_range(file: &mut File, identity_limit: u32) -> io::Result<(u64, u64)> {
    let mut header = [0u8; MIN_FRAME_PREFIX];
    read_at(file, 0, &mut header)?;
    let identity_len = HeadFields::decode(&header).identity_len.unwrap_or(0).min(identity_limit);
    // The head with the payload length after the identity (zeros where the file ends).
    let mut head = vec![0u8; MIN_FRAME_PREFIX + identity_len as usize];
    read_at(file, 0, &mut head)?;
    let head = HeadFields::decode(&head);
    let start = head.payload_start().unwrap_or(MIN_FRAME_PREFIX as u64);
    file.seek(SeekFrom::Start(0))?;
    Ok((start, head.trailer_start().unwrap_or(u64::MAX)))
}

/// Read up to `buf.len()` bytes at `offset`; what the file does not have stays zero.
fn read_at(file: &mut File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

// ---- fingerprint ----

pub fn run_fingerprint(args: &FingerprintArgs) -> u8 {
    report(fingerprint(args))
}

fn fingerprint(args: &FingerprintArgs) -> Result<(), Failure> {
    let path = args.file.as_path();
    // An identity file, or a frame whose head holds one: a frame can be large, and only
    // its head is read (from standard input too).
    let text = fsutil::read_prefix(path, MIN_FRAME_PREFIX as u64 + IDENTITY_FILE_LIMIT)
        .map_err(|err| Failure::io(path, "cannot read", &err))?;
    let head = HeadFields::decode(&text);
    let (json, base) = match head.magic.and_then(magic_name) {
        Some(_) => (head.identity_json(&text).map_err(|err| Failure::invalid(path, &err))?, HEADER_LEN as u64),
        None if text.len() as u64 > IDENTITY_FILE_LIMIT => {
            let err = io::Error::new(io::ErrorKind::InvalidData, format!("larger than {IDENTITY_FILE_LIMIT} bytes"));
            return Err(Failure::io(path, "not a frame, and too large for an identity file", &err));
        }
        None => (text.as_slice(), 0),
    };
    let identity = PayloadIdentity::parse(json).map_err(|err| Failure::invalid(path, &err.shifted(base)))?;
    let fingerprint = identity.fingerprint().to_hex();
    let line = if args.json {
        JsonObject::new()
            .path(path)
            .field("fingerprint", fingerprint.as_str())
            .field("canonical", identity.is_canonical())
            .finish()
    } else {
        fingerprint.as_str().to_string()
    };
    let mut out = io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).map_err(|err| Failure::io(Path::new("-"), "cannot write", &err))
}
