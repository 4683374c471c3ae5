"""The Python API as a node would use it: every kind of buffer, zero copy, no leak,
exceptions with their attributes, streaming, prefix parsing, the writers, and the bulk
validator."""

import gc
import hashlib
import mmap
import os
import time
import tracemalloc

import numpy as np
import pytest

import membrane_frame as mf
from conftest import vectors_dir

HELLO = (vectors_dir() / "frames" / "docs-hello.bin").read_bytes()


def identity(payload_hash="0" * 64, shape=(2, 4, 8, 128, 128)):
    return mf.PayloadIdentity(
        payload_hash, "llama-3-8b", "main", "llama-3-8b", "main",
        (0, 3), (-1, -1), (0, 127), "float16", list(shape),
    )


def frame_of(payload):
    return mf.canonicalize(identity(), payload, fill_payload_hash=True)


def buffers(data, tmp_path):
    """The same bytes as every kind of buffer the API takes."""
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    handle = open(path, "rb")
    mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    kinds = {
        "bytes": bytes(data),
        "bytearray": bytearray(data),
        "memoryview": memoryview(bytearray(data)),
        "mmap": mapped,
        "numpy": np.frombuffer(bytearray(data), dtype=np.uint8),
        "numpy-2d": np.frombuffer(bytearray(data), dtype=np.uint8).reshape(1, -1),
    }
    return kinds, (handle, mapped)


def test_every_buffer_kind_is_read_in_place(tmp_path):
    kinds, (handle, mapped) = buffers(HELLO, tmp_path)
    for name, buf in kinds.items():
        assert mf.check_frame(buf) == "ok", name
        ident, payload = mf.parse_canonical(buf)
        assert bytes(payload) == b"hello", name
        assert ident.model_id == "llama-3-8b", name
        assert mf.Frame.parse(buf, level="full").payload_sha256 == hashlib.sha256(b"hello").hexdigest(), name
        del ident, payload
    del kinds
    gc.collect()
    mapped.close()
    handle.close()
    with pytest.raises(TypeError):
        mf.check_frame("a str is not bytes")


def test_the_payload_is_a_view_of_the_callers_buffer():
    data = bytearray(frame_of(b"A" * 1000))
    _, payload = mf.parse_canonical(data)
    assert isinstance(payload, memoryview) and payload.readonly is False
    start = data.index(b"A" * 1000)
    data[start + 10] = ord("Z")
    assert payload[10] == ord("Z"), "the view sees the change: nothing was copied"
    # The view keeps the buffer alive, and the buffer cannot be resized under it.
    with pytest.raises(BufferError):
        data.extend(b"x")
    frame = mf.Frame.parse(data, level="layout")
    assert frame.payload.obj is data
    # A buffer resized between the parse and the first look at the payload is refused.
    grown = bytearray(frame_of(b"D" * 100))
    late = mf.Frame.parse(grown)
    del grown[-50:]
    with pytest.raises(ValueError):
        late.payload
    array = np.frombuffer(bytearray(frame_of(b"B" * 64)), dtype=np.uint8)
    _, view = mf.parse_canonical(array)
    array.flags.writeable = True
    array[array.size - 9] = ord("C")  # the last payload byte
    assert view[63] == ord("C")


def test_no_leak_over_100_000_parses():
    data = frame_of(b"x" * 4096)
    for _ in range(2000):  # warm up caches and interned objects
        mf.parse_canonical(data)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(100_000):
        ident, payload = mf.parse_canonical(data)
        ident.fingerprint()
        mf.check_frame(data)
    del ident, payload
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 64 * 1024, f"{after - before} bytes still held after 100 000 calls"


def rss_kib():
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_resident_memory_stays_flat():
    data = frame_of(b"y" * 65536)
    for _ in range(5000):
        mf.Frame.parse(data, level="full").identity.to_dict()
    before = rss_kib()
    for _ in range(100_000):
        mf.Frame.parse(data, level="full").identity.to_dict()
    assert rss_kib() - before < 4096, "RSS grew by more than 4 MiB over 100 000 parses"


