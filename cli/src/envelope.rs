//! `envelope check FILE...`: validate v5 JSON envelopes (SPEC §3), one per `.json`
//! file or one per line of a JSON-lines file.

use crate::cli::{EnvelopeCheckArgs, EnvelopeFormat};
use crate::lines::{self, Line};
use crate::output::{self, JsonObject};
use crate::problem::Problem;
use crate::walk::{self, Found, Order};
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::envelope::FragmentMessage;
use membrane_frame::ErrorCode;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

/// Largest single-envelope file read.
const MAX_FILE: u64 = 64 << 20;

/// Whether a path names a JSON-lines file.
pub fn is_json_lines(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "ndjson"))
}

fn is_json(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("json")
}

struct Checker<'a> {
    args: &'a EnvelopeCheckArgs,
    out: io::BufWriter<io::Stdout>,
    valid: usize,
    invalid: usize,
    unreadable: usize,
    blank: usize,
    codes: BTreeMap<&'static str, usize>,
}

pub fn run(args: &EnvelopeCheckArgs) -> u8 {
    // Directories: the .json and .jsonl files below them.
    let found = walk::walk(&args.files, Order::Name, |path| is_json(path) || is_json_lines(path)).stdin(true);
    let mut checker = Checker {
        args,
        out: io::BufWriter::new(io::stdout()),
        valid: 0,
        invalid: 0,
        unreadable: 0,
        blank: 0,
        codes: BTreeMap::new(),
    };
    for item in found {
        match item {
            Found::File { path } => checker.check_file(&path),
            Found::Unreadable { path, error } => checker.unreadable(&path, &error),
            Found::Skipped { path, reason } => checker.skipped(&path, reason),
        }
    }
    checker.finish()
}

impl Checker<'_> {
    fn check_file(&mut self, path: &Path) {
        let lines = match self.args.format {
            EnvelopeFormat::Json => false,
            EnvelopeFormat::Jsonl => true,
            EnvelopeFormat::Auto => is_json_lines(path),
        };
        let result = if lines { self.check_lines(path) } else { self.check_whole(path) };
        if let Err(err) = result {
            self.unreadable(path, &err);
        }
    }

    fn check_whole(&mut self, path: &Path) -> io::Result<()> {
        let text = crate::fsutil::read_limited(path, MAX_FILE)?;
        // A final line break is the file's, not the envelope's: `canonical` compares
        // the envelope text with what `to_bytes` writes.
        let text = text.strip_suffix(b"\n").map(|t| t.strip_suffix(b"\r").unwrap_or(t)).unwrap_or(&text);
        let verdict = FragmentMessage::parse(text).map(|message| message.is_canonical());
        self.record(path, None, verdict.map_err(Problem::from));
        Ok(())
    }

    fn check_lines(&mut self, path: &Path) -> io::Result<()> {
        let input: Box<dyn Read> =
            if walk::is_stdin(path) { Box::new(io::stdin().lock()) } else { Box::new(File::open(path)?) };
        let mut reader = BufReader::with_capacity(1 << 16, input);
        let mut number = 0u64;
        while let Some(line) = lines::next_line(&mut reader)? {
            number += 1;
            if line.is_blank() && !line.too_long {
                self.blank += 1;
                continue;
            }
            self.record(path, Some(number), check_line(&line));
        }
        Ok(())
    }

    fn record(&mut self, path: &Path, line: Option<u64>, verdict: Result<bool, Problem>) {
        let code = match &verdict {
            Ok(_) => "ok",
            Err(err) => err.code().name(),
        };
        *self.codes.entry(code).or_default() += 1;
        let text = if self.args.json {
            let object = JsonObject::new().path(path).maybe("line", line);
            let object = match &verdict {
                Ok(canonical) => object.field("code", "ok").field("class", "ok").field("canonical", *canonical),
                Err(err) => object.error(err),
            };
            Some(object.finish())
        } else {
            verdict.as_ref().err().map(|err| {
                let place = line.map_or_else(|| path.display().to_string(), |n| format!("{}:{n}", path.display()));
                let hint =
                    if err.code() == ErrorCode::EnvelopeVersion { " (a legacy envelope? see `migrate`)" } else { "" };
                format!("{place}: {}{hint}", output::frame_error(err))
            })
        };
        match verdict {
            Ok(_) => self.valid += 1,
            Err(_) => self.invalid += 1,
        }
        if let Some(text) = text {
            let _ = writeln!(self.out, "{text}");
        }
    }

    /// An entry left alone (a FIFO, a symlink loop): a line of its own with `--json`.
    fn skipped(&mut self, path: &Path, reason: &str) {
        if self.args.json {
            let line = JsonObject::new()
                .path(path)
                .field("code", "skipped")
                .field("class", "skipped")
                .field("reason", reason)
                .finish();
            let _ = writeln!(self.out, "{line}");
        } else {
            let _ = self.out.flush();
            output::complain(path, format_args!("skipped: {reason}"));
        }
    }

    fn unreadable(&mut self, path: &Path, err: &io::Error) {
        self.unreadable += 1;
        *self.codes.entry(ErrorCode::Io.name()).or_default() += 1;
        if self.args.json {
            let line = JsonObject::new()
                .path(path)
                .field("code", ErrorCode::Io.name())
                .field("class", "io")
                .field("reason", err.to_string())
                .finish();
            let _ = writeln!(self.out, "{line}");
        } else {
            let _ = self.out.flush();
            output::complain(path, format_args!("cannot read: {err}"));
        }
    }

    fn finish(mut self) -> u8 {
        let status = if self.unreadable > 0 {
            EXIT_ERROR
        } else if self.invalid > 0 {
            EXIT_INVALID
        } else {
            EXIT_OK
        };
        let mut codes: Vec<(&str, usize)> = self.codes.iter().map(|(&k, &v)| (k, v)).collect();
        codes.sort_by_key(|&(code, _)| {
            if code == "ok" {
                0
            } else {
                ErrorCode::from_name(code).map_or(u32::MAX, ErrorCode::number)
            }
        });
        let text = if self.args.json {
            let mut by_code = JsonObject::new();
            for (code, count) in &codes {
                by_code = by_code.field(code, *count);
            }
            let summary = JsonObject::new()
                .field("envelopes", self.valid + self.invalid)
                .field("ok", self.valid)
                .field("invalid", self.invalid)
                .field("io_errors", self.unreadable)
                .field("blank_lines", self.blank)
                .object("codes", by_code)
                .field("exit_status", status);
            format!("{}\n", JsonObject::new().object("summary", summary).finish())
        } else {
            let checked = output::plural(self.valid + self.invalid, "envelope");
            let mut text = format!("\nchecked {checked}: {} valid, {} invalid", self.valid, self.invalid);
            if self.unreadable > 0 {
                text.push_str(&format!(", {} unreadable", self.unreadable));
            }
            if self.blank > 0 {
                text.push_str(&format!(" ({} blank lines ignored)", self.blank));
            }
            text.push('\n');
            for (code, count) in &codes {
                text.push_str(&format!("  {code:<24} {count:>7}\n"));
            }
            text
        };
        if write!(self.out, "{text}").and_then(|()| self.out.flush()).is_err() {
            return EXIT_ERROR;
        }
        status
    }
}

fn check_line(line: &Line) -> Result<bool, Problem> {
    if line.too_long {
        return Err(Problem::LineTooLong);
    }
    Ok(FragmentMessage::parse(&line.content)?.is_canonical())
}
