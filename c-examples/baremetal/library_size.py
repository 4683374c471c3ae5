"""Bytes of a linked image that come from libmembrane_frame.a, by kind, from the GNU ld
map file: `python3 library_size.py IMAGE.map` prints `text N, rodata N, other N`
(flash = text + rodata + .ARM.exidx; debug sections are not counted)."""
import re
import sys

sizes = {"text": 0, "rodata": 0, "exidx": 0, "data": 0}
text = open(sys.argv[1]).read()
text = text[text.index("Linker script and memory map"):]
pending = None
for line in text.split("\n"):
    entry = re.match(r"^ (\.\S+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)", line)
    if entry:
        section, size, source = entry.groups()
    else:
        name_only = re.match(r"^ (\.\S+)$", line)
        continued = re.match(r"^\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)", line)
        if name_only:
            pending = name_only.group(1)
            continue
        if not (pending and continued):
            pending = None
            continue
        section, (size, source) = pending, continued.groups()
        pending = None
    if "libmembrane_frame.a" not in source:
        continue
    for kind, prefix in (("text", ".text"), ("rodata", ".rodata"), ("exidx", ".ARM.exidx"), ("data", ".data"), ("data", ".bss")):
        if section.startswith(prefix):
            sizes[kind] += int(size, 16)
            break
flash = sizes["text"] + sizes["rodata"] + sizes["exidx"]
print(f"flash {flash} bytes (text {sizes['text']}, rodata {sizes['rodata']}, exidx {sizes['exidx']}), RAM {sizes['data']} bytes")
