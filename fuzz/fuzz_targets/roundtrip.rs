//! Writer → reader: any identity the builder accepts, with any payload, is written by
//! every writer (one buffer, head + trailer for writev, chunked) to the same bytes, and
//! the reader accepts them at the full level with the same identity and payload; written
//! aligned, it carries the fewest spaces that place the payload, and reads back the same.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use membrane_frame::{
    encode_frame, encode_frame_with, ChunkedFrameWriter, Dtype, Frame, FrameEncoder, IdentityValues, InclusiveRange,
    PayloadAlignment, ReadOptions, Sha256Digest, SliceSink, VerifyLevel, WriteOptions,
};

fn range(u: &mut Unstructured<'_>) -> Result<InclusiveRange> {
    Ok(InclusiveRange::new(u.arbitrary()?, u.arbitrary()?))
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let strings: [&str; 4] = [u.arbitrary()?, u.arbitrary()?, u.arbitrary()?, u.arbitrary()?];
    let own_hash: bool = u.arbitrary()?;
    let fuzzer_hash: &str = u.arbitrary()?;
    let (layer, head, span) = (range(u)?, range(u)?, range(u)?);
    let head = if u.arbitrary()? { InclusiveRange::ALL_HEADS } else { head };
    let dtype = *u.choose(Dtype::ALL)?;
    let dims = u.int_in_range(0..=17)?;
    let mut shape = Vec::with_capacity(dims);
    for _ in 0..dims {
        shape.push(u.arbitrary::<i64>()?);
    }
    let chunk = u.int_in_range(1..=64usize)?;
    let payload: &[u8] = u.arbitrary()?;
    let hex = Sha256Digest::of(payload).to_hex();
    let values = IdentityValues {
        payload_hash: if own_hash { hex.as_str() } else { fuzzer_hash },
        model_id: strings[0],
        model_revision: strings[1],
        tokenizer_name: strings[2],
        tokenizer_revision: strings[3],
        layer_range: layer,
        head_range: head,
        token_span: span,
        dtype,
        shape: &shape,
    };
    let Ok(identity) = values.build() else { return Ok(()) };
    let Ok(encoder) = FrameEncoder::new(&identity, payload.len() as u64) else { return Ok(()) };

    let mut one = vec![0u8; encoder.frame_len() as usize];
    let len = encode_frame(&identity, payload, &mut one).expect("frame_len is enough");
    assert_eq!(len, one.len());

    let mut head_buf = vec![0u8; encoder.head_len()];
    assert_eq!(encoder.write_head_into(&mut head_buf).expect("head_len is enough"), head_buf.len());
    let writev = [head_buf.as_slice(), payload, &Sha256Digest::of(payload).trailer()].concat();
    assert_eq!(writev, one);

    let mut chunked = vec![0u8; one.len()];
    let mut writer =
        ChunkedFrameWriter::begin(&identity, payload.len() as u64, SliceSink::new(&mut chunked)).expect("chunked head");
    for part in payload.chunks(chunk) {
        writer.write_payload(part).expect("chunk");
    }
    let (outcome, _) = writer.finish().expect("chunked finish");
    assert_eq!(outcome.payload_hash_matches, values.payload_hash == hex.as_str());
    assert_eq!(chunked, one);

    let full = Frame::parse_with(&one, &ReadOptions::new().level(VerifyLevel::Full)).map(|(frame, _)| frame);
    let trailer = Frame::parse(&one).expect("the writer's frame is read back");
    if values.payload_hash == hex.as_str() {
        let full = full.expect("a frame with its own payload_hash passes the full level");
        assert_eq!((full.identity(), full.payload()), (trailer.identity(), trailer.payload()));
    } else {
        assert_eq!(full.map_err(|e| e.code()).err(), Some(membrane_frame::ErrorCode::PayloadHashMismatch));
    }
    assert_eq!(trailer.payload(), payload);
    let read = trailer.identity().expect("identity at trailer level");
    assert!(read.is_canonical());
    assert_eq!(read.fingerprint(), identity.fingerprint());
    assert_eq!(read.shape(), identity.shape());
    assert_eq!((read.layer_range(), read.head_range(), read.token_span()), (layer, head, span));
    assert!(read.model_id().eq_str(strings[0]) && read.tokenizer_revision().eq_str(strings[3]));

    // Aligned (SPEC §1.5): the payload where asked, with the fewest spaces; without them
    // the frame above; read back canonical, its padding reported, the same fingerprint.
    let alignment = PayloadAlignment::new(1 << u.int_in_range(0..=12u32)?, u.arbitrary()?).expect("a power of two");
    let options = WriteOptions::new().aligned(alignment);
    let Ok(aligned_encoder) = FrameEncoder::with_options(&identity, payload.len() as u64, &options) else {
        return Ok(());
    };
    let mut aligned = vec![0u8; aligned_encoder.frame_len() as usize];
    assert_eq!(encode_frame_with(&identity, payload, &mut aligned, &options), Ok(aligned.len()));
    let padding = aligned.len() - one.len();
    let offset = aligned_encoder.payload_offset() as u64;
    assert_eq!(alignment.base().wrapping_add(offset) % u64::from(alignment.align()), 0);
    assert!(padding < alignment.align() as usize);
    let canonical_end = encoder.head_len() - 8;
    assert_eq!(aligned[canonical_end..][..padding], vec![b' '; padding][..]);
    assert_eq!(aligned[..10], one[..10]);
    assert_eq!(aligned[14..canonical_end], one[14..canonical_end]);
    assert_eq!(aligned[canonical_end + padding..], one[canonical_end..]);
    let read = Frame::parse(&aligned).expect("an aligned frame is read back");
    let identity_read = read.identity().expect("identity at trailer level");
    assert!(identity_read.is_canonical());
    assert_eq!((read.padding(), read.payload_offset() as u64), (padding, offset));
    assert_eq!(identity_read.fingerprint(), identity.fingerprint());
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
