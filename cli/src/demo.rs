//! `demo`: write a corpus of realistic synthetic KV-cache frames — a few models,
//! shapes and dtypes, plausible value distributions, some files deliberately damaged,
//! two legacy frames and two files that are not frames at all — then verify it and
//! check that every verdict is the one the generator intended.
//!
//! With `--frames N --frame-size SIZE` it writes a bulk corpus of N frames instead
//! (for benchmarks), streaming each payload so memory stays small whatever the size.

use crate::cli::{DemoArgs, IoMode};
use crate::fsutil::TempDir;
use crate::output;
use crate::verify::{self, Settings};
use crate::walk::Order;
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::frame::HeadFields;
use membrane_frame::{
    encode_frame, ChunkedFrameWriter, Dtype, IdentityValues, InclusiveRange, IoSink, PayloadIdentity, Sha256Digest,
    Sha256Hasher,
};
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// A line of the demo's narrative: standard output, or standard error when standard
/// output carries JSON lines. Write errors (a closed pipe) are ignored.
macro_rules! say {
    ($json:expr, $($arg:tt)*) => {{
        let line = format!($($arg)*);
        if $json {
            let _ = writeln!(io::stderr(), "{line}");
        } else {
            let _ = writeln!(io::stdout(), "{line}");
        }
    }};
}

/// One layer block of a model's KV cache: shape `[2 (K and V), layers, kv_heads, tokens, head_dim]`.
#[derive(Debug, Clone, Copy)]
struct Block {
    model: &'static str,
    dtype: Dtype,
    layers: (i64, i64),
    kv_heads: i64,
    tokens: i64,
    head_dim: i64,
}

const BLOCKS: &[Block] = &[
    Block { model: "llama-3-8b", dtype: Dtype::Float16, layers: (0, 3), kv_heads: 8, tokens: 128, head_dim: 128 },
    Block { model: "llama-3-8b", dtype: Dtype::Bfloat16, layers: (4, 7), kv_heads: 8, tokens: 64, head_dim: 128 },
    Block { model: "mistral-7b", dtype: Dtype::Fp8E4m3, layers: (0, 7), kv_heads: 8, tokens: 64, head_dim: 128 },
    Block { model: "qwen2-1.5b", dtype: Dtype::Float32, layers: (0, 1), kv_heads: 2, tokens: 256, head_dim: 128 },
    Block { model: "tinyllama-1.1b", dtype: Dtype::Int8, layers: (10, 10), kv_heads: 4, tokens: 256, head_dim: 64 },
    Block { model: "phi-3-mini", dtype: Dtype::Nf4, layers: (0, 7), kv_heads: 32, tokens: 64, head_dim: 96 },
];

impl Block {
    fn layer_count(&self) -> i64 {
        self.layers.1 - self.layers.0 + 1
    }

    fn shape(&self) -> [i64; 5] {
        [2, self.layer_count(), self.kv_heads, self.tokens, self.head_dim]
    }

    fn tensor_bytes(&self) -> u64 {
        let elements: i64 = self.shape().iter().product();
        (elements.unsigned_abs() * u64::from(self.dtype.bits())).div_ceil(8)
    }

    fn file_stem(&self) -> String {
        let short = match self.dtype {
            Dtype::Float16 => "f16",
            Dtype::Bfloat16 => "bf16",
            Dtype::Float32 => "f32",
            Dtype::Fp8E4m3 => "fp8",
            Dtype::Int8 => "int8",
            Dtype::Nf4 => "nf4",
            other => other.name(),
        };
        format!("layers-{:02}-{:02}.{short}", self.layers.0, self.layers.1)
    }

    /// The same block with as many tokens as fit `payload_bytes`.
    fn sized_for(&self, payload_bytes: u64) -> Block {
        let per_token =
            (2 * self.layer_count() * self.kv_heads * self.head_dim).unsigned_abs() * u64::from(self.dtype.bits());
        let tokens = (payload_bytes * 8 / per_token.max(1)).max(1);
        Block { tokens: i64::try_from(tokens).unwrap_or(i64::MAX), ..*self }
    }

