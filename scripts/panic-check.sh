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
for file in "$vectors"/frames/*.bin "$vectors"/migration/*; do
    for config in 0 3 6 31 255; do
        { printf "\\$(printf %03o "$config")"; cat "$file"; } | run
    done
done
python3 - "$vectors" >"$target/texts" <<'PY'
import json, os, sys
for name, key in (("envelopes.jsonl", "json"), ("identities.jsonl", "canonical_json"), ("metadata.jsonl", "json")):
    for line in open(os.path.join(sys.argv[1], name), encoding="utf-8"):
        text = json.loads(line).get(key)
        if isinstance(text, str):
            print(json.dumps(text))
PY
while IFS= read -r line; do
    python3 -c 'import json,sys; sys.stdout.write(" " + json.loads(sys.argv[1]))' "$line" | run
done < <(head -n 60 "$target/texts")
echo "panic-check: linked with no reachable panic; $runs runs over the vectors, no crash"
