//! The panic boundary around every entry point, and how its result becomes a status.

use crate::out::Out;
use crate::status::{self, mbr_error};
use membrane::Error;

/// Run `body`, turning an unwinding panic into `Err`. With `std`, `catch_unwind`;
/// without, panics abort and none is reachable (the panic proof), so this is a call.
#[cfg(feature = "std")]
fn catch<T>(body: impl FnOnce() -> T) -> Result<T, ()> {
    #[allow(clippy::std_instead_of_core)] // unwinding needs std
    std::panic::catch_unwind(core::panic::AssertUnwindSafe(body)).map_err(|_| ())
}

#[cfg(not(feature = "std"))]
fn catch<T>(body: impl FnOnce() -> T) -> Result<T, ()> {
    Ok(body())
}

/// Run the body of an entry point inside a panic boundary.
///
/// `Ok` is `MBR_OK`; an error becomes its number and, when `detail` is not NULL, is
/// described there; a panic becomes `MBR_PANIC` (described likewise).
pub(crate) fn boundary(detail: *mut mbr_error, body: impl FnOnce() -> Result<(), Error>) -> u32 {
    // `detail` is the one optional pointer: NULL means "no detail wanted".
    let detail = Out::new(detail, "error").ok();
    match catch(body) {
        Ok(Ok(())) => status::MBR_OK,
        Ok(Err(err)) => {
            if let Some(detail) = detail {
                detail.write_then(mbr_error::EMPTY).fill(&err);
            }
            err.code().number()
        }
        Err(_) => {
            if let Some(detail) = detail {
                detail.write_then(mbr_error::EMPTY).fill_panic();
            }
            status::MBR_PANIC
        }
    }
}

/// The `mbr_error *` of an entry point that has none.
pub(crate) const NO_DETAIL: *mut mbr_error = core::ptr::null_mut();

/// A panic boundary for the few entry points that return a value rather than a status.
pub(crate) fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch(body).unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;

    #[test]
    #[allow(clippy::panic)]
    fn a_panic_becomes_mbr_panic_with_its_detail() {
        let mut detail = MaybeUninit::<mbr_error>::zeroed();
        let status = boundary(detail.as_mut_ptr(), || panic!("deliberate"));
        assert_eq!(status, status::MBR_PANIC);
        assert_eq!(guard(7, || -> i32 { panic!("deliberate") }), 7);
        let ok = boundary(detail.as_mut_ptr(), || Ok(()));
        assert_eq!(ok, status::MBR_OK);
        let failed = boundary(detail.as_mut_ptr(), || Err(Error::buffer_too_small(42).in_field("buf")));
        assert_eq!(failed, status::MBR_BUFFER_TOO_SMALL);
        // SAFETY: zero-initialised above, and `boundary` writes whole values.
        let detail = unsafe { detail.assume_init() };
        assert_eq!((detail.status, detail.needed, detail.offset), (failed, 42, status::MBR_NO_OFFSET));
        assert_eq!(detail.field.iter().take_while(|&&c| c != 0).map(|&c| c as u8 as char).collect::<String>(), "buf");
    }

    #[test]
    fn success_leaves_the_detail_alone() {
        let mut detail = MaybeUninit::<mbr_error>::zeroed();
        assert_eq!(boundary(detail.as_mut_ptr(), || Ok(())), status::MBR_OK);
        // SAFETY: zero-initialised above.
        assert_eq!(unsafe { detail.assume_init() }.status, 0);
    }
}
