//! Hybrid logical clock values (SPEC §9).
//!
//! `hlc = (physical_ms << 16) | logical`: 48 bits of Unix milliseconds, 16 bits of
//! logical counter. Values order as plain unsigned integers, so `Hlc` derives `Ord` on
//! the packed value.
//!
//! Two decisions the SPEC leaves open, taken here:
//!
//! * **Logical overflow carries.** Bumping a logical part of `0xFFFF` gives
//!   `(physical + 1, 0)` — the packed value plus one — rather than an error or a wrap, so
//!   every tick and merge stays strictly increasing. Only the packed value `u64::MAX`
//!   cannot be bumped; that (like a wall clock past 2^48 ms, in the year 10889) is an
//!   `invalid_argument` error.
//! * **Merging includes the local wall clock**, as in the published HLC algorithm: the
//!   result's physical part is the largest of the local, remote and `now_ms`
//!   physical parts; logical is bumped from whichever side(s) hold that physical part
//!   (from the larger logical on a tie) and reset to 0 when `now_ms` alone is largest.
//!   With `now_ms = 0` this is exactly "take the larger physical part, bump logical on a
//!   tie", and the result is always strictly greater than both inputs.
//!
//! ```
//! use membrane_frame::Hlc;
//! let t0 = Hlc::pack(1_735_600_000_000, 0)?;
//! let t1 = t0.tick(1_735_600_000_000)?;          // clock did not advance: logical + 1
//! assert_eq!((t1.physical_ms(), t1.logical()), (1_735_600_000_000, 1));
//! let t2 = t1.tick(1_735_600_000_005)?;          // clock advanced: logical resets
//! assert_eq!((t2.physical_ms(), t2.logical()), (1_735_600_000_005, 0));
//! let remote = Hlc::pack(1_735_600_000_009, 4)?;
//! let merged = t2.merge(remote, 1_735_600_000_006)?;
//! assert_eq!((merged.physical_ms(), merged.logical()), (1_735_600_000_009, 5));
//! assert!(merged > t2 && merged > remote);
//! # Ok::<(), membrane_frame::Error>(())
//! ```

use crate::error::{Error, ErrorCode};
use core::fmt;

/// Bits of the logical counter.
pub const LOGICAL_BITS: u32 = 16;
/// Largest physical part: 2^48 - 1 milliseconds.
pub const MAX_PHYSICAL_MS: u64 = (1 << (64 - LOGICAL_BITS)) - 1;

/// A packed hybrid logical clock value.
///
/// ```
/// use membrane_frame::Hlc;
/// let local = Hlc::pack(1_700_000_000_000, 0)?;
/// let next = local.tick(1_700_000_000_000)?; // the same millisecond: logical + 1
/// assert_eq!(next.unpack(), (1_700_000_000_000, 1));
/// let remote = Hlc::pack(1_700_000_000_005, 3)?;
/// let merged = next.merge(remote, 0)?;
/// assert!(merged > remote && merged > next);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hlc(pub u64);

fn physical_too_large() -> Error {
    Error::new(ErrorCode::InvalidArgument, "physical time does not fit 48 bits").in_field("hlc")
}

impl Hlc {
    /// The zero value (what migration writes for envelopes without one).
    pub const ZERO: Hlc = Hlc(0);

    /// Pack a physical time in Unix milliseconds and a logical counter; fails with
    /// `invalid_argument` when `physical_ms` needs more than 48 bits.
    pub fn pack(physical_ms: u64, logical: u16) -> Result<Hlc, Error> {
        if physical_ms > MAX_PHYSICAL_MS {
            return Err(physical_too_large());
        }
        Ok(Hlc((physical_ms << LOGICAL_BITS) | u64::from(logical)))
    }

    /// The value as stored in an envelope's `hlc` field.
    pub const fn from_raw(raw: u64) -> Hlc {
        Hlc(raw)
    }

    /// The packed value.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The physical part, Unix milliseconds.
    pub const fn physical_ms(self) -> u64 {
        self.0 >> LOGICAL_BITS
    }

    /// The logical part.
    pub const fn logical(self) -> u16 {
        (self.0 & 0xFFFF) as u16
    }

