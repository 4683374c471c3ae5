"""The exception classes, defined in Python so that each can take several bases.

``MembraneError`` is this package's: every error the library reports carries the
SPEC section 8 ``code`` (``"identity_field"``, ...), its ``class_`` (``"schema"``,
``"corrupt"``, ``"usage"``, ``"io"``), and the ``offset``, ``field`` and ``reason`` it
concerns. The other bases are the Python implementation's (``membrane.errors``:
``Error`` > ``BackendError`` > ``SchemaError`` / ``CorruptPayloadError``) and
``ValueError`` where it raised ``ValueError`` for the same checks (identity, tenant and
field values), so existing ``except`` clauses of either kind keep catching them.
``membrane_frame.compat.errors`` re-exports the whole hierarchy under the
reference's names.
"""

from typing import Optional


class Error(Exception):
    """Base class of every error of the Python implementation's hierarchy."""


class ConfigError(Error):
    """Invalid configuration or missing required values."""


class BackendError(Error):
    """A persistence or compute backend failed to satisfy a request."""


class PersistenceError(BackendError):
    """A non-recoverable persistence backend failure."""


class ConnectionError(PersistenceError):  # noqa: A001 - the reference's name
    """A backend could not be reached."""


class NetworkError(Error):
    """A network operation (peer call, gossip, sync) failed."""


class AuthError(NetworkError):
    """Authentication or authorization failed."""


class TenantScopeError(AuthError):
    """An operation touched a fragment of another tenant."""


class CapacityError(Error):
    """A store or cache is full."""


class TimeoutError(Error):  # noqa: A001 - the reference's name
    """An operation exceeded its wall-clock budget."""


class MigrationError(Error):
    """A shard migration failed."""


class MembraneError(Exception):
    """A Membrane format error (SPEC section 8), with its code, class and location."""

    code: str = ""
    class_: str = ""
    offset: Optional[int] = None
    field: Optional[str] = None
    reason: str = ""


class SchemaError(MembraneError, BackendError, ValueError):
    """Wrong format, version or field value: do not retry; maybe migrate."""


class CorruptPayloadError(MembraneError, BackendError):
    """Our format, damaged bytes: do not retry, the bytes are gone."""


class UsageError(MembraneError, ValueError):
    """The API was misused: an argument out of range, a call in the wrong state."""


__all__ = [
    "AuthError",
    "BackendError",
    "CapacityError",
    "ConfigError",
    "ConnectionError",
    "CorruptPayloadError",
    "Error",
    "MembraneError",
    "MigrationError",
    "NetworkError",
    "PersistenceError",
    "SchemaError",
    "TenantScopeError",
    "TimeoutError",
    "UsageError",
]
