//! The proto3 wire format: varints, tags, a field reader that borrows from the input,
//! and the writing primitives. Everything is bounds-checked; nothing allocates.

use crate::error::{Error, ErrorCode};
use crate::sink::ByteSink;

/// Wire type 0: a varint.
pub(crate) const VARINT: u8 = 0;
/// Wire type 1: 8 little-endian bytes.
pub(crate) const FIXED64: u8 = 1;
/// Wire type 2: a varint length and that many bytes.
pub(crate) const LEN: u8 = 2;
/// Wire type 5: 4 little-endian bytes.
pub(crate) const FIXED32: u8 = 5;

/// The largest field number protobuf allows (2^29 - 1).
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// The longest varint (a 64-bit value in 7-bit groups).
pub(crate) const MAX_VARINT_LEN: usize = 10;

fn decode_error(reason: &'static str, offset: usize) -> Error {
    Error::new(ErrorCode::ProtoDecode, reason).at(offset as u64)
}

/// Read a varint at `*pos`, advancing it. More than 10 bytes, or a varint cut off by the
/// end of `buf`, is `proto_decode`. Bits of a 10th byte beyond the 64th are dropped,
/// as the official runtimes do.
pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, Error> {
    let start = *pos;
    let mut value: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let at = start.checked_add(i).ok_or_else(|| decode_error("truncated varint", start))?;
        let byte = *buf.get(at).ok_or_else(|| decode_error("truncated varint", start))?;
        // i < 10, so the shift is at most 63.
        value |= u64::from(byte & 0x7F).checked_shl(7 * i as u32).unwrap_or(0);
        if byte & 0x80 == 0 {
            *pos = at + 1;
            return Ok(value);
        }
    }
    Err(decode_error("varint longer than 10 bytes", start))
}

/// A field's value, borrowed from the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Len(&'a [u8]),
    Fixed32(u32),
}

/// One field of a message: its number, its value, and where its tag starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    pub(crate) number: u32,
    pub(crate) value: Value<'a>,
    /// Offset of the tag within the message.
    pub(crate) offset: usize,
    /// Offset of the value (after the tag, and for `Len` after the length).
    pub(crate) value_offset: usize,
}

/// Walks the fields of a message in wire order.
#[derive(Clone, Debug)]
pub(crate) struct FieldReader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The name errors carry: a known field's (`"Chunk.data"`), else the message's.
    names: fn(u32) -> &'static str,
}

impl<'a> FieldReader<'a> {
    pub(crate) fn new(buf: &'a [u8], names: fn(u32) -> &'static str) -> FieldReader<'a> {
        FieldReader { buf, pos: 0, names }
    }

    /// The next field, `None` at the end of the message; errors name the field.
    pub(crate) fn next_field(&mut self) -> Result<Option<Field<'a>>, Error> {
        let mut number = 0;
        self.next_inner(&mut number).map_err(|err| err.in_field((self.names)(number)))
    }

    fn take(&mut self, n: u64, what: &'static str, tag_offset: usize) -> Result<&'a [u8], Error> {
        let n = usize::try_from(n).map_err(|_| decode_error(what, tag_offset))?;
        let end = self.pos.checked_add(n).ok_or_else(|| decode_error(what, tag_offset))?;
        let bytes = self.buf.get(self.pos..end).ok_or_else(|| decode_error(what, tag_offset))?;
        self.pos = end;
        Ok(bytes)
    }

    fn next_inner(&mut self, seen_number: &mut u32) -> Result<Option<Field<'a>>, Error> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let offset = self.pos;
        let tag = read_varint(self.buf, &mut self.pos)?;
        let number = tag >> 3;
        if number == 0 || number > MAX_FIELD_NUMBER {
            return Err(decode_error("field number out of range (0 or above 2^29-1)", offset));
        }
        // Checked above: the number fits 29 bits.
        let number = u32::try_from(number).unwrap_or(0);
        *seen_number = number;
        let wire_type = (tag & 7) as u8;
        let value_start = self.pos;
        let (value, value_offset) = match wire_type {
            VARINT => (Value::Varint(read_varint(self.buf, &mut self.pos)?), value_start),
            FIXED64 => {
                let bytes = self.take(8, "fixed64 value past the end", offset)?;
                let mut le = [0u8; 8];
                le.copy_from_slice(bytes);
                (Value::Fixed64(u64::from_le_bytes(le)), value_start)
            }
            LEN => {
                let len = read_varint(self.buf, &mut self.pos)?;
                let data_start = self.pos;
                (Value::Len(self.take(len, "length past the end of the message", offset)?), data_start)
            }
            FIXED32 => {
                let bytes = self.take(4, "fixed32 value past the end", offset)?;
                let mut le = [0u8; 4];
                le.copy_from_slice(bytes);
                (Value::Fixed32(u32::from_le_bytes(le)), value_start)
            }
            3 | 4 => return Err(decode_error("group wire type (3/4): proto3 has no groups", offset)),
            _ => return Err(decode_error("invalid wire type (6/7)", offset)),
        };
        Ok(Some(Field { number, value, offset, value_offset }))
    }
}

