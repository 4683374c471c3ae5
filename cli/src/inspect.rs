//! `inspect FILE`: everything about one frame, even a damaged or legacy one — the
//! header fields, the identity, its fingerprint, whether it is canonical, the payload
//! length, and whether the trailer and `payload_hash` match the payload.

use crate::cli::{InspectArgs, IoMode};
use crate::fsutil::Spooled;
use crate::io::{Checker, Outcome, RunState};
use crate::output::{self, JsonObject};
use crate::walk;
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::frame::{
    alignment_of, magic_name, HeadFields, HeaderKind, DEFAULT_IDENTITY_LIMIT, HEADER_LEN, MIN_FRAME_PREFIX,
};
use membrane_frame::json::JsonStr;
use membrane_frame::{Error, InclusiveRange, PayloadIdentity, Sha256Digest, Sha256Hasher, VerifyLevel};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// What the file's bytes say, field by field, as far as they go.
#[derive(Debug, Default)]
struct Facts {
    len: u64,
    magic: Option<[u8; 4]>,
    schema: Option<u16>,
    reserved: Option<u32>,
    identity_len: Option<u32>,
    identity_json: Option<Vec<u8>>,
    payload_len: Option<u64>,
    trailer: Option<[u8; 8]>,
    payload_digest: Option<Sha256Digest>,
}

pub fn run(args: &InspectArgs) -> u8 {
    // Standard input is read twice (the verdict, then the facts): from a copy.
    let spooled = if walk::is_stdin(&args.file) {
        match Spooled::stdin(&std::env::temp_dir()) {
            Ok(spooled) => Some(spooled),
            Err(err) => {
                output::complain(&args.file, format_args!("cannot copy standard input to a temporary file: {err}"));
                return EXIT_ERROR;
            }
        }
    } else {
        None
    };
    let read_from = spooled.as_ref().map_or(args.file.as_path(), Spooled::path);
    let path = args.file.as_path();
    let mut checker = Checker::new(VerifyLevel::Full, IoMode::Read, crate::io::READ_BUFFER);
    let checked = checker.check(read_from, &RunState::default());
    let (verdict, known_digest) = match checked.outcome {
        Outcome::Unreadable(err) => {
            output::complain(path, format_args!("cannot read: {err}"));
            return EXIT_ERROR;
        }
        Outcome::Valid(frame) => (Ok(()), frame.payload_digest),
        Outcome::Invalid(err) => (Err(err), None),
    };
    let facts = match read_facts(read_from, known_digest) {
        Ok(facts) => facts,
        Err(err) => {
            output::complain(path, format_args!("cannot read: {err}"));
            return EXIT_ERROR;
        }
    };
    let identity = facts
        .identity_json
        .as_deref()
        .map(|json| PayloadIdentity::parse(json).map_err(|err| err.shifted(HEADER_LEN as u64)));
    let text = if args.json {
        json_report(path, &verdict, &facts, identity.as_ref())
    } else {
        human_report(path, &verdict, &facts, identity.as_ref())
    };
    let mut out = io::stdout().lock();
    if let Err(err) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if err.kind() != io::ErrorKind::BrokenPipe {
            output::complain_plain(format_args!("cannot write to standard output: {err}"));
        }
        return EXIT_ERROR;
    }
    if verdict.is_ok() {
        EXIT_OK
    } else {
        EXIT_INVALID
    }
}

fn read_facts(path: &Path, known_digest: Option<Sha256Digest>) -> io::Result<Facts> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut head = Vec::new();
    (&mut file).take((MIN_FRAME_PREFIX + DEFAULT_IDENTITY_LIMIT as usize) as u64).read_to_end(&mut head)?;
    let fields = HeadFields::decode(&head);
    let mut facts = Facts {
        len,
        magic: fields.magic,
        schema: fields.schema,
        reserved: fields.reserved,
        identity_len: fields.identity_len,
        identity_json: fields.identity_json(&head).ok().map(<[u8]>::to_vec),
        payload_len: fields.payload_len,
        ..Facts::default()
    };
    let (Some(payload_start), Some(payload_len)) = (fields.payload_start(), fields.payload_len) else {
        return Ok(facts);
    };
    let Some(trailer_start) = fields.trailer_start().filter(|&end| end.saturating_add(8) <= len) else {
        return Ok(facts);
    };
    let mut trailer = [0u8; 8];
    file.seek(SeekFrom::Start(trailer_start))?;
    file.read_exact(&mut trailer)?;
    facts.trailer = Some(trailer);
    facts.payload_digest = match known_digest {
        Some(digest) => Some(digest),
        None => Some(hash_region(&mut file, payload_start, payload_len)?),
    };
    Ok(facts)
}

