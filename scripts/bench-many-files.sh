#!/usr/bin/env bash
# `membrane-frame verify` over many small files: files per second and peak RSS
# (GNU time) for 200 000 hard links to 4 KiB-payload frames in one flat directory,
# against the same binary verifying one file. BEFORE=/path/to/an/older/membrane-frame
# measures that binary too, interleaved round by round (the machine is shared: the best
# of REPEAT rounds counts for each).
#
# Usage: bash scripts/bench-many-files.sh
# Knobs: FILES (200000), REPEAT (3), BENCH_DIR (/tmp/membrane-many), BEFORE, KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=${FILES:-200000}
REPEAT=${REPEAT:-3}
BENCH_DIR=${BENCH_DIR:-/tmp/membrane-many}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(pwd)/target}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

cargo build --release --quiet -p membrane-frame-cli --bin membrane-frame
BIN=$CARGO_TARGET_DIR/release/membrane-frame
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$BENCH_DIR"; }
trap cleanup EXIT

if [ ! -d "$BENCH_DIR/flat" ]; then
    mkdir -p "$BENCH_DIR"
    "$BIN" demo --out "$BENCH_DIR/one" --frames 1 --frame-size 4KiB --only-valid --no-verify >/dev/null
    python3 - "$BENCH_DIR" "$FILES" <<'EOF'
import os, shutil, sys
root, count = sys.argv[1], int(sys.argv[2])
one = os.path.join(root, "one", os.listdir(os.path.join(root, "one"))[0])
flat = os.path.join(root, "flat")
os.makedirs(flat)
source = None
for i in range(count):
    if i % 50000 == 0:  # ext4: at most 65 000 links to one inode
        source = os.path.join(root, f"source-{i}.frame")
        shutil.copy(one, source)
    os.link(source, os.path.join(flat, f"f{i:06}.frame"))
EOF
fi
cat "$BENCH_DIR"/source-*.frame >/dev/null
ls -f "$BENCH_DIR/flat" >/dev/null # warm the directory cache

measure() { # measure BIN DIR: prints "seconds peak_kib"
    local out=$BENCH_DIR/time.txt
    /usr/bin/time -f "%e %M" -o "$out" "$1" verify "$2" >/dev/null || true
    cat "$out"
}

rate() { awk -v n="$FILES" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? a : b }'; }

printf '%-8s %-7s %8s %9s %13s\n' binary round seconds files/s "peak RSS KiB"
best_now=999999; best_before=999999
for round in $(seq 1 "$REPEAT"); do
    read -r s kib < <(measure "$BIN" "$BENCH_DIR/flat")
    printf '%-8s %-7s %8s %9s %13s\n' now "$round" "$s" "$(rate "$s")" "$kib"
    best_now=$(least "$s" "$best_now")
    if [ -n "${BEFORE:-}" ]; then
        read -r s kib < <(measure "$BEFORE" "$BENCH_DIR/flat")
        printf '%-8s %-7s %8s %9s %13s\n' before "$round" "$s" "$(rate "$s")" "$kib"
        best_before=$(least "$s" "$best_before")
    fi
done
read -r s kib < <(measure "$BIN" "$BENCH_DIR/one")
printf '%-8s %-7s %8s %9s %13s\n' now "1 file" "$s" - "$kib"
printf 'best: now %s files/s' "$(rate "$best_now")"
if [ -n "${BEFORE:-}" ]; then
    printf ', before %s files/s (now %sx before)' "$(rate "$best_before")" \
        "$(awk -v a="$best_before" -v b="$best_now" 'BEGIN { printf "%.2f", a / b }')"
fi
echo
