#!/usr/bin/env python3
"""Baseline for scripts/bench-verify.sh: the trailer-level checks of SPEC section 1.1 as
a plain Python loop with `struct` and `hashlib`, one file after another, one process.

For every file under the given paths: header (magic, schema, reserved), identity length
and limit, the identity as JSON with the ten fields and their rules, payload length,
exact length, and the trailer (first 8 bytes of SHA-256 of the payload, read in 1 MiB
chunks). Prints one JSON summary line: files, ok, invalid, bytes, seconds, codes.

Run: python3 scripts/verify_baseline.py DIR...
"""

import hashlib
import json
import os
import struct
import sys
import time

MAGIC_V5 = b"\xc0\xde\x01\x05"
LEGACY = (b"\xc0\xde\x01\x04", b"\xc0\xde\x01\x02")
IDENTITY_LIMIT = 64 * 1024
CHUNK = 1 << 20
DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "fp8_e4m3", "fp8_e5m2", "nf4"}
STRINGS = ("payload_hash", "model_id", "model_revision", "tokenizer_name", "tokenizer_revision")
I64 = (-(1 << 63), (1 << 63) - 1)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and I64[0] <= value <= I64[1]


def identity_ok(identity):
    if not isinstance(identity, dict) or set(identity) != set(STRINGS) | {
            "layer_range", "head_range", "token_span", "dtype", "shape"}:
        return False
    if not all(isinstance(identity[k], str) for k in STRINGS) or identity["payload_hash"] == "":
        return False
    for key in ("layer_range", "head_range", "token_span"):
        pair = identity[key]
        if not (isinstance(pair, list) and len(pair) == 2 and all(is_int(v) for v in pair)):
            return False
        if key == "head_range" and pair == [-1, -1]:
            continue
        if not 0 <= pair[0] <= pair[1]:
            return False
    shape = identity["shape"]
    if not (isinstance(shape, list) and 1 <= len(shape) <= 16 and all(is_int(v) for v in shape)):
        return False
    return identity["dtype"] in DTYPES


def verify(path):
    """The trailer-level verdict on one file: 'ok' or a SPEC section 8 code."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(22)
        if len(head) < 22:
            return "too_short"
        magic, schema, reserved, identity_len = struct.unpack("<4sHII", head[:14])
        if magic in LEGACY:
            return "legacy_frame"
        if magic != MAGIC_V5:
            return "bad_magic"
        if schema != 5:
            return "schema_mismatch"
        if reserved != 0:
            return "reserved_nonzero"
        if 14 + identity_len + 8 > size:
            return "identity_overrun"
        if identity_len > IDENTITY_LIMIT:
            return "identity_too_large"
        f.seek(14)
        raw = f.read(identity_len)
        try:
            identity = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates,
                                  parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError:
            return "identity_json"
        if not isinstance(identity, dict):
            return "identity_json"
        if not identity_ok(identity):
            return "identity_field"
        (payload_len,) = struct.unpack("<Q", f.read(8))
        total = 30 + identity_len + payload_len
        if total > size:
            return "payload_overrun"
        if total < size:
            return "trailing_bytes"
        digest = hashlib.sha256()
        remaining = payload_len
        while remaining:
            chunk = f.read(min(CHUNK, remaining))
            if not chunk:
                return "payload_overrun"
            digest.update(chunk)
            remaining -= len(chunk)
        if f.read(8) != digest.digest()[:8]:
            return "trailer_mismatch"
    return "ok"


def files(paths):
    for root in paths:
        if os.path.isfile(root):
            yield root
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                yield os.path.join(dirpath, name)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    start = time.perf_counter()
    codes = {}
    total = 0
    for path in files(sys.argv[1:]):
        if not os.path.isfile(path):
            continue
        try:
            code = verify(path)
            total += os.path.getsize(path)
        except OSError:
            code = "io"
        codes[code] = codes.get(code, 0) + 1
    seconds = time.perf_counter() - start
    count = sum(codes.values())
    print(json.dumps({"baseline": "python", "files": count, "ok": codes.get("ok", 0),
                      "invalid": count - codes.get("ok", 0), "bytes": total,
                      "seconds": round(seconds, 6), "codes": codes}))
    return 0 if codes.get("ok", 0) == count else 1


if __name__ == "__main__":
    sys.exit(main())
