//! The `op_tombstone` and `op_delete` bodies (SPEC §6).
//!
//! Read: strict JSON, unknown keys skipped; `tombstone_json` for JSON problems or a
//! text that is not an object, then `tombstone_field` for the first missing or bad
//! field in table order (offset: the bad value, or the closing `}` for a missing
//! field). Written: keys in table order, separators `", "` / `": "`, ASCII escaping,
//! numbers as Python `repr(float)`.

use super::field_error;
use crate::error::{Error, ErrorCode};
use crate::json::{write_escaped, Event, JsonError, JsonStr, Limits, Reader};
use crate::pyfloat::write_repr;
use crate::sink::{encoded_len_of, write_into_checked, ByteSink};
use crate::table::{is_valid_id, is_valid_json_id};

/// Key table of the op-body readers: the body's keys plus room for unknown ones.
const OP_KEY_CAPACITY: usize = 64;

const HASH_REASON: &str = "content_hash must have 1-128 characters";
const NODE_REASON: &str = "node_id must have 1-128 characters";

/// A value read for one field, or the problem with it.
#[derive(Clone, Copy)]
enum Value<'a> {
    Missing,
    Id(JsonStr<'a>),
    Number(f64),
    Null,
    Problem(Error),
}

/// Read a body's fields (`names`, table order): one slot per field, plus the offset of
/// the closing `}` for missing-field errors.
fn read_fields<'a, const N: usize>(
    text: &'a [u8],
    limits: Limits,
    names: [&'static str; N],
    mut judge: impl FnMut(usize, Event<'a>, u64) -> Value<'a>,
) -> Result<([Value<'a>; N], u64), Error> {
    let json = |err: JsonError| err.to_error(ErrorCode::TombstoneJson, 0);
    let mut reader: Reader<'a, OP_KEY_CAPACITY> = Reader::new(text, limits);
    if reader.next_event().map_err(json)? != Some(Event::ObjectStart) {
        let at = reader.event_offset() as u64;
        reader.finish().map_err(json)?;
        return Err(Error::new(ErrorCode::TombstoneJson, "body is not a JSON object").at(at));
    }
    let mut values = [Value::Missing; N];
    while let Some(Event::Key(key)) = reader.next_event().map_err(json)? {
        let value = reader.next_event().map_err(json)?.unwrap_or(Event::Null);
        let at = reader.event_offset() as u64;
        reader.skip_value(&value).map_err(json)?;
        if let Some(index) = names.iter().position(|name| key.eq_str(name)) {
            if let Some(slot) = values.get_mut(index) {
                *slot = judge(index, value, at);
            }
        }
    }
    let end = reader.event_offset() as u64;
    reader.finish().map_err(json)?;
    Ok((values, end))
}

fn judge_id<'a>(name: &'static str, reason: &'static str, value: Event<'a>, at: u64) -> Value<'a> {
    match value {
        Event::Str(s) if is_valid_json_id(&s) => Value::Id(s),
        Event::Str(_) => Value::Problem(field_error(name, reason).at(at)),
        _ => Value::Problem(field_error(name, "must be a string").at(at)),
    }
}

fn judge_number<'a>(name: &'static str, value: Event<'a>, at: u64, nullable: bool) -> Value<'a> {
    match value {
        Event::Number(n) => Value::Number(n.as_f64()),
        Event::Null if nullable => Value::Null,
        _ if nullable => Value::Problem(field_error(name, "must be a number or null").at(at)),
        _ => Value::Problem(field_error(name, "must be a number").at(at)),
    }
}

/// The first problem in table order: missing or bad.
fn first_problem<const N: usize>(
    values: &[Value<'_>; N],
    names: [&'static str; N],
    end: u64,
    optional: &[usize],
) -> Option<Error> {
    values.iter().zip(names).enumerate().find_map(|(i, (value, name))| match value {
        Value::Missing if !optional.contains(&i) => Some(field_error(name, "required field is missing").at(end)),
        Value::Problem(problem) => Some(*problem),
        _ => None,
    })
}

fn check_id(value: &str, name: &'static str, reason: &'static str) -> Result<(), Error> {
    if is_valid_id(value) {
        Ok(())
    } else {
        Err(field_error(name, reason))
    }
}

fn check_finite(value: f64, name: &'static str) -> Result<(), Error> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(field_error(name, "must be a finite number"))
    }
}

/// An `op_tombstone` body: `{"content_hash": str, "until": number, "node_id": str}`.
/// All three are required (`until`, so the deadline survives the trip).
///
/// ```
/// use membrane_frame::tombstone::OpTombstone;
/// let op = OpTombstone::parse(br#"{"node_id": "n1", "until": 1735600060, "content_hash": "h\u00e9", "x": [1]}"#)?;
/// assert_eq!((op.content_hash().to_string().as_str(), op.until()), ("hé", 1735600060.0));
/// let mut out = [0u8; 128];
/// let len = op.write_into(&mut out)?;
/// assert_eq!(&out[..len], br#"{"content_hash": "h\u00e9", "until": 1735600060.0, "node_id": "n1"}"#);
/// assert_eq!(OpTombstone::new("h", 1.5, "n1")?.encoded_len(), 52);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct OpTombstone<'a> {
    content_hash: JsonStr<'a>,
    until: f64,
    node_id: JsonStr<'a>,
}

