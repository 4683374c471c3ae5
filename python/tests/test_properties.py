"""Property tests (hypothesis): write -> read -> write is byte-identical for frames and
envelopes, and damaged bytes are never accepted and never crash."""

import hashlib

from hypothesis import given, settings, strategies as st

import membrane_frame as mf

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "fp8_e4m3", "fp8_e5m2", "nf4"]
text = st.text(max_size=40)
bound = st.integers(min_value=0, max_value=2**63 - 1)


@st.composite
def ranges(draw, heads=False):
    if heads and draw(st.booleans()):
        return (-1, -1)
    start = draw(bound)
    return (start, draw(st.integers(min_value=start, max_value=2**63 - 1)))


@st.composite
def identities(draw):
    return mf.PayloadIdentity(
        draw(st.text(min_size=1, max_size=64)), draw(text), draw(text), draw(text), draw(text),
        draw(ranges()), draw(ranges(heads=True)), draw(ranges()), draw(st.sampled_from(DTYPES)),
        draw(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=16)),
    )


@settings(max_examples=300, deadline=None)
@given(identities(), st.binary(max_size=4096))
def test_frames_round_trip_byte_for_byte(identity, payload):
    frame = mf.canonicalize(identity, payload, fill_payload_hash=True)
    parsed = mf.Frame.parse(frame, level="full")
    assert bytes(parsed.payload) == payload
    assert parsed.payload_sha256 == hashlib.sha256(payload).hexdigest()
    assert parsed.identity.is_canonical
    again = mf.canonicalize(parsed.identity, parsed.payload)
    assert again == frame
    head, trailer = mf.frame_parts(parsed.identity, payload)
    assert head + payload + trailer == frame
    rebuilt = mf.PayloadIdentity.from_dict(parsed.identity.to_dict())
    assert rebuilt.canonical_json() == parsed.identity.canonical_json()


@settings(max_examples=300, deadline=None)
@given(identities(), st.binary(min_size=1, max_size=512), st.data())
def test_damage_is_never_accepted(identity, payload, data):
    frame = bytearray(mf.canonicalize(identity, payload, fill_payload_hash=True))
    where = data.draw(st.integers(min_value=0, max_value=len(frame) - 1))
    frame[where] ^= data.draw(st.integers(min_value=1, max_value=255))
    code = mf.check_frame(frame, level="full")
    # A flip inside the identity JSON can leave another valid identity (a changed
    # letter of a string); the payload's bytes and the lengths are always guarded.
    identity_end = len(frame) - len(payload) - 16
    if code == "ok":
        assert 14 <= where < identity_end, where
    cut = data.draw(st.integers(min_value=0, max_value=len(frame) - 1))
    assert mf.check_frame(bytes(frame[:cut])) != "ok"


@settings(max_examples=300, deadline=None)
@given(
    identities(),
    st.text(alphabet=st.characters(blacklist_characters=' :/\\"\n\t\r', blacklist_categories=("Cs",)),
            min_size=1, max_size=128),
    st.one_of(st.none(), st.text(max_size=64)),
    st.integers(min_value=0, max_value=2**64 - 1),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=1, max_value=2**63 - 1),
    st.sampled_from(["strong", "quorum", "eventual"]),
    st.integers(min_value=0, max_value=2**64 - 1),
)
def test_envelopes_round_trip_byte_for_byte(identity, tenant, ref, size, ttl, score, version, consistency, hlc):
    message = mf.FragmentMessage(tenant, identity, payload_ref=ref, payload_size=size, ttl=ttl, reuse_score=score,
                                 version_id=version, consistency=consistency, hlc=hlc)
    text = message.to_bytes()
    again = mf.FragmentMessage.from_bytes(text)
    assert again.to_bytes() == text
    assert (again.tenant_id, again.payload_ref, again.payload_size) == (tenant, ref, size)
    assert (again.ttl, again.reuse_score, again.version_id, again.hlc) == (ttl, score, version, hlc)
    assert mf.check_envelope(text) == "ok"
