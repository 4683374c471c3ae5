//! Read-only maps of part of a file that survive the file shrinking under them.
//!
//! Reading a mapped page that another process has truncated away raises SIGBUS, whose
//! default action kills the process: one file cut short would end the whole run. So
//! each [`Window`] enters its address range in a table of this thread's windows, and
//! the SIGBUS handler (installed once, at the first map) looks the faulting address up
//! there. Found: it maps zero pages over the rest of that window, so the read goes on,
//! and marks the window [`lost`](Window::lost); the caller then gives that file an `io`
//! verdict instead of the verdict on the zeros. Not found: the fault is not ours, so the
//! handler puts back the disposition it replaced and returns, and the fault repeats
//! under it. A SIGBUS from a memory fault goes to the thread that faulted, which is why
//! a thread-local table is enough.
//!
//! Linux only (where the handler's address lookup is written); elsewhere
//! [`Window::map`] says it is unsupported and the callers read instead.

use std::fs::File;
use std::io;
use std::marker::PhantomData;

/// Windows a thread may have mapped at once: a batch worker's lanes (at most sixteen),
/// with room to spare.
const SLOTS: usize = 32;

/// Part of a file, mapped read-only.
#[derive(Debug)]
pub struct Window {
    map: memmap2::Mmap,
    slot: usize,
    /// Not `Send`: its slot is in the table of the thread that mapped it, the thread
    /// whose reads of it the handler can recognise.
    _thread: PhantomData<*const ()>,
}

impl Window {
    /// Map `len` bytes of `file` from `offset` (a multiple of the page size; `len` at
    /// least 1). Fails where the file cannot be mapped (some file systems), on systems
    /// without the SIGBUS guard, and when this thread already has [`SLOTS`] windows.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    pub fn map(file: &File, offset: u64, len: usize) -> io::Result<Window> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "an empty window"));
        }
        guard::install()?;
        // SAFETY: the map is read-only and private to this `Window`, and its slices do
        // not outlive it. A truncation by another process while it is mapped raises
        // SIGBUS at the next read of a lost page; the handler (`guard`) finds the window
        // in this thread's table, which `enter` fills before any byte of it is read, and
        // makes the read see zeros instead.
        let map = unsafe { memmap2::MmapOptions::new().offset(offset).len(len).map(file)? };
        let slot = guard::enter(map.as_ptr() as usize, map.len())
            .ok_or_else(|| io::Error::other("too many memory-mapped windows on one thread"))?;
        Ok(Window { map, slot, _thread: PhantomData })
    }

    #[cfg(not(target_os = "linux"))]
    pub fn map(_file: &File, _offset: u64, _len: usize) -> io::Result<Window> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "memory-mapped reading is only guarded on Linux"))
    }

    /// The mapped bytes (zeros from the first lost page on, once [`lost`](Self::lost)).
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether a read of this window faulted (the file shrank, or a page could not be
    /// read from the device): its bytes are not the file's.
    pub fn lost(&self) -> bool {
        guard::lost(self.slot)
    }
}

impl Drop for Window {
    /// Leave the table before the map goes (`map` is dropped after this runs).
    fn drop(&mut self) {
        guard::leave(self.slot);
    }
}

/// The pages a fault at `address` loses of a window ending at `end`: from the faulting
/// page to the window's last page, whole pages of `page` bytes (the system's: 4 KiB on
/// x86-64, 4, 16 or 64 KiB on aarch64), which the handler maps zeros over.
#[cfg(target_os = "linux")]
fn lost_pages(address: usize, end: usize, page: usize) -> std::ops::Range<usize> {
    (address & !(page - 1))..((end + page - 1) & !(page - 1))
}