    fn identity<'a>(
        &'a self,
        payload_hash: &'a str,
        shape: &'a [i64],
    ) -> Result<PayloadIdentity<'a>, membrane_frame::Error> {
        IdentityValues {
            payload_hash,
            model_id: self.model,
            model_revision: "main",
            tokenizer_name: self.model,
            tokenizer_revision: "main",
            layer_range: InclusiveRange::new(self.layers.0, self.layers.1),
            head_range: InclusiveRange::ALL_HEADS,
            token_span: InclusiveRange::new(0, self.tokens - 1),
            dtype: self.dtype,
            shape,
        }
        .build()
    }
}

/// Deterministic payload bytes that look like a KV cache of the dtype: small floats
/// of both signs for the float types, uniform bytes for the 8- and 4-bit ones.
#[derive(Debug, Clone)]
struct Values {
    state: u64,
    dtype: Dtype,
}

impl Values {
    fn new(seed: u64, dtype: Dtype) -> Values {
        Values { state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, dtype }
    }

    fn next_word(&mut self) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let x = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        match self.dtype {
            // sign, exponent 12..13, random mantissa: ±[0.125, 0.5)
            Dtype::Float16 => (x & 0x87FF_87FF_87FF_87FF) | 0x3000_3000_3000_3000,
            // sign, exponent 124..125, random mantissa: ±[0.125, 0.5)
            Dtype::Bfloat16 => (x & 0x80FF_80FF_80FF_80FF) | 0x3E00_3E00_3E00_3E00,
            Dtype::Float32 => (x & 0x80FF_FFFF_80FF_FFFF) | 0x3E00_0000_3E00_0000,
            Dtype::Float64 => (x & 0x801F_FFFF_FFFF_FFFF) | 0x3FC0_0000_0000_0000,
            _ => x,
        }
    }

    fn fill(&mut self, out: &mut [u8]) {
        let mut words = out.chunks_exact_mut(8);
        for word in &mut words {
            word.copy_from_slice(&self.next_word().to_le_bytes());
        }
        let tail = words.into_remainder();
        let last = self.next_word().to_le_bytes();
        tail.copy_from_slice(last.get(..tail.len()).unwrap_or_default());
    }

    fn bytes(mut self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        self.fill(&mut out);
        out
    }
}

/// A frame of `payload` with an identity made from `block` (payload_hash = its digest).
fn frame_for(block: &Block, payload: &[u8]) -> io::Result<Vec<u8>> {
    let hex = Sha256Digest::of(payload).to_hex();
    let shape = block.shape();
    let identity = block.identity(hex.as_str(), &shape).map_err(io::Error::other)?;
    let mut out = vec![0u8; payload.len() + 4096];
    let len = encode_frame(&identity, payload, &mut out).map_err(io::Error::other)?;
    out.truncate(len);
    Ok(out)
}

/// A frame with an arbitrary identity text (for non-canonical and broken identities).
fn raw_frame(identity_text: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0xC0, 0xDE, 0x01, 0x05, 0x05, 0x00, 0, 0, 0, 0];
    out.extend_from_slice(&u32::try_from(identity_text.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(identity_text);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&Sha256Digest::of(payload).trailer());
    out
}

fn identity_text(frame: &[u8]) -> &[u8] {
    HeadFields::decode(frame).identity_json(frame).unwrap_or_default()
}

fn payload_of(frame: &[u8]) -> &[u8] {
    let start = HeadFields::decode(frame).payload_start().and_then(|start| usize::try_from(start).ok()).unwrap_or(0);
    frame.get(start..frame.len().saturating_sub(8)).unwrap_or_default()
}

