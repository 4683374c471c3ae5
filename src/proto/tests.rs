use super::*;
use crate::error::ErrorCode;
use crate::frame::{ReadOptions, StreamVerifier};
use crate::Sha256Digest;

fn encode<'a, M: Message<'a>>(msg: &M, buf: &mut [u8]) -> usize {
    let len = msg.encode_to_slice(buf).unwrap();
    assert_eq!(len, msg.encoded_len());
    len
}

#[test]
fn defaults_encode_to_nothing() {
    assert_eq!(Envelope::default().encoded_len(), 0);
    assert_eq!(TensorPayload::default().encoded_len(), 0);
    assert_eq!(ChunkRequest::default().encoded_len(), 0);
    assert_eq!(Chunk::default().encoded_len(), 0);
    assert_eq!(Chunk::decode(&[]).unwrap(), Chunk::default());
}

#[test]
fn negative_int32_is_a_ten_byte_varint() {
    let request = ChunkRequest { chunk_index: -1, offset: 0, length: 0 };
    let mut buf = [0u8; 16];
    let len = encode(&request, &mut buf);
    assert_eq!(&buf[..len], &[0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
    assert_eq!(ChunkRequest::decode(&buf[..len]).unwrap(), request);
    // A 5-byte (zero-extended) int32 is read the same: the low 32 bits count.
    assert_eq!(ChunkRequest::decode(&[0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]).unwrap().chunk_index, -1);
}

#[test]
fn last_value_wins_and_unknown_fields_are_skipped() {
    // offset = 1, unknown fixed64 #9, unknown fixed32 #10, unknown bytes #11, offset = 2.
    let bytes = [0x10, 0x01, 0x49, 1, 2, 3, 4, 5, 6, 7, 8, 0x55, 1, 2, 3, 4, 0x5A, 0x02, 0xFF, 0xFE, 0x10, 0x02];
    assert_eq!(ChunkRequest::decode(&bytes).unwrap(), ChunkRequest { chunk_index: 0, offset: 2, length: 0 });
}

#[test]
fn shape_reads_packed_and_unpacked_interleaved() {
    // shape: packed [1, 2], unpacked -1, dtype "f", packed [300], unpacked 0.
    let mut bytes = vec![0x1A, 0x02, 0x01, 0x02, 0x18];
    bytes.extend_from_slice(&[0xFF; 9]);
    bytes.push(0x01);
    bytes.extend_from_slice(&[0x22, 0x01, b'f', 0x1A, 0x02, 0xAC, 0x02, 0x18, 0x00]);
    let tensor = TensorPayload::decode(&bytes).unwrap();
    assert_eq!(tensor.shape.len(), 5);
    assert!(tensor.shape.iter().eq([1, 2, -1, 300, 0]));
    assert_eq!(tensor.shape.iter().len(), 5);
    assert_eq!(tensor.dtype, "f");
    assert_eq!(tensor.shape, Shape::from_values(&[1, 2, -1, 300, 0]));
    // Re-encoded packed, read back the same.
    let mut buf = [0u8; 64];
    let len = encode(&tensor, &mut buf);
    assert_eq!(TensorPayload::decode(&buf[..len]).unwrap(), tensor);
    // An empty packed run adds nothing.
    assert!(TensorPayload::decode(&[0x1A, 0x00]).unwrap().shape.is_empty());
}

fn err(result: Result<impl core::fmt::Debug, crate::Error>) -> (ErrorCode, Option<u64>, Option<&'static str>) {
    let err = result.unwrap_err();
    (err.code(), err.offset(), err.field())
}

#[test]
fn malformed_input_gives_clear_errors() {
    use ErrorCode::{ProtoDecode, ProtoField};
    // Truncated varint value of a known field.
    assert_eq!(err(Chunk::decode(&[0x08, 0x80])), (ProtoDecode, Some(1), Some("Chunk.chunk_index")));
    // Truncated tag.
    assert_eq!(err(Chunk::decode(&[0x80])), (ProtoDecode, Some(0), Some("Chunk")));
    // Length past the end.
    assert_eq!(err(Chunk::decode(&[0x1A, 0x05, 1, 2])), (ProtoDecode, Some(0), Some("Chunk.data")));
    // Length past the end in an unknown field.
    assert_eq!(err(Chunk::decode(&[0x08, 0x01, 0x32, 0x7F])), (ProtoDecode, Some(2), Some("Chunk")));
    // 11-byte varint.
    let mut eleven = vec![0x10];
    eleven.extend_from_slice(&[0xFF; 10]);
    eleven.push(0x01);
    assert_eq!(err(Chunk::decode(&eleven)), (ProtoDecode, Some(1), Some("Chunk.offset")));
    // Wrong wire types for known fields.
    assert_eq!(err(Chunk::decode(&[0x0A, 0x00])), (ProtoField, Some(0), Some("Chunk.chunk_index")));
    assert_eq!(err(Chunk::decode(&[0x18, 0x01])), (ProtoField, Some(0), Some("Chunk.data")));
    assert_eq!(err(Envelope::decode(&[0x0D, 0, 0, 0, 0])), (ProtoField, Some(0), Some("Envelope.request_id")));
    assert_eq!(
        err(TensorPayload::decode(&[0x19, 0, 0, 0, 0, 0, 0, 0, 0])),
        (ProtoField, Some(0), Some("TensorPayload.shape"))
    );
    assert_eq!(err(ChunkRequest::decode(&[0x1A, 0x00])), (ProtoField, Some(0), Some("ChunkRequest.length")));
    // Invalid UTF-8 in a string: the offset is the first bad byte.
    assert_eq!(err(Chunk::decode(&[0x22, 0x03, b'a', 0xC3, 0x28])), (ProtoField, Some(3), Some("Chunk.sha256_hex")));
    assert_eq!(err(Envelope::decode(&[0x42, 0x01, 0xFF])), (ProtoField, Some(2), Some("Envelope.content_type")));
    // Bytes fields take anything.
    assert_eq!(Chunk::decode(&[0x1A, 0x01, 0xFF]).unwrap().data, &[0xFF]);
    // A truncated varint inside a packed shape: the offset of the element.
    assert_eq!(
        err(TensorPayload::decode(&[0x1A, 0x02, 0x01, 0x80])),
        (ProtoDecode, Some(3), Some("TensorPayload.shape"))
    );
    // Groups are refused even as unknown fields.
    assert_eq!(err(Envelope::decode(&[0x78, 0x00, 0x4B, 0x4C])), (ProtoDecode, Some(2), Some("Envelope")));
    // Field number 0.
    assert_eq!(err(Envelope::decode(&[0x00, 0x00])), (ProtoDecode, Some(0), Some("Envelope")));
}

#[test]
fn short_buffer_reports_the_length_needed() {
    let envelope = Envelope { model_id: "m", ..Envelope::default() };
    let e = envelope.encode_to_slice(&mut [0u8; 2]).unwrap_err();
    assert_eq!((e.code(), e.needed()), (ErrorCode::BufferTooSmall, Some(3)));
}

#[test]
fn chunk_digest_must_match_in_lower_case() {
    let hex = Sha256Digest::of(b"abc").to_hex();
    let chunk = Chunk { data: b"abc", sha256_hex: hex.as_str(), offset: 7, ..Chunk::default() };
    assert!(chunk.verify_digest().is_ok());
    let upper = hex.as_str().to_ascii_uppercase();
    let bad = Chunk { sha256_hex: &upper, ..chunk };
    assert_eq!(err(bad.verify_digest()), (ErrorCode::ChunkDigest, Some(7), Some("Chunk.sha256_hex")));
    let empty = Chunk { sha256_hex: "", ..chunk };
    assert_eq!(err(empty.verify_digest()).0, ErrorCode::ChunkDigest);
    // A negative offset is no byte offset to point at.
    let negative = Chunk { offset: -7, ..bad };
    assert_eq!(err(negative.verify_digest()), (ErrorCode::ChunkDigest, None, Some("Chunk.sha256_hex")));
}

#[test]
fn reassembler_checks_the_sequence() {
    let hex = Sha256Digest::of(b"xy").to_hex();
    let first = Chunk { chunk_index: 0, offset: 0, data: b"xy", sha256_hex: hex.as_str(), is_last: false };
    let mut identity = [0u8; 64];
    fn new(buf: &mut [u8]) -> ChunkReassembler<'_> {
        ChunkReassembler::new(StreamVerifier::new(ReadOptions::new(), buf))
    }
    // Index must start at 0.
    let mut r = new(&mut identity);
    assert_eq!(err(r.push(&Chunk { chunk_index: 1, ..first })).0, ErrorCode::ChunkSequence);
    // The error sticks.
    assert_eq!(err(r.push(&first)).0, ErrorCode::ChunkSequence);
    // Offset must follow the previous chunk.
    let mut r = new(&mut identity);
    r.push(&first).unwrap();
    assert_eq!(
        err(r.push(&Chunk { chunk_index: 1, offset: 3, ..first })),
        (ErrorCode::ChunkSequence, Some(3), Some("Chunk.offset"))
    );
    // A negative offset is no byte offset to point at.
    let mut r = new(&mut identity);
    r.push(&first).unwrap();
    assert_eq!(
        err(r.push(&Chunk { chunk_index: 1, offset: -2, ..first })),
        (ErrorCode::ChunkSequence, None, Some("Chunk.offset"))
    );
    // Nothing after is_last; no is_last at all is a cut transfer.
    let mut r = new(&mut identity);
    r.push(&Chunk { is_last: true, ..first }).unwrap();
    assert!(r.is_complete());
    let next = Chunk { chunk_index: 1, offset: 2, ..first };
    assert_eq!(err(r.push(&next)), (ErrorCode::ChunkSequence, Some(2), Some("Chunk.is_last")));
    let mut r = new(&mut identity);
    r.push(&first).unwrap();
    assert_eq!((r.next_index(), r.next_offset()), (1, 2));
    assert_eq!(err(r.finish().map(|_| ())), (ErrorCode::ChunkSequence, Some(2), Some("Chunk.is_last")));
    // With the sequence intact, the verdict is the verifier's: two bytes are too short.
    let mut r = new(&mut identity);
    r.push(&Chunk { is_last: true, ..first }).unwrap();
    assert_eq!(err(r.finish().map(|_| ())).0, ErrorCode::TooShort);
}

#[test]
fn compression_kind_names_the_three_numbers_of_spec_10_and_no_other() {
    let kind = |compression| Envelope { compression, ..Envelope::default() }.compression_kind();
    assert_eq!(kind(0), Some(Compression::None));
    assert_eq!(kind(1), Some(Compression::Zstd));
    assert_eq!(kind(2), Some(Compression::Lz4));
    for other in [-1, 3, 4, i32::MIN, i32::MAX] {
        assert_eq!(kind(other), None, "{other}");
    }
    // The discriminants are the wire numbers.
    for known in [Compression::None, Compression::Zstd, Compression::Lz4] {
        assert_eq!(kind(known as i32), Some(known));
    }
}

#[test]
fn shapes_are_equal_element_by_element_and_debug_as_a_list() {
    // The decoded shape of the test above, [1, 2, -1, 300, 0], against values.
    let mut bytes = vec![0x1A, 0x02, 0x01, 0x02, 0x18];
    bytes.extend_from_slice(&[0xFF; 9]);
    bytes.push(0x01);
    bytes.extend_from_slice(&[0x1A, 0x02, 0xAC, 0x02, 0x18, 0x00]);
    let decoded = TensorPayload::decode(&bytes).unwrap().shape;
    assert_eq!(decoded, Shape::from_values(&[1, 2, -1, 300, 0]));
    assert_ne!(decoded, Shape::from_values(&[1, 2, -1, 300, 1]), "same length, one element differs");
    assert_ne!(decoded, Shape::from_values(&[1, 2, -1, 300]), "a prefix");
    assert_ne!(Shape::from_values(&[1, 2]), Shape::from_values(&[1, 3]));
    assert_eq!(Shape::from_values(&[]), Shape::default());
    assert_eq!(std::format!("{decoded:?}"), "[1, 2, -1, 300, 0]");
    assert_eq!(std::format!("{:?}", Shape::default()), "[]");
    // Both kinds iterate by value and by reference, and know how many are left.
    for shape in [decoded, Shape::from_values(&[1, 2, -1, 300, 0])] {
        let by_ref: std::vec::Vec<i64> = (&shape).into_iter().collect();
        assert_eq!(by_ref, [1, 2, -1, 300, 0]);
        let mut iter = shape.into_iter();
        assert_eq!(iter.size_hint(), (5, Some(5)));
        iter.next();
        assert_eq!(iter.size_hint(), (4, Some(4)));
    }
}

/// Every field of `wire_v3.proto`, as `(message, field, number)`, read from the schema
/// itself so that a field added there is checked here too.
fn schema_fields() -> std::vec::Vec<(std::string::String, std::string::String, u32)> {
    let schema = include_str!("../../proto/membrane/wire/v3/wire_v3.proto");
    let (mut message, mut fields) = (None, std::vec::Vec::new());
    for line in schema.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("message ").and_then(|rest| rest.strip_suffix(" {")) {
            message = Some(name.to_string());
        } else if line == "}" {
            message = None;
        } else if let (Some(message), Some((declaration, number))) = (&message, line.split_once(" = ")) {
            let name = declaration.split_whitespace().last().unwrap().to_string();
            fields.push((message.clone(), name, number.trim_end_matches(';').parse().unwrap()));
        }
    }
    fields
}

