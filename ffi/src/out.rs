//! Out-parameters: NULL-checked when the entry point starts, written only on success.

use core::marker::PhantomData;
use core::ptr::NonNull;
use membrane::Error;

/// A C out-parameter known not to be NULL. Writing it is the last thing an entry point
/// does, so a failing call leaves it untouched.
pub(crate) struct Out<'o, T> {
    target: NonNull<T>,
    _borrow: PhantomData<&'o mut T>,
}

impl<'o, T> Out<'o, T> {
    /// The out-parameter `argument` at `ptr`, or `null_pointer`.
    ///
    /// Contract (of the calling entry point): a non-NULL `ptr` is aligned and valid for
    /// a write of `T`, and nothing else reads or writes it during the call. It may be
    /// uninitialised: it is written without being read or dropped.
    pub(crate) fn new(ptr: *mut T, argument: &'static str) -> Result<Out<'o, T>, Error> {
        NonNull::new(ptr).map(|target| Out { target, _borrow: PhantomData }).ok_or(Error::null_pointer(argument))
    }

    /// An out-parameter over Rust memory.
    pub(crate) fn to(target: &'o mut T) -> Out<'o, T> {
        Out { target: NonNull::from(target), _borrow: PhantomData }
    }

    /// The raw target, for the opaque-storage helpers.
    pub(crate) fn as_ptr(&self) -> *mut T {
        self.target.as_ptr()
    }

    /// Write `value`, then lend the written value back, for filling a part of it in
    /// place (a view's embedded identity: no second copy of it on the stack).
    pub(crate) fn write_then(self, value: T) -> &'o mut T {
        // SAFETY: as in `write`; after it the target is initialised, and `'o` is the
        // exclusive borrow `new`'s contract (or `to`'s borrow) grants.
        unsafe {
            self.target.as_ptr().write(value);
            &mut *self.target.as_ptr()
        }
    }

    /// Write `value`.
    pub(crate) fn write(self, value: T) {
        // SAFETY: `new`'s contract (or `to`'s borrow): aligned, writable and exclusive
        // for 'o; `write` neither reads nor drops what was there.
        unsafe { self.target.as_ptr().write(value) }
    }
}

/// Check several out-parameters; all must be non-NULL.
#[cfg(feature = "cluster")]
macro_rules! outs {
    ($($ptr:ident),+ $(,)?) => {
        ($($crate::out::Out::new($ptr, stringify!($ptr))?),+)
    };
}
#[cfg(feature = "cluster")]
pub(crate) use outs;
