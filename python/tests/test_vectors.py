"""Every case of every vector file through the Python API: codes, fingerprints,
payload lengths and digests, re-emitted text, and the exception raised for each bad one."""

import hashlib
import json

import pytest

import membrane_frame as mf
from conftest import load, vectors_dir

FRAMES = load("frames.jsonl")
IDENTITIES = load("identities.jsonl")
ENVELOPES = load("envelopes.jsonl")
COMPAT = load("compat.jsonl")
SCHEMA = {
    "bad_magic", "legacy_frame", "schema_mismatch", "reserved_nonzero", "identity_too_large",
    "identity_json", "identity_field", "envelope_json", "envelope_version",
    "envelope_missing_field", "envelope_field",
}


def frame_bytes(case):
    return (vectors_dir() / case["file"]).read_bytes()


def test_the_vector_files_are_all_there():
    assert len(FRAMES) >= 100 and len(IDENTITIES) >= 300 and len(ENVELOPES) >= 100 and len(COMPAT) >= 10


@pytest.mark.parametrize("case", FRAMES, ids=[c["name"] for c in FRAMES])
def test_frame_vectors(case):
    data = frame_bytes(case)
    assert mf.check_frame(data) == case["expect"]
    assert mf.check_frame(data, level="full") == case["expect_full"]
    if case["expect"] == "ok":
        identity, payload = mf.parse_canonical(data)
        assert identity.fingerprint() == case["fingerprint"]
        assert len(payload) == case["payload_len"]
        assert hashlib.sha256(payload).hexdigest() == case["payload_sha256"]
        assert identity.is_canonical == case["canonical"]
        frame = mf.Frame.parse(data)
        assert frame.payload_sha256 == case["payload_sha256"]
        assert frame.frame_len == len(data)
        assert frame.identity_len == len(data) - 30 - case["payload_len"]
        assert len(identity.canonical_json()) == case["identity_json_len"]
        # Re-emitting the frame from its identity and payload gives a valid frame with
        # the same fingerprint (and the same bytes when the stored identity is canonical).
        again = mf.canonicalize(identity, payload)
        assert mf.check_frame(again) == "ok"
        if case["canonical"]:
            assert again == data
    else:
        with pytest.raises(mf.MembraneError) as raised:
            mf.parse_canonical(data)
        error = raised.value
        assert error.code == case["expect"]
        wanted = mf.SchemaError if case["expect"] in SCHEMA else mf.CorruptPayloadError
        assert isinstance(error, wanted), (type(error), error.code)
        assert error.class_ == ("schema" if wanted is mf.SchemaError else "corrupt")
        # Where it is: a byte offset, or (a missing key) the field.
        assert error.offset is not None or error.field is not None
        assert error.offset is None or 0 <= error.offset <= len(data), error.offset
    # The streaming verifier agrees, fed in 7-byte chunks.
    verifier = mf.StreamVerifier()
    code = "ok"
    try:
        for start in range(0, len(data), 7):
            verifier.feed(data[start : start + 7])
        verifier.finish()
    except mf.MembraneError as error:
        code = error.code
    assert code == case["expect"]


@pytest.mark.parametrize("case", IDENTITIES, ids=[c["name"] for c in IDENTITIES])
def test_identity_vectors(case):
    identity = mf.PayloadIdentity.from_dict(case["identity"])
    assert identity.canonical_json() == case["canonical_json"].encode()
    assert identity.fingerprint() == case["fingerprint"]
    parsed = mf.PayloadIdentity.from_json(case["canonical_json"].encode())
    assert parsed == identity and parsed.is_canonical
    assert parsed.to_dict() == json.loads(case["canonical_json"])


