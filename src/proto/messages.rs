//! The four messages of SPEC §10, decoded in place and encoded into any [`ByteSink`].

use super::wire::{self, field, Field, FieldReader, Value, LEN};
use crate::error::{Error, ErrorCode};
use crate::sink::{ByteSink, SliceSink};
use core::fmt;

/// A proto3 message of SPEC §10: decoded in place from borrowed bytes, encoded into a
/// caller's buffer or any [`ByteSink`] with an exact length known up front.
///
/// Decoding follows proto3: unknown fields are skipped, the last value of a scalar
/// field seen twice wins, absent fields have their default. Encoding writes known
/// fields in field-number order and omits default values, like the official runtimes.
///
/// ```
/// use membrane_frame::proto::{ChunkRequest, Message};
/// let request = ChunkRequest { chunk_index: 3, offset: 1 << 20, length: 65536 };
/// let mut buf = [0u8; 32];
/// let len = request.encode_to_slice(&mut buf)?;
/// assert_eq!(len, request.encoded_len());
/// assert_eq!(ChunkRequest::decode(&buf[..len])?, request);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub trait Message<'a>: Sized {
    /// The message name in the `.proto` (`"Chunk"`).
    const NAME: &'static str;

    /// Decode a whole buffer as one message. Errors are `proto_decode` (the bytes are
    /// not protobuf) or `proto_field` (a known field has the wrong wire type or a bad
    /// value), with the offset of the field's tag and the field name
    /// (`"Chunk.sha256_hex"`, or the message name where no known field applies).
    fn decode(bytes: &'a [u8]) -> Result<Self, Error>;

    /// The exact number of bytes [`encode`](Self::encode) writes.
    fn encoded_len(&self) -> usize;

    /// Write the message into `sink`.
    fn encode<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error>;

    /// Write the message at the start of `out` and return its length; a short buffer
    /// is `buffer_too_small` with the length needed, and nothing useful is written.
    fn encode_to_slice(&self, out: &mut [u8]) -> Result<usize, Error> {
        let needed = self.encoded_len();
        if out.len() < needed {
            return Err(Error::buffer_too_small(needed as u64));
        }
        let mut sink = SliceSink::new(out);
        self.encode(&mut sink).map_err(|_| Error::buffer_too_small(needed as u64))?;
        Ok(sink.len())
    }
}

fn wrong_wire_type(f: &Field<'_>, name: &'static str) -> Error {
    Error::new(ErrorCode::ProtoField, "wrong wire type for this field").at(f.offset as u64).in_field(name)
}

fn string<'a>(f: &Field<'a>, name: &'static str) -> Result<&'a str, Error> {
    let bytes = bytes(f, name)?;
    core::str::from_utf8(bytes).map_err(|e| {
        Error::new(ErrorCode::ProtoField, "string is not UTF-8")
            .at(f.value_offset.saturating_add(e.valid_up_to()) as u64)
            .in_field(name)
    })
}

fn bytes<'a>(f: &Field<'a>, name: &'static str) -> Result<&'a [u8], Error> {
    match f.value {
        Value::Len(bytes) => Ok(bytes),
        _ => Err(wrong_wire_type(f, name)),
    }
}

fn varint(f: &Field<'_>, name: &'static str) -> Result<u64, Error> {
    match f.value {
        Value::Varint(v) => Ok(v),
        _ => Err(wrong_wire_type(f, name)),
    }
}

/// int64: the varint's 64 bits as two's complement.
fn int64(f: &Field<'_>, name: &'static str) -> Result<i64, Error> {
    varint(f, name).map(|v| v as i64)
}

/// int32: the low 32 bits of the varint, as every proto3 runtime reads it.
fn int32(f: &Field<'_>, name: &'static str) -> Result<i32, Error> {
    varint(f, name).map(|v| v as u32 as i32)
}

/// bool: any non-zero varint is true.
fn boolean(f: &Field<'_>, name: &'static str) -> Result<bool, Error> {
    varint(f, name).map(|v| v != 0)
}

fn str_len(number: u32, value: &str) -> usize {
    field::bytes_len_of(number, value.as_bytes())
}

fn write_str<S: ByteSink + ?Sized>(sink: &mut S, number: u32, value: &str) -> Result<(), S::Error> {
    field::write_bytes_field(sink, number, value.as_bytes())
}

