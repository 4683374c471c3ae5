//! Maps of strings and arrays of strings read straight from the bytes: the snapshot
//! shard maps (`{"hash": "node"}`, `{"hash": ["node", ...]}`) for the reader's one-pass
//! check and for the iterators that walk them again.
//!
//! No events, no reader state: a position, whitespace, punctuation and strings. Each
//! string is still checked as the reader checks strings, so what comes out is a valid
//! [`JsonStr`] whatever the text holds: a plain one by where its first `"`, `\` or
//! control byte falls in a 64-byte block of the text (one SSE2 pass over the block
//! serves every string in it), anything else by the reader's own scanner. The
//! separators as the nodes write them (`", "`, `": "`) are matched as one word before
//! the byte-by-byte steps that read any other spacing. Anything else than the expected
//! shape ends the walk, and [`StringMapEntries::closed_at`] tells a map that ended at
//! its `}` from one that did not.

use super::string::JsonStr;
use super::whitespace::skip_whitespace;

/// A position in a text, moved over whitespace, punctuation and strings.
#[derive(Clone, Copy, Debug)]
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    /// Where the string bytes that need a look are, sixty-four bytes at a time.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    specials: SpecialBlock,
}

/// The bytes that end a run of plain string bytes (`"`, `\`, below 0x20) in the 64
/// bytes from `at` (a multiple of 64), one bit each, kept while the walk is in them: a
/// map's short strings (`"node-3", "node-7"`) share one block, and a 64-byte content
/// hash spans one or two, each read once, where the string scanner takes five 16-byte
/// steps and a call. x86-64 only (four SSE2 steps a block); elsewhere strings take the
/// reader's scanner, which reads machine words there.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[derive(Clone, Copy, Debug)]
struct SpecialBlock {
    at: usize,
    bits: u64,
    /// Blocks read so far: the tests hold the walk to reading each block once.
    #[cfg(test)]
    reads: usize,
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl SpecialBlock {
    /// No block yet: past the end of every text, so no position is in it.
    const EMPTY: SpecialBlock = SpecialBlock {
        at: usize::MAX & !63,
        bits: 0,
        #[cfg(test)]
        reads: 0,
    };

    /// The index of the first byte at or after `pos` that needs a look, from the block
    /// kept or the blocks from the one `pos` is in; `None` when it is not in a whole
    /// block of the text (the caller then scans as the reader does).
    #[inline(always)]
    fn next_special(&mut self, bytes: &[u8], pos: usize) -> Option<usize> {
        let offset = pos.wrapping_sub(self.at);
        let in_block = offset < 64;
        let kept = if in_block { self.bits >> offset } else { 0 };
        if kept != 0 {
            return Some(pos + kept.trailing_zeros() as usize);
        }
        // Blocks lie at multiples of 64 from the text's start, so each is read once
        // however the strings fall across them (read from each string's start, a
        // 64-byte hash's bytes would be read in two blocks, and again in the next
        // entry's). The kept block, if `pos` is in it, has nothing more: the next one.
        let mut at = if in_block { self.at + 64 } else { pos & !63 };
        loop {
            *self = SpecialBlock {
                at,
                bits: special_bits(bytes.get(at..)?.first_chunk::<64>()?),
                #[cfg(test)]
                reads: self.reads + 1,
            };
            // Bits before `pos` (in its own block) are not this string's.
            let ahead = self.bits.checked_shr(pos.saturating_sub(at) as u32).unwrap_or(0);
            if ahead != 0 {
                return Some(at.max(pos) + ahead.trailing_zeros() as usize);
            }
            at += 64;
        }
    }
}

/// Bit `i` set when byte `i` of `block` needs a look in a string.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn special_bits(block: &[u8; 64]) -> u64 {
    let (lanes, _) = block.as_chunks::<16>();
    // Each lane's sixteen bits shifted to their place in the word (put into a byte array
    // and read back as a word, they cost the parse of bench-simdjson's 9 MiB snapshot
    // 5–8 % more time).
    lanes
        .iter()
        .zip([0, 16, 32, 48])
        .fold(0, |bits, (lane, shift)| bits | u64::from(super::sse2::special_lanes(lane)) << shift)
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str, pos: usize) -> Cursor<'a> {
        Cursor {
            text,
            pos,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            specials: SpecialBlock::EMPTY,
        }
    }

    /// Move past whitespace; the byte there.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        self.pos = skip_whitespace(self.text.as_bytes(), self.pos);
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Move past whitespace and `byte`; whether `byte` was there.
    #[inline(always)]
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.pos += usize::from(found);
        found
    }

    /// Move past `separator` and one space when a `"` or `[` follows them: the
    /// separators as the nodes write maps (`", "` and `": "`), tested at once where
    /// [`eat`](Self::eat) and [`peek`](Self::peek) test byte by byte; what follows is
    /// read as after them. Whether it did.
    ///
    /// Only on 64-bit CPUs: on microcontrollers, where flash counts, the shortcut's
    /// copies cost the image with every function 350 bytes (thumbv7em,
    /// `make -C c-examples baremetal-check`).
    #[inline(always)]
    fn skip_written(&mut self, separator: u8) -> bool {
        if cfg!(not(target_pointer_width = "64")) {
            return false;
        }
        // Four bytes, compared as one word: a valid text has a byte after the three (the
        // string's or the array's end); a shorter rest takes the byte-by-byte steps.
        let ahead = self.text.as_bytes().get(self.pos..).and_then(|rest| rest.first_chunk::<4>());
        let found = matches!(ahead, Some(&[a, b' ', b'"' | b'[', _]) if a == separator);
        self.pos += if found { 2 } else { 0 };
        found
    }

    /// Move past whitespace and a string; the string, or `None` (moved past the
    /// whitespace only) when there is none.
    #[inline(always)]
    fn string(&mut self) -> Option<JsonStr<'a>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let open = self.pos;
        // A plain string ends at the first byte that needs a look, its closing quote.
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if let Some(close) = self.specials.next_special(self.text.as_bytes(), open + 1) {
            if self.text.as_bytes().get(close) == Some(&b'"') {
                self.pos = close + 1;
                return Some(JsonStr::from_validated(self.text.get(open + 1..close)?, false));
            }
        }
        // Escapes, control bytes, the end of the text: the reader's scanner.
        let (value, after) = JsonStr::read_at(self.text, open)?;
        self.pos = after;
        Some(value)
    }
}