/// The table of this thread's windows and the SIGBUS handler that reads it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod guard {
    use super::SLOTS;
    use std::io;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::OnceLock;

    /// One window's address range; `end` 0 is a free slot. Atomics, because the signal
    /// handler writes `lost` between two instructions of the thread it interrupts.
    struct Slot {
        start: AtomicUsize,
        end: AtomicUsize,
        lost: AtomicBool,
    }

    thread_local! {
        // Constant-initialised and without a destructor: reading it in the signal
        // handler allocates nothing and takes no lock.
        static WINDOWS: [Slot; SLOTS] = const {
            [const { Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), lost: AtomicBool::new(false) } }; SLOTS]
        };
    }

    /// The disposition the handler replaced, and the page size, read before it is
    /// installed (neither `sysconf` nor an allocation in the handler).
    static PREVIOUS: OnceLock<io::Result<(libc::sigaction, usize)>> = OnceLock::new();

    pub(super) fn install() -> io::Result<()> {
        match PREVIOUS.get_or_init(install_handler) {
            Ok(_) => Ok(()),
            Err(err) => Err(io::Error::new(err.kind(), format!("cannot guard memory maps against SIGBUS: {err}"))),
        }
    }

    fn install_handler() -> io::Result<(libc::sigaction, usize)> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
        if !page.is_power_of_two() {
            return Err(io::Error::other("no page size"));
        }
        // SAFETY: all-zero `sigaction`s are valid (no handler, no flags, an empty mask).
        // The handler is an `extern "C"` function that calls only async-signal-safe
        // functions (mmap, sigaction) and reads `PREVIOUS`, which is set before any
        // window exists, hence before the handler can run for one.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction =
                on_sigbus as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok((previous, page))
        }
    }

    /// The slot now holding `[start, start + len)`, if one is free.
    pub(super) fn enter(start: usize, len: usize) -> Option<usize> {
        WINDOWS.with(|slots| {
            let (at, slot) = slots.iter().enumerate().find(|(_, slot)| slot.end.load(Ordering::Relaxed) == 0)?;
            slot.lost.store(false, Ordering::Relaxed);
            slot.start.store(start, Ordering::Relaxed);
            slot.end.store(start + len, Ordering::Release);
            Some(at)
        })
    }

    pub(super) fn leave(at: usize) {
        WINDOWS.with(|slots| {
            if let Some(slot) = slots.get(at) {
                slot.end.store(0, Ordering::Release);
            }
        });
    }

    pub(super) fn lost(at: usize) -> bool {
        WINDOWS.with(|slots| slots.get(at).is_some_and(|slot| slot.lost.load(Ordering::Acquire)))
    }

    extern "C" fn on_sigbus(_signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
        let Some(Ok((previous, page))) = PREVIOUS.get() else {
            // Only between `sigaction` and the `OnceLock` being set, when no window
            // exists yet: the fault is not ours, so it repeats under the default action.
            // SAFETY: an all-zero `sigaction` is SIG_DFL with no flags and an empty mask.
            unsafe {
                let default: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
            }
            return;
        };
        // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler; for
        // SIGBUS `si_addr` is the faulting address.
        let address = unsafe { (*info).si_addr() } as usize;
        let patched = WINDOWS.with(|slots| {
            let Some(slot) = slots
                .iter()
                .find(|slot| (slot.start.load(Ordering::Relaxed)..slot.end.load(Ordering::Acquire)).contains(&address))
            else {
                return false;
            };
            let lost = super::lost_pages(address, slot.end.load(Ordering::Relaxed), *page);
            let (from, to) = (lost.start, lost.end);
            // SAFETY: [from, to) lies inside this window's map (which the kernel sized
            // in whole pages), which the `Window` owns and unmaps only after leaving the
            // table; replacing those pages with private zero pages changes what its
            // slices read but leaves every address valid.
            let zeros = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    to - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros == libc::MAP_FAILED {
                return false;
            }
            slot.lost.store(true, Ordering::Release);
            true
        });
        if !patched {
            // SAFETY: `previous` is the valid disposition `sigaction` returned; restoring
            // it lets the repeated fault take its course as if this handler were absent.
            unsafe {
                libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
            }
        }
    }
}

/// No guard where no window can be mapped.
#[cfg(not(target_os = "linux"))]
mod guard {
    pub(super) fn leave(_at: usize) {}

    pub(super) fn lost(_at: usize) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::fsutil::TempDir;
    use std::path::PathBuf;

    /// A file of `len` bytes (1, 2, ..., 251, 1, ...) in `dir`, opened for reading.
    fn file_of(dir: &TempDir, name: &str, len: usize) -> (PathBuf, File) {
        let path = dir.path().join(name);
        std::fs::write(&path, (0..len).map(|i| (i % 251) as u8 + 1).collect::<Vec<u8>>()).unwrap();
        let file = File::open(&path).unwrap();
        (path, file)
    }

    /// This system's page size: windows start on it, and faults come in its units.
    fn page() -> usize {
        #[allow(unsafe_code)]
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(page).unwrap()
    }

