//! Keys of big objects (maps with up to hundreds of thousands of entries) without a key
//! table: ordering, duplicate search and a sorted walk over an already validated text.
//!
//! The metadata readers call [`Reader::defer_duplicate_check`] for such maps, note
//! during their pass whether the keys are strictly increasing (then there is no
//! duplicate, and the map is already in the written order), and only otherwise fall
//! back to [`find_duplicate_key`], which needs `O(n²/BLOCK)` key comparisons and a fixed
//! `BLOCK`-entry buffer on the stack. See `docs/design.md`.

use super::reader::{Event, Limits, Reader, MAX_DEPTH};
use super::string::JsonStr;
use core::cmp::Ordering;

/// How many entries one pass of the fallback keeps (16 bytes each, on the stack).
/// Smaller under Miri, so that its tests cross block boundaries quickly.
const BLOCK: usize = if cfg!(miri) { 16 } else { 256 };

/// Order two strings by their decoded values, code point by code point — Python's
/// `sort_keys` order (UTF-8 byte order is code point order).
pub(crate) fn cmp_decoded(a: &JsonStr<'_>, b: &JsonStr<'_>) -> Ordering {
    match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => a.as_bytes().cmp(b.as_bytes()),
        _ => a.chars().cmp(b.chars()),
    }
}

/// Whether `a` sorts strictly before `b` in [`cmp_decoded`]'s order. Plain strings
/// that differ in their first eight bytes (content hashes nearly always do) are told
/// apart by one integer compare, without a call to `memcmp`: the snapshot maps' order
/// check.
#[inline(always)]
pub(crate) fn is_before(a: &JsonStr<'_>, b: &JsonStr<'_>) -> bool {
    let heads = (a.raw().as_bytes().first_chunk::<8>(), b.raw().as_bytes().first_chunk::<8>());
    if let (false, false, (Some(&x), Some(&y))) = (a.has_escapes(), b.has_escapes(), heads) {
        // Big-endian: the integers order as the bytes do.
        match u64::from_be_bytes(x).cmp(&u64::from_be_bytes(y)) {
            Ordering::Less => return true,
            Ordering::Greater => return false,
            Ordering::Equal => {}
        }
    }
    cmp_decoded(a, b) == Ordering::Less
}

/// One entry of an object in a validated text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjectEntry<'a> {
    /// The key.
    pub(crate) key: JsonStr<'a>,
    /// Offset of the key's opening quote.
    pub(crate) key_at: usize,
    /// The first event of the value.
    pub(crate) value: Event<'a>,
    /// Offset of the value's first byte.
    pub(crate) value_at: usize,
}

/// A reader over the container whose first byte is at `at` in `text`, for walking a
/// text a full reader has already accepted: no key table, no depth limit of its own.
/// Offsets it reports are relative to `at`. It reads only as far as it is asked to (the
/// text is not checked again), so walking each value of a map costs the map once.
pub(crate) fn rewalk_reader(text: &str, at: usize) -> Reader<'_, 0> {
    let mut reader = Reader::over_str(text.get(at..).unwrap_or(""), Limits { max_depth: MAX_DEPTH });
    reader.assume_unique_keys();
    reader
}

/// The entries of the object whose `{` is at `at` of a validated `text`, in text order.
/// A text that is not what it was promised to be ends the walk early (no panic).
pub(crate) struct ObjectEntries<'a> {
    reader: Reader<'a, 0>,
    base: usize,
    done: bool,
}

impl<'a> ObjectEntries<'a> {
    pub(crate) fn new(text: &'a str, at: usize) -> ObjectEntries<'a> {
        let mut reader = rewalk_reader(text, at);
        let done = reader.next_event() != Ok(Some(Event::ObjectStart));
        ObjectEntries { reader, base: at, done }
    }
}

impl<'a> Iterator for ObjectEntries<'a> {
    type Item = ObjectEntry<'a>;