/// Where a walk over a container is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the first entry (no comma before it).
    First,
    /// After an entry.
    Next,
    /// At the closing bracket, which the cursor is on.
    Closed,
    /// Stopped at something of another shape.
    Broken,
}

impl State {
    /// Move past the comma before an entry, or find the end: whether an entry follows.
    /// A walk that has ended (closed or broken) stays as it is.
    #[inline(always)]
    fn before_entry(&mut self, cursor: &mut Cursor<'_>, close: u8) -> bool {
        if matches!(*self, State::Closed | State::Broken) {
            return false;
        }
        if *self == State::Next && cursor.skip_written(b',') {
            return true;
        }
        let byte = cursor.peek();
        match (*self, byte) {
            (State::First | State::Next, Some(b)) if b == close => *self = State::Closed,
            (State::First, Some(b'"')) => return true,
            (State::Next, Some(b',')) => {
                cursor.pos += 1;
                return true;
            }
            _ => *self = State::Broken,
        }
        false
    }

    /// Record how reading an entry ended.
    #[inline(always)]
    fn after_entry<T>(&mut self, entry: Option<T>) -> Option<T> {
        *self = if entry.is_some() { State::Next } else { State::Broken };
        entry
    }
}

/// The strings of the array whose `[` is at `at`, in order.
#[derive(Clone, Debug)]
pub(crate) struct StringArray<'a> {
    cursor: Cursor<'a>,
    state: State,
}

