"""``membrane.serialization``: the v5 envelope as a dict and as bytes (SPEC section 3).

``to_bytes`` is the library's writer, byte-identical to the reference's;
``from_bytes`` and ``from_dict`` are its strict reader: every field is required
(``tenant_id`` too: SPEC 3.1), of its JSON type and within its rule, else
``SchemaError`` with the SPEC section 8 code (``envelope_version``,
``envelope_missing_field``, ``envelope_field``, ``identity_field``, ...).
"""

import json
from dataclasses import asdict
from typing import Any, Dict

from .. import _native
from .._native import FragmentMessage
from .fragment import Fragment

SCHEMA_VERSION: int = _native.ENVELOPE_SCHEMA_VERSION

#: A JSON value, as the reference names it.
JsonValue = Any
#: A JSON object (every Membrane wire payload).
JsonDict = Dict[str, JsonValue]


def to_dict(fragment: Fragment) -> Dict[str, Any]:
    """The envelope of ``fragment`` as a dict (``schema_version`` 5, the identity as a
    dict, every field)."""
    return json.loads(fragment.to_message().to_bytes())


def from_dict(data: Dict[str, Any]) -> Fragment:
    """The fragment of an envelope dict; ``SchemaError`` unless it is a valid v5
    envelope (``"incompatible schema_version=N"`` for another version)."""
    try:
        text = json.dumps(data, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise _schema_error("envelope_json", f"not a JSON object: {error}") from error
    try:
        return Fragment.from_message(FragmentMessage.from_bytes(text))
    except Exception as error:
        if getattr(error, "code", None) == "envelope_version" and isinstance(data, dict):
            found = data.get("schema_version")
            error.args = (f"incompatible schema_version={found}; expected {SCHEMA_VERSION}: {error}",)
        raise


def _schema_error(code: str, reason: str) -> Exception:
    from .._errors import SchemaError

    error = SchemaError(f"{code}: {reason}")
    error.code, error.class_, error.reason = code, "schema", reason
    return error


def to_bytes(fragment: Fragment) -> bytes:
    """The envelope text, exactly as the reference's ``to_bytes`` writes it."""
    return fragment.to_message().to_bytes()


def from_bytes(data: bytes) -> Fragment:
    """The fragment of envelope text (strict JSON, SPEC section 4)."""
    return Fragment.from_message(FragmentMessage.from_bytes(data))


def asdict_shallow(fragment: Fragment) -> Dict[str, Any]:
    """``dataclasses.asdict`` of the fragment, without ``schema_version``."""
    return {key: value for key, value in asdict(fragment).items() if not key.startswith("_")}


__all__ = [
    "SCHEMA_VERSION",
    "JsonDict",
    "JsonValue",
    "asdict_shallow",
    "from_bytes",
    "from_dict",
    "to_bytes",
    "to_dict",
]
