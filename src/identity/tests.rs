//! Unit tests of identity parsing rules and error reporting.

use super::*;
use crate::ErrorCode;
use std::format;
use std::string::String;

const BASE: &str = r#""payload_hash":"x","model_id":"m","model_revision":"","tokenizer_name":"t","tokenizer_revision":"","layer_range":[0,1],"head_range":[-1,-1],"token_span":[0,7],"dtype":"int8","shape":[1]"#;

fn with(replace: &str, by: &str) -> String {
    assert!(BASE.contains(replace), "{replace}");
    format!("{{{}}}", BASE.replacen(replace, by, 1))
}

fn problem(text: &str) -> (ErrorCode, Option<&'static str>) {
    let err = PayloadIdentity::parse(text.as_bytes()).unwrap_err();
    (err.code(), err.field())
}

/// The values the builder tests start from (every rule met).
fn values() -> IdentityValues<'static> {
    IdentityValues {
        payload_hash: "x",
        model_id: "m",
        model_revision: "",
        tokenizer_name: "t",
        tokenizer_revision: "",
        layer_range: InclusiveRange::new(0, 1),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, 7),
        dtype: Dtype::Int8,
        shape: &[1],
    }
}

#[test]
fn base_identity_is_valid() {
    let text = format!("{{{BASE}}}");
    let identity = PayloadIdentity::parse(text.as_bytes()).unwrap();
    assert_eq!(identity.shape(), &[1]);
    assert_eq!(identity.tensor_bytes(), Some(1));
}

