//! Skipping JSON whitespace (space, tab, LF, CR).
//!
//! A byte loop. Ending runs shorter than eight bytes with one word's arithmetic (SWAR)
//! instead was slower on an AMD EPYC machine: the word's compare, mask and bit count
//! lie on the position's dependency chain, where a predicted byte loop costs a cycle a
//! byte (pretty identity 380-400 ns against 318-326, `cargo bench --bench envelope`,
//! AMD EPYC Zen 4, 2026-12-02). Eight or sixteen bytes a step with SSE2 lost the same
//! way. Where a reader expects a run it has seen (pretty text indents alike), [`Run`]
//! steps over it by its length after one compare that is off that chain.

/// Whether `byte` is JSON whitespace. Every token byte is above 0x20, so one compare
/// usually decides.
#[inline(always)]
pub(crate) const fn is_whitespace(byte: u8) -> bool {
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

/// A run of whitespace as a text spelled it once, so that a reader which expects it
/// again (pretty text indents every member of an object alike) can step over it by its
/// known length: one compare of a 16-byte window confirms it, and the position does not
/// wait for the bytes as a byte loop's does, whose last test, where the run ends, the
/// CPU often mispredicts. On 32-bit CPUs (microcontrollers), where flash counts,
/// nothing is learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// The run's length: 1 to 15 bytes, 0 for no run expected.
    #[cfg(target_pointer_width = "64")]
    len: usize,
    /// The run's bytes as the window's two little-endian words, zero past `len`.
    #[cfg(target_pointer_width = "64")]
    bytes: [u64; 2],
    /// The bytes of the window that `bytes` covers.
    #[cfg(target_pointer_width = "64")]
    mask: [u64; 2],
}

/// The bytes a [`Run`] is compared in: a run of up to 15 bytes and the byte after it.
#[cfg(target_pointer_width = "64")]
const RUN_WINDOW: usize = 16;

impl Run {
    /// No run expected (nothing learned, or an empty run: compact text): whitespace is
    /// stepped over byte by byte, which for no whitespace is one test.
    #[cfg(target_pointer_width = "64")]
    pub(crate) const UNKNOWN: Run = Run { len: 0, bytes: [0; 2], mask: [0; 2] };
    #[cfg(not(target_pointer_width = "64"))]
    pub(crate) const UNKNOWN: Run = Run {};

    /// The run `bytes[start..end]`, whitespace that a reader has just stepped over;
    /// `UNKNOWN` when it and the byte after it do not fit the window.
    #[inline(always)]
    pub(crate) fn learned(bytes: &[u8], start: usize, end: usize) -> Run {
        #[cfg(target_pointer_width = "64")]
        if let (Some(len), Some(window)) =
            (end.checked_sub(start), bytes.get(start..).and_then(|rest| rest.first_chunk::<RUN_WINDOW>()))
        {
            if len < RUN_WINDOW {
                let mask = [first_bytes(len), first_bytes(len.saturating_sub(8))];
                let (low, high) = words(window);
                return Run { len, bytes: [low & mask[0], high & mask[1]], mask };
            }
        }
        let _ = (bytes, start, end);
        Run::UNKNOWN
    }

    /// The end of this run if `bytes` spells it again at `pos`, followed by a byte that is
    /// not whitespace; `None` otherwise (another run, too near the text's end, or no run
    /// expected).
    #[inline(always)]
    pub(crate) fn again_at(&self, bytes: &[u8], pos: usize) -> Option<usize> {
        #[cfg(target_pointer_width = "64")]
        {
            if self.len == 0 {
                return None;
            }
            let window = bytes.get(pos..)?.first_chunk::<RUN_WINDOW>()?;
            let after = *window.get(self.len)?;
            let (low, high) = words(window);
            let differs = ((low & self.mask[0]) ^ self.bytes[0]) | ((high & self.mask[1]) ^ self.bytes[1]);
            (differs == 0 && !is_whitespace(after)).then_some(pos + self.len)
        }
        #[cfg(not(target_pointer_width = "64"))]
        {
            let _ = (bytes, pos);
            None
        }
    }
}

/// A window's two little-endian words. (Two words, not a `u128`: with `u128` fields
/// the pretty envelopes took 488 ns a document instead of 445, best of five alternating
/// runs, Intel Xeon family 6 model 167.)
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn words(window: &[u8; RUN_WINDOW]) -> (u64, u64) {
    let word = |half: Option<&[u8; 8]>| half.map_or(0, |half| u64::from_le_bytes(*half));
    (word(window.first_chunk::<8>()), word(window.last_chunk::<8>()))
}

