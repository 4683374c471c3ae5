#!/usr/bin/env python3
"""Inputs of the simdjson comparison (scripts/bench-simdjson.sh), from the vectors.

Writes into OUT_DIR (argument 1):
  envelopes-stored.bin     the accepted envelopes of envelopes.jsonl as stored
  envelopes-compact.bin    the same documents without whitespace
  envelopes-reversed.bin   the same with the keys of every object in reverse order
  envelopes-pretty.bin     the same indented by two spaces
  identities.bin           the canonical JSON of every identity of identities.jsonl
  snapshot.json            a cluster snapshot of about 10 MiB (SPEC section 5 form)
Each .bin file is a sequence of documents, each a little-endian u32 length and the bytes.
Respelling goes through json.loads / json.dumps, which keeps every value (Python's float
repr round-trips), so every spelling holds the same values.
"""

import hashlib
import json
import os
import pathlib
import struct
import sys

VECTORS = pathlib.Path(os.environ.get("MEMBRANE_VECTORS", pathlib.Path(__file__).resolve().parents[2] / "shared" / "vectors"))


def reversed_keys(value):
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


def write_docs(path, docs):
    with open(path, "wb") as out:
        for doc in docs:
            out.write(struct.pack("<I", len(doc)))
            out.write(doc)


def snapshot_text(target_bytes):
    members = [{"cluster_epoch": 17, "healthy": i % 7 != 0, "host": f"10.0.{i // 256}.{i % 256}",
                "missed_heartbeats": i % 3, "node_id": f"node-{i}", "port": 8080 + i % 4, "suspect": i % 11 == 0}
               for i in range(256)]
    primary, replicas = {}, {}
    snapshot = {"captured_at": 1735600000.125, "cluster_epoch": 17, "membership": members,
                "schema_version": 5, "server": {"error_count": 4, "request_count": 123},
                "shards": {"primary_map": primary, "replica_map": replicas}}
    # About 190 bytes a shard (a 64-hex key in both maps, a primary and two replicas).
    for i in range(target_bytes // 190):
        key = hashlib.sha256(b"%d" % i).hexdigest()
        primary[key] = f"node-{i % 256}"
        replicas[key] = [f"node-{(i + 1) % 256}", f"node-{(i + 2) % 256}"]
    return json.dumps(snapshot, sort_keys=True).encode()


def main():
    out_dir = pathlib.Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    envelopes = [json.loads(line) for line in (VECTORS / "envelopes.jsonl").open(encoding="utf-8")]
    stored = [case["json"] for case in envelopes if case["expect"] == "ok"]
    values = [json.loads(text) for text in stored]
    write_docs(out_dir / "envelopes-stored.bin", [text.encode() for text in stored])
    write_docs(out_dir / "envelopes-compact.bin",
               [json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode() for v in values])
    write_docs(out_dir / "envelopes-reversed.bin",
               [json.dumps(reversed_keys(v), ensure_ascii=False).encode() for v in values])
    write_docs(out_dir / "envelopes-pretty.bin", [json.dumps(v, indent=2, ensure_ascii=False).encode() for v in values])
    identities = [json.loads(line) for line in (VECTORS / "identities.jsonl").open(encoding="utf-8")]
    write_docs(out_dir / "identities.bin", [case["canonical_json"].encode() for case in identities])
    (out_dir / "snapshot.json").write_bytes(snapshot_text(10 << 20))
    print(f"bench_simdjson_inputs: {len(stored)} envelopes x 4 spellings, {len(identities)} identities, "
          f"a {(out_dir / 'snapshot.json').stat().st_size / 2**20:.1f} MiB snapshot from {VECTORS}")


if __name__ == "__main__":
    main()
