//! The identity reader (SPEC §2.2, §4): one forward pass over the flat ten-key object,
//! the strict-JSON rules checked in line by the scanners the event reader uses, giving
//! what the event reader's identity path (`parse::parse_general`, its test oracle)
//! gives, error for error — code, offset, field and words.
//!
//! Written beside the event reader rather than on it for small targets: its state is a
//! few words, not the reader's bit stacks and key table, so a firmware that reads
//! frames links neither. A container nested in the object (never valid in an identity,
//! but its first JSON problem is what gets reported) is validated as the event reader
//! would, without its key table ([`skip_nested`]).

use super::parse::ArrayProblem;
use super::{field, field_error, rules, Dtype, InclusiveRange, PayloadIdentity, FIELD_NAMES, MAX_SHAPE_DIMS};
use crate::error::{Error, ErrorCode};
use crate::json::{
    keys_before, literal_end, scan_number, skip_nested, utf8_aware, valid_prefix, whitespace_end, JsonError,
    JsonErrorKind, JsonStr, Limits, DEFAULT_KEY_CAPACITY, MAX_DEPTH,
};

/// The identity in `text`, or the error the event reader's path gives for it.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn parse_flat(text: &[u8], limits: Limits) -> Result<PayloadIdentity<'_>, Error> {
    let mut identity = PayloadIdentity::unread();
    read_flat(text, limits, &mut identity).map(|()| identity)
}

/// [`parse_flat`] into `identity`: every field of it when `Ok`. Not inlined into the
/// canonical fast path's caller: the two stack frames stay apart.
#[inline(never)]
pub(crate) fn read_flat<'a>(text: &'a [u8], limits: Limits, identity: &mut PayloadIdentity<'a>) -> Result<(), Error> {
    let (valid, utf8_error) = valid_prefix(text);
    let mut walk = Walk { text: valid, utf8_error, pos: 0, limits };
    // Filled field by field as the keys come; which ones came, `Keys::known` says.
    *identity = PayloadIdentity { source: Some(text), ..PayloadIdentity::unread() };
    match walk.document(identity) {
        Ok(judged) => judged,
        Err(err) => Err(utf8_aware(err, walk.utf8_error).to_error(ErrorCode::IdentityJson, 0)),
    }
}

/// One value as the identity rules see it.
enum Value<'a> {
    Str(JsonStr<'a>),
    /// An integer, `None` when it is outside `i64`.
    Integer(Option<i64>),
    /// An array: how many integers it held (all in the caller's slice), or its first
    /// problem.
    Array(Result<usize, ArrayProblem>),
    /// Anything else: another number, a literal, an object.
    Other,
}

struct Walk<'a> {
    /// The text up to its first invalid UTF-8 byte.
    text: &'a str,
    /// Where the text stops being UTF-8: running out of `text` means reaching it.
    utf8_error: Option<usize>,
    pos: usize,
    limits: Limits,
}

impl<'a> Walk<'a> {
    fn ws(&mut self) {
        self.pos = whitespace_end(self.text.as_bytes(), self.pos);
    }

    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn error<T>(&self, kind: JsonErrorKind) -> Result<T, JsonError> {
        Err(JsonError::new(kind, self.pos))
    }

    fn max_depth(&self) -> u32 {
        self.limits.max_depth.min(MAX_DEPTH)
    }

    /// After a member or element: `true` past a `,` (and the whitespace after it),
    /// `false` past the container's `close`.
    fn comma_or(&mut self, close: u8) -> Result<bool, JsonError> {
        self.ws();
        match self.byte() {
            Some(b',') => {
                self.pos += 1;
                self.ws();
                Ok(true)
            }
            Some(byte) if byte == close => {
                self.pos += 1;
                Ok(false)
            }
            None => self.error(JsonErrorKind::UnexpectedEnd),
            Some(_) => self.error(JsonErrorKind::UnexpectedByte),
        }
    }