    /// `(physical_ms, logical)`.
    pub const fn unpack(self) -> (u64, u16) {
        (self.physical_ms(), self.logical())
    }

    /// The value one logical step later (carrying into the physical part).
    fn bumped(self) -> Result<Hlc, Error> {
        self.0
            .checked_add(1)
            .map(Hlc)
            .ok_or(Error::new(ErrorCode::InvalidArgument, "hlc cannot advance past its maximum").in_field("hlc"))
    }

    /// The next local value after `self` at wall-clock time `now_ms`: physical
    /// `max(self.physical, now_ms)`; logical 0 when the physical part advanced, else
    /// `self.logical + 1`. Always strictly greater than `self`.
    pub fn tick(self, now_ms: u64) -> Result<Hlc, Error> {
        if now_ms > MAX_PHYSICAL_MS {
            return Err(physical_too_large());
        }
        if now_ms > self.physical_ms() {
            return Hlc::pack(now_ms, 0);
        }
        self.bumped()
    }

    /// The local value after receiving `remote` at wall-clock time `now_ms` (see the
    /// module docs). Always strictly greater than both `self` and `remote`.
    pub fn merge(self, remote: Hlc, now_ms: u64) -> Result<Hlc, Error> {
        if now_ms > MAX_PHYSICAL_MS {
            return Err(physical_too_large());
        }
        let larger = self.max(remote);
        if now_ms > larger.physical_ms() {
            return Hlc::pack(now_ms, 0);
        }
        // The larger packed value holds the larger physical part and, on a physical
        // tie, the larger logical part: bumping it is the rule in every case.
        larger.bumped()
    }
}

impl fmt::Debug for Hlc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hlc({}ms+{})", self.physical_ms(), self.logical())
    }
}

impl fmt::Display for Hlc {
    /// The packed integer, as written in JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<Hlc> for u64 {
    fn from(hlc: Hlc) -> u64 {
        hlc.0
    }
}

/// A node's clock: the last value it issued or observed.
///
/// ```
/// use membrane_frame::hlc::HlcClock;
/// let mut clock = HlcClock::new();
/// let a = clock.tick(1000)?;
/// let b = clock.tick(1000)?;
/// assert!(b > a);
/// let c = clock.observe(membrane_frame::Hlc::pack(2000, 7)?, 1500)?;
/// assert_eq!(c.unpack(), (2000, 8));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HlcClock {
    last: Hlc,
}

impl HlcClock {
    /// A clock that has issued nothing yet.
    pub const fn new() -> HlcClock {
        HlcClock { last: Hlc::ZERO }
    }

    /// A clock resuming after `last`.
    pub const fn resume(last: Hlc) -> HlcClock {
        HlcClock { last }
    }

    /// The last value issued or observed.
    pub const fn last(&self) -> Hlc {
        self.last
    }

    /// Issue a value for a local event; on error the clock is unchanged.
    pub fn tick(&mut self, now_ms: u64) -> Result<Hlc, Error> {
        self.last = self.last.tick(now_ms)?;
        Ok(self.last)
    }

