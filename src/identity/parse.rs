//! Reading an identity from JSON text and judging its fields (SPEC §2.2).
//!
//! One pass over the reader's events: field problems are remembered, not returned, until
//! the whole text has been validated, because a JSON problem anywhere wins.

use super::{field, field_error, rules, Dtype, InclusiveRange, PayloadIdentity, Shape, FIELD_NAMES, MAX_SHAPE_DIMS};
use crate::error::{Error, ErrorCode};
#[cfg(any(feature = "fast-identity", test, feature = "fuzzing"))]
use crate::frame::trailing_spaces;
use crate::json::spelled::{first_key, level, next_key, InOrder, KeyTable, Members, Spacing, Spelled};
use crate::json::Run;
use crate::json::{Event, JsonError, JsonStr, Limits, Reader};

/// The known keys, for the any-spelling pass.
static KNOWN_KEYS: KeyTable<{ FIELD_NAMES.len() }> = KeyTable::new(FIELD_NAMES);

/// Why an integer array was not acceptable.
#[derive(Clone, Copy)]
pub(super) enum ArrayProblem {
    NotArray,
    NotInteger,
    OutOfRange,
    TooMany,
}

impl ArrayProblem {
    pub(super) fn reason(self) -> &'static str {
        match self {
            ArrayProblem::NotArray => "expected an array of integers",
            ArrayProblem::NotInteger => "element is not an integer",
            ArrayProblem::OutOfRange => "integer outside the signed 64-bit range",
            ArrayProblem::TooMany => "more than 16 dimensions",
        }
    }
}

#[derive(Default)]
struct Fields<'a> {
    payload_hash: Option<(JsonStr<'a>, usize)>,
    model_id: Option<JsonStr<'a>>,
    model_revision: Option<JsonStr<'a>>,
    tokenizer_name: Option<JsonStr<'a>>,
    tokenizer_revision: Option<JsonStr<'a>>,
    layer_range: Option<InclusiveRange>,
    head_range: Option<InclusiveRange>,
    token_span: Option<InclusiveRange>,
    dtype: Option<Dtype>,
    shape: Option<Shape>,
}

impl<'a> PayloadIdentity<'a> {
    /// Parse and validate an identity JSON text with the default limits (depth 32).
    ///
    /// Errors are `identity_json` for any strict-JSON problem (SPEC §4) or a value
    /// that is not an object, else `identity_field`, with offsets into `text`.
    pub fn parse(text: &'a [u8]) -> Result<PayloadIdentity<'a>, Error> {
        PayloadIdentity::parse_with(text, Limits::default())
    }

    /// [`parse`](Self::parse) with explicit JSON limits.
    pub fn parse_with(text: &'a [u8], limits: Limits) -> Result<PayloadIdentity<'a>, Error> {
        // The fast paths in line, each identity built where the caller wants it (the
        // frame readers take `read_into`, which keeps their stack small instead).
        #[cfg(feature = "fast-identity")]
        if let Some(identity) = parse_canonical(text, limits) {
            return Ok(identity);
        }
        #[cfg(feature = "fast-identity")]
        if let Some(identity) = parse_any_spelling(text, limits) {
            return Ok(identity);
        }
        let mut identity = PayloadIdentity::unread();
        super::flat::read_flat(text, limits, &mut identity)?;
        Ok(identity)
    }

    /// A placeholder for [`read_into`] to fill: no source, empty strings, no shape.
    pub(crate) const fn unread() -> PayloadIdentity<'a> {
        let empty = JsonStr::from_validated("", false);
        PayloadIdentity {
            source: None,
            source_is_canonical: false,
            padding: 0,
            payload_hash: empty,
            payload_hash_offset: None,
            model_id: empty,
            model_revision: empty,
            tokenizer_name: empty,
            tokenizer_revision: empty,
            layer_range: InclusiveRange::new(0, 0),
            head_range: InclusiveRange::new(0, 0),
            token_span: InclusiveRange::new(0, 0),
            dtype: Dtype::Float16,
            shape: Shape::new(),
        }
    }
}

/// The identity in `text` into `identity` (every field of it, when it is `Ok`), the
/// errors' offsets shifted by `base`: what [`PayloadIdentity::parse_with`] returns, for
/// readers that keep the identity in their own storage (the frame readers: one copy on
/// the stack, not one per call). Writers store the canonical spelling, read in one
/// direct pass; anything else — another spelling, any problem — goes to the flat
/// reader's one pass, which gives what the general reader gives.
pub(crate) fn read_into<'a>(
    text: &'a [u8],
    limits: Limits,
    base: u64,
    identity: &mut PayloadIdentity<'a>,
) -> Result<(), Error> {
    #[cfg(feature = "fast-identity")]
    if read_canonical(text, limits, identity) || read_any_spelling(text, limits, identity) {
        return Ok(());
    }
    super::flat::read_flat(text, limits, identity).map_err(|err| err.shifted(base))
}