/// SHA-256 of `len` bytes of `file` from `start`, through a fixed buffer.
fn hash_region(file: &mut File, start: u64, len: u64) -> io::Result<Sha256Digest> {
    file.seek(SeekFrom::Start(start))?;
    let mut hasher = Sha256Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut rest = len;
    while rest > 0 {
        let want = usize::try_from(rest).unwrap_or(usize::MAX).min(buf.len());
        let chunk = buf.get_mut(..want).unwrap_or_default();
        file.read_exact(chunk)?;
        hasher.update(&*chunk);
        rest -= want as u64;
    }
    Ok(hasher.finish())
}

fn format_name(magic: [u8; 4]) -> &'static str {
    magic_name(magic).unwrap_or("not a Membrane frame")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decoded(value: &JsonStr<'_>) -> String {
    value.chars().collect()
}

fn range(value: InclusiveRange) -> [i64; 2] {
    [value.start, value.end]
}

/// `payload_hash` checked against the payload's digest, when both are known.
fn payload_hash_ok(identity: Option<&Result<PayloadIdentity<'_>, Error>>, facts: &Facts) -> Option<bool> {
    let identity = identity?.as_ref().ok()?;
    let digest = facts.payload_digest?;
    Some(decoded(&identity.payload_hash()) == digest.to_hex().as_str())
}

/// Where the payload starts in the file, once the header says (SPEC §1.5).
fn payload_offset(facts: &Facts) -> Option<u64> {
    facts.identity_len.map(|len| MIN_FRAME_PREFIX as u64 + u64::from(len))
}

fn trailer_ok(facts: &Facts) -> Option<bool> {
    Some(facts.payload_digest?.trailer() == facts.trailer?)
}

fn identity_object(identity: &PayloadIdentity<'_>) -> JsonObject {
    JsonObject::new()
        .field("payload_hash", decoded(&identity.payload_hash()))
        .field("model_id", decoded(&identity.model_id()))
        .field("model_revision", decoded(&identity.model_revision()))
        .field("tokenizer_name", decoded(&identity.tokenizer_name()))
        .field("tokenizer_revision", decoded(&identity.tokenizer_revision()))
        .field("layer_range", range(identity.layer_range()).to_vec())
        .field("head_range", range(identity.head_range()).to_vec())
        .field("token_span", range(identity.token_span()).to_vec())
        .field("dtype", identity.dtype().name())
        .field("shape", identity.shape().to_vec())
}

fn json_report(
    path: &Path,
    verdict: &Result<(), Error>,
    facts: &Facts,
    identity: Option<&Result<PayloadIdentity<'_>, Error>>,
) -> String {
    let mut object = JsonObject::new().path(path);
    object = match verdict {
        Ok(()) => object.field("code", "ok").field("class", "ok"),
        Err(err) => object.error(err),
    };
    object = object
        .field("level", VerifyLevel::Full.name())
        .field("bytes", facts.len)
        .maybe("magic", facts.magic.map(|m| hex(&m)))
        .maybe("format", facts.magic.map(format_name))
        .maybe("schema", facts.schema)
        .maybe("reserved", facts.reserved)
        .maybe("identity_len", facts.identity_len)
        .maybe("payload_len", facts.payload_len)
        .maybe("payload_offset", payload_offset(facts))
        .maybe("payload_alignment", payload_offset(facts).map(alignment_of));
    match identity {
        Some(Ok(identity)) => {
            object = object
                .object("identity", identity_object(identity))
                .field("fingerprint", identity.fingerprint().to_hex().to_string())
                .field("canonical", identity.is_canonical())
                .field("padding", identity.padding())
                .maybe("tensor_bytes", identity.tensor_bytes());
        }
        Some(Err(err)) => {
            object = object.field("identity", serde_json::Value::Null).field("identity_error", err.to_string());
        }
        None => {}
    }
    object = object
        .maybe("trailer", facts.trailer.map(|t| hex(&t)))
        .maybe("payload_sha256", facts.payload_digest.map(|d| d.to_hex().to_string()))
        .maybe("trailer_ok", trailer_ok(facts))
        .maybe("payload_hash_ok", payload_hash_ok(identity, facts));
    format!("{}\n", object.finish())
}