/// A known field sent with a wire type its kind never uses (fixed32: none of the
/// schema's fields is fixed32) is `proto_field`, named `Message.field` as the schema
/// spells it, at the field's tag.
#[test]
fn a_wrong_wire_type_names_the_field_as_the_schema_does() {
    let fields = schema_fields();
    assert_eq!(fields.len(), 20, "the schema's four messages have 20 fields");
    for (message, name, number) in fields {
        // An unknown field (15 = 0) first, so the offset is the bad field's own tag.
        let mut bytes = std::vec![0x78, 0x00];
        let at = bytes.len() as u64;
        assert!(number < 16, "a one-byte tag");
        bytes.push(((number << 3) | 5) as u8);
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        type Decode = fn(&[u8]) -> (ErrorCode, Option<u64>, Option<&'static str>);
        let decode: Option<Decode> = match message.as_str() {
            "Envelope" => Some(|b| err(Envelope::decode(b))),
            "TensorPayload" => Some(|b| err(TensorPayload::decode(b))),
            "ChunkRequest" => Some(|b| err(ChunkRequest::decode(b))),
            "Chunk" => Some(|b| err(Chunk::decode(b))),
            _ => None,
        };
        assert!(decode.is_some(), "a message the decoders do not know: {message}");
        let result = decode.unwrap()(&bytes);
        let expected = std::format!("{message}.{name}");
        assert_eq!(result, (ErrorCode::ProtoField, Some(at), Some(&*expected)), "{message}.{name} = {number}");
    }
}

/// A bool is true for any non-zero varint and false for zero; the last value wins.
#[test]
fn bools_read_zero_as_false() {
    assert!(Chunk::decode(&[0x28, 0x01]).unwrap().is_last);
    assert!(Chunk::decode(&[0x28, 0x80, 0x01]).unwrap().is_last, "128 is non-zero");
    assert!(!Chunk::decode(&[0x28, 0x01, 0x28, 0x00]).unwrap().is_last);
    assert!(!Chunk::decode(&[0x28, 0x80, 0x00]).unwrap().is_last, "an overlong zero");
}

/// The reassembler's position: the index and offset the next chunk must carry, and
/// whether the last chunk has come.
#[test]
fn the_reassembler_reports_where_the_next_chunk_goes() {
    let mut identity = [0u8; 64];
    let mut r = ChunkReassembler::new(StreamVerifier::new(ReadOptions::new(), &mut identity));
    assert_eq!((r.next_index(), r.next_offset(), r.is_complete()), (0, 0, false));
    let hex = |data: &[u8]| Sha256Digest::of(data).to_hex();
    let (a, b) = (hex(b"ab"), hex(b"cde"));
    r.push(&Chunk { chunk_index: 0, offset: 0, data: b"ab", sha256_hex: a.as_str(), is_last: false }).unwrap();
    assert_eq!((r.next_index(), r.next_offset(), r.is_complete()), (1, 2, false));
    r.push(&Chunk { chunk_index: 1, offset: 2, data: b"cde", sha256_hex: b.as_str(), is_last: false }).unwrap();
    assert_eq!((r.next_index(), r.next_offset(), r.is_complete()), (2, 5, false));
    r.push(&Chunk { chunk_index: 2, offset: 5, data: b"", sha256_hex: hex(b"").as_str(), is_last: true }).unwrap();
    assert_eq!((r.next_index(), r.next_offset(), r.is_complete()), (3, 5, true));
}