@pytest.mark.parametrize("case", ENVELOPES, ids=[c["name"] for c in ENVELOPES])
def test_envelope_vectors(case):
    text = case["json"].encode("utf-8", "surrogatepass")
    assert mf.check_envelope(text) == case["expect"]
    if case["expect"] == "ok":
        message = mf.FragmentMessage.from_bytes(text)
        if "identity_fingerprint" in case:
            assert message.identity.fingerprint() == case["identity_fingerprint"]
        if case.get("reemit_identical"):
            assert message.to_bytes() == text
            assert message.is_canonical
        again = mf.FragmentMessage.from_bytes(message.to_bytes())
        assert again == message and again.to_bytes() == message.to_bytes()
    else:
        with pytest.raises(mf.SchemaError) as raised:
            mf.FragmentMessage.from_bytes(text)
        assert raised.value.code == case["expect"]
        assert raised.value.class_ == "schema"


@pytest.mark.parametrize("case", COMPAT, ids=[c["name"] for c in COMPAT])
def test_compat_vectors(case):
    assert mf.fingerprint_compat(**case["input"]) == case["compatibility_hash"]


@pytest.mark.parametrize("level", ["layout", "identity", "trailer", "full"])
def test_verify_files_gives_every_file_the_one_frame_verdict(tmp_path, level):
    """verify_files (batches of small files through the multi-buffer hasher at the
    trailer and full levels, bigger ones streamed) against check_frame on each file:
    every frame vector, damaged copies, and two frames past the batch size limit."""
    expected = {}
    for n, case in enumerate(load("frames.jsonl")):
        data = frame_bytes(case)
        copies = [data, data[:-1], data + b"\0"]
        if data:
            flipped = bytearray(data)
            flipped[(n * 977) % len(data)] ^= 0x10
            copies.append(bytes(flipped))
        for k, copy in enumerate(copies):
            path = tmp_path / f"{n:03}-{k}.bin"
            path.write_bytes(copy)
            expected[str(path)] = copy
    identity = mf.PayloadIdentity("0" * 64, "m", "", "t", "", (0, 1), (-1, -1), (0, 7), "uint8", [17 << 20])
    big = mf.canonicalize(identity, bytes(17 << 20), fill_payload_hash=True)
    for name, data in [("big-ok.bin", big), ("big-bad.bin", big[:-1] + bytes([big[-1] ^ 1]))]:
        (tmp_path / name).write_bytes(data)
        expected[str(tmp_path / name)] = data
    seen = {}
    for threads in (1, 3):
        seen = {path: (code, offset) for path, code, offset in mf.verify_files(tmp_path, level=level, threads=threads)}
        assert set(seen) == set(expected)
        for path, data in expected.items():
            want = mf.check_frame(data, level)
            try:
                mf.Frame.parse(data, level)
                want_offset = None
            except mf.MembraneError as err:
                want_offset = err.offset
            assert seen[path] == (want, want_offset), path
    assert sum(code == "ok" for code, _ in seen.values()) > 40


ALIGNED = load("aligned.jsonl")


@pytest.mark.parametrize("case", ALIGNED, ids=[c["name"] for c in ALIGNED])
def test_aligned_vectors(case):
    """SPEC §1.5: padding and payload offset as the original reader recorded them, and
    the writers asked for a vector's alignment and base write its exact bytes."""
    data = frame_bytes(case)
    assert mf.check_frame(data) == case["expect"]
    assert mf.check_frame(data, level="full") == case["expect_full"]
    frame = mf.Frame.parse(data, level="full")
    assert (frame.padding, frame.payload_offset) == (case["padding"], case["payload_offset"])
    assert frame.identity_len == case["identity_json_len"]
    assert frame.identity.is_canonical == case["canonical"]
    assert frame.identity.fingerprint() == case["fingerprint"]
    assert hashlib.sha256(frame.payload).hexdigest() == case["payload_sha256"]
    stream = mf.StreamVerifier(level="full")
    stream.feed(data)
    streamed = stream.finish()
    assert (streamed.padding, streamed.payload_offset) == (case["padding"], case["payload_offset"])
    if "align" not in case:
        return
    align, base = case["align"], case["base"]
    assert mf.canonicalize(frame.identity, frame.payload, align=align, base=base) == data
    head, trailer = mf.frame_parts(frame.identity, frame.payload, align=align, base=base)
    assert len(head) == case["payload_offset"]
    assert head + bytes(frame.payload) + trailer == data
