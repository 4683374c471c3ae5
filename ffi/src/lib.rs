//! The C ABI of membrane-frame (`include/membrane_frame.h`): `libmembrane_frame.a` and
//! `libmembrane_frame.so`, a thin skin over the `membrane-frame` crate's public API.
//!
//! The conventions every entry point follows, each written once:
//!
//! * `boundary`: the return value is a `uint32_t` status — `0` (`MBR_OK`), a SPEC §8
//!   code, a usage code from 100 up, or `MBR_PANIC` — and the body runs inside a panic
//!   boundary; the optional `mbr_error *` detail is written only on failure;
//! * `out`: out-parameters are NULL-checked before anything else happens and written
//!   only on success;
//! * `object`: objects (`mbr_identity`, `mbr_envelope`, the tables, ...) are Rust
//!   values in caller-owned opaque storage with exported size and alignment, tagged so
//!   that storage no call has filled is refused with `MBR_INVALID_STATE`; one accessor
//!   helper reads a value out of one;
//! * [`slice`]: byte ranges and strings from C (`(NULL, 0)` is the empty range),
//!   strings into C buffers.
//!
//! Nothing is allocated and there is no global state. The concept modules follow:
//! [`status`], [`identity`], [`frame`], [`digest`], [`writer`], [`stream`], [`version`]
//! (the frame path), and `envelope`, `migrate` and the cluster metadata (`hlc`,
//! `snapshot`, `tombstone`, `refcount`), each behind the Cargo feature of its name
//! (`cluster` for the four), on by default.
//!
//! Unsafe code: the pointer work lives in `out`, `object`, [`slice`] and the two C
//! callbacks ([`writer`], [`tombstone`]), each block with a `// SAFETY:` note. Those
//! helpers take raw pointers without being `unsafe fn` (the rustls-ffi convention):
//! they are crate-private and reached only from `unsafe extern "C"` entry points, whose
//! `# Safety` sections state the pointer contract the helpers rely on.
#![cfg_attr(not(feature = "std"), no_std)]
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
#![warn(missing_docs)]
#![warn(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::todo,
    clippy::unimplemented,
    clippy::std_instead_of_core
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::std_instead_of_core
    )
)]

mod boundary;
pub mod digest;
#[cfg(feature = "envelope")]
pub mod envelope;
pub mod frame;
#[cfg(feature = "cluster")]
pub mod hlc;
pub mod identity;
#[cfg(feature = "migrate")]
pub mod migrate;
mod object;
mod out;
#[cfg(feature = "cluster")]
pub mod refcount;
pub mod slice;
#[cfg(feature = "cluster")]
pub mod snapshot;
pub mod status;
pub mod stream;
#[cfg(feature = "cluster")]
pub mod tombstone;
pub mod version;
#[cfg(feature = "views")]
pub mod view;
pub mod writer;

/// Without `std` panics abort (the targets have no unwinding) and no entry point can
/// reach one: scripts/ffi-panic-check.sh builds the library with `--cfg
/// membrane_panic_proof`, where this handler calls a function that does not exist, and
/// links every entry point with `--gc-sections`. The handler is kept only for the link.
#[cfg(all(not(feature = "std"), not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    #[cfg(membrane_panic_proof)]
    {
        extern "C" {
            fn membrane_frame_panic_is_reachable() -> !;
        }
        // SAFETY: never called: the proof build fails to link if this is reachable.
        unsafe { membrane_frame_panic_is_reachable() }
    }
    #[cfg(not(membrane_panic_proof))]
    loop {
        core::hint::spin_loop();
    }
}

// The C ABI called as C calls it: every entry point under a counting allocator (and
// Miri), and the committed header against cbindgen's output. They live in tests/.
#[cfg(test)]
#[path = "../tests/c_header.rs"]
mod c_header;
#[cfg(test)]
#[path = "../tests/no_alloc.rs"]
mod no_alloc;
