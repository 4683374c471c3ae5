//! Validating one container nested in a document, exactly as the event reader would had
//! it read the document up to there, in a few hundred bytes of state instead of the
//! reader's key table: for readers that walk a flat document themselves (the identity
//! reader) and meet a nested value.
//!
//! The reader remembers every open key (hash, place, length, depth) to find duplicates;
//! here only each open object's start and key count are kept, for the innermost
//! [`CACHED_LEVELS`] levels, and a new key is compared with its object's earlier keys by
//! walking that object's text again (already validated, so the walk is a plain skip).
//! An object can hold no more keys than the key table, so each key costs at most one
//! walk over its own object: linear time. Objects nested deeper than the cache (only
//! with a depth limit raised above the default) find their start and count by walking
//! again from the value's start: slower, never unbounded in memory, still exact.
//! Written here rather than taken from a crate for the size and the exactness: it
//! must give the event reader's error, offset for offset.

use super::error::{JsonError, JsonErrorKind};
use super::number::scan_number;
use super::reader::{literal_end, utf8_aware, BitStack, Limits, DEFAULT_KEY_CAPACITY, DEFAULT_MAX_DEPTH, MAX_DEPTH};
use super::string::JsonStr;
use super::whitespace::whitespace_end;

/// How many levels keep their object's start and key count at hand: the default depth
/// limit, so that a document within it is read in linear time.
const CACHED_LEVELS: usize = DEFAULT_MAX_DEPTH as usize;

/// What the grammar allows next (as in the event reader).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    FirstElementOrEnd,
    FirstKeyOrEnd,
    Key,
    CommaOrEnd,
}

/// Validate the container whose `[` or `{` is at `at` in `text` (the valid UTF-8 prefix
/// of a document, `utf8_error` where it stops) as an event reader with the default key
/// table would that had read the document up to there — inside an object at depth 1
/// holding `open_keys` keys so far, and at `depth` (0 at the top, 1 in that object, 2
/// in an array in it) — and return the index after it: the same depth limit, the same
/// keys open (so the same `TooManyKeys`), the same first error. Out of line: its state
/// is on the stack only while a nested value is read.
#[inline(never)]
pub(crate) fn skip_nested(
    text: &str,
    utf8_error: Option<usize>,
    at: usize,
    limits: Limits,
    depth: u32,
    open_keys: usize,
) -> Result<usize, JsonError> {
    let mut walk = Nested {
        text,
        start: at,
        pos: at,
        outer_depth: depth,
        depth,
        max_depth: limits.max_depth.min(MAX_DEPTH),
        kinds: BitStack::EMPTY,
        object_start: [0; CACHED_LEVELS],
        object_keys: [0; CACHED_LEVELS],
        open_keys,
    };
    walk.run().map_err(|err| utf8_aware(err, utf8_error))
}

struct Nested<'a> {
    text: &'a str,
    /// Where the nested value starts (walks for levels beyond the cache begin here).
    start: usize,
    pos: usize,
    /// The depth around the value: the walk ends when it is back there.
    outer_depth: u32,
    depth: u32,
    max_depth: u32,
    /// Bit `d` set: the container at depth `d + 1` is an object.
    kinds: BitStack,
    /// Per level `d` below [`CACHED_LEVELS`]: where the object at depth `d + 1` starts
    /// and how many keys it has so far.
    object_start: [usize; CACHED_LEVELS],
    object_keys: [u8; CACHED_LEVELS],
    /// Keys open in all enclosing objects, the document's own included.
    open_keys: usize,
}

