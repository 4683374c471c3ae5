#!/usr/bin/env python3
"""The lines of core source files that no test runs, from an lcov file.

A mutant on a line no test runs is missed for certain, and each missed mutant costs the
cargo-mutants run a whole suite (30-90 s here). Listing those lines first lets the tests
be written before the run reaches them (docs/reliability.md, section 6):

    MEMBRANE_VECTORS=/abs/path/vectors CARGO_TARGET_DIR=target-cov \\
        cargo llvm-cov --release -p membrane-frame --lcov --output-path cov.lcov
    scripts/uncovered-lines.py cov.lcov src/snapshot/mod.rs src/tombstone/*.rs

(`cargo install cargo-llvm-cov --locked` and `rustup component add llvm-tools-preview`
first.) Doc tests are not counted (they need nightly), so an item only its example runs
is listed too: the nextest pass of scripts/mutants.sh misses it as well. Lines after a
file's first `#[cfg(test)]` are left out.
"""

import collections
import os
import sys


def uncovered(lcov_path, wanted):
    """{file: [line, ...]} of the lines with a zero count, for the files in `wanted`."""
    lines = collections.defaultdict(list)
    current = None
    with open(lcov_path) as lcov:
        for record in lcov:
            record = record.strip()
            if record.startswith("SF:"):
                current = os.path.relpath(record[3:])
            elif record.startswith("DA:") and current in wanted:
                number, count = record[3:].split(",")[:2]
                if count == "0":
                    lines[current].append(int(number))
    return lines


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: uncovered-lines.py LCOV FILE...  (run from the repository root)")
    wanted = {os.path.relpath(path) for path in sys.argv[2:]}
    found = uncovered(sys.argv[1], wanted)
    total = 0
    for path in sorted(found):
        source = open(path).read().split("\n")
        test_start = next((i + 1 for i, text in enumerate(source) if text.strip() == "#[cfg(test)]"), len(source) + 1)
        numbers = [n for n in found[path] if n < test_start]
        if not numbers:
            continue
        total += len(numbers)
        print(f"== {path}: {len(numbers)} lines no test runs")
        for n in numbers:
            print(f"{n:5}: {source[n - 1].strip()[:110]}")
    print(f"{total} uncovered lines in {len(wanted)} files")


if __name__ == "__main__":
    main()
