"""The names added for the Python nodes: snapshots, tombstones and gossip, ref counts,
migration, the HLC, the exception hierarchy, pickling (also across a `spawn` process
pool), and the `membrane_frame.compat` modules' documented behaviour. Expected values
come from the conformance vectors or from the rules of SPEC.md, never from this file."""

import concurrent.futures
import copy
import dataclasses
import hashlib
import json
import os
import multiprocessing
import pickle
import time

import pytest

import membrane_frame as mf
from membrane_frame.compat import canonical, compat, errors, fragment, gc, hlc, serialization, snapshot
from membrane_frame.compat import upgrade_v2_to_v5, upgrade_v2_to_v5_json

from conftest import load

METADATA = load("metadata.jsonl")
SNAPSHOTS = [case for case in METADATA if case["kind"] == "snapshot"]
GOSSIP = [case for case in METADATA if case["kind"] == "gossip"]
MIGRATION_FRAMES = load("migration_frames.jsonl")
MIGRATION_ENVELOPES = load("migration_envelopes.jsonl")
COMPAT = load("compat.jsonl")


def identity(**changes):
    fields = dict(
        payload_hash="a" * 64,
        model_id="m",
        model_revision="",
        tokenizer_name="m",
        tokenizer_revision="",
        layer_range=(0, 1),
        head_range=(-1, -1),
        token_span=(0, 7),
        dtype="float16",
        shape=(1, 1, 1, 8, 64),
    )
    fields.update(changes)
    return mf.PayloadIdentity(**fields)


# Snapshots (SPEC 5)


@pytest.mark.parametrize("case", SNAPSHOTS, ids=lambda case: case["name"])
def test_snapshot_vectors(case):
    text = case["json"].encode("utf-8")
    if case["expect"] != "ok":
        with pytest.raises(mf.SchemaError) as raised:
            mf.Snapshot.parse(text)
        assert raised.value.code == case["expect"]
        return
    read = mf.Snapshot.parse(text)
    as_json = json.loads(text)
    assert read.cluster_epoch == as_json["cluster_epoch"]
    assert read.captured_at == as_json["captured_at"]
    assert read.primary_map == as_json["shards"]["primary_map"]
    assert read.replica_map == as_json["shards"]["replica_map"]
    known = ("cluster_epoch", "healthy", "host", "missed_heartbeats", "node_id", "port", "suspect")
    members = [{key: member[key] for key in known if key in member} for member in as_json["membership"]]
    assert read.membership == members  # unknown keys are skipped (SPEC 5)
    # Built again from its dict, it writes the v5 text, which reads back the same.
    rebuilt = mf.Snapshot.from_dict(read.to_dict())
    assert rebuilt == read
    assert mf.Snapshot.parse(rebuilt.to_bytes()).to_dict() == rebuilt.to_dict()
    assert pickle.loads(pickle.dumps(read)) == read


def test_snapshot_from_dict_refuses_what_it_cannot_write():
    good = {"cluster_epoch": 1, "captured_at": 2.5, "membership": [], "shards": {"primary_map": {}, "replica_map": {}}, "server": {"request_count": 0, "error_count": 0}}
    assert mf.Snapshot.from_dict(good).cluster_epoch == 1
    for broken, field in [
        ({**good, "foo": 1}, "snapshot"),
        ({k: v for k, v in good.items() if k != "server"}, "server"),
        ({**good, "cluster_epoch": -1}, "cluster_epoch"),
        ({**good, "membership": [{"node_id": "n", "host": "h", "port": 70000}]}, "membership.port"),
        ({**good, "shards": {"primary_map": {"h": 1}, "replica_map": {}}}, "shards.primary_map"),
    ]:
        with pytest.raises(mf.SchemaError) as raised:
            mf.Snapshot.from_dict(broken)
        assert raised.value.code == "snapshot_field"
        assert raised.value.field == field
    with pytest.raises(mf.SchemaError) as raised:
        mf.Snapshot.from_dict({**good, "schema_version": 3})
    assert raised.value.code == "snapshot_version"


