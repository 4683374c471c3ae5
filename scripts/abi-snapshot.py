#!/usr/bin/env python3
"""Print every constant and function prototype of a C header of this library, as
c-examples/abi_0_1.h holds them for the compatibility check (c-examples/abi_check.c).

    usage: git show REV:include/membrane_frame.h | scripts/abi-snapshot.py > c-examples/abi_X_Y.h

Comments are dropped; the #defines of MBR_* values (not function-like macros) and the
prototypes are kept as cbindgen wrote them.
"""
import re
import sys

text = re.sub(r"/\*.*?\*/", "", sys.stdin.read(), flags=re.S)
lines = text.split("\n")
defines, prototypes = [], []
i = 0
while i < len(lines):
    line = lines[i].rstrip()
    if re.match(r"#define MBR_\w+ ", line):
        defines.append(line)
    if re.match(r"^(const char \*|uint32_t |struct \w+ |bool |uint64_t |void )\s*mbr_\w+\(", line):
        block = [line]
        while not block[-1].endswith(";"):
            i += 1
            block.append(lines[i].rstrip())
        prototypes.append("\n".join(block))
    i += 1
print("\n".join(defines))
print()
print("\n\n".join(prototypes))