/// [`parse_canonical`] into `identity`; `false` for anything else. Out of line, as
/// [`read_any_spelling`] is: the identity each builds is on the stack only while it
/// runs, not while the flat reader does, and the canonical path stays as tight as
/// when it stood alone.
#[cfg(feature = "fast-identity")]
#[inline(never)]
fn read_canonical<'a>(text: &'a [u8], limits: Limits, identity: &mut PayloadIdentity<'a>) -> bool {
    store(parse_canonical(text, limits), identity)
}

/// [`parse_any_spelling`] into `identity`: a valid identity in another spelling;
/// `false` for anything else (a problem, an escaped key), which the flat reader decides.
#[cfg(feature = "fast-identity")]
#[inline(never)]
fn read_any_spelling<'a>(text: &'a [u8], limits: Limits, identity: &mut PayloadIdentity<'a>) -> bool {
    store(parse_any_spelling(text, limits), identity)
}

/// `found`, if a fast path found one, into `identity`.
#[cfg(feature = "fast-identity")]
#[inline(always)]
fn store<'a>(found: Option<PayloadIdentity<'a>>, identity: &mut PayloadIdentity<'a>) -> bool {
    found.map(|found| *identity = found).is_some()
}

/// Any strict-JSON spelling of an identity, with the words for every problem, on the
/// event reader: what envelopes use for the identity they nest ([`parse_object`]), and
/// the oracle the flat reader is tested and fuzzed against.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn parse_general<'a>(text: &'a [u8], limits: Limits) -> Result<PayloadIdentity<'a>, Error> {
    let json = |err: JsonError| err.to_error(ErrorCode::IdentityJson, 0);
    let mut reader: Reader<'a> = Reader::new(text, limits);
    if reader.next_event().map_err(json)? != Some(Event::ObjectStart) {
        reader.finish().map_err(json)?;
        return Err(Error::new(ErrorCode::IdentityJson, "identity is not a JSON object").at(0));
    }
    let identity = parse_object(&mut reader, text, 0).map_err(json)?;
    // The object is complete; anything after it must be whitespace.
    reader.finish().map_err(json)?;
    // The stored text, surrounding whitespace and all, is what `is_canonical` judges.
    identity.map(|identity| PayloadIdentity { source: Some(text), ..identity })
}

/// Read the fields of an identity object whose `{` (at `object_start` in `text`) the
/// reader has just yielded, up to and including its `}`.
///
/// The outer `Result` is a JSON error (fatal: the caller maps it to its own JSON code);
/// the inner one the first field problem in document order, or a missing key. Field
/// offsets are offsets into `text`; the identity's `source` is the object's own text.
/// Used by [`PayloadIdentity::parse_with`] and by readers of documents that nest an
/// identity (the v5 envelope).
pub(crate) fn parse_object<'a, const KEYS: usize>(
    reader: &mut Reader<'a, KEYS>,
    text: &'a [u8],
    object_start: usize,
) -> Result<Result<PayloadIdentity<'a>, Error>, JsonError> {
    let mut fields = Fields::default();
    let mut first_problem: Option<Error> = None;
    while let Some(Event::Key(key)) = reader.next_event()? {
        let key_offset = reader.event_offset();
        if let Err(problem) = read_field(reader, key, key_offset, &mut fields)? {
            first_problem.get_or_insert(problem);
        }
    }
    // The loop ends at the object's `}`.
    let object_end = reader.event_offset().saturating_add(1);
    if let Some(problem) = first_problem {
        return Ok(Err(problem));
    }
    let source = text.get(object_start..object_end).unwrap_or(text);
    Ok(fields.into_identity(source, object_start))
}

