//! Typed views of a payload in place (SPEC §1.5, §2.1): `&[f32]`, `&[u16]` (float16
//! and bfloat16 bits), `&[U16<LE>]`, ... over the caller's buffer, checked instead of
//! cast. `zerocopy` proves the cast sound; this module adds the frame's words for the
//! three ways it can be refused: an address not aligned to the element, a length that
//! is not a whole number of elements, a dtype that is not the element's.

use crate::error::{Error, ErrorCode};
use crate::identity::Dtype;
use zerocopy::byteorder::{F32, F64, I16, I32, I64, LE, U16};
use zerocopy::{FromBytes, Immutable, KnownLayout};

mod sealed {
    pub trait Sealed {}
}

/// An element type a payload can be viewed as: the native integer and float types
/// (aligned to their size) and zerocopy's little-endian types (alignment 1, right on
/// big-endian hosts too). Which dtypes of SPEC §2.1 each may view:
///
/// | type | dtypes |
/// |---|---|
/// | `u8` | every dtype (the raw bytes; fp8, nf4 and uint8 have no other view) |
/// | `i8` | `int8` |
/// | `u16`, `U16<LE>` | `float16`, `bfloat16` (their bits), `int16` |
/// | `i16`, `I16<LE>` | `int16` |
/// | `i32`, `I32<LE>` / `i64`, `I64<LE>` | `int32` / `int64` |
/// | `f32`, `F32<LE>` / `f64`, `F64<LE>` | `float32` / `float64` |
///
/// Native types read the bytes in the host's order: the frame's payload is raw bytes,
/// which engines write in their own (little-endian) order.
pub trait PayloadElement: FromBytes + Immutable + KnownLayout + Sized + sealed::Sealed {
    /// Whether a payload of `dtype` may be viewed as this type.
    fn holds(dtype: Dtype) -> bool;
}

macro_rules! elements {
    ($($ty:ty => $pattern:pat,)*) => {$(
        impl sealed::Sealed for $ty {}
        impl PayloadElement for $ty {
            fn holds(dtype: Dtype) -> bool {
                matches!(dtype, $pattern)
            }
        }
    )*};
}

elements! {
    u8 => _,
    i8 => Dtype::Int8,
    u16 => Dtype::Float16 | Dtype::Bfloat16 | Dtype::Int16,
    U16<LE> => Dtype::Float16 | Dtype::Bfloat16 | Dtype::Int16,
    i16 => Dtype::Int16,
    I16<LE> => Dtype::Int16,
    i32 => Dtype::Int32,
    I32<LE> => Dtype::Int32,
    i64 => Dtype::Int64,
    I64<LE> => Dtype::Int64,
    f32 => Dtype::Float32,
    F32<LE> => Dtype::Float32,
    f64 => Dtype::Float64,
    F64<LE> => Dtype::Float64,
}

/// `payload` (at `payload_offset` in its frame) as a slice of `T`, or `misaligned`
/// naming the reason. `dtype` is the frame's, when its identity was read. What
/// [`Frame::payload_as`](super::Frame::payload_as) does, for callers that hold the
/// payload apart from its `Frame` (the C ABI's view).
pub fn view_payload_as<T: PayloadElement>(
    payload: &[u8],
    payload_offset: usize,
    dtype: Option<Dtype>,
) -> Result<&[T], Error> {
    let refuse = |reason| Err(Error::new(ErrorCode::Misaligned, reason).at(payload_offset as u64).in_field("payload"));
    if dtype.is_some_and(|dtype| !T::holds(dtype)) {
        return refuse("the frame's dtype is not this element type's");
    }
    if !payload.len().is_multiple_of(size_of::<T>()) {
        return refuse("the payload length is not a whole number of elements");
    }
    if !payload.as_ptr().addr().is_multiple_of(align_of::<T>()) {
        return refuse("the payload's address is not aligned to the element type");
    }
    match <[T]>::ref_from_bytes(payload) {
        Ok(view) => Ok(view),
        Err(_) => refuse("the payload cannot be viewed as this element type"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_refused_for_each_reason_and_granted_otherwise() {
        #[repr(align(8))]
        struct Aligned([u8; 24]);
        let storage = Aligned(core::array::from_fn(|i| i as u8));
        let bytes = &storage.0[..];
        let view = view_payload_as::<u16>(bytes, 0, Some(Dtype::Float16)).unwrap();
        assert_eq!((view.len(), view.as_ptr().cast::<u8>()), (12, bytes.as_ptr()));
        assert_eq!(view[1], u16::from_ne_bytes([2, 3]));
        let reason = |result: Result<&[u16], Error>| result.unwrap_err().reason();
        assert!(reason(view_payload_as::<u16>(&bytes[1..23], 7, None)).contains("address"));
        assert!(reason(view_payload_as::<u16>(&bytes[..23], 0, None)).contains("whole number"));
        assert!(reason(view_payload_as::<u16>(bytes, 0, Some(Dtype::Float32))).contains("dtype"));
        let err = view_payload_as::<f32>(&bytes[2..22], 300, None).unwrap_err();
        assert_eq!((err.code(), err.offset(), err.field()), (ErrorCode::Misaligned, Some(300), Some("payload")));
        // Little-endian types have alignment 1: any address, and the same values on
        // every host.
        let le = view_payload_as::<U16<LE>>(&bytes[1..23], 0, Some(Dtype::Bfloat16)).unwrap();
        assert_eq!(le[0].get(), u16::from_le_bytes([1, 2]));
        assert_eq!(view_payload_as::<u8>(&bytes[1..4], 0, Some(Dtype::Nf4)).unwrap(), &[1, 2, 3]);
        assert!(view_payload_as::<i8>(bytes, 0, Some(Dtype::Uint8)).is_err());
    }

    #[test]
    fn each_element_type_holds_the_dtypes_of_its_size() {
        fn check<T: PayloadElement>() {
            for dtype in Dtype::ALL.iter().copied() {
                if T::holds(dtype) && size_of::<T>() > 1 {
                    assert_eq!(dtype.bits() as usize, 8 * size_of::<T>(), "{dtype}");
                }
            }
        }
        check::<u16>();
        check::<U16<LE>>();
        check::<i32>();
        check::<F64<LE>>();
        assert!(Dtype::ALL.iter().all(|&dtype| u8::holds(dtype)));
        assert!(Dtype::ALL.iter().filter(|&&dtype| f32::holds(dtype)).eq([Dtype::Float32].iter()));
    }
}