    /// The string whose opening quote is at `pos`.
    fn string(&mut self) -> Result<JsonStr<'a>, JsonError> {
        let (string, end) = JsonStr::scan_at(self.text, self.pos)?;
        self.pos = end;
        Ok(string)
    }

    /// The whole text into `identity`. The outer `Result` is a JSON problem, which wins
    /// over any field problem.
    fn document(&mut self, identity: &mut PayloadIdentity<'a>) -> Result<Result<(), Error>, JsonError> {
        self.ws();
        let judged = match self.byte() {
            Some(b'{') => self.object(identity)?,
            // Validated all the same: a JSON problem is the error.
            _ => {
                self.scalar_or_nested(0, 0)?;
                Err(Error::new(ErrorCode::IdentityJson, "identity is not a JSON object").at(0))
            }
        };
        self.ws();
        if self.pos < self.text.len() {
            return self.error(JsonErrorKind::TrailingCharacters);
        }
        if let Some(at) = self.utf8_error {
            return Err(JsonError::new(JsonErrorKind::InvalidUtf8, at));
        }
        Ok(judged)
    }

    /// The object whose `{` is at `pos`, its fields into `identity`: the first field
    /// problem in text order, else the first missing key in declaration order.
    fn object(&mut self, identity: &mut PayloadIdentity<'a>) -> Result<Result<(), Error>, JsonError> {
        if self.max_depth() < 1 {
            return self.error(JsonErrorKind::DepthExceeded);
        }
        let mut keys = Keys { object: self.pos, known: 0, open: 0 };
        self.pos += 1;
        let mut first_problem: Option<Error> = None;
        self.ws();
        if self.byte() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                let key_at = self.pos;
                match self.byte() {
                    Some(b'"') => {}
                    None => return self.error(JsonErrorKind::UnexpectedEnd),
                    Some(_) => return self.error(JsonErrorKind::ExpectedKey),
                }
                let key = self.string()?;
                let known = keys.remember(self.text, key, key_at)?;
                self.ws();
                match self.byte() {
                    Some(b':') => self.pos += 1,
                    None => return self.error(JsonErrorKind::UnexpectedEnd),
                    Some(_) => return self.error(JsonErrorKind::ExpectedColon),
                }
                self.ws();
                let problem = match known {
                    Some(index) => self.field(index, keys.open, identity)?,
                    None => {
                        self.member_value(&mut [], keys.open)?;
                        Some(Error::new(ErrorCode::IdentityField, "unknown key in identity").at(key_at as u64))
                    }
                };
                if let Some(problem) = problem {
                    first_problem.get_or_insert(problem);
                }
                if !self.comma_or(b'}')? {
                    break;
                }
            }
        }
        if let Some(problem) = first_problem {
            return Ok(Err(problem));
        }
        let missing = FIELD_NAMES.iter().enumerate().find(|&(index, _)| keys.known & (1 << index) == 0);
        Ok(match missing {
            Some((_, name)) => Err(field_error(name, "missing key")),
            None => Ok(()),
        })
    }

    /// Read the value of known field `index` (of [`FIELD_NAMES`]) at `pos` into
    /// `identity`; its problem, if any, at the value's offset.
    fn field(
        &mut self,
        index: usize,
        open_keys: usize,
        identity: &mut PayloadIdentity<'a>,
    ) -> Result<Option<Error>, JsonError> {
        // FIELD_NAMES: the hash, four strings, three ranges, the dtype, the shape.
        const RANGES: core::ops::RangeInclusive<usize> = field::LAYER_RANGE..=field::TOKEN_SPAN;
        let name = FIELD_NAMES.get(index).copied().unwrap_or("");
        let at = self.pos;
        let mut pair = [0i64; 2];
        // The shape's dimensions go straight to the identity; a range's to `pair`.
        let value = if index == field::SHAPE {
            let _ = identity.shape.resize_default(MAX_SHAPE_DIMS);
            let value = self.member_value(&mut identity.shape, open_keys)?;
            identity.shape.truncate(match value {
                Value::Array(Ok(count)) => count,
                _ => 0,
            });
            value
        } else {
            let room = if RANGES.contains(&index) { &mut pair[..] } else { &mut [] };
            self.member_value(room, open_keys)?
        };
        let problem = |reason| Ok(Some(field_error(name, reason).at(at as u64)));
        let text = match value {
            Value::Str(text) if index <= field::TOKENIZER_REVISION || index == field::DTYPE => text,
            Value::Array(Ok(2)) if RANGES.contains(&index) => {
                let [start, end] = pair;
                let range = InclusiveRange::new(start, end);
                let (checked, slot) = match index {
                    field::LAYER_RANGE => (rules::check_range(name, range), &mut identity.layer_range),
                    field::HEAD_RANGE => (rules::check_head_range(range), &mut identity.head_range),
                    _ => (rules::check_range(name, range), &mut identity.token_span),
                };
                *slot = range;
                return Ok(checked.err().map(|err| err.at(at as u64)));
            }
            Value::Array(Ok(_) | Err(ArrayProblem::TooMany)) if RANGES.contains(&index) => {
                return problem("range must be exactly two integers")
            }
            Value::Array(Ok(0)) if index == field::SHAPE => return problem("shape is empty"),
            Value::Array(Ok(_)) if index == field::SHAPE => return Ok(None),
            Value::Array(Err(other)) if index >= field::LAYER_RANGE && index != field::DTYPE => {
                return problem(other.reason())
            }
            _ if index >= field::LAYER_RANGE && index != field::DTYPE => {
                return problem(ArrayProblem::NotArray.reason())
            }
            _ => return problem("expected a string"),
        };
        match index {
            field::PAYLOAD_HASH => {
                if let Err(err) = rules::check_payload_hash(&text) {
                    return Ok(Some(err.at(at as u64)));
                }
                identity.payload_hash = text;
                identity.payload_hash_offset = Some(at);
            }
            field::MODEL_ID => identity.model_id = text,
            field::MODEL_REVISION => identity.model_revision = text,
            field::TOKENIZER_NAME => identity.tokenizer_name = text,
            field::TOKENIZER_REVISION => identity.tokenizer_revision = text,
            _ => match Dtype::from_json(&text) {
                Some(dtype) => identity.dtype = dtype,
                None => return problem("unknown dtype"),
            },
        }
        Ok(None)
    }

    /// The value of an object member at `pos` (depth 1 inside the object); an array's
    /// integers go to `room`, and one more than it holds is `TooMany`.
    fn member_value(&mut self, room: &mut [i64], open_keys: usize) -> Result<Value<'a>, JsonError> {
        if self.byte() != Some(b'[') {
            return self.scalar_or_nested(1, open_keys);
        }
        if self.max_depth() < 2 {
            return self.error(JsonErrorKind::DepthExceeded);
        }
        self.pos += 1;
        let mut count = 0;
        let mut problem = None;
        self.ws();
        if self.byte() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(Ok(0)));
        }
        loop {
            let outcome = match self.scalar_or_nested(2, open_keys)? {
                Value::Integer(Some(value)) => match room.get_mut(count) {
                    Some(slot) => {
                        *slot = value;
                        count += 1;
                        Ok(())
                    }
                    None => Err(ArrayProblem::TooMany),
                },
                Value::Integer(None) => Err(ArrayProblem::OutOfRange),
                _ => Err(ArrayProblem::NotInteger),
            };
            if let Err(first) = outcome {
                problem.get_or_insert(first);
            }
            if !self.comma_or(b']')? {
                break;
            }
        }
        Ok(Value::Array(problem.map_or(Ok(count), Err)))
    }

    /// A value at `pos` inside a container at `depth` (0: the top level): scalars here,
    /// containers by the event reader.
    fn scalar_or_nested(&mut self, depth: u32, open_keys: usize) -> Result<Value<'a>, JsonError> {
        let bytes = self.text.as_bytes();
        Ok(match self.byte() {
            Some(b'"') => Value::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => {
                let (number, end) = scan_number(self.text, self.pos)?;
                self.pos = end;
                if number.is_integer() {
                    Value::Integer(number.as_i64())
                } else {
                    Value::Other
                }
            }
            Some(b't') => {
                self.pos = literal_end(bytes, self.pos, b"true")?;
                Value::Other
            }
            Some(b'f') => {
                self.pos = literal_end(bytes, self.pos, b"false")?;
                Value::Other
            }
            Some(b'n') => {
                self.pos = literal_end(bytes, self.pos, b"null")?;
                Value::Other
            }
            Some(b'[' | b'{') => {
                self.pos = skip_nested(self.text, self.utf8_error, self.pos, self.limits, depth, open_keys)?;
                Value::Other
            }
            None => return self.error(JsonErrorKind::UnexpectedEnd),
            Some(_) => return self.error(JsonErrorKind::UnexpectedByte),
        })
    }
}

