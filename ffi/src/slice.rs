//! Byte ranges and strings crossing the boundary: input ranges and strings from C,
//! output buffers, decoded strings and NUL-terminated names into C memory.

use crate::boundary::boundary;
use crate::frame::mbr_bytes;
use crate::out::Out;
use crate::status::mbr_error;
use core::ffi::c_char;
use membrane::json::JsonStr;
use membrane::{Error, Sha256Digest};

/// UTF-8 text given by pointer and length (no NUL needed; `{NULL, 0}` is `""`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_str {
    /// The bytes.
    pub ptr: *const c_char,
    /// Their number.
    pub len: usize,
}

impl mbr_str {
    /// A static Rust string as an `mbr_str`.
    #[cfg(feature = "migrate")]
    pub(crate) const fn from_static(text: &'static str) -> mbr_str {
        mbr_str { ptr: text.as_ptr().cast(), len: text.len() }
    }
}

/// A caller's input range `argument`: `(NULL, 0)` is empty, `(NULL, n > 0)` is
/// `null_pointer`.
///
/// Contract (of the calling entry point): a non-NULL `ptr` points to `len` readable,
/// initialised values of `T`, aligned, alive and unchanged for `'a`.
pub(crate) fn input<'a, T>(ptr: *const T, len: usize, argument: &'static str) -> Result<&'a [T], Error> {
    if ptr.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(Error::null_pointer(argument)) };
    }
    // SAFETY: non-NULL, and the contract guarantees `len` readable values for 'a.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// A caller's list of byte ranges `argument`, each range checked (`{NULL, n > 0}` is
/// `null_pointer`) before any is used, so that a bad one leaves nothing half done.
/// Contract as for [`input`], for every range of the list.
pub(crate) fn byte_ranges<'a>(list: &'a [mbr_bytes], argument: &'static str) -> Result<ByteRanges<'a>, Error> {
    for range in list {
        input(range.ptr, range.len, argument)?;
    }
    Ok(ByteRanges(list))
}

/// Byte ranges that [`byte_ranges`] checked.
#[derive(Clone, Copy)]
pub(crate) struct ByteRanges<'a>(&'a [mbr_bytes]);

impl<'a> ByteRanges<'a> {
    /// The ranges as slices, in order (none can fail: each was checked).
    pub(crate) fn slices(self) -> impl Iterator<Item = &'a [u8]> + Clone {
        self.0.iter().map(|range| input(range.ptr, range.len, "").unwrap_or(&[]))
    }
}

/// A copy of the struct `argument` at `ptr` (`mbr_identity_values`, ...), or
/// `null_pointer`. Contract as for [`input`] with one value.
pub(crate) fn value_of<T: Copy>(ptr: *const T, argument: &'static str) -> Result<T, Error> {
    input(ptr, 1, argument)?.first().copied().ok_or(Error::null_pointer(argument))
}

/// A caller's output buffer `argument`: `(NULL, 0)` is empty, `(NULL, n > 0)` is
/// `null_pointer`.
///
/// Contract (of the calling entry point): a non-NULL `ptr` points to `len` writable
/// values of `T`, aligned, initialised (any bit pattern of `T` is fine: `u8`, `i64`,
/// `c_char`), not aliased by anything else for `'a`.
pub(crate) fn output<'a, T>(ptr: *mut T, len: usize, argument: &'static str) -> Result<&'a mut [T], Error> {
    if ptr.is_null() {
        return if len == 0 { Ok(&mut []) } else { Err(Error::null_pointer(argument)) };
    }
    // SAFETY: non-NULL, and the contract guarantees `len` writable, unaliased values.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// The UTF-8 text of `value`, or `invalid_argument`. Contract as for [`input`].
pub(crate) fn text<'a>(value: mbr_str, argument: &'static str) -> Result<&'a str, Error> {
    let bytes = input(value.ptr.cast::<u8>(), value.len, argument)?;
    core::str::from_utf8(bytes).map_err(|_| Error::invalid_argument(argument, "string is not UTF-8"))
}

/// A C character buffer as bytes (`c_char` is `i8` or `u8`: same size and alignment).
#[cfg(feature = "cluster")]
pub(crate) fn bytes_of(chars: &mut [c_char]) -> &mut [u8] {
    let len = chars.len();
    output(chars.as_mut_ptr().cast::<u8>(), len, "buf").unwrap_or_default()
}