impl<'a> StringArray<'a> {
    pub(crate) fn new(text: &'a str, at: usize) -> StringArray<'a> {
        StringArray::at(Cursor::new(text, at))
    }

    /// The array whose `[` is at the cursor (a map's, whose block it goes on with).
    #[inline(always)]
    fn at(mut cursor: Cursor<'a>) -> StringArray<'a> {
        let state = if cursor.eat(b'[') { State::First } else { State::Broken };
        StringArray { cursor, state }
    }

    /// After the last element, each handed to `each` as the walk reads it: the cursor
    /// after the `]` and the number of elements, or `None` when the walk ended on
    /// something else (the elements before that were handed out).
    #[inline(always)]
    fn closed_after(mut self, mut each: impl FnMut(JsonStr<'a>)) -> Option<(Cursor<'a>, usize)> {
        let mut count = 0;
        for item in self.by_ref() {
            each(item);
            count += 1;
        }
        self.cursor.pos += 1;
        (self.state == State::Closed).then_some((self.cursor, count))
    }
}

impl<'a> Iterator for StringArray<'a> {
    type Item = JsonStr<'a>;

    #[inline]
    fn next(&mut self) -> Option<JsonStr<'a>> {
        if !self.state.before_entry(&mut self.cursor, b']') {
            return None;
        }
        let item = self.cursor.string();
        self.state.after_entry(item)
    }
}

/// One entry of a map of strings or of arrays of strings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StringMapEntry<'a> {
    pub(crate) key: JsonStr<'a>,
    /// The value, for a map of strings.
    pub(crate) value: Option<JsonStr<'a>>,
    /// The number of strings in the value, for a map of arrays.
    pub(crate) array_len: usize,
    /// Offset of the value's first byte (the `[` of an array).
    pub(crate) value_at: usize,
}

/// The entries of a map of strings (or, with `arrays`, of arrays of strings), in text
/// order.
#[derive(Clone, Debug)]
pub(crate) struct StringMapEntries<'a> {
    cursor: Cursor<'a>,
    arrays: bool,
    state: State,
}

