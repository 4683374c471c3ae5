//! Reading JSON-lines files one line at a time with a cap on the line length, so a
//! file without newlines cannot make the tool allocate its whole size.

use std::io::{self, BufRead, Read};

/// Longest line kept in memory; longer lines are reported, not read.
pub const MAX_LINE: u64 = 16 << 20;

/// One line as read: its content (without the terminator) and the terminator itself
/// (`"\n"`, `"\r\n"` or nothing at the end of the file), kept so rewrites preserve it.
#[derive(Debug, Default)]
pub struct Line {
    pub content: Vec<u8>,
    pub terminator: &'static [u8],
    /// The line was longer than [`MAX_LINE`]; `content` holds only its start.
    pub too_long: bool,
}

impl Line {
    /// Blank: nothing but JSON whitespace.
    pub fn is_blank(&self) -> bool {
        self.content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    }
}

/// The next line, or `None` at the end of the input.
pub fn next_line(reader: &mut impl BufRead) -> io::Result<Option<Line>> {
    let mut content = Vec::new();
    let read = reader.by_ref().take(MAX_LINE + 1).read_until(b'\n', &mut content)?;
    if read == 0 {
        return Ok(None);
    }
    let mut too_long = false;
    if content.last() != Some(&b'\n') && content.len() as u64 > MAX_LINE {
        too_long = true;
        content.truncate(MAX_LINE as usize);
        // Skip the rest of the line without keeping it.
        loop {
            let buf = reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    reader.consume(at + 1);
                    break;
                }
                None => {
                    let n = buf.len();
                    reader.consume(n);
                }
            }
        }
        return Ok(Some(Line { content, terminator: b"\n", too_long }));
    }
    let terminator: &'static [u8] = if content.ends_with(b"\r\n") {
        b"\r\n"
    } else if content.ends_with(b"\n") {
        b"\n"
    } else {
        b""
    };
    content.truncate(content.len() - terminator.len());
    Ok(Some(Line { content, terminator, too_long }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminators_are_kept_apart_from_the_content() {
        let mut input = io::Cursor::new(b"a\nb\r\n\nc".to_vec());
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut input).unwrap() {
            lines.push((line.content, line.terminator));
        }
        let expected: Vec<(Vec<u8>, &[u8])> =
            vec![(b"a".to_vec(), b"\n"), (b"b".to_vec(), b"\r\n"), (b"".to_vec(), b"\n"), (b"c".to_vec(), b"")];
        assert_eq!(lines, expected);
    }
}
