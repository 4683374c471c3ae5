"""``membrane.hlc``: the hybrid logical clock (SPEC section 9).

``hlc = (physical_ms << 16) | logical``, ordered as unsigned integers. The arithmetic
is the library's: ``merge`` returns a clock strictly greater than both inputs on every
path (the reference returned ``logical=0`` when the observed physical part was newer,
a value below the observed one; SPEC 9 bumps the logical part), and values that do not
fit 48 + 16 bits raise ``UsageError`` (a ``ValueError``) instead of being masked.
"""

import threading
import time
from dataclasses import dataclass
from typing import Optional, Union

from .. import _native


@dataclass(frozen=True)
class HLC:
    """A decoded clock value: milliseconds since the epoch and a logical counter."""

    physical_ms: int
    logical: int


def unpack(value: int) -> HLC:
    """Decode a packed 64-bit value."""
    physical_ms, logical = _native.hlc_unpack(value)
    return HLC(physical_ms=physical_ms, logical=logical)


def pack(clock: HLC) -> int:
    """Encode ``clock`` as its 64-bit value."""
    return _native.hlc_pack(clock.physical_ms, clock.logical)


def _now_ms() -> int:
    return int(time.time() * 1000)


def tick(previous: HLC) -> HLC:
    """The next local clock after ``previous``, at the current wall-clock time."""
    return unpack(_native.hlc_tick(pack(previous), _now_ms()))


def merge(local: HLC, observed: Union[int, HLC]) -> HLC:
    """The local clock after observing ``observed`` (packed or decoded).

    Deterministic, as the reference's: the wall clock is not read.
    """
    remote = observed if isinstance(observed, int) else pack(observed)
    return unpack(_native.hlc_merge(pack(local), remote, 0))


def compare(a: int, b: int) -> int:
    """-1, 0 or 1 as ``a`` is before, equal to or after ``b``."""
    return (a > b) - (a < b)


class Clock:
    """A process's clock: thread-safe ``tick`` and ``merge`` of a shared state."""

    def __init__(self, seed: Optional[HLC] = None) -> None:
        self._state = seed if seed is not None else HLC(physical_ms=_now_ms(), logical=0)
        self._lock = threading.Lock()

    def current(self) -> HLC:
        """The current state, not advanced."""
        with self._lock:
            return self._state

    def pack_current(self) -> int:
        """The current state, packed."""
        return pack(self.current())

    def tick(self) -> int:
        """Advance for a local event; the new packed value."""
        with self._lock:
            self._state = tick(self._state)
            return pack(self._state)

    def merge(self, observed: Union[int, HLC]) -> int:
        """Advance past an observed value; the new packed value."""
        with self._lock:
            self._state = merge(self._state, observed)
            return pack(self._state)


__all__ = ["HLC", "Clock", "compare", "merge", "pack", "tick", "unpack"]