/// Read one key's value. The outer `Result` is a JSON error (fatal); the inner one a
/// field problem (remembered while the text is still validated).
fn read_field<'a, const KEYS: usize>(
    reader: &mut Reader<'a, KEYS>,
    key: JsonStr<'a>,
    key_offset: usize,
    fields: &mut Fields<'a>,
) -> Result<Result<(), Error>, JsonError> {
    let Some(name) = known_field(&key) else {
        let value = next(reader)?;
        reader.skip_value(&value)?;
        return Ok(Err(field_error_at_none("unknown key in identity").at(key_offset as u64)));
    };
    let value = next(reader)?;
    let at = reader.event_offset() as u64;
    let problem = |reason| Ok(Err(field_error(name, reason).at(at)));
    match name {
        "layer_range" | "head_range" | "token_span" => {
            let pair = match read_integers::<2, KEYS>(reader, value)? {
                Ok(values) if values.len() == 2 => values,
                Ok(_) | Err(ArrayProblem::TooMany) => return problem("range must be exactly two integers"),
                Err(other) => return problem(other.reason()),
            };
            let range = InclusiveRange::new(pair.first().copied().unwrap_or(0), pair.get(1).copied().unwrap_or(0));
            let checked = match name {
                "head_range" => rules::check_head_range(range),
                _ => rules::check_range(name, range),
            };
            if let Err(err) = checked {
                return Ok(Err(err.at(at)));
            }
            match name {
                "layer_range" => fields.layer_range = Some(range),
                "head_range" => fields.head_range = Some(range),
                _ => fields.token_span = Some(range),
            }
        }
        "shape" => match read_integers::<16, KEYS>(reader, value)? {
            Ok(shape) if shape.is_empty() => return problem("shape is empty"),
            Ok(shape) => fields.shape = Some(shape),
            Err(other) => return problem(other.reason()),
        },
        _ => {
            let Event::Str(text) = value else {
                reader.skip_value(&value)?;
                return problem("expected a string");
            };
            match name {
                "dtype" => match Dtype::from_json(&text) {
                    Some(dtype) => fields.dtype = Some(dtype),
                    None => return problem("unknown dtype"),
                },
                "payload_hash" => {
                    if let Err(err) = rules::check_payload_hash(&text) {
                        return Ok(Err(err.at(at)));
                    }
                    fields.payload_hash = Some((text, at as usize));
                }
                "model_id" => fields.model_id = Some(text),
                "model_revision" => fields.model_revision = Some(text),
                "tokenizer_name" => fields.tokenizer_name = Some(text),
                _ => fields.tokenizer_revision = Some(text),
            }
        }
    }
    Ok(Ok(()))
}

fn field_error_at_none(reason: &'static str) -> Error {
    Error::new(ErrorCode::IdentityField, reason)
}

/// The static name of a known key (keys may be spelled with escapes).
fn known_field(key: &JsonStr<'_>) -> Option<&'static str> {
    FIELD_NAMES.iter().copied().find(|name| key.eq_str(name))
}

fn next<'a, const KEYS: usize>(reader: &mut Reader<'a, KEYS>) -> Result<Event<'a>, JsonError> {
    // After a key the grammar always yields a value event (or an error).
    Ok(reader.next_event()?.unwrap_or(Event::Null))
}

/// Read an array of at most `N` `i64` integers, consuming the whole value whatever it is.
fn read_integers<'a, const N: usize, const KEYS: usize>(
    reader: &mut Reader<'a, KEYS>,
    first: Event<'a>,
) -> Result<Result<heapless::Vec<i64, N>, ArrayProblem>, JsonError> {
    if first != Event::ArrayStart {
        reader.skip_value(&first)?;
        return Ok(Err(ArrayProblem::NotArray));
    }
    let mut values = heapless::Vec::new();
    let mut problem = None;
    loop {
        let element = next(reader)?;
        let outcome = match element {
            Event::ArrayEnd => break,
            Event::Number(n) if n.is_integer() => match n.as_i64() {
                Some(v) => values.push(v).map_err(|_| ArrayProblem::TooMany),
                None => Err(ArrayProblem::OutOfRange),
            },
            other => {
                reader.skip_value(&other)?;
                Err(ArrayProblem::NotInteger)
            }
        };
        if let Err(p) = outcome {
            problem.get_or_insert(p);
        }
    }
    Ok(problem.map_or(Ok(values), Err))
}

