//! File-system helpers: atomic replacement (SPEC §5/§7: temp file in the same
//! directory, fsync, rename, fsync the directory), unique temporary names, bounded
//! reads.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A name no other process or call of this one will pick: pid, time and a counter.
pub fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{:x}.{count}", std::process::id(), nanos & 0xFFFF_FFFF_FFFF)
}

/// The directory a path's file lives in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The temporary file name used while replacing `target`: hidden, in the same
/// directory, ending in `.tmp` (so a sweep can find leftovers of a crash).
pub fn temp_path_for(target: &Path) -> PathBuf {
    let name = target.file_name().map_or_else(|| "out".into(), |name| name.to_string_lossy().into_owned());
    parent_dir(target).join(format!(".{name}.{}.tmp", unique_suffix()))
}

/// Write `target` atomically: `fill` writes the content into a fresh temporary file in
/// the same directory, then `check` may inspect the finished temporary file; only then
/// is it fsynced and renamed over `target`, and the directory fsynced. On any error the
/// temporary file is removed and `target` is untouched. A crash at any moment leaves
/// either the old or the new complete file (and at worst a stray `.*.tmp`).
pub fn replace_atomically<T>(
    target: &Path,
    permissions: Option<fs::Permissions>,
    fill: impl FnOnce(&mut File) -> io::Result<T>,
    check: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<T> {
    let temp = temp_path_for(target);
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temp).map_err(about_directory(target))?;
        let value = fill(&mut file)?;
        file.flush()?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        drop(file);
        check(&temp)?;
        fs::rename(&temp, target).map_err(about_directory(target))?;
        sync_dir(&parent_dir(target))?;
        Ok(value)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// An error creating or renaming a file in `target`'s directory is about the directory
/// (a read-only directory, a full disk): say so, rather than "Permission denied" next to
/// a file that may be perfectly readable.
fn about_directory(target: &Path) -> impl Fn(io::Error) -> io::Error + '_ {
    move |err| {
        let dir = parent_dir(target);
        io::Error::new(err.kind(), format!("cannot write a new file in the directory {}: {err}", dir.display()))
    }
}

/// fsync a directory so a rename in it is durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Read a whole file (or standard input for `-`), refusing more than `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let bytes = read_prefix(path, limit + 1)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes")));
    }
    Ok(bytes)
}

/// The first `limit` bytes of a file (or standard input for `-`), or all of it if shorter.
pub fn read_prefix(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_input(path)?.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A directory removed (with everything in it) when dropped, unless kept.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl TempDir {
    pub fn new(prefix: &str) -> io::Result<TempDir> {
        let path = std::env::temp_dir().join(format!("{prefix}-{}", unique_suffix()));
        fs::create_dir_all(&path)?;
        Ok(TempDir { path, keep: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// A copy of standard input in a temporary file, removed when dropped: for the commands
/// that need to know a stream's length first (`pack --payload -`) or read it twice
/// (`inspect -`). The copy goes through a fixed buffer, so memory stays bounded
/// whatever comes in.
#[derive(Debug)]
pub struct Spooled {
    path: PathBuf,
}

impl Spooled {
    /// Copy standard input to a new hidden file in `dir`.
    pub fn stdin(dir: &Path) -> io::Result<Spooled> {
        let path = dir.join(format!(".membrane-frame-stdin.{}.tmp", unique_suffix()));
        let mut file = OpenOptions::new().write(true).create_new(true).open(&path)?;
        let spooled = Spooled { path };
        io::copy(&mut io::stdin().lock(), &mut file)?;
        file.flush()?;
        Ok(spooled)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Standard input for `-`, else the file.
pub fn open_input(path: &Path) -> io::Result<Box<dyn Read>> {
    if crate::walk::is_stdin(path) {
        Ok(Box::new(io::stdin().lock()))
    } else {
        Ok(Box::new(File::open(path)?))
    }
}