/// `Envelope`: who asks for what, and how the content is encoded.
///
/// ```
/// use membrane_frame::proto::{Envelope, Message};
/// let envelope = Envelope { request_id: "r-1", model_id: "llama-3-8b", total_bytes: 4096,
///                           compression: 1, ..Envelope::default() };
/// let mut buf = [0u8; 64];
/// let len = envelope.encode_to_slice(&mut buf)?;
/// let decoded = Envelope::decode(&buf[..len])?;   // strings borrow from `buf`
/// assert_eq!(decoded.model_id, "llama-3-8b");
/// assert_eq!(decoded, envelope);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Envelope<'a> {
    /// Field 1.
    pub request_id: &'a str,
    /// Field 2.
    pub tenant_id: &'a str,
    /// Field 3.
    pub model_id: &'a str,
    /// Field 4.
    pub fingerprint_compat: &'a str,
    /// Field 5.
    pub content_hash: &'a str,
    /// Field 6.
    pub total_bytes: i64,
    /// Field 7: 0 none, 1 zstd, 2 lz4 (see [`Compression`]); other values are kept as
    /// they are (the field is an `int32`, not an enum).
    pub compression: i32,
    /// Field 8.
    pub content_type: &'a str,
}

/// The `Envelope.compression` values SPEC §10 names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// 0.
    None = 0,
    /// 1.
    Zstd = 1,
    /// 2.
    Lz4 = 2,
}

impl Envelope<'_> {
    /// `compression` as a known [`Compression`], `None` for any other number.
    pub fn compression_kind(&self) -> Option<Compression> {
        match self.compression {
            0 => Some(Compression::None),
            1 => Some(Compression::Zstd),
            2 => Some(Compression::Lz4),
            _ => None,
        }
    }
}

fn envelope_field_name(number: u32) -> &'static str {
    match number {
        1 => "Envelope.request_id",
        2 => "Envelope.tenant_id",
        3 => "Envelope.model_id",
        4 => "Envelope.fingerprint_compat",
        5 => "Envelope.content_hash",
        6 => "Envelope.total_bytes",
        7 => "Envelope.compression",
        8 => "Envelope.content_type",
        _ => "Envelope",
    }
}

impl<'a> Message<'a> for Envelope<'a> {
    const NAME: &'static str = "Envelope";

    fn decode(bytes: &'a [u8]) -> Result<Self, Error> {
        let mut msg = Envelope::default();
        let mut reader = FieldReader::new(bytes, envelope_field_name);
        while let Some(f) = reader.next_field()? {
            let name = envelope_field_name(f.number);
            match f.number {
                1 => msg.request_id = string(&f, name)?,
                2 => msg.tenant_id = string(&f, name)?,
                3 => msg.model_id = string(&f, name)?,
                4 => msg.fingerprint_compat = string(&f, name)?,
                5 => msg.content_hash = string(&f, name)?,
                6 => msg.total_bytes = int64(&f, name)?,
                7 => msg.compression = int32(&f, name)?,
                8 => msg.content_type = string(&f, name)?,
                _ => {}
            }
        }
        Ok(msg)
    }

    fn encoded_len(&self) -> usize {
        [
            str_len(1, self.request_id),
            str_len(2, self.tenant_id),
            str_len(3, self.model_id),
            str_len(4, self.fingerprint_compat),
            str_len(5, self.content_hash),
            field::varint_len_of(6, self.total_bytes as u64),
            field::varint_len_of(7, wire::int32_wire(self.compression)),
            str_len(8, self.content_type),
        ]
        .iter()
        .fold(0usize, |sum, n| sum.saturating_add(*n))
    }

    fn encode<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        write_str(sink, 1, self.request_id)?;
        write_str(sink, 2, self.tenant_id)?;
        write_str(sink, 3, self.model_id)?;
        write_str(sink, 4, self.fingerprint_compat)?;
        write_str(sink, 5, self.content_hash)?;
        field::write_varint_field(sink, 6, self.total_bytes as u64)?;
        field::write_varint_field(sink, 7, wire::int32_wire(self.compression))?;
        write_str(sink, 8, self.content_type)
    }
}