def test_errors_carry_code_class_offset_and_field():
    damaged = bytearray(HELLO)
    damaged[-1] ^= 1
    with pytest.raises(mf.CorruptPayloadError) as raised:
        mf.parse_canonical(damaged)
    error = raised.value
    assert (error.code, error.class_, error.field) == ("trailer_mismatch", "corrupt", "trailer")
    assert error.offset == len(HELLO) - 8
    assert isinstance(error, mf.MembraneError) and "trailer_mismatch at byte" in str(error)
    legacy = bytearray(HELLO)
    legacy[3] = 4
    with pytest.raises(mf.SchemaError) as raised:
        mf.parse_canonical(legacy)
    assert raised.value.code == "legacy_frame" and raised.value.offset == 0
    with pytest.raises(ValueError):
        mf.check_frame(HELLO, level="paranoid")
    with pytest.raises(mf.SchemaError) as raised:
        identity(shape=())
    assert (raised.value.code, raised.value.field) == ("identity_field", "shape")
    with pytest.raises(mf.SchemaError) as raised:
        mf.PayloadIdentity("", "m", "", "t", "", (0, 1), (-1, -1), (0, 1), "float16", [1])
    assert raised.value.field == "payload_hash"
    with pytest.raises(mf.SchemaError) as raised:
        mf.PayloadIdentity("h", "m", "", "t", "", (0, 1), (-1, -1), (0, 1), "float17", [1])
    assert (raised.value.code, raised.value.field) == ("identity_field", "dtype")
    # Strictness the Python implementation lacks: duplicate keys, NaN, lone surrogates.
    for text in [
        b'{"a": 1, "a": 2}',
        b'{"payload_hash": NaN}',
        b'{"payload_hash": "\\ud800"}',
    ]:
        with pytest.raises(mf.SchemaError) as raised:
            mf.PayloadIdentity.from_json(text)
        assert raised.value.code == "identity_json", text


def test_stream_verifier_says_how_much_more_it_needs():
    verifier = mf.StreamVerifier(level="full")
    need = verifier.feed(HELLO[:5])
    assert need > 0
    while need:
        start = verifier.received
        need = verifier.feed(HELLO[start : start + need])
    assert verifier.received == len(HELLO)
    frame = verifier.finish()
    assert frame.payload is None and frame.payload_len == 5 and frame.frame_len == len(HELLO)
    assert frame.identity.fingerprint() == mf.parse_canonical(HELLO)[0].fingerprint()
    with pytest.raises(ValueError):
        verifier.finish()
    short = mf.StreamVerifier()
    short.feed(HELLO[:-3])
    with pytest.raises(mf.CorruptPayloadError):
        short.finish()
    prefix = mf.StreamVerifier(prefix=True)
    assert prefix.feed(HELLO + b"next frame") == 0
    assert prefix.consumed == len(HELLO)


def test_prefix_parsing_walks_concatenated_frames():
    stream = HELLO + frame_of(b"second") + HELLO
    offset, payloads = 0, []
    while offset < len(stream):
        frame = mf.Frame.parse(memoryview(stream)[offset:], prefix=True)
        payloads.append(bytes(frame.payload))
        offset += frame.frame_len
    assert payloads == [b"hello", b"second", b"hello"]
    with pytest.raises(mf.CorruptPayloadError) as raised:
        mf.Frame.parse(stream)
    assert raised.value.code == "trailing_bytes"


def test_writers_send_head_payload_and_trailer(tmp_path):
    payload = np.arange(4096, dtype=np.uint16)
    expected = mf.canonicalize(identity(), payload, fill_payload_hash=True)
    assert mf.check_frame(expected, level="full") == "ok"
    head, trailer = mf.frame_parts(identity(), payload, fill_payload_hash=True)
    assert head + payload.tobytes() + trailer == expected
    path = tmp_path / "fd.frame"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        assert mf.write_frame(fd, identity(), payload, fill_payload_hash=True) == len(expected)
    finally:
        os.close(fd)
    assert path.read_bytes() == expected
    with open(tmp_path / "file.frame", "wb") as handle:
        mf.write_frame(handle, identity(), payload, fill_payload_hash=True)
    assert (tmp_path / "file.frame").read_bytes() == expected
    # Without fill_payload_hash the identity is written as given: trailer-valid only.
    stale = mf.canonicalize(identity(), payload)
    assert (mf.check_frame(stale), mf.check_frame(stale, "full")) == ("ok", "payload_hash_mismatch")


