//! Differential test of the strict JSON reader against serde_json (issue acceptance 3):
//! on generated texts, valid and near-valid, everything our reader accepts serde_json
//! accepts with the same values; and where serde_json accepts but we refuse, the reason
//! is one of our deliberate extra rules (duplicate keys, depth, key-table capacity).

use membrane_frame::json::{Event, JsonErrorKind, JsonStr, Limits, Reader};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// Our reader's view of a text, as a serde_json value.
/// A string's value as `decode_into` gives it (runs between escapes copied whole),
/// checked against the character decoder, its raw text re-read by `from_raw`, and
/// decoded again by the one-pass `decode_raw_into` (into room for the raw text) and by
/// `decode_within` the document it was read from (with room past the value).
fn decoded(s: &JsonStr<'_>, document: &[u8]) -> String {
    let mut buf = vec![0u8; s.decoded_len()];
    assert_eq!(s.decode_into(&mut buf), Ok(buf.len()));
    let text = String::from_utf8(buf).expect("decoded text is UTF-8");
    assert_eq!(text, s.chars().collect::<String>());
    let again = JsonStr::from_raw(s.raw()).expect("a string the reader accepted re-reads");
    assert_eq!(again.has_escapes(), s.has_escapes());
    let mut within = vec![0u8; text.len() + 16];
    assert_eq!(s.decode_within(document, &mut within), Ok(text.len()));
    assert_eq!(&within[..text.len()], text.as_bytes());
    if s.has_escapes() {
        let mut room = vec![0u8; s.raw().len()];
        assert_eq!(JsonStr::decode_raw_into(s.raw(), &mut room), Ok(Ok(text.len())));
        assert_eq!(&room[..text.len()], text.as_bytes());
    }
    text
}

fn ours(text: &[u8]) -> Result<Value, JsonErrorKind> {
    let mut reader: Reader = Reader::new(text, Limits::default());
    // A stack of open containers, each with the key its value is waiting for.
    let mut stack: Vec<(Value, Option<String>)> = Vec::new();
    let mut root = None;
    while let Some(event) = reader.next_event().map_err(|e| e.kind)? {
        let value = match event {
            Event::ObjectStart => {
                stack.push((Value::Object(Map::new()), None));
                continue;
            }
            Event::ArrayStart => {
                stack.push((Value::Array(Vec::new()), None));
                continue;
            }
            Event::Key(key) => {
                stack.last_mut().unwrap().1 = Some(decoded(&key, text));
                continue;
            }
            Event::ObjectEnd | Event::ArrayEnd => stack.pop().unwrap().0,
            Event::Str(s) => Value::String(decoded(&s, text)),
            Event::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Value::from(i),
                (None, Some(u)) => Value::from(u),
                _ => Value::Number(Number::from_f64(n.as_f64()).unwrap()),
            },
            Event::Bool(b) => Value::Bool(b),
            Event::Null => Value::Null,
        };
        match stack.last_mut() {
            None => root = Some(value),
            Some((Value::Array(items), _)) => items.push(value),
            Some((Value::Object(map), key)) => {
                map.insert(key.take().unwrap(), value);
            }
            Some(_) => unreachable!(),
        }
    }
    Ok(root.unwrap())
}

