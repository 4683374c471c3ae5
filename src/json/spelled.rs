//! A forward cursor over a text in one known spelling: the fast paths of the identity
//! and envelope readers. Writers store one spelling (the canonical identity, the
//! envelope's `to_bytes` form); a reader that expects exactly it can step through it
//! with literal comparisons instead of the general reader's events. Strings and numbers
//! are still scanned by the reader's own scanners, so whatever a fast path accepts the
//! general reader accepts with the same values; any surprise is `None`, and the caller
//! falls back to the general reader, which decides and words the error.

use super::digits::digit_run;
use super::float::short_decimal_at;
use super::number::{scan_number, JsonNumber};
use super::string::JsonStr;
use super::whitespace::{is_whitespace, skip_whitespace, Run};

/// The cursor. Its steps are `#[inline(always)]`: the position stays in a register and
/// the literals, constants, are compared in place. A clone reads the same text again
/// from the same place without its UTF-8 pass.
#[derive(Clone)]
pub(crate) struct Spelled<'a> {
    text: &'a str,
    /// Index of the next byte.
    pub(crate) pos: usize,
    /// No string so far has an escape and no integer is `-0`: with
    /// [`text_below_del`](Self::text_below_del), every string and integer is spelled
    /// as the crate's writers spell it ([`is_exact`](Self::is_exact)).
    exact: bool,
    /// Whether every byte of the text is below DEL (0x7F), known from the SSE2 pass that
    /// took it as a `str`. Read by `is_exact` alone, which only the canonical identity
    /// reader (feature `fast-identity`) uses.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[cfg_attr(not(any(feature = "fast-identity", test, feature = "fuzzing")), allow(dead_code))]
    below_del: bool,
}

impl<'a> Spelled<'a> {
    /// A cursor at the start of `text`; `None` unless it is UTF-8 (checked once here, so
    /// strings and numbers are sliced from it without another pass each).
    #[inline(always)]
    pub(crate) fn new(text: &'a [u8]) -> Option<Spelled<'a>> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if let Some(text) = super::sse2::below_del_str(text) {
            return Some(Spelled { text, pos: 0, exact: true, below_del: true });
        }
        // Not all below DEL: not ASCII, almost always, so no second SSE2 pass for that.
        Some(Spelled {
            text: core::str::from_utf8(text).ok()?,
            pos: 0,
            exact: true,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            below_del: false,
        })
    }

    /// Whether every string and integer stepped over is spelled exactly as the crate's
    /// writers spell it: no escapes, no `-0`, and no raw byte at or above DEL (0x7F),
    /// which in a valid text stands only in strings, so the whole text is judged once
    /// instead of each string.
    #[cfg(any(feature = "fast-identity", test, feature = "fuzzing"))]
    #[inline(always)]
    pub(crate) fn is_exact(&self) -> bool {
        self.exact && self.text_below_del()
    }

    /// Whether every byte of the text is below DEL: on x86-64 what the SSE2 pass found,
    /// elsewhere a pass now.
    #[cfg(any(feature = "fast-identity", test, feature = "fuzzing"))]
    #[inline(always)]
    fn text_below_del(&self) -> bool {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        return self.below_del;
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        self.text.bytes().all(super::is_below_del)
    }

    /// The whole text.
    #[inline(always)]
    pub(crate) fn text(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Whether every byte has been stepped over.
    #[inline(always)]
    pub(crate) fn at_end(&self) -> bool {
        self.pos == self.text.len()
    }

    /// Step over exactly `bytes`.
    #[inline(always)]
    pub(crate) fn lit(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self.pos + bytes.len();
        (self.text.as_bytes().get(self.pos..end)? == bytes).then(|| self.pos = end)
    }

    /// Step over exactly `first` and then `second`: one bounds check for both.
    #[inline(always)]
    pub(crate) fn lit_pair(&mut self, first: &[u8], second: &[u8]) -> Option<()> {
        let end = self.pos + first.len() + second.len();
        let (at_first, at_second) = self.text.as_bytes().get(self.pos..end)?.split_at_checked(first.len())?;
        (at_first == first && at_second == second).then(|| self.pos = end)
    }

    /// Step over `byte` if it is next.
    #[inline(always)]
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        let next = self.text.as_bytes().get(self.pos) == Some(&byte);
        self.pos += usize::from(next);
        next
    }

    /// Step over JSON whitespace (space, tab, LF, CR), if any.
    #[inline(always)]
    pub(crate) fn ws(&mut self) {
        self.pos = skip_whitespace(self.text.as_bytes(), self.pos);
    }