impl<'a> Fields<'a> {
    /// `source` is the identity object's text, starting at `base` in the reader's text.
    fn into_identity(self, source: &'a [u8], base: usize) -> Result<PayloadIdentity<'a>, Error> {
        fn need<T>(value: Option<T>, name: &'static str) -> Result<T, Error> {
            value.ok_or_else(|| field_error(name, "missing key"))
        }
        let (payload_hash, payload_hash_offset) = need(self.payload_hash, "payload_hash")?;
        Ok(PayloadIdentity {
            source: Some(source),
            source_is_canonical: false,
            padding: 0,
            payload_hash,
            payload_hash_offset: Some(payload_hash_offset.saturating_sub(base)),
            model_id: need(self.model_id, "model_id")?,
            model_revision: need(self.model_revision, "model_revision")?,
            tokenizer_name: need(self.tokenizer_name, "tokenizer_name")?,
            tokenizer_revision: need(self.tokenizer_revision, "tokenizer_revision")?,
            layer_range: need(self.layer_range, "layer_range")?,
            head_range: need(self.head_range, "head_range")?,
            token_span: need(self.token_span, "token_span")?,
            dtype: need(self.dtype, "dtype")?,
            shape: need(self.shape, "shape")?,
        })
    }
}

/// `[a, b]`, a range in the given spacing.
#[inline(always)]
fn range(at: &mut Spelled<'_>, spacing: Spacing) -> Option<InclusiveRange> {
    if !at.eat(b'[') {
        return None;
    }
    let element = spacing.after_open(at)?;
    let start = at.int()?;
    spacing.comma(at, &element)?;
    let end = at.int()?;
    spacing.close(at)?;
    Some(InclusiveRange::new(start, end))
}

/// `[d, d, ...]`, a shape in the given spacing: 1 to 16 integers.
#[inline(always)]
fn shape(at: &mut Spelled<'_>, spacing: Spacing) -> Option<Shape> {
    if !at.eat(b'[') {
        return None;
    }
    let element = spacing.after_open(at)?;
    let mut dims = [0i64; MAX_SHAPE_DIMS];
    let mut count = 0;
    loop {
        *dims.get_mut(count)? = at.int()?;
        count += 1;
        if !spacing.next_element(at, &element)? {
            break;
        }
    }
    Shape::from_slice(dims.get(..count)?).ok()
}

/// An identity in the canonical spelling of SPEC §2.3 (keys sorted, no whitespace),
/// optionally followed by spaces (the padding of an aligned frame, SPEC §1.5), read in
/// one forward pass. Strings and numbers are scanned by the reader's own
/// scanners and fields judged by the same rules, so this accepts only texts the general
/// reader accepts, with the same values. Anything else — another spelling, a JSON error,
/// a field problem, a depth limit below 2 — is `None`, and the flat reader decides
/// (and words the error).
#[cfg(any(feature = "fast-identity", test, feature = "fuzzing"))]
#[inline(always)]
pub(crate) fn parse_canonical<'a>(text: &'a [u8], limits: Limits) -> Option<PayloadIdentity<'a>> {
    // The object is depth 1, the arrays in it depth 2.
    if limits.max_depth < 2 {
        return None;
    }
    // Any other spelling fails here, before the UTF-8 pass.
    if !text.starts_with(b"{\"dtype\":") {
        return None;
    }
    let padding = trailing_spaces(text);
    let mut at = Spelled::new(text.get(..text.len() - padding)?)?;
    at.lit(b"{\"dtype\":")?;
    let dtype = Dtype::from_json(&at.exact_string()?)?;
    at.lit(b",\"head_range\":")?;
    let head_range = range(&mut at, Spacing::Exact(b","))?;
    rules::check_head_range(head_range).ok()?;
    at.lit(b",\"layer_range\":")?;
    let layer_range = range(&mut at, Spacing::Exact(b","))?;
    rules::check_range("layer_range", layer_range).ok()?;
    at.lit(b",\"model_id\":")?;
    let model_id = at.exact_string()?;
    at.lit(b",\"model_revision\":")?;
    let model_revision = at.exact_string()?;
    at.lit(b",\"payload_hash\":")?;
    let payload_hash_offset = at.pos;
    let payload_hash = at.exact_string()?;
    rules::check_payload_hash(&payload_hash).ok()?;
    at.lit(b",\"shape\":")?;
    let shape = shape(&mut at, Spacing::Exact(b","))?;
    at.lit(b",\"token_span\":")?;
    let token_span = range(&mut at, Spacing::Exact(b","))?;
    rules::check_range("token_span", token_span).ok()?;
    at.lit(b",\"tokenizer_name\":")?;
    let tokenizer_name = at.exact_string()?;
    at.lit(b",\"tokenizer_revision\":")?;
    let tokenizer_revision = at.exact_string()?;
    at.lit(b"}")?;
    if !at.at_end() {
        return None;
    }
    Some(PayloadIdentity {
        source: Some(text),
        source_is_canonical: at.is_exact(),
        // Spaces after a text that is not canonical are whitespace, not padding.
        padding: if at.is_exact() { u32::try_from(padding).ok()? } else { 0 },
        payload_hash,
        payload_hash_offset: Some(payload_hash_offset),
        model_id,
        model_revision,
        tokenizer_name,
        tokenizer_revision,
        layer_range,
        head_range,
        token_span,
        dtype,
        shape,
    })
}

