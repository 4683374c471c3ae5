#!/bin/sh
# make baremetal-check: the C library built for thumbv7em-none-eabihf without std
# (opt-level s, LTO), linked into three C programs with arm-none-eabi-gcc (-Os,
# --gc-sections, newlib with semihosting), run under qemu-system-arm (mps2-an386,
# Cortex-M4F): vectors_check.c (every frame vector at the trailer and full levels,
# one-shot and streamed; a frame written and read back; crafted worst cases), the same
# built -DVERIFY_ONLY as verify_check (mbr_frame_check alone), both against the frame
# path alone (no default features), and test_null_args.c (every function of the header)
# against the library with every feature.
#
# Per image it reports the library's flash and static RAM (from the link map) and the
# worst stack of each entry point (the programs' painted-stack probe), each against
# its budget in budgets.txt (budgets.py), beside a static bound from the image's code
# (static_stack.py); a figure over its budget, or a painted figure above its bound,
# fails the check. The C library is linked before the library, so what the C program
# already has (memcpy, memset) comes from it; the Rust code calls the ARM EABI forms
# (__aeabi_memcpy4, __aeabi_memclr8, ...), which the library brings itself and which
# are counted. Last line "baremetal-check: N passed, M failed" over the checks of all
# programs.
# Environment (from the Makefile): ROOT, LIB (the frame path), FULL_LIB (every
# feature), BUILD, MEMBRANE_VECTORS, ARM_CC, QEMU_ARM.
set -u
arm_flags="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os -ffunction-sections -fdata-sections"
here="$ROOT/c-examples/baremetal"
mkdir -p "$BUILD"
passed=0
failed=0
over=0
checks_passed=0
checks_failed=0

budget() { # name: the image's figures against budgets.txt, one check
    if python3 "$here/budgets.py" "$here/budgets.txt" "$1" "$BUILD/$1.elf" "$BUILD/$1.map" "$BUILD/$1.log"; then
        checks_passed=$((checks_passed + 1))
    else
        echo "FAIL  $1: a figure over its budget in c-examples/baremetal/budgets.txt"
        over=$((over + 1))
        checks_failed=$((checks_failed + 1))
    fi
}

run() { # name library source...
    name=$1
    lib=$2
    shift 2
    # shellcheck disable=SC2086
    if ! "$ARM_CC" $arm_flags -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$ROOT/include" \
        -DVECTORS_DIR="\"$MEMBRANE_VECTORS\"" -DMBR_TEST_NO_STD "$@" "$here/startup.c" -lc -lgcc "$lib" --specs=rdimon.specs \
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
    case "$last" in
    *": "*" passed, 0 failed")
        if [ "$status" -eq 0 ]; then
            echo "PASS  $name under QEMU: ${last#*: }"
            passed=$((passed + 1))
            counts=${last#*: }
            checks_passed=$((checks_passed + ${counts%% passed*}))
            budget "$name"
            return
        fi
        ;;
    esac
    echo "FAIL  $name under QEMU (exit $status): $last (log: $BUILD/$name.log)"
    failed=$((failed + 1))
    checks_failed=$((checks_failed + 1))
}

run vectors_check "$LIB" "$here/vectors_check.c"
run verify_check "$LIB" -DVERIFY_ONLY "$here/vectors_check.c"
# The NULL-argument test: plain C99 and stdio, so it runs on the board as it is.
run test_null_args "$FULL_LIB" "$ROOT/c-examples/test_null_args.c"
echo "baremetal-check: $passed of 3 programs passed"
# Every check of the programs on the board (a program that failed to run counts once),
# and each image's budget check.
echo "baremetal-check: $checks_passed passed, $checks_failed failed"
[ "$failed" -eq 0 ] && [ "$over" -eq 0 ]
