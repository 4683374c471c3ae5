#!/usr/bin/env bash
# Panic-freedom proof for every C entry point of the no_std C library (docs/reliability.md):
# build libmembrane_frame.a without `std` but with every other feature (panic = abort,
# fat LTO) with
# `--cfg membrane_panic_proof`, where the panic handler calls a function nobody defines,
# then link c-examples/test_null_args.c — which calls every function of the header but
# the hosted-only mbr_frame_write_fd —
# with `--gc-sections`. A successful link proves that no panic is reachable from any
# entry point (so the no_std panic boundary may be a plain call); a failed one names
# the missing symbol. The program then runs, as a smoke test.
set -uo pipefail
cd "$(dirname "$0")/.."
target=${FFI_PANIC_CHECK_TARGET_DIR:-$(pwd)/target/ffi-panic-check}
out=$target/proof
mkdir -p "$out"

if ! env RUSTFLAGS="--cfg membrane_panic_proof" CARGO_TARGET_DIR="$target" \
    CARGO_PROFILE_RELEASE_PANIC=abort CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    cargo rustc --quiet -p membrane-frame-ffi --release --no-default-features \
    --features views,envelope,migrate,cluster,status-names,error-text --crate-type staticlib; then
    echo "ffi-panic-check: the no_std C library did not build"
    exit 1
fi
lib=$target/release/libmembrane_frame.a
# MBR_TEST_NO_STD leaves out the one call a no_std library does not have (writing to a
# file descriptor).
if ! ${CC:-cc} -std=c99 -O2 -DMBR_TEST_NO_STD -ffunction-sections -fdata-sections -Iinclude c-examples/test_null_args.c "$lib" \
    -Wl,--gc-sections -lm -o "$out/test_null_args" 2>"$out/link.log"; then
    cat "$out/link.log"
    if grep -q membrane_frame_panic_is_reachable "$out/link.log"; then
        echo "ffi-panic-check: DID NOT LINK: a panic is reachable from a C entry point of the no_std library."
    fi
    exit 1
fi
echo "ffi-panic-check: every C entry point links with no reachable panic (no_std, LTO, --gc-sections)"
"$out/test_null_args" | tail -n 1