impl<'a> StringMapEntries<'a> {
    /// The entries of the map whose `{` is at `at`.
    pub(crate) fn new(text: &'a str, at: usize, arrays: bool) -> StringMapEntries<'a> {
        let mut cursor = Cursor::new(text, at);
        let state = if cursor.eat(b'{') { State::First } else { State::Broken };
        StringMapEntries { cursor, arrays, state }
    }

    /// The entries of the map whose `{` is just before `at` (the reader's position
    /// after yielding it).
    pub(crate) fn after_open(text: &'a str, at: usize, arrays: bool) -> StringMapEntries<'a> {
        let cursor = Cursor::new(text, at);
        StringMapEntries { cursor, arrays, state: State::First }
    }

    /// After the last entry: the offset of the map's `}`, or `None` when the walk
    /// ended on something else (a value of another kind, a JSON problem).
    pub(crate) fn closed_at(mut self) -> Option<usize> {
        while self.next().is_some() {}
        (self.state == State::Closed).then_some(self.cursor.pos)
    }

    /// The next entry, as [`next`](Iterator::next); in a map of arrays each element
    /// of its array is handed to `each_item` as the walk reads it, so a caller that
    /// wants them reads the array once instead of again through [`StringArray`].
    #[inline(always)]
    pub(crate) fn next_with_items(&mut self, each_item: impl FnMut(JsonStr<'a>)) -> Option<StringMapEntry<'a>> {
        if !self.state.before_entry(&mut self.cursor, b'}') {
            return None;
        }
        let entry = self.entry(each_item);
        self.state.after_entry(entry)
    }

    /// The entry after the comma, if any.
    #[inline(always)]
    fn entry(&mut self, each_item: impl FnMut(JsonStr<'a>)) -> Option<StringMapEntry<'a>> {
        let key = self.cursor.string()?;
        if !self.cursor.skip_written(b':') {
            if !self.cursor.eat(b':') {
                return None;
            }
            self.cursor.peek();
        }
        let value_at = self.cursor.pos;
        let (value, array_len) = if self.arrays {
            let (after, len) = StringArray::at(self.cursor).closed_after(each_item)?;
            self.cursor = after;
            (None, len)
        } else {
            (Some(self.cursor.string()?), 0)
        };
        Some(StringMapEntry { key, value, array_len, value_at })
    }
}

impl<'a> Iterator for StringMapEntries<'a> {
    type Item = StringMapEntry<'a>;

    #[inline]
    fn next(&mut self) -> Option<StringMapEntry<'a>> {
        self.next_with_items(|_| {})
    }
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use crate::json::{Event, Limits, Reader};
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// The map at the start of `text` as the event reader sees it: `(key, value or
    /// array elements, value offset)`, and the offset of its `}`; `None` when it is
    /// not a valid map of the expected kind.
    type Walked = (Vec<(String, Vec<String>, usize)>, usize);

    fn by_events(text: &str, arrays: bool) -> Option<Walked> {
        let mut reader = Reader::<'_, 64>::new(text.as_bytes(), Limits::default());
        let mut entries = Vec::new();
        if reader.next_event().ok()? != Some(Event::ObjectStart) {
            return None;
        }
        loop {
            match reader.next_event().ok()?? {
                Event::ObjectEnd => break,
                Event::Key(key) => {
                    let value = reader.next_event().ok()??;
                    let value_at = reader.event_offset();
                    let values = match (value, arrays) {
                        (Event::Str(value), false) => std::vec![value.to_string()],
                        (Event::ArrayStart, true) => {
                            let mut items = Vec::new();
                            loop {
                                match reader.next_event().ok()?? {
                                    Event::Str(item) => items.push(item.to_string()),
                                    Event::ArrayEnd => break items,
                                    _ => return None,
                                }
                            }
                        }
                        _ => return None,
                    };
                    entries.push((key.to_string(), values, value_at));
                }
                _ => return None,
            }
        }
        Some((entries, reader.event_offset()))
    }

    /// The walk, each array read twice: handed out during the map walk
    /// (`next_with_items`), and again on its own ([`StringArray`]), which must agree.
    fn walked(text: &str, arrays: bool) -> Option<Walked> {
        walked_at(text, 0, arrays)
    }

    /// [`walked`] of the map at `at`, its offsets less `at`.
    fn walked_at(text: &str, at: usize, arrays: bool) -> Option<Walked> {
        let mut entries = StringMapEntries::new(text, at, arrays);
        let mut out = Vec::new();
        let mut handed = Vec::new();
        while let Some(entry) = entries.next_with_items(|item| handed.push(item.to_string())) {
            let values: Vec<String> = match entry.value {
                Some(value) => std::vec![value.to_string()],
                None => StringArray::new(text, entry.value_at).map(|item| item.to_string()).collect(),
            };
            assert_eq!(entry.array_len, if arrays { values.len() } else { 0 }, "{text}");
            let handed = core::mem::take(&mut handed);
            assert_eq!(handed, if arrays { values.clone() } else { Vec::new() }, "{text}");
            out.push((entry.key.to_string(), values, entry.value_at - at));
        }
        entries.closed_at().map(|end| (out, end - at))
    }

    const MAPS: &[(&str, bool)] = &[
        (r#"{}"#, false),
        (r#"{}"#, true),
        (r#" {  } "#, false),
        (r#"{"a":"n"}"#, false),
        (r#"{"a": "n", "b": "m\u00e9"}"#, false),
        ("{\n  \"a\" :\t\"n\" ,\r\n \"b\": \"\\\"\"\n}", false),
        (r#"{"a": []}"#, true),
        (r#"{"a": ["n"], "b": ["x", "y\n", "z"]}"#, true),
        ("{ \"a\" : [ \"n\" , \"m\" ] , \"b\" : [ ] }", true),
        (r#"{"caf\u00e9": "\ud83d\ude00"}"#, false),
        // The written separators, and runs of whitespace that start like them.
        (r#"{"a": "n", "b": "m", "c": ""}"#, false),
        ("{\"a\":  \"n\",  \"b\" : \"m\",\t\"c\":\n\"\"}", false),
        (r#"{"a": ["n", "m"], "b": [], "c":  [ "x",  "y"]}"#, true),
    ];

    #[test]
    fn valid_maps_walk_as_the_event_reader_reads_them() {
        for &(text, arrays) in MAPS {
            let expected = by_events(text, arrays);
            assert!(expected.is_some(), "{text}");
            assert_eq!(walked(text, arrays), expected, "{text}");
        }
    }

    #[test]
    fn any_other_text_ends_the_walk_without_a_closing_brace() {
        let wrong: &[(&str, bool)] = &[
            (r#"{"a": "n"}"#, true),
            (r#"{"a": ["n"]}"#, false),
            (r#"{"a": 1}"#, false),
            (r#"{"a": ["n", 1]}"#, true),
            // A written separator before a byte of the other kind.
            (r#"{"a": "n", ["m"]}"#, false),
            (r#"{"a": ["n", ["m"]]}"#, true),
            (r#"{"a": "n", "b": ["m"]}"#, false),
            (r#"{"a": ["n"], "b": "m"}"#, true),
            // Another byte where a written separator would be.
            (r#"{"a"; "n"}"#, false),
            (r#"{"a": "n"; "b": "m"}"#, false),
            (r#"{"a"; ["n"]}"#, true),
            (r#"{"a": ["n"; "m"]}"#, true),
            (r#"{"a": "n",}"#, false),
            (r#"{, "a": "n"}"#, false),
            (r#"{"a" "n"}"#, false),
            (r#"{"a": "n" "b": "m"}"#, false),
            (r#"{"a": ["n" "m"]}"#, true),
            (r#"{"a": [, "n"]}"#, true),
            (r#"{"a": ["n",]}"#, true),
            (r#"{"a": "n"#, false),
            (r#"{"a": "\q"}"#, false),
            ("{\"a\": \"\u{1}\"}", false),
            (r#"{"a": "\ud800"}"#, false),
            (r#"["a"]"#, false),
            ("", false),
        ];
        for &(text, arrays) in wrong {
            assert_eq!(by_events(text, arrays), None, "{text}");
            assert_eq!(walked(text, arrays), None, "{text}");
        }
    }

    #[test]
    fn every_prefix_of_a_valid_map_is_refused_without_panic() {
        for &(text, arrays) in MAPS {
            // Every prefix that lacks the closing brace.
            for end in 0..text.rfind('}').unwrap_or(0) {
                if let Some(prefix) = text.get(..end) {
                    assert_eq!(walked(prefix, arrays), None, "{prefix}");
                }
            }
        }
    }

    /// A map of `entries` entries whose strings have lengths and contents drawn from
    /// `state`: plain runs of 0 to 80 bytes (so strings cross and fill the 64-byte
    /// blocks), escapes, non-ASCII, and whitespace of any kind between tokens. (Also
    /// the snapshot tests' maps.)
    pub(crate) fn generated_map(state: &mut u64, entries: usize, arrays: bool) -> String {
        let mut next = |bound: u64| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            *state % bound
        };
        let pieces = ["a", "0", "f", "é", r"\n", r"\u00e9", r#"\""#, r"\\", "€", "-"];
        let string = |next: &mut dyn FnMut(u64) -> u64| {
            let len = next(81);
            let plain = next(3) != 0;
            let mut out = String::from("\"");
            for _ in 0..len {
                out.push_str(if plain { pieces[next(4) as usize] } else { pieces[next(pieces.len() as u64) as usize] });
            }
            out.push('"');
            out
        };
        let ws = ["", "", " ", "  ", "\n  ", "\t"];
        let mut text = String::from("{");
        for index in 0..entries {
            if index > 0 {
                text.push(',');
            }
            text.push_str(ws[next(6) as usize]);
            // Distinct keys: the event reader refuses a repeated one.
            text.push_str(&string(&mut next).replacen('"', &std::format!("\"{index}"), 1));
            text.push_str(ws[next(6) as usize]);
            text.push(':');
            text.push_str(ws[next(6) as usize]);
            if arrays {
                text.push('[');
                for item in 0..next(4) {
                    if item > 0 {
                        text.push_str(", ");
                    }
                    text.push_str(&string(&mut next));
                }
                text.push(']');
            } else {
                text.push_str(&string(&mut next));
            }
        }
        text.push_str(ws[next(6) as usize]);
        text.push('}');
        text
    }

    #[test]
    fn long_maps_walk_as_the_event_reader_reads_them_through_every_block() {
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let rounds = if cfg!(miri) { 4 } else { 300 };
        for round in 0..rounds {
            let arrays = round % 2 == 1;
            let text = generated_map(&mut state, 1 + round % 12, arrays);
            let expected = by_events(&text, arrays);
            assert!(expected.is_some(), "{text}");
            assert_eq!(walked(&text, arrays), expected, "{text}");
            // At another offset in a longer text, after a string; and with a byte
            // changed (a control byte, a stray quote or backslash) or cut off, each
            // where the blocks fall.
            let shifted = std::format!("\"x\" {text}, 1");
            let at = 4;
            let entries: Vec<_> = StringMapEntries::new(&shifted, at, arrays).map(|e| e.key.to_string()).collect();
            assert_eq!(entries.len(), expected.as_ref().map_or(0, |(e, _)| e.len()), "{shifted}");
            // At every offset from a block's start (the blocks lie at multiples of 64).
            if round < 8 {
                for pad in 1..=64 {
                    let padded = std::format!("{}{text}", " ".repeat(pad));
                    assert_eq!(walked_at(&padded, pad, arrays), expected, "{padded}");
                }
            }
            for (index, bad) in [(text.len() / 3, 0x01u8), (text.len() / 2, b'"'), (text.len() * 2 / 3, b'\\')] {
                let mut bytes = text.clone().into_bytes();
                bytes[index] = bad;
                if let Ok(changed) = std::str::from_utf8(&bytes) {
                    assert_eq!(walked(changed, arrays), by_events(changed, arrays), "{changed}");
                }
            }
            let cut = &text[..text.floor_char_boundary(text.len() * 3 / 4)];
            assert_eq!(walked(cut, arrays), None, "{cut}");
        }
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    fn the_next_special_byte_is_found_in_the_block_it_lies_in() {
        // One `"` in three blocks of plain bytes, looked for from positions before it,
        // with no block kept and with the block of the position kept. Each block is read
        // once: from the one `pos` is in, or the one after it when that one is kept.
        for special in [0, 5, 63, 64, 100, 127, 128, 190, 191] {
            let mut bytes = std::vec![b'a'; 200];
            bytes[special] = b'"';
            for pos in (0..=special).step_by(9).chain([special]) {
                let mut block = SpecialBlock::EMPTY;
                assert_eq!(block.next_special(&bytes, pos), Some(special), "from {pos} to {special}");
                assert_eq!((block.at, block.reads), (special & !63, special / 64 - pos / 64 + 1), "from {pos}");
                let at = pos & !63;
                let mut kept = SpecialBlock { at, bits: special_bits(bytes[at..].first_chunk().unwrap()), reads: 0 };
                assert_eq!(kept.next_special(&bytes, pos), Some(special), "kept, from {pos} to {special}");
                assert_eq!(kept.reads, special / 64 - pos / 64, "kept, from {pos} to {special}");
            }
        }
        // Past the last whole block: for the caller's scanner.
        let mut bytes = std::vec![b'a'; 200];
        bytes[195] = b'"';
        let mut block = SpecialBlock::EMPTY;
        assert_eq!(block.next_special(&bytes, 150), None);
    }

    #[test]
    fn a_walk_reports_value_offsets_in_the_whole_text() {
        let text = r#"{"x": {"a": ["n"], "b": ["m"]}}"#;
        let at = text.find("{\"a\"").unwrap_or(0);
        let entries: Vec<_> = StringMapEntries::new(text, at, true).map(|e| e.value_at).collect();
        assert_eq!(entries, [text.find("[\"n").unwrap_or(0), text.find("[\"m").unwrap_or(0)]);
        let nodes: Vec<_> = StringArray::new(text, entries[1]).map(|n| n.to_string()).collect();
        assert_eq!(nodes, ["m"]);
    }
}