/// The mask of a little-endian word's first `count` bytes (all eight from eight on).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn first_bytes(count: usize) -> u64 {
    u64::MAX.checked_shr(8 * 8usize.saturating_sub(count) as u32).unwrap_or(0)
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

    /// Texts with runs of every length from every whitespace byte and a mix, followed by
    /// a token, another whitespace byte, or the text's end.
    fn runs() -> std::vec::Vec<std::vec::Vec<u8>> {
        let mut texts = std::vec::Vec::new();
        for fill in [&b" "[..], b"\n", b"\t", b"\r", b"\n \t\r  "] {
            for len in 0..=17 {
                let run: std::vec::Vec<u8> = fill.iter().copied().cycle().take(len).collect();
                for after in [&b"\"key\": 1, \"other\": 2"[..], b" x", b"\n", b""] {
                    let mut text = b"{".to_vec();
                    text.extend_from_slice(&run);
                    text.extend_from_slice(after);
                    texts.push(text);
                }
            }
        }
        texts
    }

    #[test]
    #[cfg_attr(miri, ignore = "every pair of texts: minutes under Miri; the pretty text below runs there")]
    fn a_learned_run_is_found_again_only_where_a_byte_loop_ends_the_same_run() {
        let texts = runs();
        let mut found = 0;
        for learned_from in &texts {
            let end = byte_by_byte(learned_from, 1);
            let run = Run::learned(learned_from, 1, end);
            for text in &texts {
                for pos in 0..=text.len() + 1 {
                    let again = run.again_at(text, pos);
                    if let Some(again) = again {
                        // Found: the same bytes, and exactly where the whitespace ends.
                        assert_eq!(again, byte_by_byte(text, pos), "{text:?} from {pos}");
                        assert_eq!(text[pos..again], learned_from[1..end]);
                        found += 1;
                    }
                    // Not found only where it cannot be: an empty or long run, a window
                    // past the end, other bytes, or more whitespace after them.
                    let len = end - 1;
                    let same = text.get(pos..pos + len) == Some(&learned_from[1..end]);
                    let fits = cfg!(target_pointer_width = "64")
                        && (1..16).contains(&len)
                        && learned_from.len() >= 17
                        && text.len() >= pos + 16;
                    let expected = fits && same && byte_by_byte(text, pos) == pos + len;
                    assert_eq!(again.is_some(), expected, "{:?} in {text:?} at {pos}", &learned_from[1..end]);
                }
            }
        }
        assert_eq!(found > 500, cfg!(target_pointer_width = "64"), "{found}");
    }

    #[test]
    fn a_pretty_texts_runs_are_found_again_where_they_are_spelled_alike() {
        let text = b"{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": [\n    3\n  ],\n  \"c\": null\n}\n                ";
        let member = Run::learned(text, 1, 4);
        let element = Run::learned(text, 10, 15);
        let found = |run: &Run| (0..text.len()).filter_map(|pos| run.again_at(text, pos)).collect::<std::vec::Vec<_>>();
        if cfg!(target_pointer_width = "64") {
            // Where each run ends: the members' after the `{` and the `,`s and before
            // the `]`s, the elements' after the `[`s and the `,`.
            assert_eq!(found(&member), [4, 26, 31, 46, 51]);
            assert_eq!(found(&element), [15, 22, 42]);
        } else {
            assert_eq!((found(&member), found(&element)), (vec![], vec![]));
        }
        assert_eq!(found(&Run::UNKNOWN), []);
        assert_eq!(found(&Run::learned(text, 4, 4)), [], "an empty run is not looked for");
        assert_eq!(Run::learned(text, 4, 3), Run::UNKNOWN, "an end before the start");
        assert_eq!(Run::learned(text, text.len() - 15, text.len() - 1), Run::UNKNOWN, "no byte after it in the window");
        let long = b"{                \"a\": 1, \"b\": 2}";
        assert_eq!(Run::learned(long, 1, 17), Run::UNKNOWN, "sixteen bytes: no byte after it in the window");
        let fifteen = Run::learned(long, 2, 17);
        assert_eq!(fifteen != Run::UNKNOWN, cfg!(target_pointer_width = "64"), "fifteen bytes and the quote");
        assert_eq!(fifteen.again_at(long, 2), cfg!(target_pointer_width = "64").then_some(17));
        // Both words of the window differ, and alike: not the run.
        let mut other = long.to_vec();
        (other[2], other[10]) = (b'x', b'x');
        assert_eq!(fifteen.again_at(&other, 2), None);
    }

    #[test]
    fn a_start_past_the_end_stays_where_it_is() {
        assert_eq!(whitespace_end(b"  ", 2), 2);
        assert_eq!(whitespace_end(b"  ", 7), 7);
        assert_eq!(whitespace_end(b"", 0), 0);
        assert_eq!((skip_whitespace(b"  ", 2), skip_whitespace(b"  ", 7), skip_whitespace(b"", 0)), (2, 7, 0));
    }
}
