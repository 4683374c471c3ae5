//! Strings borrowed from a JSON text: validated once by the reader, decoded on demand.

use super::error::{JsonError, JsonErrorKind};
use core::fmt;

/// A JSON string as it stands in the text, without its quotes.
///
/// The reader has already checked it (UTF-8, escapes, surrogate pairs), so decoding can
/// not fail. When [`has_escapes`](Self::has_escapes) is false the raw text *is* the
/// value and [`as_str`](Self::as_str) hands it out without copying.
///
/// ```
/// use membrane_frame::json::JsonStr;
/// let plain = JsonStr::from_plain("llama");
/// assert_eq!(plain.as_str(), Some("llama"));
/// let mut buf = [0u8; 16];
/// assert_eq!(plain.unescape_into(&mut buf), Ok("llama"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JsonStr<'a> {
    raw: &'a str,
    has_escapes: bool,
}

impl<'a> JsonStr<'a> {
    /// A value that is already decoded text (for writers building values from Rust
    /// strings). Any character is allowed; writers escape it.
    pub const fn from_plain(value: &'a str) -> JsonStr<'a> {
        JsonStr { raw: value, has_escapes: false }
    }

    /// Wrap raw JSON string content the reader has validated.
    pub(crate) const fn from_validated(raw: &'a str, has_escapes: bool) -> JsonStr<'a> {
        JsonStr { raw, has_escapes }
    }

    /// The string whose opening quote is at `at` in `text`, validated exactly as the
    /// reader validates strings, and the index after its closing quote; `None` when
    /// `text` holds no valid string there.
    ///
    /// Always in line on 64-bit CPUs: through a call the result came back through
    /// memory, ~30 instructions a string, and the C cursor walk of a 55 188-entry primary
    /// map took 5.0 ms instead of 3.4 ms (AMD EPYC Zen 4). On 32-bit CPUs
    /// (microcontrollers), where flash counts, the compiler decides.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub(crate) fn read_at(text: &'a str, at: usize) -> Option<(JsonStr<'a>, usize)> {
        if text.as_bytes().get(at) != Some(&b'"') {
            return None;
        }
        let (close, has_escapes) = scan_string(text, at + 1).ok()?;
        Some((JsonStr::from_validated(text.get(at + 1..close)?, has_escapes), close + 1))
    }

    /// [`read_at`](Self::read_at) with the error the reader gives, for a string whose
    /// opening quote is known to be at `at`. Out of line: the small-footprint readers
    /// (the identity and nested-value readers) share one copy of the scanner.
    #[inline(never)]
    pub(crate) fn scan_at(text: &'a str, at: usize) -> Result<(JsonStr<'a>, usize), JsonError> {
        let (close, has_escapes) = scan_string(text, at + 1)?;
        Ok((JsonStr::from_validated(text.get(at + 1..close).unwrap_or(""), has_escapes), close + 1))
    }

    /// String content from outside the reader (e.g. a C caller's view of a string it
    /// read before): the text between the quotes, checked as the reader checks strings.
    /// An unescaped `"` is `unexpected_byte` at its offset; a bad escape, a lone
    /// surrogate or a control character is the reader's own error.
    ///
    /// ```
    /// use membrane_frame::json::JsonStr;
    /// assert_eq!(JsonStr::from_raw(r"caf\u00e9").map(|s| s.to_string()), Ok("café".into()));
    /// assert!(JsonStr::from_raw(r"a\qb").is_err());
    /// assert_eq!(JsonStr::from_raw(r#"a"b"#).map_err(|e| e.offset), Err(1));
    /// ```
    pub fn from_raw(raw: &'a str) -> Result<JsonStr<'a>, JsonError> {
        match scan_string(raw, 0) {
            // Only the end of the text stopped the scan: all of it is string content.
            Err(err) if err.kind == JsonErrorKind::UnexpectedEnd && err.offset == raw.len() => {
                Ok(JsonStr { raw, has_escapes: raw.as_bytes().contains(&b'\\') })
            }
            Err(err) => Err(err),
            Ok((quote, _)) => Err(JsonError::new(JsonErrorKind::UnexpectedByte, quote)),
        }
    }

    /// String content from outside the reader, as [`from_raw`](Self::from_raw) takes
    /// it, checked and decoded into `out` in the same pass (one scan instead of
    /// `from_raw`'s and `decode_into`'s): `Ok(Ok(len))`, the value's length;
    /// `Ok(Err(needed))` when `out` is shorter than the value; `Err` at the first problem,
    /// the one `from_raw` reports. Except on `Ok(Ok(_))`, what `out` holds is
    /// unspecified. No value is longer than its raw text (an escape is never shorter
    /// than the character it stands for), so an `out` of `raw.len()` bytes always fits.
    ///
    /// ```
    /// use membrane_frame::json::JsonStr;
    /// let mut out = [0u8; 16];
    /// assert_eq!(JsonStr::decode_raw_into(r"caf\u00e9", &mut out).map(|r| r.map(|n| &out[..n])), Ok(Ok("café".as_bytes())));
    /// assert_eq!(JsonStr::decode_raw_into(r"caf\u00e9", &mut out[..2]), Ok(Err(5)));
    /// assert_eq!(JsonStr::decode_raw_into(r"a\qb", &mut out).map_err(|e| e.offset), Err(1));
    /// ```
    pub fn decode_raw_into(raw: &str, out: &mut [u8]) -> Result<Result<usize, usize>, JsonError> {
        let bytes = raw.as_bytes();
        let (mut pos, mut written, mut fits) = (0usize, 0usize, true);
        loop {
            // The plain run, copied while it is read: whole chunks while `out` has room
            // for them, then a byte at a time (the last few bytes, or a short `out`).
            let mut run = copy_plain_chunks(bytes.get(pos..).unwrap_or(&[]), out.get_mut(written..).unwrap_or(&mut []));
            while let Some(&byte) = bytes.get(pos + run).filter(|&&byte| !is_special(byte)) {
                match out.get_mut(written + run) {
                    Some(slot) => *slot = byte,
                    None => fits = false,
                }
                run += 1;
            }
            written += run;
            pos += run;
            match bytes.get(pos) {
                None => return Ok(if fits { Ok(written) } else { Err(written) }),
                Some(b'\\') => {
                    let (ch, end) = escape_at(bytes, pos)?;
                    let (utf8, len) = utf8_bytes(ch);
                    for (at, &byte) in (written..).zip(utf8.get(..len).unwrap_or(&[])) {
                        match out.get_mut(at) {
                            Some(slot) => *slot = byte,
                            None => fits = false,
                        }
                    }
                    written += len;
                    pos = end;
                }
                // The run stops only at `"`, `\` and the bytes below 0x20.
                Some(b'"') => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
                Some(_) => return Err(JsonError::new(JsonErrorKind::ControlCharacter, pos)),
            }
        }
    }

    /// The text between the quotes, escapes and all.
    pub const fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the raw text contains backslash escapes (so differs from the value).
    pub const fn has_escapes(&self) -> bool {
        self.has_escapes
    }

    /// The value without copying, when it has no escapes.
    pub const fn as_str(&self) -> Option<&'a str> {
        if self.has_escapes {
            None
        } else {
            Some(self.raw)
        }
    }

    /// The decoded characters.
    pub fn chars(&self) -> Chars<'a> {
        Chars { rest: self.raw.as_bytes(), escaped: self.has_escapes }
    }

