//! `membrane-frame`: verify, inspect, pack, unpack and migrate Membrane v5 frames and
//! envelopes.
//!
//! Exit status everywhere: 0 all good, 1 something was invalid (a damaged or foreign
//! file, an identity that breaks the rules), 2 a usage or I/O error.

// The only unsafe code: the memory maps in `mapped` and their SIGBUS handler (each
// block with a SAFETY note).
#![deny(unsafe_code)]

mod batch_io;
mod cli;
mod demo;
mod docs;
mod envelope;
mod fsutil;
mod inspect;
mod io;
mod lines;
mod mapped;
mod migrate;
mod output;
mod pack;
mod problem;
mod progress;
mod verify;
mod walk;

use clap::Parser;
use std::process::ExitCode;

/// Everything went as hoped.
pub const EXIT_OK: u8 = 0;
/// At least one input was invalid (a frame that failed verification, a bad identity).
pub const EXIT_INVALID: u8 = 1;
/// A usage error or an I/O error (unreadable file, directory without permission).
pub const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let status = match args.command {
        cli::Command::Verify(args) => verify::run(&args),
        cli::Command::Inspect(args) => inspect::run(&args),
        cli::Command::Pack(args) => pack::run_pack(&args),
        cli::Command::Unpack(args) => pack::run_unpack(&args),
        cli::Command::Fingerprint(args) => pack::run_fingerprint(&args),
        cli::Command::Migrate(args) => migrate::run(&args),
        cli::Command::Envelope(cli::EnvelopeCommand::Check(args)) => envelope::run(&args),
        cli::Command::Demo(args) => demo::run(&args),
        cli::Command::Completions(args) => docs::completions(args.shell),
        cli::Command::Man => docs::man(),
    };
    ExitCode::from(status)
}
