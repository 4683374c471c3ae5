"""The library's share of a bare-metal image, against its budgets.

`python3 budgets.py BUDGETS IMAGE IMAGE.elf IMAGE.map IMAGE.log` reads from the GNU ld map
file the bytes that come from libmembrane_frame.a (flash = .text + .rodata + .ARM.exidx;
static RAM = .data + .bss; debug sections are not counted) and from the program's log the
`stack <entry point> <bytes>` lines of the painted-stack probe, prints one line per figure
with its budget from BUDGETS, and exits 1 when a figure is over its budget or has none.
Beside each painted stack figure stands the static bound of the entry point from the
image's code (static_stack.py); a painted figure above its bound fails too, by more than
the 16 bytes of arguments a caller of this header passes on the stack at most (which
the probe counts and the bound does not). The largest library functions in the image
follow, to show where the bytes are.
"""
import os
import re
import subprocess
import sys


def library_sections(map_text):
    """(section, size) of every input section taken from libmembrane_frame.a."""
    map_text = map_text[map_text.index("Linker script and memory map") :]
    pending = None
    for line in map_text.split("\n"):
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
        if "libmembrane_frame.a" in source and int(size, 16) > 0:
            yield section, int(size, 16)


def read_budgets(path, image):
    """{figure: bytes} for `image`: `flash`, `ram` and `stack <entry point>`."""
    budgets = {}
    for line in open(path):
        words = line.split("#")[0].split()
        if words and words[0] == image:
            budgets[" ".join(words[1:-1])] = int(words[-1])
    return budgets


def short(name):
    """A demangled Rust name without its hash, crate prefix and `<impl ...>` wrapper."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    name = re.sub(r"<impl membrane_frame::(?:\w+::)*(\w+)>", r"\1", name)
    return name.replace("membrane_frame::", "")


# Bytes of arguments a call of this header passes on the stack at most (the painted
# probe counts them, the static bound of the callee does not).
STACK_ARGUMENTS = 16


def static_bounds(elf_path, map_path, entries):
    """{entry point: static bound in bytes, or None when it has none}."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import static_stack

    table = static_stack.functions(elf_path)
    indirect = static_stack.address_taken(elf_path, map_path, table)
    return {entry: static_stack.bound(entry, table, indirect, [], {})[0] for entry in entries}


def main(budgets_path, image, elf_path, map_path, log_path):
    kinds = {"text": 0, "rodata": 0, "exidx": 0, "ram": 0}
    functions = []
    for section, size in library_sections(open(map_path).read()):
        for kind, prefix in (("text", ".text"), ("rodata", ".rodata"), ("exidx", ".ARM.exidx"), ("ram", ".data"), ("ram", ".bss")):
            if section.startswith(prefix):
                kinds[kind] += size
                if kind == "text":
                    functions.append((size, section[len(".text.") :]))
                break
    figures = {"flash": kinds["text"] + kinds["rodata"] + kinds["exidx"], "ram": kinds["ram"]}
    for line in open(log_path, errors="replace"):
        words = line.split()
        if len(words) == 3 and words[0] == "stack" and words[2].isdigit():
            figures[f"stack {words[1]}"] = int(words[2])
    budgets = read_budgets(budgets_path, image)
    entries = [figure.split()[1] for figure in figures if figure.startswith("stack ")]
    bounds = static_bounds(elf_path, map_path, entries)
    over = 0
    for figure, value in figures.items():
        budget = budgets.get(figure)
        verdict = "ok" if budget is not None and value <= budget else "OVER" if budget is not None else "NO BUDGET"
        beside = ""
        if figure.startswith("stack "):
            bound = bounds.get(figure.split()[1])
            beside = f"  static bound {bound}" if bound is not None else "  static bound: none"
            if bound is None or value > bound + STACK_ARGUMENTS:
                verdict = "ABOVE ITS STATIC BOUND" if bound is not None else "NO STATIC BOUND"
        over += verdict != "ok"
        label = {"flash": "flash", "ram": "static RAM"}.get(figure, figure)
        shown = "-" if budget is None else str(budget)
        print(f"budget  {image:<14} {label:<34} {value:>6} of {shown:>6} bytes  {verdict}{beside}")
    for figure in sorted(set(budgets) - set(figures)):
        print(f"budget  {image:<14} {figure:<34} not measured  FAIL")
        over += 1
    detail = f"text {kinds['text']}, rodata {kinds['rodata']}, exidx {kinds['exidx']}"
    functions.sort(reverse=True)
    names = subprocess.run(
        ["c++filt"], input="\n".join(name for _, name in functions[:8]), capture_output=True, text=True
    ).stdout.split("\n")
    largest = ", ".join(f"{short(name)} {size}" for (size, _), name in zip(functions, names))
    print(f"        {image:<14} flash is {detail}; largest: {largest}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
