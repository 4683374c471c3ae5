#!/usr/bin/env bash
# The core's and the C ABI crate's tests on other CPUs, under QEMU user mode:
#   aarch64-unknown-linux-gnu      64-bit ARM (NVIDIA Grace, AWS Graviton)
#   s390x-unknown-linux-gnu        big-endian
#   armv7-unknown-linux-gnueabihf  32-bit (usize is 4 bytes: the u64 lengths of SPEC §1 do not fit it)
# and the C vector test (c-examples) on aarch64.
#
#   bash scripts/cross-check.sh [TARGET ...]     # default: all three
#
# Each target needs Debian's cross gcc and libc (gcc-aarch64-linux-gnu, ...), qemu-user
# and its rustup target (scripts/install-deps.sh installs them). Tests are built with
# the `cross` profile (Cargo.toml: opt-level 1, debug assertions and overflow checks
# kept). Tests that start the test binary again (the snapshot store's crash tests) start
# it under the same QEMU (MEMBRANE_TEST_RUNNER); the random-kill crash test kills its
# writer 60 times instead of 300 (each kill starts a QEMU). About 4 minutes a target on
# two cores, most of it compiling. The last line is `cross: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(pwd)/target}

# target  qemu  gnu triple (cross gcc prefix and sysroot under /usr)
all_targets="aarch64-unknown-linux-gnu:aarch64:aarch64-linux-gnu
s390x-unknown-linux-gnu:s390x:s390x-linux-gnu
armv7-unknown-linux-gnueabihf:arm:arm-linux-gnueabihf"

wanted=("$@")
for name in "${wanted[@]}"; do
    grep -q "^$name:" <<<"$all_targets" || { echo "cross-check: no target $name (known: $(cut -d: -f1 <<<"$all_targets" | tr '\n' ' '))"; exit 2; }
done
echo "!!! cross: NOT RUN under QEMU, run natively by scripts/check.sh instead: the CLI's tests"
echo "!!!   (they bound peak RSS and time I/O modes: under QEMU they would measure the emulator),"
echo "!!!   the Python package, the llama.cpp integration, Miri and the benchmarks."

STEP_PREFIX="cross: "
. scripts/lib/steps.sh

while IFS=: read -r target qemu gnu; do
    if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " == *" $target "* ]]; then
        continue
    fi
    missing=()
    command -v "qemu-$qemu" >/dev/null 2>&1 || missing+=("qemu-$qemu (apt-get install qemu-user)")
    command -v "$gnu-gcc" >/dev/null 2>&1 || missing+=("$gnu-gcc (apt-get install gcc-$gnu)")
    rustup target list --installed 2>/dev/null | grep -qx "$target" || missing+=("rust-std (rustup target add $target)")
    if [ ${#missing[@]} -gt 0 ]; then
        echo "!!! cross: $target cannot be tested here, missing: ${missing[*]}"
        failed=$((failed + 1))
        failures+=("$target: missing ${missing[*]}")
        continue
    fi
    upper=$(echo "$target" | tr 'a-z-' 'A-Z_')
    runner="qemu-$qemu -L /usr/$gnu"
    export "CARGO_TARGET_${upper}_LINKER=$gnu-gcc"
    # A hung emulator ends as a failure of its test binary, not as a stalled CI run.
    export "CARGO_TARGET_${upper}_RUNNER=timeout --kill-after=10 900 $runner"
    # The crash tests' child writers run under QEMU alone: the test kills the process it
    # started, and killing a `timeout` in between would leave its QEMU writing on.
    export MEMBRANE_TEST_RUNNER=$runner MEMBRANE_CRASH_ITERATIONS=60
    step "$target: core tests (unit, vectors, properties, hostile inputs, no-alloc proofs)" \
        cargo test --profile cross --quiet --target "$target" -p membrane-frame --lib --tests --no-fail-fast
    step "$target: C ABI crate tests" \
        cargo test --profile cross --quiet --target "$target" -p membrane-frame-ffi --lib --tests --no-fail-fast
    if [ "$target" = aarch64-unknown-linux-gnu ]; then
        step "$target: C vector test and examples (make -C c-examples TARGET=$target cross-check)" \
            make -C c-examples TARGET="$target" CROSS_CC="$gnu-gcc" CROSS_CXX="$gnu-g++" RUNNER="$runner" cross-check
    fi
done <<<"$all_targets"
unset MEMBRANE_TEST_RUNNER MEMBRANE_CRASH_ITERATIONS

for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "cross: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
