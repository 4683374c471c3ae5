//! `completions SHELL` and `man`: the shell completion scripts (clap_complete) and the
//! roff manual page (clap_mangen), generated from the one clap definition in `cli`.

use crate::cli::Cli;
use crate::output;
use crate::{EXIT_ERROR, EXIT_OK};
use clap::CommandFactory;
use std::io::{self, Write};

pub fn completions(shell: clap_complete::Shell) -> u8 {
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "membrane-frame", &mut text);
    print(&text)
}

pub fn man() -> u8 {
    let mut text = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut text) {
        Ok(()) => print(&text),
        Err(err) => {
            output::complain_plain(format_args!("cannot render the manual page: {err}"));
            EXIT_ERROR
        }
    }
}

/// Write to stdout; a closed pipe (`| head`) is not an error worth a message.
fn print(text: &[u8]) -> u8 {
    let mut out = io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(err) => {
            output::complain_plain(format_args!("cannot write to standard output: {err}"));
            EXIT_ERROR
        }
    }
}