def test_snapshot_store_and_epoch_guard(tmp_path):
    store = mf.SnapshotStore(tmp_path)
    built = mf.Snapshot(5, 10.0, membership=[{"node_id": "n1", "host": "h", "port": 1}], primary_map={"b": "n1", "a": "n1"})
    path = store.save("node-1", built)
    assert path == tmp_path / "node-1.json" and not list(tmp_path.glob(".*.tmp"))
    assert store.load("node-1") == built
    assert list(store.load("node-1").primary_map) == ["a", "b"]
    path, latest = store.latest()
    assert latest == built and path.name == "node-1.json"
    saved, epoch = store.checkpoint("node-1", 7, built)
    assert epoch == 8 and store.load("node-1").cluster_epoch == 8
    assert store.restore("node-1", 9).cluster_epoch == 8
    with pytest.raises(mf.SchemaError) as raised:
        store.restore("node-1", 10)
    assert raised.value.code == "stale_epoch" and not saved.exists()
    assert [mf.epoch_accepted(10, e) for e in (None, 8, 9, 10, 11)] == [False, False, True, True, True]


def test_compat_snapshot_store(tmp_path):
    state = snapshot.Snapshot(tmp_path / "state")
    body = {"schema_version": 2, "cluster_epoch": 3, "membership": [], "shards": {"primary_map": {}, "replica_map": {}}, "server": {"request_count": 1, "error_count": 0}}
    state.save("a", {**body, "captured_at": 1.0})
    state.save("b", {**body, "captured_at": 5.0})
    loaded = state.load("b")
    assert loaded["schema_version"] == snapshot.SNAPSHOT_SCHEMA_VERSION == 5
    assert loaded["captured_at"] == 5.0 and len(state) == 2
    assert state.latest()["__path__"].endswith("b.json")
    # A file the reference would have written without the v5 fields: not a snapshot.
    (state.state_dir / "c.json").write_text(json.dumps({"schema_version": 2, "cluster_epoch": 0}))
    assert state.load("c") is None
    with pytest.raises(errors.SchemaError):
        state.save("d", {"cluster_epoch": 0})
    assert state.remove("a") is True and state.remove("a") is False
    guard = snapshot.ClusterEpochGuard(current=5)
    assert (guard.accept(3), guard.accept(4), guard.accept(None), guard.bump()) == (False, True, False, 6)


# Tombstones and ref counts (SPEC 6)


@pytest.mark.parametrize("case", GOSSIP, ids=lambda case: case["name"])
def test_gossip_vectors(case):
    table = mf.TombstoneTable()
    if case["expect"] != "ok":
        with pytest.raises(mf.SchemaError) as raised:
            table.merge_gossip(case["a"].encode(), case["now"])
            table.merge_gossip(case["b"].encode(), case["now"])
        assert raised.value.code == case["expect"]
        return
    table.merge_gossip(case["a"].encode(), case["now"])
    table.merge_gossip(case["b"].encode(), case["now"])
    assert table.gossip(case["now"]) == case["merged"].encode()


def test_tombstone_table_rules_and_growth():
    table = mf.TombstoneTable()
    table.record("h", 10.0, ["n1"])
    table.record("h", 5.0, ["n2"])
    assert table.get("h") == (10.0, frozenset({"n1", "n2"}))
    assert table.is_active("h", 9.999) and not table.is_active("h", 10.0)
    for i in range(1000):  # past the first capacity: the table grows, nothing is lost
        table.record(f"k{i}", 100.0 + i)
    assert len(table) == 1001 and table.get("k999") == (1099.0, frozenset())
    # Expired at now >= until: k500's deadline is 600.0 itself.
    assert sorted(table.sweep(600.0)) == sorted(["h"] + [f"k{i}" for i in range(501)])
    assert len(table) == 499
    with pytest.raises(mf.SchemaError) as raised:
        table.record("x" * 129, 1.0)
    assert raised.value.code == "tombstone_field"
    with pytest.raises(mf.UsageError) as raised:
        table.record("h", 1.0, [f"node-{i}" for i in range(129)])
    assert raised.value.code == "table_full"


def test_refcount_rules_and_growth():
    refs = mf.RefCount()
    refs.acquire("h", "a")
    refs.acquire("h", "b")
    assert refs.holders("h") == {"a", "b"}
    assert refs.release("h", "c") is False and refs.release("h", "a") is False
    assert refs.release("h", "b") is True and refs.release("h", "b") is True
    for i in range(500):
        refs.acquire(f"h{i}", "a")
    assert len(refs) == 500 and refs.is_active("h499")
    assert refs.forget("h0") and not refs.is_active("h0")


