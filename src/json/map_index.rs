//! The entry index of a map of strings or of arrays of strings (the snapshot's shard
//! maps): where each key and value lies in the text, recorded in the caller's `u32`
//! words while a one-pass walk reads the map anyway
//! ([`Reader::string_map`](super::Reader::string_map)), so that the map's iterators
//! read the positions instead of walking the text a second time (the walk cost the C
//! ABI's map read-out more than the parse itself did).
//!
//! A string is two words, the offset of its first byte after the quote and its length,
//! with [`ESCAPES`] set when it holds escapes. The words of each map are one run, its
//! entries in text order:
//! * a map of strings: key, value (four words an entry);
//! * a map of arrays of strings: key, the number of strings, then each string (three
//!   words and two a string).
//!
//! Texts of 2 GiB or more are not indexed (an offset and the flag share a word).

use super::walk::StringMapEntry;
use super::JsonStr;
use core::ops::Range;

/// The flag of a string's length word: the string holds escapes.
const ESCAPES: u32 = 1 << 31;

/// Words of an entry of a map of strings, and of one of a map of arrays before its
/// strings.
const PAIR_WORDS: usize = 4;
const LIST_HEAD_WORDS: usize = 3;

/// Records a walk's entries into the caller's words; past their end it only counts,
/// so the words a text needs are known after one walk.
pub(crate) struct IndexWriter<'w, 'a> {
    words: &'w mut [u32],
    text: &'a [u8],
    /// Words used so far, or needed when past the end of `words`.
    len: usize,
    /// Strings of the array value being read, written after its entry's head.
    items: usize,
}

impl<'w, 'a> IndexWriter<'w, 'a> {
    /// A writer for maps in `text`; `None` for a text too long to index.
    pub(crate) fn new(text: &'a [u8], words: &'w mut [u32]) -> Option<IndexWriter<'w, 'a>> {
        (text.len() < ESCAPES as usize).then_some(IndexWriter { words, text, len: 0, items: 0 })
    }

    /// Words used so far (or needed).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The words written, when everything recorded fits them; else the number needed.
    pub(crate) fn into_words(self) -> Result<&'w [u32], usize> {
        if self.len <= self.words.len() {
            Ok(self.words)
        } else {
            Err(self.len)
        }
    }

    /// A string of the array value of the entry being read, in order.
    #[inline]
    pub(crate) fn item(&mut self, item: JsonStr<'a>) {
        let words = self.string_words(item);
        self.put(self.len + LIST_HEAD_WORDS + 2 * self.items, words);
        self.items += 1;
    }

    /// The entry, after the strings of its array value.
    #[inline]
    pub(crate) fn entry(&mut self, entry: &StringMapEntry<'a>) {
        let [key_start, key_len] = self.string_words(entry.key);
        match entry.value {
            Some(value) => {
                let [value_start, value_len] = self.string_words(value);
                self.put(self.len, [key_start, key_len, value_start, value_len]);
                self.len += PAIR_WORDS;
            }
            None => {
                self.put(self.len, [key_start, key_len, self.items as u32]);
                self.len += LIST_HEAD_WORDS + 2 * self.items;
                self.items = 0;
            }
        }
    }

    /// The two words of `value`.
    #[inline]
    fn string_words(&self, value: JsonStr<'a>) -> [u32; 2] {
        let raw = value.raw();
        // `raw` lies in the text (the walk borrows it from there); the text is shorter
        // than 2 GiB, so both words fit.
        let start = raw.as_ptr().addr().wrapping_sub(self.text.as_ptr().addr()) as u32;
        [start, raw.len() as u32 | if value.has_escapes() { ESCAPES } else { 0 }]
    }

    /// `words` from word `at` on; nothing when they do not all fit (only counted).
    #[inline]
    fn put<const N: usize>(&mut self, at: usize, words: [u32; N]) {
        if let Some(slots) = self.words.get_mut(at..at + N) {
            slots.copy_from_slice(&words);
        }
    }
}

/// The words of one map, with the text they point into.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MapIndex<'a> {
    pub(crate) text: &'a str,
    pub(crate) words: &'a [u32],
}

impl<'a> MapIndex<'a> {
    /// The words `range` of `index` for a map of `text`; `None` outside `index`.
    pub(crate) fn new(text: &'a str, index: &'a [u32], range: Range<usize>) -> Option<MapIndex<'a>> {
        Some(MapIndex { text, words: index.get(range)? })
    }

    /// The next entry of a map of strings in `words`, which it steps past: key, value.
    #[inline]
    pub(crate) fn next_pair(&self, words: &mut &'a [u32]) -> Option<(JsonStr<'a>, JsonStr<'a>)> {
        Some((self.next_string(words)?, self.next_string(words)?))
    }

    /// The next entry of a map of arrays in `words`, which it steps past: the key and
    /// the words of the array's strings (for [`next_string`](Self::next_string)).
    #[inline]
    pub(crate) fn next_list(&self, words: &mut &'a [u32]) -> Option<(JsonStr<'a>, &'a [u32])> {
        let key = self.next_string(words)?;
        Some((key, next_items(words)?))
    }

    /// [`next_list`](Self::next_list) with the key as [`next_raw`](Self::next_raw)
    /// gives it: the text is not read.
    #[cfg(target_pointer_width = "64")]
    #[inline]
    pub(crate) fn next_raw_list(&self, words: &mut &'a [u32]) -> Option<(super::RawStr<'a>, &'a [u32])> {
        let key = self.next_raw(words)?;
        Some((key, next_items(words)?))
    }

    /// The string of the two words at the front of `words`, which it steps past.
    #[inline]
    pub(crate) fn next_string(&self, words: &mut &'a [u32]) -> Option<JsonStr<'a>> {
        let (span, has_escapes) = next_span(words)?;
        Some(JsonStr::from_validated(self.text.get(span)?, has_escapes))
    }

    /// [`next_string`](Self::next_string) as the bytes of the text: only their bounds
    /// are checked, and the text itself is not read (reading its bytes at both ends, to
    /// check they fall between characters, cost the C ABI's walk of a 9 MiB snapshot
    /// 4–8 %). 64-bit CPUs only, as the batch reads that use it.
    #[cfg(target_pointer_width = "64")]
    #[inline]
    pub(crate) fn next_raw(&self, words: &mut &'a [u32]) -> Option<super::RawStr<'a>> {
        let (span, has_escapes) = next_span(words)?;
        Some(super::RawStr { bytes: self.text.as_bytes().get(span)?, has_escapes })
    }
}

/// The words of the array's strings after an entry's key: its count word, then two
/// words a string; steps past them.
#[inline(always)]
fn next_items<'a>(words: &mut &'a [u32]) -> Option<&'a [u32]> {
    let (&count, rest) = words.split_first()?;
    let (items, rest) = rest.split_at_checked(2 * count as usize)?;
    *words = rest;
    Some(items)
}

/// Where the string of the two words at the front of `words` lies and whether it has
/// escapes; steps past them.
#[inline(always)]
fn next_span(words: &mut &[u32]) -> Option<(Range<usize>, bool)> {
    let (&[start, len], rest) = words.split_first_chunk::<2>()?;
    *words = rest;
    let start = start as usize;
    Some((start..start + (len & !ESCAPES) as usize, len & ESCAPES != 0))
}
