#!/bin/sh
# make baremetal-sha-cost: sha_cost.c linked with each SHA-256 choice of the no_std
# library (COMPACT, UNROLLED), run under qemu-system-arm -icount shift=0; per choice the
# SHA-256 code in the image (sha2's compress function, from the link map) and the
# instructions per byte. Environment (from the Makefile): ROOT, BUILD, ARM_CC, QEMU_ARM.
set -u
here="$ROOT/c-examples/baremetal"
mkdir -p "$BUILD"
status=0
for choice in compact unrolled; do
    lib=$COMPACT
    [ "$choice" = unrolled ] && lib=$UNROLLED
    elf="$BUILD/sha_cost_$choice.elf"
    # shellcheck disable=SC2086
    if ! "$ARM_CC" -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os -ffunction-sections \
        -fdata-sections -std=c99 -Wall -Wextra -Werror -I"$ROOT/include" "$here/sha_cost.c" "$here/startup.c" \
        -lc -lgcc "$lib" --specs=rdimon.specs -T "$here/mps2-an386.ld" -Wl,--gc-sections -Wl,--no-warn-rwx-segments \
        -Wl,-Map="$BUILD/sha_cost_$choice.map" -o "$elf" >"$BUILD/sha_cost_$choice.link.log" 2>&1; then
        cat "$BUILD/sha_cost_$choice.link.log"
        echo "FAIL  sha_cost ($choice): did not link"
        status=1
        continue
    fi
    result=$(timeout 300 "$QEMU_ARM" -M mps2-an386 -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$elf" 2>&1 | tail -n 1)
    code=$(python3 -c "
import re,sys
text=open(sys.argv[1]).read()
m=re.search(r'\.text\.\S*compress256\S*\s+0x[0-9a-f]+\s+0x([0-9a-f]+)', text)
print(int(m.group(1),16) if m else '?')" "$BUILD/sha_cost_$choice.map")
    case "$result" in
    "sha256: "*) echo "sha256 $choice: compress function $code bytes of flash, ${result#sha256: }" ;;
    *)
        echo "FAIL  sha_cost ($choice): $result"
        status=1
        ;;
    esac
done
exit $status
