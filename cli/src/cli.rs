//! The command line: subcommands, flags and their help text.

use clap::{Args, Parser, Subcommand, ValueEnum};
use membrane_frame::{PayloadAlignment, VerifyLevel};
use std::path::PathBuf;

const MAIN_EXAMPLES: &str = "\
Examples:
  membrane-frame demo                          write a sample corpus to a temporary directory and verify it
  membrane-frame verify /data/kv               verify every file under /data/kv (trailer level)
  membrane-frame verify --level full --json /data/kv > report.jsonl
  membrane-frame inspect fragment.frame        header, identity, fingerprint, trailer status
  membrane-frame pack --identity id.json --payload kv.bin --fill-payload-hash -o fragment.frame
  membrane-frame unpack fragment.frame --payload-out kv.bin
  membrane-frame fingerprint id.json
  membrane-frame migrate /data/kv              dry run of the v2/v4 -> v5 migration (--write applies it)
  membrane-frame envelope check outbox.jsonl   validate v5 envelopes

Exit status: 0 all good, 1 something invalid, 2 usage or I/O error.";

/// Verify, inspect, pack, unpack and migrate Membrane v5 KV-cache frames; check envelopes.
#[derive(Debug, Parser)]
#[command(name = "membrane-frame", version, about, after_help = MAIN_EXAMPLES, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Verify frame files and directories (recursively), in parallel.
    #[command(after_help = VERIFY_EXAMPLES)]
    Verify(VerifyArgs),
    /// Show one frame: header fields, identity, fingerprint, trailer and payload-hash status.
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect(InspectArgs),
    /// Frame a raw payload with an identity.
    #[command(after_help = PACK_EXAMPLES)]
    Pack(PackArgs),
    /// Verify a frame and write its payload out.
    #[command(after_help = UNPACK_EXAMPLES)]
    Unpack(UnpackArgs),
    /// Print the fingerprint (SHA-256 of the canonical identity) of an identity JSON file or a frame.
    #[command(after_help = FINGERPRINT_EXAMPLES)]
    Fingerprint(FingerprintArgs),
    /// Migrate v2/v4 frames and schema 2-4 envelopes to v5 (dry run unless --write).
    #[command(after_help = MIGRATE_EXAMPLES)]
    Migrate(MigrateArgs),
    /// Work with v5 JSON envelopes.
    #[command(subcommand)]
    Envelope(EnvelopeCommand),
    /// Write a sample corpus of synthetic KV-cache frames (some damaged) and verify it.
    #[command(after_help = DEMO_EXAMPLES)]
    Demo(DemoArgs),
    /// Print a shell completion script: `membrane-frame completions bash > /etc/bash_completion.d/membrane-frame`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `membrane-frame man > /usr/local/share/man/man1/membrane-frame.1`.
    Man,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Subcommand)]
pub enum EnvelopeCommand {
    /// Validate v5 envelopes: one per .json file, one per line of a .jsonl file.
    #[command(after_help = ENVELOPE_EXAMPLES)]
    Check(EnvelopeCheckArgs),
}

const MIGRATE_EXAMPLES: &str = "\
Examples:
  membrane-frame migrate /data/kv                 dry run: what would change, what is skipped and why
  membrane-frame migrate --write /data/kv         apply it
  membrane-frame migrate --write --json /data/kv > migration.jsonl

Frames: *.blob and any file that starts with a Membrane magic. A v2 or v4 frame gets the
v5 magic and schema (bytes 0..6), nothing else changes; the result must pass the v5
reader at the trailer level or the file is left untouched and reported.
Envelopes: *.json (one envelope) and *.jsonl (one per line; blank and unparseable lines
are kept and reported). Schema 2-4 envelopes get the SPEC section 7.2 defaults.
Each rewrite goes to a temporary file beside the original, is fsynced and verified, and
then renamed over it (the directory is fsynced too): a crash leaves every file either
original or migrated. Running it again changes nothing.
Exit status of a dry run: 0 nothing would change, 1 something would be rewritten or cannot
be migrated, 2 I/O error. With --write: 0 everything is v5 now, 1 something could not be
migrated, 2 I/O error.";

const ENVELOPE_EXAMPLES: &str = "\
Examples:
  membrane-frame envelope check message.json
  membrane-frame envelope check --json outbox.jsonl | jq -c 'select(.code != \"ok\")'
  membrane-frame envelope check envelopes/        every .json and .jsonl file below

Exit status: 0 every envelope valid, 1 some invalid (legacy ones are envelope_version:
migrate them), 2 usage or I/O error.";

/// How `envelope check` splits a file into envelopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EnvelopeFormat {
    /// `.jsonl` and `.ndjson` as JSON lines, anything else as one envelope.
    Auto,
    /// The whole file is one envelope.
    Json,
    /// One envelope per line.
    Jsonl,
}

