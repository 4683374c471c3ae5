//! The strict, non-recursive pull reader (SPEC §4).

use super::error::{JsonError, JsonErrorKind};
use super::keys::is_before;
use super::map_index::IndexWriter;
use super::number::{scan_number, JsonNumber};
use super::string::{scan_string, JsonStr};
use super::walk::StringMapEntries;
use super::whitespace::skip_whitespace;

/// The deepest nesting any reader supports; [`Limits::max_depth`] is capped to it.
pub const MAX_DEPTH: u32 = 1024;

/// Default nesting limit (SPEC §4).
pub const DEFAULT_MAX_DEPTH: u32 = 32;

/// Default capacity of the duplicate-key table: the number of keys that may be open at
/// once across all enclosing objects.
pub const DEFAULT_KEY_CAPACITY: usize = 64;

/// Policy knobs of the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting depth; a top-level object or array is depth 1. Values above
    /// [`MAX_DEPTH`] act as `MAX_DEPTH`.
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_depth: DEFAULT_MAX_DEPTH }
    }
}

/// One step of a JSON text, in document order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event<'a> {
    /// `{`
    ObjectStart,
    /// `}`
    ObjectEnd,
    /// `[`
    ArrayStart,
    /// `]`
    ArrayEnd,
    /// An object key; its value follows as the next event(s).
    Key(JsonStr<'a>),
    /// A string value.
    Str(JsonStr<'a>),
    /// A number value.
    Number(JsonNumber<'a>),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// What the grammar allows next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Value,
    FirstElementOrEnd,
    FirstKeyOrEnd,
    Key,
    CommaOrEnd,
    Done,
}

/// A key seen in an object that is still open, for duplicate detection.
#[derive(Clone, Copy, Debug)]
struct KeySlot {
    hash: u32,
    start: usize,
    len: usize,
    depth: u16,
    has_escapes: bool,
}

/// A strict, pull-based JSON reader over a borrowed text.
///
/// It never recurses: nesting is tracked in a fixed bit stack, so a hostile input can
/// not exhaust the machine stack. Duplicate keys are rejected at every level, compared
/// after unescaping; `KEYS` bounds how many keys may be open at once across all
/// enclosing objects (more is [`JsonErrorKind::TooManyKeys`]).
///
/// After an error the reader keeps returning that error.
///
/// ```
/// use membrane_frame::json::{Event, Reader, Limits};
/// let mut reader: Reader = Reader::new(br#"{"a": [1, true]}"#, Limits::default());
/// let mut events = 0;
/// while let Some(event) = reader.next_event().unwrap() {
///     events += 1;
///     if let Event::Number(n) = event {
///         assert_eq!(n.as_i64(), Some(1));
///     }
/// }
/// assert_eq!(events, 7); // {, "a", [, 1, true, ], }
/// assert!(membrane_frame::json::validate(br#"{"a":1,"a":2}"#, Limits::default()).is_err());
/// ```
pub struct Reader<'a, const KEYS: usize = DEFAULT_KEY_CAPACITY> {
    /// The text up to its first invalid UTF-8 byte (all of it, when it is valid).
    text: &'a str,
    /// Where the text stops being UTF-8, if it does: reaching that point is an error.
    utf8_error: Option<usize>,
    pos: usize,
    event_start: usize,
    depth: u32,
    max_depth: u32,
    /// Bit `d` set: the container at depth `d + 1` is an object.
    kinds: BitStack,
    expect: Expect,
    keys: heapless::Vec<KeySlot, KEYS>,
    /// Bit `d` set: the object at depth `d + 1` checks its own keys (see
    /// [`defer_duplicate_check`](Self::defer_duplicate_check)).
    deferred: BitStack,
    /// The text is known to be valid (a re-walk): no key is recorded at all.
    trusted: bool,
    failed: Option<JsonError>,
}

impl<'a, const KEYS: usize> Reader<'a, KEYS> {
    /// A reader over `text` with the given limits.
    pub fn new(text: &'a [u8], limits: Limits) -> Self {
        let (text, utf8_error) = valid_prefix(text);
        Reader::at(text, utf8_error, 0, limits)
    }

    /// A reader over `text`, which is UTF-8 already: the encoding is not checked again,
    /// so a reader over the rest of a validated document costs only what it reads.
    pub(crate) fn over_str(text: &'a str, limits: Limits) -> Self {
        Reader::at(text, None, 0, limits)
    }

    fn at(text: &'a str, utf8_error: Option<usize>, pos: usize, limits: Limits) -> Self {
        Reader {
            text,
            utf8_error,
            pos,
            event_start: pos,
            depth: 0,
            max_depth: limits.max_depth.min(MAX_DEPTH),
            kinds: BitStack::EMPTY,
            expect: Expect::Value,
            keys: heapless::Vec::new(),
            deferred: BitStack::EMPTY,
            trusted: false,
            failed: None,
        }
    }

    /// Stop recording the keys of the innermost open object (call it right after its
    /// [`Event::ObjectStart`]): the caller takes over duplicate detection for that one
    /// object, e.g. for a map with a hundred thousand keys that no fixed key table
    /// holds. Keys of objects nested in it are still checked here. No-op outside an
    /// object.
    ///
    /// The caller must then check the object's keys itself; the metadata readers do it
    /// by checking that the keys are strictly increasing, else with a bounded-memory
    /// search (see `docs/design.md`).
    pub fn defer_duplicate_check(&mut self) {
        if self.in_object() {
            self.deferred.set(self.depth.saturating_sub(1) as usize, true);
        }
    }

    /// Whether the innermost open object checks its own keys.
    fn deferred_here(&self) -> bool {
        self.deferred.get(self.depth.saturating_sub(1) as usize)
    }

    /// Record no keys at all: for walking again over a text that a full reader has
    /// already accepted (iterators over big maps), where the key table would only cost.
    pub(crate) fn assume_unique_keys(&mut self) {
        self.trusted = true;
    }

    /// The text as a `str` up to its first invalid UTF-8 byte (all of it once the
    /// reader has accepted it): no second UTF-8 pass for callers that keep it.
    pub(crate) fn valid_text(&self) -> &'a str {
        self.text
    }

    /// Byte offset where the most recent event started.
    pub fn event_offset(&self) -> usize {
        self.event_start
    }

    /// Current nesting depth (0 outside any container).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The next event, or `None` once the single top-level value is complete and only
    /// whitespace follows.
    #[inline]
    pub fn next_event(&mut self) -> Result<Option<Event<'a>>, JsonError> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        let mut result = self.step();
        if let Some(at) = self.utf8_error {
            // Running out of valid text means reaching the invalid byte.
            match result {
                Ok(None) => result = Err(JsonError::new(JsonErrorKind::InvalidUtf8, at)),
                Err(err) if err.kind == JsonErrorKind::UnexpectedEnd => {
                    result = Err(JsonError::new(JsonErrorKind::InvalidUtf8, at));
                }
                _ => {}
            }
        }
        if let Err(err) = result {
            self.failed = Some(err);
        }
        result
    }

    /// Consume the rest of a value whose first event was `first` (no-op for scalars).
    pub fn skip_value(&mut self, first: &Event<'a>) -> Result<(), JsonError> {
        if !matches!(first, Event::ObjectStart | Event::ArrayStart) {
            return Ok(());
        }
        let target = self.depth.saturating_sub(1);
        while self.depth > target {
            if self.next_event()?.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// Read to the end, validating everything that is left.
    pub fn finish(&mut self) -> Result<(), JsonError> {
        while self.next_event()?.is_some() {}
        Ok(())
    }

    fn error<T>(&self, kind: JsonErrorKind, at: usize) -> Result<T, JsonError> {
        Err(JsonError::new(kind, at))
    }

    /// The rest of a map of strings — to strings, or with `arrays`, to arrays of
    /// strings — whose `{` was just yielded and whose keys the caller checks
    /// ([`defer_duplicate_check`](Self::defer_duplicate_check)), read in one pass over
    /// the text without events, through its `}`: `(entries, keys strictly increasing)`,
    /// each entry recorded in `index` if given ([`map_index`](super::map_index)).
    /// `None`, with the reader untouched (and what `index` recorded void), at anything
    /// else (another value, a JSON problem, the depth limit): the caller then reads the
    /// map event by event, which finds and words the problem. For snapshot maps of a
    /// hundred thousand entries.
    pub(crate) fn string_map(
        &mut self,
        arrays: bool,
        mut index: Option<&mut IndexWriter<'_, 'a>>,
    ) -> Option<(usize, bool)> {
        if self.expect != Expect::FirstKeyOrEnd || !self.deferred_here() || (arrays && self.depth >= self.max_depth) {
            return None;
        }
        let (mut len, mut sorted) = (0usize, true);
        let mut previous: Option<JsonStr<'a>> = None;
        let mut entries = StringMapEntries::after_open(self.text, self.pos, arrays);
        // One walk with or without the index: a copy of this function for each cost the
        // microcontroller build of the snapshot reader 3.8 KB more.
        while let Some(entry) = entries.next_with_items(|item| {
            if let Some(index) = index.as_deref_mut() {
                index.item(item);
            }
        }) {
            len += 1;
            if sorted && previous.is_some_and(|p| !is_before(&p, &entry.key)) {
                sorted = false;
            }
            previous = Some(entry.key);
            if let Some(index) = index.as_deref_mut() {
                index.entry(&entry);
            }
        }
        let pos = entries.closed_at()?;
        // At the map's `}`: close it as the event reader would.
        self.pos = pos;
        self.event_start = pos;
        self.close();
        Some((len, sorted))
    }

    #[inline(always)]
    fn skip_whitespace(&mut self) {
        self.pos = skip_whitespace(self.text.as_bytes(), self.pos);
    }

    #[inline(always)]
    fn in_object(&self) -> bool {
        self.kinds.get(self.depth.saturating_sub(1) as usize)
    }

    #[inline(always)]
    fn after_value(&mut self) {
        self.expect = if self.depth == 0 { Expect::Done } else { Expect::CommaOrEnd };
    }

    #[inline(always)]
    fn step(&mut self) -> Result<Option<Event<'a>>, JsonError> {
        loop {
            self.skip_whitespace();
            self.event_start = self.pos;
            let byte = self.text.as_bytes().get(self.pos).copied();
            match self.expect {
                Expect::Done => {
                    return match byte {
                        None => Ok(None),
                        Some(_) => self.error(JsonErrorKind::TrailingCharacters, self.pos),
                    };
                }
                Expect::CommaOrEnd => match byte {
                    Some(b',') => {
                        self.pos += 1;
                        self.expect = if self.in_object() { Expect::Key } else { Expect::Value };
                    }
                    Some(b'}') if self.in_object() => return Ok(Some(self.close())),
                    Some(b']') if !self.in_object() => return Ok(Some(self.close())),
                    None => return self.error(JsonErrorKind::UnexpectedEnd, self.pos),
                    Some(_) => return self.error(JsonErrorKind::UnexpectedByte, self.pos),
                },
                Expect::FirstKeyOrEnd => match byte {
                    Some(b'}') => return Ok(Some(self.close())),
                    _ => return self.key(byte).map(Some),
                },
                Expect::Key => return self.key(byte).map(Some),
                Expect::FirstElementOrEnd => match byte {
                    Some(b']') => return Ok(Some(self.close())),
                    _ => return self.value(byte).map(Some),
                },
                Expect::Value => return self.value(byte).map(Some),
            }
        }
    }

    #[inline(always)]
    fn value(&mut self, byte: Option<u8>) -> Result<Event<'a>, JsonError> {
        let start = self.pos;
        let event = match byte {
            None => return self.error(JsonErrorKind::UnexpectedEnd, start),
            Some(b'{') => return self.open(true),
            Some(b'[') => return self.open(false),
            Some(b'"') => Event::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => {
                let (number, end) = scan_number(self.text, start)?;
                self.pos = end;
                Event::Number(number)
            }
            Some(b't') => self.literal(b"true", Event::Bool(true))?,
            Some(b'f') => self.literal(b"false", Event::Bool(false))?,
            Some(b'n') => self.literal(b"null", Event::Null)?,
            Some(_) => return self.error(JsonErrorKind::UnexpectedByte, start),
        };
        self.after_value();
        Ok(event)
    }

    fn literal(&mut self, word: &[u8], event: Event<'a>) -> Result<Event<'a>, JsonError> {
        self.pos = literal_end(self.text.as_bytes(), self.pos, word)?;
        Ok(event)
    }

    /// A string whose opening quote is at `self.pos`.
    #[inline(always)]
    fn string(&mut self) -> Result<JsonStr<'a>, JsonError> {
        let content = self.pos + 1;
        let (close, has_escapes) = scan_string(self.text, content)?;
        self.pos = close + 1;
        let raw = self.text.get(content..close).unwrap_or("");
        Ok(JsonStr::from_validated(raw, has_escapes))
    }

    #[inline(always)]
    fn open(&mut self, object: bool) -> Result<Event<'a>, JsonError> {
        if self.depth >= self.max_depth {
            return self.error(JsonErrorKind::DepthExceeded, self.pos);
        }
        self.kinds.set(self.depth as usize, object);
        self.depth += 1;
        self.pos += 1;
        if object {
            self.expect = Expect::FirstKeyOrEnd;
            Ok(Event::ObjectStart)
        } else {
            self.expect = Expect::FirstElementOrEnd;
            Ok(Event::ArrayStart)
        }
    }

    #[inline(always)]
    fn close(&mut self) -> Event<'a> {
        let object = self.in_object();
        if object {
            let depth = self.depth as u16;
            while self.keys.last().is_some_and(|slot| slot.depth == depth) {
                self.keys.pop();
            }
            self.deferred.set(self.depth.saturating_sub(1) as usize, false);
        }
        self.depth -= 1;
        self.pos += 1;
        self.after_value();
        if object {
            Event::ObjectEnd
        } else {
            Event::ArrayEnd
        }
    }

    #[inline(always)]
    fn key(&mut self, byte: Option<u8>) -> Result<Event<'a>, JsonError> {
        let start = self.pos;
        match byte {
            Some(b'"') => {}
            None => return self.error(JsonErrorKind::UnexpectedEnd, start),
            Some(_) => return self.error(JsonErrorKind::ExpectedKey, start),
        }
        let key = self.string()?;
        self.remember_key(key, start)?;
        self.skip_whitespace();
        match self.text.as_bytes().get(self.pos) {
            Some(b':') => self.pos += 1,
            None => return self.error(JsonErrorKind::UnexpectedEnd, self.pos),
            Some(_) => return self.error(JsonErrorKind::ExpectedColon, self.pos),
        }
        self.expect = Expect::Value;
        Ok(Event::Key(key))
    }

    /// Record a key of the innermost object, rejecting it if the object already has it.
    fn remember_key(&mut self, key: JsonStr<'a>, at: usize) -> Result<(), JsonError> {
        if self.trusted || self.deferred_here() {
            return Ok(());
        }
        let hash = key_hash(&key);
        let depth = self.depth as u16;
        for slot in self.keys.iter().rev().take_while(|slot| slot.depth == depth) {
            if slot.hash == hash && self.slot_str(slot).eq_decoded(&key) {
                return self.error(JsonErrorKind::DuplicateKey, at);
            }
        }
        let slot = KeySlot { hash, start: at + 1, len: key.raw().len(), depth, has_escapes: key.has_escapes() };
        self.keys.push(slot).or_else(|_| self.error(JsonErrorKind::TooManyKeys, at))
    }

    fn slot_str(&self, slot: &KeySlot) -> JsonStr<'a> {
        let raw = self.text.get(slot.start..slot.start + slot.len).unwrap_or("");
        JsonStr::from_validated(raw, slot.has_escapes)
    }
}

