"""Strict, zero-copy reader and writer of Membrane v5 KV-cache frames and envelopes.

The format logic is the membrane-frame Rust library (SPEC.md); this package is its
Python face. Buffers are read in place (``bytes``, ``bytearray``, ``memoryview``,
``mmap.mmap``, NumPy arrays), payloads come back as ``memoryview`` objects into them,
and hashing and parsing run without the GIL, so threads verify in parallel.

>>> import membrane_frame as mf
>>> identity = mf.PayloadIdentity(
...     "0" * 64, "llama-3-8b", "main", "llama-3-8b", "main",
...     (0, 31), (-1, -1), (0, 127), "float16", [1, 1, 1, 1, 4])
>>> frame = mf.canonicalize(identity, b"12345678", fill_payload_hash=True)
>>> mf.check_frame(frame, level="full")
'ok'
>>> ident, payload = mf.parse_canonical(frame)
>>> bytes(payload)
b'12345678'
"""

from ._errors import CorruptPayloadError, MembraneError, SchemaError, UsageError
from ._native import (
    Frame,
    FragmentMessage,
    PayloadIdentity,
    RefCount,
    Snapshot,
    SnapshotStore,
    StreamVerifier,
    TombstoneTable,
    VerifyFiles,
    __version__,
    canonicalize,
    check_envelope,
    check_frame,
    epoch_accepted,
    fingerprint_compat,
    frame_magic_version,
    frame_parts,
    hlc_merge,
    hlc_pack,
    hlc_tick,
    hlc_unpack,
    migrate_envelope,
    migrate_frame,
    migrate_frame_in_place,
    parse_canonical,
    plan_migration,
    verify_files,
)
from ._writer import write_frame

__all__ = [
    "CorruptPayloadError",
    "Frame",
    "FragmentMessage",
    "MembraneError",
    "PayloadIdentity",
    "RefCount",
    "SchemaError",
    "Snapshot",
    "SnapshotStore",
    "StreamVerifier",
    "TombstoneTable",
    "UsageError",
    "VerifyFiles",
    "__version__",
    "canonicalize",
    "check_envelope",
    "check_frame",
    "epoch_accepted",
    "fingerprint_compat",
    "frame_magic_version",
    "frame_parts",
    "hlc_merge",
    "hlc_pack",
    "hlc_tick",
    "hlc_unpack",
    "migrate_envelope",
    "migrate_frame",
    "migrate_frame_in_place",
    "parse_canonical",
    "plan_migration",
    "verify_files",
    "write_frame",
]
