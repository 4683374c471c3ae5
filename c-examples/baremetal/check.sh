#!/bin/sh
# make baremetal-check: the C library built for thumbv7em-none-eabihf without std
# (opt-level s, LTO), linked into two C programs with arm-none-eabi-gcc (-Os,
# --gc-sections, newlib with semihosting), run under qemu-system-arm (mps2-an386,
# Cortex-M4F): vectors_check.c (every frame vector at the trailer and full levels,
# one-shot and streamed; a frame written and read back) and test_null_args.c (every
# function of the header). Reports the library's share of each image; last line
# "baremetal-check: N passed, M failed" over the checks of both programs.
# Environment (from the Makefile): ROOT, LIB, BUILD, MEMBRANE_VECTORS, ARM_CC, QEMU_ARM.
set -u
arm_flags="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os -ffunction-sections -fdata-sections"
here="$ROOT/c-examples/baremetal"
mkdir -p "$BUILD"
passed=0
failed=0
checks_passed=0
checks_failed=0

run() { # name source...
    name=$1
    shift
    # shellcheck disable=SC2086
    if ! "$ARM_CC" $arm_flags -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$ROOT/include" \
        -DVECTORS_DIR="\"$MEMBRANE_VECTORS\"" -DMBR_TEST_NO_STD "$@" "$here/startup.c" "$LIB" --specs=rdimon.specs \
        -T "$here/mps2-an386.ld" -Wl,--gc-sections -Wl,--no-warn-rwx-segments -Wl,-Map="$BUILD/$name.map" \
        -o "$BUILD/$name.elf" >"$BUILD/$name.link.log" 2>&1; then
        cat "$BUILD/$name.link.log"
        echo "FAIL  $name: did not link"
        failed=$((failed + 1))
        checks_failed=$((checks_failed + 1))
        return
    fi
    timeout 600 "$QEMU_ARM" -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$BUILD/$name.elf" >"$BUILD/$name.log" 2>&1
    status=$?
    last=$(tail -n 1 "$BUILD/$name.log")
    grep '^FAIL' "$BUILD/$name.log" | head -n 20
    size=$(python3 "$here/library_size.py" "$BUILD/$name.map")
    case "$last" in
    *": "*" passed, 0 failed")
        if [ "$status" -eq 0 ]; then
            echo "PASS  $name under QEMU: ${last#*: }; libmembrane_frame in the image: $size"
            passed=$((passed + 1))
            counts=${last#*: }
            checks_passed=$((checks_passed + ${counts%% passed*}))
            return
        fi
        ;;
    esac
    echo "FAIL  $name under QEMU (exit $status): $last (log: $BUILD/$name.log)"
    failed=$((failed + 1))
    checks_failed=$((checks_failed + 1))
}

run vectors_check "$here/vectors_check.c"
# The NULL-argument test: plain C99 and stdio, so it runs on the board as it is.
run test_null_args "$ROOT/c-examples/test_null_args.c"
echo "baremetal-check: $passed of 2 programs passed"
# Every check of both programs on the board (a program that failed to run counts once).
echo "baremetal-check: $checks_passed passed, $checks_failed failed"
[ "$failed" -eq 0 ]