const TOMBSTONE_FIELDS: [&str; 3] = ["content_hash", "until", "node_id"];

impl<'a> OpTombstone<'a> {
    /// A body from Rust values; `tombstone_field` for a hash or node id that is not
    /// 1–128 characters or an `until` that is not finite.
    pub fn new(content_hash: &'a str, until: f64, node_id: &'a str) -> Result<OpTombstone<'a>, Error> {
        check_id(content_hash, "content_hash", HASH_REASON)?;
        check_finite(until, "until")?;
        check_id(node_id, "node_id", NODE_REASON)?;
        Ok(OpTombstone {
            content_hash: JsonStr::from_plain(content_hash),
            until,
            node_id: JsonStr::from_plain(node_id),
        })
    }

    /// Parse and validate a body with the default JSON limits.
    pub fn parse(text: &'a [u8]) -> Result<OpTombstone<'a>, Error> {
        OpTombstone::parse_with(text, Limits::default())
    }

    /// [`parse`](Self::parse) with explicit JSON limits.
    pub fn parse_with(text: &'a [u8], limits: Limits) -> Result<OpTombstone<'a>, Error> {
        let (values, end) = read_fields(text, limits, TOMBSTONE_FIELDS, |index, value, at| match index {
            0 => judge_id("content_hash", HASH_REASON, value, at),
            1 => judge_number("until", value, at, false),
            _ => judge_id("node_id", NODE_REASON, value, at),
        })?;
        if let Some(problem) = first_problem(&values, TOMBSTONE_FIELDS, end, &[]) {
            return Err(problem);
        }
        match values {
            [Value::Id(content_hash), Value::Number(until), Value::Id(node_id)] => {
                Ok(OpTombstone { content_hash, until, node_id })
            }
            _ => Err(field_error("content_hash", "required field is missing").at(end)),
        }
    }

    /// The content hash.
    pub fn content_hash(&self) -> JsonStr<'a> {
        self.content_hash
    }

    /// The deadline, absolute Unix seconds.
    pub fn until(&self) -> f64 {
        self.until
    }

    /// The node that recorded the tombstone.
    pub fn node_id(&self) -> JsonStr<'a> {
        self.node_id
    }

    /// Write the body: `{"content_hash": ..., "until": ..., "node_id": ...}`.
    pub fn write_to<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_bytes(b"{\"content_hash\": ")?;
        write_escaped(sink, &self.content_hash)?;
        sink.write_bytes(b", \"until\": ")?;
        write_repr(sink, self.until)?;
        sink.write_bytes(b", \"node_id\": ")?;
        write_escaped(sink, &self.node_id)?;
        sink.write_bytes(b"}")
    }

    /// Length in bytes of the written body.
    pub fn encoded_len(&self) -> usize {
        encoded_len_of(|sink| self.write_to(sink))
    }

    /// Write the body into `out`; its length, or `buffer_too_small` with the length needed
    /// (and `out` untouched).
    pub fn write_into(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_into_checked(out, self.encoded_len(), |sink| self.write_to(sink))
    }
}

/// An `op_delete` body: `{"content_hash": str, "node_id": str, "tombstone_until":
/// number | null}`. A missing `tombstone_until` reads as `null` (the receiver then
/// uses `now + 60 s`, [`DEFAULT_TOMBSTONE_TTL`](super::DEFAULT_TOMBSTONE_TTL)).
///
/// ```
/// use membrane_frame::tombstone::OpDelete;
/// let op = OpDelete::parse(br#"{"content_hash": "h", "node_id": "n1", "tombstone_until": null}"#)?;
/// assert_eq!(op.tombstone_until(), None);
/// let mut out = [0u8; 128];
/// let len = OpDelete::new("h", "n1", Some(5.0))?.write_into(&mut out)?;
/// assert_eq!(&out[..len], br#"{"content_hash": "h", "node_id": "n1", "tombstone_until": 5.0}"#);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct OpDelete<'a> {
    content_hash: JsonStr<'a>,
    node_id: JsonStr<'a>,
    tombstone_until: Option<f64>,
}

