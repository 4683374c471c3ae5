#!/bin/sh
# make baremetal-anchors: the flash of other C libraries a firmware might link, built
# with the compiler and flags of the bare-metal check, for scale beside the frame
# path's figures: jsmn (a JSON tokenizer: Debian's libjsmn-dev, header-only) and
# littlefs (a flash file system: the copy inside PyPI's littlefs-python source
# distribution, without malloc, logging or asserts). Each is fetched once into $CACHE;
# the figure is .text + .rodata + .data of its objects as `arm-none-eabi-size` counts
# them (before --gc-sections, which keeps all of jsmn's and nearly all of littlefs's
# code for a program that uses them).
# Environment (from the Makefile): CACHE, ARM_CC.
set -eu
arm_flags="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os -ffunction-sections -fdata-sections"
mkdir -p "$CACHE"
cd "$CACHE"

size_of() { # object...: text + data of the objects
    "${ARM_CC%gcc}size" "$@" | awk 'NR > 1 { total += $1 + $2 } END { print total }'
}

if [ ! -f jsmn/usr/include/jsmn.h ]; then
    apt-get download libjsmn-dev >/dev/null 2>&1
    dpkg-deb -x libjsmn-dev_*.deb jsmn
fi
jsmn_version=$(ls libjsmn-dev_*.deb | sed 's/libjsmn-dev_\([^_]*\)_.*/\1/')
# One call of each function, so that the whole parser is compiled.
printf '#include <jsmn.h>\nint parse(const char *js, unsigned len, jsmntok_t *t, unsigned n) {\n    jsmn_parser p;\n    jsmn_init(&p);\n    return jsmn_parse(&p, js, len, t, n);\n}\n' >jsmn_unit.c
# shellcheck disable=SC2086
"$ARM_CC" $arm_flags -Ijsmn/usr/include -c jsmn_unit.c -o jsmn.o
echo "anchor jsmn $jsmn_version (Debian libjsmn-dev, JSON tokenizer): $(size_of jsmn.o) bytes"

littlefs=littlefs_python-0.19.0
if [ ! -f "$littlefs/littlefs/lfs.c" ]; then
    python3 -m pip download --quiet --no-deps --no-binary :all: littlefs-python==0.19.0 -d . >/dev/null
    tar xzf "$littlefs.tar.gz"
fi
quiet="-DLFS_NO_MALLOC -DLFS_NO_DEBUG -DLFS_NO_WARN -DLFS_NO_ERROR -DLFS_NO_ASSERT"
for unit in lfs lfs_util; do
    # shellcheck disable=SC2086
    "$ARM_CC" $arm_flags $quiet -I"$littlefs/littlefs" -c "$littlefs/littlefs/$unit.c" -o "$unit.o"
done
echo "anchor littlefs of littlefs-python 0.19.0 (flash file system): $(size_of lfs.o lfs_util.o) bytes"
