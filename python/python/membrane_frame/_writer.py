"""``write_frame``: a frame written to a file or descriptor without copying the payload."""

import os
from typing import BinaryIO, Optional, Union

from ._native import PayloadIdentity, frame_parts


def write_frame(
    dest: Union[int, BinaryIO],
    identity: PayloadIdentity,
    payload,
    fill_payload_hash: bool = False,
    align: int = 1,
    base: Optional[int] = None,
) -> int:
    """Write the frame for ``payload`` to ``dest`` without copying the payload.

    ``dest`` is a file descriptor (written with ``os.writev``, retried until every byte
    is out) or a binary file object (``write`` is called with the head, a memoryview of
    the payload, and the trailer). Returns the number of bytes written.

    With ``align`` (a power of two up to 4096), the payload starts at a multiple of
    ``align`` bytes in the file (SPEC §1.5): ``base`` is where the frame starts, by
    default ``dest``'s current position (0 where it has none, as for a pipe), so frames
    appended one after another each get an aligned payload.
    """
    if base is None:
        base = _position(dest) if align != 1 else 0
    head, trailer = frame_parts(identity, payload, fill_payload_hash, align, base)
    parts = [memoryview(head), memoryview(payload).cast("B"), memoryview(trailer)]
    total = sum(len(part) for part in parts)
    if isinstance(dest, int):
        while parts:
            written = os.writev(dest, parts)
            while parts and written >= len(parts[0]):
                written -= len(parts[0])
                parts.pop(0)
            if parts and written:
                parts[0] = parts[0][written:]
        return total
    for part in parts:
        view = part
        while len(view):
            written = dest.write(view)
            # io objects return the count; a plain writer returning None took it all.
            view = view[len(view) if written is None else written :]
    return total


def _position(dest: Union[int, BinaryIO]) -> int:
    """The offset the next write to ``dest`` lands at; 0 where it cannot be told."""
    try:
        return os.lseek(dest, 0, os.SEEK_CUR) if isinstance(dest, int) else dest.tell()
    except (OSError, ValueError, AttributeError):
        return 0