def test_identity_round_trips_through_dict_and_json():
    original = identity()
    again = mf.PayloadIdentity.from_dict(original.to_dict())
    assert again == original and hash(again) == hash(original)
    pretty = b'{\n  "shape": [2, 4, 8, 128, 128], "dtype": "float16", "token_span": [0, 127],\n' \
        b'  "head_range": [-1, -1], "layer_range": [0, 3], "tokenizer_revision": "main",\n' \
        b'  "tokenizer_name": "llama-3-8b", "model_revision": "main", "model_id": "llama-3-8b",\n' \
        b'  "payload_hash": "' + b"0" * 64 + b'"\n}'
    parsed = mf.PayloadIdentity.from_json(pretty)
    assert parsed == original and not parsed.is_canonical and parsed.json == pretty
    assert parsed.canonical_json() == original.canonical_json()
    assert original.tensor_bytes == 2 * 4 * 8 * 128 * 128 * 2
    assert original.with_payload_hash("ab").payload_hash == "ab"


def test_envelopes_build_parse_and_reemit():
    message = mf.FragmentMessage("tenant-a", identity(), payload_ref="ff" * 32, payload_size=10, ttl=60.0,
                                 reuse_score=0.87, version_id=3, consistency="quorum", hlc=123)
    text = message.to_bytes()
    assert mf.check_envelope(text) == "ok" and mf.check_envelope(text.decode()) == "ok"
    again = mf.FragmentMessage.from_bytes(text)
    assert again == message and again.to_bytes() == text
    assert (again.tenant_id, again.ttl, again.reuse_score, again.consistency) == ("tenant-a", 60.0, 0.87, "quorum")
    assert b'"ttl": 60.0, "reuse_score": 0.87' in text
    assert len(again.fingerprint_compat) == 64
    assert mf.check_envelope(b'{"schema_version": 5.0}') == "envelope_version"
    with pytest.raises(mf.SchemaError) as raised:
        mf.FragmentMessage("bad tenant", identity())
    assert (raised.value.code, raised.value.field) == ("envelope_field", "tenant_id")


def test_verify_files_walks_and_reports_every_path(tmp_path):
    good = frame_of(b"good" * 100)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "good.frame").write_bytes(good)
    (tmp_path / "a" / "bad.frame").write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    (tmp_path / "b.frame").write_bytes(b"")
    os.mkfifo(tmp_path / "a" / "pipe")
    os.symlink("..", tmp_path / "a" / "up")
    results = {os.path.relpath(path, tmp_path): (code, offset) for path, code, offset in mf.verify_files(str(tmp_path))}
    assert results["a/good.frame"] == ("ok", None)
    assert results["a/bad.frame"] == ("trailer_mismatch", len(good) - 8)
    assert results["b.frame"] == ("too_short", 0)
    assert results["a/pipe"][0] == "skipped" and results["a/up"][0] == "skipped"
    assert list(mf.verify_files([tmp_path / "missing"])) == [(str(tmp_path / "missing"), "io", None)]
    many = list(mf.verify_files([tmp_path, tmp_path / "a"], level="layout", threads=3))
    assert len(many) == len(results) + 4
    # Dropped half-way: the threads stop, nothing hangs.
    iterator = mf.verify_files(tmp_path)
    next(iterator)
    del iterator