impl Nested<'_> {
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    fn error<T>(&self, kind: JsonErrorKind, at: usize) -> Result<T, JsonError> {
        Err(JsonError::new(kind, at))
    }

    fn in_object(&self) -> bool {
        self.kinds.get(self.depth.saturating_sub(1) as usize)
    }

    fn run(&mut self) -> Result<usize, JsonError> {
        let mut expect = Expect::Value;
        loop {
            self.pos = whitespace_end(self.bytes(), self.pos);
            let byte = self.bytes().get(self.pos).copied();
            let at = self.pos;
            expect = match (expect, byte) {
                (Expect::CommaOrEnd, Some(b',')) => {
                    self.pos += 1;
                    if self.in_object() {
                        Expect::Key
                    } else {
                        Expect::Value
                    }
                }
                (Expect::CommaOrEnd, Some(b'}')) if self.in_object() => self.close(),
                (Expect::CommaOrEnd, Some(b']')) if !self.in_object() => self.close(),
                (Expect::CommaOrEnd, None) => return self.error(JsonErrorKind::UnexpectedEnd, at),
                (Expect::CommaOrEnd, Some(_)) => return self.error(JsonErrorKind::UnexpectedByte, at),
                (Expect::FirstKeyOrEnd, Some(b'}')) | (Expect::FirstElementOrEnd, Some(b']')) => self.close(),
                (Expect::FirstKeyOrEnd | Expect::Key, _) => self.key(byte)?,
                (Expect::FirstElementOrEnd | Expect::Value, _) => self.value(byte)?,
            };
            if self.depth == self.outer_depth {
                return Ok(self.pos);
            }
        }
    }

    fn value(&mut self, byte: Option<u8>) -> Result<Expect, JsonError> {
        let at = self.pos;
        match byte {
            None => return self.error(JsonErrorKind::UnexpectedEnd, at),
            Some(b'{') => return self.open(true),
            Some(b'[') => return self.open(false),
            Some(b'"') => self.pos = string_end(self.text, at)?,
            Some(b'-' | b'0'..=b'9') => self.pos = scan_number(self.text, at)?.1,
            Some(b't') => self.pos = literal_end(self.bytes(), at, b"true")?,
            Some(b'f') => self.pos = literal_end(self.bytes(), at, b"false")?,
            Some(b'n') => self.pos = literal_end(self.bytes(), at, b"null")?,
            Some(_) => return self.error(JsonErrorKind::UnexpectedByte, at),
        }
        Ok(Expect::CommaOrEnd)
    }

    fn open(&mut self, object: bool) -> Result<Expect, JsonError> {
        if self.depth >= self.max_depth {
            return self.error(JsonErrorKind::DepthExceeded, self.pos);
        }
        let index = self.depth as usize;
        self.kinds.set(index, object);
        if let (true, Some(start), Some(keys)) =
            (object, self.object_start.get_mut(index), self.object_keys.get_mut(index))
        {
            *start = self.pos;
            *keys = 0;
        }
        self.depth += 1;
        self.pos += 1;
        Ok(if object { Expect::FirstKeyOrEnd } else { Expect::FirstElementOrEnd })
    }

    fn close(&mut self) -> Expect {
        if self.in_object() {
            let (_, keys) = self.innermost_object();
            self.open_keys = self.open_keys.saturating_sub(keys);
        }
        self.depth -= 1;
        self.pos += 1;
        Expect::CommaOrEnd
    }

    fn key(&mut self, byte: Option<u8>) -> Result<Expect, JsonError> {
        let at = self.pos;
        match byte {
            Some(b'"') => {}
            None => return self.error(JsonErrorKind::UnexpectedEnd, at),
            Some(_) => return self.error(JsonErrorKind::ExpectedKey, at),
        }
        self.pos = string_end(self.text, at)?;
        let key = key_at(self.text, at);
        let (object, _) = self.innermost_object();
        if keys_before(self.text, object, at, |earlier| earlier.eq_decoded(&key)) {
            return self.error(JsonErrorKind::DuplicateKey, at);
        }
        if self.open_keys >= DEFAULT_KEY_CAPACITY {
            return self.error(JsonErrorKind::TooManyKeys, at);
        }
        self.open_keys += 1;
        if let Some(keys) = self.object_keys.get_mut(self.depth.saturating_sub(1) as usize) {
            *keys += 1;
        }
        self.pos = whitespace_end(self.bytes(), self.pos);
        match self.bytes().get(self.pos) {
            Some(b':') => self.pos += 1,
            None => return self.error(JsonErrorKind::UnexpectedEnd, self.pos),
            Some(_) => return self.error(JsonErrorKind::ExpectedColon, self.pos),
        }
        Ok(Expect::Value)
    }

    /// The start and key count of the innermost open container, an object: from the
    /// cache, or beyond it by walking again from the value's start.
    fn innermost_object(&self) -> (usize, usize) {
        let index = self.depth.saturating_sub(1) as usize;
        if let (Some(&start), Some(&keys)) = (self.object_start.get(index), self.object_keys.get(index)) {
            return (start, usize::from(keys));
        }
        // The last `{` opened at this depth before `pos` is the open one.
        let mut found = (self.start, 0);
        let mut depth = self.outer_depth;
        let mut at = self.start;
        let bytes = self.bytes();
        while at < self.pos {
            match bytes.get(at) {
                Some(b'"') => {
                    at = string_end(self.text, at).unwrap_or(self.pos);
                    continue;
                }
                Some(b'{' | b'[') => {
                    depth += 1;
                    if depth == self.depth {
                        found = (at, 0);
                    }
                }
                Some(b'}' | b']') => depth -= 1,
                _ => {}
            }
            at += 1;
        }
        let keys = count_keys(self.text, found.0, self.pos);
        (found.0, keys)
    }
}

/// The index after the string whose opening quote is at `at`.
fn string_end(text: &str, at: usize) -> Result<usize, JsonError> {
    Ok(JsonStr::scan_at(text, at)?.1)
}

/// The already validated key whose opening quote is at `at`.
fn key_at(text: &str, at: usize) -> JsonStr<'_> {
    JsonStr::scan_at(text, at).map_or(JsonStr::from_validated("", false), |(key, _)| key)
}

/// Whether a key of the object whose `{` is at `object`, before `end` in a validated
/// text, satisfies `matches`.
pub(crate) fn keys_before(
    text: &str,
    object: usize,
    end: usize,
    mut matches: impl FnMut(&JsonStr<'_>) -> bool,
) -> bool {
    let mut found = false;
    walk_keys(text, object, end, |key| found = found || matches(&key));
    found
}

/// How many keys the object whose `{` is at `object` has before `end`.
fn count_keys(text: &str, object: usize, end: usize) -> usize {
    let mut keys = 0;
    walk_keys(text, object, end, |_| keys += 1);
    keys
}

/// Each key of the object whose `{` is at `object`, before `end`, in a validated text:
/// its members are stepped over by their brackets and strings alone.
fn walk_keys<'a>(text: &'a str, object: usize, end: usize, mut each: impl FnMut(JsonStr<'a>)) {
    let bytes = text.as_bytes();
    let mut at = object + 1;
    // Depth inside the object: 0 at its own members.
    let mut depth = 0usize;
    // At depth 0, the next string is a key (after `{` or `,`).
    let mut key_next = true;
    while at < end {
        match bytes.get(at) {
            Some(b'"') => {
                if depth == 0 && key_next {
                    each(key_at(text, at));
                    key_next = false;
                }
                at = string_end(text, at).unwrap_or(end);
                continue;
            }
            Some(b'{' | b'[') => depth += 1,
            Some(b'}' | b']') if depth == 0 => return,
            Some(b'}' | b']') => depth -= 1,
            Some(b',') if depth == 0 => key_next = true,
            _ => {}
        }
        at += 1;
    }
}