    fn next(&mut self) -> Option<ObjectEntry<'a>> {
        if self.done {
            return None;
        }
        let Ok(Some(Event::Key(key))) = self.reader.next_event() else {
            self.done = true;
            return None;
        };
        let key_at = self.base.saturating_add(self.reader.event_offset());
        let Ok(Some(value)) = self.reader.next_event() else {
            self.done = true;
            return None;
        };
        let value_at = self.base.saturating_add(self.reader.event_offset());
        if self.reader.skip_value(&value).is_err() {
            self.done = true;
            return None;
        }
        Some(ObjectEntry { key, key_at, value, value_at })
    }
}

/// The key whose opening quote is at `at`.
fn key_at<'a>(text: &'a str, at: usize) -> JsonStr<'a> {
    JsonStr::read_at(text, at).map(|(key, _)| key).unwrap_or(JsonStr::from_plain(""))
}

/// One pass of the block selection: the up to [`BLOCK`] smallest distinct keys above
/// `after` (by value; `after` is the key offset of the last key already emitted), as
/// `(key_at, value_at)` in increasing key order. Every pair of equal keys met on the
/// way is reported through `duplicate` with the offset of the later one.
fn next_block(
    text: &str,
    at: usize,
    after: Option<usize>,
    block: &mut heapless::Vec<(usize, usize), BLOCK>,
    duplicate: &mut impl FnMut(usize),
) {
    block.clear();
    let last = after.map(|offset| key_at(text, offset));
    for entry in ObjectEntries::new(text, at) {
        if let (Some(last), Some(last_at)) = (&last, after) {
            match cmp_decoded(&entry.key, last) {
                Ordering::Less => continue,
                Ordering::Equal => {
                    if entry.key_at != last_at {
                        duplicate(entry.key_at.max(last_at));
                    }
                    continue;
                }
                Ordering::Greater => {}
            }
        }
        let found = block.binary_search_by(|&(kept, _)| cmp_decoded(&key_at(text, kept), &entry.key));
        match found {
            Ok(index) => {
                let kept = block.get(index).map_or(0, |&(kept, _)| kept);
                duplicate(entry.key_at.max(kept));
            }
            Err(index) if index < BLOCK => {
                if block.is_full() {
                    block.pop();
                }
                // Cannot fail: there is room now and `index <= len`.
                let _ = block.insert(index.min(block.len()), (entry.key_at, entry.value_at));
            }
            Err(_) => {}
        }
    }
}

/// The offset of the first key (in text order) of the object at `at` in the validated
/// `text` that repeats an earlier key of the same object, if any.
pub(crate) fn find_duplicate_key(text: &str, at: usize) -> Option<usize> {
    let mut first: Option<usize> = None;
    let mut duplicate = |offset: usize| first = Some(first.map_or(offset, |f| f.min(offset)));
    let mut block = heapless::Vec::new();
    let mut after = None;
    loop {
        next_block(text, at, after, &mut block, &mut duplicate);
        match block.last() {
            Some(&(last, _)) => after = Some(last),
            None => break,
        }
        if block.len() < BLOCK {
            break;
        }
    }
    first
}

/// Visit the entries of the object at `at` in the validated `text` in increasing key
/// order, as `(key, key_at, value_at)`. When `sorted` (the reader saw strictly
/// increasing keys) that is the text order; otherwise block selection. The object must
/// hold no duplicate key (checked before).
pub(crate) fn for_each_sorted<'a, E>(
    text: &'a str,
    at: usize,
    sorted: bool,
    mut visit: impl FnMut(JsonStr<'a>, usize) -> Result<(), E>,
) -> Result<(), E> {
    if sorted {
        for entry in ObjectEntries::new(text, at) {
            visit(entry.key, entry.value_at)?;
        }
        return Ok(());
    }
    let mut block = heapless::Vec::new();
    let mut after = None;
    loop {
        next_block(text, at, after, &mut block, &mut |_| {});
        for &(key, value) in block.iter() {
            visit(key_at(text, key), value)?;
        }
        match block.last() {
            Some(&(last, _)) if block.len() == BLOCK => after = Some(last),
            _ => return Ok(()),
        }
    }
}

