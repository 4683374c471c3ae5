//! The strict, non-recursive pull reader (SPEC §4).

use super::error::{JsonError, JsonErrorKind};
use super::number::{scan_number, JsonNumber};
use super::string::{scan_string, JsonStr};

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
    text: &'a [u8],
    pos: usize,
    event_start: usize,
    depth: u32,
    max_depth: u32,
    /// Bit `d` set: the container at depth `d + 1` is an object.
    kinds: [u64; (MAX_DEPTH as usize) / 64],
    expect: Expect,
    keys: heapless::Vec<KeySlot, KEYS>,
    failed: Option<JsonError>,
}

impl<'a, const KEYS: usize> Reader<'a, KEYS> {
    /// A reader over `text` with the given limits.
    pub fn new(text: &'a [u8], limits: Limits) -> Self {
        Reader {
            text,
            pos: 0,
            event_start: 0,
            depth: 0,
            max_depth: if limits.max_depth > MAX_DEPTH { MAX_DEPTH } else { limits.max_depth },
            kinds: [0; (MAX_DEPTH as usize) / 64],
            expect: Expect::Value,
            keys: heapless::Vec::new(),
            failed: None,
        }
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
    pub fn next_event(&mut self) -> Result<Option<Event<'a>>, JsonError> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        let result = self.step();
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

    fn skip_whitespace(&mut self) {
        let rest = self.text.get(self.pos..).unwrap_or(&[]);
        self.pos += rest
            .iter()
            .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
    }

    fn in_object(&self) -> bool {
        let index = self.depth.saturating_sub(1) as usize;
        self.kinds.get(index / 64).is_some_and(|word| word >> (index % 64) & 1 == 1)
    }

    fn after_value(&mut self) {
        self.expect = if self.depth == 0 { Expect::Done } else { Expect::CommaOrEnd };
    }

    fn step(&mut self) -> Result<Option<Event<'a>>, JsonError> {
        loop {
            self.skip_whitespace();
            self.event_start = self.pos;
            let byte = self.text.get(self.pos).copied();
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
        let end = self.pos + word.len();
        match self.text.get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(event)
            }
            _ => {
                // Point at the first byte that differs (or the end of the text).
                let same = self
                    .text
                    .get(self.pos..)
                    .unwrap_or(&[])
                    .iter()
                    .zip(word)
                    .take_while(|(a, b)| a == b)
                    .count();
                let at = self.pos + same;
                let kind = if at >= self.text.len() {
                    JsonErrorKind::UnexpectedEnd
                } else {
                    JsonErrorKind::UnexpectedByte
                };
                self.error(kind, at)
            }
        }
    }

    /// A string whose opening quote is at `self.pos`.
    fn string(&mut self) -> Result<JsonStr<'a>, JsonError> {
        let content = self.pos + 1;
        let (close, has_escapes) = scan_string(self.text, content)?;
        self.pos = close + 1;
        let raw = self
            .text
            .get(content..close)
            .and_then(|b| core::str::from_utf8(b).ok())
            .unwrap_or("");
        Ok(JsonStr::from_validated(raw, has_escapes))
    }

    fn open(&mut self, object: bool) -> Result<Event<'a>, JsonError> {
        if self.depth >= self.max_depth {
            return self.error(JsonErrorKind::DepthExceeded, self.pos);
        }
        let index = self.depth as usize;
        if let Some(word) = self.kinds.get_mut(index / 64) {
            let bit = 1u64 << (index % 64);
            if object {
                *word |= bit;
            } else {
                *word &= !bit;
            }
        }
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

    fn close(&mut self) -> Event<'a> {
        let object = self.in_object();
        if object {
            let depth = self.depth as u16;
            while self.keys.last().is_some_and(|slot| slot.depth == depth) {
                self.keys.pop();
            }
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
        match self.text.get(self.pos) {
            Some(b':') => self.pos += 1,
            None => return self.error(JsonErrorKind::UnexpectedEnd, self.pos),
            Some(_) => return self.error(JsonErrorKind::ExpectedColon, self.pos),
        }
        self.expect = Expect::Value;
        Ok(Event::Key(key))
    }

    /// Record a key of the innermost object, rejecting it if the object already has it.
    fn remember_key(&mut self, key: JsonStr<'a>, at: usize) -> Result<(), JsonError> {
        let hash = key_hash(&key);
        let depth = self.depth as u16;
        for slot in self.keys.iter().rev().take_while(|slot| slot.depth == depth) {
            if slot.hash == hash && self.slot_str(slot).eq_decoded(&key) {
                return self.error(JsonErrorKind::DuplicateKey, at);
            }
        }
        let slot = KeySlot {
            hash,
            start: at + 1,
            len: key.raw().len(),
            depth,
            has_escapes: key.has_escapes(),
        };
        self.keys.push(slot).or_else(|_| self.error(JsonErrorKind::TooManyKeys, at))
    }

    fn slot_str(&self, slot: &KeySlot) -> JsonStr<'a> {
        let raw = self
            .text
            .get(slot.start..slot.start + slot.len)
            .and_then(|b| core::str::from_utf8(b).ok())
            .unwrap_or("");
        JsonStr::from_validated(raw, slot.has_escapes)
    }
}

/// FNV-1a over the decoded key, so `"a"` and `"\u0061"` hash alike.
fn key_hash(key: &JsonStr<'_>) -> u32 {
    const PRIME: u32 = 0x0100_0193;
    let mut hash: u32 = 0x811C_9DC5;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u32::from(b)).wrapping_mul(PRIME);
        }
    };
    match key.as_str() {
        Some(plain) => feed(plain.as_bytes()),
        None => {
            for ch in key.chars() {
                feed(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
            }
        }
    }
    hash
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
    fn error_is_sticky_and_offsets_point_at_the_problem() {
        let mut reader: Reader = Reader::new(b"[1, x]", Limits::default());
        assert!(reader.next_event().is_ok());
        assert!(reader.next_event().is_ok());
        let err = reader.next_event().unwrap_err();
        assert_eq!(err.offset, 4);
        assert_eq!(reader.next_event(), Err(err));
    }
}
