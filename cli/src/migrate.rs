//! `migrate ROOT...`: legacy frames and envelopes to v5 (SPEC §7).
//!
//! * Frames — `*.blob` and any file that starts with a Membrane magic: a v2 or v4 frame
//!   (or one the original tool half migrated) gets bytes 0..6 := `C0 DE 01 05 05 00`,
//!   nothing else changes. A dry run streams the file through the v5 verifier *as if*
//!   rewritten; `--write` streams it into a temporary file beside the original, fsyncs
//!   it, verifies the temporary file with the v5 reader (trailer level), and only then
//!   renames it over the original and fsyncs the directory. The file is never held in
//!   memory, whatever its size. The decision per header is the library's
//!   (`migrate::plan_frame_migration`); a test holds the two to the same verdicts.
//! * Envelopes — `*.json` (one envelope) and `*.jsonl` (one per line): rewritten with
//!   the library's `migrate_envelope_to_vec`, each result re-read by the v5 envelope reader.
//!   JSON-lines files keep blank and unparseable lines as they are, and report them.
//!
//! A dry run is the default. A crash at any moment leaves each file either complete
//! and original or complete and migrated (at worst a stray `.NAME.*.tmp` beside it),
//! and a second run changes nothing.

use crate::cli::MigrateArgs;
use crate::envelope::is_json_lines;
use crate::fsutil;
use crate::io::{Checker, Outcome};
use crate::lines;
use crate::output::{self, JsonObject};
use crate::problem::Problem;
use crate::walk::{self, Found, Order};
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::envelope::FragmentMessage;
use membrane_frame::frame::{magic_name, HeadFields, HeaderKind, MIN_FRAME_PREFIX};
use membrane_frame::migrate::{migrate_envelope_to_vec, EnvelopeMigrationOptions, V5_HEAD};
use membrane_frame::{Error, ErrorCode, VerifyLevel};
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Largest single-envelope `.json` file read.
const MAX_ENVELOPE_FILE: u64 = 64 << 20;

