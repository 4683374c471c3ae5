"""``membrane.canonical``: the v5 canonical frame (SPEC section 1).

``canonicalize`` writes the reference's bytes exactly; ``parse_canonical`` verifies at
the trailer level in exact mode, like the reference's, and returns the payload as
``bytes`` (``membrane_frame.parse_canonical`` returns a zero-copy ``memoryview``).
"""

from typing import Tuple

from .. import _native
from .._native import PayloadIdentity

MAGIC: bytes = _native.MAGIC
HEADER_LEN: int = _native.HEADER_LEN
TRAILER_LEN: int = _native.TRAILER_LEN
CANONICAL_SCHEMA_VERSION: int = _native.CANONICAL_SCHEMA_VERSION


def canonicalize(identity: PayloadIdentity, raw: bytes) -> bytes:
    """The frame of ``identity`` and the payload ``raw`` (any buffer)."""
    return _native.canonicalize(identity, raw)


def parse_canonical(buf: bytes) -> Tuple[PayloadIdentity, bytes]:
    """Verify a frame and return ``(identity, payload)``.

    Raises ``SchemaError`` (a v2 or v4 frame is ``legacy_frame``, SPEC 1.1) or
    ``CorruptPayloadError``.
    """
    identity, payload = _native.parse_canonical(buf)
    return identity, bytes(payload)


__all__ = [
    "CANONICAL_SCHEMA_VERSION",
    "HEADER_LEN",
    "MAGIC",
    "TRAILER_LEN",
    "canonicalize",
    "parse_canonical",
]
