#!/usr/bin/env python3
"""Benchmarks of the Python package, each beside a baseline measured in the same process.

1. Trailer verification of a 64 MiB frame (`check_frame`) against `hashlib.sha256` over
   the payload alone (the least any verifier must do).
2. Identity-level parse of vectors/frames/docs-hello.bin (`Frame.parse(level="identity")`)
   against the same checks written in Python with `struct` and `json.loads`.
3. Two threads verifying 64 MiB frames against one thread verifying the same frames.
4. The bulk paths a node runs, each against the same work written in plain Python
   (`json`, `struct`, `hashlib`, the same atomic file replacement):
   * loading a cluster snapshot of 20 000 shards (`SnapshotStore.load`, SPEC section 5);
   * migrating a directory of 128 v4 frames of 256 KiB (`compat.upgrade_v2_to_v5.migrate`,
     SPEC section 7.1), as a dry run (read and prove every result) and rewriting the files;
   * merging and writing a tombstone gossip map of 10 000 entries (SPEC section 6).

Rounds interleave the configurations and the best (least) time of each counts: the
machine is shared. Usage (with the package installed, e.g. by scripts/check.sh):

    python3 scripts/bench-python.py            # ROUNDS=7, MEMBRANE_VECTORS=../shared/vectors
"""

import hashlib
import json
import os
import pathlib
import shutil
import struct
import tempfile
import threading
import time

import membrane_frame as mf
from membrane_frame.compat import upgrade_v2_to_v5
from membrane_frame.compat._files import replace_atomically

ROUNDS = int(os.environ.get("ROUNDS", "7"))
VECTORS = pathlib.Path(os.environ.get("MEMBRANE_VECTORS", pathlib.Path(__file__).resolve().parents[2] / "shared" / "vectors"))
FIELDS = ["payload_hash", "model_id", "model_revision", "tokenizer_name", "tokenizer_revision",
          "layer_range", "head_range", "token_span", "dtype", "shape"]
DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "fp8_e4m3", "fp8_e5m2", "nf4"}


def best(fn, rounds, inner=1):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return min(times)


def python_identity_level(data):
    """The identity-level checks of SPEC section 1.1 in plain Python (what a node does today)."""
    if len(data) < 22:
        raise ValueError("too_short")
    magic, schema, reserved, identity_len = struct.unpack_from("<4sHII", data, 0)
    if magic != b"\xc0\xde\x01\x05":
        raise ValueError("bad_magic")
    if schema != 5 or reserved != 0:
        raise ValueError("schema")
    if 14 + identity_len + 8 > len(data) or identity_len > 65536:
        raise ValueError("identity_overrun")

    def no_duplicates(pairs):
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("identity_json")
        return dict(pairs)

    identity = json.loads(data[14 : 14 + identity_len].decode("utf-8"), object_pairs_hook=no_duplicates)
    if not isinstance(identity, dict) or sorted(identity) != sorted(FIELDS):
        raise ValueError("identity_field")
    for key in FIELDS[:5]:
        if not isinstance(identity[key], str):
            raise ValueError("identity_field")
    if not identity["payload_hash"]:
        raise ValueError("identity_field")
    for key in ("layer_range", "head_range", "token_span"):
        value = identity[key]
        if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
            raise ValueError("identity_field")
        if not (value == [-1, -1] and key == "head_range") and not 0 <= value[0] <= value[1] < 2**63:
            raise ValueError("identity_field")
    if identity["dtype"] not in DTYPES:
        raise ValueError("identity_field")
    shape = identity["shape"]
    if not (isinstance(shape, list) and 1 <= len(shape) <= 16 and all(type(v) is int for v in shape)):
        raise ValueError("identity_field")
    (payload_len,) = struct.unpack_from("<Q", data, 14 + identity_len)
    if 30 + identity_len + payload_len != len(data):
        raise ValueError("payload_overrun")
    return identity, payload_len


def no_duplicates(pairs):
    """`json.loads` hook refusing a repeated key, as the strict reader does (SPEC section 4)."""
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def is_count(value):
    return type(value) is int and value >= 0