/// The entries of the object at `at` in the validated `text` in increasing key order, as
/// `(key, value_at)`: [`for_each_sorted`] as an iterator, so that two maps can be walked
/// side by side (the table-free gossip merge). Holds one block (4 KiB) of its own.
pub(crate) struct SortedEntries<'a> {
    text: &'a str,
    at: usize,
    /// Text order, when the keys are known to be strictly increasing.
    entries: Option<ObjectEntries<'a>>,
    block: heapless::Vec<(usize, usize), BLOCK>,
    next: usize,
    done: bool,
}

impl<'a> SortedEntries<'a> {
    /// The walk; the object must hold no duplicate key (checked before).
    pub(crate) fn new(text: &'a str, at: usize, sorted: bool) -> SortedEntries<'a> {
        let entries = sorted.then(|| ObjectEntries::new(text, at));
        SortedEntries { text, at, entries, block: heapless::Vec::new(), next: 0, done: false }
    }
}

impl<'a> Iterator for SortedEntries<'a> {
    type Item = (JsonStr<'a>, usize);

    fn next(&mut self) -> Option<(JsonStr<'a>, usize)> {
        if let Some(entries) = &mut self.entries {
            return entries.next().map(|entry| (entry.key, entry.value_at));
        }
        if self.next == self.block.len() {
            if self.done {
                return None;
            }
            let after = self.block.last().map(|&(last, _)| last);
            next_block(self.text, self.at, after, &mut self.block, &mut |_| {});
            self.next = 0;
            // A short block holds every key left: the walk ends with it.
            if self.block.len() < BLOCK {
                self.done = true;
            }
        }
        let &(key, value) = self.block.get(self.next)?;
        self.next += 1;
        Some((key_at(self.text, key), value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_before_is_the_strict_order_of_cmp_decoded() {
        // Short, eight-byte and longer keys; equal heads; escapes; non-ASCII.
        let raws = [
            "",
            "a",
            "b",
            "ab",
            "abcdefgh",
            "abcdefgi",
            "abcdefgh0",
            "abcdefgh1",
            "abcdefg",
            "bbcdefgh",
            "0002a1cf14e9c1ac",
            "0002dc999ce73664",
            r"\u0061bcdefgh",
            r"abcdefg\u0068",
            r"abcdefgh\n",
            "é",
            "éabcdefg",
            r"\u00e9abcdefg",
            r"\ud83d\ude00",
            "zzzzzzzz",
            r"\u007f\u007f\u007f\u007f\u007f\u007f\u007f\u007f",
        ];
        let strs: std::vec::Vec<JsonStr<'_>> = raws.iter().map(|raw| JsonStr::from_raw(raw).unwrap()).collect();
        for a in &strs {
            for b in &strs {
                let expected = cmp_decoded(a, b) == Ordering::Less;
                assert_eq!(is_before(a, b), expected, "{:?} {:?}", a.raw(), b.raw());
            }
        }
    }

    fn map(keys: &[std::string::String]) -> std::string::String {
        let body: std::vec::Vec<std::string::String> =
            keys.iter().enumerate().map(|(i, k)| std::format!("\"{k}\": {i}")).collect();
        std::format!(" {{{}}}", body.join(", "))
    }

    fn sorted_keys(text: &str) -> std::vec::Vec<std::string::String> {
        let mut out = std::vec::Vec::new();
        for_each_sorted::<()>(text, 1, false, |key, _| {
            out.push(key.to_string());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn a_rewalk_reads_from_its_offset_only() {
        let text = r#"{"é": [1, "x"], "b": {"c": 2}}"#;
        let at = text.find('[').unwrap_or(0);
        let mut reader = rewalk_reader(text, at);
        assert_eq!(reader.next_event(), Ok(Some(Event::ArrayStart)));
        assert_eq!(reader.event_offset(), 0);
        let entries: std::vec::Vec<_> = ObjectEntries::new(text, text.find("{\"c").unwrap_or(0)).collect();
        assert_eq!(entries.len(), 1);
        assert!(entries[0].key.eq_str("c"));
        assert_eq!(&text[entries[0].value_at..=entries[0].value_at], "2");
        // Inside a character or past the end: nothing to read, and no panic.
        assert!(!matches!(rewalk_reader(text, 3).next_event(), Ok(Some(_))));
        assert!(!matches!(rewalk_reader(text, text.len() + 1).next_event(), Ok(Some(_))));
        assert_eq!(ObjectEntries::new(text, 3).count(), 0);
    }

    #[test]
    fn orders_by_code_point_whatever_the_spelling() {
        let a = JsonStr::read_at("\"\\u00e9\"", 0).unwrap().0;
        let b = JsonStr::from_plain("z");
        assert_eq!(cmp_decoded(&a, &b), Ordering::Greater);
        assert_eq!(cmp_decoded(&JsonStr::from_plain("é"), &a), Ordering::Equal);
        // An astral character sorts after U+FFFF by code point (not by UTF-16 unit).
        assert_eq!(cmp_decoded(&JsonStr::from_plain("\u{10000}"), &JsonStr::from_plain("\u{ffff}")), Ordering::Greater);
    }

    #[test]
    fn sorted_walk_and_duplicates_over_several_blocks() {
        // A permutation of 1000 keys: more than three blocks.
        let n: u32 = if cfg!(miri) { 100 } else { 1000 };
        let keys: std::vec::Vec<std::string::String> = (0..n).map(|i| std::format!("k{:04}", (i * 7919) % n)).collect();
        let text = map(&keys);
        let mut expected = keys.clone();
        expected.sort();
        assert_eq!(sorted_keys(&text), expected);
        assert_eq!(find_duplicate_key(&text, 1), None);
        // Duplicates: the reported offset is the earliest repeat in text order.
        let mut with_dups = keys.clone();
        let n = n as usize;
        with_dups[n - 10] = keys[10].clone();
        with_dups[n / 2] = keys[n - 30].clone();
        let text = map(&with_dups);
        let second = text.match_indices(&std::format!("\"{}\"", keys[n - 30])).nth(1).unwrap().0;
        assert_eq!(find_duplicate_key(&text, 1), Some(second));
        // Escaped spellings are the same key.
        let text = " {\"b\": 1, \"\\u0061\": 2, \"c\": 3, \"a\": 4}";
        assert_eq!(find_duplicate_key(text, 1), Some(text.find("\"a\"").unwrap()));
    }

    #[test]
    fn every_block_size_boundary() {
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, BLOCK + 1]
        } else {
            &[0, 1, 2, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 2 * BLOCK + 1]
        };
        for &n in sizes {
            let keys: std::vec::Vec<std::string::String> = (0..n).rev().map(|i| std::format!("{i:05}")).collect();
            let text = map(&keys);
            let mut expected = keys.clone();
            expected.sort();
            assert_eq!(sorted_keys(&text), expected, "{n}");
            let mut walk = SortedEntries::new(&text, 1, false);
            let walked: std::vec::Vec<std::string::String> = walk.by_ref().map(|(key, _)| key.to_string()).collect();
            assert_eq!(walked, expected, "{n}");
            assert!(walk.next().is_none(), "{n} keys: the walk started again after its end");
            assert_eq!(find_duplicate_key(&text, 1), None, "{n}");
            if n > 0 {
                let mut dup = keys.clone();
                dup.push(keys[n / 2].clone());
                assert!(find_duplicate_key(&map(&dup), 1).is_some(), "{n}");
            }
        }
    }
}
