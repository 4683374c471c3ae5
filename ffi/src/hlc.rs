//! Hybrid logical clock values (SPEC §9): `hlc = (physical_ms << 16) | logical`,
//! ordered as plain unsigned integers. The C ABI works on packed `uint64_t` values; a
//! node keeps its last value itself.

use crate::boundary::{boundary, NO_DETAIL};
use crate::out::{outs, Out};
use membrane::hlc::{Hlc, LOGICAL_BITS, MAX_PHYSICAL_MS};

/// Bits of the logical counter (the low bits of a packed value).
pub const MBR_HLC_LOGICAL_BITS: u32 = 16;
/// Largest physical part: 2^48 - 1 Unix milliseconds.
pub const MBR_HLC_MAX_PHYSICAL_MS: u64 = u64::MAX >> 16;

const _: () = {
    assert!(MBR_HLC_LOGICAL_BITS == LOGICAL_BITS);
    assert!(MBR_HLC_MAX_PHYSICAL_MS == MAX_PHYSICAL_MS);
};

/// Pack a physical time in Unix milliseconds and a logical counter into `*out`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (`physical_ms` >
/// `MBR_HLC_MAX_PHYSICAL_MS`) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `out` is NULL or points to a writable `uint64_t`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_hlc_pack(physical_ms: u64, logical: u16, out: *mut u64) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        out.write(Hlc::pack(physical_ms, logical)?.raw());
        Ok(())
    })
}

/// Split a packed value into its physical part (Unix milliseconds) and logical counter.
///
/// Returns `MBR_OK` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `physical_ms` and `logical` are each NULL or point to a writable value of their type.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_hlc_unpack(hlc: u64, physical_ms: *mut u64, logical: *mut u16) -> u32 {
    boundary(NO_DETAIL, || {
        let (physical_ms, logical) = outs!(physical_ms, logical);
        let (physical, counter) = Hlc::from_raw(hlc).unpack();
        physical_ms.write(physical);
        logical.write(counter);
        Ok(())
    })
}

/// The next local value after `previous` at wall-clock time `now_ms` into `*out`:
/// physical `max(previous.physical, now_ms)`; logical 0 when the physical part
/// advanced, else `previous.logical + 1` (a logical overflow carries into the physical
/// part). Always strictly greater than `previous`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (`now_ms` > `MBR_HLC_MAX_PHYSICAL_MS`, or
/// `previous` is `UINT64_MAX`) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `out` is NULL or points to a writable `uint64_t`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_hlc_tick(previous: u64, now_ms: u64, out: *mut u64) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        out.write(Hlc::from_raw(previous).tick(now_ms)?.raw());
        Ok(())
    })
}

/// The local value after receiving `remote` at wall-clock time `now_ms` into `*out`:
/// the largest physical part of `local`, `remote` and `now_ms`, logical bumped from
/// the larger of `local` and `remote` when that one holds it (0 when `now_ms` alone
/// is largest). With `now_ms` 0 this is SPEC §9's "take the larger physical part,
/// bump logical on a tie". Always strictly greater than both `local` and `remote`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (`now_ms` > `MBR_HLC_MAX_PHYSICAL_MS`, or
/// the larger value is `UINT64_MAX`) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `out` is NULL or points to a writable `uint64_t`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_hlc_merge(local: u64, remote: u64, now_ms: u64, out: *mut u64) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        out.write(Hlc::from_raw(local).merge(Hlc::from_raw(remote), now_ms)?.raw());
        Ok(())
    })
}
