//! Differential: everything `json::Reader` accepts, serde_json accepts with the same
//! values (SPEC §4). Where serde_json accepts and we refuse, the reason must be one of
//! our deliberate extra rules (duplicate keys, depth, key-table capacity). Same
//! comparison as `tests/json_differential.rs`, on fuzzer-made texts, every string also
//! decoded within the text (`decode_within`). Also: the input taken as string content,
//! decoded in one pass and in two.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::json::{Event, JsonErrorKind, JsonStr, Limits, Reader};
use serde_json::{Map, Number, Value};

/// A string's value as `decode_into` gives it (runs between escapes copied whole),
/// checked against the character decoder, and its raw text re-read by `from_raw`.
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
    text
}

/// The one-pass `decode_raw_into` against `from_raw` then `decode_into`, on the input
/// taken as raw string content (valid or not), into room for all of it and into less.
fn raw_decoding_agrees(data: &[u8]) {
    let Ok(raw) = core::str::from_utf8(data) else { return };
    let expected = JsonStr::from_raw(raw).map(|value| {
        let mut buf = vec![0u8; value.decoded_len()];
        assert_eq!(value.decode_into(&mut buf), Ok(buf.len()));
        buf
    });
    for room in [raw.len(), raw.len() / 2] {
        let mut out = vec![0u8; room];
        let got = JsonStr::decode_raw_into(raw, &mut out);
        match &expected {
            Err(err) => assert_eq!(got, Err(*err), "{raw:?}"),
            Ok(value) if value.len() <= room => {
                assert_eq!(got, Ok(Ok(value.len())), "{raw:?}");
                assert_eq!(&out[..value.len()], &value[..], "{raw:?}");
            }
            Ok(value) => assert_eq!(got, Ok(Err(value.len())), "{raw:?}"),
        }
    }
}

fn ours(text: &[u8]) -> Result<Value, JsonErrorKind> {
    let mut reader: Reader = Reader::new(text, Limits::default());
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
                stack.last_mut().expect("key inside an object").1 = Some(decoded(&key, text));
                continue;
            }
            Event::ObjectEnd | Event::ArrayEnd => stack.pop().expect("balanced").0,
            Event::Str(s) => Value::String(decoded(&s, text)),
            Event::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Value::from(i),
                (None, Some(u)) => Value::from(u),
                _ => Value::Number(Number::from_f64(n.as_f64()).expect("accepted numbers are finite")),
            },
            Event::Bool(b) => Value::Bool(b),
            Event::Null => Value::Null,
        };
        match stack.last_mut() {
            None => root = Some(value),
            Some((Value::Array(items), _)) => items.push(value),
            Some((Value::Object(map), key)) => {
                map.insert(key.take().expect("value after a key"), value);
            }
            Some(_) => unreachable!(),
        }
    }
    Ok(root.expect("a value"))
}

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

fuzz_target!(|data: &[u8]| {
    raw_decoding_agrees(data);
    let theirs = serde_json::from_slice::<Value>(data);
    match (ours(data), theirs) {
        (Ok(mine), Ok(theirs)) => assert!(same(&mine, &theirs), "values differ: {mine} vs {theirs}"),
        (Ok(mine), Err(err)) => {
            panic!("we accept {:?} as {mine}; serde_json refuses: {err}", String::from_utf8_lossy(data))
        }
        (Err(kind), Ok(_)) => assert!(
            matches!(kind, JsonErrorKind::DuplicateKey | JsonErrorKind::DepthExceeded | JsonErrorKind::TooManyKeys),
            "we refuse {:?} ({kind:?}); serde_json accepts",
            String::from_utf8_lossy(data)
        ),
        (Err(_), Err(_)) => {}
    }
});
