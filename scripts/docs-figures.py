#!/usr/bin/env python3
"""Measured figures in the docs, written there by the command that measures them.

A doc holds a block per measurement:

    <!-- figures: frame -->
    ...what the command printed, with the date, the CPU and the command...
    <!-- end figures: frame -->

    python3 scripts/docs-figures.py frame envelope   # run those commands, rewrite their blocks
    python3 scripts/docs-figures.py --all            # every measurement (about 25 minutes)
    python3 scripts/docs-figures.py --list           # the names, their commands and pages
    python3 scripts/docs-figures.py --check          # every block names a known measurement and
                                                     # holds its date, CPU and command (CI)

A block is rewritten only when its command succeeds; a failed command leaves the page as
it was and the script exits 1.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Measurement:
    """One command and the part of its output that goes into the page."""

    def __init__(self, page, command, start=None, keep=None, minutes=1):
        self.page = page
        self.command = command
        # The report starts at the first line matching `start` (None: the whole output);
        # lines matching `keep` are kept wherever they are (a machine line printed first).
        self.start = re.compile(start) if start else None
        self.keep = re.compile(keep) if keep else None
        self.minutes = minutes

    def report(self, output):
        lines = output.splitlines()
        if self.start is None:
            return [line for line in lines if not self.keep or self.keep.search(line)]
        first = next((i for i, line in enumerate(lines) if self.start.search(line)), None)
        if first is None:
            raise ValueError(f"the output has no line matching {self.start.pattern!r}")
        kept = [line for line in lines[:first] if self.keep and self.keep.search(line)]
        return kept + lines[first:]


MEASUREMENTS = {
    "frame": Measurement(
        "docs/performance.md",
        "cargo bench --bench frame",
        start=r"^membrane-frame performance targets",
        keep=r"^machine:",
        minutes=4,
    ),
    "envelope": Measurement(
        "docs/performance.md",
        "cargo bench --bench envelope",
        start=r"^envelope parse, ",
        keep=r"^(machine|envelope):",
        minutes=5,
    ),
    "aligned": Measurement("docs/performance.md", "cargo bench --bench aligned", minutes=2),
    "batch-hash": Measurement(
        "docs/performance.md", "cargo bench --bench batch_hash", minutes=3
    ),
    "verify": Measurement(
        "docs/performance.md",
        "REPEAT=5 QUIET_WAIT=20 bash scripts/bench-verify.sh",
        start=r"^corpus:",
        keep=None,
        minutes=5,
    ),
    "python": Measurement(
        "docs/performance.md",
        "bash scripts/python-check.sh >/dev/null && target/python-venv/bin/python scripts/bench-python.py",
        minutes=4,
    ),
    "cpp": Measurement("docs/performance.md", "make -s -C c-examples bench-cpp", keep=r"^bench_cpp:", minutes=2),
    "simdjson": Measurement(
        "docs/performance.md", "bash scripts/bench-simdjson.sh", keep=r"^bench(-|_)simdjson:", minutes=3
    ),
    "readout": Measurement(
        "docs/performance.md", "make -s -C c-examples bench-readout", keep=r"^bench_readout:", minutes=2
    ),
    "llama": Measurement(
        "docs/performance.md", "bash integrations/llama.cpp/check.sh --bench", start=r"^# llama.cpp KV state", minutes=6
    ),
    "baremetal": Measurement(
        "docs/c-abi.md",
        "make -s -C c-examples baremetal-check",
        keep=r"^(PASS|FAIL|budget|baremetal-check:)",
        minutes=3,
    ),
    "baremetal-features": Measurement(
        "docs/c-abi.md", "make -s -C c-examples baremetal-feature-cost", keep=r"^features ", minutes=4
    ),
    "baremetal-anchors": Measurement(
        "docs/c-abi.md", "make -s -C c-examples baremetal-anchors", keep=r"^anchor ", minutes=2
    ),
    "baremetal-sha": Measurement(
        "docs/c-abi.md", "make -s -C c-examples baremetal-sha-cost", keep=r"^(sha256|FAIL)", minutes=3
    ),
}

BLOCK = re.compile(r"<!-- figures: (?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)<!-- end figures: (?P=name) -->\n", re.S)


def cpu_description():
    """`AMD EPYC, family 25 model 1`: the first CPU's model name, family and model."""
    fields = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    text = fields.get("model name", "unknown CPU")
    if "cpu family" in fields and "model" in fields:
        text += f", family {fields['cpu family']} model {fields['model']}"
    return text