/// The keys of the identity object so far, for duplicates and the key table's limit
/// (the event reader's: [`DEFAULT_KEY_CAPACITY`] keys open at once). An unknown key is
/// compared with the object's earlier keys by walking its text again: at most
/// [`DEFAULT_KEY_CAPACITY`] walks over the object, and no table of places.
struct Keys {
    /// Where the object's `{` is.
    object: usize,
    /// Bit `i`: known field `i` seen.
    known: u16,
    /// All keys so far.
    open: usize,
}

impl Keys {
    /// Take the key whose quote is at `at`: its index in [`FIELD_NAMES`] (`None`:
    /// unknown), or the duplicate or full-table error the event reader gives, in its order.
    fn remember(&mut self, text: &str, key: JsonStr<'_>, at: usize) -> Result<Option<usize>, JsonError> {
        let known = FIELD_NAMES.iter().position(|name| key.eq_str(name));
        let duplicate = match known {
            Some(index) => self.known & (1 << index) != 0,
            None => keys_before(text, self.object, at, |earlier| earlier.eq_decoded(&key)),
        };
        if duplicate {
            return Err(JsonError::new(JsonErrorKind::DuplicateKey, at));
        }
        if self.open == DEFAULT_KEY_CAPACITY {
            return Err(JsonError::new(JsonErrorKind::TooManyKeys, at));
        }
        if let Some(index) = known {
            self.known |= 1 << index;
        }
        self.open += 1;
        Ok(known)
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse_general;
    use super::*;
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// The docs-hello identity, canonical.
    const CANONICAL: &str = r#"{"dtype":"float16","head_range":[-1,-1],"layer_range":[0,31],"model_id":"llama-3-8b","model_revision":"","payload_hash":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824","shape":[1,32,8,128,64],"token_span":[0,127],"tokenizer_name":"llama-3-8b","tokenizer_revision":""}"#;

    /// A short identity in another order, with whitespace, an escaped known key, and an
    /// unknown key holding nested containers.
    const SPELLED: &str = "{ \"shape\" : [1, 2] ,\"dtype\":\"nf4\",\n\"head_range\":[-1,-1],\"layer_range\":[0,1],\t\"model_\\u0069d\":\"m\\u00e9\",\"model_revision\":\"\",\"payload_hash\":\"ab\",\"token_span\":[2,3],\"tokenizer_name\":\"t\",\"tokenizer_revision\":\"r\"}\r\n";

    const NESTED: &str = r#"{"x":[{"a":[1,{"b":null}]},[true,false]],"payload_hash":"ab","shape":[[1],{"k":1}]}"#;

    /// The flat reader's result is the event reader's, field for field and error for
    /// error (by `Debug`: every field, the source, offsets, code, field and words).
    fn agrees(text: &[u8], limits: Limits) {
        let flat = format!("{:?}", parse_flat(text, limits));
        let general = format!("{:?}", parse_general(text, limits));
        assert_eq!(flat, general, "{:?} at depth {}", String::from_utf8_lossy(text), limits.max_depth);
    }

    fn agrees_at_every_depth(text: &[u8]) {
        // Under Miri, which runs the readers some thousand times slower, the limits that
        // change the outcome of these texts most.
        let depths: &[u32] = if cfg!(miri) { &[1, 32] } else { &[0, 1, 2, 3, 4, 32] };
        for &max_depth in depths {
            agrees(text, Limits { max_depth });
        }
    }

    /// Every one-byte change, deletion and insertion (of bytes that matter to JSON), and
    /// an invalid UTF-8 byte at every position.
    fn every_small_change(base: &str, limits: Limits) {
        const BYTES: &[u8] = b"0-9\"\\ x,:]}[{.eEu\x7f\x01ntf\xc3\x80";
        let base = base.as_bytes();
        for at in 0..=base.len() {
            for &byte in BYTES {
                let mut inserted = base.to_vec();
                inserted.insert(at, byte);
                agrees(&inserted, limits);
                if at < base.len() {
                    let mut changed = base.to_vec();
                    changed[at] = byte;
                    agrees(&changed, limits);
                }
            }
            if at < base.len() {
                let mut deleted = base.to_vec();
                deleted.remove(at);
                agrees(&deleted, limits);
            }
            agrees(&base[..at], limits);
        }
    }

    #[test]
    fn valid_identities_in_any_spelling_agree() {
        for text in [CANONICAL, SPELLED] {
            agrees_at_every_depth(text.as_bytes());
            assert!(parse_flat(text.as_bytes(), Limits::default()).is_ok(), "{text}");
        }
        let reordered = CANONICAL.replace("\"dtype\":\"float16\",", "").replace('}', ",\"dtype\":\"float16\"}");
        agrees_at_every_depth(reordered.as_bytes());
        agrees_at_every_depth(format!("{CANONICAL}    ").as_bytes());
    }

    #[test]
    fn every_field_problem_agrees() {
        for (from, to) in [
            ("[0,31]", "[31,0]"),
            ("[0,31]", "[-1,31]"),
            ("[0,31]", "[0]"),
            ("[0,31]", "[0,1,2]"),
            ("[0,31]", "[0,1,\"x\"]"),
            ("[0,31]", "[0,\"x\",2]"),
            ("[0,31]", "[0,9223372036854775808]"),
            ("[0,31]", "[0,1e3]"),
            ("[0,31]", "[[0],1]"),
            ("[0,31]", "{\"a\":1}"),
            ("[0,31]", "\"0,31\""),
            ("[-1,-1]", "[-1,0]"),
            ("[1,32,8,128,64]", "[]"),
            ("[1,32,8,128,64]", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]"),
            ("[1,32,8,128,64]", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]"),
            ("[1,32,8,128,64]", "[-9223372036854775808,0]"),
            ("[1,32,8,128,64]", "null"),
            ("\"float16\"", "\"float17\""),
            ("\"float16\"", "16"),
            ("\"llama-3-8b\"", "[\"llama\"]"),
            // An empty array where a string belongs (an empty shape is another problem).
            ("\"llama-3-8b\"", "[]"),
            ("\"float16\"", "[]"),
            ("\"llama-3-8b\"", "true"),
            ("\"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\"", "\"\""),
            ("\"dtype\":", "\"dtipe\":"),
            ("\"dtype\":\"float16\",", ""),
            ("\"dtype\":\"float16\",", "\"dtype\":\"float16\",\"dtype\":\"float16\","),
            ("\"dtype\":\"float16\",", "\"x\":1,\"\\u0078\":2,"),
            ("\"dtype\":\"float16\",", "\"x\":[[[[1]]]],"),
        ] {
            let text = CANONICAL.replacen(from, to, 1);
            agrees_at_every_depth(text.as_bytes());
        }
        // The first field problem in text order, unless a JSON problem comes anywhere.
        let two = CANONICAL.replace("[0,31]", "[31,0]").replace("[0,127]", "[-5,0]");
        agrees_at_every_depth(two.as_bytes());
        agrees_at_every_depth(format!("{two} x").as_bytes());
    }

    #[test]
    fn the_key_table_limit_agrees() {
        let counts: &[usize] = if cfg!(miri) { &[63, 65] } else { &[62, 63, 64, 65, 80] };
        for &unknown in counts {
            let keys: Vec<String> = (0..unknown).map(|i| format!("\"k{i}\":{i}")).collect();
            let text = CANONICAL.replacen('{', &format!("{{{},", keys.join(",")), 1);
            agrees_at_every_depth(text.as_bytes());
            // Keys of a nested object count with the identity's own.
            let nested = CANONICAL.replacen('{', &format!("{{\"n\":{{{}}},", keys.join(",")), 1);
            agrees_at_every_depth(nested.as_bytes());
            let after = CANONICAL
                .replace("\"tokenizer_revision\"", &format!("\"n\":[{{{}}}],\"tokenizer_revision\"", keys.join(",")));
            agrees_at_every_depth(after.as_bytes());
        }
    }

    #[test]
    fn anything_that_is_not_an_identity_object_agrees() {
        for text in [
            "",
            " ",
            "\u{feff}{}",
            "{}",
            "[]",
            "[1,2]",
            "1",
            "\"x\"",
            "null",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\":1,}",
            "{,}",
            "{\"a\" 1}",
            "{\"a\":1}}",
            "{\"a\":1} {}",
            "{\"a\":[1,]}",
            "{\"a\":[1}",
            "{\"a\":tru}",
            "{\"a\":-}",
            "{\"a\":01}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\x01\"}",
            "{1:2}",
        ] {
            agrees_at_every_depth(text.as_bytes());
        }
        for bytes in
            [&b"{\"a\":\"\xff\"}"[..], b"{\"a\":1}\xc3", b"\xc3", b"{\"\xc3\xa9\":1,\"\xc3\xa9\":2}", b"{\"a\":[1,\xc3"]
        {
            agrees_at_every_depth(bytes);
        }
    }

    /// Nested values are validated without the event reader: duplicates at every level
    /// (escaped spellings too), keys of sibling objects, the key table across levels,
    /// and levels beyond the start-and-count cache (a depth limit above the default).
    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; the other tests take nested values through it")]
    fn nested_values_agree() {
        let deep = |levels: usize, inner: &str| {
            let open: String = (0..levels).map(|i| if i % 2 == 0 { "[" } else { "{\"k\":" }).collect();
            let close: String = (0..levels).rev().map(|i| if i % 2 == 0 { "]" } else { "}" }).collect();
            format!("{{\"x\":{open}{inner}{close},\"payload_hash\":\"ab\"}}")
        };
        let mut texts = Vec::new();
        for levels in [1, 2, 3, 30, 31, 32, 33, 34, 40, 63, 64, 65, 70] {
            for inner in
                ["1", "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":{\"a\":2},\"\\u0061\":3}", "{\"a\":{},\"b\":{},\"c\":[{}]}"]
            {
                texts.push(deep(levels, inner));
            }
        }
        texts.push(r#"{"x":{"a":{"a":{"a":1}},"b":1,"a":2}}"#.to_string());
        texts.push(r#"{"x":[{"a":1},{"a":1}],"y":{"a":1,"b":[{"b":1,"b":2}]}}"#.to_string());
        texts.push(r#"{"x":{"a"b":1,"a"b":2}}"#.to_string());
        texts.push(r#"{"x":{"é":1,"é":2}}"#.to_string());
        texts.push(r#"{"x":{"[":"{","]":"}","a":""{","b":1,"a":2}}"#.to_string());
        for text in &texts {
            for max_depth in [2, 3, 32, 33, 40, 64, 100, 1024, 5000] {
                agrees(text.as_bytes(), Limits { max_depth });
            }
        }
        // Objects beyond the cache give their keys back when they close: 30 keys, then
        // an object holding a deep value and keys up to the table's limit.
        let keys: Vec<String> = (0..30).map(|i| format!("\"k{i}\":{i}")).collect();
        let more: Vec<String> = (0..40).map(|i| format!("\"y{i}\":{i}")).collect();
        for levels in [33, 40, 70] {
            let value = deep(levels, "{\"a\":1,\"b\":2}");
            let value = value.trim_end_matches(",\"payload_hash\":\"ab\"}").trim_start_matches("{\"x\":");
            let text = format!("{{{},\"x\":{{\"a\":{value},{}}}}}", keys.join(","), more.join(","));
            agrees(text.as_bytes(), Limits { max_depth: 100 });
        }
        // Keys open across levels: 60 in the identity, then 3 levels of 2.
        let keys: Vec<String> = (0..60).map(|i| format!("\"k{i}\":{i}")).collect();
        for inner in [
            "{\"a\":{\"b\":{\"c\":1,\"d\":2},\"e\":1}}",
            "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5}",
            "{\"a\":{},\"b\":{},\"c\":{},\"d\":{},\"e\":{}}",
        ] {
            let text = format!("{{{},\"x\":{inner}}}", keys.join(","));
            agrees_at_every_depth(text.as_bytes());
            agrees(text.as_bytes(), Limits { max_depth: 100 });
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri")]
    fn every_small_change_of_a_deep_value_agrees() {
        let open: String = (0..36).map(|i| if i % 2 == 0 { "[" } else { "{\"k\":" }).collect();
        let close: String = (0..36).rev().map(|i| if i % 2 == 0 { "]" } else { "}" }).collect();
        let text = format!("{{\"x\":{open}{{\"a\":1,\"b\":[2]}}{close}}}");
        every_small_change(&text, Limits { max_depth: 40 });
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri")]
    fn every_small_change_of_an_identity_agrees() {
        every_small_change(SPELLED, Limits::default());
        every_small_change(NESTED, Limits::default());
        every_small_change(NESTED, Limits { max_depth: 3 });
        every_small_change(CANONICAL, Limits::default());
    }
}
