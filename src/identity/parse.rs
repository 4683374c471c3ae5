//! Reading an identity from JSON text and judging its fields (SPEC §2.2).
//!
//! One pass over the reader's events: field problems are remembered, not returned, until
//! the whole text has been validated, because a JSON problem anywhere wins.

use super::{field_error, rules, Dtype, InclusiveRange, PayloadIdentity, Shape, FIELD_NAMES};
use crate::error::{Error, ErrorCode};
use crate::json::{Event, JsonError, JsonStr, Limits, Reader};

/// Why an integer array was not acceptable.
#[derive(Clone, Copy)]
enum ArrayProblem {
    NotArray,
    NotInteger,
    OutOfRange,
    TooMany,
}

impl ArrayProblem {
    fn reason(self) -> &'static str {
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

type IdentityReader<'a> = Reader<'a>;

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
        let json = |err: JsonError| err.to_error(ErrorCode::IdentityJson, 0);
        let mut reader = IdentityReader::new(text, limits);
        if reader.next_event().map_err(json)? != Some(Event::ObjectStart) {
            reader.finish().map_err(json)?;
            return Err(Error::new(ErrorCode::IdentityJson, "identity is not a JSON object").at(0));
        }
        let mut fields = Fields::default();
        let mut first_problem: Option<Error> = None;
        while let Some(Event::Key(key)) = reader.next_event().map_err(json)? {
            let key_offset = reader.event_offset();
            if let Err(problem) = read_field(&mut reader, key, key_offset, &mut fields).map_err(json)? {
                first_problem.get_or_insert(problem);
            }
        }
        // The loop ends at the object's end; anything after it must be whitespace.
        reader.finish().map_err(json)?;
        if let Some(problem) = first_problem {
            return Err(problem);
        }
        fields.into_identity(text)
    }
}

/// Read one key's value. The outer `Result` is a JSON error (fatal); the inner one a
/// field problem (remembered while the text is still validated).
fn read_field<'a>(
    reader: &mut IdentityReader<'a>,
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
            let pair = match read_integers::<2>(reader, value)? {
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
        "shape" => match read_integers::<16>(reader, value)? {
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

fn next<'a>(reader: &mut IdentityReader<'a>) -> Result<Event<'a>, JsonError> {
    // After a key the grammar always yields a value event (or an error).
    Ok(reader.next_event()?.unwrap_or(Event::Null))
}

/// Read an array of at most `N` `i64` integers, consuming the whole value whatever it is.
fn read_integers<'a, const N: usize>(
    reader: &mut IdentityReader<'a>,
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
    fn into_identity(self, text: &'a [u8]) -> Result<PayloadIdentity<'a>, Error> {
        fn need<T>(value: Option<T>, name: &'static str) -> Result<T, Error> {
            value.ok_or_else(|| field_error(name, "missing key"))
        }
        let (payload_hash, payload_hash_offset) = need(self.payload_hash, "payload_hash")?;
        Ok(PayloadIdentity {
            source: Some(text),
            payload_hash,
            payload_hash_offset: Some(payload_hash_offset),
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
