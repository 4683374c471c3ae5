//! Baseline for `scripts/bench-verify.sh`: raw single-core `sha2` over the bytes of
//! the given files, one SHA-256 per file, timed two ways:
//!
//! * `read`: each file read through a fixed 128 KiB buffer (the same I/O path
//!   `membrane-frame verify` uses), hashed as it is read;
//! * `memory`: every file read into memory first, then only the hashing is timed
//!   (the pure hashing speed of this core).
//!
//! Prints one JSON object per mode: `{"baseline": "sha2-read", "bytes": ..., "seconds": ...}`.
//!
//! Run: `cargo run --release -p membrane-frame-cli --example sha2_baseline -- FILE...`

use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::time::Instant;

fn main() -> std::io::Result<()> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: sha2_baseline FILE...");
        std::process::exit(2);
    }
    // Page-aligned, as `verify`'s buffer is: a buffer 16 bytes past a page boundary
    // (where malloc puts a fresh 128 KiB block) makes the kernel's copy out of the page
    // cache three times slower on this machine, which would flatter every ratio.
    let mut backing = vec![0u8; (128 << 10) + 4096];
    let start = (4096 - backing.as_ptr() as usize % 4096) % 4096;
    let buf = &mut backing[start..start + (128 << 10)];
    let mut sink = 0u8;

    let start = Instant::now();
    let mut total = 0u64;
    for path in &paths {
        let mut file = File::open(path)?;
        let mut hasher = Sha256::new();
        loop {
            let n = file.read(buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            total += n as u64;
        }
        sink ^= hasher.finalize()[0];
    }
    report("sha2-read", total, start.elapsed().as_secs_f64());

    let mut contents = Vec::with_capacity(paths.len());
    for path in &paths {
        contents.push(std::fs::read(path)?);
    }
    let start = Instant::now();
    for bytes in &contents {
        sink ^= Sha256::digest(bytes)[0];
    }
    let total: u64 = contents.iter().map(|c| c.len() as u64).sum();
    report("sha2-memory", total, start.elapsed().as_secs_f64());
    // Keep the digests observable so nothing is optimised away.
    if sink == 0x5a {
        eprintln!("(digest byte {sink})");
    }
    Ok(())
}

fn report(name: &str, bytes: u64, seconds: f64) {
    use std::io::Write;
    let per_second = bytes as f64 / seconds;
    let line = format!(
        "{{\"baseline\": \"{name}\", \"bytes\": {bytes}, \"seconds\": {seconds:.6}, \"bytes_per_second\": {per_second:.0}}}"
    );
    // A closed pipe (`| head -1`) ends the output quietly.
    let _ = writeln!(std::io::stdout(), "{line}");
}