    /// The index in `keys` of the key that starts here (at its opening quote), when it
    /// is exactly one of them: the bytes of the name, then the closing quote. A name
    /// holds no `"` or `\\`, so no string scan is needed to know. Only the names that
    /// start with the key's first byte are compared, each in three masked 64-bit words
    /// (no call to `memcmp`, which cost the pretty envelope 7% of its time); within 24
    /// bytes of the end, byte by byte. The cursor stays where it is: the caller steps
    /// over the key with [`past_key`](Self::past_key) in its arm for that index.
    #[inline(always)]
    pub(crate) fn known_key<const N: usize>(&self, keys: &KeyTable<N>) -> Option<usize> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos + 1;
        let rest = bytes.get(start..)?;
        // Each candidate once, lowest bit first. With none left, the index is 16, past
        // every name, and `get` ends the search. The loop is bounded by the count of
        // names rather than by the bits, so no change to the bit step can make it
        // endless (a mutated step is a wrong answer the tests see, not a hang).
        let mut candidates = *keys.first.get(usize::from(*rest.first()?))?;
        if let Some(window) = rest.first_chunk::<KEY_WINDOW>() {
            for _ in 0..N {
                let index = candidates.trailing_zeros() as usize;
                if keys.keys.get(index)?.matches(window) {
                    return Some(index);
                }
                candidates &= candidates - 1;
            }
            return None;
        }
        for _ in 0..N {
            let index = candidates.trailing_zeros() as usize;
            let name = keys.names.get(index)?.as_bytes();
            let end = start + name.len();
            if bytes.get(end) == Some(&b'"') && bytes.get(start..end) == Some(name) {
                return Some(index);
            }
            candidates &= candidates - 1;
        }
        None
    }

    /// Step over key `index` of `keys`, which [`known_key`](Self::known_key) found here,
    /// and the `:` after it. Called with a constant `index` in the caller's arm for that
    /// key, the key's length is a constant there, so the steps after it do not wait for
    /// the table loads that found the key: the branch to the arm is predicted and the
    /// position is one addition ahead (moved from the table, it made every member of a
    /// compact envelope wait on three dependent loads). On 32-bit CPUs
    /// (microcontrollers), where flash counts, the compiler decides: one copy of the
    /// colon's steps in each arm cost the envelope reader 1.2 KB.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub(crate) fn past_key<const N: usize>(
        &mut self,
        keys: &KeyTable<N>,
        index: usize,
        members: Members,
    ) -> Option<()> {
        self.pos += 1 + usize::from(keys.keys.get(index)?.quoted_len);
        self.colon_in(members)
    }

    /// A key written without escapes: its text. A key with escapes is `None` (the
    /// general reader compares decoded keys).
    #[inline(always)]
    pub(crate) fn plain_key(&mut self) -> Option<&'a str> {
        self.string()?.as_str()
    }

    /// The `:` after a key, with whitespace around it. Written forms put none before
    /// it, so the `:` is looked for first. (In line or not: as for
    /// [`past_key`](Self::past_key).)
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub(crate) fn colon(&mut self) -> Option<()> {
        if !self.eat(b':') {
            self.ws();
            if !self.eat(b':') {
                return None;
            }
        }
        self.ws();
        Some(())
    }

    /// After a member of an object or an element of an array (whitespace allowed):
    /// `Some(true)` at `,` (and the whitespace after it), `Some(false)` at `close`,
    /// `None` at anything else. Written forms put no whitespace before either, so they
    /// are looked for first. (In line or not: as for [`past_key`](Self::past_key).)
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub(crate) fn next_member(&mut self, close: u8) -> Option<bool> {
        match self.text.as_bytes().get(self.pos) {
            Some(&b',') => {
                self.pos += 1;
                self.ws();
                Some(true)
            }
            Some(&byte) if byte == close => {
                self.pos += 1;
                Some(false)
            }
            _ => {
                self.ws();
                if self.eat(b',') {
                    self.ws();
                    return Some(true);
                }
                self.eat(close).then_some(false)
            }
        }
    }

    /// The `:` after a key, separated as `members` says: `": "` in the written form,
    /// `:` in compact text (nothing else around it), or as [`colon`](Self::colon).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub(crate) fn colon_in(&mut self, members: Members) -> Option<()> {
        match members {
            Members::Written => self.lit(b": "),
            Members::Compact => self.eat(b':').then_some(()),
            Members::Indented | Members::AnyWhitespace => self.colon(),
        }
    }

    /// [`next_member`](Self::next_member) with the members separated as `members`
    /// says: `", "` in the written form, `,` in compact text, and no whitespace before
    /// `close`; or any whitespace.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    pub(crate) fn next_member_in(&mut self, members: Members, close: u8) -> Option<bool> {
        match members {
            Members::Written | Members::Compact => {
                let comma: &[u8] = if members == Members::Written { b", " } else { b"," };
                self.close_or(&[close], comma)
            }
            Members::Indented | Members::AnyWhitespace => self.next_member(close),
        }
    }

    /// Between a container's items spelled with exact separators: `Some(false)` after
    /// `close`, `Some(true)` after `separator`, `None` at anything else.
    #[inline(always)]
    fn close_or(&mut self, close: &[u8], separator: &[u8]) -> Option<bool> {
        if self.lit(close).is_some() {
            return Some(false);
        }
        self.lit(separator).map(|()| true)
    }

    /// Step over whitespace, and say how it was spelled ([`ws_like`](Self::ws_like)).
    #[inline(always)]
    pub(crate) fn ws_learn(&mut self) -> Run {
        let start = self.pos;
        self.ws();
        Run::learned(self.text.as_bytes(), start, self.pos)
    }

    /// Step over whitespace expected to be spelled as `run`: by its length when it is,
    /// as [`ws`](Self::ws) does when it is not.
    #[inline(always)]
    pub(crate) fn ws_like(&mut self, run: &Run) {
        match run.again_at(self.text.as_bytes(), self.pos) {
            Some(end) => self.pos = end,
            None => self.ws(),
        }
    }

    /// Step over the next key of `object`, read in table order, and the `:` after it.
    /// In the written form that is one literal, `written` (the `{` or `", "` before the
    /// key, the key, `": "`), in compact text another, `compact` (`,` and `:` without
    /// spaces); in indented text the start of the member's line at the object's
    /// [`Level`] (the `{` or `,`, a line's end, the indent), then `written` after its `{`
    /// or `, `, two compares under one bounds check; with any whitespace it is the `{`
    /// (`first`) or the `,`, then `quoted` (the key and its quotes), then the `:`, with
    /// whitespace anywhere between: the run after the `{` is kept, and the runs after
    /// the `,`s are expected to be spelled alike. Pretty text indented otherwise (four
    /// spaces, tabs) still spells every member's start alike, so there the `,` and the
    /// run after it, as the last member's start spelled them, and then the key and `": "`
    /// (the written literal without its `, `), are compared first, two compares off the
    /// position's dependency chain, instead of a byte loop whose last test, where the
    /// run ends, the CPU often mispredicts; any other spelling takes the steps above.
    /// The literals are constants at every call ([`first_key!`], [`next_key!`],
    /// [`level!`]), so each compare is a fixed-size one in place. A key with escapes is
    /// not taken.
    #[inline(always)]
    pub(crate) fn key_in_order(
        &mut self,
        object: &mut InOrder,
        written: &[u8],
        compact: &[u8],
        quoted: &[u8],
        first: bool,
    ) -> Option<()> {
        match object.members {
            Members::Written => self.lit(written),
            Members::Compact => self.lit(compact),
            // The line's start, then the key and `": "` (the written literal after its
            // `{` or `, `).
            Members::Indented => {
                let (start, after) = if first { (object.level.open, 1) } else { (object.level.member, 2) };
                self.lit_pair(start, written.get(after..)?)
            }
            Members::AnyWhitespace => {
                if first {
                    if !self.eat(b'{') {
                        return None;
                    }
                    object.indent = self.ws_learn();
                } else {
                    let bytes = self.text.as_bytes();
                    if let Some(key) = object.separator.again_at(bytes, self.pos) {
                        let start = self.pos;
                        self.pos = key;
                        // With whitespace before the value, the steps below read the member.
                        if self.lit(written.get(", ".len()..)?).is_some()
                            && bytes.get(self.pos).is_some_and(|&byte| !is_whitespace(byte))
                        {
                            return Some(());
                        }
                        self.pos = start;
                    }
                    self.ws();
                    if !self.eat(b',') {
                        return None;
                    }
                    let comma = self.pos - 1;
                    self.ws_like(&object.indent);
                    object.separator = Run::learned(bytes, comma, self.pos);
                }
                self.lit(quoted)?;
                self.colon()
            }
        }
    }

    /// Step over the `}` that ends `object` (with any whitespace: and the whitespace
    /// before it, expected to be spelled as `object.closing`). A `,` there (a member
    /// more) is `None`.
    #[inline(always)]
    pub(crate) fn object_end(&mut self, object: &InOrder) -> Option<()> {
        match object.members {
            Members::Written | Members::Compact => self.lit(b"}"),
            Members::Indented => self.lit(object.level.end),
            Members::AnyWhitespace => {
                self.ws_like(&object.closing);
                self.eat(b'}').then_some(())
            }
        }
    }

    /// Step over the one value that starts here, read strictly by the general reader
    /// (duplicate keys, depth: the value may nest `max_depth` levels); `None` on any
    /// problem.
    pub(crate) fn skip_value(&mut self, max_depth: u32) -> Option<()> {
        self.pos = super::reader::skip_value_at(self.text, self.pos, max_depth)?;
        Some(())
    }

    /// A string, validated by the reader's own scanner.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Option<JsonStr<'a>> {
        let (value, end) = JsonStr::read_at(self.text, self.pos)?;
        self.pos = end;
        Some(value)
    }

    /// [`string`](Self::string), noting whether it is spelled as the writers spell it
    /// (see [`is_exact`](Self::is_exact)): escapes may or may not be the canonical ones,
    /// so none is. (Raw control characters cannot occur: the scanner rejects them.)
    #[cfg(any(feature = "fast-identity", test, feature = "fuzzing"))]
    #[inline(always)]
    pub(crate) fn exact_string(&mut self) -> Option<JsonStr<'a>> {
        let value = self.string()?;
        self.exact &= !value.has_escapes();
        Some(value)
    }

    /// The digits of an integer token at the cursor (`0|[1-9][0-9]*`, not followed by a
    /// fraction or an exponent) as a magnitude; `None` for anything else, or past `u64`.
    /// Nineteen digits cannot overflow, so they are summed without a check a digit (the
    /// checks cost a canonical identity ~120 of its 4 100 instructions, callgrind);
    /// twenty are summed again with checks, and more always overflow. In line on 64-bit
    /// CPUs; on 32-bit ones (microcontrollers), where flash counts and `u64` arithmetic
    /// takes pairs of instructions, the compiler decides.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn magnitude(&mut self) -> Option<u64> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let (mut value, pos) = digit_run(bytes, start, 0);
        self.pos = pos;
        let digits = pos - start;
        if digits == 0 || digits > 20 || (digits > 1 && bytes.get(start) == Some(&b'0')) {
            return None;
        }
        if digits == 20 {
            value = bytes
                .get(start..pos)?
                .iter()
                .try_fold(0u64, |value, &digit| value.checked_mul(10)?.checked_add(u64::from(digit - b'0')))?;
        }
        if matches!(bytes.get(pos), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(value)
    }

    /// An integer token (`-?(0|[1-9][0-9]*)`, SPEC §4) within `i64`. A fraction, an
    /// exponent or an overflow is `None`: the general reader words those problems.
    /// One pass over the digits; `scan_number` + `JsonNumber::as_i64` give the same
    /// verdicts in two passes, which costs the canonical identity parse about 1 400 of
    /// its 3 300 instructions (callgrind, docs-hello).
    #[inline(always)]
    pub(crate) fn int(&mut self) -> Option<i64> {
        let negative = self.eat(b'-');
        let magnitude = self.magnitude()?;
        // `-0` is written `0`.
        self.exact &= !(negative && magnitude == 0);
        if negative {
            0i64.checked_sub_unsigned(magnitude)
        } else {
            i64::try_from(magnitude).ok()
        }
    }

    /// A non-negative integer token within `u64` (`-0` is 0, as
    /// [`JsonNumber::as_u64`] says), in one pass. A fraction, an exponent, a negative
    /// value or an overflow is `None`: the general reader words those problems.
    #[inline(always)]
    pub(crate) fn uint(&mut self) -> Option<u64> {
        if self.eat(b'-') {
            // Only `-0` is a non-negative integer.
            return (self.magnitude()? == 0).then_some(0);
        }
        self.magnitude()
    }

    /// A number token's nearest `f64`: a short decimal in one pass
    /// ([`short_decimal_at`]), any other token scanned by the reader's own scanner.
    #[inline(always)]
    pub(crate) fn f64(&mut self) -> Option<f64> {
        if let Some((value, end)) = short_decimal_at(self.text.as_bytes(), self.pos) {
            self.pos = end;
            return Some(value);
        }
        Some(self.number()?.as_f64())
    }

    /// Any number token, scanned by the reader's own scanner.
    #[inline(always)]
    pub(crate) fn number(&mut self) -> Option<JsonNumber<'a>> {
        let (number, end) = scan_number(self.text, self.pos).ok()?;
        self.pos = end;
        Some(number)
    }
}