def python_snapshot_load(path):
    """The snapshot reader of SPEC section 5 in plain Python: the dict a node gets."""
    snapshot = json.loads(path.read_bytes().decode("utf-8"), object_pairs_hook=no_duplicates)
    if not isinstance(snapshot, dict) or snapshot.get("schema_version") not in (5, 2):
        raise ValueError("snapshot_version")
    captured_at = snapshot.get("captured_at")
    if not is_count(snapshot.get("cluster_epoch")) or type(captured_at) not in (int, float) \
            or not 0 <= captured_at < float("inf"):
        raise ValueError("snapshot_field")
    membership = snapshot.get("membership")
    if not isinstance(membership, list):
        raise ValueError("snapshot_field")
    for member in membership:
        if not (isinstance(member, dict) and isinstance(member.get("node_id"), str)
                and 1 <= len(member["node_id"]) <= 128 and isinstance(member.get("host"), str)
                and type(member.get("port")) is int and 0 <= member["port"] <= 65535
                and all(is_count(member[key]) for key in ("cluster_epoch", "missed_heartbeats") if key in member)
                and all(type(member[key]) is bool for key in ("healthy", "suspect") if key in member)):
            raise ValueError("snapshot_field")
    shards, server = snapshot.get("shards"), snapshot.get("server")
    if not (isinstance(shards, dict) and isinstance(server, dict)
            and is_count(server.get("request_count")) and is_count(server.get("error_count"))):
        raise ValueError("snapshot_field")
    primary, replicas = shards.get("primary_map"), shards.get("replica_map")
    if not (isinstance(primary, dict) and all(type(node) is str for node in primary.values())
            and isinstance(replicas, dict)
            and all(type(nodes) is list and all(type(node) is str for node in nodes) for nodes in replicas.values())):
        raise ValueError("snapshot_field")
    return snapshot


def python_migrated_frame(data):
    """A v4 or v2 frame rewritten to v5 and proved at the trailer level (SPEC section 7.1)
    in plain Python; None for a v5 frame."""
    magic = data[:4]
    if magic == b"\xc0\xde\x01\x05" and data[4:6] == b"\x05\x00":
        frame, rewrite = data, False
    elif magic in (b"\xc0\xde\x01\x04", b"\xc0\xde\x01\x02", b"\xc0\xde\x01\x05"):
        frame, rewrite = b"\xc0\xde\x01\x05\x05\x00" + data[6:], True
    else:
        raise ValueError("bad_magic")
    _, payload_len = python_identity_level(frame)
    (identity_len,) = struct.unpack_from("<I", frame, 10)
    payload = memoryview(frame)[22 + identity_len : 22 + identity_len + payload_len]
    if hashlib.sha256(payload).digest()[:8] != frame[-8:]:
        raise ValueError("trailer_mismatch")
    return frame if rewrite else None


def python_migrate(root, dry_run):
    counts = {"v5_noop": 0}
    for path in sorted(root.rglob("*.blob")):
        data = path.read_bytes()
        migrated = python_migrated_frame(data)
        if migrated is None:
            counts["v5_noop"] += 1
            continue
        if not dry_run:
            replace_atomically(path, migrated)
        counts[f"v{data[3]}"] = counts.get(f"v{data[3]}", 0) + 1
    return counts


def python_merge_gossip(table, text, now):
    """A peer's gossip map merged into a dict {hash: until} (SPEC section 6)."""
    peer = json.loads(text.decode("utf-8"), object_pairs_hook=no_duplicates)
    if not isinstance(peer, dict) or len(peer) > 131072:
        raise ValueError("tombstone_field")
    for key, until in peer.items():
        if not 1 <= len(key) <= 128 or type(until) not in (int, float) or until != until \
                or until in (float("inf"), float("-inf")):
            raise ValueError("tombstone_field")
    adopted = 0
    for key, until in peer.items():
        mine = table.get(key)
        if mine is None:
            if now < until:
                table[key] = float(until)
                adopted += 1
        elif until > mine:
            table[key] = float(until)
    return adopted


def python_gossip(table, now):
    return json.dumps({key: until for key, until in table.items() if now < until}, sort_keys=True).encode()