    /// Length of the decoded value in UTF-8 bytes.
    pub fn decoded_len(&self) -> usize {
        if self.has_escapes {
            self.pieces().map(|piece| piece.len()).sum()
        } else {
            self.raw.len()
        }
    }

    /// The decoded value as runs of raw text without escapes and the characters of the
    /// escapes between them: what decoding copies, a run at a time rather than a
    /// character at a time.
    fn pieces(&self) -> Pieces<'a> {
        Pieces { rest: self.raw, escaped: self.has_escapes }
    }

    /// Number of decoded characters (Unicode scalar values).
    pub fn char_count(&self) -> usize {
        if self.has_escapes {
            self.chars().count()
        } else {
            self.raw.chars().count()
        }
    }

    /// Whether the decoded value is empty.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Whether the decoded value equals `other`.
    ///
    /// The plain case in line, the escaped one a call: searches of a name table (dtype,
    /// consistency) compare a plain value without a call per name, which cost a
    /// canonical identity ~230 instructions (callgrind).
    #[inline]
    pub fn eq_str(&self, other: &str) -> bool {
        if !self.has_escapes {
            return self.raw == other;
        }
        self.escaped_eq_str(other)
    }

    /// [`eq_str`](Self::eq_str) of a value with escapes.
    #[inline(never)]
    fn escaped_eq_str(&self, other: &str) -> bool {
        // An escape never decodes to more bytes than it takes, so a raw text shorter
        // than `other` cannot match.
        if self.raw.len() < other.len() {
            return false;
        }
        self.chars().eq(other.chars())
    }

    /// Whether two strings decode to the same value.
    pub fn eq_decoded(&self, other: &JsonStr<'_>) -> bool {
        match (self.has_escapes, other.has_escapes) {
            (false, false) => self.raw == other.raw,
            (false, true) => other.eq_str(self.raw),
            (true, false) => self.eq_str(other.raw),
            (true, true) => self.chars().eq(other.chars()),
        }
    }

    /// Decode into `out` and return the value as `&str`.
    ///
    /// When `out` is too small, returns the number of bytes needed.
    pub fn unescape_into<'b>(&self, out: &'b mut [u8]) -> Result<&'b str, usize> {
        let len = self.decode_into(out)?;
        // Runs of a `str` and encoded `char`s are UTF-8; this cannot fail.
        core::str::from_utf8(out.get(..len).unwrap_or(&[])).map_err(|_| len)
    }

    /// [`unescape_into`](Self::unescape_into) returning the length written, for callers
    /// that hand the bytes on (the C ABI): the output is not checked again.
    pub fn decode_into(&self, out: &mut [u8]) -> Result<usize, usize> {
        // Room for the raw text holds the value: decoded in one pass, not measured first.
        // The escapes were checked when the string was read, so the pass succeeds.
        if let (true, Some(room)) = (self.has_escapes, out.get_mut(..self.raw.len())) {
            if let Ok(Ok(len)) = Self::decode_raw_into(self.raw, room) {
                return Ok(len);
            }
        }
        let needed = self.decoded_len();
        let Some(target) = out.get_mut(..needed) else {
            return Err(needed);
        };
        let mut written = 0usize;
        for piece in self.pieces() {
            let len = piece.len();
            if let Some(slot) = target.get_mut(written..written + len) {
                match piece {
                    Piece::Run(run) => slot.copy_from_slice(run.as_bytes()),
                    Piece::Char(ch) => {
                        ch.encode_utf8(slot);
                    }
                }
            }
            written += len;
        }
        Ok(needed)
    }

    /// [`decode_into`](Self::decode_into) for a string read from `text` (it lies in
    /// `text`, and a `"` follows it there): as simdjson does with its padded input, the
    /// value is copied sixteen bytes a step, each chunk read from `text` and stored whole
    /// (its bytes past the string included), so that a short string costs no copy of a
    /// length not known in advance, and the closing quote ends the scan. So `out` must have
    /// room past the value (anything there may be overwritten), and `text` past the
    /// string; where either ends too soon, or the string is not in `text`, this is
    /// `decode_into`, as it is on every CPU but x86-64.
    ///
    /// ```
    /// use membrane_frame::json::JsonStr;
    /// let text = r#"["caf\u00e9 \"m\"", 1]"#;
    /// let value = JsonStr::from_raw(&text[2..17]).unwrap();
    /// let mut out = [0u8; 64];
    /// let len = value.decode_within(text.as_bytes(), &mut out).unwrap();
    /// assert_eq!(&out[..len], "café \"m\"".as_bytes());
    /// ```
    #[cfg_attr(not(all(target_arch = "x86_64", target_feature = "sse2")), allow(unused_variables))]
    pub fn decode_within(&self, text: &[u8], out: &mut [u8]) -> Result<usize, usize> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if let Some(len) = self.decode_chunks(text, out) {
            return Ok(len);
        }
        self.decode_into(out)
    }

    /// The chunk loop of [`decode_within`](Self::decode_within); `None` where it does
    /// not apply (and then what `out` holds is unspecified).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    fn decode_chunks(&self, text: &[u8], out: &mut [u8]) -> Option<usize> {
        let raw = self.raw.as_bytes();
        // Where the string lies in `text`, found by address (it is a part of it or not).
        let start = raw.as_ptr().addr().checked_sub(text.as_ptr().addr())?;
        let end = start.checked_add(raw.len())?;
        if !self.has_escapes || text.get(start..end)?.as_ptr() != raw.as_ptr() {
            return None;
        }
        let (mut read, mut written) = (start, 0usize);
        loop {
            let chunk = chunk_at(text, read)?;
            *out.get_mut(written..).and_then(<[u8]>::first_chunk_mut::<16>)? = chunk;
            let special = super::sse2::special_lanes(&chunk);
            let run = if special == 0 { 16 } else { special.trailing_zeros() as usize };
            read += run;
            written += run;
            // The value ends where the string does: its closing quote stops the run
            // there. A run that stops past it belongs to a string cut from a longer
            // text, whose end no quote marks: not this loop's to decode.
            if read >= end {
                return (read == end).then_some(written);
            }
            if special == 0 {
                continue;
            }
            // Inside a string the reader checked, only a backslash stops a run.
            if text.get(read) != Some(&b'\\') {
                return None;
            }
            let (ch, after) = escape_at(text, read).ok()?;
            let (utf8, len) = utf8_bytes(ch);
            *out.get_mut(written..).and_then(<[u8]>::first_chunk_mut::<4>)? = utf8;
            written += len;
            read = after;
        }
    }
}