    /// Take a remote value into account; on error the clock is unchanged.
    pub fn observe(&mut self, remote: Hlc, now_ms: u64) -> Result<Hlc, Error> {
        self.last = self.last.merge(remote, now_ms)?;
        Ok(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_unpack_round_trip() {
        let hlc = Hlc::pack(MAX_PHYSICAL_MS, u16::MAX).unwrap();
        assert_eq!(hlc.raw(), u64::MAX);
        assert_eq!(hlc.unpack(), (MAX_PHYSICAL_MS, u16::MAX));
        assert_eq!(Hlc::pack(1, 2).unwrap().raw(), (1 << 16) | 2);
        assert_eq!(Hlc::pack(MAX_PHYSICAL_MS + 1, 0).unwrap_err().code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn tick_takes_the_later_physical_time_or_bumps_logical() {
        let start = Hlc::pack(100, 3).unwrap();
        assert_eq!(start.tick(50).unwrap().unpack(), (100, 4));
        assert_eq!(start.tick(100).unwrap().unpack(), (100, 4));
        assert_eq!(start.tick(101).unwrap().unpack(), (101, 0));
    }

    #[test]
    fn logical_overflow_carries_into_physical() {
        let full = Hlc::pack(100, u16::MAX).unwrap();
        assert_eq!(full.tick(0).unwrap().unpack(), (101, 0));
        assert_eq!(full.merge(Hlc::ZERO, 0).unwrap().unpack(), (101, 0));
        assert!(Hlc(u64::MAX).tick(0).is_err());
        assert!(Hlc(u64::MAX).merge(Hlc::ZERO, 0).is_err());
    }

    #[test]
    fn merge_takes_the_larger_physical_part_and_bumps_on_a_tie() {
        let local = Hlc::pack(100, 9).unwrap();
        assert_eq!(local.merge(Hlc::pack(100, 2).unwrap(), 0).unwrap().unpack(), (100, 10));
        assert_eq!(local.merge(Hlc::pack(100, 20).unwrap(), 0).unwrap().unpack(), (100, 21));
        assert_eq!(local.merge(Hlc::pack(200, 2).unwrap(), 0).unwrap().unpack(), (200, 3));
        assert_eq!(local.merge(Hlc::pack(50, 2).unwrap(), 0).unwrap().unpack(), (100, 10));
        // A wall clock equal to the larger physical part does not advance it.
        assert_eq!(local.merge(Hlc::pack(50, 2).unwrap(), 100).unwrap().unpack(), (100, 10));
        assert_eq!(local.merge(Hlc::pack(100, 20).unwrap(), 100).unwrap().unpack(), (100, 21));
        assert_eq!(local.merge(Hlc::pack(50, 2).unwrap(), 300).unwrap().unpack(), (300, 0));
        assert!(local.merge(Hlc::ZERO, MAX_PHYSICAL_MS + 1).is_err());
    }

    #[test]
    fn a_clock_resumes_after_its_last_value_and_an_error_leaves_it_unchanged() {
        let last = Hlc::from_raw((500 << 16) | 7);
        assert_eq!((last.physical_ms(), last.logical()), (500, 7));
        let mut clock = HlcClock::resume(last);
        assert_eq!(clock.last(), last);
        assert_eq!(clock.tick(100).unwrap().unpack(), (500, 8));
        assert_eq!(clock.observe(Hlc::pack(600, 1).unwrap(), 0).unwrap().unpack(), (600, 2));
        assert!(clock.tick(MAX_PHYSICAL_MS + 1).is_err());
        assert!(clock.observe(Hlc::ZERO, MAX_PHYSICAL_MS + 1).is_err());
        assert_eq!(clock.last().unpack(), (600, 2));
        assert_eq!(HlcClock::new().last(), Hlc::ZERO);
    }

    #[test]
    fn an_hlc_displays_as_its_packed_integer_and_debugs_as_its_parts() {
        let hlc = Hlc::pack(500, 7).unwrap();
        assert_eq!(std::format!("{hlc}"), ((500u64 << 16) | 7).to_string());
        assert_eq!(std::format!("{hlc:?}"), "Hlc(500ms+7)");
        assert_eq!(u64::from(hlc), hlc.raw());
    }

    #[test]
    fn the_largest_physical_time_is_accepted_and_one_more_is_refused() {
        let start = Hlc::pack(100, 3).unwrap();
        assert_eq!(start.tick(MAX_PHYSICAL_MS).unwrap().unpack(), (MAX_PHYSICAL_MS, 0));
        assert_eq!(start.merge(Hlc::ZERO, MAX_PHYSICAL_MS).unwrap().unpack(), (MAX_PHYSICAL_MS, 0));
        let error = start.tick(MAX_PHYSICAL_MS + 1).unwrap_err();
        assert_eq!((error.code(), error.field()), (ErrorCode::InvalidArgument, Some("hlc")));
    }

    #[test]
    fn results_are_strictly_increasing() {
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..10_000 {
            let local = Hlc(next() >> 1);
            let remote = Hlc(next() >> 1);
            let now = next() % (MAX_PHYSICAL_MS + 1);
            let merged = local.merge(remote, now).unwrap();
            assert!(merged > local && merged > remote && merged.physical_ms() >= now);
            let ticked = local.tick(now).unwrap();
            assert!(ticked > local && ticked.physical_ms() >= now);
        }
    }
}