    #[test]
    fn a_window_reads_its_part_of_the_file_and_is_not_lost() {
        let page = page();
        let dir = TempDir::new("membrane-mapped").unwrap();
        let (_, file) = file_of(&dir, "f", 3 * page + 5);
        let window = Window::map(&file, page as u64, 2 * page + 5).unwrap();
        assert_eq!(window.bytes().len(), 2 * page + 5);
        assert_eq!(window.bytes()[0], (page % 251) as u8 + 1);
        assert_eq!(*window.bytes().last().unwrap(), ((3 * page + 4) % 251) as u8 + 1);
        assert!(!window.lost());
    }

    #[test]
    fn a_window_truncated_under_it_reads_zeros_and_is_lost() {
        let page = page();
        let dir = TempDir::new("membrane-mapped").unwrap();
        let (path, file) = file_of(&dir, "f", 8 * page);
        let window = Window::map(&file, 0, 8 * page).unwrap();
        let (_, other_file) = file_of(&dir, "other", page);
        let other = Window::map(&other_file, 0, page).unwrap();
        assert_eq!(window.bytes()[0], 1);
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(page as u64).unwrap();
        // The first page is still the file's; the fourth is gone: a SIGBUS, then zeros.
        assert_eq!(window.bytes()[1], 2);
        assert!(!window.lost());
        assert_eq!(window.bytes()[3 * page + 1], 0);
        assert!(window.lost());
        assert!(window.bytes()[page..].iter().all(|&byte| byte == 0));
        assert_eq!(window.bytes()[1], 2);
        // The other window on this thread is untouched.
        assert!(!other.lost());
        assert_eq!(other.bytes()[page - 1], ((page - 1) % 251) as u8 + 1);
    }

    /// The handler's page arithmetic at the page sizes Linux uses: from the faulting page
    /// to the end of the window's last page, whole pages.
    #[test]
    fn a_fault_loses_whole_pages_to_the_end_of_the_window_at_any_page_size() {
        for page in [4096, 16 << 10, 64 << 10] {
            let start = 0x7f00_0000_0000 / page * page;
            // A window of 3 pages and 5 bytes; a fault 10 bytes into its second page.
            let end = start + 3 * page + 5;
            let lost = lost_pages(start + page + 10, end, page);
            assert_eq!(lost, start + page..start + 4 * page, "page {page}");
            // A fault in its last, partial page loses that page alone.
            assert_eq!(lost_pages(end - 1, end, page), start + 3 * page..start + 4 * page, "page {page}");
        }
        // The host's page size, as the handler reads it.
        assert!(page().is_power_of_two() && page() >= 4096);
    }

    /// A truncation that ends inside the window's last page removes no page, so no read
    /// faults: the cut-off bytes read as zeros and the window is not lost. On a system
    /// with 64 KiB pages most truncations of a small file are of this kind; the guard
    /// cannot see them, which is why a verdict is given only if the file's size and
    /// times are still those it was opened with (`io::unless_changed`, tested end to end
    /// in tests/changing_files.rs).
    #[test]
    fn a_truncation_inside_the_last_page_reads_zeros_without_a_fault() {
        let page = page();
        let dir = TempDir::new("membrane-mapped").unwrap();
        let (path, file) = file_of(&dir, "f", 2 * page + 100);
        let window = Window::map(&file, 0, 2 * page + 100).unwrap();
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(2 * page as u64 + 40).unwrap();
        assert_eq!(window.bytes()[2 * page + 39], ((2 * page + 39) % 251) as u8 + 1);
        assert!(window.bytes()[2 * page + 40..].iter().all(|&byte| byte == 0));
        assert!(!window.lost());
    }

    #[test]
    fn slots_are_freed_when_windows_drop_and_run_out_while_they_are_held() {
        let dir = TempDir::new("membrane-mapped").unwrap();
        let page = page();
        let (_, file) = file_of(&dir, "f", page);
        for _ in 0..3 * SLOTS {
            drop(Window::map(&file, 0, page).unwrap());
        }
        let held: Vec<Window> = (0..SLOTS).map(|_| Window::map(&file, 0, page).unwrap()).collect();
        let err = Window::map(&file, 0, page).unwrap_err();
        assert!(err.to_string().contains("too many"), "{err}");
        drop(held);
        assert!(Window::map(&file, 0, page).is_ok());
        assert_eq!(Window::map(&file, 0, 0).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