/// Copy the decoded value of `value` and a NUL into `buf`; returns the length without
/// the NUL, or `buffer_too_small` (length + 1, field `buf`) with `buf` untouched.
pub(crate) fn copy_decoded(value: &JsonStr<'_>, buf: &mut [u8]) -> Result<usize, Error> {
    let too_small = |needed: usize| Error::buffer_too_small(needed as u64).in_field("buf");
    let needed = value.decoded_len().saturating_add(1);
    let (nul, text) = buf.get_mut(..needed).and_then(<[u8]>::split_last_mut).ok_or(too_small(needed))?;
    let written = value.decode_into(text).map_err(|n| too_small(n.saturating_add(1)))?;
    *nul = 0;
    Ok(written)
}

/// The shape of every writer into a caller buffer: `write` fills `buf` (`capacity`
/// bytes; `(NULL, 0)` asks for the length) and returns the length for `*out_len`. A
/// buffer that is too small is `buffer_too_small` naming `buf` (`needed` in `*error`),
/// with `buf` left untouched by the core's writers. Contract as for [`output`] and
/// `Out::new`.
pub(crate) fn write_out(
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
    write: impl FnOnce(&mut [u8]) -> Result<usize, Error>,
) -> u32 {
    boundary(error, || {
        let out_len = Out::new(out_len, "out_len")?;
        let buf = output(buf, capacity, "buf")?;
        out_len.write(write(buf).map_err(|err| in_buffer(err, "buf"))?);
        Ok(())
    })
}

/// The convention of the calls that write into a buffer but have no `mbr_error`:
/// `*written` gets the length written, or — on `buffer_too_small`, with the buffer
/// untouched — the length needed (`(NULL, 0)` asks for it).
#[cfg(any(feature = "envelope", feature = "cluster"))]
pub(crate) fn report_written(written: Out<'_, usize>, result: Result<usize, Error>) -> Result<(), Error> {
    match result {
        Ok(len) => written.write(len),
        Err(err) => {
            if let Some(needed) = err.needed().filter(|_| err.code() == membrane::ErrorCode::BufferTooSmall) {
                written.write(usize::try_from(needed).unwrap_or(usize::MAX));
            }
            return Err(err);
        }
    }
    Ok(())
}

/// `buffer_too_small` errors of the core name no argument: name the C buffer.
pub(crate) fn in_buffer(err: Error, argument: &'static str) -> Error {
    match err.code() {
        membrane::ErrorCode::BufferTooSmall => err.in_field(argument),
        _ => err,
    }
}

/// Width of a NUL-terminated name in the static name tables.
pub(crate) const NAME_WIDTH: usize = 32;

/// `name` followed by NUL bytes, at compile time.
#[allow(clippy::indexing_slicing)] // const evaluation: an out-of-range index fails the build
pub(crate) const fn c_name<const WIDTH: usize>(name: &str) -> [u8; WIDTH] {
    let bytes = name.as_bytes();
    assert!(bytes.len() < WIDTH, "name too long for the C table");
    let mut out = [0u8; WIDTH];
    let mut i = 0;
    while i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// A static table of NUL-terminated names, indexed as the list it was made from.
pub(crate) struct NameTable<const N: usize, const WIDTH: usize>(pub(crate) [[u8; WIDTH]; N]);

impl<const N: usize, const WIDTH: usize> NameTable<N, WIDTH> {
    /// Name `index` as a C string, or `fallback`.
    pub(crate) fn get(&'static self, index: usize, fallback: &'static core::ffi::CStr) -> *const c_char {
        self.0.get(index).map_or(fallback.as_ptr(), |name| name.as_ptr().cast())
    }
}

/// `name_table!(Dtype::ALL, name, WIDTH)`: the NUL-terminated `name()` of every value
/// of a list, as a [`NameTable`] built at compile time.
macro_rules! name_table {
    ($all:expr, $name:ident, $width:expr) => {{
        const N: usize = $all.len();
        let mut table = [[0u8; $width]; N];
        let mut i = 0;
        while i < N {
            table[i] = $crate::slice::c_name::<{ $width }>($all[i].$name());
            i += 1;
        }
        $crate::slice::NameTable(table)
    }};
}
pub(crate) use name_table;

/// 64 lower-case hex digits and a NUL.
pub(crate) fn hex65(digest: &Sha256Digest) -> [c_char; 65] {
    let mut hex = [0 as c_char; 65];
    for (slot, &digit) in hex.iter_mut().zip(digest.to_hex().as_bytes()) {
        *slot = digit as c_char;
    }
    hex
}