/// The sixteen bytes of `text` from `at`; near its end, its last sixteen shifted down to
/// start there, zeros after its end.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn chunk_at(text: &[u8], at: usize) -> Option<[u8; 16]> {
    if let Some(chunk) = text.get(at..).and_then(<[u8]>::first_chunk::<16>) {
        return Some(*chunk);
    }
    let before = at.checked_sub(text.len().checked_sub(16)?)?;
    let last = u128::from_le_bytes(*text.last_chunk::<16>()?);
    Some(last.checked_shr(8 * before as u32)?.to_le_bytes())
}

impl fmt::Debug for JsonStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for ch in self.chars() {
            fmt::Display::fmt(&ch.escape_debug(), f)?;
        }
        f.write_str("\"")
    }
}

impl fmt::Display for JsonStr<'_> {
    /// The decoded value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(plain) = self.as_str() {
            return f.write_str(plain);
        }
        for ch in self.chars() {
            fmt::Write::write_char(f, ch)?;
        }
        Ok(())
    }
}

/// The bytes of a string as its text spells it (between the quotes, escapes as
/// written) and whether it holds escapes: a [`JsonStr`] for a caller that hands the
/// bytes on as they are, such as the C ABI's views. No `str` is made of them, so the
/// text is not read to check that they start and end between characters: a snapshot's
/// map index gives them from its words alone
/// ([`PrimaryEntries::read_raw`](crate::snapshot::PrimaryEntries::read_raw)).
///
/// ```
/// use membrane_frame::json::{JsonStr, RawStr};
/// let raw = RawStr::from(JsonStr::from_plain("node-1"));
/// assert_eq!((raw.bytes, raw.has_escapes), (&b"node-1"[..], false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawStr<'a> {
    /// The string's bytes in its text, escapes as written.
    pub bytes: &'a [u8],
    /// Whether `bytes` holds backslash escapes (so differs from the value).
    pub has_escapes: bool,
}

impl<'a> From<JsonStr<'a>> for RawStr<'a> {
    #[inline]
    fn from(value: JsonStr<'a>) -> RawStr<'a> {
        RawStr { bytes: value.raw.as_bytes(), has_escapes: value.has_escapes }
    }
}

/// Iterator over the decoded characters of a [`JsonStr`].
#[derive(Clone, Debug)]
pub struct Chars<'a> {
    rest: &'a [u8],
    escaped: bool,
}

impl Iterator for Chars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let (&first, after) = self.rest.split_first()?;
        if first == b'\\' && self.escaped {
            let (ch, used) = decode_escape(after);
            self.rest = after.get(used..).unwrap_or(&[]);
            return Some(ch);
        }
        let len = utf8_len(first);
        let (bytes, rest) = self.rest.split_at_checked(len).unwrap_or((self.rest, &[]));
        self.rest = rest;
        Some(core::str::from_utf8(bytes).ok().and_then(|s| s.chars().next()).unwrap_or('\u{FFFD}'))
    }
}

/// A part of a decoded string (see [`JsonStr::pieces`]).
enum Piece<'a> {
    /// Raw text without escapes: its own value.
    Run(&'a str),
    /// The value of one escape.
    Char(char),
}

impl Piece<'_> {
    fn len(&self) -> usize {
        match self {
            Piece::Run(run) => run.len(),
            Piece::Char(ch) => ch.len_utf8(),
        }
    }
}