/// An identity object in declaration order, read from the cursor's position to just
/// after its `}`: with the separators `", "` and `": "` (how the envelope's `to_bytes`
/// form nests it, SPEC §3.2) or with any whitespace, as `members` says (the `}`
/// expected after whitespace spelled as `closing`). Like [`parse_canonical`], `None`
/// for anything else; the identity equals what [`parse_object`] gives for the same
/// text (its `source` is the object's own text). Depth: the caller checks the limit.
#[inline(always)]
pub(crate) fn parse_declaration_order<'a>(
    at: &mut Spelled<'a>,
    members: Members,
    closing: Run,
) -> Option<PayloadIdentity<'a>> {
    let start = at.pos;
    let mut object = InOrder::new(members, level!("  ", "    "), closing);
    first_key!(at, &mut object, "payload_hash")?;
    let elements = object.elements();
    let payload_hash_offset = at.pos - start;
    let payload_hash = at.string()?;
    rules::check_payload_hash(&payload_hash).ok()?;
    next_key!(at, &mut object, "model_id")?;
    let model_id = at.string()?;
    next_key!(at, &mut object, "model_revision")?;
    let model_revision = at.string()?;
    next_key!(at, &mut object, "tokenizer_name")?;
    let tokenizer_name = at.string()?;
    next_key!(at, &mut object, "tokenizer_revision")?;
    let tokenizer_revision = at.string()?;
    next_key!(at, &mut object, "layer_range")?;
    let layer_range = range(at, elements)?;
    rules::check_range("layer_range", layer_range).ok()?;
    next_key!(at, &mut object, "head_range")?;
    let head_range = range(at, elements)?;
    rules::check_head_range(head_range).ok()?;
    next_key!(at, &mut object, "token_span")?;
    let token_span = range(at, elements)?;
    rules::check_range("token_span", token_span).ok()?;
    next_key!(at, &mut object, "dtype")?;
    let dtype = Dtype::from_json(&at.string()?)?;
    next_key!(at, &mut object, "shape")?;
    let shape = shape(at, elements)?;
    at.object_end(&object)?;
    Some(PayloadIdentity {
        source: Some(at.text().get(start..at.pos)?),
        source_is_canonical: false,
        padding: 0,
        payload_hash,
        payload_hash_offset: Some(payload_hash_offset),
        model_id,
        model_revision,
        tokenizer_name,
        tokenizer_revision,
        layer_range,
        head_range,
        token_span,
        dtype,
        shape,
    })
}