/// serde_json's `-0` is an integer 0 or a float -0.0 depending on version; compare
/// numbers by value so that difference alone does not count.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64() == y.as_f64() && x.as_f64().is_some_and(|v| v == 0.0))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A generated JSON text: values with random whitespace and spellings.
fn json_text() -> impl Strategy<Value = String> {
    let ws = proptest::sample::select(vec!["", "", " ", "\n", "\t", "\r\n  "]);
    let number = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:e}")),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:?}")),
        "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?",
    ];
    let string = prop_oneof![
        "[a-z]{0,6}",
        any::<String>().prop_map(|s| {
            let quoted = serde_json::to_string(&s).unwrap();
            quoted[1..quoted.len() - 1].to_string()
        }),
        proptest::collection::vec(
            prop_oneof![
                Just("\\n".to_string()),
                Just("\\/".to_string()),
                Just("\\u00e9".to_string()),
                Just("\\uD83D\\uDE00".to_string()),
                Just("\\u0061".to_string()),
                Just("a".to_string()),
                Just("é".to_string()),
            ],
            0..5
        )
        .prop_map(|parts| parts.concat()),
    ]
    .prop_map(|s| format!("\"{s}\""));
    let leaf = prop_oneof![
        number,
        string.clone(),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("null".to_string())
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            (proptest::collection::vec(inner.clone(), 0..6), ws.clone())
                .prop_map(|(items, w)| format!("[{w}{}{w}]", items.join(&format!("{w},{w}")))),
            (proptest::collection::vec(("[a-d]{1,2}", inner), 0..6), ws.clone()).prop_map(|(members, w)| {
                let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\"{w}:{w}{v}")).collect();
                format!("{{{w}{}{w}}}", body.join(","))
            }),
        ]
    })
}

/// A near-valid text: one edit of a valid one, biased towards JSON's sharp edges.
fn mutated_text() -> impl Strategy<Value = Vec<u8>> {
    let tricky = proptest::sample::select(vec![
        b',', b'}', b']', b'{', b'[', b'"', b'\\', b'0', b'-', b'.', b'e', b'+', b':', b' ', 0x01, 0x7F, 0x80, 0xC0,
        0xED, 0xFF, b'N', b'/', b'u', b'x',
    ]);
    (json_text(), any::<prop::sample::Index>(), tricky, 0..3u8).prop_map(|(text, at, byte, op)| {
        let mut bytes = text.into_bytes();
        let i = at.index(bytes.len() + 1);
        match op {
            0 => bytes.insert(i, byte),
            1 if i < bytes.len() => {
                bytes.remove(i);
            }
            _ if i < bytes.len() => bytes[i] = byte,
            _ => bytes.push(byte),
        }
        bytes
    })
}

fn check(text: &[u8]) -> Result<(), TestCaseError> {
    let theirs = serde_json::from_slice::<Value>(text);
    match (ours(text), theirs) {
        (Ok(mine), Ok(theirs)) => {
            prop_assert!(same(&mine, &theirs), "values differ: {mine} vs {theirs}")
        }
        (Ok(mine), Err(err)) => {
            return Err(TestCaseError::fail(format!(
                "we accept {:?} as {mine}; serde_json refuses: {err}",
                String::from_utf8_lossy(text)
            )))
        }
        (Err(kind), Ok(_)) => prop_assert!(
            matches!(kind, JsonErrorKind::DuplicateKey | JsonErrorKind::DepthExceeded | JsonErrorKind::TooManyKeys),
            "we refuse {:?} ({kind:?}); serde_json accepts",
            String::from_utf8_lossy(text)
        ),
        (Err(_), Err(_)) => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn valid_texts_read_the_same(text in json_text()) {
        // The generator only writes valid JSON, so serde_json must take all of it.
        prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "generator wrote invalid JSON: {text}");
        check(text.as_bytes())?;
    }

    #[test]
    fn near_valid_texts_never_accepted_by_us_alone(text in mutated_text()) {
        check(&text)?;
    }

    #[test]
    fn arbitrary_bytes_never_accepted_by_us_alone(text in proptest::collection::vec(any::<u8>(), 0..64)) {
        check(&text)?;
    }
}

#[test]
fn hand_picked_edges_agree() {
    for text in [
        "1e999",
        "-1e999",
        "1E400",
        "[1.7976931348623157e308]",
        "5e-324",
        "1e-400",
        "-0",
        "-0.0",
        "0e0",
        "123456789012345678901234567890",
        "\"\\ud800\"",
        "\"\\udc00\\ud800\"",
        "\"\u{7f}\"",
        "[\"\\u0000\"]",
        "{\"\":1}",
        "[[[]]]",
        "\u{feff}1",
        "1 2",
        " ",
        "",
    ] {
        check(text.as_bytes()).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
}
