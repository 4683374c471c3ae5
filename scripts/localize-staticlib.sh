#!/bin/sh
# Make the C API the only global symbols of a Rust static library, in place.
#
#   usage: scripts/localize-staticlib.sh path/to/libmembrane_frame.a
#
# A Rust staticlib carries its own copy of std, core and alloc, exported: some 1 400
# global symbols besides the mbr_* API. A program that links a second Rust static
# library (tokenizer bindings, say) then has two definitions of rust_eh_personality,
# __rust_alloc and the rest. This links every member into one relocatable object
# (ld -r), keeps the mbr_* symbols global and makes everything else local (objcopy
# --keep-global-symbols; COMDAT group signatures are renamed too, see below), and writes
# that object back as the archive. What the library
# needs from the system (libc, libgcc_s unwinding) stays undefined, to be resolved at the
# final link as before. Idempotent.
#
# The embedded LLVM bitcode sections (.llvmbc, .llvmcmd) are dropped first: merged by
# ld -r they are not valid bitcode, and binutils' LLVM plugin chokes on them.
set -eu
archive=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

objcopy --remove-section=.llvmbc --remove-section=.llvmcmd "$archive" "$work/stripped.a"
ld -r --whole-archive "$work/stripped.a" -o "$work/merged.o"
nm -g --defined-only "$work/merged.o" | awk 'NF == 3 && $3 ~ /^mbr_/ { print $3 }' | sort -u >"$work/keep.txt"
[ -s "$work/keep.txt" ] || { echo "localize-staticlib: no mbr_* symbols in $archive" >&2; exit 1; }
# A COMDAT group is shared between objects by its signature symbol (rustc emits one,
# DW.ref.rust_eh_personality): if ours kept its name, the linker would keep our group and
# drop the other library's, whose references would then find a local symbol. Renamed,
# the groups no longer meet.
readelf -g "$work/merged.o" | sed -n 's/^COMDAT group section .*\[\(.*\)\] contains.*/\1 mbr_local.\1/p' >"$work/groups.txt"
objcopy --redefine-syms="$work/groups.txt" --keep-global-symbols="$work/keep.txt" "$work/merged.o" "$work/membrane_frame.o"
rm -f "$work/out.a"
ar rcs "$work/out.a" "$work/membrane_frame.o"
mv "$work/out.a" "$archive"
echo "localize-staticlib: $archive: $(wc -l <"$work/keep.txt") global symbols, all mbr_*"