/// An identity object with its keys in any order, separated as `members` says
/// ([`Members::AnyWhitespace`]: whitespace anywhere JSON allows it), read from the
/// cursor's `{` to just after its `}` in one forward pass with no event reader and no
/// key table: each known key is matched whole, and a bit per field catches a repeated
/// one. Like the other fast paths, `None` for anything but a valid identity whose keys
/// are written without escapes (an unknown key, a field problem, a JSON problem: the
/// general reader decides and words it); what it accepts equals what [`parse_object`]
/// gives (offsets relative to `base`, `source` the object's own text). Depth: the
/// caller checks the limit (arrays are one level below the object).
#[inline(always)]
pub(crate) fn parse_any_order<'a>(at: &mut Spelled<'a>, base: usize, members: Members) -> Option<PayloadIdentity<'a>> {
    let start = at.pos;
    if !at.eat(b'{') {
        return None;
    }
    if members == Members::AnyWhitespace {
        at.ws();
    }
    // With any whitespace, no run expected before a `]`: what is learned pays off in
    // the table-order passes, whose members come where they are expected.
    let elements = members.elements(Run::UNKNOWN);
    let mut f = Fields::default();
    let mut seen = 0u16;
    loop {
        // An unknown key, or a known one spelled with escapes: not taken.
        let index = at.known_key(&KNOWN_KEYS)?;
        let bit = 1u16 << index;
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        // Each arm steps over its own key: a constant length (`Spelled::past_key`).
        match index {
            field::PAYLOAD_HASH => {
                at.past_key(&KNOWN_KEYS, field::PAYLOAD_HASH, members)?;
                let value_at = at.pos;
                let hash = at.string()?;
                rules::check_payload_hash(&hash).ok()?;
                f.payload_hash = Some((hash, value_at));
            }
            field::MODEL_ID => {
                at.past_key(&KNOWN_KEYS, field::MODEL_ID, members)?;
                f.model_id = Some(at.string()?)
            }
            field::MODEL_REVISION => {
                at.past_key(&KNOWN_KEYS, field::MODEL_REVISION, members)?;
                f.model_revision = Some(at.string()?)
            }
            field::TOKENIZER_NAME => {
                at.past_key(&KNOWN_KEYS, field::TOKENIZER_NAME, members)?;
                f.tokenizer_name = Some(at.string()?)
            }
            field::TOKENIZER_REVISION => {
                at.past_key(&KNOWN_KEYS, field::TOKENIZER_REVISION, members)?;
                f.tokenizer_revision = Some(at.string()?)
            }
            field::LAYER_RANGE => {
                at.past_key(&KNOWN_KEYS, field::LAYER_RANGE, members)?;
                let range = range(at, elements)?;
                rules::check_range("layer_range", range).ok()?;
                f.layer_range = Some(range);
            }
            field::HEAD_RANGE => {
                at.past_key(&KNOWN_KEYS, field::HEAD_RANGE, members)?;
                let range = range(at, elements)?;
                rules::check_head_range(range).ok()?;
                f.head_range = Some(range);
            }
            field::TOKEN_SPAN => {
                at.past_key(&KNOWN_KEYS, field::TOKEN_SPAN, members)?;
                let range = range(at, elements)?;
                rules::check_range("token_span", range).ok()?;
                f.token_span = Some(range);
            }
            field::DTYPE => {
                at.past_key(&KNOWN_KEYS, field::DTYPE, members)?;
                f.dtype = Some(Dtype::from_json(&at.string()?)?)
            }
            _ => {
                at.past_key(&KNOWN_KEYS, field::SHAPE, members)?;
                f.shape = Some(shape(at, elements)?)
            }
        }
        if !at.next_member_in(members, b'}')? {
            break;
        }
    }
    let (payload_hash, payload_hash_at) = f.payload_hash?;
    Some(PayloadIdentity {
        source: Some(at.text().get(start..at.pos)?),
        source_is_canonical: false,
        padding: 0,
        payload_hash,
        payload_hash_offset: Some(payload_hash_at.checked_sub(base)?),
        model_id: f.model_id?,
        model_revision: f.model_revision?,
        tokenizer_name: f.tokenizer_name?,
        tokenizer_revision: f.tokenizer_revision?,
        layer_range: f.layer_range?,
        head_range: f.head_range?,
        token_span: f.token_span?,
        dtype: f.dtype?,
        shape: f.shape?,
    })
}