/// A cheap filter for duplicate keys: the decoded length mixed with the first and the
/// last (up to) eight decoded bytes, so `"a"` and `"\u0061"` hash alike. Equal hashes are
/// confirmed by a full comparison.
fn key_hash(key: &JsonStr<'_>) -> u32 {
    let (len, head, tail) = match key.as_str() {
        Some(plain) => {
            let bytes = plain.as_bytes();
            let tail_start = bytes.len().saturating_sub(8);
            (bytes.len(), le_prefix(bytes), le_prefix(bytes.get(tail_start..).unwrap_or(&[])))
        }
        None => {
            // Stream the decoded bytes: keep the first eight and a rolling last eight.
            let (mut len, mut head, mut tail) = (0usize, 0u64, 0u64);
            for ch in key.chars() {
                for &b in ch.encode_utf8(&mut [0u8; 4]).as_bytes() {
                    if len < 8 {
                        head |= u64::from(b) << (8 * len);
                    }
                    tail = (tail >> 8) | (u64::from(b) << 56);
                    len += 1;
                }
            }
            if len < 8 {
                tail >>= 8 * (8 - len);
            }
            (len, head, tail)
        }
    };
    let mixed = (head ^ tail.rotate_left(29) ^ (len as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 32) as u32
}

/// Up to the first eight bytes as a little-endian number, zero-padded.
fn le_prefix(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let n = bytes.len().min(8);
    if let (Some(dst), Some(src)) = (word.get_mut(..n), bytes.get(..n)) {
        dst.copy_from_slice(src);
    }
    u64::from_le_bytes(word)
}

/// The text up to its first invalid UTF-8 byte, and where that byte is. One fast UTF-8
/// pass over the whole text up front; the scanners then work on a `str`. Invalid bytes
/// are reported when a reader gets to them (running out of the valid prefix), so errors
/// still come in text order.
pub(crate) fn valid_prefix(text: &[u8]) -> (&str, Option<usize>) {
    match super::text_str(text) {
        Ok(valid) => (valid, None),
        Err(err) => {
            let valid = text.get(..err.valid_up_to()).and_then(|b| core::str::from_utf8(b).ok());
            (valid.unwrap_or(""), Some(err.valid_up_to()))
        }
    }
}

/// One bit per nesting level, up to [`MAX_DEPTH`]: which open containers are objects,
/// which objects check their own keys. In machine words, so that a 32-bit CPU shifts
/// its own integers rather than pairs of them.
#[derive(Clone, Copy)]
pub(crate) struct BitStack([usize; MAX_DEPTH as usize / WORD_BITS]);

const WORD_BITS: usize = usize::BITS as usize;

impl BitStack {
    pub(crate) const EMPTY: BitStack = BitStack([0; MAX_DEPTH as usize / WORD_BITS]);

    /// The bit of level `index` (false beyond [`MAX_DEPTH`]).
    #[inline(always)]
    pub(crate) fn get(&self, index: usize) -> bool {
        let (word, bit) = (index / WORD_BITS, index % WORD_BITS);
        self.0.get(word).is_some_and(|word| word >> bit & 1 == 1)
    }

    /// Set the bit of level `index` (nothing beyond [`MAX_DEPTH`]).
    #[inline(always)]
    pub(crate) fn set(&mut self, index: usize, value: bool) {
        let (word, bit) = (index / WORD_BITS, index % WORD_BITS);
        if let Some(word) = self.0.get_mut(word) {
            if value {
                *word |= 1 << bit;
            } else {
                *word &= !(1 << bit);
            }
        }
    }
}

/// An error met reading a [`valid_prefix`]: running out of it (`UnexpectedEnd`) means
/// reaching the invalid byte at `utf8_error`, when there is one.
pub(crate) fn utf8_aware(err: JsonError, utf8_error: Option<usize>) -> JsonError {
    match utf8_error {
        Some(at) if err.kind == JsonErrorKind::UnexpectedEnd => JsonError::new(JsonErrorKind::InvalidUtf8, at),
        _ => err,
    }
}

/// The index after `word` (`true`, `false`, `null`) spelled at `pos`, else the error at
/// the first byte that differs (or the end of the text).
pub(crate) fn literal_end(bytes: &[u8], pos: usize, word: &[u8]) -> Result<usize, JsonError> {
    let end = pos + word.len();
    if bytes.get(pos..end) == Some(word) {
        return Ok(end);
    }
    let same = bytes.get(pos..).unwrap_or(&[]).iter().zip(word).take_while(|(a, b)| a == b).count();
    let at = pos + same;
    let kind = if at >= bytes.len() { JsonErrorKind::UnexpectedEnd } else { JsonErrorKind::UnexpectedByte };
    Err(JsonError::new(kind, at))
}

/// The index after the one value that starts at `at` (whitespace first allowed) in
/// `text`, read strictly, the value nesting at most `max_depth` levels; `None` on any
/// problem. For the fast paths, which step over unknown members this way.
pub(crate) fn skip_value_at(text: &str, at: usize, max_depth: u32) -> Option<usize> {
    let mut reader = Reader::<DEFAULT_KEY_CAPACITY>::at(text, None, at, Limits { max_depth });
    let first = reader.next_event().ok()??;
    reader.skip_value(&first).ok()?;
    Some(reader.pos)
}

/// Validate a whole text against SPEC §4 without looking at its values.
pub fn validate(text: &[u8], limits: Limits) -> Result<(), JsonError> {
    Reader::<DEFAULT_KEY_CAPACITY>::new(text, limits).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<(), JsonErrorKind> {
        validate(text.as_bytes(), Limits::default()).map_err(|e| e.kind)
    }

    #[test]
    fn accepts_valid_texts() {
        for ok in [
            "0",
            " {} ",
            "[]",
            "\"x\"",
            "{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e8\"}",
            "[true,false,null,-0,1.5e-3]",
            "{\"a\":{\"a\":1}}",
            "\t\r\n[ 1 , 2 ]\n",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_invalid_texts() {
        use JsonErrorKind::*;
        let cases = [
            ("", UnexpectedEnd),
            ("{", UnexpectedEnd),
            ("[1,]", UnexpectedByte),
            ("{\"a\":1,}", ExpectedKey),
            ("{\"a\" 1}", ExpectedColon),
            ("{1:2}", ExpectedKey),
            ("[1 2]", UnexpectedByte),
            ("{} {}", TrailingCharacters),
            ("\u{feff}{}", UnexpectedByte),
            ("NaN", UnexpectedByte),
            ("[Infinity]", UnexpectedByte),
            ("nul", UnexpectedEnd),
            ("[tru]", UnexpectedByte),
            ("{\"a\":1,\"a\":2}", DuplicateKey),
            ("{\"a\":1,\"\\u0061\":2}", DuplicateKey),
            ("[01]", InvalidNumber),
            ("[1}", UnexpectedByte),
            ("{\"a\":1]", UnexpectedByte),
            ("// c\n{}", UnexpectedByte),
        ];
        for (text, kind) in cases {
            assert_eq!(check(text), Err(kind), "{text:?}");
        }
    }

    #[test]
    fn same_key_in_sibling_and_nested_objects_is_fine() {
        assert_eq!(check("[{\"a\":1},{\"a\":2}]"), Ok(()));
        assert_eq!(check("{\"a\":{\"a\":{\"a\":1}},\"b\":{\"a\":2}}"), Ok(()));
        assert_eq!(check("{\"a\":{\"b\":1},\"a\":2}"), Err(JsonErrorKind::DuplicateKey));
    }

    #[test]
    fn depth_limit_is_enforced_without_recursion() {
        let deep = "[".repeat(32) + &"]".repeat(32);
        assert_eq!(check(&deep), Ok(()));
        let deeper = "[".repeat(33) + &"]".repeat(33);
        assert_eq!(check(&deeper), Err(JsonErrorKind::DepthExceeded));
        let huge = "[".repeat(1 << 20);
        let limits = Limits { max_depth: u32::MAX };
        assert_eq!(
            validate(huge.as_bytes(), limits).map_err(|e| (e.kind, e.offset)),
            Err((JsonErrorKind::DepthExceeded, MAX_DEPTH as usize))
        );
    }

    #[test]
    fn key_table_overflow_is_an_error_not_a_miss() {
        let mut text = String::from("{");
        for i in 0..=DEFAULT_KEY_CAPACITY {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("\"k{i}\":0"));
        }
        text.push('}');
        assert_eq!(check(&text), Err(JsonErrorKind::TooManyKeys));
        assert!(Reader::<128>::new(text.as_bytes(), Limits::default()).finish().is_ok());
    }

    #[test]
    fn deferred_objects_record_no_keys_but_nested_ones_still_do() {
        let mut text = String::from("{\"m\": {");
        for i in 0..=DEFAULT_KEY_CAPACITY {
            text.push_str(&format!("\"k{i}\": 0, "));
        }
        text.push_str("\"k0\": {\"a\": 1, \"a\": 2}}, \"n\": {\"b\": 1, \"b\": 2}}");
        let mut reader: Reader = Reader::new(text.as_bytes(), Limits::default());
        let mut deferred = false;
        let err = loop {
            match reader.next_event() {
                Ok(Some(Event::ObjectStart)) if reader.depth() == 2 && !deferred => {
                    reader.defer_duplicate_check();
                    deferred = true;
                }
                Ok(Some(_)) => {}
                Ok(None) => break None,
                Err(err) => break Some(err),
            }
        };
        // The map's 65 keys were not recorded, but the object nested in it is checked.
        let err = err.map(|e| (e.kind, e.offset));
        assert_eq!(err, Some((JsonErrorKind::DuplicateKey, text.find("\"a\": 2").unwrap())));
    }

    #[test]
    fn a_deferred_object_does_not_disable_its_sibling() {
        let text = b"[{\"a\": 1, \"a\": 2}, {\"b\": 1, \"b\": 2}]";
        let mut reader: Reader = Reader::new(text, Limits::default());
        assert_eq!(reader.next_event(), Ok(Some(Event::ArrayStart)));
        assert_eq!(reader.next_event(), Ok(Some(Event::ObjectStart)));
        reader.defer_duplicate_check();
        let err = reader.finish().unwrap_err();
        assert_eq!((err.kind, err.offset), (JsonErrorKind::DuplicateKey, 28));
    }

    /// Keys of one length that share their first and last eight bytes hash alike:
    /// the full comparison behind the hash tells them apart.
    #[test]
    fn keys_that_hash_alike_but_differ_are_not_duplicates() {
        let (a, b) = ("01234567-a-89abcdef", "01234567-b-89abcdef");
        assert_eq!(key_hash(&JsonStr::from_plain(a)), key_hash(&JsonStr::from_plain(b)));
        let text = std::format!(r#"{{"{a}": 1, "{b}": 2}}"#);
        assert_eq!(validate(text.as_bytes(), Limits::default()), Ok(()));
        let text = std::format!(r#"{{"{a}": 1, "{b}": 2, "{a}": 3}}"#);
        assert_eq!(validate(text.as_bytes(), Limits::default()).map_err(|e| e.kind), Err(JsonErrorKind::DuplicateKey));
    }

    /// The length is mixed in whole: keys with the same first and last eight bytes but
    /// different lengths (16 to 80 bytes of one character) hash apart.
    #[test]
    fn keys_that_differ_only_in_length_hash_apart() {
        for c in '!'..='~' {
            let mut hashes: std::vec::Vec<u32> =
                (16..=80).map(|len| key_hash(&JsonStr::from_plain(&c.to_string().repeat(len)))).collect();
            hashes.sort_unstable();
            hashes.dedup();
            assert_eq!(hashes.len(), 65, "keys of {c:?}");
        }
    }

    /// The hash is a filter in front of the full comparison: distinct keys whose first
    /// or last eight bytes differ, plain or escaped, should almost never share it.
    #[test]
    fn distinct_keys_rarely_share_a_key_hash() {
        let n = if cfg!(miri) { 200 } else { 20_000 };
        for kind in 0..3 {
            let spell = |i: u32| match kind {
                0 => std::format!("k{i}"),
                1 => std::format!("a_long_key_name_{i:08}"),
                _ => std::format!("\\u00e9{i}"),
            };
            let mut hashes: std::vec::Vec<u32> =
                (0..n).map(|i| key_hash(&JsonStr::from_validated(&spell(i), kind == 2))).collect();
            hashes.sort_unstable();
            hashes.dedup();
            assert!(hashes.len() * 1000 >= n as usize * 999, "{} hashes for {n} keys like {}", hashes.len(), spell(1));
        }
    }

    #[test]
    fn key_hash_depends_on_the_decoded_value_only() {
        for (plain, escaped) in [
            ("a", "\\u0061"),
            ("dtype", "\\u0064type"),
            ("tokenizer_revision", "tokenizer_revisio\\u006e"),
            ("é😀x", "\\u00e9\\ud83d\\ude00x"),
            ("0123456789abcdef0", "0123456789abcdef\\u0030"),
        ] {
            assert_eq!(
                key_hash(&JsonStr::from_plain(plain)),
                key_hash(&JsonStr::from_validated(escaped, true)),
                "{plain}"
            );
        }
    }

    #[test]
    fn invalid_utf8_is_reported_in_text_order() {
        let check_bytes = |text: &[u8]| validate(text, Limits::default()).map_err(|e| (e.kind, e.offset));
        assert_eq!(check_bytes(b"[\"\xff\"]"), Err((JsonErrorKind::InvalidUtf8, 2)));
        assert_eq!(check_bytes(b"[x, \"\xff\"]"), Err((JsonErrorKind::UnexpectedByte, 1)));
        assert_eq!(check_bytes(b"[1] \xc3"), Err((JsonErrorKind::InvalidUtf8, 4)));
        assert_eq!(check_bytes(b"[\"\xc0\xaf\"]"), Err((JsonErrorKind::InvalidUtf8, 2)));
        assert_eq!(check_bytes(b"[\"\xed\xa0\x80\"]"), Err((JsonErrorKind::InvalidUtf8, 2)));
        assert_eq!(check_bytes("[\"é☃😀\"]".as_bytes()), Ok(()));
    }

    /// `string_map` over the map in `text` (the value of key "m"), against reading the
    /// same map event by event: the same entry count and order verdict whenever it is
    /// taken, and the reader in the same state after it (the rest of the events equal).
    fn string_map_agrees(text: &str, arrays: bool) -> bool {
        let open = |reader: &mut Reader<'_>| {
            assert_eq!(reader.next_event(), Ok(Some(Event::ObjectStart)));
            assert!(matches!(reader.next_event(), Ok(Some(Event::Key(_)))));
            if reader.next_event() != Ok(Some(Event::ObjectStart)) {
                return false;
            }
            reader.defer_duplicate_check();
            true
        };
        let mut fast: Reader = Reader::new(text.as_bytes(), Limits::default());
        let mut slow: Reader = Reader::new(text.as_bytes(), Limits::default());
        if !open(&mut fast) || !open(&mut slow) {
            return false;
        }
        let Some((len, sorted)) = fast.string_map(arrays, None) else {
            return false;
        };
        let (mut slow_len, mut slow_sorted, mut previous) = (0, true, None);
        let mut values_ok = true;
        while let Ok(Some(Event::Key(key))) = slow.next_event() {
            slow_len += 1;
            if previous.is_some_and(|p| super::super::keys::cmp_decoded(&p, &key) != core::cmp::Ordering::Less) {
                slow_sorted = false;
            }
            previous = Some(key);
            let value = slow.next_event().unwrap().unwrap();
            values_ok &= match (arrays, value) {
                (false, Event::Str(_)) => true,
                (true, Event::ArrayStart) => {
                    let mut all_strings = true;
                    loop {
                        match slow.next_event().unwrap().unwrap() {
                            Event::ArrayEnd => break,
                            Event::Str(_) => {}
                            _ => all_strings = false,
                        }
                    }
                    all_strings
                }
                _ => false,
            };
        }
        assert!(values_ok, "{text}");
        assert_eq!((len, sorted), (slow_len, slow_sorted), "{text}");
        assert_eq!(fast.event_offset(), slow.event_offset(), "{text}");
        loop {
            let (a, b) = (fast.next_event(), slow.next_event());
            assert_eq!(a, b, "{text}");
            if !matches!(a, Ok(Some(_))) {
                return true;
            }
        }
    }

    #[test]
    fn string_maps_in_one_pass_agree_with_the_events() {
        let taken = [
            (r#"{"m": {}, "n": 1}"#, false),
            (r#"{"m": { } }"#, true),
            (r#"{"m": {"a": "x", "b": "y"}, "n": [1]}"#, false),
            (r#"{"m": {"b": "x", "a": "y"}}"#, false),
            (r#"{"m": {"a": "x", "a": "y"}}"#, false),
            (r#"{"m": {"\u0062": "x", "a": "y", "é": "\n"}}"#, false),
            ("{\"m\":{\n \"a\" :\t\"x\" ,\r\n\"b\":\"\"\n}}", false),
            (r#"{"m": {"a": [], "b": ["x"], "c": ["x", "y", "z"]}}"#, true),
            (r#"{"m": {"a": [ "x" , "y" ], "a": [ ]}, "z": {}}"#, true),
        ];
        for (text, arrays) in taken {
            assert!(string_map_agrees(text, arrays), "{text}");
        }
        let not_taken = [
            (r#"{"m": {"a": 1}}"#, false),
            (r#"{"m": {"a": ["x"]}}"#, false),
            (r#"{"m": {"a": "x"}}"#, true),
            (r#"{"m": {"a": ["x", 1]}}"#, true),
            (r#"{"m": {"a": "x",}}"#, false),
            (r#"{"m": {"a" "x"}}"#, false),
            (r#"{"m": {"a": "x\q"}}"#, false),
            (r#"{"m": {"a": "x"] }"#, false),
            (r#"{"m": {"a": ["x",]}}"#, true),
            (r#"{"m": {"a": "x""#, false),
        ];
        for (text, arrays) in not_taken {
            let mut reader: Reader = Reader::new(text.as_bytes(), Limits::default());
            let _ = (reader.next_event(), reader.next_event(), reader.next_event());
            reader.defer_duplicate_check();
            let before = (reader.pos, reader.depth, reader.expect);
            assert_eq!(reader.string_map(arrays, None), None, "{text}");
            assert_eq!((reader.pos, reader.depth, reader.expect), before, "{text}");
        }
        // Only right after the `{` of a map whose keys the caller checks.
        let text = r#"{"m": {"a": "x"}}"#;
        let mut reader: Reader = Reader::new(text.as_bytes(), Limits::default());
        let _ = (reader.next_event(), reader.next_event(), reader.next_event());
        assert_eq!(reader.string_map(false, None), None, "keys not deferred");
        reader.defer_duplicate_check();
        let _ = (reader.next_event(), reader.next_event());
        assert_eq!(reader.string_map(false, None), None, "past the first entry");
        assert_eq!(reader.next_event(), Ok(Some(Event::ObjectEnd)));
        // Arrays one level down need room under the depth limit.
        let text = r#"{"m": {"a": ["x"]}}"#;
        let mut reader: Reader = Reader::new(text.as_bytes(), Limits { max_depth: 2 });
        let _ = (reader.next_event(), reader.next_event(), reader.next_event());
        reader.defer_duplicate_check();
        assert_eq!(reader.string_map(true, None), None);
    }

    #[test]
    fn error_is_sticky_and_offsets_point_at_the_problem() {
        let mut reader: Reader = Reader::new(b"[1, x]", Limits::default());
        assert!(reader.next_event().is_ok());
        assert!(reader.next_event().is_ok());
        let err = reader.next_event().unwrap_err();
        assert_eq!(err.offset, 4);
        assert_eq!(reader.next_event(), Err(err));
    }
}
