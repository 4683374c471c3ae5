//! Skipping JSON whitespace (space, tab, LF, CR).
//!
//! A byte loop. Ending runs shorter than eight bytes with one word's arithmetic (SWAR)
//! instead was slower on an AMD EPYC machine: the word's compare, mask and bit count
//! lie on the position's dependency chain, where a predicted byte loop costs a cycle a
//! byte (pretty identity 380-400 ns against 318-326, `cargo bench --bench envelope`,
//! AMD EPYC Zen 4, 2026-12-02). Eight or sixteen bytes a step with SSE2 lost the same
//! way.

/// Whether `byte` is JSON whitespace. Every token byte is above 0x20, so one compare
/// usually decides.
#[inline(always)]
const fn is_whitespace(byte: u8) -> bool {
    byte <= b' ' && matches!(byte, b' ' | b'\n' | b'\t' | b'\r')
}

/// [`whitespace_end`] for the readers' steps, in line where it is cheap: a token
/// byte (compact text) costs one test, a single whitespace byte (the `": "` and `", "`
/// of the written forms) two; longer runs (pretty text) take the loop, out of line. Putting
/// the whole loop at every call site made the large fast paths slower on compact text
/// (`cargo bench --bench envelope`, AMD EPYC Zen 4, 2026-12-02). On 32-bit CPUs
/// (microcontrollers), where flash counts, the compiler decides.
#[cfg_attr(target_pointer_width = "64", inline(always))]
#[cfg_attr(not(target_pointer_width = "64"), inline)]
pub(crate) fn skip_whitespace(bytes: &[u8], pos: usize) -> usize {
    if !bytes.get(pos).is_some_and(|&first| is_whitespace(first)) {
        return pos;
    }
    match bytes.get(pos + 1) {
        Some(&next) if is_whitespace(next) => whitespace_end(bytes, pos + 2),
        _ => pos + 1,
    }
}

/// The index of the first byte at or after `pos` that is not JSON whitespace
/// (`bytes.len()` if there is none).
#[inline]
pub(crate) fn whitespace_end(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|&byte| is_whitespace(byte)) {
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
                            let expected = byte_by_byte(part, start);
                            assert_eq!(whitespace_end(part, start), expected, "{part:?} from {start}");
                            assert_eq!(skip_whitespace(part, start), expected, "{part:?} from {start}");
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
            assert_eq!(skip_whitespace(text, start), byte_by_byte(text, start), "from {start}");
        }
    }

    #[test]
    fn a_start_past_the_end_stays_where_it_is() {
        assert_eq!(whitespace_end(b"  ", 2), 2);
        assert_eq!(whitespace_end(b"  ", 7), 7);
        assert_eq!(whitespace_end(b"", 0), 0);
        assert_eq!((skip_whitespace(b"  ", 2), skip_whitespace(b"  ", 7), skip_whitespace(b"", 0)), (2, 7, 0));
    }
}