/// Number of bytes the varint encoding of `value` takes (1..=10).
pub(crate) const fn varint_len(value: u64) -> usize {
    // 64 - leading zeros = significant bits; each byte carries 7.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Write `value` as a varint.
pub(crate) fn write_varint<S: ByteSink + ?Sized>(sink: &mut S, mut value: u64) -> Result<(), S::Error> {
    let mut buf = [0u8; MAX_VARINT_LEN];
    let mut len = 0;
    for slot in buf.iter_mut() {
        len += 1;
        if value < 0x80 {
            *slot = value as u8;
            break;
        }
        *slot = (value as u8 & 0x7F) | 0x80;
        value >>= 7;
    }
    sink.write_bytes(buf.get(..len).unwrap_or(&buf))
}

/// Length of a tag for field `number` (wire type bits included).
pub(crate) const fn tag_len(number: u32) -> usize {
    varint_len((number as u64) << 3)
}

pub(crate) fn write_tag<S: ByteSink + ?Sized>(sink: &mut S, number: u32, wire_type: u8) -> Result<(), S::Error> {
    write_varint(sink, (u64::from(number) << 3) | u64::from(wire_type))
}

/// An int32 on the wire: negative values are sign-extended to 64 bits (10 bytes).
pub(crate) fn int32_wire(value: i32) -> u64 {
    i64::from(value) as u64
}

/// Field sizes and writers for the scalar kinds; each omits the proto3 default.
pub(crate) mod field {
    use super::*;

    pub(crate) fn varint_len_of(number: u32, value: u64) -> usize {
        if value == 0 {
            0
        } else {
            tag_len(number) + varint_len(value)
        }
    }

    pub(crate) fn bytes_len_of(number: u32, bytes: &[u8]) -> usize {
        if bytes.is_empty() {
            0
        } else {
            tag_len(number).saturating_add(varint_len(bytes.len() as u64)).saturating_add(bytes.len())
        }
    }

    pub(crate) fn write_varint_field<S: ByteSink + ?Sized>(
        sink: &mut S,
        number: u32,
        value: u64,
    ) -> Result<(), S::Error> {
        if value == 0 {
            return Ok(());
        }
        write_tag(sink, number, VARINT)?;
        write_varint(sink, value)
    }

    pub(crate) fn write_bytes_field<S: ByteSink + ?Sized>(
        sink: &mut S,
        number: u32,
        bytes: &[u8],
    ) -> Result<(), S::Error> {
        if bytes.is_empty() {
            return Ok(());
        }
        write_tag(sink, number, LEN)?;
        write_varint(sink, bytes.len() as u64)?;
        sink.write_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    fn encode(value: u64) -> ([u8; 10], usize) {
        let mut buf = [0u8; 10];
        let mut sink = SliceSink::new(&mut buf);
        write_varint(&mut sink, value).unwrap();
        let len = sink.len();
        (buf, len)
    }

    #[test]
    fn varints_round_trip_at_every_length() {
        for shift in 0..64 {
            for value in [1u64 << shift, (1u64 << shift) - 1, u64::MAX >> shift] {
                let (buf, len) = encode(value);
                assert_eq!(len, varint_len(value), "{value}");
                let mut pos = 0;
                assert_eq!(read_varint(&buf[..len], &mut pos).unwrap(), value);
                assert_eq!(pos, len);
            }
        }
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(u64::MAX), 10);
        assert_eq!(encode(int32_wire(-1)).1, 10);
    }

    #[test]
    fn rejects_truncated_and_overlong_varints() {
        let mut pos = 0;
        let err = read_varint(&[0x80, 0x80], &mut pos).unwrap_err();
        assert_eq!((err.code(), err.offset()), (ErrorCode::ProtoDecode, Some(0)));
        let eleven = [0xFFu8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01];
        let err = read_varint(&eleven, &mut pos).unwrap_err();
        assert_eq!(err.reason(), "varint longer than 10 bytes");
        // A 10th byte with bits beyond the 64th: dropped, as the official runtimes do.
        let mut pos = 0;
        let ten = [0xFFu8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F];
        assert_eq!(read_varint(&ten, &mut pos).unwrap(), u64::MAX);
    }

    #[test]
    fn field_reader_rejects_groups_bad_wire_types_and_overruns() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x0B], "group wire type (3/4): proto3 has no groups"),
            (&[0x0C], "group wire type (3/4): proto3 has no groups"),
            (&[0x0E], "invalid wire type (6/7)"),
            (&[0x02, 0x00], "field number out of range (0 or above 2^29-1)"),
            (&[0x0A, 0x05, 0x01], "length past the end of the message"),
            (&[0x09, 0x01], "fixed64 value past the end"),
            (&[0x0D, 0x01], "fixed32 value past the end"),
            (&[0x08], "truncated varint"),
            (&[0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "length past the end of the message"),
        ];
        for (bytes, reason) in cases {
            let err = FieldReader::new(bytes, |n| if n == 1 { "T.one" } else { "T" }).next_field().unwrap_err();
            assert_eq!((err.code(), err.reason()), (ErrorCode::ProtoDecode, *reason), "{bytes:?}");
            // A truncated value is reported where the value starts, the rest at the tag.
            let offset = if *reason == "truncated varint" { 1 } else { 0 };
            assert_eq!(err.offset(), Some(offset));
            let named = bytes[0] >> 3 == 1;
            assert_eq!(err.field(), Some(if named { "T.one" } else { "T" }), "{bytes:?}");
        }
    }

    /// Field numbers run from 1 to 2^29 - 1; a tag takes one varint byte per 7 bits of
    /// `number << 3`.
    #[test]
    fn field_numbers_up_to_2_pow_29_minus_1_are_read_and_their_tags_sized() {
        let tag = |number: u64| {
            let mut buf = [0u8; 11];
            let mut sink = SliceSink::new(&mut buf);
            write_varint(&mut sink, number << 3).unwrap();
            let len = sink.len();
            buf[len] = 0; // the varint value 0
            buf[..=len].to_vec()
        };
        let largest = (1u64 << 29) - 1;
        let bytes = tag(largest);
        let field = FieldReader::new(&bytes, |_| "T").next_field().unwrap().unwrap();
        assert_eq!((u64::from(field.number), field.value), (largest, Value::Varint(0)));
        for beyond in [largest + 1, largest + 2, 1 << 32] {
            let bytes = tag(beyond);
            let err = FieldReader::new(&bytes, |_| "T").next_field().unwrap_err();
            assert_eq!(err.reason(), "field number out of range (0 or above 2^29-1)", "{beyond}");
        }
        for (number, len) in [(1, 1), (15, 1), (16, 2), (2047, 2), (2048, 3), (1 << 25, 5), (largest as u32, 5)] {
            assert_eq!(tag_len(number), len, "{number}");
            assert_eq!(tag_len(number), tag(u64::from(number)).len() - 1, "{number}");
        }
    }
}