fn human_report(
    path: &Path,
    verdict: &Result<(), Error>,
    facts: &Facts,
    identity: Option<&Result<PayloadIdentity<'_>, Error>>,
) -> String {
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut add = |key: &str, value: String| lines.push((key.to_string(), value));
    add("file", format!("{} ({} bytes)", path.display(), facts.len));
    add(
        "verdict",
        match verdict {
            Ok(()) => String::from("ok (valid at the full level)"),
            Err(err) => format!("{} [{}]", output::frame_error(err), err.class().name()),
        },
    );
    if let Some(magic) = facts.magic {
        add("magic", format!("{} ({})", hex(&magic), format_name(magic)));
    }
    if let Some(schema) = facts.schema {
        add("schema", schema.to_string());
    }
    if let Some(reserved) = facts.reserved {
        add("reserved", reserved.to_string());
    }
    if let Some(identity_len) = facts.identity_len {
        add("identity_len", format!("{identity_len} bytes"));
    }
    if let Some(payload_len) = facts.payload_len {
        add("payload_len", format!("{payload_len} bytes ({})", output::bytes(payload_len)));
    }
    if let Some(offset) = payload_offset(facts) {
        add("payload_offset", format!("{offset} (aligned to {} bytes)", alignment_of(offset)));
    }
    match identity {
        Some(Ok(identity)) => {
            let canonical = match (identity.is_canonical(), identity.padding()) {
                (false, _) => String::from("not canonical"),
                (true, 0) => String::from("canonical"),
                (true, padding) => format!("canonical, {padding} bytes of padding"),
            };
            add("identity", canonical);
            let quoted = |value: &JsonStr<'_>| serde_json::Value::from(decoded(value)).to_string();
            add("  payload_hash", quoted(&identity.payload_hash()));
            add("  model_id", quoted(&identity.model_id()));
            add("  model_revision", quoted(&identity.model_revision()));
            add("  tokenizer_name", quoted(&identity.tokenizer_name()));
            add("  tokenizer_revision", quoted(&identity.tokenizer_revision()));
            add("  layer_range", format!("{:?}", range(identity.layer_range())));
            let heads = identity.head_range();
            let all = if heads == InclusiveRange::ALL_HEADS { " (all heads)" } else { "" };
            add("  head_range", format!("{:?}{all}", range(heads)));
            add("  token_span", format!("{:?}", range(identity.token_span())));
            add("  dtype", identity.dtype().name().to_string());
            let tensor = identity.tensor_bytes().map_or(String::new(), |n| format!(" (tensor {})", output::bytes(n)));
            add("  shape", format!("{:?}{tensor}", identity.shape()));
            add("fingerprint", identity.fingerprint().to_hex().to_string());
        }
        Some(Err(err)) => add("identity", format!("invalid: {}", output::frame_error(err))),
        None => {}
    }
    if let Some(trailer) = facts.trailer {
        let status = match trailer_ok(facts) {
            Some(true) => "matches the payload",
            Some(false) => "DOES NOT match the payload",
            None => "not checked",
        };
        add("trailer", format!("{} ({status})", hex(&trailer)));
    }
    if let Some(digest) = facts.payload_digest {
        add("payload sha256", digest.to_hex().to_string());
    }
    if let Some(ok) = payload_hash_ok(identity, facts) {
        add("payload_hash", String::from(if ok { "matches the payload" } else { "DOES NOT match the payload" }));
    }
    if let (Err(err), Some(magic)) = (verdict, facts.magic) {
        if matches!(
            HeaderKind::of(magic, facts.schema.unwrap_or(0)),
            HeaderKind::Legacy { .. } | HeaderKind::LegacyMismatch
        ) {
            add("hint", format!("a legacy frame ({}): migrate it to v5", err.code().name()));
        }
    }
    let width = lines.iter().map(|(key, _)| key.len()).max().unwrap_or(0);
    lines.iter().map(|(key, value)| format!("{key:<width$}  {value}\n")).collect()
}