def test_compat_gc():
    table = gc.TombstoneTable()
    now = time.time()
    record = table.record("old", now - 1.0, {"n1"})
    assert record == gc.Tombstone("old", now - 1.0, frozenset({"n1"}))
    table.record("new", now + 30.0)
    assert table.get("old") is None and table.total() == 1
    assert table.sweep_expired() == [] and table.is_active("new")
    refs = gc.RefCount()
    refs.acquire("h", "n")
    assert refs.total() == 1 and refs.release("h", "n") and not refs.is_active("h")
    swept = []
    sweeper = gc.Sweeper(interval_sec=0.01, tombstones=table, on_tombstones_expired=swept.extend)
    table.record("soon", time.time() + 0.02)
    sweeper.start()
    deadline = time.time() + 5
    while not swept and time.time() < deadline:
        time.sleep(0.01)
    sweeper.stop()
    assert swept == ["soon"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.until = 0.0


# Migration (SPEC 7)


@pytest.mark.parametrize("case", MIGRATION_FRAMES, ids=lambda case: case["name"])
def test_frame_migration_vectors(case, vectors):
    blob = (vectors / case["input"]).read_bytes()
    expected = (vectors / case["expected_v5"]).read_bytes()
    assert mf.frame_magic_version(blob) == case["from_version"]
    assert mf.plan_migration(blob) == ("legacy", case["from_version"])
    assert mf.migrate_frame(blob) == expected
    assert mf.migrate_frame(expected) is None
    assert upgrade_v2_to_v5.migrate_v4_to_v5(blob) == expected
    in_place = bytearray(blob)
    assert mf.migrate_frame_in_place(in_place) == ("legacy", case["from_version"])
    assert in_place == expected
    assert mf.migrate_frame_in_place(memoryview(in_place)) == ("v5", 5)
    assert in_place == expected


def test_frame_migration_in_place_needs_a_writable_buffer_and_keeps_it_on_error(vectors):
    case = MIGRATION_FRAMES[0]
    blob = (vectors / case["input"]).read_bytes()
    with pytest.raises(BufferError):
        mf.migrate_frame_in_place(blob)
    damaged = bytearray(blob)
    damaged[-1] ^= 1
    before = bytes(damaged)
    with pytest.raises(mf.CorruptPayloadError) as raised:
        mf.migrate_frame_in_place(damaged)
    assert raised.value.code == "trailer_mismatch"
    assert damaged == before


def test_file_buffer_reads_files_of_any_size_in_turn(tmp_path):
    from membrane_frame.compat._files import FileBuffer

    files = FileBuffer()
    for size in (100_000, 10, 0, 250_000, 99):
        path = tmp_path / f"{size}.bin"
        data = os.urandom(size)
        path.write_bytes(data)
        with files.read(path) as view:
            assert bytes(view) == data


def test_frame_migration_of_a_directory(tmp_path, vectors):
    for case in MIGRATION_FRAMES:
        (tmp_path / (case["name"] + ".blob")).write_bytes((vectors / case["input"]).read_bytes())
    (tmp_path / "junk.blob").write_bytes(b"\xc0\xde\x01\x04" + b"not a frame")
    (tmp_path / "other.blob").write_bytes(b"hello")
    planned = upgrade_v2_to_v5.migrate(tmp_path)
    done = upgrade_v2_to_v5.migrate(tmp_path, dry_run=False)
    legacy = {f"v{n}": sum(1 for c in MIGRATION_FRAMES if c["from_version"] == n) for n in (2, 4)}
    assert planned == done == {**legacy, "v5_noop": 0, "failed": 1, "unknown": 1}
    for case in MIGRATION_FRAMES:
        assert (tmp_path / (case["name"] + ".blob")).read_bytes() == (vectors / case["expected_v5"]).read_bytes()
    assert (tmp_path / "junk.blob").read_bytes().endswith(b"not a frame")
    again = upgrade_v2_to_v5.migrate(tmp_path, dry_run=False)
    assert again["v5_noop"] == len(MIGRATION_FRAMES) and again["v2"] == again["v4"] == 0


@pytest.mark.parametrize("case", MIGRATION_ENVELOPES, ids=lambda case: case["name"])
def test_envelope_migration_vectors(case, tmp_path):
    tenant = case.get("default_tenant") or "public"
    migrated = mf.migrate_envelope(case["input"], tenant)
    assert migrated == case["expected_v5"].encode()
    assert mf.migrate_envelope(migrated) is None
    as_dict = upgrade_v2_to_v5_json.migrate_dict(json.loads(case["input"]), default_tenant=tenant)
    assert as_dict == json.loads(case["expected_v5"])
    path = tmp_path / "wire.jsonl"
    path.write_text("\n" + case["input"] + "\nnot json\n" + case["expected_v5"] + "\n")
    assert upgrade_v2_to_v5_json.migrate_file(path, default_tenant=tenant, write=True) == (1, 1)
    assert path.read_text() == "\n" + case["expected_v5"] + "\nnot json\n" + case["expected_v5"] + "\n"


def test_envelope_migration_output_longer_than_its_input():
    # Compact, raw UTF-8 in; ", " separators and \u escapes out: the v5 text is three
    # times the input here, and is sized by what it needs.
    made = identity(model_id="\u00e9" * 300)
    legacy = {"schema_version": 4, "identity": made.to_dict(), "payload_ref": None,
              "payload_size": 0, "ttl": 60, "reuse_score": 0.5, "version_id": 1}
    text = json.dumps(legacy, ensure_ascii=False, separators=(",", ":")).encode()
    migrated = mf.migrate_envelope(text)
    assert len(migrated) > 2 * len(text)
    assert mf.FragmentMessage.from_bytes(migrated).identity == made


def test_envelope_migration_refuses_non_envelopes():
    with pytest.raises(errors.SchemaError) as raised:
        upgrade_v2_to_v5_json.migrate_dict({"schema_version": 4, "identity": {}})
    assert raised.value.code in ("envelope_missing_field", "identity_field")


# The HLC (SPEC 9)


def test_hlc():
    packed = mf.hlc_pack(1000, 7)
    assert packed == (1000 << 16) | 7 and mf.hlc_unpack(packed) == (1000, 7)
    assert mf.hlc_tick(packed, 999) == packed + 1 and mf.hlc_tick(packed, 2000) == 2000 << 16
    remote = mf.hlc_pack(5000, 3)
    merged = mf.hlc_merge(packed, remote, 0)
    assert merged > remote and merged > packed
    assert hlc.merge(hlc.HLC(1000, 7), remote) == hlc.HLC(5000, 4)
    assert hlc.pack(hlc.unpack(packed)) == packed
    with pytest.raises(ValueError):
        mf.hlc_pack(1 << 48, 0)
    clock = hlc.Clock(seed=hlc.HLC(1000, 0))
    assert clock.merge(remote) > remote and clock.tick() > remote


# The compatibility fingerprint (SPEC 3.3)


@pytest.mark.parametrize("case", COMPAT, ids=lambda case: case["name"])
def test_compat_object_vectors(case):
    fingerprint = compat.ModelCompatibilityFingerprint(**case["input"])
    assert fingerprint.compatibility_hash() == case["compatibility_hash"]
    assert compat.ModelCompatibilityFingerprint.from_dict(fingerprint.to_dict()) == fingerprint
    assert pickle.loads(pickle.dumps(fingerprint)) == fingerprint


def test_compat_object_rules():
    with pytest.raises(ValueError, match="model_id"):
        compat.compat_hash("")
    with pytest.raises(ValueError, match="layout versions"):
        compat.compat_hash("m", tokenizer_layout_version=-1)
    with pytest.raises(mf.UsageError):
        mf.fingerprint_compat("", "", "t", "", "float16")
    config = {"b": 1, "a": [1, 2]}
    text = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    assert compat.compute_config_hash(config) == hashlib.sha256(text).hexdigest()
    live = compat.compat_hash("m", config_hash="c")
    stored = fragment.Fragment(identity(), "blob", 1, 1.0, 0.5, 1, fingerprint_compat=live.compatibility_hash())
    compat.MembraneValidator(live).validate(stored)
    with pytest.raises(compat.MembraneIncompatibleError):
        compat.MembraneValidator(compat.compat_hash("other")).validate(stored)


# Fragments, serialization and frames in the reference's shapes


def test_fragment_and_serialization():
    made = fragment.Fragment(identity(), None, 0, 60, 0.5, 1)
    assert (made.consistency, made.hlc, made.fingerprint_compat, made.tenant_id) == ("strong", 0, "", "public")
    wire = serialization.to_dict(made)
    assert wire["schema_version"] == serialization.SCHEMA_VERSION == 5
    assert serialization.from_dict(wire) == made
    text = serialization.to_bytes(made)
    assert text == mf.FragmentMessage("public", identity(), ttl=60.0, reuse_score=0.5, fingerprint_compat="").to_bytes()
    assert serialization.from_bytes(text) == made
    for bad in [dict(tenant_id="a b"), dict(consistency="weak"), dict(fingerprint_compat="abc"), dict(hlc=-1)]:
        with pytest.raises(ValueError):
            dataclasses.replace(made, **bad)
    with pytest.raises(ValueError):
        fragment.Fragment(identity(), None, -1, 60, 0.5, 1)
    newer = made.with_tenant("acme").merge(dataclasses.replace(made.with_tenant("acme"), hlc=5, payload_ref="r"))
    assert (newer.hlc, newer.payload_ref, newer.tenant_id) == (5, "r", "acme")
    assert made.hlc_state() == hlc.HLC(0, 0)
    with pytest.raises(errors.SchemaError, match="incompatible schema_version=4") as raised:
        serialization.from_dict({**wire, "schema_version": 4})
    assert raised.value.code == "envelope_version"
    missing_tenant = {k: v for k, v in wire.items() if k != "tenant_id"}
    with pytest.raises(errors.SchemaError) as raised:
        serialization.from_dict(missing_tenant)
    assert raised.value.code == "envelope_missing_field"


def test_canonical_module():
    frame = canonical.canonicalize(identity(), b"hello")
    assert frame[:4] == canonical.MAGIC and canonical.HEADER_LEN == 14 and canonical.TRAILER_LEN == 8
    parsed, payload = canonical.parse_canonical(frame)
    assert parsed == identity() and type(payload) is bytes and payload == b"hello"
    legacy = bytearray(frame)
    legacy[3] = 4
    legacy[4] = 4
    with pytest.raises(errors.SchemaError) as raised:
        canonical.parse_canonical(bytes(legacy))
    assert raised.value.code == "legacy_frame"
    assert upgrade_v2_to_v5.migrate_v4_to_v5(bytes(legacy)) == frame


# Exceptions, namespace, pickling


def test_exception_hierarchy():
    assert issubclass(mf.SchemaError, errors.BackendError) and issubclass(mf.SchemaError, ValueError)
    assert issubclass(mf.CorruptPayloadError, errors.Error) and not issubclass(mf.CorruptPayloadError, ValueError)
    assert errors.SchemaError is mf.SchemaError and errors.CorruptPayloadError is mf.CorruptPayloadError
    assert issubclass(mf.UsageError, ValueError) and issubclass(errors.TenantScopeError, errors.AuthError)
    with pytest.raises(ValueError) as raised:
        identity(dtype="float8")
    error = raised.value
    assert (error.code, error.class_, error.field) == ("identity_field", "schema", "dtype")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and (again.code, again.field, str(again)) == (error.code, error.field, str(error))


def test_clean_namespace():
    public = {name for name in dir(mf) if not name.startswith("_")}
    assert public - {"compat"} == set(mf.__all__) - {"__version__"}  # compat: the sub-package
    for module in (canonical, compat, errors, fragment, gc, hlc, serialization, snapshot):
        assert set(module.__all__) <= set(dir(module))


def values():
    made = identity(model_id="m\u00e9")
    frame = mf.canonicalize(made, b"payload", fill_payload_hash=True)
    return [
        made,
        mf.Frame.parse(frame, level="full"),
        mf.FragmentMessage("acme", made, ttl=1.5),
        mf.Snapshot(3, 1.5, primary_map={"h": "n"}),
        fragment.Fragment(made, "ref", 7, 1.0, 0.25, 2, tenant_id="acme"),
        compat.compat_hash("m"),
        gc.Tombstone("h", 1.0, frozenset({"n"})),
    ]


def same(a, b):
    if isinstance(a, mf.Frame):
        return (bytes(a.payload), a.identity, a.level, a.payload_sha256) == (bytes(b.payload), b.identity, b.level, b.payload_sha256)
    return a == b


def test_pickle_and_copy():
    for value in values():
        for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
            assert same(pickle.loads(pickle.dumps(value, protocol)), value)
        assert same(copy.copy(value), value) and same(copy.deepcopy(value), value)


def round_trip(value):
    return pickle.loads(pickle.dumps(value))


def test_spawn_process_pool():
    sent = values()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        back = list(pool.map(round_trip, sent))
    assert all(same(a, b) for a, b in zip(back, sent))
    with pytest.raises(mf.SchemaError):
        pool_error = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context)
        with pool_error:
            pool_error.submit(mf.PayloadIdentity.from_json, b"{}").result()