/// How a fast path expects the members of an object to be separated: the whitespace
/// between its tokens is what this says, whether its keys come in a fixed order
/// ([`Spelled::key_in_order`]) or any ([`Spelled::past_key`]). (On 32-bit CPUs, where
/// flash counts, keys in order are read only in the written form, and keys in any
/// order only with any whitespace.)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(target_pointer_width = "64"), allow(dead_code))]
pub(crate) enum Members {
    /// `", "` between members, `": "` after keys and nothing else: the envelope's
    /// `to_bytes` form (SPEC §3.2).
    Written,
    /// `,` between members, `:` after keys and nothing else: compact text, as most
    /// writers outside Python write JSON (`JSON.stringify`, `serde_json::to_string`,
    /// `json.dumps` with `separators=(",", ":")`).
    Compact,
    /// Each member and each array element on a line of its own, indented two spaces a
    /// level, a closing bracket on a line at its opening line's indent, `": "` after
    /// keys: pretty text as `json.dumps(indent=2)`, `JSON.stringify(value, null, 2)` and
    /// `jq` write it. Read in table order with literals ([`Level`]); anywhere else
    /// (a key order of its own) it is whitespace as any other.
    Indented,
    /// Whitespace anywhere JSON allows it: pretty-printed text, and any other.
    AnyWhitespace,
}