def open_position(name):
    """The file position of this process's open descriptor whose target reads `name`."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == name:
                with open(f"/proc/self/fdinfo/{fd}") as info:
                    return int(info.readline().split()[1])
        except OSError:
            continue
    return None


def test_verify_files_reports_a_file_replaced_while_it_is_read_as_io(tmp_path):
    """A frame over the batch limit, renamed over by another valid frame while a worker
    streams it: every byte the worker reads verifies, but the file is no longer those
    bytes, so the verdict is "io", not "ok"."""
    path, other = tmp_path / "f.frame", tmp_path / "other.frame"
    payload = bytes(96 << 20)
    first, second = frame_of(payload), frame_of(payload[:-1] + b"x")
    for _attempt in range(20):
        path.write_bytes(first)
        other.write_bytes(second)
        results = mf.verify_files(path, threads=1)
        deadline = time.monotonic() + 10
        while not open_position(str(path)) and time.monotonic() < deadline:
            pass
        os.rename(other, path)
        # The worker still has the old file open (now unlinked), and has not read it all.
        reading = open_position(f"{path} (deleted)")
        verdicts = list(results)
        if reading is not None and 0 < reading < len(first):
            assert verdicts == [(str(path), "io", None)]
            break
    else:
        pytest.fail("could not rename the file over while a worker was reading it in 20 attempts")
    # Left alone, the file that took its place verifies.
    assert list(mf.verify_files(path, threads=1)) == [(str(path), "ok", None)]


def test_the_identity_reads_the_same_from_every_kind_of_buffer():
    # From `bytes` the identity text is not copied until asked for; from a mutable
    # buffer it is copied at the parse, so a later change of the buffer cannot alter it.
    data = frame_of(b"payload" * 10)
    expected = mf.Frame.parse(data, "identity").identity.to_dict()
    for kind in (bytes, bytearray, lambda d: memoryview(bytes(d))):
        frame = mf.Frame.parse(kind(data), "identity")
        assert frame.identity.to_dict() == expected
    mutable = bytearray(data)
    frame = mf.Frame.parse(mutable, "identity")
    mutable[14:24] = b"X" * 10
    assert frame.identity.to_dict() == expected
    assert frame.identity.fingerprint() == mf.Frame.parse(data).identity.fingerprint()


def test_an_aligned_payload_is_viewed_in_place_by_numpy_and_memoryview(tmp_path):
    """SPEC §1.5: a page-aligned frame, mapped, gives a float16 array and a cast
    memoryview that share the mapping's memory, at an address aligned to the page."""
    kv = np.arange(4096, dtype=np.float16)
    path = tmp_path / "aligned.frame"
    path.write_bytes(mf.canonicalize(identity(), kv, fill_payload_hash=True, align=4096))
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        frame = mf.Frame.parse(mapped, level="full")
        assert frame.payload_offset == 4096 and frame.padding > 0
        array = np.frombuffer(frame.payload, dtype=np.float16)
        assert array.flags.aligned and array.ctypes.data % 4096 == 0
        assert np.shares_memory(array, np.frombuffer(mapped, dtype=np.uint8))
        assert np.array_equal(array, kv)
        # memoryview.cast has no half-float format: the bits, as float16 payloads are.
        bits = frame.payload.cast("H")
        assert bits[4095] == int(kv.view(np.uint16)[4095])
        bits.release()
        del array, frame


def test_writers_align_the_payload_from_the_files_position(tmp_path):
    payload = np.arange(1000, dtype=np.uint16)
    path = tmp_path / "log.frames"
    with open(path, "wb") as handle:
        for _ in range(3):
            mf.write_frame(handle, identity(), payload, fill_payload_hash=True, align=64)
    data = path.read_bytes()
    rest, starts = data, []
    while rest:
        frame = mf.Frame.parse(rest, level="full", prefix=True)
        starts.append(len(data) - len(rest) + frame.payload_offset)
        rest = rest[frame.frame_len :]
    assert len(starts) == 3 and all(start % 64 == 0 for start in starts), starts
    # An explicit base, and alignments that are not powers of two up to a page.
    assert mf.Frame.parse(mf.canonicalize(identity(), payload, align=64, base=10)).payload_offset % 64 == 54
    for bad in (0, 3, 8192):
        with pytest.raises(ValueError):
            mf.canonicalize(identity(), payload, align=bad)
