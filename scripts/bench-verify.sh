#!/usr/bin/env bash
# Bulk verification benchmark for `membrane-frame verify` (the CLI), in one run beside
# its baselines over the same bytes:
#   (a) raw single-core sha2 (cli/examples/sha2_baseline.rs): the files read through a
#       128 KiB buffer and hashed ("sha2-read", the baseline the target is set against), and the same bytes hashed from memory
#       ("sha2-memory", the pure hashing speed of one core);
#   (b) sha256sum over the same files;
#   (c) a plain Python loop doing the same trailer-level checks (scripts/verify_baseline.py);
# and `membrane-frame verify --level trailer` on 1 core and on all cores (the default
# maps large files 1 MiB at a time; also with the hidden --io read, which reads them
# through buffers, and --io mmap, whole-file maps into the one-shot reader). Then peak
# RSS (GNU time -v) for the same 256 MiB as 1 MiB, 16 MiB and 256 MiB frames: it must
# not grow with the frame size.
#
# Usage: bash scripts/bench-verify.sh      (a 2 GiB corpus of 16 MiB frames under /tmp)
# Knobs: BENCH_DIR (/tmp/membrane-bench), FRAMES (128), FRAME_SIZE (16MiB), REPEAT (5),
#        QUIET (90: before each round wait up to QUIET_WAIT=120 s for the CPUs to be at
#        least this % idle; 0 disables), KEEP=1 keeps the corpora.
# Every configuration runs once per round, rounds interleave them, and the best (least)
# time of the rounds counts, so load from other processes biases no configuration more
# than another. All runs read a warm page cache.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/membrane-bench}
FRAMES=${FRAMES:-128}
FRAME_SIZE=${FRAME_SIZE:-16MiB}
REPEAT=${REPEAT:-5}
QUIET=${QUIET:-90}
QUIET_WAIT=${QUIET_WAIT:-120}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(pwd)/target}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v sha256sum >/dev/null || { echo "needs sha256sum (coreutils)" >&2; exit 2; }

cargo build --release --quiet -p membrane-frame-cli --bin membrane-frame --example sha2_baseline
BIN=$CARGO_TARGET_DIR/release/membrane-frame
SHA2=$CARGO_TARGET_DIR/release/examples/sha2_baseline
CORES=$(nproc)

cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$BENCH_DIR"; }
trap cleanup EXIT
mkdir -p "$BENCH_DIR"