def block_text(name, measurement, report):
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    header = (
        f"Measured {stamp} on {cpu_description()}, {os.cpu_count()} cores, by "
        f"`{measurement.command}` (regenerate: `python3 scripts/docs-figures.py {name}`):"
    )
    body = "\n".join(report).rstrip()
    return f"<!-- figures: {name} -->\n{header}\n\n```text\n{body}\n```\n<!-- end figures: {name} -->\n"


def rewrite(page, name, text):
    path = ROOT / page
    content = path.read_text()
    found = [m for m in BLOCK.finditer(content) if m.group("name") == name]
    if len(found) != 1:
        raise SystemExit(f"docs-figures: {page} has {len(found)} blocks named {name} (needs exactly one)")
    match = found[0]
    path.write_text(content[: match.start()] + text + content[match.end() :])


def measure(name):
    measurement = MEASUREMENTS[name]
    print(f"docs-figures: {name}: {measurement.command} (about {measurement.minutes} min)", flush=True)
    run = subprocess.run(
        ["bash", "-c", measurement.command], cwd=ROOT, stdout=subprocess.PIPE, stderr=sys.stderr, text=True
    )
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        print(f"docs-figures: {name}: the command failed (exit {run.returncode}); {measurement.page} unchanged")
        return False
    try:
        report = measurement.report(run.stdout)
    except ValueError as err:
        print(f"docs-figures: {name}: {err}; {measurement.page} unchanged")
        return False
    rewrite(measurement.page, name, block_text(name, measurement, report))
    print(f"docs-figures: {name}: {measurement.page} rewritten")
    return True


def check():
    """Every block in the docs names a measurement, on its page, with a stamp and a report."""
    problems = []
    seen = set()
    for page in sorted({m.page for m in MEASUREMENTS.values()} | {"README.md"}):
        content = (ROOT / page).read_text()
        for match in BLOCK.finditer(content):
            name = match.group("name")
            seen.add(name)
            if name not in MEASUREMENTS:
                problems.append(f"{page}: a block named {name}, which no measurement writes")
            elif MEASUREMENTS[name].page != page:
                problems.append(f"{page}: the block {name} belongs in {MEASUREMENTS[name].page}")
            body = match.group("body")
            if not re.match(r"Measured \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC on .+ by `", body):
                problems.append(f"{page}: the block {name} has no 'Measured <date> on <CPU> by `command`' line")
            if "```text\n" not in body or body.count("\n") < 4:
                problems.append(f"{page}: the block {name} holds no report")
        unterminated = len(re.findall(r"<!-- figures: ", content)) - len(list(BLOCK.finditer(content)))
        if unterminated:
            problems.append(f"{page}: {unterminated} block(s) without their end marker")
    for name in sorted(set(MEASUREMENTS) - seen):
        problems.append(f"{MEASUREMENTS[name].page}: no block for the measurement {name}")
    for problem in problems:
        print(f"docs-figures: {problem}")
    print(f"docs-figures: {len(seen)} blocks checked, {len(problems)} problems")
    return not problems


def main(args):
    if args in ([], ["-h"], ["--help"]):
        print(__doc__)
        return 0 if args else 2
    if args == ["--list"]:
        for name, m in MEASUREMENTS.items():
            print(f"{name:<11} {m.page:<22} ~{m.minutes} min  {m.command}")
        return 0
    if args == ["--check"]:
        return 0 if check() else 1
    names = list(MEASUREMENTS) if args == ["--all"] else args
    unknown = [n for n in names if n not in MEASUREMENTS]
    if unknown:
        print(f"docs-figures: unknown measurement {', '.join(unknown)} (known: {', '.join(MEASUREMENTS)})")
        return 2
    results = [measure(name) for name in names]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
