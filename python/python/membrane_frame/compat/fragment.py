"""``membrane.fragment``: ``Fragment``, the envelope's record (SPEC section 3.1).

The reference's frozen dataclass, with its fields, order and defaults
(``consistency="strong"``, ``hlc=0``, ``fingerprint_compat=""``,
``tenant_id="public"``), ``with_*`` copies, ``merge`` and ``hlc_state``. Every field is
checked by the library's envelope rules when a fragment is made (a ``FragmentMessage``
is built from it, and kept for ``serialization.to_bytes``); a broken rule raises
``SchemaError`` (``envelope_field``), a ``ValueError`` as the reference's were.
"""

from dataclasses import dataclass, field, replace
from typing import Optional

from .. import _native
from .._native import FragmentMessage, PayloadIdentity
from .hlc import HLC, unpack


def _validate_tenant_id(tenant_id: str) -> None:
    """Raise ``SchemaError`` (a ``ValueError``) unless ``tenant_id`` is a valid tenant:
    1-128 characters, none of space ``:`` ``/`` ``\\`` ``"`` LF TAB CR."""
    if not isinstance(tenant_id, str):
        raise ValueError("tenant_id must be a non-empty string")
    _native.check_tenant_id(tenant_id)


@dataclass(frozen=True)
class Fragment:
    """A fragment's metadata: its identity, where its bytes are, and their lifecycle."""

    identity: PayloadIdentity
    payload_ref: Optional[str]
    payload_size: int
    ttl: float
    reuse_score: float
    version_id: int
    consistency: str = "strong"
    hlc: int = 0
    fingerprint_compat: str = ""
    tenant_id: str = "public"
    _message: FragmentMessage = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate_tenant_id(self.tenant_id)
        message = FragmentMessage(
            self.tenant_id,
            self.identity,
            payload_ref=self.payload_ref,
            payload_size=self.payload_size,
            ttl=self.ttl,
            reuse_score=self.reuse_score,
            version_id=self.version_id,
            consistency=self.consistency,
            hlc=self.hlc,
            fingerprint_compat=self.fingerprint_compat,
        )
        object.__setattr__(self, "_message", message)

    @classmethod
    def from_message(cls, message: FragmentMessage) -> "Fragment":
        """The fragment of a validated envelope."""
        return cls(
            identity=message.identity,
            payload_ref=message.payload_ref,
            payload_size=message.payload_size,
            ttl=message.ttl,
            reuse_score=message.reuse_score,
            version_id=message.version_id,
            consistency=message.consistency,
            hlc=message.hlc,
            fingerprint_compat=message.fingerprint_compat,
            tenant_id=message.tenant_id,
        )

    def to_message(self) -> FragmentMessage:
        """The envelope of this fragment (its ``to_bytes`` is the wire text)."""
        return self._message

    def hlc_state(self) -> HLC:
        """``hlc`` decoded into its physical and logical parts."""
        return unpack(self.hlc)

    def with_consistency(self, level: str) -> "Fragment":
        """A copy with another consistency level."""
        return replace(self, consistency=level)

    def with_fingerprint(self, fingerprint: str) -> "Fragment":
        """A copy with another ``fingerprint_compat``."""
        return replace(self, fingerprint_compat=fingerprint)

    def with_tenant(self, tenant_id: str) -> "Fragment":
        """A copy in another tenant."""
        return replace(self, tenant_id=tenant_id)

    def merge(self, other: "Fragment") -> "Fragment":
        """The winner of two writes of one identity in one tenant: the larger ``hlc``
        (``self`` on a tie), keeping a ``payload_ref`` and a ``fingerprint_compat``
        either side has. ``ValueError`` across identities or tenants."""
        if other.identity != self.identity:
            raise ValueError(f"cannot merge fragments with different identity: {self.identity} vs {other.identity}")
        if other.tenant_id != self.tenant_id:
            raise ValueError(f"cannot merge fragments across tenants: {self.tenant_id} vs {other.tenant_id}")
        if self.hlc >= other.hlc:
            return self
        return replace(
            self,
            payload_ref=self.payload_ref or other.payload_ref,
            hlc=other.hlc,
            fingerprint_compat=other.fingerprint_compat or self.fingerprint_compat,
        )


__all__ = ["Fragment"]