corpus() { # corpus NAME FRAMES SIZE: a directory of valid frames, read once (warm cache)
    local dir=$BENCH_DIR/$1
    [ -d "$dir" ] || "$BIN" demo --out "$dir" --frames "$2" --frame-size "$3" --only-valid --no-verify >/dev/null
    cat "$dir"/*.frame >/dev/null
    echo "$dir"
}

idle_percent() { # CPU idle % over one second, from /proc/stat
    local a b
    a=$(awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8, $5+$6}' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8, $5+$6}' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.0f", 100 * (y[2] - x[2]) / (y[1] - x[1]) }'
}

wait_quiet() { # wait (bounded) for an idle machine; prints the idle % found
    local idle waited=0
    idle=$(idle_percent)
    while [ "$QUIET" -gt 0 ] && [ "$idle" -lt "$QUIET" ] && [ "$waited" -lt "$QUIET_WAIT" ]; do
        sleep 2
        waited=$((waited + 3))
        idle=$(idle_percent)
    done
    echo "$idle"
}

now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 < a + 0) print b; else print a }'; }
gib() { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1073741824 }'; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.3f", n / 1073741824 / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
peak_rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'; }

MAIN=$(corpus main "$FRAMES" "$FRAME_SIZE")
BYTES=$(cat "$MAIN"/*.frame | wc -c)
echo "corpus: $FRAMES frames of $FRAME_SIZE payload, $(gib "$BYTES") GiB in $MAIN"
echo "machine: $CORES cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "best of $REPEAT interleaved rounds, warm page cache"

# Sanity: every baseline and the CLI accept every frame.
python3 scripts/verify_baseline.py "$MAIN" | grep -q "\"ok\": $FRAMES," || { echo "the Python baseline rejects the corpus" >&2; exit 1; }
"$BIN" verify --json --progress never "$MAIN" | tail -1 | grep -q '"exit_status": 0' || { echo "verify rejects the corpus" >&2; exit 1; }

sha2_read=""; sha2_mem=""; t_sum=""; t_py=""; t_one=""; t_all=""; t_read=""; t_mmap=""; idles=""
for round in $(seq "$REPEAT"); do
    idles="$idles $(wait_quiet)%"
    out=$("$SHA2" "$MAIN"/*.frame)
    sha2_read=$(min "$sha2_read" "$(echo "$out" | sed -n 's/.*"sha2-read".*"seconds": \([0-9.]*\).*/\1/p')")
    sha2_mem=$(min "$sha2_mem" "$(echo "$out" | sed -n 's/.*"sha2-memory".*"seconds": \([0-9.]*\).*/\1/p')")
    s=$(now); sha256sum "$MAIN"/*.frame >/dev/null; t_sum=$(min "$t_sum" "$(elapsed "$s" "$(now)")")
    s=$(now); python3 scripts/verify_baseline.py "$MAIN" >/dev/null; t_py=$(min "$t_py" "$(elapsed "$s" "$(now)")")
    s=$(now); "$BIN" verify -j 1 --progress never "$MAIN" >/dev/null; t_one=$(min "$t_one" "$(elapsed "$s" "$(now)")")
    s=$(now); "$BIN" verify -j "$CORES" --progress never "$MAIN" >/dev/null; t_all=$(min "$t_all" "$(elapsed "$s" "$(now)")")
    s=$(now); "$BIN" verify -j "$CORES" --io read --progress never "$MAIN" >/dev/null; t_read=$(min "$t_read" "$(elapsed "$s" "$(now)")")
    s=$(now); "$BIN" verify -j "$CORES" --io mmap --progress never "$MAIN" >/dev/null; t_mmap=$(min "$t_mmap" "$(elapsed "$s" "$(now)")")
    echo "  round $round done"
done
echo "CPU idle before each round:$idles"
echo

printf '| %-56s | %7s | %6s | %12s | %14s |\n' "trailer level, the same $(gib "$BYTES") GiB" "seconds" "GiB/s" "vs sha2-read" "vs sha2-memory"
echo "|----------------------------------------------------------|---------|--------|--------------|----------------|"
row() { printf '| %-56s | %7.3f | %6.3f | %11.2fx | %13.2fx |\n' "$1" "$2" "$(rate "$BYTES" "$2")" "$(ratio "$sha2_read" "$2")" "$(ratio "$sha2_mem" "$2")"; }
row "(a) sha2, 1 core, files read via a 128 KiB buffer" "$sha2_read"
row "(a) sha2, 1 core, the bytes already in memory" "$sha2_mem"
row "(b) sha256sum" "$t_sum"
row "(c) Python loop (struct + hashlib)" "$t_py"
row "membrane-frame verify -j 1" "$t_one"
row "membrane-frame verify -j $CORES" "$t_all"
row "membrane-frame verify -j $CORES --io read" "$t_read"
row "membrane-frame verify -j $CORES --io mmap (one-shot reader)" "$t_mmap"
echo
echo "verify -j $CORES vs single-core sha2: $(ratio "$sha2_read" "$t_all")x (files read the same way), $(ratio "$sha2_mem" "$t_all")x (hashing from memory); target: 3.5x the first"
echo

printf '| %-10s | %-6s | %-20s | %-20s | %-21s |\n' "frame size" "frames" "peak RSS, default" "peak RSS, --io read" "peak RSS, --io mmap"
echo "|------------|--------|----------------------|----------------------|-----------------------|"
for spec in "256 1MiB" "16 16MiB" "1 256MiB"; do
    set -- $spec
    dir=$(corpus "rss-$2" "$1" "$2")
    printf '| %-10s | %-6s | %16s KiB | %16s KiB | %17s KiB |\n' "$2" "$1" \
        "$(peak_rss "$BIN" verify -j "$CORES" --progress never "$dir")" \
        "$(peak_rss "$BIN" verify -j "$CORES" --io read --progress never "$dir")" \
        "$(peak_rss "$BIN" verify -j "$CORES" --io mmap --progress never "$dir")"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
