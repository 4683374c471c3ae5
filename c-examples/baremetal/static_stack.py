"""A static bound on the stack of each entry point of a bare-metal image, from its code.

`python3 static_stack.py IMAGE.elf IMAGE.map ENTRY...` prints `static <entry> <bytes>` for each
entry point: the deepest chain of stack frames its calls can build, where

* a function's frame is the sum of every stack-pointer decrement in its code (`push`,
  `stmdb sp!`, `vpush`, `sub sp, #n`): an over-estimate when a function saves registers
  on one path only, never an under-estimate;
* its callees are the targets of its direct calls and branches to other functions
  (`bl`, `b.w`: a tail call is counted as a call on top of the whole frame);
* an indirect call (`blx rN`: a `dyn` sink, a C callback) may reach any function whose
  address the program or the library stores as data or builds in a register (vtables,
  callback pointers): the worst of them. (The C library's own tables of function
  pointers, for its stdio, are not among them: nothing of ours calls through them.)

A function that can reach itself, or whose stack pointer moves by a register amount,
has no static bound: the script says so and exits 1. The painted figure of each entry
point (stack_probe.h) must lie at or below this bound; budgets.py checks that.
"""
import re
import struct
import subprocess
import sys

PUSH = re.compile(r"^\s*(?:push(?:\.w)?|stmdb(?:\.w)?\s+sp!,)\s*\{([^}]*)\}")
PUSH_OP = re.compile(r"^(push(?:\.w)?|stmdb(?:\.w)?)\s")
VPUSH = re.compile(r"^\s*vpush\s*\{([^}]*)\}")
SUB_SP = re.compile(r"^\s*sub(?:w|\.w|s)?\s+sp,\s*(?:sp,\s*)?#(\d+)")
SUB_SP_REGISTER = re.compile(r"^\s*sub(?:w|\.w|s)?\s+sp,\s*(?:sp,\s*)?r\d+")
CALL = re.compile(r"^\s*(bl|b\.w|b|blx)\s+([0-9a-f]+)\s+<([^>+]+)>")
INDIRECT = re.compile(r"^\s*blx\s+(r\d+|ip|lr)")
LITERAL = re.compile(r"ldr(?:\.w)?\s+\S+,\s*\[pc,\s*#\d+\]\s*@\s*\(([0-9a-f]+)\s")
MOVE_HALF = re.compile(r"^\s*(movw|movt)\s+(r\d+|ip|lr),\s*#(\d+)")


def register_count(text):
    """How many registers a `{r4-r7, lr}` list names (`d8-d9` counts each)."""
    count = 0
    for part in text.split(","):
        part = part.strip()
        bounds = re.match(r"^([a-z]+)(\d+)-[a-z]+(\d+)$", part)
        count += int(bounds.group(3)) - int(bounds.group(2)) + 1 if bounds else 1
    return count


def functions(elf):
    """{name: [frame bytes, direct callees, makes indirect calls, variable frame,
    constants built by movw/movt, addresses of the literal-pool words it loads]}."""
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", elf],
                             capture_output=True, text=True, check=True).stdout
    table, name = {}, None
    for line in listing.split("\n"):
        head = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if head:
            name = head.group(2)
            table[name] = [0, set(), False, False, set(), set()]
            low = {}
            continue
        if not name or not re.match(r"^\s+[0-9a-f]+:\s", line):
            continue
        body = line.split(":", 1)[1]
        instruction = body.split(";")[0].split("@")[0].strip()
        entry = table[name]
        if literal := LITERAL.search(body):
            # `ldr rN, [pc, #k]` of a literal-pool word: its address, read below.
            entry[5].add(int(literal.group(1), 16))
        if PUSH_OP.match(instruction) and (push := PUSH.match(instruction)):
            entry[0] += 4 * register_count(push.group(1))
        elif vpush := VPUSH.match(instruction):
            width = 8 if vpush.group(1).strip().startswith("d") else 4
            entry[0] += width * register_count(vpush.group(1))
        elif sub := SUB_SP.match(instruction):
            entry[0] += int(sub.group(1))
        elif SUB_SP_REGISTER.match(instruction):
            entry[3] = True
        elif call := CALL.match(instruction):
            if call.group(3) != name:
                entry[1].add(call.group(3))
        elif INDIRECT.match(instruction):
            entry[2] = True
        elif move := MOVE_HALF.match(instruction):
            # A 32-bit constant built in two halves: a function pointer passed in a
            # register (how LLVM passes a one-method vtable's only entry).
            op, register, value = move.group(1), move.group(2), int(move.group(3))
            if op == "movw":
                low[register] = value
            elif register in low:
                entry[4].add(value << 16 | low.pop(register))
    return table


