//! Maps of strings and arrays of strings read straight from the bytes: the snapshot
//! shard maps (`{"hash": "node"}`, `{"hash": ["node", ...]}`) for the reader's one-pass
//! check and for the iterators that walk them again.
//!
//! No events, no reader state: a position, whitespace, punctuation and strings. Each
//! string is still checked as the reader checks strings (its scanner), so what
//! comes out is a valid [`JsonStr`] whatever the text holds; anything else than the
//! expected shape ends the walk, and [`StringMapEntries::closed_at`] tells a map that
//! ended at its `}` from one that did not.

use super::string::JsonStr;
use super::whitespace::whitespace_end;

/// A position in a text, moved over whitespace, punctuation and strings.
#[derive(Clone, Copy, Debug)]
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Move past whitespace; the byte there.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        // Compact text has no whitespace: only the first byte is tested in line.
        if let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(self.pos) {
            self.pos = whitespace_end(bytes, self.pos);
        }
        bytes.get(self.pos).copied()
    }

    /// Move past whitespace and `byte`; whether `byte` was there.
    #[inline(always)]
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.pos += usize::from(found);
        found
    }

    /// Move past whitespace and a string; the string, or `None` (moved past the
    /// whitespace only) when there is none.
    #[inline(always)]
    fn string(&mut self) -> Option<JsonStr<'a>> {
        self.peek();
        let (value, after) = JsonStr::read_at(self.text, self.pos)?;
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
        let mut cursor = Cursor { text, pos: at };
        let state = if cursor.eat(b'[') { State::First } else { State::Broken };
        StringArray { cursor, state }
    }

    /// After the last element, each handed to `each` as the walk reads it: the index
    /// after the `]` and the number of elements, or `None` when the walk ended on
    /// something else (the elements before that were handed out).
    #[inline(always)]
    fn closed_after(mut self, mut each: impl FnMut(JsonStr<'a>)) -> Option<(usize, usize)> {
        let mut count = 0;
        for item in self.by_ref() {
            each(item);
            count += 1;
        }
        (self.state == State::Closed).then_some((self.cursor.pos + 1, count))
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
        let mut cursor = Cursor { text, pos: at };
        let state = if cursor.eat(b'{') { State::First } else { State::Broken };
        StringMapEntries { cursor, arrays, state }
    }

    /// The entries of the map whose `{` is just before `at` (the reader's position
    /// after yielding it).
    pub(crate) fn after_open(text: &'a str, at: usize, arrays: bool) -> StringMapEntries<'a> {
        StringMapEntries { cursor: Cursor { text, pos: at }, arrays, state: State::First }
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
        if !self.cursor.eat(b':') {
            return None;
        }
        self.cursor.peek();
        let value_at = self.cursor.pos;
        let (value, array_len) = if self.arrays {
            let (after, len) = StringArray::new(self.cursor.text, value_at).closed_after(each_item)?;
            self.cursor.pos = after;
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
mod tests {
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
        let mut entries = StringMapEntries::new(text, 0, arrays);
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
            out.push((entry.key.to_string(), values, entry.value_at));
        }
        entries.closed_at().map(|end| (out, end))
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
