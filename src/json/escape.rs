//! Writing strings the way Python's `json.dumps` does with `ensure_ascii=True` (SPEC §2.3).

use super::string::JsonStr;
use crate::sink::{write_erased, ByteSink, ErasedSink, Stopped};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether a byte can be copied to the output as it is: printable ASCII other than
/// `"` and `\`.
#[inline(always)]
fn copies_verbatim(b: u8) -> bool {
    (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\'
}

/// Write `value` as a quoted, pure-ASCII JSON string: `\" \\ \n \r \t \b \f` as
/// two-character escapes, other code points below 0x20 and 0x7F as `\u00xx`, every
/// code point above 0x7F as `\uxxxx` in lower-case hex (astral ones as a surrogate
/// pair). `/` is not escaped.
///
/// ```
/// use membrane_frame::json::{write_escaped, JsonStr};
/// let mut out = [0u8; 32];
/// let mut sink = membrane_frame::SliceSink::new(&mut out);
/// write_escaped(&mut sink, &JsonStr::from_plain("è\"/\n")).unwrap();
/// assert_eq!(sink.written(), br#""\u00e8\"/\n""#);
/// ```
pub fn write_escaped<S: ByteSink + ?Sized>(sink: &mut S, value: &JsonStr<'_>) -> Result<(), S::Error> {
    write_erased(sink, |sink| escape(sink, value))
}

/// [`write_escaped`] compiled once for every sink type (see [`write_erased`]).
#[inline(never)]
pub(crate) fn escape(sink: &mut ErasedSink<'_>, value: &JsonStr<'_>) -> Result<(), Stopped> {
    sink.write_bytes(b"\"")?;
    match value.as_str() {
        Some(plain) => write_plain(sink, plain)?,
        None => {
            for ch in value.chars() {
                write_char(sink, ch)?;
            }
        }
    }
    sink.write_bytes(b"\"")
}

/// Copy runs of verbatim bytes in one call each; escape what lies between them.
fn write_plain(sink: &mut ErasedSink<'_>, text: &str) -> Result<(), Stopped> {
    let mut rest = text;
    while !rest.is_empty() {
        let run = rest.bytes().position(|b| !copies_verbatim(b)).unwrap_or(rest.len());
        let (verbatim, tail) = rest.split_at_checked(run).unwrap_or((rest, ""));
        if !verbatim.is_empty() {
            sink.write_bytes(verbatim.as_bytes())?;
        }
        let mut chars = tail.chars();
        if let Some(ch) = chars.next() {
            write_char(sink, ch)?;
        }
        rest = chars.as_str();
    }
    Ok(())
}

fn write_char(sink: &mut ErasedSink<'_>, ch: char) -> Result<(), Stopped> {
    let two = |c: u8| [b'\\', c];
    match ch {
        '"' => sink.write_bytes(&two(b'"')),
        '\\' => sink.write_bytes(&two(b'\\')),
        '\n' => sink.write_bytes(&two(b'n')),
        '\r' => sink.write_bytes(&two(b'r')),
        '\t' => sink.write_bytes(&two(b't')),
        '\u{8}' => sink.write_bytes(&two(b'b')),
        '\u{c}' => sink.write_bytes(&two(b'f')),
        c if copies_verbatim_char(c) => sink.write_bytes(&[c as u8]),
        c => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                sink.write_bytes(&unicode_escape(*unit))?;
            }
            Ok(())
        }
    }
}

fn copies_verbatim_char(c: char) -> bool {
    u8::try_from(c).is_ok_and(copies_verbatim)
}

fn unicode_escape(unit: u16) -> [u8; 6] {
    let nibble = |shift: u16| HEX.get(usize::from((unit >> shift) & 0xF)).copied().unwrap_or(b'0');
    [b'\\', b'u', nibble(12), nibble(8), nibble(4), nibble(0)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    fn escaped(value: JsonStr<'_>) -> std::string::String {
        let mut out = [0u8; 128];
        let mut sink = SliceSink::new(&mut out);
        write_escaped(&mut sink, &value).unwrap();
        std::string::String::from_utf8(sink.written().to_vec()).unwrap()
    }

    #[test]
    fn matches_python_ensure_ascii() {
        let input = "a\"\\/\n\r\t\u{8}\u{c}\u{1}\u{7f}é☃😀";
        let expected = r#""a\"\\/\n\r\t\b\f\u0001\u007f\u00e9\u2603\ud83d\ude00""#;
        assert_eq!(escaped(JsonStr::from_plain(input)), expected);
    }

    #[test]
    fn escaped_input_is_decoded_then_re_escaped() {
        let value = JsonStr::from_validated("\\u006c\\/x\\u00E8", true);
        assert_eq!(escaped(value), r#""l/x\u00e8""#);
    }
}