/// Iterator over the [`Piece`]s of escaped raw text.
struct Pieces<'a> {
    rest: &'a str,
    /// Whether backslashes are escapes (false for a plain value, whose backslashes are
    /// characters).
    escaped: bool,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        if !self.escaped {
            return Some(Piece::Run(core::mem::take(&mut self.rest)));
        }
        // `find` of an ASCII byte is a memchr.
        match self.rest.find('\\') {
            Some(0) => {
                let after = self.rest.as_bytes().get(1..).unwrap_or(&[]);
                let (ch, used) = decode_escape(after);
                // An escape is ASCII, so `1 + used` is a character boundary (or past
                // the end of malformed text, which ends the walk).
                self.rest = self.rest.get(1 + used..).unwrap_or("");
                Some(Piece::Char(ch))
            }
            Some(at) => {
                let (run, rest) = self.rest.split_at_checked(at).unwrap_or((self.rest, ""));
                self.rest = rest;
                Some(Piece::Run(run))
            }
            None => Some(Piece::Run(core::mem::take(&mut self.rest))),
        }
    }
}

/// Length of a UTF-8 sequence from its first byte (text already validated).
const fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The character a one-letter escape (`\\n`, `\\"`, ...) stands for, given the letter;
/// `None` for any other byte (`u` included: four hex digits follow it).
#[inline(always)]
fn simple_escape(letter: u8) -> Option<char> {
    Some(match letter {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// Decode one validated escape (the bytes after the backslash): the char and the number
/// of bytes it used. Validation happened in [`scan_string`]; malformed input yields
/// U+FFFD rather than a panic.
fn decode_escape(after: &[u8]) -> (char, usize) {
    let simple = match after.first() {
        Some(b'u') => {
            let high = hex4(after.get(1..5)).unwrap_or(0xFFFD);
            if (0xD800..0xDC00).contains(&high) {
                let low = match (after.get(5), after.get(6)) {
                    (Some(b'\\'), Some(b'u')) => hex4(after.get(7..11)).unwrap_or(0),
                    _ => 0,
                };
                let code = 0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                return (char::from_u32(code).unwrap_or('\u{FFFD}'), 11);
            }
            return (char::from_u32(high).unwrap_or('\u{FFFD}'), 5);
        }
        Some(&byte) => simple_escape(byte).unwrap_or('\u{FFFD}'),
        None => '\u{FFFD}',
    };
    (simple, 1)
}

/// Four hex digits as a number.
fn hex4(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    if digits.len() != 4 {
        return None;
    }
    let mut value = 0u32;
    for &d in digits {
        let nibble = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) + u32::from(nibble);
    }
    Some(value)
}

/// Bytes that may stand in a string without any check beyond "not special": all but
/// `"`, `\\` and the controls below 0x20. (The text is a `str`, so the bytes of
/// multi-byte characters are already known to be valid.) [`plain_prefix`] tests a
/// word at a time; this is its definition, for the tests.
#[cfg(test)]
fn is_plain(b: u8) -> bool {
    !is_special(b)
}

/// The UTF-8 encoding of `ch` in the first bytes of a four-byte array, and its length,
/// built in a register: `char::encode_utf8` writes to memory, and the decoder's copy
/// read the bytes back from there, waiting on the stores (a quarter of its time, perf).
#[inline(always)]
fn utf8_bytes(ch: char) -> ([u8; 4], usize) {
    let code = u32::from(ch);
    // The fields are disjoint, so `+` puts them together (as `|` would).
    let continuation = |shift: u32| 0x80 + ((code >> shift) & 0x3F);
    let (word, len) = match code {
        0..=0x7F => (code, 1),
        0x80..=0x7FF => (0xC0 + (code >> 6) + (continuation(0) << 8), 2),
        0x800..=0xFFFF => (0xE0 + (code >> 12) + (continuation(6) << 8) + (continuation(0) << 16), 3),
        _ => (0xF0 + (code >> 18) + (continuation(12) << 8) + (continuation(6) << 16) + (continuation(0) << 24), 4),
    };
    (word.to_le_bytes(), len)
}

/// A byte that ends a run of plain string bytes: `"`, `\\` or a control below 0x20.
#[inline(always)]
fn is_special(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Copy the leading run of plain bytes of `bytes` (see [`is_plain`]) to the start of
/// `out` a chunk at a time while both have a whole chunk left: sixteen bytes a step
/// with SSE2 on x86-64, then machine words. Each chunk is looked at and stored whole,
/// or, where the run ends in it, stored up to the end of the run ([`copy_head`]); no
/// call to `memcpy`, and nothing past the run is written. Returns how much of the run
/// is copied; the caller takes the rest a byte at a time. On 32-bit CPUs
/// (microcontrollers) nothing: the caller's byte loop takes the whole run there, in
/// less flash (the chunks cost the frame-path image 56 bytes).
#[inline(always)]
#[cfg_attr(not(target_pointer_width = "64"), allow(unused_mut, unused_variables))]
fn copy_plain_chunks(bytes: &[u8], out: &mut [u8]) -> usize {
    let mut run = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while let (Some(chunk), Some(slot)) = (
        bytes.get(run..).and_then(<[u8]>::first_chunk::<16>),
        out.get_mut(run..).and_then(<[u8]>::first_chunk_mut::<16>),
    ) {
        let special = super::sse2::special_lanes(chunk);
        if special != 0 {
            let len = special.trailing_zeros() as usize;
            copy_head(slot, chunk, len);
            return run + len;
        }
        *slot = *chunk;
        run += 16;
    }
    #[cfg(target_pointer_width = "64")]
    while let (Some(chunk), Some(slot)) = (
        bytes.get(run..).and_then(<[u8]>::first_chunk::<WORD>),
        out.get_mut(run..).and_then(<[u8]>::first_chunk_mut::<WORD>),
    ) {
        let special = special_bytes(usize::from_le_bytes(*chunk));
        if special != 0 {
            let len = (special.trailing_zeros() / 8) as usize;
            copy_head(slot, chunk, len);
            return run + len;
        }
        *slot = *chunk;
        run += WORD;
    }
    run
}

/// The first `len` bytes of `chunk` into `slot` (`len` below `N`, at most 16), in at
/// most two stores of a fixed width that overlap where `len` is not one: how a short
/// `memcpy` is done in line.
#[inline(always)]
#[cfg_attr(not(target_pointer_width = "64"), allow(dead_code))]
fn copy_head<const N: usize>(slot: &mut [u8; N], chunk: &[u8; N], len: usize) {
    fn copy_ends<const W: usize>(slot: &mut [u8], chunk: &[u8], len: usize) {
        let (from, to) = (len.saturating_sub(W), len);
        if let (Some(head), Some(source)) = (slot.first_chunk_mut::<W>(), chunk.first_chunk::<W>()) {
            *head = *source;
        }
        if let (Some(tail), Some(source)) = (
            slot.get_mut(from..to).and_then(<[u8]>::first_chunk_mut::<W>),
            chunk.get(from..to).and_then(<[u8]>::first_chunk::<W>),
        ) {
            *tail = *source;
        }
    }
    match len {
        0..=3 => {
            for (slot, &byte) in slot.iter_mut().zip(chunk).take(len) {
                *slot = byte;
            }
        }
        4..=7 => copy_ends::<4>(slot, chunk, len),
        8..=15 => copy_ends::<8>(slot, chunk, len),
        // A run that ends inside a chunk is shorter than the chunk.
        _ => {}
    }
}

/// Length of the leading run of plain bytes (see [`is_plain`]) of `bytes`.
///
/// A machine word ([`WORD`] bytes) at a time: a word holds a byte below 0x20, `"` or
/// `\\` exactly when one of these classic tests ("Bit Twiddling Hacks": `hasless`,
/// `haszero`) sets a high bit of a byte that is not itself above 0x7F, and the lowest
/// such bit marks the first such byte exactly (a borrow or carry only runs upward from
/// a byte that matched). The last partial word is padded with `"`, so no byte is looked
/// at alone.
///
/// On x86-64, sixteen bytes a step first (`json::sse2`); the words take the last
/// fifteen bytes and every other target.
#[inline]
fn plain_prefix(bytes: &[u8]) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        let mut rest = bytes;
        while let Some((chunk, after)) = rest.split_first_chunk::<16>() {
            let special = super::sse2::special_lanes(chunk);
            if special != 0 {
                return bytes.len() - rest.len() + special.trailing_zeros() as usize;
            }
            rest = after;
        }
        bytes.len() - rest.len() + plain_prefix_words(rest)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    plain_prefix_words(bytes)
}

/// [`plain_prefix`] a word at a time. Out of line on x86-64, where it takes only the
/// last fifteen bytes of a text: in line, its registers made every call save and restore
/// six (a sixth of a canonical identity's string scan, callgrind).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), inline(never))]
#[cfg_attr(not(all(target_arch = "x86_64", target_feature = "sse2")), inline(always))]
fn plain_prefix_words(bytes: &[u8]) -> usize {
    let mut run = 0;
    let mut chunks = bytes.chunks_exact(WORD);
    for chunk in &mut chunks {
        let mut word = [0u8; WORD];
        word.copy_from_slice(chunk);
        let special = special_bytes(usize::from_le_bytes(word));
        if special != 0 {
            return run + (special.trailing_zeros() / 8) as usize;
        }
        run += WORD;
    }
    let rest = chunks.remainder();
    let mut word = [b'"'; WORD];
    if let Some(head) = word.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    let special = special_bytes(usize::from_le_bytes(word));
    run + ((special.trailing_zeros() / 8) as usize).min(rest.len())
}

/// Bytes in a machine word: [`plain_prefix`] works in the CPU's own integers (eight
/// bytes a step on 64-bit CPUs, four on 32-bit ones, where `u64` arithmetic would take
/// pairs of instructions and twice the code).
const WORD: usize = core::mem::size_of::<usize>();

/// The high bit of every byte of `x` that is not plain, and possibly of bytes above
/// the lowest such byte (see [`plain_prefix`]); 0 when all are plain.
#[inline(always)]
fn special_bytes(x: usize) -> usize {
    const ONES: usize = usize::from_le_bytes([0x01; WORD]);
    const HIGH: usize = usize::from_le_bytes([0x80; WORD]);
    let has_zero = |v: usize| v.wrapping_sub(ONES) & !v;
    let control = x.wrapping_sub(ONES * 0x20);
    let quote = has_zero(x ^ (ONES * usize::from(b'"')));
    let backslash = has_zero(x ^ (ONES * usize::from(b'\\')));
    // `& !x`: a byte above 0x7F is never special (and sets a high bit in all three).
    (control | quote | backslash) & !x & HIGH
}

/// Scan a string whose opening quote is at `start - 1`; returns the index of the
/// closing quote and whether escapes occurred. Validates escapes and surrogate pairs and
/// rejects raw control characters; the text is a `str`, so UTF-8 is already valid.
/// Inlined (with [`JsonStr::read_at`]): in the snapshot map loop, the call cost ~10%.
#[inline(always)]
pub(crate) fn scan_string(text: &str, start: usize) -> Result<(usize, bool), JsonError> {
    let text = text.as_bytes();
    let mut pos = start;
    let mut has_escapes = false;
    loop {
        pos += plain_prefix(text.get(pos..).unwrap_or(&[]));
        let Some(&byte) = text.get(pos) else {
            return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos));
        };
        match byte {
            b'"' => return Ok((pos, has_escapes)),
            b'\\' => {
                has_escapes = true;
                pos = scan_escape(text, pos)?;
            }
            // `plain_prefix` stops only at `"`, `\` and the bytes below 0x20: this one
            // is a control character (a byte-wise step here was never reached).
            _ => return Err(JsonError::new(JsonErrorKind::ControlCharacter, pos)),
        }
    }
}

