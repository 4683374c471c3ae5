#!/usr/bin/env python3
"""Fill fuzz/corpus/<target>/ with seeds cut from the conformance vectors.

Run at fuzzing time (scripts/fuzz.sh calls it); the corpora are not committed. Each
seed is named by the SHA-1 of its bytes, as libFuzzer names corpus files, so re-running
adds nothing twice. Usage: fuzz_seed.py VECTORS_DIR CORPUS_DIR
"""
import hashlib
import json
import os
import struct
import sys

vectors, corpus = sys.argv[1], sys.argv[2]


def lines(name):
    path = os.path.join(vectors, name)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read(relative):
    with open(os.path.join(vectors, relative), "rb") as f:
        return f.read()


seeds = {}


def add(target, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    seeds.setdefault(target, set()).add(bytes(data))


frames = [read(case["file"]) for case in lines("frames.jsonl") + lines("aligned.jsonl")]
frames += [read(case["input"]) for case in lines("migration_frames.jsonl")]
frames += [read(case["expected_v5"]) for case in lines("migration_frames.jsonl")]
for i, frame in enumerate(frames):
    add("frame", frame)
    add("frame", frame + frame[: i % 40])  # prefix mode leaves these bytes over
    # stream: [config][four chunk sizes][frame]; vary level, mode and chunking.
    config = bytes([i % 8, 1 + i % 13, 64, 0, 7 + i % 200])
    add("stream", config + frame)
    add("roundtrip", frame)
    # python_api: [entry point 0-1 (frames), level, prefix][chunk size][frame].
    add("python_api", bytes([(i % 2) | (i % 4) << 2 | (i % 3 == 0) << 4, i % 97]) + frame)
    # batch: [control: size, level, mode] then elements [kind][len lo][len hi][bytes]:
    # vector frames whole (raw elements) beside written frames around their payloads.
    if i + 3 < len(frames):
        control = bytes([(i % 4) | (i % 2) << 2 | (3 << 3)])
        body = b""
        for n, member in enumerate(m for m in frames[i : i + 4] if len(m) < 4096):
            body += bytes([0, len(member) & 0xFF, len(member) >> 8]) + member
            body += bytes([1 | (n % 4) << 4, 200 + n, n]) + bytes(range(256))
        add("batch", control + body)
    if len(frame) >= 14:
        (length,) = struct.unpack_from("<I", frame, 10)
        identity = frame[14 : 14 + length]
        if identity:
            add("identity", identity)
            add("json_differential", identity)

for case in lines("identities.jsonl"):
    add("python_api", b"\x02\x00" + case["canonical_json"].encode("utf-8"))
    add("identity", case["canonical_json"])
    add("identity", json.dumps(case["identity"]))
    add("json_differential", case["canonical_json"])

for case in lines("envelopes.jsonl") + [
    {"json": case["input"]} for case in lines("migration_envelopes.jsonl")
]:
    add("envelope", case["json"])
    # The same respelt, for the paths that read those spellings.
    try:
        value = json.loads(case["json"])
    except ValueError:
        value = None
    if isinstance(value, dict):
        add("envelope", json.dumps(value, separators=(",", ":"), ensure_ascii=False))
        add("envelope", json.dumps(value, indent=2, ensure_ascii=False))
        # Keys in another order, with the written form's and with compact separators.
        add("envelope", json.dumps(value, sort_keys=True, ensure_ascii=False))
        add("envelope", json.dumps(value, sort_keys=True, separators=(",", ":")))
    add("python_api", b"\x03\x00" + case["json"].encode("utf-8"))
    add("json_differential", case["json"])

for case in lines("compat.jsonl"):
    add("json_differential", json.dumps(case["input"]))

for case in lines("metadata.jsonl"):
    if case["kind"] == "snapshot":
        add("snapshot", case["json"])
        add("json_differential", case["json"])
    else:
        for key in ("a", "b", "merged"):
            if isinstance(case.get(key), str):
                add("tombstone", case[key])
                add("json_differential", case[key])

for body in (
    '{"content_hash": "h1", "until": 10.5, "node_id": "n1"}',
    '{"content_hash": "h1", "node_id": "n1", "tombstone_until": null}',
    '{"content_hash": "h1", "node_id": "n1", "tombstone_until": 1e-7}',
):
    add("tombstone", body)

total = 0
for target, datas in sorted(seeds.items()):
    folder = os.path.join(corpus, target)
    os.makedirs(folder, exist_ok=True)
    for data in datas:
        name = hashlib.sha1(data).hexdigest()
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
    total += len(datas)
    print(f"fuzz seeds: {target}: {len(datas)}")
print(f"fuzz seeds: {total} in {corpus}")