#[derive(Debug, Args)]
pub struct EnvelopeCheckArgs {
    /// Envelope files (.json: one envelope, .jsonl: one per line) or directories.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// How to split files into envelopes.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: EnvelopeFormat,
    /// One JSON object per envelope, then a summary line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Files and directories to migrate (directories recursively).
    #[arg(required = true, value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Apply the changes (the default is a dry run).
    #[arg(long)]
    pub write: bool,
    /// tenant_id for legacy envelopes that have none.
    #[arg(long, default_value = "public", value_name = "TENANT")]
    pub tenant: String,
    /// One JSON object per file, then a summary line.
    #[arg(long)]
    pub json: bool,
    /// Also list files that need no change.
    #[arg(short, long)]
    pub verbose: bool,
}

const VERIFY_EXAMPLES: &str = "\
Examples:
  membrane-frame verify fragments/                        every file below fragments/, trailer level
  membrane-frame verify --level layout a.frame b.frame    header and lengths only: O(1) per file
  membrane-frame verify --level full --json fragments/ | jq -c 'select(.code != \"ok\")'
  curl -s http://node/fragment/42 | membrane-frame verify -   one frame from standard input

Order: files are verified in parallel as the walk finds them and reported in walk order:
the filesystem's directory order (the same run after run on an unchanged tree, whatever
-j is), or name order with --sort. Memory does not grow with the number of files.
Symlinks are followed; a link to a directory above it is skipped (a loop).
Output: one line per invalid file (all files with --verbose), then a summary by error code.
--json prints one JSON object per line for every path given or found, then a summary:
  {\"path\": ..., \"code\": \"ok\"|<error code>|\"io\"|\"skipped\", \"class\": \"ok\"|\"schema\"|\"corrupt\"|\"io\"|\"skipped\", ...}
  (\"path_bytes\": the base64 bytes of a path that is not UTF-8)
  {\"summary\": {\"files\": ..., \"bytes_read\": ..., \"bytes_hashed\": ..., \"exit_status\": ...}}
Exit status: 0 every file valid; 1 some file invalid (including non-frame and empty
files) or no file found at all (see --allow-empty); 2 a usage error, an unreadable path,
or standard output failed. When the reader of standard output goes away (`| head`), the
run stops quietly with the status of what was reported until then.";

const INSPECT_EXAMPLES: &str = "\
Examples:
  membrane-frame inspect fragment.frame
  membrane-frame inspect --json fragment.frame | jq .fingerprint

Exit status: 0 the frame is valid at the full level, 1 it is not, 2 usage or I/O error.";

const PACK_EXAMPLES: &str = "\
Examples:
  membrane-frame pack --identity id.json --payload kv.bin -o fragment.frame
  membrane-frame pack --identity id.json --payload kv.bin --fill-payload-hash -o fragment.frame
  membrane-frame pack --identity id.json --payload kv.bin --align 4096 -o fragment.frame

The identity file is a strict JSON object with the ten identity fields (SPEC section 2);
with --fill-payload-hash its payload_hash may be missing or empty and is set to the
SHA-256 of the payload. The output is written atomically (temporary file, fsync, rename).";

const UNPACK_EXAMPLES: &str = "\
Examples:
  membrane-frame unpack fragment.frame --payload-out kv.bin
  membrane-frame unpack --level full fragment.frame --payload-out - | xxd | head

The frame is verified (trailer level by default) before the payload is kept: on any
error nothing is written and the exit status is 1.";

const FINGERPRINT_EXAMPLES: &str = "\
Examples:
  membrane-frame fingerprint id.json
  membrane-frame fingerprint fragment.frame       the identity stored in a frame
  cat id.json | membrane-frame fingerprint -";

const DEMO_EXAMPLES: &str = "\
Examples:
  membrane-frame demo                               sample corpus in a temporary directory, verified, removed
  membrane-frame demo --out /tmp/corpus             keep it in /tmp/corpus
  membrane-frame demo --out /tmp/big --frames 128 --frame-size 16MiB --only-valid --no-verify
                                                    a bulk corpus of valid 16 MiB frames (for benchmarks)";

/// How verification reads files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IoMode {
    /// At the hashing levels, map each file in flight 1 MiB at a time (small files, and
    /// files the system will not map, are read); below them, read the head. Bounded
    /// memory whatever the frame size.
    Window,
    /// Read through a fixed buffer per file in flight (bounded memory).
    Read,
    /// Memory-map each whole file into the one-shot reader, one file at a time per
    /// worker (resident pages grow with the frame size).
    Mmap,
}

/// Whether to draw a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum When {
    /// When stderr is a terminal.
    Auto,
    Always,
    Never,
}

/// A verification level (SPEC section 1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Level {
    /// Header and lengths (O(1) per file).
    Layout,
    /// And the identity is a valid v5 identity.
    Identity,
    /// And the trailer matches SHA-256 of the payload (the default).
    Trailer,
    /// And payload_hash is the hex SHA-256 of the payload.
    Full,
}

