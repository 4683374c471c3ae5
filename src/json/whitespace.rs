//! Skipping JSON whitespace (space, tab, LF, CR) eight bytes a step.
//!
//! Pretty-printed text has a run of whitespace before nearly every token (`": "`, a
//! newline and its indent), mostly 1 to 7 bytes long. A byte loop ends each run with a
//! branch on the data, taken after a different count each time; here the length of a
//! run shorter than eight bytes comes from one word's arithmetic (SWAR), with no branch
//! on where it ends. Safe code (the bytes are read with `first_chunk`), so no SIMD kernel is needed.

const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Each byte of `word` with its high bit set where that byte is not `byte`, and clear
/// where it is: `(x & 0x7F) + 0x7F` carries into bit 7 exactly when the low seven bits
/// of `x = word ^ byte` are not all zero, and never into the next byte.
#[inline(always)]
const fn differs_from(word: u64, byte: u8) -> u64 {
    let x = word ^ (byte as u64 * 0x0101_0101_0101_0101);
    ((x & LOW7) + LOW7) | x
}

/// The number of whitespace bytes that start `word` (its bytes in text order), 0 to 8.
#[inline(always)]
const fn leading_whitespace(word: [u8; 8]) -> u32 {
    let word = u64::from_le_bytes(word);
    let not_whitespace = differs_from(word, b' ')
        & differs_from(word, b'\n')
        & differs_from(word, b'\t')
        & differs_from(word, b'\r')
        & HIGH;
    not_whitespace.trailing_zeros() / 8
}

/// The index of the first byte at or after `pos` that is not JSON whitespace
/// (`bytes.len()` if there is none).
#[inline]
pub(crate) fn whitespace_end(bytes: &[u8], mut pos: usize) -> usize {
    // The commonest run is the one space of `": "` and `", "`: tested byte-wise first.
    if !matches!(bytes.get(pos), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        return pos;
    }
    while let Some(&word) = bytes.get(pos..).and_then(<[u8]>::first_chunk::<8>) {
        let run = leading_whitespace(word);
        pos += run as usize;
        if run < 8 {
            return pos;
        }
    }
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_by_byte(bytes: &[u8], mut pos: usize) -> usize {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(pos) {
            pos += 1;
        }
        pos
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of calls; Miri runs the pretty text below")]
    fn every_byte_after_every_run_ends_it_exactly_where_a_byte_loop_does() {
        // Runs of each length 0..=20 of each whitespace byte and of a mix, then every
        // possible byte (0x00..=0xFF: the bytes next to the four and the high ones must
        // end a run), then more whitespace, at every start offset and text length.
        for fill in [&b" "[..], b"\n", b"\t", b"\r", b"\n \t\r  "] {
            for run in 0..=20 {
                for stop in 0..=255u8 {
                    let mut text: std::vec::Vec<u8> = fill.iter().copied().cycle().take(run).collect();
                    text.push(stop);
                    text.extend_from_slice(b"   ");
                    for start in 0..=text.len() {
                        for end in start..=text.len() {
                            let part = &text[..end];
                            assert_eq!(whitespace_end(part, start), byte_by_byte(part, start), "{part:?} from {start}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_run_of_a_pretty_text_ends_where_a_byte_loop_ends_it() {
        let text =
            b"{\n  \"a\": [\n    1,\n\t\t\t\t\t\t\t\t\r\n    2\n  ],\r\n        \"b\":\x0b\x0c null\n}\n        ";
        for start in 0..=text.len() {
            assert_eq!(whitespace_end(text, start), byte_by_byte(text, start), "from {start}");
        }
    }

    #[test]
    fn a_start_past_the_end_stays_where_it_is() {
        assert_eq!(whitespace_end(b"  ", 2), 2);
        assert_eq!(whitespace_end(b"  ", 7), 7);
        assert_eq!(whitespace_end(b"", 0), 0);
    }
}