/// The sample corpus: (relative path, bytes, code expected at the full level).
fn sample_corpus() -> io::Result<Vec<(PathBuf, Vec<u8>, &'static str)>> {
    let mut files = Vec::new();
    let mut frames = Vec::new();
    for (seed, block) in BLOCKS.iter().enumerate() {
        let payload = Values::new(seed as u64 + 1, block.dtype).bytes(block.tensor_bytes() as usize);
        let frame = frame_for(block, &payload)?;
        let dir = PathBuf::from(block.model);
        files.push((dir.join(format!("{}.frame", block.file_stem())), frame.clone(), "ok"));
        frames.push((dir, block, frame));
    }
    let damaged = |index: usize, what: &str| -> (PathBuf, &Block, Vec<u8>) {
        let (dir, block, frame) = frames[index % frames.len()].clone();
        (dir.join(format!("{}.{what}.frame", block.file_stem())), block, frame)
    };

    // A valid frame whose identity is spelled with spaces in declaration order: valid, not canonical.
    {
        let (path, block, frame) = damaged(5, "pretty-identity");
        let payload = payload_of(&frame);
        let hex = Sha256Digest::of(payload).to_hex();
        let shape = block.shape();
        let identity = block.identity(hex.as_str(), &shape).map_err(io::Error::other)?;
        let mut text = Vec::new();
        identity.write_declaration_order(&mut IoSink(&mut text))?;
        files.push((path, raw_frame(&text, payload), "ok"));
    }
    {
        let (path, _, mut frame) = damaged(0, "bitflip");
        let at = frame.len() / 2;
        if let Some(byte) = frame.get_mut(at) {
            *byte ^= 0x10;
        }
        files.push((path, frame, "trailer_mismatch"));
    }
    {
        let (path, _, frame) = damaged(1, "truncated");
        let cut = frame.len() - frame.len() / 3;
        files.push((path, frame.get(..cut).unwrap_or_default().to_vec(), "payload_overrun"));
    }
    {
        let (path, _, mut frame) = damaged(2, "trailing-junk");
        frame.extend_from_slice(b"\n-- appended by a careless copy --\n");
        files.push((path, frame, "trailing_bytes"));
    }
    {
        let (path, block, frame) = damaged(3, "stale-payload-hash");
        // payload_hash names an older payload: fine at the trailer level, caught at the full level.
        let payload = payload_of(&frame);
        let stale = Sha256Digest::of(b"an earlier payload").to_hex();
        let shape = block.shape();
        let identity = block.identity(stale.as_str(), &shape).map_err(io::Error::other)?;
        let mut out = vec![0u8; frame.len() + 64];
        let len = encode_frame(&identity, payload, &mut out).map_err(io::Error::other)?;
        out.truncate(len);
        files.push((path, out, "payload_hash_mismatch"));
    }
    {
        let (path, _, mut frame) = damaged(4, "reserved-nonzero");
        if let Some(byte) = frame.get_mut(6) {
            *byte = 1;
        }
        files.push((path, frame, "reserved_nonzero"));
    }
    {
        let (path, _, frame) = damaged(0, "identity-trailing-comma");
        let mut text = identity_text(&frame).to_vec();
        text.pop();
        text.extend_from_slice(b",}");
        files.push((path, raw_frame(&text, payload_of(&frame)), "identity_json"));
    }
    {
        let (path, block, frame) = damaged(1, "reversed-layer-range");
        let text = String::from_utf8_lossy(identity_text(&frame)).into_owned();
        let (start, end) = block.layers;
        let text =
            text.replace(&format!("\"layer_range\":[{start},{end}]"), &format!("\"layer_range\":[{end},{start}]"));
        files.push((path, raw_frame(text.as_bytes(), payload_of(&frame)), "identity_field"));
    }
    {
        let (path, _, mut frame) = damaged(2, "identity-len-overrun");
        if let Some(field) = frame.get_mut(10..14) {
            field.copy_from_slice(&0x00FF_FFFFu32.to_le_bytes());
        }
        files.push((path, frame, "identity_overrun"));
    }
    for (index, version) in [(3usize, 4u8), (4, 2)] {
        let (_, block, mut frame) = damaged(index, "");
        if let Some(head) = frame.get_mut(3..5) {
            head.copy_from_slice(&[version, version]);
        }
        let path = PathBuf::from("legacy").join(format!("{}-{}.v{version}.blob", block.model, block.file_stem()));
        files.push((path, frame, "legacy_frame"));
    }
    files.push((PathBuf::from("incoming").join("upload.partial"), Vec::new(), "too_short"));
    files.push((
        PathBuf::from("incoming").join("NOTES.txt"),
        b"KV fragments for the nightly eval run; see the runbook.\n".to_vec(),
        "bad_magic",
    ));
    Ok(files)
}

