#!/usr/bin/env python3
"""The table of docs/reliability.md §6 from cargo-mutants output folders.

    scripts/mutants-summary.py [--list FILE] [--write-record RECORD] SOURCE...

Each SOURCE is a `mutants.out` folder (or one holding it) of `scripts/mutants.sh`, or a
record file (`.tsv`, below); a mutant judged in several is counted with its last
verdict (so give the record first, then the nextest pass and the `cargo test`
re-judging after it, and earlier runs before later ones).

--write-record RECORD writes every verdict (of the current tree, with --list) to
RECORD, one `verdict<TAB>hung<TAB>name` line a mutant: docs/mutants-record.tsv is
committed, so a whole-core run too long for one sitting goes on from it on a
new machine (scripts/mutants.sh seeds `--iterate` with it). "hung" counts the caught mutants whose failing test was ended by its nextest
time limit (.config/nextest.toml): a loop the mutant made endless.

--list FILE (the output of `cargo mutants --list` on the tree the table is for) counts
only the mutants of that tree, so verdicts on lines that have moved since are dropped,
and its mutants no run has judged yet are counted as "untested".
"""

import collections
import json
import pathlib
import sys

VERDICTS = {"CaughtMutant": "caught", "MissedMutant": "missed", "Unviable": "unviable", "Timeout": "timeout"}
COLUMNS = ["mutants", "caught", "hung", "missed", "unviable", "timeout", "untested"]


def outcomes(folder):
    """(name, file, verdict, hung) of every mutant judged in one output folder or record."""
    folder = pathlib.Path(folder)
    if folder.is_file():
        for line in folder.read_text().splitlines():
            verdict, hung, name = line.split("\t", 2)
            yield name, name.split(":")[0], verdict, hung == "1"
        return
    if (folder / "mutants.out").is_dir():
        folder = folder / "mutants.out"
    if not (folder / "outcomes.json").is_file():
        print(f"note: {folder} has no outcomes.json yet (its run has judged nothing)", file=sys.stderr)
        return
    for outcome in json.loads((folder / "outcomes.json").read_text())["outcomes"]:
        scenario = outcome["scenario"]
        if not isinstance(scenario, dict) or outcome["summary"] not in VERDICTS:
            continue  # the baseline, or a mutant whose run was cut short
        verdict = VERDICTS[outcome["summary"]]
        hung = False
        if verdict == "caught" and outcome.get("log_path"):
            log = folder / outcome["log_path"]
            hung = log.is_file() and "TIMEOUT [" in log.read_text(errors="replace")
        mutant = scenario["Mutant"]
        yield mutant["name"], mutant["file"], verdict, hung


def main(args):
    current = None
    if args[:1] == ["--list"] and len(args) > 1:
        current = [line for line in pathlib.Path(args[1]).read_text().splitlines() if line]
        args = args[2:]
    record = None
    if args[:1] == ["--write-record"] and len(args) > 1:
        record = pathlib.Path(args[1])
        args = args[2:]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    last = {}
    for folder in args:
        for name, file, verdict, hung in outcomes(folder):
            last[name] = (file, verdict, hung)
    if current is not None:
        last = {name: last.get(name, (name.split(":")[0], "untested", False)) for name in current}
    if record is not None:
        judged = sorted((name, verdict, hung) for name, (_, verdict, hung) in last.items() if verdict != "untested")
        record.write_text("".join(f"{verdict}\t{int(hung)}\t{name}\n" for name, verdict, hung in judged))
        print(f"record: {len(judged)} verdicts written to {record}", file=sys.stderr)
    table = collections.defaultdict(collections.Counter)
    for file, verdict, hung in last.values():
        for row in (file, "**all**"):
            table[row]["mutants"] += 1
            table[row][verdict] += 1
            table[row]["hung"] += hung
    print("| file | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for file in sorted(table, key=lambda f: (f == "**all**", f)):
        label = file if file == "**all**" else f"`{file}`"
        print(f"| {label} | " + " | ".join(str(table[file][c]) for c in COLUMNS) + " |")
    missed = sorted(name for name, (_, verdict, _) in last.items() if verdict in ("missed", "timeout"))
    for name in missed:
        print(f"missed or timed out: {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