/// A whole identity text in any spelling ([`parse_any_order`] with whitespace around
/// the object): the general reader's result, or `None` and the flat reader decides.
#[cfg(any(feature = "fast-identity", test, feature = "fuzzing"))]
#[inline(always)]
pub(crate) fn parse_any_spelling(text: &[u8], limits: Limits) -> Option<PayloadIdentity<'_>> {
    if limits.max_depth < 2 {
        return None;
    }
    let mut at = Spelled::new(text)?;
    at.ws();
    let identity = parse_any_order(&mut at, 0, Members::AnyWhitespace)?;
    at.ws();
    // The stored text, surrounding whitespace and all, is the source (as in `parse_general`).
    at.at_end().then_some(PayloadIdentity { source: Some(text), ..identity })
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    const HELLO: &str = r#"{"dtype":"float16","head_range":[-1,-1],"layer_range":[0,31],"model_id":"llama-3-8b","model_revision":"","payload_hash":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824","shape":[1,32,8,128,64],"token_span":[0,127],"tokenizer_name":"llama-3-8b","tokenizer_revision":""}"#;

    /// Whenever the fast path accepts a text, the general reader accepts it too, with
    /// the identical identity.
    fn agrees(text: &[u8], limits: Limits) -> bool {
        let fast = parse_canonical(text, limits);
        if let Some(fast) = &fast {
            let general = parse_general(text, limits);
            assert_eq!(Ok(fast), general.as_ref(), "{}", String::from_utf8_lossy(text));
            // The padding the fast path counted is what the general reader's text shows
            // (compared where there can be any: the general reader's answer costs a
            // re-serialisation, too slow under Miri for every one-byte change).
            if text.last() == Some(&b' ') {
                let general = general.unwrap();
                assert_eq!(fast.padding(), general.padding(), "{}", String::from_utf8_lossy(text));
                assert_eq!(fast.canonical_len(), general.canonical_len(), "{}", String::from_utf8_lossy(text));
            } else {
                assert_eq!(fast.padding(), 0);
            }
        }
        fast.is_some()
    }

    #[test]
    fn canonical_texts_take_the_fast_path_and_agree() {
        let texts = [
            HELLO.to_string(),
            HELLO.replace(
                "\"llama-3-8b\",\"model_revision",
                "\"caf\\u00e9 \\\"x\\\\ \\ud83d\\ude00/\",\"model_revision",
            ),
            HELLO.replace("[1,32,8,128,64]", "[-9223372036854775808,9223372036854775807,0,-1]"),
            HELLO.replace("[1,32,8,128,64]", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]"),
            HELLO.replace("[1,32,8,128,64]", "[0]"),
            HELLO.replace("[-1,-1]", "[0,0]").replace("float16", "nf4"),
            // Padding (SPEC §1.5): spaces after the object, as many as an alignment needs.
            format!("{HELLO} "),
            format!("{HELLO}{}", " ".repeat(4095)),
        ];
        for text in &texts {
            assert!(agrees(text.as_bytes(), Limits::default()), "{text}");
        }
        let padded = format!("{HELLO}{}", " ".repeat(37));
        let identity = parse_canonical(padded.as_bytes(), Limits::default()).unwrap();
        assert_eq!((identity.padding(), identity.canonical_len()), (37, HELLO.len()));
        assert!(identity.is_canonical());
        // The fingerprint hashes the text without its padding, as the general reader's
        // re-serialisation does.
        let unpadded = parse_canonical(HELLO.as_bytes(), Limits::default()).unwrap();
        let general = parse_general(padded.as_bytes(), Limits::default()).unwrap();
        assert_eq!(identity.fingerprint(), unpadded.fingerprint());
        assert_eq!(general.fingerprint(), unpadded.fingerprint());
        // Spaces after a spelling that is not canonical are whitespace, not padding.
        let escaped = format!("{} ", HELLO.replace(r#"llama-3-8b","model_rev"#, r#"llama-3-\u0038b","model_rev"#));
        let identity = parse_canonical(escaped.as_bytes(), Limits::default()).unwrap();
        assert_eq!((identity.is_canonical(), identity.padding()), (false, 0));
        for dtype in Dtype::ALL {
            let text = HELLO.replace("float16", dtype.name());
            assert!(agrees(text.as_bytes(), Limits::default()), "{text}");
        }
        assert!(agrees(HELLO.as_bytes(), Limits { max_depth: 2 }));
    }

    #[test]
    fn anything_else_goes_to_the_general_reader() {
        for text in [
            HELLO.replace("[1,32,8,128,64]", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]"),
            HELLO.replace("[1,32,8,128,64]", "[]"),
            HELLO.replace("[1,32,8,128,64]", "[1.0]"),
            HELLO.replace("[1,32,8,128,64]", "[1e2]"),
            HELLO.replace("[1,32,8,128,64]", "[01]"),
            HELLO.replace("[1,32,8,128,64]", "[9223372036854775808]"),
            HELLO.replace("[0,31]", "[31,0]"),
            HELLO.replace("[-1,-1]", "[-1,0]"),
            HELLO.replace("float16", "Float16"),
            HELLO.replace("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", ""),
            format!("{HELLO}\n"),
            format!("{HELLO} \t"),
            format!("{HELLO}\t "),
            format!(" {HELLO}"),
            HELLO.replace(":", ": "),
        ] {
            assert!(!agrees(text.as_bytes(), Limits::default()), "{text}");
        }
        assert!(!agrees(HELLO.as_bytes(), Limits { max_depth: 1 }));
    }

    /// Whenever the any-spelling path accepts a text, the general reader accepts it too,
    /// with an identity identical field for field (`Debug` shows source and offsets).
    fn agrees_any(text: &[u8], limits: Limits) -> bool {
        let fast = parse_any_spelling(text, limits);
        if let Some(fast) = &fast {
            let general = parse_general(text, limits).map(|identity| format!("{identity:?}"));
            assert_eq!(Ok(format!("{fast:?}")), general, "{}", String::from_utf8_lossy(text));
        }
        fast.is_some()
    }

    /// The docs-hello identity pretty-printed with its keys in declaration order.
    const PRETTY: &str = "{\n  \"payload_hash\": \"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\",\n  \"model_id\": \"llama-3-8b\",\n  \"model_revision\": \"\",\n  \"tokenizer_name\": \"llama-3-8b\",\n  \"tokenizer_revision\": \"\",\n  \"layer_range\": [\n    0,\n    31\n  ],\n  \"head_range\": [-1, -1],\n  \"token_span\": [ 0 , 127 ],\n  \"dtype\": \"float16\",\n  \"shape\": [1,32,\t8,\r\n128, 64]\n}\n";

    #[test]
    fn any_spelling_of_a_valid_identity_takes_the_forward_pass_and_agrees() {
        let texts = [
            PRETTY.to_string(),
            format!(" \t{HELLO}\r\n"),
            HELLO.replace(',', " , ").replace(':', " : "),
            PRETTY.replace(
                "\"llama-3-8b\",\n  \"model_revision",
                "\"caf\\u00e9 \\\"x\\\\ \\ud83d\\ude00/\",\n  \"model_revision",
            ),
            HELLO.replace("[1,32,8,128,64]", "[-0, -9223372036854775808, 9223372036854775807]"),
            HELLO.replace("\"dtype\":\"float16\",", "").replace('}', ",\"dtype\":\"float16\"}"),
        ];
        for text in &texts {
            assert!(parse_canonical(text.as_bytes(), Limits::default()).is_none(), "{text}");
            assert!(agrees_any(text.as_bytes(), Limits::default()), "{text}");
        }
        assert!(agrees_any(PRETTY.as_bytes(), Limits { max_depth: 2 }));
        assert!(!agrees_any(PRETTY.as_bytes(), Limits { max_depth: 1 }));
        // Through the public entry point too.
        let identity = PayloadIdentity::parse(PRETTY.as_bytes()).unwrap();
        assert_eq!(identity.source, Some(PRETTY.as_bytes()));
        assert_eq!(identity.payload_hash_offset, Some(PRETTY.find("\"2cf").unwrap()));
    }

    #[test]
    fn any_problem_or_escaped_key_goes_to_the_general_reader() {
        for text in [
            PRETTY.replace("\"model_id\"", "\"model_\\u0069d\""),
            PRETTY.replace("\"dtype\": \"float16\",", "\"dtype\": \"float16\", \"dtype\": \"float16\","),
            PRETTY.replace("\"dtype\": \"float16\",", ""),
            PRETTY.replace("\"dtype\": \"float16\",", "\"dtype\": \"float16\", \"x\": 1,"),
            PRETTY.replace("float16", "float17"),
            PRETTY.replace("127", "127.0"),
            PRETTY.replace("127", "0127"),
            PRETTY.replace("31\n", "-31\n"),
            PRETTY.replace("[-1, -1]", "[-1, 5]"),
            PRETTY.replace("[1,32,", "[]").replace("\t8,\r\n128, 64]", ""),
            PRETTY.replace("\"llama-3-8b\",\n  \"model_revision", "5,\n  \"model_revision"),
            PRETTY.replace("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", ""),
            PRETTY.replace("2cf24", "\\ud800"),
            PRETTY.replace("\n}", ",\n}"),
            PRETTY.replace("\n}", "\n} x"),
            PRETTY.replace("\n}", ""),
            format!("[{PRETTY}]"),
        ] {
            assert!(!agrees_any(text.as_bytes(), Limits::default()), "{text}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri")]
    fn every_one_byte_change_of_a_pretty_identity_agrees_with_the_general_reader() {
        let accepted =
            crate::json::spelled::one_byte_changes(PRETTY.as_bytes(), |text| agrees_any(text, Limits::default()));
        assert!(accepted > 100, "{accepted}");
    }

    #[test]
    // Exhaustive loops over safe code: minutes under Miri, and the same paths run there
    // through the other tests; the normal test run keeps them.
    #[cfg_attr(miri, ignore = "minutes under Miri")]
    fn every_one_byte_change_agrees_with_the_general_reader() {
        let accepted = crate::json::spelled::one_byte_changes(HELLO.as_bytes(), |text| agrees(text, Limits::default()));
        // Digits changed into digits and hex into hex stay canonical and valid.
        assert!(accepted > 100, "{accepted}");
    }
}