/// `TensorPayload.shape`: either values the caller supplies (to encode) or a view of
/// a decoded message that yields the elements in wire order, packed and unpacked alike.
///
/// ```
/// use membrane_frame::proto::Shape;
/// let shape = Shape::from_values(&[1, 32, 8, 128]);
/// assert_eq!(shape.len(), 4);
/// assert_eq!(shape.iter().product::<i64>(), 32768);
/// ```
#[derive(Clone, Copy)]
pub struct Shape<'a>(ShapeRepr<'a>);

#[derive(Clone, Copy)]
enum ShapeRepr<'a> {
    Values(&'a [i64]),
    /// A validated message and the number of shape elements in it.
    Wire {
        message: &'a [u8],
        len: usize,
    },
}

impl<'a> Shape<'a> {
    /// A shape from values.
    pub const fn from_values(values: &'a [i64]) -> Shape<'a> {
        Shape(ShapeRepr::Values(values))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self.0 {
            ShapeRepr::Values(values) => values.len(),
            ShapeRepr::Wire { len, .. } => len,
        }
    }

    /// Whether the shape has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements in order (for a decoded message: a walk of its bytes).
    pub fn iter(&self) -> ShapeIter<'a> {
        match self.0 {
            ShapeRepr::Values(values) => ShapeIter(IterRepr::Values(values.iter())),
            ShapeRepr::Wire { message, len } => ShapeIter(IterRepr::Wire {
                fields: FieldReader::new(message, tensor_field_name),
                packed: &[],
                pos: 0,
                remaining: len,
            }),
        }
    }

    /// Bytes of the packed elements (without tag and length).
    fn packed_len(&self) -> usize {
        self.iter().fold(0usize, |sum, v| sum.saturating_add(wire::varint_len(v as u64)))
    }
}

impl Default for Shape<'_> {
    fn default() -> Self {
        Shape::from_values(&[])
    }
}

impl PartialEq for Shape<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Shape<'_> {}

impl fmt::Debug for Shape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Shape<'a> {
    type Item = i64;
    type IntoIter = ShapeIter<'a>;
    fn into_iter(self) -> ShapeIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Shape<'a> {
    type Item = i64;
    type IntoIter = ShapeIter<'a>;
    fn into_iter(self) -> ShapeIter<'a> {
        self.iter()
    }
}

/// Iterator over a [`Shape`]'s elements.
#[derive(Clone)]
pub struct ShapeIter<'a>(IterRepr<'a>);

#[derive(Clone)]
enum IterRepr<'a> {
    Values(core::slice::Iter<'a, i64>),
    Wire { fields: FieldReader<'a>, packed: &'a [u8], pos: usize, remaining: usize },
}

impl Iterator for ShapeIter<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        match &mut self.0 {
            IterRepr::Values(values) => values.next().copied(),
            IterRepr::Wire { fields, packed, pos, remaining } => {
                // The message was validated when it was decoded: an error here cannot
                // happen, and ends the walk if it did.
                loop {
                    if *pos < packed.len() {
                        let value = wire::read_varint(packed, pos).ok()?;
                        *remaining = remaining.saturating_sub(1);
                        return Some(value as i64);
                    }
                    let f = fields.next_field().ok()??;
                    if f.number != TENSOR_SHAPE {
                        continue;
                    }
                    match f.value {
                        Value::Varint(value) => {
                            *remaining = remaining.saturating_sub(1);
                            return Some(value as i64);
                        }
                        Value::Len(bytes) => {
                            *packed = bytes;
                            *pos = 0;
                        }
                        _ => return None,
                    }
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            IterRepr::Values(values) => values.len(),
            IterRepr::Wire { remaining, .. } => *remaining,
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for ShapeIter<'_> {}

const TENSOR_SHAPE: u32 = 3;

fn tensor_field_name(number: u32) -> &'static str {
    match number {
        1 => "TensorPayload.data",
        2 => "TensorPayload.schema_fingerprint",
        3 => "TensorPayload.shape",
        4 => "TensorPayload.dtype",
        _ => "TensorPayload",
    }
}

/// `TensorPayload`: a tensor's bytes with its shape and dtype. `data` borrows from the
/// decoded buffer; `shape` is a [`Shape`].
///
/// ```
/// use membrane_frame::proto::{Message, Shape, TensorPayload};
/// let tensor = TensorPayload { data: &[0u8; 16], shape: Shape::from_values(&[2, -1, 8]),
///                              dtype: "float16", ..TensorPayload::default() };
/// let mut buf = [0u8; 64];
/// let len = tensor.encode_to_slice(&mut buf)?;
/// let decoded = TensorPayload::decode(&buf[..len])?;
/// assert!(decoded.shape.iter().eq([2, -1, 8]));
/// assert_eq!(decoded, tensor);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TensorPayload<'a> {
    /// Field 1.
    pub data: &'a [u8],
    /// Field 2.
    pub schema_fingerprint: &'a str,
    /// Field 3: `repeated int64`, written packed, read packed or not.
    pub shape: Shape<'a>,
    /// Field 4.
    pub dtype: &'a str,
}

/// Count the varints of a packed run, checking each is complete.
fn packed_count(f: &Field<'_>, bytes: &[u8]) -> Result<usize, Error> {
    let mut pos = 0;
    let mut count = 0usize;
    while pos < bytes.len() {
        wire::read_varint(bytes, &mut pos)
            .map_err(|err| err.shifted(f.value_offset as u64).in_field("TensorPayload.shape"))?;
        count = count.saturating_add(1);
    }
    Ok(count)
}

impl<'a> Message<'a> for TensorPayload<'a> {
    const NAME: &'static str = "TensorPayload";