def bulk_inputs(workdir):
    """The snapshot file, the v4 frames to migrate, and the gossip maps."""
    members = [{"cluster_epoch": 17, "healthy": True, "host": f"10.0.{i // 256}.{i % 256}",
                "missed_heartbeats": 0, "node_id": f"node-{i}", "port": 8080, "suspect": False}
               for i in range(64)]
    primary = {hashlib.sha256(b"%d" % i).hexdigest(): f"node-{i % 64}" for i in range(20000)}
    replicas = {key: [f"node-{(i + 1) % 64}", f"node-{(i + 2) % 64}"] for i, key in enumerate(primary)}
    snapshot = mf.Snapshot(17, 1735600000.125, members, primary, replicas, 123, 4)
    (workdir / "state").mkdir()
    store = mf.SnapshotStore(workdir / "state")
    store.save("node-0", snapshot)

    identity = mf.PayloadIdentity("0" * 64, "llama-3-8b", "main", "llama-3-8b", "main",
                                  (0, 31), (-1, -1), (0, 127), "float16", [2, 32, 8, 4, 128])
    v4_frames = []
    for i in range(128):
        v5 = mf.canonicalize(identity, os.urandom(256 << 10), fill_payload_hash=True)
        v4_frames.append(b"\xc0\xde\x01\x04\x04\x00" + v5[6:])

    now = time.time()
    local = {hashlib.sha256(b"local %d" % i).hexdigest(): now + 60 + i / 8 for i in range(5000)}
    local.update({hashlib.sha256(b"%d" % i).hexdigest(): now + 30 for i in range(5000)})
    peer = {hashlib.sha256(b"%d" % i).hexdigest(): now + 45 + i / 16 for i in range(10000)}
    return store, v4_frames, local, python_gossip(peer, now), now


def write_frames(root, frames):
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for i, frame in enumerate(frames):
        (root / f"{i:04d}.blob").write_bytes(frame)


def bulk_rounds(workdir, rounds):
    """Best times of the bulk paths, membrane_frame and plain Python alternating. A
    measurement's setup (fresh v4 files, a fresh local table) is not timed."""
    store, v4_frames, local, peer_text, now = bulk_inputs(workdir)
    snapshot_path = store.path_for("node-0")
    assert store.load("node-0").to_dict() == python_snapshot_load(snapshot_path)
    frames_dir = workdir / "frames"

    def native_table():
        table = mf.TombstoneTable()
        for key, until in local.items():
            table.record(key, until)
        return table

    table, plain = native_table(), dict(local)
    assert table.merge_gossip(peer_text, now) == python_merge_gossip(plain, peer_text, now)
    assert table.gossip(now) == python_gossip(plain, now)
    write_frames(frames_dir, v4_frames)
    assert upgrade_v2_to_v5.migrate(frames_dir)["v4"] == python_migrate(frames_dir, True)["v4"] == len(v4_frames)

    results = {}
    def measure(key, fn, inner=1, setup=lambda: None):
        arg = setup()
        start = time.perf_counter()
        for _ in range(inner):
            fn(arg)
        results.setdefault(key, []).append((time.perf_counter() - start) / inner)

    fresh_files = lambda: write_frames(frames_dir, v4_frames)
    for _ in range(rounds):
        measure("snap-mf", lambda _: store.load("node-0"), inner=5)
        measure("snap-mf-dict", lambda _: store.load("node-0").to_dict(), inner=5)
        measure("snap-py", lambda _: python_snapshot_load(snapshot_path), inner=5)
        measure("mig-dry-mf", lambda _: upgrade_v2_to_v5.migrate(frames_dir, dry_run=True), setup=fresh_files)
        measure("mig-dry-py", lambda _: python_migrate(frames_dir, True), setup=fresh_files)
        measure("mig-write-mf", lambda _: upgrade_v2_to_v5.migrate(frames_dir, dry_run=False), setup=fresh_files)
        measure("mig-write-py", lambda _: python_migrate(frames_dir, False), setup=fresh_files)
        measure("merge-mf", lambda mine: mine.merge_gossip(peer_text, now), setup=native_table)
        measure("merge-py", lambda mine: python_merge_gossip(mine, peer_text, now), setup=lambda: dict(local))
        measure("emit-mf", lambda _: table.gossip(now), inner=5)
        measure("emit-py", lambda _: python_gossip(plain, now), inner=5)
    t = {key: min(values) for key, values in results.items()}
    return t, snapshot_path.stat().st_size, len(peer_text)