/// The whitespace of indented text ([`Members::Indented`]) around the members of an
/// object at one level, as literals (a key and its `": "` are the written form's).
#[derive(Clone, Copy)]
pub(crate) struct Level {
    /// The `{`, a line's end and the members' indent: before the first member.
    open: &'static [u8],
    /// The `,`, a line's end and the members' indent: before every other member.
    member: &'static [u8],
    /// A line's end, the object's own indent and the `}`.
    end: &'static [u8],
    /// The arrays among the members, one element a line.
    #[cfg_attr(not(target_pointer_width = "64"), allow(dead_code))]
    elements: Lines,
}

/// The whitespace of an array in indented text, one element a line, as literals.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_pointer_width = "64"), allow(dead_code))]
pub(crate) struct Lines {
    /// After the `[`: a line's end and the elements' indent.
    open: &'static [u8],
    /// The `,`, a line's end and the elements' indent.
    separator: &'static [u8],
    /// A line's end, the array's own line's indent and the `]`.
    close: &'static [u8],
}

/// The [`Level`] of an object whose own line is indented by `$outer` and whose members
/// by `$inner` (two spaces more), built at compile time.
macro_rules! level {
    ($outer:literal, $inner:literal) => {
        $crate::json::spelled::Level::new(
            [
                concat!("{\n", $inner).as_bytes(),
                concat!(",\n", $inner).as_bytes(),
                concat!("\n", $outer, "}").as_bytes(),
            ],
            [
                concat!("\n", $inner, "  ").as_bytes(),
                concat!(",\n", $inner, "  ").as_bytes(),
                concat!("\n", $inner, "]").as_bytes(),
            ],
        )
    };
}
pub(crate) use level;