    fn decode(bytes: &'a [u8]) -> Result<Self, Error> {
        let mut msg = TensorPayload::default();
        let mut shape_len = 0usize;
        let mut reader = FieldReader::new(bytes, tensor_field_name);
        while let Some(f) = reader.next_field()? {
            let name = tensor_field_name(f.number);
            match f.number {
                1 => msg.data = self::bytes(&f, name)?,
                2 => msg.schema_fingerprint = string(&f, name)?,
                TENSOR_SHAPE => {
                    let n = match f.value {
                        Value::Varint(_) => 1,
                        Value::Len(packed) => packed_count(&f, packed)?,
                        _ => return Err(wrong_wire_type(&f, name)),
                    };
                    shape_len = shape_len.saturating_add(n);
                }
                4 => msg.dtype = string(&f, name)?,
                _ => {}
            }
        }
        if shape_len > 0 {
            msg.shape = Shape(ShapeRepr::Wire { message: bytes, len: shape_len });
        }
        Ok(msg)
    }

    fn encoded_len(&self) -> usize {
        let shape = if self.shape.is_empty() {
            0
        } else {
            let packed = self.shape.packed_len();
            wire::tag_len(TENSOR_SHAPE).saturating_add(wire::varint_len(packed as u64)).saturating_add(packed)
        };
        [field::bytes_len_of(1, self.data), str_len(2, self.schema_fingerprint), shape, str_len(4, self.dtype)]
            .iter()
            .fold(0usize, |sum, n| sum.saturating_add(*n))
    }

    fn encode<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        field::write_bytes_field(sink, 1, self.data)?;
        write_str(sink, 2, self.schema_fingerprint)?;
        if !self.shape.is_empty() {
            wire::write_tag(sink, TENSOR_SHAPE, LEN)?;
            wire::write_varint(sink, self.shape.packed_len() as u64)?;
            for value in self.shape.iter() {
                wire::write_varint(sink, value as u64)?;
            }
        }
        write_str(sink, 4, self.dtype)
    }
}

fn request_field_name(number: u32) -> &'static str {
    match number {
        1 => "ChunkRequest.chunk_index",
        2 => "ChunkRequest.offset",
        3 => "ChunkRequest.length",
        _ => "ChunkRequest",
    }
}

/// `ChunkRequest`: asks for `length` bytes at `offset` as chunk `chunk_index`.
/// (Example on [`Message`].)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChunkRequest {
    /// Field 1.
    pub chunk_index: i32,
    /// Field 2.
    pub offset: i64,
    /// Field 3.
    pub length: i64,
}

impl<'a> Message<'a> for ChunkRequest {
    const NAME: &'static str = "ChunkRequest";

    fn decode(bytes: &'a [u8]) -> Result<Self, Error> {
        let mut msg = ChunkRequest::default();
        let mut reader = FieldReader::new(bytes, request_field_name);
        while let Some(f) = reader.next_field()? {
            let name = request_field_name(f.number);
            match f.number {
                1 => msg.chunk_index = int32(&f, name)?,
                2 => msg.offset = int64(&f, name)?,
                3 => msg.length = int64(&f, name)?,
                _ => {}
            }
        }
        Ok(msg)
    }