pub fn run(args: &DemoArgs) -> u8 {
    let mut temp = None;
    let dir = match &args.out {
        Some(dir) => {
            if let Err(err) = fs::create_dir_all(dir) {
                output::complain(dir, format_args!("cannot create directory: {err}"));
                return EXIT_ERROR;
            }
            // The corpus is verified as a whole: files of the user's would mix with it.
            match fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
                Ok(false) => {}
                Ok(true) => {
                    output::complain(dir, "is not empty; the demo writes into a new or empty directory");
                    return EXIT_ERROR;
                }
                Err(err) => {
                    output::complain(dir, format_args!("cannot read directory: {err}"));
                    return EXIT_ERROR;
                }
            }
            dir.clone()
        }
        None => match TempDir::new("membrane-demo") {
            Ok(mut dir) => {
                if args.keep {
                    dir.keep();
                }
                let path = dir.path().to_path_buf();
                temp = Some(dir);
                path
            }
            Err(err) => {
                output::complain_plain(format_args!("cannot create a temporary directory: {err}"));
                return EXIT_ERROR;
            }
        },
    };
    let status = match (args.frames, args.frame_size) {
        (Some(frames), Some(size)) => bulk(args, &dir, frames, size),
        _ => sample(args, &dir),
    };
    if let Some(temp) = temp {
        if args.keep {
            say!(args.json, "kept {}", dir.display());
        } else {
            drop(temp);
            say!(args.json, "removed {} (keep the corpus with --keep or --out DIR)", dir.display());
        }
    }
    status
}

fn sample(args: &DemoArgs, dir: &Path) -> u8 {
    let files = match sample_corpus() {
        Ok(files) => files,
        Err(err) => {
            output::complain_plain(format_args!("cannot build the sample corpus: {err}"));
            return EXIT_ERROR;
        }
    };
    let mut expected = BTreeMap::new();
    let mut total = 0u64;
    for (relative, bytes, code) in &files {
        let path = dir.join(relative);
        let written = path.parent().map_or(Ok(()), fs::create_dir_all).and_then(|()| fs::write(&path, bytes));
        if let Err(err) = written {
            output::complain(&path, format_args!("cannot write: {err}"));
            return EXIT_ERROR;
        }
        total += bytes.len() as u64;
        expected.insert(path, *code);
    }
    let damaged = files.iter().filter(|(_, _, code)| *code != "ok").count();
    say!(
        args.json,
        "wrote {} files ({}) to {}: {} valid frames of {} models, {} damaged, legacy or foreign files",
        files.len(),
        output::bytes(total),
        dir.display(),
        files.len() - damaged,
        BLOCKS.iter().map(|b| b.model).collect::<std::collections::BTreeSet<_>>().len(),
        damaged,
    );
    if args.no_verify {
        return EXIT_OK;
    }
    say!(args.json, "verifying: membrane-frame verify --level {} {}\n", args.level.to_library().name(), dir.display());
    let _ = io::stdout().flush();
    let (summary, verdicts) = verify_dir(args, dir);
    if summary.output != verify::OutputState::Open {
        return EXIT_ERROR;
    }
    let mut surprises = 0;
    for verdict in &verdicts {
        let wanted = expected.get(&verdict.path).copied().unwrap_or("(not written by the demo)");
        if wanted != verdict.code {
            surprises += 1;
            output::complain(&verdict.path, format_args!("expected {wanted}, verify said {}", verdict.code));
        }
    }
    if surprises == 0 && verdicts.len() == expected.len() {
        say!(args.json, "\nevery verdict is the one the generator intended ({} files)", verdicts.len());
        EXIT_OK
    } else {
        say!(args.json, "\n{surprises} verdicts differ from what the generator intended");
        EXIT_INVALID
    }
}