/// Validate the escape whose backslash is at `at`; returns the index after it.
fn scan_escape(text: &[u8], at: usize) -> Result<usize, JsonError> {
    // The character is not used: in line, its computation is dropped.
    escape_at(text, at).map(|(_, end)| end)
}

/// Validate the escape whose backslash is at `at` and decode it in the same step: the
/// character it stands for and the index after it (a surrogate pair is one escape).
#[inline(always)]
fn escape_at(text: &[u8], at: usize) -> Result<(char, usize), JsonError> {
    let invalid = |kind| Err(JsonError::new(kind, at));
    let simple = match text.get(at + 1) {
        None => return invalid(JsonErrorKind::UnexpectedEnd),
        Some(b'u') => {
            let Some(unit) = hex4(text.get(at + 2..at + 6)) else {
                return invalid(JsonErrorKind::InvalidEscape);
            };
            return match unit {
                0xD800..=0xDBFF => {
                    let low = match (text.get(at + 6), text.get(at + 7)) {
                        (Some(b'\\'), Some(b'u')) => hex4(text.get(at + 8..at + 12)),
                        _ => None,
                    };
                    match low {
                        Some(low @ 0xDC00..=0xDFFF) => {
                            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            Ok((char::from_u32(code).unwrap_or('\u{FFFD}'), at + 12))
                        }
                        _ => invalid(JsonErrorKind::LoneSurrogate),
                    }
                }
                0xDC00..=0xDFFF => invalid(JsonErrorKind::LoneSurrogate),
                _ => Ok((char::from_u32(unit).unwrap_or('\u{FFFD}'), at + 6)),
            };
        }
        Some(&byte) => match simple_escape(byte) {
            Some(simple) => simple,
            None => return invalid(JsonErrorKind::InvalidEscape),
        },
    };
    Ok((simple, at + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_is_encoded_as_core_encodes_it() {
        let step = if cfg!(miri) { 997 } else { 1 };
        for code in (0..=0x10FFFF).step_by(step).chain([0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF]) {
            let Some(ch) = char::from_u32(code) else { continue };
            let mut expected = [0u8; 4];
            let len = ch.encode_utf8(&mut expected).len();
            let (bytes, got_len) = utf8_bytes(ch);
            assert_eq!((&bytes[..got_len], got_len), (&expected[..len], len), "{code:#x}");
        }
    }

    fn scan(s: &[u8]) -> Result<(usize, bool), JsonErrorKind> {
        scan_string(core::str::from_utf8(s).unwrap(), 0).map_err(|e| e.kind)
    }

    #[test]
    fn raw_content_from_outside_is_checked_as_the_reader_checks_strings() {
        let kind = |raw: &str| JsonStr::from_raw(raw).map(|s| s.has_escapes()).map_err(|e| (e.kind, e.offset));
        assert_eq!(kind(""), Ok(false));
        assert_eq!(kind("plain é"), Ok(false));
        assert_eq!(kind(r"tab\t and \ud83d\ude00"), Ok(true));
        assert_eq!(kind(r#"a"b"#), Err((JsonErrorKind::UnexpectedByte, 1)));
        assert_eq!(kind("a\u{1}b"), Err((JsonErrorKind::ControlCharacter, 1)));
        assert_eq!(kind(r"ab\"), Err((JsonErrorKind::UnexpectedEnd, 2)));
        assert_eq!(kind(r"ab\x"), Err((JsonErrorKind::InvalidEscape, 2)));
        assert_eq!(kind(r"\u12"), Err((JsonErrorKind::InvalidEscape, 0)));
        assert_eq!(kind(r"x\ud83d"), Err((JsonErrorKind::LoneSurrogate, 1)));
        let mut buf = [0u8; 8];
        assert_eq!(JsonStr::from_raw(r"\u00e9!").map(|s| s.unescape_into(&mut buf).map(str::len)), Ok(Ok(3)));
    }

    /// Valid string contents, escapes of every kind among them.
    const DECODING_CASES: [&str; 8] = [
        "plain",
        "\\n",
        "a\\tb",
        "\\u00e9t\\u00e9",
        "\\ud83d\\ude00 end",
        "start \\\\\\/\\b\\f\\r\\\"",
        "caf\u{e9} \\u2028 \u{1F600}\\n",
        "\\u0000\\u001f",
    ];

    #[test]
    fn decoding_by_runs_gives_the_characters_the_escapes_stand_for() {
        for raw in DECODING_CASES {
            let value = JsonStr::from_raw(raw).unwrap();
            let expected: std::string::String = value.chars().collect();
            assert_eq!(value.decoded_len(), expected.len(), "{raw}");
            let mut buf = [0u8; 64];
            assert_eq!(value.unescape_into(&mut buf), Ok(expected.as_str()), "{raw}");
            assert_eq!(value.decode_into(&mut buf[..expected.len()]), Ok(expected.len()));
            if !expected.is_empty() {
                assert_eq!(value.decode_into(&mut buf[..expected.len() - 1]), Err(expected.len()), "{raw}");
            }
        }
        // A plain value's backslashes are characters.
        let plain = JsonStr::from_plain(r"a\nb");
        let mut buf = [0u8; 8];
        assert_eq!((plain.decoded_len(), plain.unescape_into(&mut buf)), (4, Ok(r"a\nb")));
    }

    #[test]
    fn decoding_raw_text_in_one_pass_agrees_with_checking_then_decoding() {
        let more = [
            "",
            "caf\u{e9} \\u2028 \u{1F600}\\n and a run longer than sixteen bytes",
            // Problems, each where `from_raw` reports it.
            "a\"b",
            "a\u{1}b",
            "ab\\",
            "ab\\x",
            "\\u12",
            "\\u12zz",
            "x\\ud83d",
            "x\\ud83d\\u0041",
            "x\\ude00",
            "ok \\n then \\q",
        ];
        for raw in DECODING_CASES.into_iter().chain(more) {
            decode_raw_agrees(raw, 0..=raw.len() + 1);
        }
        // Plain runs of every length around the 8- and 16-byte chunks, before and after
        // each kind of escape (and a raw non-ASCII character), so that a run ends at
        // every position of a chunk and the chunks meet the end of `out`.
        let (runs, step) = if cfg!(miri) { (40, 7) } else { (40, 1) };
        for run in (0..runs).step_by(step) {
            for middle in ["\\n", "\\u00e9", "\\ud83d\\ude00", "\\\"", "\u{e9}", "\u{1}", "\""] {
                for tail in [0, 1, 7, 8, 9, 15, 16, 17, 31] {
                    let raw = std::format!("{}{middle}{}", "a".repeat(run), "b".repeat(tail));
                    if cfg!(miri) {
                        decode_raw_agrees(&raw, [raw.len()].into_iter());
                    } else {
                        decode_raw_agrees(&raw, 0..=raw.len() + 1);
                    }
                }
            }
        }
    }

    #[test]
    fn decoding_within_the_text_agrees_with_decoding_alone() {
        // Valid contents with runs of every length around a chunk before and after each
        // kind of escape, in texts with 0 to 20 bytes after the closing quote (so that the
        // chunks meet the end of the text), into rooms of the value's length and more.
        let mut raws: std::vec::Vec<std::string::String> = DECODING_CASES.iter().map(|raw| raw.to_string()).collect();
        let (runs, afters) =
            if cfg!(miri) { (0..20, [0, 17].as_slice()) } else { (0..40, [0, 1, 2, 7, 15, 16, 17, 20].as_slice()) };
        for run in runs {
            for middle in ["\\n", "\\u00e9", "\\u20AC", "\\ud83d\\ude00", "\\\"", "\u{e9}"] {
                raws.push(std::format!("{}{middle}{}", "a".repeat(run), "b".repeat(run % 19)));
            }
        }
        for raw in &raws {
            for &after in afters {
                let text = std::format!("[\"{raw}\"{}", " ".repeat(after));
                let (value, _) = JsonStr::read_at(&text, 1).unwrap();
                let mut expected = std::vec![0u8; value.decoded_len()];
                assert_eq!(value.decode_into(&mut expected), Ok(expected.len()));
                for extra in [0, 1, 15, 16, 17, 40] {
                    let mut out = std::vec![0xAAu8; expected.len() + extra];
                    assert_eq!(value.decode_within(text.as_bytes(), &mut out), Ok(expected.len()), "{text:?} +{extra}");
                    assert_eq!(&out[..expected.len()], &expected[..], "{text:?} +{extra}");
                    // With a chunk of room past the value and a text of a chunk or more,
                    // the chunk loop itself gives the value, not the fallback.
                    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                    if value.has_escapes() && extra >= 16 && text.len() >= 16 {
                        out.fill(0xAA);
                        assert_eq!(value.decode_chunks(text.as_bytes(), &mut out), Some(expected.len()), "{text:?}");
                        assert_eq!(&out[..expected.len()], &expected[..], "{text:?} +{extra}");
                    }
                }
                if let Some(short) = expected.len().checked_sub(1) {
                    assert_eq!(value.decode_within(text.as_bytes(), &mut std::vec![0u8; short]), Err(expected.len()));
                }
            }
        }
        // A string not followed by its quote in the text (the chunks reach past it), or
        // not in the text at all: its own value.
        let text = std::format!("a\\tb{}\\n", "c".repeat(40));
        let mut out = [0u8; 64];
        let cut = JsonStr::from_raw(&text[..4]).unwrap();
        assert_eq!(cut.decode_within(text.as_bytes(), &mut out).map(|len| &out[..len]), Ok(&b"a\tb"[..]));
        let elsewhere = JsonStr::from_raw("x\\ny").unwrap();
        assert_eq!(elsewhere.decode_within(text.as_bytes(), &mut out).map(|len| &out[..len]), Ok(&b"x\ny"[..]));
        // A plain value is copied as it is, backslashes and all, even where its text
        // ends at a quote as a string's does.
        let plain = JsonStr::from_plain(&text[..4]);
        assert_eq!(plain.decode_within(text.as_bytes(), &mut out).map(|len| &out[..len]), Ok(&b"a\\tb"[..]));
        let quoted = std::format!("[\"a\\tb\", {}]", "1".repeat(20));
        let plain = JsonStr::from_plain(&quoted[2..6]);
        assert_eq!(plain.decode_within(quoted.as_bytes(), &mut out).map(|len| &out[..len]), Ok(&b"a\\tb"[..]));
    }

    #[test]
    fn hex_digits_are_of_either_case_and_nothing_else() {
        for byte in 0..=255u8 {
            for at in 0..4 {
                let mut digits = *b"0000";
                digits[at] = byte;
                let expected = char::from(byte).to_digit(16).map(|digit| digit << (4 * (3 - at)));
                assert_eq!(hex4(Some(&digits)), expected, "{byte:#04x} at {at}");
            }
        }
        assert_eq!(hex4(Some(b"fF9a")), Some(0xFF9A));
        assert_eq!((hex4(Some(b"000")), hex4(Some(b"00000")), hex4(None)), (None, None, None));
    }

    /// `decode_raw_into` of `raw` into each room of `rooms` bytes against `from_raw`
    /// then `decode_into`; when the value fits, nothing past it is written.
    fn decode_raw_agrees(raw: &str, rooms: impl Iterator<Item = usize>) {
        let expected = JsonStr::from_raw(raw).map(|value| {
            let mut buf = [0u8; 96];
            value.decode_into(&mut buf).map(|len| buf[..len].to_vec())
        });
        for room in rooms {
            let mut out = std::vec![0xAAu8; room];
            let got = JsonStr::decode_raw_into(raw, &mut out);
            match &expected {
                Err(err) => assert_eq!(got, Err(*err), "{raw:?} room {room}"),
                Ok(Ok(value)) if value.len() <= room => {
                    assert_eq!(got, Ok(Ok(value.len())), "{raw:?} room {room}");
                    assert_eq!(&out[..value.len()], &value[..], "{raw:?} room {room}");
                    assert!(
                        out[value.len()..].iter().all(|&b| b == 0xAA),
                        "{raw:?} room {room}: written past the value"
                    );
                }
                Ok(Ok(value)) => assert_eq!(got, Ok(Err(value.len())), "{raw:?} room {room}"),
                Ok(Err(needed)) => assert!(*needed <= 96, "96 bytes hold every case"),
            }
        }
    }

    #[test]
    fn scans_plain_and_escaped_strings() {
        assert_eq!(scan(b"abc\""), Ok((3, false)));
        assert_eq!(scan(b"a\\nb\""), Ok((4, true)));
        assert_eq!(scan(b"\\ud83d\\ude00\""), Ok((12, true)));
        assert_eq!(scan("é☃😀\"".as_bytes()), Ok((9, false)));
    }

    #[test]
    // Exhaustive loops over safe code: minutes under Miri, and the same paths run there
    // through the other tests; the normal test run keeps them.
    #[cfg_attr(miri, ignore = "minutes under Miri")]
    fn plain_prefix_stops_at_the_first_byte_that_needs_a_look() {
        // Every byte value at every offset of a 19-byte run of plain bytes.
        for special in 0..=255u8 {
            for at in 0..19 {
                let mut bytes = [b'a'; 19];
                bytes[at] = special;
                let expected = if is_plain(special) { 19 } else { at };
                assert_eq!(plain_prefix(&bytes), expected, "byte {special:#04x} at {at}");
                // And past several words.
                let mut long = [b'a'; 53];
                long[at + 20] = special;
                let expected = if is_plain(special) { 53 } else { at + 20 };
                assert_eq!(plain_prefix(&long), expected, "byte {special:#04x} at {}", at + 20);
            }
        }
        assert_eq!(plain_prefix(b""), 0);
        // Mixed words: the same answer as a byte-by-byte scan.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..20_000 {
            let mut bytes = [0u8; 40];
            for byte in bytes.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Mostly plain bytes, so runs are long enough to cross words.
                *byte = if state.is_multiple_of(5) { (state >> 8) as u8 } else { b' ' + (state >> 16) as u8 % 95 };
            }
            let expected = bytes.iter().position(|&b| !is_plain(b)).unwrap_or(bytes.len());
            assert_eq!(plain_prefix(&bytes), expected, "{bytes:?}");
        }
    }

    #[test]
    fn rejects_bad_strings() {
        assert_eq!(scan(b"abc"), Err(JsonErrorKind::UnexpectedEnd));
        assert_eq!(scan(b"a\x01\""), Err(JsonErrorKind::ControlCharacter));
        assert_eq!(scan(b"\\x\""), Err(JsonErrorKind::InvalidEscape));
        assert_eq!(scan(b"\\u12\""), Err(JsonErrorKind::InvalidEscape));
        assert_eq!(scan(b"\\ud800\""), Err(JsonErrorKind::LoneSurrogate));
        assert_eq!(scan(b"\\udc00\""), Err(JsonErrorKind::LoneSurrogate));
        assert_eq!(scan(b"\\ud800\\u0041\""), Err(JsonErrorKind::LoneSurrogate));
    }

    #[test]
    fn decodes_escapes() {
        let s = JsonStr::from_validated("a\\u00e8\\n\\ud83d\\ude00\\/", true);
        let mut buf = [0u8; 32];
        assert_eq!(s.unescape_into(&mut buf), Ok("aè\n😀/"));
        assert_eq!(s.decoded_len(), "aè\n😀/".len());
        assert!(s.eq_str("aè\n😀/"));
        assert!(!s.eq_str("aè\n😀"));
        let mut small = [0u8; 3];
        assert_eq!(s.unescape_into(&mut small), Err("aè\n😀/".len()));
        // Without escapes the text is the value.
        let plain = JsonStr::from_validated("aè😀", false);
        assert_eq!(plain.decoded_len(), "aè😀".len());
    }

    #[test]
    fn char_count_counts_decoded_characters_whether_or_not_escaped() {
        let plain = JsonStr::from_plain("h\u{e9}llo, \u{1F600}");
        let escaped = JsonStr::from_validated("h\\u00e9llo,\\u0020\\ud83d\\ude00", true);
        assert_eq!((plain.char_count(), escaped.char_count()), (8, 8));
        assert_eq!(JsonStr::from_plain("").char_count(), 0);
    }

    #[test]
    fn debug_shows_the_decoded_value_quoted_with_debug_escapes() {
        let escaped = JsonStr::from_validated("a\\\"b\\n\\u00e9", true);
        assert_eq!(std::format!("{escaped:?}"), "\"a\\\"b\\n\u{e9}\"");
        assert_eq!(std::format!("{:?}", JsonStr::from_plain("tab\there")), "\"tab\\there\"");
    }
}