impl Level {
    pub fn to_library(self) -> VerifyLevel {
        match self {
            Level::Layout => VerifyLevel::Layout,
            Level::Identity => VerifyLevel::Identity,
            Level::Trailer => VerifyLevel::Trailer,
            Level::Full => VerifyLevel::Full,
        }
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Files and directories to verify (directories recursively); `-` reads one frame
    /// from standard input.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How much to verify.
    #[arg(long, value_enum, default_value = "trailer")]
    pub level: Level,
    /// One JSON object per line per file, then a summary line.
    #[arg(long)]
    pub json: bool,
    /// Also list valid files in the human output.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print nothing on standard output and no progress: the exit status tells
    /// (unreadable paths are still named on stderr).
    #[arg(short, long)]
    pub quiet: bool,
    /// Report in name order within each directory (holds one directory's listing in
    /// memory); by default files come in the filesystem's directory order.
    #[arg(long)]
    pub sort: bool,
    /// Exit 0 when no file is found at all (by default that is exit 1: an empty tree is
    /// more often an unmounted volume than a verified one).
    #[arg(long)]
    pub allow_empty: bool,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    /// Progress bar on stderr.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub progress: When,
    /// How files are read (for measurements; `window` and `read` keep memory bounded).
    #[arg(long, value_enum, default_value = "window", hide = true)]
    pub io: IoMode,
    /// Read buffer per file in flight, and the chunk a mapped file is fed in, halved
    /// where sixteen files are in flight a worker (for measurements).
    #[arg(long, default_value = "128KiB", value_parser = parse_size, hide = true)]
    pub buffer_size: u64,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The frame file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// One JSON object instead of the human report.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PackArgs {
    /// Identity JSON file (`-` for standard input).
    #[arg(long, value_name = "ID.json")]
    pub identity: PathBuf,
    /// Raw payload file.
    #[arg(long, value_name = "RAW")]
    pub payload: PathBuf,
    /// Output frame file.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Set payload_hash to the SHA-256 of the payload (it may be missing or empty in ID.json).
    #[arg(long)]
    pub fill_payload_hash: bool,
    /// Replace OUT if it exists (by default an existing file is left alone: exit 2).
    #[arg(long)]
    pub force: bool,
    /// Write the frame even when payload_hash is not the payload's SHA-256 (it then
    /// passes the trailer level but fails the full level). By default nothing is written: exit 1.
    #[arg(long)]
    pub allow_hash_mismatch: bool,
    /// Start the payload at a multiple of N bytes in OUT (a power of two, 1 to 4096; 64
    /// for SIMD loads, 4096 for O_DIRECT and GPUDirect Storage) by padding the identity
    /// with spaces (SPEC section 1.5). 1, the default, writes no padding.
    #[arg(long, value_name = "N", default_value = "1", value_parser = parse_align)]
    pub align: PayloadAlignment,
}

/// `--align`: a power of two from 1 to 4096, from the start of OUT (base 0).
fn parse_align(text: &str) -> Result<PayloadAlignment, String> {
    let align: u32 = text.parse().map_err(|_| format!("{text:?} is not a number"))?;
    PayloadAlignment::new(align, 0).map_err(|_| format!("{align} is not a power of two from 1 to 4096"))
}

#[derive(Debug, Args)]
pub struct UnpackArgs {
    /// The frame file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where to write the payload (`-` for standard output).
    #[arg(long, value_name = "RAW")]
    pub payload_out: PathBuf,
    /// How much to verify before keeping the payload.
    #[arg(long, value_enum, default_value = "trailer")]
    pub level: Level,
}

#[derive(Debug, Args)]
pub struct FingerprintArgs {
    /// Identity JSON file, or a frame file (`-` for standard input).
    #[arg(value_name = "ID.json")]
    pub file: PathBuf,
    /// One JSON object: path, fingerprint, canonical.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Write the corpus here and keep it: a new or empty directory (default: a temporary
    /// directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Keep the temporary directory.
    #[arg(long)]
    pub keep: bool,
    /// Bulk mode: this many frames (with --frame-size) instead of the sample corpus.
    #[arg(long, value_name = "N", requires = "frame_size")]
    pub frames: Option<u32>,
    /// Bulk mode: payload bytes per frame, e.g. 16MiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "frames")]
    pub frame_size: Option<u64>,
    /// Bulk mode: no damaged files.
    #[arg(long)]
    pub only_valid: bool,
    /// Only write the corpus.
    #[arg(long)]
    pub no_verify: bool,
    /// Level the corpus is verified at.
    #[arg(long, value_enum, default_value = "full")]
    pub level: Level,
    /// One JSON object per line per file, then a summary line (as `verify --json`).
    #[arg(long)]
    pub json: bool,
}

/// `1048576`, `64KiB`, `16MiB`, `2GiB`, `16M`, `1.5GiB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("`{text}` is not a size (try 1048576, 64KiB, 16MiB)"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        "g" | "gib" | "gb" => 1 << 30,
        "t" | "tib" | "tb" => 1 << 40,
        _ => return Err(format!("unknown unit in `{text}` (use B, KiB, MiB, GiB or TiB)")),
    };
    let bytes = number * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("123"), Ok(123));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
    }
}
