"""``membrane.compat``: the model-compatibility fingerprint (SPEC section 3.3).

``compatibility_hash`` is the library's (``membrane_frame.fingerprint_compat``), which
also checks the reference's rules (``model_id``, ``tokenizer_name`` and ``dtype`` not
empty, layout versions not negative) and raises ``UsageError``, a ``ValueError``, as the
reference raised ``ValueError``. ``compute_config_hash`` hashes any model configuration
(a ``dict`` or an object with ``to_dict()``) as compact, key-sorted JSON; that text is
not a Membrane format, so it is Python's ``json`` that writes it.
"""

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from .. import _native


@dataclass(frozen=True)
class ModelCompatibilityFingerprint:
    """What decides whether a stored fragment may be used by a live engine."""

    model_id: str
    model_revision: str
    model_layout_version: int
    tokenizer_name: str
    tokenizer_revision: str
    tokenizer_layout_version: int
    dtype: str
    config_hash: str
    _hash: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.config_hash, str):
            raise ValueError("config_hash must be a string")
        digest = _native.fingerprint_compat(
            self.model_id,
            self.model_revision,
            self.tokenizer_name,
            self.tokenizer_revision,
            self.dtype,
            config_hash=self.config_hash,
            model_layout_version=self.model_layout_version,
            tokenizer_layout_version=self.tokenizer_layout_version,
        )
        object.__setattr__(self, "_hash", digest)

    def to_dict(self) -> Dict[str, object]:
        """The eight values by name."""
        return {
            "model_id": self.model_id,
            "model_revision": self.model_revision,
            "model_layout_version": self.model_layout_version,
            "tokenizer_name": self.tokenizer_name,
            "tokenizer_revision": self.tokenizer_revision,
            "tokenizer_layout_version": self.tokenizer_layout_version,
            "dtype": self.dtype,
            "config_hash": self.config_hash,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "ModelCompatibilityFingerprint":
        """The fingerprint of a ``to_dict`` dict; absent keys take the reference's
        defaults (``tokenizer_name`` = ``model_id``, ``""``, 0). A layout version that
        is not an integer is refused rather than replaced by 0."""
        return cls(
            model_id=data["model_id"],
            model_revision=data.get("model_revision", ""),
            model_layout_version=data.get("model_layout_version", 0),
            tokenizer_name=data.get("tokenizer_name", data["model_id"]),
            tokenizer_revision=data.get("tokenizer_revision", ""),
            tokenizer_layout_version=data.get("tokenizer_layout_version", 0),
            dtype=data["dtype"],
            config_hash=data.get("config_hash", ""),
        )

    def compatibility_hash(self) -> str:
        """The 64-hex-digit hash an envelope carries as ``fingerprint_compat``."""
        return self._hash


def compat_hash(
    model_id: str,
    *,
    model_revision: str = "",
    model_layout_version: int = 0,
    tokenizer_name: Optional[str] = None,
    tokenizer_revision: str = "",
    tokenizer_layout_version: int = 0,
    dtype: str = "float16",
    config_hash: str = "",
) -> ModelCompatibilityFingerprint:
    """A fingerprint; ``tokenizer_name`` defaults to ``model_id``."""
    return ModelCompatibilityFingerprint(
        model_id=model_id,
        model_revision=model_revision,
        model_layout_version=model_layout_version,
        tokenizer_name=tokenizer_name or model_id,
        tokenizer_revision=tokenizer_revision,
        tokenizer_layout_version=tokenizer_layout_version,
        dtype=dtype,
        config_hash=config_hash,
    )


def compute_config_hash(model_config: Any) -> str:
    """SHA-256 (hex) of a model configuration as compact, key-sorted JSON."""
    if isinstance(model_config, dict):
        config = dict(model_config)
    else:
        to_dict = getattr(model_config, "to_dict", None)
        if not callable(to_dict):
            raise TypeError("model_config must be a dict or expose to_dict()")
        config = to_dict()
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MembraneIncompatibleError(RuntimeError):
    """A fragment's compatibility hash is not the live engine's."""


class MembraneValidator:
    """Checks stored fragments against the live engine's fingerprint."""

    def __init__(self, fingerprint: ModelCompatibilityFingerprint) -> None:
        self.fingerprint = fingerprint
        self._hash = fingerprint.compatibility_hash()

    def validate(self, fragment: object) -> None:
        """Raise ``MembraneIncompatibleError`` unless ``fragment.fingerprint_compat`` is
        the live hash (an empty one is refused: v5 writers fill it)."""
        stored = getattr(fragment, "fingerprint_compat", "")
        if not stored:
            raise MembraneIncompatibleError(
                "fragment has no compatibility fingerprint; populate fragment.fingerprint_compat"
            )
        if stored != self._hash:
            raise MembraneIncompatibleError(
                f"fragment.fingerprint_compat={stored!r} disagrees with the live engine fingerprint {self._hash!r}"
            )


__all__ = [
    "MembraneIncompatibleError",
    "MembraneValidator",
    "ModelCompatibilityFingerprint",
    "compat_hash",
    "compute_config_hash",
]