impl Level {
    /// The object's literals (`{`, `,`, `}`) and its arrays' (after `[`, `,`, `]`);
    /// through [`level!`].
    pub(crate) const fn new(object: [&'static [u8]; 3], arrays: [&'static [u8]; 3]) -> Level {
        let [open, member, end] = object;
        let [array_open, separator, close] = arrays;
        Level { open, member, end, elements: Lines { open: array_open, separator, close } }
    }
}

/// An object being read in table order ([`Spelled::key_in_order`]).
pub(crate) struct InOrder {
    members: Members,
    /// Where the object sits in indented text.
    level: Level,
    /// The whitespace after the `{`: pretty text indents every member alike.
    indent: Run,
    /// The whitespace expected before the `}`: pretty text puts it where the object's
    /// own member began.
    closing: Run,
    /// The `,` before the last member read by the steps for any whitespace and the
    /// whitespace after it: how the next member's start is expected to be spelled.
    separator: Run,
}

impl InOrder {
    /// An object whose members are separated as `members` says, at `level` in
    /// indented text, and whose `}` is expected after whitespace spelled as `closing`
    /// (the indent of the members around it, or [`Run::UNKNOWN`]).
    #[inline(always)]
    pub(crate) fn new(members: Members, level: Level, closing: Run) -> InOrder {
        InOrder { members, level, indent: Run::UNKNOWN, closing, separator: Run::UNKNOWN }
    }

    /// The whitespace before this object's members after the first.
    #[inline(always)]
    pub(crate) fn indent(&self) -> Run {
        self.indent
    }

    /// How an array among these members (after the first) is spelled: `, ` between
    /// elements in the written form, `,` in compact text, one element a line in
    /// indented text; otherwise any whitespace, the `]` expected where the members are
    /// indented.
    #[inline(always)]
    pub(crate) fn elements(&self) -> Spacing {
        match self.members {
            #[cfg(target_pointer_width = "64")]
            Members::Indented => Spacing::Lines(self.level.elements),
            members => members.elements(self.indent),
        }
    }
}

impl Members {
    /// How an array among members separated this way is spelled: `, ` between elements
    /// in the written form, `,` in compact text; otherwise any whitespace, the `]`
    /// expected after whitespace spelled as `closing`.
    #[inline(always)]
    pub(crate) fn elements(self, closing: Run) -> Spacing {
        match self {
            Members::Written => Spacing::Exact(b", "),
            Members::Compact => Spacing::Exact(b","),
            Members::Indented | Members::AnyWhitespace => Spacing::Any(closing),
        }
    }
}

/// How a fast path expects the inside of an array to be spelled.
#[derive(Clone, Copy)]
pub(crate) enum Spacing {
    /// No whitespace, and exactly this between elements (`,` or `, `).
    Exact(&'static [u8]),
    /// One element a line, spelled exactly as this says. (On 64-bit CPUs only, where
    /// indented text has its pass: elsewhere its arms cost flash.)
    #[cfg(target_pointer_width = "64")]
    Lines(Lines),
    /// Whitespace anywhere JSON allows it. The run after the `[` is kept and the runs
    /// after the `,`s expected to be spelled alike; the one before the `]` is expected
    /// to be spelled as this says.
    Any(Run),
}

impl Spacing {
    /// After an array's `[`: step over the whitespace this spacing expects or allows
    /// there, and say what to expect after each `,`; `None` if an expected line's start
    /// is not there.
    #[inline(always)]
    pub(crate) fn after_open(self, at: &mut Spelled<'_>) -> Option<Run> {
        match self {
            Spacing::Exact(_) => Some(Run::UNKNOWN),
            #[cfg(target_pointer_width = "64")]
            Spacing::Lines(lines) => at.lit(lines.open).map(|()| Run::UNKNOWN),
            Spacing::Any(_) => Some(at.ws_learn()),
        }
    }