/// What happened (or, in a dry run, would happen) to one file.
#[derive(Debug)]
enum Action {
    /// Rewritten as v5 (or would be).
    Rewrite { kind: &'static str, detail: String, notes: Vec<String> },
    /// Already v5 and valid.
    Unchanged { kind: &'static str, detail: String, notes: Vec<String> },
    /// A candidate that cannot be migrated; left exactly as it was.
    LeftAlone { kind: &'static str, error: Problem, notes: Vec<String> },
    /// Not a frame or envelope (or one of our temporary files).
    Skipped { reason: &'static str },
    /// Could not be read or written.
    Unreadable { error: io::Error },
}

/// How a file is treated, decided from its name and first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Frame,
    Envelope,
    EnvelopeLines,
}

/// What the frame's first six bytes call for: the library's decision table
/// (`HeaderKind`, which `plan_frame_migration` uses too), on the header alone so the
/// rest can stream. A file too short to be a frame gets the v5 reader's verdict.
fn frame_plan(head: &[u8], len: u64) -> HeaderKind {
    if len < MIN_FRAME_PREFIX as u64 {
        return HeaderKind::Foreign;
    }
    HeaderKind::of_bytes(head)
}

/// How a rewrite is described in the report.
fn rewrite_name(kind: HeaderKind) -> &'static str {
    match kind {
        HeaderKind::HalfMigrated { schema: 2 } => "half-migrated frame (schema 2)",
        HeaderKind::HalfMigrated { .. } => "half-migrated frame (schema 4)",
        HeaderKind::Legacy { version: 2 } => "v2 frame",
        _ => "v4 frame",
    }
}

fn kind_of(path: &Path, head: &[u8]) -> Option<Kind> {
    if HeadFields::decode(head).magic.and_then(magic_name).is_some() {
        return Some(Kind::Frame);
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("blob") => Some(Kind::Frame),
        Some("json") => Some(Kind::Envelope),
        _ if is_json_lines(path) => Some(Kind::EnvelopeLines),
        _ => None,
    }
}

pub fn run(args: &MigrateArgs) -> u8 {
    let options = EnvelopeMigrationOptions::new().default_tenant(&args.tenant);
    if let Err(err) = membrane_frame::migrate::read_for_migration(b"{}", &options) {
        if err.code() == ErrorCode::InvalidArgument {
            output::complain_plain(format_args!(
                "--tenant {:?} is not a valid tenant id: {}",
                args.tenant,
                err.reason()
            ));
            return EXIT_ERROR;
        }
    }
    let mut report = Report::new(args);
    let mut checker = Checker::new(VerifyLevel::Trailer, crate::cli::IoMode::Read, crate::io::READ_BUFFER);
    for item in walk::walk(&args.roots, Order::Name, |_| true) {
        let (path, action) = match item {
            Found::File { path } => {
                let action = migrate_path(&path, args, &options, &mut checker);
                (path, action)
            }
            Found::Unreadable { path, error } => (path, Action::Unreadable { error }),
            Found::Skipped { path, reason } => (path, Action::Skipped { reason }),
        };
        report.add(&path, action);
    }
    report.finish()
}

fn migrate_path(
    path: &Path,
    args: &MigrateArgs,
    options: &EnvelopeMigrationOptions<'_>,
    checker: &mut Checker,
) -> Action {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name.starts_with('.') && name.ends_with(".tmp") {
        return Action::Skipped {
            reason: "temporary file of an interrupted write; safe to delete when nothing is running",
        };
    }
    let (head, len) = match read_head(path) {
        Ok(head) => head,
        Err(error) => return Action::Unreadable { error },
    };
    let result = match kind_of(path, &head) {
        None => {
            return Action::Skipped { reason: "not a frame (.blob or a Membrane magic) or an envelope (.json, .jsonl)" }
        }
        Some(Kind::Frame) => migrate_frame(path, &head, len, args.write, checker),
        Some(Kind::Envelope) => migrate_envelope(path, args.write, options),
        Some(Kind::EnvelopeLines) => migrate_lines(path, args.write, options),
    };
    result.unwrap_or_else(|error| Action::Unreadable { error })
}

fn read_head(path: &Path) -> io::Result<([u8; 6], u64)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut head = [0u8; 6];
    let mut filled = 0;
    while filled < head.len() {
        match file.read(head.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    // Bytes past the end stay zero, which matches no magic.
    Ok((head, len))
}

// ---- frames ----

fn migrate_frame(path: &Path, head: &[u8], len: u64, write: bool, checker: &mut Checker) -> io::Result<Action> {
    const KIND: &str = "frame";
    let left_alone = |error: Error| Action::LeftAlone { kind: KIND, error: error.into(), notes: Vec::new() };
    let kind = match frame_plan(head, len).migratable() {
        Ok(kind) => kind,
        Err(error) => return Ok(left_alone(error)),
    };
    if !kind.needs_migration() {
        return Ok(match verdict(checker.check(path, &Default::default()).outcome)? {
            Ok(()) => Action::Unchanged { kind: KIND, detail: String::from("already v5"), notes: Vec::new() },
            Err(error) => left_alone(error),
        });
    }
    let what = rewrite_name(kind);
    let detail = format!("{what} -> v5");
    if !write {
        return Ok(match verdict(checker.check_as_if(path, &V5_HEAD).outcome)? {
            Ok(()) => Action::Rewrite { kind: KIND, detail, notes: Vec::new() },
            Err(error) => left_alone(error),
        });
    }
    // Stream the original into a temporary file with the new head; verify the
    // temporary file; only then rename it over the original.
    let mut rejected = None;
    let permissions = fs::metadata(path)?.permissions();
    let result = fsutil::replace_atomically(
        path,
        Some(permissions),
        |temp| {
            let mut original = File::open(path)?;
            let mut out = BufWriter::with_capacity(1 << 20, temp);
            let mut buf = vec![0u8; 1 << 20];
            let mut at = 0usize;
            loop {
                let n = match original.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                };
                if let Some(replace) = V5_HEAD.get(at.min(V5_HEAD.len())..) {
                    for (slot, byte) in buf.iter_mut().take(n).zip(replace) {
                        *slot = *byte;
                    }
                }
                out.write_all(buf.get(..n).unwrap_or_default())?;
                at = at.saturating_add(n);
            }
            out.flush()
        },
        |temp| match verdict(checker.check(temp, &Default::default()).outcome)? {
            Ok(()) => Ok(()),
            Err(error) => {
                rejected = Some(error);
                Err(io::Error::other("the rewritten frame does not verify"))
            }
        },
    );
    Ok(match (result, rejected) {
        (Ok(()), _) => Action::Rewrite { kind: KIND, detail, notes: Vec::new() },
        (Err(_), Some(error)) => left_alone(error),
        (Err(error), None) => return Err(error),
    })
}

/// A checker's outcome as valid / invalid, with read failures as errors.
fn verdict(outcome: Outcome) -> io::Result<Result<(), Error>> {
    match outcome {
        Outcome::Valid(_) => Ok(Ok(())),
        Outcome::Invalid(error) => Ok(Err(error)),
        Outcome::Unreadable(error) => Err(error),
    }
}

// ---- envelopes ----

fn migrate_envelope(path: &Path, write: bool, options: &EnvelopeMigrationOptions<'_>) -> io::Result<Action> {
    const KIND: &str = "envelope";
    let text = fsutil::read_limited(path, MAX_ENVELOPE_FILE)?;
    let (from, mut migrated) = match migrate_envelope_to_vec(&text, options) {
        Ok(None) => return Ok(Action::Unchanged { kind: KIND, detail: String::from("already v5"), notes: Vec::new() }),
        Ok(Some(rewrite)) => rewrite,
        Err(error) => return Ok(Action::LeftAlone { kind: KIND, error: error.into(), notes: Vec::new() }),
    };
    // Keep the file's final line break, if it had one.
    for ending in [&b"\r\n"[..], b"\n"] {
        if text.ends_with(ending) {
            migrated.extend_from_slice(ending);
            break;
        }
    }
    if write {
        let permissions = fs::metadata(path)?.permissions();
        fsutil::replace_atomically(
            path,
            Some(permissions),
            |temp| temp.write_all(&migrated),
            |temp| {
                let written = fs::read(temp)?;
                FragmentMessage::parse(&written).map(|_| ()).map_err(|err| io::Error::other(err.to_string()))
            },
        )?;
    }
    Ok(Action::Rewrite { kind: KIND, detail: format!("schema {from} envelope -> v5"), notes: Vec::new() })
}

/// What a pass over a JSON-lines file found.
#[derive(Debug, Default, PartialEq)]
struct LinesTally {
    lines: u64,
    rewritten: u64,
    unchanged: u64,
    blank: u64,
    invalid: Vec<(u64, Problem)>,
    from_versions: std::collections::BTreeMap<u8, u64>,
}

/// One pass: every line migrated in memory, one at a time; written to `out` if given.
fn pass_lines(
    path: &Path,
    options: &EnvelopeMigrationOptions<'_>,
    mut out: Option<&mut dyn Write>,
) -> io::Result<LinesTally> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut tally = LinesTally::default();
    while let Some(line) = lines::next_line(&mut reader)? {
        tally.lines += 1;
        let mut replacement = None;
        if line.too_long {
            tally.invalid.push((tally.lines, Problem::LineTooLong));
        } else if line.is_blank() {
            tally.blank += 1;
        } else {
            match migrate_envelope_to_vec(&line.content, options) {
                Ok(None) => tally.unchanged += 1,
                Ok(Some((from, text))) => {
                    tally.rewritten += 1;
                    *tally.from_versions.entry(from).or_default() += 1;
                    replacement = Some(text);
                }
                Err(error) => tally.invalid.push((tally.lines, error.into())),
            }
        }
        if let Some(out) = out.as_deref_mut() {
            if line.too_long {
                return Err(io::Error::other(format!(
                    "line {} is longer than 16 MiB: not rewriting the file",
                    tally.lines
                )));
            }
            out.write_all(replacement.as_deref().unwrap_or(&line.content))?;
            out.write_all(line.terminator)?;
        }
    }
    Ok(tally)
}

fn migrate_lines(path: &Path, write: bool, options: &EnvelopeMigrationOptions<'_>) -> io::Result<Action> {
    const KIND: &str = "envelope lines";
    let tally = pass_lines(path, options, None)?;
    let mut notes: Vec<String> = tally
        .invalid
        .iter()
        .map(|(line, error)| format!("line {line} kept as it is: {}", output::frame_error(error)))
        .collect();
    if tally.blank > 0 {
        notes.push(format!("{} blank line{} kept", tally.blank, if tally.blank == 1 { "" } else { "s" }));
    }
    let envelopes = tally.rewritten + tally.unchanged + tally.invalid.len() as u64;
    if tally.rewritten == 0 {
        let detail = format!("{envelopes} envelope lines, none to rewrite");
        return Ok(match tally.invalid.first() {
            Some((_, error)) if tally.unchanged == 0 => Action::LeftAlone { kind: KIND, error: *error, notes },
            _ => Action::Unchanged { kind: KIND, detail, notes },
        });
    }
    if write {
        let permissions = fs::metadata(path)?.permissions();
        fsutil::replace_atomically(
            path,
            Some(permissions),
            |temp| {
                let mut out = BufWriter::with_capacity(1 << 16, temp);
                let again = pass_lines(path, options, Some(&mut out))?;
                out.flush()?;
                if again != tally {
                    return Err(io::Error::other("the file changed while it was migrated"));
                }
                Ok(())
            },
            |temp| {
                // The result must need nothing more: every envelope line v5 now.
                let check = pass_lines(temp, options, None)?;
                let same_shape = check.lines == tally.lines
                    && check.rewritten == 0
                    && check.unchanged == tally.unchanged + tally.rewritten
                    && check.invalid.len() == tally.invalid.len();
                if same_shape {
                    Ok(())
                } else {
                    Err(io::Error::other("the rewritten file does not verify"))
                }
            },
        )?;
    }
    let versions: Vec<String> = tally.from_versions.iter().map(|(v, n)| format!("{n} from schema {v}")).collect();
    let detail = format!("{} of {envelopes} envelope lines -> v5 ({})", tally.rewritten, versions.join(", "));
    Ok(Action::Rewrite { kind: KIND, detail, notes })
}

// ---- the report ----

struct Report<'a> {
    args: &'a MigrateArgs,
    out: io::BufWriter<io::Stdout>,
    rewritten: usize,
    unchanged: usize,
    left_alone: usize,
    skipped: usize,
    unreadable: usize,
    /// Kept lines that are not v5 envelopes (unparseable or invalid).
    kept_lines: usize,
    output_failed: bool,
}