#[test]
fn field_rules() {
    use ErrorCode::IdentityField as F;
    assert_eq!(problem(&with(r#""layer_range":[0,1]"#, r#""layer_range":[2,1]"#)), (F, Some("layer_range")));
    assert_eq!(problem(&with(r#""layer_range":[0,1]"#, r#""layer_range":[-1,1]"#)), (F, Some("layer_range")));
    assert_eq!(problem(&with(r#""layer_range":[0,1]"#, r#""layer_range":[0,1,2]"#)), (F, Some("layer_range")));
    assert_eq!(problem(&with(r#""layer_range":[0,1]"#, r#""layer_range":[0]"#)), (F, Some("layer_range")));
    assert_eq!(problem(&with(r#""layer_range":[0,1]"#, r#""layer_range":[0,1.0]"#)), (F, Some("layer_range")));
    assert_eq!(problem(&with(r#""head_range":[-1,-1]"#, r#""head_range":[-1,3]"#)), (F, Some("head_range")));
    assert_eq!(
        problem(&with(r#""token_span":[0,7]"#, r#""token_span":[0,9223372036854775808]"#)),
        (F, Some("token_span"))
    );
    assert_eq!(problem(&with(r#""dtype":"int8""#, r#""dtype":"INT8""#)), (F, Some("dtype")));
    assert_eq!(problem(&with(r#""dtype":"int8""#, r#""dtype":null"#)), (F, Some("dtype")));
    assert_eq!(problem(&with(r#""shape":[1]"#, r#""shape":[]"#)), (F, Some("shape")));
    assert_eq!(problem(&with(r#""shape":[1]"#, &format!(r#""shape":[{}1]"#, "1,".repeat(16)))), (F, Some("shape")));
    assert_eq!(problem(&with(r#""payload_hash":"x""#, r#""payload_hash":"""#)), (F, Some("payload_hash")));
    assert_eq!(problem(&with(r#""model_id":"m""#, r#""model_id":7"#)), (F, Some("model_id")));
    assert_eq!(problem(&with(r#""model_id":"m""#, r#""extra":1,"model_id":"m""#)), (F, None));
    assert_eq!(problem(&with(r#""model_id":"m","#, "")), (F, Some("model_id")));
}

/// An integer array's error says what is wrong with it, whichever field it is.
#[test]
fn integer_array_errors_name_the_problem() {
    let reason = |from: &str, to: &str| PayloadIdentity::parse(with(from, to).as_bytes()).unwrap_err().reason();
    assert_eq!(reason(r#""shape":[1]"#, r#""shape":{"a":1}"#), "expected an array of integers");
    assert_eq!(reason(r#""layer_range":[0,1]"#, r#""layer_range":[0,1.5]"#), "element is not an integer");
    assert_eq!(reason(r#""layer_range":[0,1]"#, r#""layer_range":[0,1.0]"#), "element is not an integer");
    assert_eq!(reason(r#""shape":[1]"#, r#""shape":[1,"2"]"#), "element is not an integer");
    assert_eq!(
        reason(r#""token_span":[0,7]"#, r#""token_span":[0,9223372036854775808]"#),
        "integer outside the signed 64-bit range"
    );
    assert_eq!(reason(r#""shape":[1]"#, &format!(r#""shape":[{}1]"#, "1,".repeat(16))), "more than 16 dimensions");
}

#[test]
fn json_problems_win_over_field_problems() {
    let text = with(r#""dtype":"int8""#, r#""dtype":"bad","x":{"a":1,"a":2}"#);
    assert_eq!(problem(&text).0, ErrorCode::IdentityJson);
    assert_eq!(problem("[1]").0, ErrorCode::IdentityJson);
    assert_eq!(problem("").0, ErrorCode::IdentityJson);
}

#[test]
fn field_errors_point_at_the_value() {
    let text = with(r#""dtype":"int8""#, r#""dtype":"f16""#);
    let err = PayloadIdentity::parse(text.as_bytes()).unwrap_err();
    assert_eq!(err.offset(), Some(text.find("\"f16\"").unwrap() as u64));
}

#[test]
fn escaped_keys_and_values_are_accepted_and_canonicalised() {
    let text = with(r#""dtype":"int8""#, r#""\u0064type":"int\u0038""#);
    let identity = PayloadIdentity::parse(text.as_bytes()).unwrap();
    assert_eq!(identity.dtype(), Dtype::Int8);
    assert!(!identity.is_canonical());
}

#[test]
fn built_identities_validate_their_values() {
    let values = values();
    assert!(values.build().unwrap().is_canonical());
    assert!(IdentityValues { payload_hash: "", ..values }.build().is_err());
    assert!(IdentityValues { layer_range: InclusiveRange::new(3, 2), ..values }.build().is_err());
    assert!(IdentityValues { head_range: InclusiveRange::new(-1, 0), ..values }.build().is_err());
    assert!(IdentityValues { shape: &[], ..values }.build().is_err());
    assert!(IdentityValues { shape: &[1; 17], ..values }.build().is_err());
}

#[test]
#[cfg(feature = "fast-identity")]
fn canonical_spelling_is_recognised_at_parse_time_only_when_exact() {
    let canonical = r#"{"dtype":"int8","head_range":[-1,-1],"layer_range":[0,1],"model_id":"m","model_revision":"","payload_hash":"x","shape":[1],"token_span":[0,7],"tokenizer_name":"t","tokenizer_revision":""}"#;
    let identity = PayloadIdentity::parse(canonical.as_bytes()).unwrap();
    assert!(identity.source_is_canonical && identity.is_canonical());
    // Spellings the fast reader takes but that are not the canonical bytes.
    for (from, to) in [(r#""m""#, r#""\u006d""#), (r#""m""#, "\"m\u{e9}\""), ("[1]", "[-0]"), (r#""t""#, "\"t\u{7f}\"")]
    {
        let text = canonical.replacen(from, to, 1);
        let identity = PayloadIdentity::parse(text.as_bytes()).unwrap();
        assert!(!identity.source_is_canonical, "{text}");
        assert!(!identity.is_canonical(), "{text}");
        let mut out = std::vec![0u8; identity.canonical_len()];
        identity.write_canonical_into(&mut out).unwrap();
        assert_eq!(identity.fingerprint(), crate::Sha256Digest::of(&out), "{text}");
    }
    // Canonical escapes are canonical, found by comparison rather than at parse time.
    let escaped = canonical.replacen(r#""m""#, r#""\u00e9\"""#, 1);
    let identity = PayloadIdentity::parse(escaped.as_bytes()).unwrap();
    assert!(!identity.source_is_canonical && identity.is_canonical());
}

#[test]
fn is_ordered_non_negative_is_what_layer_range_and_token_span_accept() {
    let bounds = [i64::MIN, -2, -1, 0, 1, 2, 31, i64::MAX];
    let mut accepted = 0;
    for start in bounds {
        for end in bounds {
            let range = InclusiveRange::new(start, end);
            let expected = 0 <= start && start <= end;
            assert_eq!(range.is_ordered_non_negative(), expected, "[{start}, {end}]");
            assert_eq!(rules::check_range("token_span", range).is_ok(), expected, "[{start}, {end}]");
            accepted += usize::from(expected);
        }
    }
    // A one-element range is ordered; the all-heads marker is not a layer range.
    assert!(InclusiveRange::new(0, 0).is_ordered_non_negative());
    assert!(!InclusiveRange::ALL_HEADS.is_ordered_non_negative());
    assert_eq!(accepted, 15);
}

#[test]
fn identities_are_equal_exactly_when_every_field_and_the_source_are() {
    let values = values();
    let built = values.build().unwrap();
    assert_eq!(built, values.build().unwrap());
    // A change to any one field makes built identities differ.
    let changed = [
        ("payload_hash", IdentityValues { payload_hash: "y", ..values }),
        ("model_id", IdentityValues { model_id: "n", ..values }),
        ("model_revision", IdentityValues { model_revision: "r", ..values }),
        ("tokenizer_name", IdentityValues { tokenizer_name: "u", ..values }),
        ("tokenizer_revision", IdentityValues { tokenizer_revision: "r", ..values }),
        ("layer_range", IdentityValues { layer_range: InclusiveRange::new(0, 2), ..values }),
        ("head_range", IdentityValues { head_range: InclusiveRange::new(0, 2), ..values }),
        ("token_span", IdentityValues { token_span: InclusiveRange::new(1, 7), ..values }),
        ("dtype", IdentityValues { dtype: Dtype::Float16, ..values }),
        ("shape", IdentityValues { shape: &[2], ..values }),
    ];
    for (field, other) in changed {
        assert_ne!(built, other.build().unwrap(), "{field}");
    }
    // Parsed: the same text is equal; the same values in another text (here one more
    // byte after the object, so every field and the hash's offset are the same) are not,
    // and neither is the built identity, which has no text.
    let mut text = [0u8; 256];
    let len = built.write_canonical_into(&mut text).unwrap();
    text[len] = b' ';
    let parsed = PayloadIdentity::parse(&text[..len]).unwrap();
    assert_eq!(parsed, PayloadIdentity::parse(&text[..len]).unwrap());
    let spaced = PayloadIdentity::parse(&text[..len + 1]).unwrap();
    assert_eq!(spaced.payload_hash_offset(), parsed.payload_hash_offset());
    assert_ne!(parsed, spaced);
    assert_ne!(parsed, built);
    assert_eq!((parsed.source(), spaced.source(), built.source()), (Some(&text[..len]), Some(&text[..len + 1]), None));
}

#[test]
fn dtypes_display_as_their_spec_names() {
    for dtype in Dtype::ALL.iter().copied() {
        assert_eq!(std::format!("{dtype}"), dtype.name());
        assert_eq!(Dtype::from_name(&std::format!("{dtype}")), Some(dtype));
    }
    assert_eq!(std::format!("{}", Dtype::Float16), "float16");
}

#[test]
fn a_head_range_with_one_negative_bound_is_refused_as_not_all_heads() {
    for (start, end) in [(-1, 5), (3, -1), (-2, -2), (-1, 0)] {
        let err = rules::check_head_range(InclusiveRange::new(start, end)).unwrap_err();
        assert_eq!((err.field(), err.reason()), (Some("head_range"), "head_range must be [-1, -1] or non-negative"));
    }
    assert!(rules::check_head_range(InclusiveRange::ALL_HEADS).is_ok());
    assert!(rules::check_head_range(InclusiveRange::new(0, 0)).is_ok());
    let err = rules::check_head_range(InclusiveRange::new(2, 1)).unwrap_err();
    assert_eq!(err.reason(), "range start is after its end");
}

#[test]
fn tensor_bytes_is_the_element_count_times_the_dtype_bits_rounded_up_to_bytes() {
    let values = values();
    let bytes = |dtype, shape: &[i64]| IdentityValues { dtype, shape, ..values }.build().unwrap().tensor_bytes();
    assert_eq!(bytes(Dtype::Float16, &[1, 32, 8, 128, 64]), Some(2 * 32 * 8 * 128 * 64));
    assert_eq!(bytes(Dtype::Int8, &[2, 3]), Some(6));
    assert_eq!(bytes(Dtype::Float64, &[5]), Some(40));
    assert_eq!(bytes(Dtype::Nf4, &[3]), Some(2), "12 bits round up to 2 bytes");
    assert_eq!(bytes(Dtype::Nf4, &[4]), Some(2));
    assert_eq!(bytes(Dtype::Float32, &[7, 0]), Some(0));
    assert_eq!(bytes(Dtype::Int8, &[2, -1]), None, "a negative dimension");
    assert_eq!(bytes(Dtype::Int8, &[1 << 32, 1 << 32]), None, "the element count overflows");
    assert_eq!(bytes(Dtype::Int64, &[1 << 60]), None, "the bit count overflows");
    assert_eq!(bytes(Dtype::Int8, &[1 << 61]), None, "2^61 bytes are 2^64 bits");
    assert_eq!(bytes(Dtype::Int8, &[1 << 60]), Some(1 << 60));
}

#[test]
fn differing_fields_compares_decoded_values_and_only_the_fields_asked() {
    let (plain_text, spelled_text) = (
        with(r#""model_id":"m""#, r#""model_id":"caf\u00e9""#),
        with(r#""model_id":"m""#, r#""model_id":"c\u0061f\u00E9""#),
    );
    let plain = PayloadIdentity::parse(plain_text.as_bytes()).unwrap();
    let spelled = PayloadIdentity::parse(spelled_text.as_bytes()).unwrap();
    assert_eq!(plain.differing_fields(&spelled, FieldSet::ALL), FieldSet::NONE, "two spellings of one value agree");

    let other_text = with(
        r#""token_span":[0,7],"dtype":"int8","shape":[1]"#,
        r#""token_span":[8,15],"dtype":"uint8","shape":[1,1]"#,
    );
    let other = PayloadIdentity::parse(other_text.as_bytes()).unwrap();
    let base_text = with("", "");
    let base = PayloadIdentity::parse(base_text.as_bytes()).unwrap();
    let all = base.differing_fields(&other, FieldSet::ALL);
    assert_eq!(all, FieldSet::TOKEN_SPAN | FieldSet::DTYPE | FieldSet::SHAPE);
    assert_eq!(all.first_name(), Some("token_span"));
    assert_eq!(base.differing_fields(&other, FieldSet::MODEL), FieldSet::DTYPE, "only the fields asked about");
    assert_eq!(base.differing_fields(&other, FieldSet::NONE), FieldSet::NONE);
    assert_eq!(base.differing_fields(&plain, FieldSet::MODEL_ID), FieldSet::MODEL_ID);
    // Each field on its own: a difference in one field is reported as that field only.
    for (index, name) in FIELD_NAMES.iter().enumerate() {
        let field = FieldSet::from_bits(1 << index).unwrap();
        assert_eq!(field.first_name(), Some(*name));
        assert_eq!(base.differing_fields(&base, field), FieldSet::NONE, "{name}");
    }
    assert_eq!(FieldSet::from_bits(FieldSet::ALL.bits() + 1), None);
    assert_eq!(FieldSet::NONE.first_name(), None);
}

#[test]
fn each_field_set_constant_is_its_field_and_model_is_the_model_fields() {
    let named = [
        (FieldSet::PAYLOAD_HASH, "payload_hash"),
        (FieldSet::MODEL_ID, "model_id"),
        (FieldSet::MODEL_REVISION, "model_revision"),
        (FieldSet::TOKENIZER_NAME, "tokenizer_name"),
        (FieldSet::TOKENIZER_REVISION, "tokenizer_revision"),
        (FieldSet::LAYER_RANGE, "layer_range"),
        (FieldSet::HEAD_RANGE, "head_range"),
        (FieldSet::TOKEN_SPAN, "token_span"),
        (FieldSet::DTYPE, "dtype"),
        (FieldSet::SHAPE, "shape"),
    ];
    let mut union = FieldSet::NONE;
    for (set, name) in named {
        assert_eq!(set.bits().count_ones(), 1, "{name} is one field");
        assert_eq!(set.first_name(), Some(name));
        union = union | set;
    }
    assert_eq!(union, FieldSet::ALL);
    assert!(FieldSet::NONE.is_empty() && !FieldSet::SHAPE.is_empty() && !FieldSet::ALL.is_empty());
    assert_eq!(FieldSet::MODEL | FieldSet::DTYPE, FieldSet::MODEL, "a union, not a toggle");
    let names_of = |set: FieldSet| -> std::vec::Vec<&str> {
        named.iter().filter(|(field, _)| set.contains(*field)).map(|(_, name)| *name).collect()
    };
    assert_eq!(
        names_of(FieldSet::MODEL),
        ["model_id", "model_revision", "tokenizer_name", "tokenizer_revision", "dtype"]
    );
}

#[test]
fn each_field_index_names_its_field() {
    use super::field::*;
    let named = [
        (PAYLOAD_HASH, "payload_hash"),
        (MODEL_ID, "model_id"),
        (MODEL_REVISION, "model_revision"),
        (TOKENIZER_NAME, "tokenizer_name"),
        (TOKENIZER_REVISION, "tokenizer_revision"),
        (LAYER_RANGE, "layer_range"),
        (HEAD_RANGE, "head_range"),
        (TOKEN_SPAN, "token_span"),
        (DTYPE, "dtype"),
        (SHAPE, "shape"),
    ];
    assert_eq!(named.len(), FIELD_NAMES.len());
    for (index, name) in named {
        assert_eq!(FIELD_NAMES[index], name);
    }
}