const DELETE_FIELDS: [&str; 3] = ["content_hash", "node_id", "tombstone_until"];

impl<'a> OpDelete<'a> {
    /// A body from Rust values; `tombstone_field` for a hash or node id that is not
    /// 1–128 characters or a deadline that is not finite.
    pub fn new(content_hash: &'a str, node_id: &'a str, tombstone_until: Option<f64>) -> Result<OpDelete<'a>, Error> {
        check_id(content_hash, "content_hash", HASH_REASON)?;
        check_id(node_id, "node_id", NODE_REASON)?;
        if let Some(until) = tombstone_until {
            check_finite(until, "tombstone_until")?;
        }
        Ok(OpDelete {
            content_hash: JsonStr::from_plain(content_hash),
            node_id: JsonStr::from_plain(node_id),
            tombstone_until,
        })
    }

    /// Parse and validate a body with the default JSON limits.
    pub fn parse(text: &'a [u8]) -> Result<OpDelete<'a>, Error> {
        OpDelete::parse_with(text, Limits::default())
    }

    /// [`parse`](Self::parse) with explicit JSON limits.
    pub fn parse_with(text: &'a [u8], limits: Limits) -> Result<OpDelete<'a>, Error> {
        let (values, end) = read_fields(text, limits, DELETE_FIELDS, |index, value, at| match index {
            0 => judge_id("content_hash", HASH_REASON, value, at),
            1 => judge_id("node_id", NODE_REASON, value, at),
            _ => judge_number("tombstone_until", value, at, true),
        })?;
        if let Some(problem) = first_problem(&values, DELETE_FIELDS, end, &[2]) {
            return Err(problem);
        }
        match values {
            [Value::Id(content_hash), Value::Id(node_id), until] => Ok(OpDelete {
                content_hash,
                node_id,
                tombstone_until: match until {
                    Value::Number(until) => Some(until),
                    _ => None,
                },
            }),
            _ => Err(field_error("content_hash", "required field is missing").at(end)),
        }
    }

    /// The content hash.
    pub fn content_hash(&self) -> JsonStr<'a> {
        self.content_hash
    }

    /// The node that deleted it.
    pub fn node_id(&self) -> JsonStr<'a> {
        self.node_id
    }

    /// The tombstone's deadline, or `None` for `null` (receiver's `now + 60 s`).
    pub fn tombstone_until(&self) -> Option<f64> {
        self.tombstone_until
    }

    /// Write the body: `{"content_hash": ..., "node_id": ..., "tombstone_until": ...}`.
    pub fn write_to<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_bytes(b"{\"content_hash\": ")?;
        write_escaped(sink, &self.content_hash)?;
        sink.write_bytes(b", \"node_id\": ")?;
        write_escaped(sink, &self.node_id)?;
        sink.write_bytes(b", \"tombstone_until\": ")?;
        match self.tombstone_until {
            Some(until) => write_repr(sink, until)?,
            None => sink.write_bytes(b"null")?,
        }
        sink.write_bytes(b"}")
    }

    /// Length in bytes of the written body.
    pub fn encoded_len(&self) -> usize {
        encoded_len_of(|sink| self.write_to(sink))
    }

    /// Write the body into `out`; its length, or `buffer_too_small` with the length needed
    /// (and `out` untouched).
    pub fn write_into(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_into_checked(out, self.encoded_len(), |sink| self.write_to(sink))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tombstone(text: &str) -> Result<(), (ErrorCode, Option<&'static str>, Option<u64>)> {
        OpTombstone::parse(text.as_bytes()).map(|_| ()).map_err(|e| (e.code(), e.field(), e.offset()))
    }

    #[test]
    fn missing_and_bad_fields_in_table_order() {
        let text = r#"{"node_id": "", "content_hash": "h"}"#;
        assert_eq!(tombstone(text), Err((ErrorCode::TombstoneField, Some("until"), Some(35))));
        let text = r#"{"node_id": "", "until": 1, "content_hash": "h"}"#;
        assert_eq!(tombstone(text), Err((ErrorCode::TombstoneField, Some("node_id"), Some(12))));
        let text = r#"{"node_id": "n", "until": null, "content_hash": "h"}"#;
        assert_eq!(tombstone(text), Err((ErrorCode::TombstoneField, Some("until"), Some(26))));
        assert_eq!(tombstone(r#"{"until": 1, "until": 2}"#).map_err(|e| e.0), Err(ErrorCode::TombstoneJson));
        assert_eq!(tombstone("[]").map_err(|e| e.0), Err(ErrorCode::TombstoneJson));
        let long = std::format!(r#"{{"content_hash": "{}", "until": 1, "node_id": "n"}}"#, "h".repeat(129));
        assert_eq!(tombstone(&long).map_err(|e| e.1), Err(Some("content_hash")));
        // An id that is not a string at all says so, at the value.
        let text = r#"{"content_hash": 5, "until": 1, "node_id": "n"}"#;
        let err = OpTombstone::parse(text.as_bytes()).unwrap_err();
        assert_eq!((err.field(), err.reason(), err.offset()), (Some("content_hash"), "must be a string", Some(17)));
    }

    #[test]
    fn bodies_built_from_rust_values_check_their_ids() {
        for (hash, node, field) in
            [("", "n", "content_hash"), ("h", "", "node_id"), ("h", &*"n".repeat(129), "node_id")]
        {
            for err in [OpTombstone::new(hash, 1.0, node).unwrap_err(), OpDelete::new(hash, node, None).unwrap_err()] {
                assert_eq!((err.code(), err.field()), (ErrorCode::TombstoneField, Some(field)), "{hash:?} {node:?}");
            }
        }
        assert!(OpTombstone::new("h", 1.0, &"n".repeat(128)).is_ok());
    }

    #[test]
    fn delete_deadline_may_be_null_or_absent_but_not_a_string() {
        let op = OpDelete::parse(br#"{"content_hash": "h", "node_id": "n"}"#).unwrap();
        assert_eq!(op.tombstone_until(), None);
        let err = OpDelete::parse(br#"{"content_hash": "h", "node_id": "n", "tombstone_until": "5"}"#).unwrap_err();
        assert_eq!((err.code(), err.field()), (ErrorCode::TombstoneField, Some("tombstone_until")));
        assert_eq!(OpDelete::new("h", "n", Some(f64::NAN)).unwrap_err().field(), Some("tombstone_until"));
        let mut small = [0u8; 8];
        let op = OpDelete::new("h", "n", None).unwrap();
        assert_eq!(op.write_into(&mut small).unwrap_err().needed(), Some(op.encoded_len() as u64));
    }

    /// Each way a field can be wrong has its own reason: an id string of the wrong
    /// length, an id that is not a string, a deadline that is not a number (`null`
    /// being allowed only where the deadline is optional).
    #[test]
    fn each_bad_value_has_its_own_reason() {
        let reason = |result: Result<(), Error>| {
            let err = result.unwrap_err();
            (err.field(), err.reason())
        };
        let tombstone = |text: &str| reason(OpTombstone::parse(text.as_bytes()).map(|_| ()));
        let delete = |text: &str| reason(OpDelete::parse(text.as_bytes()).map(|_| ()));
        assert_eq!(
            tombstone(r#"{"content_hash": "", "until": 1, "node_id": "n"}"#),
            (Some("content_hash"), HASH_REASON)
        );
        assert_eq!(tombstone(r#"{"content_hash": "h", "until": 1, "node_id": ""}"#), (Some("node_id"), NODE_REASON));
        assert_eq!(delete(r#"{"content_hash": "h", "node_id": ""}"#), (Some("node_id"), NODE_REASON));
        assert_eq!(delete(r#"{"content_hash": "h", "node_id": 7}"#), (Some("node_id"), "must be a string"));
        assert_eq!(
            tombstone(r#"{"content_hash": "h", "until": "1", "node_id": "n"}"#),
            (Some("until"), "must be a number")
        );
        assert_eq!(
            tombstone(r#"{"content_hash": "h", "until": null, "node_id": "n"}"#),
            (Some("until"), "must be a number")
        );
        assert_eq!(
            delete(r#"{"content_hash": "h", "node_id": "n", "tombstone_until": "1"}"#),
            (Some("tombstone_until"), "must be a number or null")
        );
    }

    /// `op_delete`'s deadline may be `null`: the receiver's `now + 60 s`.
    #[test]
    fn a_null_delete_deadline_reads_as_none() {
        let op = OpDelete::parse(br#"{"content_hash": "h", "node_id": "n", "tombstone_until": null}"#).unwrap();
        assert_eq!(
            (op.content_hash().as_str(), op.node_id().as_str(), op.tombstone_until()),
            (Some("h"), Some("n"), None)
        );
        let op = OpDelete::parse(br#"{"content_hash": "h", "node_id": "n", "tombstone_until": 5.5}"#).unwrap();
        assert_eq!(op.tombstone_until(), Some(5.5));
    }
}