    /// The separator between two elements (with any whitespace: the whitespace around it).
    #[inline(always)]
    pub(crate) fn comma(self, at: &mut Spelled<'_>, element: &Run) -> Option<()> {
        match self {
            Spacing::Exact(comma) => at.lit(comma),
            #[cfg(target_pointer_width = "64")]
            Spacing::Lines(lines) => at.lit(lines.separator),
            Spacing::Any(_) => {
                at.ws();
                if !at.eat(b',') {
                    return None;
                }
                at.ws_like(element);
                Some(())
            }
        }
    }

    /// The `]` that ends the array (in indented text: on a line of its own; with any
    /// whitespace: and the whitespace before it).
    #[inline(always)]
    pub(crate) fn close(self, at: &mut Spelled<'_>) -> Option<()> {
        match self {
            Spacing::Exact(_) => at.eat(b']').then_some(()),
            #[cfg(target_pointer_width = "64")]
            Spacing::Lines(lines) => at.lit(lines.close),
            Spacing::Any(closing) => {
                at.ws_like(&closing);
                at.eat(b']').then_some(())
            }
        }
    }

    /// After an element: `Some(true)` at the separator (stepped over as
    /// [`comma`](Self::comma) does), `Some(false)` at the `]`, `None` at anything else.
    #[inline(always)]
    pub(crate) fn next_element(self, at: &mut Spelled<'_>, element: &Run) -> Option<bool> {
        match self {
            Spacing::Exact(comma) => at.close_or(b"]", comma),
            #[cfg(target_pointer_width = "64")]
            Spacing::Lines(lines) => at.close_or(lines.close, lines.separator),
            Spacing::Any(_) => {
                at.ws();
                if at.eat(b',') {
                    at.ws_like(element);
                    return Some(true);
                }
                at.eat(b']').then_some(false)
            }
        }
    }
}

/// [`Spelled::key_in_order`] for an object's first key, `$name` without quotes: the
/// literals of the three spellings built from it at compile time.
macro_rules! first_key {
    ($at:expr, $object:expr, $name:literal) => {
        $at.key_in_order(
            $object,
            concat!("{\"", $name, "\": ").as_bytes(),
            concat!("{\"", $name, "\":").as_bytes(),
            concat!("\"", $name, "\"").as_bytes(),
            true,
        )
    };
}

/// [`Spelled::key_in_order`] for any key after the first.
macro_rules! next_key {
    ($at:expr, $object:expr, $name:literal) => {
        $at.key_in_order(
            $object,
            concat!(", \"", $name, "\": ").as_bytes(),
            concat!(",\"", $name, "\":").as_bytes(),
            concat!("\"", $name, "\"").as_bytes(),
            false,
        )
    };
}
pub(crate) use {first_key, next_key};

/// The bytes of a key and its closing quote that [`Spelled::known_key`] compares as
/// words: room for the longest name (23 bytes) and its quote.
const KEY_WINDOW: usize = 24;

/// A fixed set of up to 16 key names, laid out for [`Spelled::known_key`]. Built at
/// compile time (`static`), where an index out of range or a name too long is a build
/// error, not a panic.
pub(crate) struct KeyTable<const N: usize> {
    names: [&'static str; N],
    /// Bit `i` of entry `b` is set when `names[i]` starts with byte `b`.
    first: [u16; 256],
    keys: [QuotedName; N],
}

/// One name and its closing quote as three little-endian words, each with the mask of
/// the bytes it covers (the key's text beyond the quote is masked off).
#[derive(Clone, Copy)]
struct QuotedName {
    words: [u64; 3],
    masks: [u64; 3],
    /// The name's length plus one (the quote).
    quoted_len: u8,
}

impl QuotedName {
    /// Whether `window`, the bytes after a key's opening quote, starts with this name
    /// and its closing quote.
    #[inline(always)]
    fn matches(&self, window: &[u8; KEY_WINDOW]) -> bool {
        let (words, _) = window.as_chunks::<8>();
        let differs = words
            .iter()
            .zip(self.words.iter().zip(self.masks.iter()))
            .fold(0, |differs, (word, (&expected, &mask))| differs | (u64::from_le_bytes(*word) & mask) ^ expected);
        differs == 0
    }
}

impl<const N: usize> KeyTable<N> {
    #[allow(clippy::indexing_slicing)]
    pub(crate) const fn new(names: [&'static str; N]) -> KeyTable<N> {
        assert!(N <= 16, "a candidate set is a u16");
        let mut first = [0u16; 256];
        let mut keys = [QuotedName { words: [0; 3], masks: [0; 3], quoted_len: 0 }; N];
        let mut i = 0;
        while i < N {
            let name = names[i].as_bytes();
            assert!(!name.is_empty() && name.len() < KEY_WINDOW, "a name fits the window with its quote");
            first[name[0] as usize] |= 1 << i;
            let mut at = 0;
            while at <= name.len() {
                let byte = if at < name.len() { name[at] } else { b'"' };
                keys[i].words[at / 8] |= (byte as u64) << (8 * (at % 8));
                keys[i].masks[at / 8] |= 0xFF << (8 * (at % 8));
                at += 1;
            }
            keys[i].quoted_len = name.len() as u8 + 1;
            i += 1;
        }
        KeyTable { names, first, keys }
    }
}

/// For the fast paths' tests: every one-byte change of `base` (each position set to
/// bytes that matter to JSON), every truncation, and an invalid UTF-8 byte at every
/// position. `agrees` checks one text and says whether the fast path took it; an
/// invalid UTF-8 text must never be taken. Returns how many were taken.
#[cfg(test)]
pub(crate) fn one_byte_changes(base: &[u8], mut agrees: impl FnMut(&[u8]) -> bool) -> usize {
    let mut taken = 0;
    for at in 0..base.len() {
        for byte in *b"0-9\"\\ x,:]}[{.eE\x7f\x01n" {
            let mut text = base.to_vec();
            text[at] = byte;
            taken += usize::from(agrees(&text));
        }
        taken += usize::from(agrees(&base[..at]));
        let mut invalid_utf8 = base.to_vec();
        invalid_utf8[at] = 0xC3;
        assert!(!agrees(&invalid_utf8), "invalid UTF-8 at {at} taken");
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::scan_number;

    #[test]
    fn integers_read_in_one_pass_agree_with_the_scanner_and_the_conversions() {
        let mut tokens: std::vec::Vec<std::string::String> = [
            "0",
            "-0",
            "00",
            "-00",
            "01",
            "1",
            "-1",
            "7",
            "12a",
            "12,",
            "12]",
            "-",
            "",
            "a",
            "-a",
            "1.0",
            "1.",
            "1e5",
            "1E5",
            "-0.0",
            "-0e1",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "18446744073709551619",
            "-18446744073709551615",
            "99999999999999999999",
            "10000000000000000000",
            "100000000000000000000",
            "1844674407370955161",
            "999999999999999999",
            "1000000000000000000",
        ]
        .iter()
        .map(|t| std::string::String::from(*t))
        .collect();
        // Every length of a run of nines and of a one and zeros, either sign.
        for len in 1..=22 {
            for digits in ["9".repeat(len), std::format!("1{}", "0".repeat(len - 1))] {
                tokens.push(std::format!("-{digits}"));
                tokens.push(digits);
            }
        }
        for token in &tokens {
            let scanned = scan_number(token, 0).ok();
            let expected_end = scanned.map(|(_, end)| end);
            let mut at = Spelled::new(token.as_bytes()).unwrap();
            let int = at.int();
            assert_eq!(int, scanned.and_then(|(n, _)| n.as_i64()), "{token}");
            if int.is_some() {
                assert_eq!(Some(at.pos), expected_end, "{token}");
                assert_eq!(at.is_exact(), !token.starts_with("-0"), "{token}");
            }
            let mut at = Spelled::new(token.as_bytes()).unwrap();
            let uint = at.uint();
            assert_eq!(uint, scanned.and_then(|(n, _)| n.as_u64()), "{token}");
            if uint.is_some() {
                assert_eq!(Some(at.pos), expected_end, "{token}");
            }
        }
    }

    #[test]
    fn a_string_is_exact_only_when_every_byte_is_below_del_and_it_has_no_escape() {
        for ch in [' ', 'a', '~', '\u{7f}', '\u{80}', '\u{e9}', '\u{20ac}', '\u{1F600}'] {
            // Fewer lengths under Miri (half a minute for all of them).
            for len in (0..40).step_by(if cfg!(miri) { 7 } else { 1 }) {
                for at in [0, len / 2, len] {
                    let mut value: std::string::String = "k".repeat(len);
                    value.insert(at, ch);
                    let text = std::format!("\"{value}\"");
                    let mut spelled = Spelled::new(text.as_bytes()).unwrap();
                    assert!(spelled.exact_string().is_some());
                    assert_eq!(spelled.is_exact(), (ch as u32) < 0x7F, "{ch:?} at {at} of {len}");
                }
            }
        }
        let mut spelled = Spelled::new(br#""a\u0062""#).unwrap();
        assert!(spelled.exact_string().is_some() && !spelled.is_exact());
    }

    #[test]
    fn whitespace_is_skipped_to_the_first_other_byte() {
        let blanks = [b' ', b'\n', b'\t', b'\r'];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..40 {
            for _ in 0..if cfg!(miri) { 3 } else { 50 } {
                let mut bytes: std::vec::Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        if state.is_multiple_of(3) {
                            blanks[(state >> 8) as usize % 4]
                        } else {
                            b' '
                        }
                    })
                    .collect();
                let expected = bytes.len();
                bytes.extend_from_slice(b"x ");
                for text in [&bytes[..], &bytes[..expected]] {
                    let mut at = Spelled::new(text).unwrap();
                    at.ws();
                    assert_eq!(at.pos, expected, "{bytes:?}");
                }
            }
        }
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn each_members_start_is_learned_and_a_member_spelled_alike_is_stepped_over() {
        // Room after the last member for the 16-byte window the steps compare in.
        let text = "{\n  \"a\": 1,\n  \"bb\": 2,\n  \"c\":  3,\n\t\"d\": 4\n}                ";
        let at_key = |key: &str| text.find(key).unwrap();
        let mut at = Spelled::new(text.as_bytes()).unwrap();
        let mut object = InOrder::new(Members::AnyWhitespace, level!("", "  "), Run::UNKNOWN);
        first_key!(at, &mut object, "a").unwrap();
        assert_eq!(at.int(), Some(1));
        assert_eq!(object.separator, Run::UNKNOWN);
        for (key, value, comma) in [("\"bb\"", 2, ",\n  \"bb"), ("\"c\"", 3, ",\n  \"c"), ("\"d\"", 4, ",\n\t\"d")] {
            at.key_in_order(&mut object, &[b", ", key.as_bytes(), b": "].concat(), b"", key.as_bytes(), false).unwrap();
            assert_eq!(at.int(), Some(value), "{key}");
            // What the steps learned: the `,` and the whitespace up to the key.
            let key_at = at_key(key);
            let learned = Run::learned(text.as_bytes(), at_key(comma), key_at);
            assert_eq!(object.separator, learned, "{key}");
            assert_eq!(learned.again_at(text.as_bytes(), at_key(comma)), Some(key_at), "{key}");
        }
        object.closing = Run::learned(text.as_bytes(), at_key("\n}"), at_key("}"));
        at.object_end(&object).unwrap();
        at.ws();
        assert!(at.at_end());
    }

    #[test]
    fn known_keys_match_whole_names_only() {
        const NAMES: [&str; 5] = ["a", "ab", "tenant_id", "ttl", "tokenizer_revision"];
        static KEYS: KeyTable<5> = KeyTable::new(NAMES);
        let cases: [(&str, Option<usize>); 11] = [
            ("\"a\": 1", Some(0)),
            ("\"ab\"", Some(1)),
            ("\"abc\": 1", None),
            ("\"a", None),
            ("\"tenant_id\":\"x\"}", Some(2)),
            ("\"tenant_i\": 1", None),
            ("\"tenant_idd\": 1", None),
            ("\"ttl\"", Some(3)),
            ("\"tokenizer_revision\"", Some(4)),
            ("\"tokenizer_revisio\"", None),
            ("\"t\\u0074l\": 1", None),
        ];
        for (text, expected) in cases {
            let mut at = Spelled::new(text.as_bytes()).unwrap();
            assert_eq!(at.known_key(&KEYS), expected, "{text}");
            assert_eq!(at.pos, 0, "{text}");
            if let Some(index) = expected {
                let colon = text.find(':');
                assert_eq!(at.past_key(&KEYS, index, Members::AnyWhitespace).is_some(), colon.is_some(), "{text}");
                if let Some(colon) = colon {
                    // Past the key, the colon and any space after it.
                    let value = text.len() - text[colon + 1..].trim_start().len();
                    assert_eq!((colon, at.pos), (NAMES[index].len() + 2, value), "{text}");
                }
            }
        }
    }

    #[test]
    fn a_key_that_differs_from_a_name_in_two_words_the_same_way_is_not_that_name() {
        // Every word of the key counts on its own: equal differences in two words do
        // not cancel (as they would if the words' differences were xored).
        const NAMES: [&str; 2] = ["tenant_id", "tokenizer_revision"];
        static KEYS: KeyTable<2> = KeyTable::new(NAMES);
        let mut tried = 0;
        for name in NAMES {
            let quoted = std::format!("{name}\"");
            // Byte 0 picks the candidates: change the bytes after it.
            for at in 1..quoted.len() {
                for other in [at + 8, at + 16].into_iter().filter(|&other| other < quoted.len()) {
                    for bit in 0..7 {
                        let mut key = quoted.clone().into_bytes();
                        key[at] ^= 1 << bit;
                        key[other] ^= 1 << bit;
                        let text = [&b"\""[..], &key, b": 1, \"and enough text after it\": 2"].concat();
                        let cursor = Spelled::new(&text).unwrap();
                        assert_eq!(cursor.known_key(&KEYS), None, "{}", std::string::String::from_utf8_lossy(&text));
                        tried += 1;
                    }
                }
            }
        }
        assert!(tried > 80, "{tried}");
    }
}
