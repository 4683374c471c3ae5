#!/usr/bin/env python3
"""Benchmarks of the Python package, each beside a baseline measured in the same process.

1. Trailer verification of a 64 MiB frame (`check_frame`) against `hashlib.sha256` over
   the payload alone (the least any verifier must do).
2. Identity-level parse of vectors/frames/docs-hello.bin (`Frame.parse(level="identity")`)
   against the same checks written in Python with `struct` and `json.loads`.
3. Two threads verifying 64 MiB frames against one thread verifying the same frames.

Rounds interleave the configurations and the best (least) time of each counts: the
machine is shared. Usage (with the package installed, e.g. by scripts/check.sh):

    python3 scripts/bench-python.py            # ROUNDS=7, MEMBRANE_VECTORS=../shared/vectors
"""

import hashlib
import json
import os
import pathlib
import struct
import threading
import time

import membrane_frame as mf

ROUNDS = int(os.environ.get("ROUNDS", "7"))
VECTORS = pathlib.Path(os.environ.get("MEMBRANE_VECTORS", pathlib.Path(__file__).resolve().parents[2] / "shared" / "vectors"))
FIELDS = ["payload_hash", "model_id", "model_revision", "tokenizer_name", "tokenizer_revision",
          "layer_range", "head_range", "token_span", "dtype", "shape"]
DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "fp8_e4m3", "fp8_e5m2", "nf4"}


def best(fn, rounds, inner=1):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return min(times)


def python_identity_level(data):
    """The identity-level checks of SPEC section 1.1 in plain Python (what a node does today)."""
    if len(data) < 22:
        raise ValueError("too_short")
    magic, schema, reserved, identity_len = struct.unpack_from("<4sHII", data, 0)
    if magic != b"\xc0\xde\x01\x05":
        raise ValueError("bad_magic")
    if schema != 5 or reserved != 0:
        raise ValueError("schema")
    if 14 + identity_len + 8 > len(data) or identity_len > 65536:
        raise ValueError("identity_overrun")

    def no_duplicates(pairs):
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("identity_json")
        return dict(pairs)

    identity = json.loads(data[14 : 14 + identity_len].decode("utf-8"), object_pairs_hook=no_duplicates)
    if not isinstance(identity, dict) or sorted(identity) != sorted(FIELDS):
        raise ValueError("identity_field")
    for key in FIELDS[:5]:
        if not isinstance(identity[key], str):
            raise ValueError("identity_field")
    if not identity["payload_hash"]:
        raise ValueError("identity_field")
    for key in ("layer_range", "head_range", "token_span"):
        value = identity[key]
        if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
            raise ValueError("identity_field")
        if not (value == [-1, -1] and key == "head_range") and not 0 <= value[0] <= value[1] < 2**63:
            raise ValueError("identity_field")
    if identity["dtype"] not in DTYPES:
        raise ValueError("identity_field")
    shape = identity["shape"]
    if not (isinstance(shape, list) and 1 <= len(shape) <= 16 and all(type(v) is int for v in shape)):
        raise ValueError("identity_field")
    (payload_len,) = struct.unpack_from("<Q", data, 14 + identity_len)
    if 30 + identity_len + payload_len != len(data):
        raise ValueError("payload_overrun")
    return identity, payload_len


def main():
    identity = mf.PayloadIdentity("0" * 64, "llama-3-8b", "main", "llama-3-8b", "main",
                                  (0, 31), (-1, -1), (0, 127), "float16", [2, 32, 8, 128, 64])
    payload = os.urandom(64 << 20)
    frame = mf.canonicalize(identity, payload, fill_payload_hash=True)
    assert mf.check_frame(frame) == "ok"
    hello = (VECTORS / "frames" / "docs-hello.bin").read_bytes()
    python_identity_level(hello)
    mf.Frame.parse(hello, level="identity")

    frames = [frame] * 8
    def one_thread():
        for f in frames:
            mf.check_frame(f)
    def two_threads():
        threads = [threading.Thread(target=lambda part=part: [mf.check_frame(f) for f in part])
                   for part in (frames[:4], frames[4:])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    results = {key: [] for key in ("mf", "hashlib", "mf-id", "py-id", "1t", "2t")}
    view = memoryview(payload)
    for _ in range(ROUNDS):
        results["hashlib"].append(best(lambda: hashlib.sha256(view).digest(), 1))
        results["mf"].append(best(lambda: mf.check_frame(frame), 1))
        results["py-id"].append(best(lambda: python_identity_level(hello), 1, inner=20000))
        results["mf-id"].append(best(lambda: mf.Frame.parse(hello, "identity"), 1, inner=20000))
        results["1t"].append(best(one_thread, 1))
        results["2t"].append(best(two_threads, 1))
    t = {key: min(values) for key, values in results.items()}
    gib = len(payload) / 2**30
    print(f"rounds: {ROUNDS} (best of each), CPython {'.'.join(map(str, __import__('sys').version_info[:3]))}, {os.cpu_count()} CPUs")
    print()
    print("| measurement | membrane_frame | baseline (same process) | ratio | target |")
    print("|---|---|---|---|---|")
    print(f"| trailer verification, 64 MiB frame | {t['mf']*1e3:.1f} ms ({gib/t['mf']:.2f} GiB/s) | "
          f"hashlib.sha256 of the payload: {t['hashlib']*1e3:.1f} ms ({gib/t['hashlib']:.2f} GiB/s) | "
          f"{t['hashlib']/t['mf']:.2f}x | >= 0.95x |")
    print(f"| identity-level parse, docs-hello.bin | {t['mf-id']*1e6:.2f} us | "
          f"struct + json.loads + checks: {t['py-id']*1e6:.2f} us | {t['py-id']/t['mf-id']:.1f}x | >= 20x |")
    print(f"| 8 x 64 MiB frames, trailer level | 2 threads: {t['2t']*1e3:.0f} ms | "
          f"1 thread: {t['1t']*1e3:.0f} ms | {t['1t']/t['2t']:.2f}x | >= 1.8x |")


if __name__ == "__main__":
    main()