impl<'a> Report<'a> {
    fn new(args: &'a MigrateArgs) -> Report<'a> {
        Report {
            args,
            out: io::BufWriter::new(io::stdout()),
            rewritten: 0,
            unchanged: 0,
            left_alone: 0,
            skipped: 0,
            unreadable: 0,
            kept_lines: 0,
            output_failed: false,
        }
    }

    fn rewrite_word(&self) -> &'static str {
        if self.args.write {
            "rewritten"
        } else {
            "would rewrite"
        }
    }

    fn add(&mut self, path: &Path, action: Action) {
        let shown = output::path_text(path);
        let (line, json) = match &action {
            Action::Rewrite { kind, detail, notes } => {
                self.rewritten += 1;
                self.kept_lines += notes.iter().filter(|n| n.starts_with("line ")).count();
                let action = if self.args.write { "rewritten" } else { "rewrite" };
                let json = JsonObject::new()
                    .path(path)
                    .field("action", action)
                    .field("kind", *kind)
                    .field("detail", detail.as_str())
                    .field("notes", notes.clone());
                (Some(with_notes(format!("{:<13} {shown}: {detail}", self.rewrite_word()), notes)), json)
            }
            Action::Unchanged { kind, detail, notes } => {
                self.unchanged += 1;
                self.kept_lines += notes.iter().filter(|n| n.starts_with("line ")).count();
                let json = JsonObject::new()
                    .path(path)
                    .field("action", "unchanged")
                    .field("kind", *kind)
                    .field("detail", detail.as_str())
                    .field("notes", notes.clone());
                let show = self.args.verbose || !notes.is_empty();
                (show.then(|| with_notes(format!("{:<13} {shown}: {detail}", "unchanged"), notes)), json)
            }
            Action::LeftAlone { kind, error, notes } => {
                self.left_alone += 1;
                let json = JsonObject::new()
                    .path(path)
                    .field("action", "left_alone")
                    .field("kind", *kind)
                    .error(error)
                    .field("notes", notes.clone());
                let text = format!("{:<13} {shown}: {}", "left alone", output::frame_error(error));
                (Some(with_notes(text, notes)), json)
            }
            Action::Skipped { reason } => {
                self.skipped += 1;
                let json = JsonObject::new().path(path).field("action", "skipped").field("reason", *reason);
                (Some(format!("{:<13} {shown}: {reason}", "skipped")), json)
            }
            Action::Unreadable { error } => {
                self.unreadable += 1;
                let json = JsonObject::new()
                    .path(path)
                    .field("action", "io_error")
                    .field("code", ErrorCode::Io.name())
                    .field("class", "io")
                    .field("reason", error.to_string());
                let _ = self.out.flush();
                output::complain(path, format_args!("cannot migrate: {error}"));
                (None, json)
            }
        };
        let text = if self.args.json { Some(json.finish()) } else { line };
        if let Some(text) = text {
            self.write(&format!("{text}\n"));
        }
    }