def own_sections(map_path):
    """Address ranges of the loaded input sections that the program and the library put
    in the image (not the C library's own code and tables: nothing of ours calls
    through its function pointers), as (start, end, is data)."""
    text = open(map_path).read()
    text = text[text.index("Linker script and memory map"):]
    sections, pending = [], None
    for line in text.split("\n"):
        whole = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)", line)
        rest = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)", line)
        if re.match(r"^ (\.\S+)$", line):
            pending = line.strip()
            continue
        if whole:
            name, start, size, source = whole.groups()
        elif pending and rest:
            (start, size, source), name = rest.groups(), pending
        else:
            pending = None
            continue
        pending = None
        start, size = int(start, 16), int(size, 16)
        loaded = re.match(r"\.(text|rodata|data)", name)
        if size and loaded and not source.startswith("/usr/"):
            sections.append((start, start + size, loaded.group(1) != "text"))
    return sections


def address_taken(elf, map_path, table):
    """Functions whose address the program or the library stores or builds: what a
    `blx` may reach. A constant that happens to equal a function's address only adds a
    candidate: the bound can only grow."""
    symbols = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True, check=True).stdout
    starts, addresses = {}, {}
    for line in symbols.split("\n"):
        words = line.split()
        if len(words) == 3 and words[1] in "tTwW" and words[2] in table:
            starts[int(words[0], 16) | 1] = words[2]
            addresses[words[2]] = int(words[0], 16)
    sections = own_sections(map_path)
    ours = lambda address: any(start <= address < end for start, end, _ in sections)
    header = subprocess.run(["arm-none-eabi-objdump", "-h", elf], capture_output=True, text=True, check=True).stdout
    image = {}
    for section in (".text", ".data"):
        base = next(int(line.split()[3], 16) for line in header.split("\n")
                    if len(line.split()) > 3 and line.split()[1] == section)
        data = subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", f"--only-section={section}", elf,
                               "/dev/stdout"], capture_output=True, check=True).stdout
        image.update({base + 4 * i: word for i, word in enumerate(struct.unpack_from(f"<{len(data) // 4}I", data))})
    taken = set()
    # Built in registers, or loaded from literal pools, by our own functions.
    for name, entry in table.items():
        if ours(addresses.get(name, -1)):
            loaded = {image.get(address) for address in entry[5]}
            taken |= {starts[value] for value in entry[4] | loaded if value in starts}
    # Stored in our own read-only and writable data: vtable slots, tables of pointers.
    for start, end, is_data in sections:
        if is_data:
            taken |= {starts[image[a]] for a in range(start & ~3, end, 4) if image.get(a) in starts}
    return taken


def bound(name, table, indirect, on_path, memo, via_indirect=False):
    """The deepest stack `name` can build (None: no static bound), and whether a call
    cycle through an indirect call was left out for it. `on_path` holds the functions
    above, each with whether it was reached by an indirect call."""
    if name in memo:
        return memo[name], False
    if name not in table:
        return 0, False
    frame, callees, calls_indirectly, variable = table[name][:4]
    if variable:
        return None, False
    on_path.append((name, via_indirect))
    deepest, cut = 0, False
    edges = [(callee, False) for callee in sorted(callees)]
    edges += [(callee, True) for callee in sorted(indirect)] if calls_indirectly else []
    for callee, is_indirect in edges:
        names = [above for above, _ in on_path]
        if callee in names:
            # A cycle made of direct calls is recursion: no bound. One that goes through
            # an indirect call exists only in this over-approximation of the targets (a
            # `dyn` sink's method calls its concrete sink directly; the library has no
            # recursion), so that edge is left out.
            closing = [reached for _, reached in on_path[names.index(callee) + 1 :]] + [is_indirect]
            if not any(closing):
                on_path.pop()
                return None, False
            cut = True
            continue
        depth, callee_cut = bound(callee, table, indirect, on_path, memo, is_indirect)
        if depth is None:
            on_path.pop()
            return None, False
        deepest, cut = max(deepest, depth), cut or callee_cut
    on_path.pop()
    if not cut:
        memo[name] = frame + deepest
    return frame + deepest, cut


def main(elf, map_path, entries):
    table = functions(elf)
    indirect = address_taken(elf, map_path, table)
    unbounded = 0
    for entry in entries:
        value, _ = bound(entry, table, indirect, [], {})
        if value is None:
            print(f"static {entry} unbounded (recursion or a variable frame on its call graph)")
            unbounded += 1
        else:
            print(f"static {entry} {value}")
    return 1 if unbounded else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
