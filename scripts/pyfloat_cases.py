#!/usr/bin/env python3
"""Expectations for tests/pyfloat.rs: Python's repr(float) of many doubles.

Usage: pyfloat_cases.py SEED COUNT

Prints one line per case, `<16 hex digits of the IEEE-754 bits> <repr(x)>`:
edge values (zeros, subnormals, extremes, every power of two and of ten with both
neighbours, the positional/scientific boundaries), then COUNT doubles with uniformly
random bit patterns (so every binary exponent is equally likely), then COUNT // 5
dyadic values with short exact expansions (where two shortest candidates can tie), then
COUNT // 5 short decimals (few significant digits, any exponent) which exercise the
shortest-digit choice. Deterministic for a given SEED.
"""
import math
import random
import struct
import sys


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def with_neighbours(x: float):
    yield x
    if math.isfinite(x):
        yield math.nextafter(x, math.inf)
        yield math.nextafter(x, -math.inf)


def edge_values():
    fixed = [
        0.0, -0.0, 5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
        1.7976931348623157e308, 0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 0.5, 0.87, 60.0,
        1e-4, 1e-5, 9.999999999999999e-5, 1e15, 1e16, 9999999999999998.0, 9007199254740993.0,
        123456789012345678.0, 1234567890123456.0, 1e22, 1e23, 2.5e-05, 1e-07, math.pi, math.e,
        float(2**53), float(2**53 + 2), float(2**63), float(2**64),
    ]
    for x in fixed:
        yield from with_neighbours(x)
    for e in range(-1074, 1024):
        yield from with_neighbours(math.ldexp(1.0, e))
    for e in range(-323, 309):
        yield from with_neighbours(float(f"1e{e}"))
        yield from with_neighbours(float(f"5e{e}"))


def main() -> None:
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    if sys.float_repr_style != "short":
        sys.exit("this Python does not use the short float repr")
    rng = random.Random(seed)
    out = []

    def emit(x: float) -> None:
        if math.isfinite(x):
            for v in (x, -x):
                out.append(f"{bits(v):016x} {v!r}")

    for x in edge_values():
        emit(x)
    produced = 0
    while produced < count:
        x = from_bits(rng.getrandbits(64))
        if math.isfinite(x):
            out.append(f"{bits(x):016x} {x!r}")
            produced += 1
    for _ in range(count // 5):
        # Dyadic values near the 17-digit limit: where exact ties between two shortest
        # candidates happen (CPython breaks them to the even digit).
        mantissa = rng.getrandbits(rng.randint(1, 53)) | 1
        if rng.random() < 0.5:
            mantissa *= 5 ** rng.randint(1, 22)
            while mantissa >= 2**53:
                mantissa //= 2
        emit(math.ldexp(float(mantissa), rng.randint(-90, 60)))
    for _ in range(count // 5):
        digits = rng.randint(1, 17)
        mantissa = rng.randrange(10 ** (digits - 1), 10**digits)
        x = float(f"{mantissa}e{rng.randint(-340, 310)}")
        emit(x)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