    fn write(&mut self, text: &str) {
        if !self.output_failed && self.out.write_all(text.as_bytes()).is_err() {
            self.output_failed = true;
        }
    }

    fn finish(mut self) -> u8 {
        let status = if self.unreadable > 0 || self.output_failed {
            EXIT_ERROR
        } else if self.left_alone > 0 || self.kept_lines > 0 || (!self.args.write && self.rewritten > 0) {
            // A dry run that finds work to do fails, so it can gate a job (as `black --check`).
            EXIT_INVALID
        } else {
            EXIT_OK
        };
        let text = if self.args.json {
            let summary = JsonObject::new()
                .field("write", self.args.write)
                .field(if self.args.write { "rewritten" } else { "would_rewrite" }, self.rewritten)
                .field("unchanged", self.unchanged)
                .field("left_alone", self.left_alone)
                .field("kept_invalid_lines", self.kept_lines)
                .field("skipped", self.skipped)
                .field("io_errors", self.unreadable)
                .field("exit_status", status);
            format!("{}\n", JsonObject::new().object("summary", summary).finish())
        } else {
            let mut text = format!(
                "\n{}: {} {}, {} unchanged (already v5), {} left alone (cannot be migrated), {} skipped",
                if self.args.write { "migration" } else { "dry run" },
                self.rewritten,
                if self.args.write { "rewritten" } else { "to rewrite" },
                self.unchanged,
                self.left_alone,
                self.skipped,
            );
            if self.kept_lines > 0 {
                let lines = if self.kept_lines == 1 { "line" } else { "lines" };
                text.push_str(&format!(", {} invalid envelope {lines} kept as they were", self.kept_lines));
            }
            if self.unreadable > 0 {
                text.push_str(&format!(", {} unreadable", self.unreadable));
            }
            text.push('\n');
            if !self.args.write && self.rewritten > 0 {
                text.push_str("nothing was written; run again with --write to apply\n");
            }
            text
        };
        self.write(&text);
        if self.out.flush().is_err() {
            return EXIT_ERROR;
        }
        status
    }
}