    fn encoded_len(&self) -> usize {
        field::varint_len_of(1, wire::int32_wire(self.chunk_index))
            + field::varint_len_of(2, self.offset as u64)
            + field::varint_len_of(3, self.length as u64)
    }

    fn encode<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        field::write_varint_field(sink, 1, wire::int32_wire(self.chunk_index))?;
        field::write_varint_field(sink, 2, self.offset as u64)?;
        field::write_varint_field(sink, 3, self.length as u64)
    }
}

fn chunk_field_name(number: u32) -> &'static str {
    match number {
        1 => "Chunk.chunk_index",
        2 => "Chunk.offset",
        3 => "Chunk.data",
        4 => "Chunk.sha256_hex",
        5 => "Chunk.is_last",
        _ => "Chunk",
    }
}

/// `Chunk`: one piece of a transfer. `sha256_hex` is the lower-case hex SHA-256 of
/// `data` ([`verify_digest`](Self::verify_digest)); a
/// [`ChunkReassembler`](super::ChunkReassembler) checks a whole sequence of them.
///
/// ```
/// use membrane_frame::proto::{Chunk, Message};
/// use membrane_frame::Sha256Digest;
/// let data = b"part of a frame";
/// let hex = Sha256Digest::of(data).to_hex();
/// let chunk = Chunk { chunk_index: 0, offset: 0, data, sha256_hex: hex.as_str(), is_last: true };
/// let mut buf = [0u8; 128];
/// let len = chunk.encode_to_slice(&mut buf)?;
/// let decoded = Chunk::decode(&buf[..len])?;
/// decoded.verify_digest()?;
/// assert_eq!(decoded, chunk);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Chunk<'a> {
    /// Field 1.
    pub chunk_index: i32,
    /// Field 2: byte offset of `data` within the transfer.
    pub offset: i64,
    /// Field 3.
    pub data: &'a [u8],
    /// Field 4: lower-case hex SHA-256 of `data`.
    pub sha256_hex: &'a str,
    /// Field 5.
    pub is_last: bool,
}

impl Chunk<'_> {
    /// Check that `sha256_hex` is the lower-case hex SHA-256 of `data`: else
    /// `chunk_digest` (field `Chunk.sha256_hex`, offset = the chunk's `offset` when it is
    /// not negative). Upper-case hex and an empty value are mismatches.
    pub fn verify_digest(&self) -> Result<(), Error> {
        let digest = crate::Sha256Digest::of(self.data);
        if digest.to_hex().as_str() == self.sha256_hex {
            return Ok(());
        }
        let err =
            Error::new(ErrorCode::ChunkDigest, "sha256_hex is not the SHA-256 of data").in_field("Chunk.sha256_hex");
        Err(match u64::try_from(self.offset) {
            Ok(offset) => err.at(offset),
            Err(_) => err,
        })
    }
}

impl<'a> Message<'a> for Chunk<'a> {
    const NAME: &'static str = "Chunk";

    fn decode(bytes: &'a [u8]) -> Result<Self, Error> {
        let mut msg = Chunk::default();
        let mut reader = FieldReader::new(bytes, chunk_field_name);
        while let Some(f) = reader.next_field()? {
            let name = chunk_field_name(f.number);
            match f.number {
                1 => msg.chunk_index = int32(&f, name)?,
                2 => msg.offset = int64(&f, name)?,
                3 => msg.data = self::bytes(&f, name)?,
                4 => msg.sha256_hex = string(&f, name)?,
                5 => msg.is_last = boolean(&f, name)?,
                _ => {}
            }
        }
        Ok(msg)
    }

    fn encoded_len(&self) -> usize {
        [
            field::varint_len_of(1, wire::int32_wire(self.chunk_index)),
            field::varint_len_of(2, self.offset as u64),
            field::bytes_len_of(3, self.data),
            str_len(4, self.sha256_hex),
            field::varint_len_of(5, u64::from(self.is_last)),
        ]
        .iter()
        .fold(0usize, |sum, n| sum.saturating_add(*n))
    }

    fn encode<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        field::write_varint_field(sink, 1, wire::int32_wire(self.chunk_index))?;
        field::write_varint_field(sink, 2, self.offset as u64)?;
        field::write_bytes_field(sink, 3, self.data)?;
        write_str(sink, 4, self.sha256_hex)?;
        field::write_varint_field(sink, 5, u64::from(self.is_last))
    }
}
