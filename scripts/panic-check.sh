#!/usr/bin/env bash
# Panic-freedom proof (docs/reliability.md): build panic-check/ — a #![no_std] LTO
# program that runs the frame, identity, envelope, JSON, snapshot and tombstone readers
# and whose panic handler calls a symbol nobody defines. A successful link proves that
# no panic is reachable from those paths; a failed one names the missing symbol.
# Then run it over every vector as a smoke test (it must not crash).
set -uo pipefail
cd "$(dirname "$0")/.."
vectors=${MEMBRANE_VECTORS:-$(pwd)/../shared/vectors}
target=${PANIC_CHECK_TARGET_DIR:-$(pwd)/target/panic-check}

if ! (cd panic-check && CARGO_TARGET_DIR=$target cargo build --release --quiet); then
    echo "panic-check: DID NOT LINK: a panic is reachable from the read/verify paths."
    echo "panic-check: find it with: cd panic-check && RUSTFLAGS='-C debuginfo=line-tables-only'"
    echo "panic-check:   cargo rustc --release -- --emit=llvm-ir, then look for calls to 'panicking'"
    exit 1
fi
binary=$target/release/membrane-frame-panic-check
runs=0
run() {
    # The first byte picks level, mode, limits and chunk size; the exit status is a
    # checksum (0..63). Anything above 128 is a signal: a crash.
    "$binary"
    local rc=$?
    runs=$((runs + 1))
    if [ "$rc" -ge 128 ]; then
        echo "panic-check: crashed (status $rc)"
        exit 1
    fi
}
inputs=$target/inputs
rm -rf "$inputs" && mkdir -p "$inputs"
python3 - "$vectors" "$inputs" <<'PY'
import json, os, sys
vectors, out = sys.argv[1], sys.argv[2]
n = 0
def put(data):
    global n
    for config in (0, 3, 6, 31, 255):
        with open(os.path.join(out, "%05d" % n), "wb") as f:
            f.write(bytes([config]) + data)
        n += 1
for folder in ("frames", "migration"):
    for name in sorted(os.listdir(os.path.join(vectors, folder))):
        put(open(os.path.join(vectors, folder, name), "rb").read())
for name, key in (("envelopes.jsonl", "json"), ("identities.jsonl", "canonical_json"), ("metadata.jsonl", "json")):
    for line in open(os.path.join(vectors, name), encoding="utf-8"):
        text = json.loads(line).get(key)
        if isinstance(text, str):
            put(text.encode("utf-8"))
PY
for input in "$inputs"/*; do
    run <"$input"
done
echo "panic-check: linked with no reachable panic; $runs runs over the vectors, no crash"