fn with_notes(mut line: String, notes: &[String]) -> String {
    for note in notes {
        line.push_str("\n              ");
        line.push_str(note);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use membrane_frame::frame::{MAGIC_V2, MAGIC_V4, MAGIC_V5};
    use membrane_frame::migrate::plan_frame_migration;
    use membrane_frame::ReadOptions;

    /// The header-only decision agrees with the library's `plan_frame_migration` on
    /// which frames are rewritten, refused for a mismatched schema, or judged as they are.
    #[test]
    fn frame_plans_agree_with_the_library() {
        let v5 = membrane_frame::example_frame();
        for magic in [MAGIC_V2, MAGIC_V4, MAGIC_V5, [0xC0, 0xDE, 0x01, 0x03], *b"JUNK"] {
            let magic: [u8; 4] = magic;
            for schema in [0u16, 2, 3, 4, 5, 0x0104] {
                let mut bytes = v5.clone();
                bytes[..4].copy_from_slice(&magic);
                bytes[4..6].copy_from_slice(&schema.to_le_bytes());
                let library = plan_frame_migration(&bytes, &ReadOptions::new());
                let ours = frame_plan(&bytes, bytes.len() as u64).migratable();
                match ours {
                    Ok(kind) if kind.needs_migration() => {
                        assert!(library.is_ok_and(|plan| plan.rewrites()), "{magic:?} {schema}")
                    }
                    Err(err) => assert_eq!(library, Err(err), "{magic:?} {schema}"),
                    Ok(_) => {
                        let reader = membrane_frame::Frame::parse_with(&bytes, &ReadOptions::new()).map(|_| ());
                        assert_eq!(library.map(|_| ()), reader, "{magic:?} {schema}");
                    }
                }
            }
        }
        for cut in 0..MIN_FRAME_PREFIX {
            let mut bytes = v5[..cut].to_vec();
            if cut >= 5 {
                bytes[3] = 4;
                bytes[4] = 4;
            }
            assert_eq!(frame_plan(&bytes, cut as u64), HeaderKind::Foreign);
            assert!(plan_frame_migration(&bytes, &ReadOptions::new()).is_err());
        }
    }
}