def main():
    identity = mf.PayloadIdentity("0" * 64, "llama-3-8b", "main", "llama-3-8b", "main",
                                  (0, 31), (-1, -1), (0, 127), "float16", [2, 32, 8, 128, 64])
    payload = os.urandom(64 << 20)
    frame = mf.canonicalize(identity, payload, fill_payload_hash=True)
    assert mf.check_frame(frame) == "ok"
    hello = (VECTORS / "frames" / "docs-hello.bin").read_bytes()
    python_identity_level(hello)
    mf.Frame.parse(hello, level="identity")

    frames = [frame] * 8
    def one_thread():
        for f in frames:
            mf.check_frame(f)
    def two_threads():
        threads = [threading.Thread(target=lambda part=part: [mf.check_frame(f) for f in part])
                   for part in (frames[:4], frames[4:])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    results = {key: [] for key in ("mf", "hashlib", "mf-id", "py-id", "1t", "2t")}
    view = memoryview(payload)
    for _ in range(ROUNDS):
        results["hashlib"].append(best(lambda: hashlib.sha256(view).digest(), 1))
        results["mf"].append(best(lambda: mf.check_frame(frame), 1))
        results["py-id"].append(best(lambda: python_identity_level(hello), 1, inner=20000))
        results["mf-id"].append(best(lambda: mf.Frame.parse(hello, "identity"), 1, inner=20000))
        results["1t"].append(best(one_thread, 1))
        results["2t"].append(best(two_threads, 1))
    t = {key: min(values) for key, values in results.items()}
    del frames, frame, payload, view
    with tempfile.TemporaryDirectory(prefix="bench-python-") as workdir:
        bulk, snapshot_size, gossip_size = bulk_rounds(pathlib.Path(workdir), ROUNDS)
        bulk_dir = workdir
    gib = 64 / 1024
    print(f"rounds: {ROUNDS} (best of each), CPython {'.'.join(map(str, __import__('sys').version_info[:3]))}, {os.cpu_count()} CPUs")
    print()
    print("| measurement | membrane_frame | baseline (same process) | ratio | target |")
    print("|---|---|---|---|---|")
    print(f"| trailer verification, 64 MiB frame | {t['mf']*1e3:.1f} ms ({gib/t['mf']:.2f} GiB/s) | "
          f"hashlib.sha256 of the payload: {t['hashlib']*1e3:.1f} ms ({gib/t['hashlib']:.2f} GiB/s) | "
          f"{t['hashlib']/t['mf']:.2f}x | >= 0.95x |")
    print(f"| identity-level parse, docs-hello.bin | {t['mf-id']*1e6:.2f} us | "
          f"struct + json.loads + checks: {t['py-id']*1e6:.2f} us | {t['py-id']/t['mf-id']:.1f}x | >= 20x |")
    print(f"| 8 x 64 MiB frames, trailer level | 2 threads: {t['2t']*1e3:.0f} ms | "
          f"1 thread: {t['1t']*1e3:.0f} ms | {t['1t']/t['2t']:.2f}x | >= 1.8x |")
    print()
    print(f"Bulk paths (files in {pathlib.Path(bulk_dir).parent}), each against the same work in plain Python:")
    print()
    print("| measurement | membrane_frame | plain Python (same process) | ratio |")
    print("|---|---|---|---|")
    b = bulk
    rows = [
        (f"snapshot load, 20 000 shards ({snapshot_size / 2**20:.1f} MiB file)", "snap-mf", "SnapshotStore.load",
         "snap-py", "read + json.loads + SPEC 5 checks"),
        ("the same, then to_dict()", "snap-mf-dict", "load + to_dict", "snap-py", "the same dict"),
        ("directory migration, 128 v4 frames of 256 KiB, dry run", "mig-dry-mf", "compat migrate",
         "mig-dry-py", "read + rewrite + identity checks + sha256"),
        ("the same, rewriting the files (fsync, rename)", "mig-write-mf", "compat migrate",
         "mig-write-py", "the same + the same atomic replace"),
        (f"gossip merge, 10 000 peer entries ({gossip_size / 1024:.0f} KiB) into 10 000", "merge-mf",
         "TombstoneTable.merge_gossip", "merge-py", "json.loads + checks + dict merge"),
        ("gossip map written, 15 000 entries", "emit-mf", "TombstoneTable.gossip", "emit-py",
         "json.dumps(sort_keys=True)"),
    ]
    for label, mine, mine_name, theirs, their_name in rows:
        print(f"| {label} | {mine_name}: {b[mine]*1e3:.2f} ms | {their_name}: {b[theirs]*1e3:.2f} ms | "
              f"{b[theirs]/b[mine]:.1f}x |")


if __name__ == "__main__":
    main()