fn verify_dir(args: &DemoArgs, dir: &Path) -> (verify::Summary, Vec<verify::Verdict>) {
    let settings = Settings {
        level: args.level.to_library(),
        json: args.json,
        verbose: false,
        jobs: verify::default_jobs(),
        progress: None,
        io: IoMode::Window,
        buffer_size: crate::io::READ_BUFFER,
        display_root: (!args.json).then(|| dir.to_path_buf()),
        quiet: false,
        order: Order::Name,
        allow_empty: false,
        keep_verdicts: true,
    };
    verify::verify_paths(&[dir.to_path_buf()], &settings)
}

/// N frames of `size` payload bytes, written in parallel; every tenth one damaged
/// (a flipped payload bit) unless `--only-valid`.
fn bulk(args: &DemoArgs, dir: &Path, frames: u32, size: u64) -> u8 {
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = AtomicUsize::new(0);
    let jobs = verify::default_jobs().min(frames as usize).max(1);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= frames as usize {
                    break;
                }
                let damage = !args.only_valid && index % 10 == 9;
                let path = dir.join(format!("frame-{index:05}.frame"));
                if let Err(err) = write_bulk_frame(&path, index, size, damage) {
                    output::complain(&path, format_args!("cannot write: {err}"));
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    if failures.load(Ordering::Relaxed) > 0 {
        return EXIT_ERROR;
    }
    say!(
        args.json,
        "wrote {frames} frames of {} payload each ({} in all) to {} in {:.1} s",
        output::bytes(size),
        output::bytes(size * u64::from(frames)),
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    if args.no_verify {
        return EXIT_OK;
    }
    let (summary, _) = verify_dir(args, dir);
    summary.exit_status()
}

/// One bulk frame, streamed: a pass over the generated payload for its digest, then
/// the head, the payload again and the trailer. A damaged frame gets one payload bit
/// flipped on disk afterwards.
fn write_bulk_frame(path: &Path, index: usize, size: u64, damage: bool) -> io::Result<()> {
    let block = BLOCKS.get(index % BLOCKS.len()).copied().unwrap_or(BLOCKS[0]).sized_for(size);
    let seed = index as u64 + 1000;
    let mut buf = vec![0u8; 1 << 20];
    let mut hasher = Sha256Hasher::new();
    let mut values = Values::new(seed, block.dtype);
    let mut rest = size;
    while rest > 0 {
        let n = usize::try_from(rest).unwrap_or(usize::MAX).min(buf.len());
        let chunk = buf.get_mut(..n).unwrap_or_default();
        values.fill(chunk);
        hasher.update(&*chunk);
        rest -= n as u64;
    }
    let hex = hasher.finish().to_hex();
    let shape = block.shape();
    let identity = block.identity(hex.as_str(), &shape).map_err(io::Error::other)?;
    let mut file = BufWriter::with_capacity(1 << 20, fs::File::create(path)?);
    let mut writer = ChunkedFrameWriter::begin(&identity, size, IoSink(&mut file))
        .map_err(|err| io::Error::other(err.to_string()))?;
    let mut values = Values::new(seed, block.dtype);
    let mut rest = size;
    while rest > 0 {
        let n = usize::try_from(rest).unwrap_or(usize::MAX).min(buf.len());
        let chunk = buf.get_mut(..n).unwrap_or_default();
        values.fill(chunk);
        writer.write_payload(chunk).map_err(|err| io::Error::other(err.to_string()))?;
        rest -= n as u64;
    }
    let (outcome, _) = writer.finish().map_err(|err| io::Error::other(err.to_string()))?;
    file.flush()?;
    drop(file);
    if damage && size > 0 {
        // Flip one payload bit on disk, after the trailer was computed.
        let at = outcome.frame_len - 8 - size + size / 2;
        let mut file = fs::OpenOptions::new().read(true).write(true).open(path)?;
        let mut byte = [0u8; 1];
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut byte)?;
        file.seek(SeekFrom::Start(at))?;
        file.write_all(&[byte[0] ^ 0x04])?;
    }
    Ok(())
}
