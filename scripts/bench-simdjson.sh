#!/usr/bin/env bash
# membrane-frame's readers against simdjson on our own documents, in one process
# (c-examples/bench_simdjson.cpp): envelopes in four spellings, identities, a 10 MiB
# cluster snapshot. simdjson is fetched here, never committed: its amalgamation from the
# pinned source distribution of pysimdjson 7.0.2 (simdjson 3.12.3), checked by SHA-256.
# The inputs come from the vectors (scripts/bench_simdjson_inputs.py).
#
#   bash scripts/bench-simdjson.sh [ROUNDS]     (default 21; CI runs 3)
#
# Environment: MEMBRANE_VECTORS (default ../shared/vectors), CARGO_TARGET_DIR, CXX.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-21}
target=${CARGO_TARGET_DIR:-$(pwd)/target}
case $target in /*) ;; *) target=$(pwd)/$target ;; esac
work=$target/simdjson-bench
sdist=pysimdjson-7.0.2.tar.gz
sdist_sha256=44cf276e48912a3b9c7ca362c14da8420a7ac15a9f1a16ec95becff86db3904a
mkdir -p "$work"

if [ ! -f "$work/simdjson/simdjson.h" ]; then
    if [ ! -f "$work/$sdist" ]; then
        # pip prepares the sdist's metadata before it saves the file. In an isolated env
        # that needs setuptools >= 74 (pysimdjson's pyproject.toml has ext-modules), which
        # pip fetches; some pip versions then save nothing, and the second try builds the
        # metadata with the setuptools installed here instead.
        download() {
            python3 -m pip download --quiet --disable-pip-version-check --no-binary :all: \
                --no-deps "$@" pysimdjson==7.0.2 -d "$work" >&2 || true
        }
        download
        [ -f "$work/$sdist" ] || download --no-build-isolation
    fi
    echo "$sdist_sha256  $work/$sdist" | sha256sum -c --quiet - || { echo "bench-simdjson: $sdist checksum differs"; exit 1; }
    rm -rf "$work/simdjson"
    mkdir -p "$work/simdjson"
    tar -xzf "$work/$sdist" -C "$work/simdjson" --strip-components=2 \
        pysimdjson-7.0.2/simdjson/simdjson.h pysimdjson-7.0.2/simdjson/simdjson.cpp
fi

python3 scripts/bench_simdjson_inputs.py "$work/inputs" >&2
make -s -C c-examples lib >&2
lib=$target/release/libmembrane_frame.a
cxx=${CXX:-c++}
# simdjson chooses its kernel at run time (as the library does); neither side gets -march.
if [ ! -f "$work/simdjson.o" ] || [ "$work/simdjson/simdjson.cpp" -nt "$work/simdjson.o" ]; then
    "$cxx" -std=c++17 -O3 -DNDEBUG -c "$work/simdjson/simdjson.cpp" -o "$work/simdjson.o"
fi
"$cxx" -std=c++17 -O3 -DNDEBUG -Wall -Wextra -Iinclude -I"$work/simdjson" c-examples/bench_simdjson.cpp \
    "$work/simdjson.o" "$lib" -lpthread -ldl -lm -o "$work/bench_simdjson"
echo "bench-simdjson: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$work/bench_simdjson" "$work/inputs" "$rounds"
