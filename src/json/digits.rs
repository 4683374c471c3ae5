//! Runs of decimal digits read as integers: the fast paths' integer tokens and short
//! decimals.
//!
//! Where twenty bytes remain, the run is read from a fixed window of them, so no digit
//! pays a check against the end of the text: the compiler unrolls the loop over the
//! window, and a digit costs eight instructions instead of twelve (callgrind). A
//! canonical identity's ranges and token span run to 16–19 digits. Eight digits a step
//! as one word (SWAR) was slower: the run's length then waits on the word's arithmetic,
//! where a predicted branch a digit lets the next token start at once (parse alone, the
//! 300 `bench-simdjson` identities: 205 → 225 ns, Intel Xeon family 6 model 167). On
//! 32-bit CPUs (microcontrollers), where flash counts, a byte loop.

/// Bytes of the window a run is read from: the most digits a `u64` holds.
#[cfg(target_pointer_width = "64")]
const WINDOW: usize = 20;

/// The value of the run of ASCII digits that starts at `pos` in `bytes`, appended to
/// `value` as `value * 10 + digit` a digit, wrapping modulo 2^64 (callers refuse or
/// check runs past 19 digits), and the index just past the run.
#[inline(always)]
pub(crate) fn digit_run(bytes: &[u8], mut pos: usize, mut value: u64) -> (u64, usize) {
    #[cfg(target_pointer_width = "64")]
    if let Some(window) = bytes.get(pos..).and_then(<[u8]>::first_chunk::<WINDOW>) {
        let mut count = 0;
        while let Some(&digit) = window.get(count).filter(|b| b.is_ascii_digit()) {
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
            count += 1;
        }
        pos += count;
        if count < WINDOW {
            return (value, pos);
        }
    }
    while let Some(&digit) = bytes.get(pos).filter(|b| b.is_ascii_digit()) {
        value = value.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
        pos += 1;
    }
    (value, pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_bytes(bytes: &[u8], mut pos: usize, mut value: u64) -> (u64, usize) {
        while let Some(&digit) = bytes.get(pos).filter(|b| b.is_ascii_digit()) {
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
            pos += 1;
        }
        (value, pos)
    }

    #[test]
    #[cfg_attr(miri, ignore = "a million runs; Miri runs the cases below")]
    fn every_run_ends_at_every_byte_and_every_text_end_as_a_byte_loop_reads_it() {
        // Runs of 0 to 45 digits (past the window and past a u64: the wrapping must
        // agree), then each byte value, then more digits, cut at every length, read
        // from several starts and with a value carried in.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..=45 {
            for stop in 0..=255u8 {
                let mut text = std::vec![b'x', b'7'];
                for _ in 0..len {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    text.push(b'0' + (state % 10) as u8);
                }
                text.push(stop);
                text.extend_from_slice(b"1234567890123456789012");
                for end in 0..=text.len() {
                    let part = &text[..end];
                    for (start, carried) in [(0, 0), (1, 0), (2, 0), (2, 42), (end, 7), (end + 3, 0)] {
                        assert_eq!(
                            digit_run(part, start, carried),
                            by_bytes(part, start, carried),
                            "{part:?} from {start} with {carried}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn runs_around_the_window() {
        let digits = b"1234567890123456789012345";
        for len in 0..=digits.len() {
            for after in [&b""[..], b"]", b"]                        "] {
                let mut text = digits[..len].to_vec();
                text.extend_from_slice(after);
                assert_eq!(digit_run(&text, 0, 0), by_bytes(&text, 0, 0), "{text:?}");
                assert_eq!(digit_run(&text, 0, 0).1, len, "{text:?}");
            }
        }
        assert_eq!(digit_run(b"18446744073709551615]                    ", 0, 0), (u64::MAX, 20));
        assert_eq!(digit_run(b"9007199254740993,\"tokenizer_name\":", 0, 0), (9_007_199_254_740_993, 16));
        assert_eq!(digit_run(b"", 0, 0), (0, 0));
        assert_eq!(digit_run(b"12", 5, 3), (3, 5));
    }
}
