#!/usr/bin/env bash
# Run the cargo-fuzz targets of fuzz/ for a bounded time each, in parallel.
#
#   scripts/fuzz.sh SECONDS [JOBS] [TARGET...]
#
# Seeds fuzz/corpus/<target>/ from the conformance vectors first (scripts/fuzz_seed.py;
# the corpora are not committed), builds once, then runs every target (or those named)
# for SECONDS of wall time each, JOBS at a time (default 2). Prints one line per target
# with libFuzzer's final numbers (executions, wall time, cov, ft, corpus size) and exits
# non-zero if any target found a crash (its input is in fuzz/artifacts/<target>/).
#
# Built with the default cargo-fuzz profile (optimised, debug assertions and overflow
# checks on) and without a sanitizer: the fuzzed code is the crate without its C ABI,
# which is `#![deny(unsafe_code)]`, so AddressSanitizer would only halve the throughput.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:?usage: scripts/fuzz.sh SECONDS [JOBS] [TARGET...]}
jobs=${2:-2}
shift $(($# >= 2 ? 2 : 1))
vectors=${MEMBRANE_VECTORS:-$(pwd)/../shared/vectors}
logs=${FUZZ_LOGS:-fuzz/target/fuzz-logs}
mkdir -p "$logs"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)
fi

python3 scripts/fuzz_seed.py "$vectors" fuzz/corpus | tail -1 || exit 1
(cd fuzz && cargo +nightly fuzz build --sanitizer none) || exit 1

run_one() {
    local target=$1
    (cd fuzz && cargo +nightly fuzz run --sanitizer none "$target" -- \
        -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=20 \
        -close_fd_mask=1) >"$logs/$target.log" 2>&1
    echo $? >"$logs/$target.rc"
}

running=0
for target in "${targets[@]}"; do
    run_one "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

status=0
for target in "${targets[@]}"; do
    log=$logs/$target.log
    rc=$(cat "$logs/$target.rc" 2>/dev/null || echo 1)
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    done_line=$(grep -E '^#[0-9]+\s+DONE' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$done_line")
    if [ "$rc" -eq 0 ]; then
        echo "fuzz: $target: ok, ${runs:-?} executions in ${seconds} s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
    else
        status=1
        echo "fuzz: $target: FAILED (exit $rc), log $log:"
        grep -E 'panicked|ERROR|SUMMARY|Test unit written|deadly signal' "$log" | head -10
    fi
done
exit $status
